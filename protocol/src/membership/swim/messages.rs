//! What SWIM members send each other, with their sizes in bytes, and what
//! an agent tells its host.
//!
//! Source: hashicorp/memberlist `net.go` (the message structs `ping`,
//! `indirectPingReq`, `ackResp`, `nackResp`, `suspect`, `alive`, `dead`;
//! compound messages and their overheads). A packet is one message or a
//! compound of several (memberlist's `compoundMsg`): a ping, ack, ping-req
//! or nack with updates piggybacked, a gossip packet of updates only, or
//! the buddy system's ping + suspect.
//!
//! Sizes: memberlist encodes each message as a type byte and a msgpack map
//! keyed by field names. The constants below count that encoding for
//! 16-byte node names, IPv4 addresses, 5-byte integers, an empty `Meta`
//! and six protocol versions. Compression (memberlist's default) is not
//! modelled: these updates are too small and varied to gain much.

use std::sync::Arc;

use super::members::{MemberId, MemberState};

/// `ping`: type 1 + map header 1 + SeqNo (6 + 5) + Node (5 + 17) +
/// SourceAddr (11 + 6) + SourcePort (11 + 3) + SourceNode (11 + 17).
pub const PING_BYTES: u64 = 94;
/// `ackResp`: 1 + 1 + SeqNo (6 + 5) + Payload (8 + 1, nil).
pub const ACK_BYTES: u64 = 22;
/// `indirectPingReq`: 1 + 1 + SeqNo (11) + Target (7 + 6) + Port (5 + 3) +
/// Node (5 + 17) + Nack (5 + 1) + SourceAddr (17) + SourcePort (14) +
/// SourceNode (28).
pub const PING_REQ_BYTES: u64 = 121;
/// `nackResp`: 1 + 1 + SeqNo (11).
pub const NACK_BYTES: u64 = 13;
/// `suspect` and `dead`: 1 + 1 + Incarnation (12 + 5) + Node (5 + 17) +
/// From (5 + 17).
pub const SUSPECT_BYTES: u64 = 63;
/// `alive`: 1 + 1 + Incarnation (17) + Node (22) + Addr (5 + 6) +
/// Port (5 + 3) + Meta (5 + 2) + Vsn (4 + 7).
pub const ALIVE_BYTES: u64 = 78;
/// A compound message's header: its type byte and message count
/// (memberlist's `compoundHeaderOverhead`).
pub const COMPOUND_HEADER_BYTES: u64 = 2;
/// A compound message's length field per message (`compoundOverhead`).
pub const COMPOUND_ENTRY_BYTES: u64 = 2;
/// IPv4 (20) and UDP (8) headers around every packet.
pub const UDP_IP_HEADER_BYTES: u64 = 28;
/// IPv4 (20) and TCP (20) headers around a stream message (one segment;
/// the connection's handshake and teardown are not counted).
pub const TCP_IP_HEADER_BYTES: u64 = 40;
/// `pushNodeState` (memberlist `net.go`): 1 + Name (5 + 17) + Addr (5 + 5) +
/// Port (5 + 3) + Meta (5 + 1) + Incarnation (12 + 5) + State (6 + 1) +
/// Vsn (4 + 7).
pub const PUSH_NODE_STATE_BYTES: u64 = 82;
/// The push/pull message type and its `pushPullHeader` (Nodes,
/// UserStateLen, Join).
pub const PUSH_PULL_HEADER_BYTES: u64 = 34;

/// One message. `seq` numbers belong to the member that chose them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Message {
    /// A probe of `target`; answered with an [`Message::Ack`] of the same
    /// `seq` (`target` lets a member ignore a ping meant for another).
    Ping {
        seq: u32,
        target: MemberId,
    },
    Ack {
        seq: u32,
    },
    /// Probe `target` for me and forward its ack with my `seq`; if `nack`,
    /// answer with a [`Message::Nack`] when it does not ack in time.
    PingReq {
        seq: u32,
        target: MemberId,
        nack: bool,
    },
    /// The indirect probe `seq` got no ack from its target.
    Nack {
        seq: u32,
    },
    /// `from` suspects `member` at `incarnation`.
    Suspect {
        incarnation: u32,
        member: MemberId,
        from: MemberId,
    },
    /// `member` is alive at `incarnation` (a refutation when it says so
    /// itself).
    Alive {
        incarnation: u32,
        member: MemberId,
    },
    /// `from` declared `member` dead at `incarnation`.
    Dead {
        incarnation: u32,
        member: MemberId,
        from: MemberId,
    },
}

impl Message {
    /// Bytes of the message's encoding.
    pub const fn bytes(&self) -> u64 {
        match self {
            Message::Ping { .. } => PING_BYTES,
            Message::Ack { .. } => ACK_BYTES,
            Message::PingReq { .. } => PING_REQ_BYTES,
            Message::Nack { .. } => NACK_BYTES,
            Message::Suspect { .. } | Message::Dead { .. } => SUSPECT_BYTES,
            Message::Alive { .. } => ALIVE_BYTES,
        }
    }

    pub const fn name(&self) -> &'static str {
        match self {
            Message::Ping { .. } => "ping",
            Message::Ack { .. } => "ack",
            Message::PingReq { .. } => "ping-req",
            Message::Nack { .. } => "nack",
            Message::Suspect { .. } => "suspect",
            Message::Alive { .. } => "alive",
            Message::Dead { .. } => "dead",
        }
    }

    /// The member a membership update is about (none for probe traffic).
    pub const fn subject(&self) -> Option<MemberId> {
        match *self {
            Message::Suspect { member, .. }
            | Message::Alive { member, .. }
            | Message::Dead { member, .. } => Some(member),
            _ => None,
        }
    }
}

/// One datagram: a message, or a compound of several handled in order.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Packet {
    pub messages: Vec<Message>,
}

impl Packet {
    /// Bytes of the payload (what must fit in `udp_buffer_size`).
    pub fn payload_bytes(&self) -> u64 {
        let body: u64 = self.messages.iter().map(Message::bytes).sum();
        match self.messages.len() {
            0 | 1 => body,
            n => COMPOUND_HEADER_BYTES + COMPOUND_ENTRY_BYTES * n as u64 + body,
        }
    }

    /// Bytes on the wire: the payload in its IP and UDP headers.
    pub fn bytes(&self) -> u64 {
        UDP_IP_HEADER_BYTES + self.payload_bytes()
    }

    /// The first message's name (`ping`, `ack`, ... or the first update's
    /// for a gossip packet).
    pub fn name(&self) -> &'static str {
        self.messages.first().map_or("empty", Message::name)
    }
}

/// A packet the host must deliver to `to`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Transmit {
    pub to: MemberId,
    pub packet: Packet,
}

/// One member's entry in a push/pull state exchange (memberlist's
/// `pushNodeState`, without the address and versions fdlab has no use for).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PushNodeState {
    pub member: MemberId,
    pub incarnation: u32,
    pub state: MemberState,
}

/// A member's state as a push/pull sends it: `members` entries, one per
/// member it has not forgotten, itself included. `changed` lists those
/// entries that are not Alive at incarnation 0, in member order; the rest
/// are on the wire (`Stream::bytes` counts them) but not here, because
/// merging one changes nothing: `aliveNode` ignores an incarnation not
/// above the one it knows, it knows a forgotten member at 0, and an Alive
/// about the merging member itself at 0 cannot be above its own. (At
/// 10,000 members every exchange would otherwise walk 10,000 entries on
/// each side for nothing; see docs/perf-history.md.)
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PushState {
    pub members: u32,
    pub changed: Vec<PushNodeState>,
}

/// A message on a TCP stream: the fallback ping of a probe and its ack
/// (`sendPingAndWaitForAck`), or a push/pull state exchange
/// (`sendAndReceiveState`, `handleConn`). A message to a member whose
/// process is gone is refused by its host and never answered.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Stream {
    Ping {
        seq: u32,
        target: MemberId,
    },
    Ack {
        seq: u32,
    },
    /// The sender's whole member list; `reply` when it answers one.
    PushPull {
        state: Arc<PushState>,
        reply: bool,
    },
}

impl Stream {
    /// Bytes on the wire, headers included.
    pub fn bytes(&self) -> u64 {
        TCP_IP_HEADER_BYTES
            + match self {
                Stream::Ping { .. } => PING_BYTES,
                Stream::Ack { .. } => ACK_BYTES,
                Stream::PushPull { state, .. } => {
                    PUSH_PULL_HEADER_BYTES + PUSH_NODE_STATE_BYTES * u64::from(state.members)
                }
            }
    }

    pub const fn name(&self) -> &'static str {
        match self {
            Stream::Ping { .. } => "tcp-ping",
            Stream::Ack { .. } => "tcp-ack",
            Stream::PushPull { reply: false, .. } => "push-pull",
            Stream::PushPull { reply: true, .. } => "push-pull-reply",
        }
    }
}

/// A stream message the host must deliver to `to`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StreamTransmit {
    pub to: MemberId,
    pub message: Stream,
}

/// Something the agent did that its host (and the reports) care about.
/// Each `SuspicionStarted` about a member is followed by exactly one of
/// `SuspicionEnded`, `Declared` or `LearnedDead` about it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SwimEvent {
    /// This member now holds `target` Suspect (its own failed probe, or a
    /// Suspect message it heard).
    SuspicionStarted { target: MemberId },
    /// `target` is Alive again: it refuted with a higher incarnation.
    SuspicionEnded { target: MemberId },
    /// This member's suspicion timer ran out: it marked `target` Dead at
    /// `incarnation` and gossips that.
    Declared { target: MemberId, incarnation: u32 },
    /// This member heard by gossip that `target` is Dead.
    LearnedDead { target: MemberId },
    /// A member held Dead is Alive again at a higher `incarnation` (it
    /// refuted its death).
    Revived { target: MemberId, incarnation: u32 },
    /// This member heard it was suspected or declared dead and answered
    /// with an Alive at `incarnation`.
    Refuted { incarnation: u32 },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packet_sizes_count_the_compound_overhead() {
        let ping = Message::Ping {
            seq: 1,
            target: MemberId(2),
        };
        let suspect = Message::Suspect {
            incarnation: 0,
            member: MemberId(2),
            from: MemberId(1),
        };
        let single = Packet {
            messages: vec![ping],
        };
        assert_eq!(single.payload_bytes(), 94);
        assert_eq!(single.bytes(), 94 + 28);
        let buddy = Packet {
            messages: vec![ping, suspect],
        };
        // 2 + 2 x 2 + 94 + 63.
        assert_eq!(buddy.payload_bytes(), 163);
        assert_eq!(buddy.name(), "ping");
    }
}
