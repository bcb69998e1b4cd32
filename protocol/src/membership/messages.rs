//! What Orleans silos send each other for membership, and what an agent
//! hands its host.

use super::table::SiloId;

/// Bytes of a message's envelope (addresses, generation, headers), as a
/// round figure for an Orleans system message; see [`Message::bytes`].
pub const ENVELOPE_BYTES: u64 = 96;

/// An intermediary's answer to an indirect probe.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IndirectOutcome {
    /// The target answered the intermediary's probe.
    Answered,
    /// The target did not answer within the intermediary's wait.
    Failed,
    /// The intermediary is itself unhealthy (local health score above 0) and
    /// will not judge (Orleans' `IntermediaryHealthScore` check).
    Unknown,
}

/// A message between silos.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Message {
    /// A probe; the target answers with a [`Message::Pong`] of the same id.
    Ping {
        probe: u64,
    },
    Pong {
        probe: u64,
    },
    /// Probe `target` on my behalf (`ProbeIndirectly`).
    IndirectPing {
        probe: u64,
        target: SiloId,
    },
    IndirectReply {
        probe: u64,
        outcome: IndirectOutcome,
    },
    /// The table changed: read it if your view is older than `version`.
    Gossip {
        version: u64,
    },
}

impl Message {
    /// Bytes on the wire: the envelope plus the fields.
    pub const fn bytes(&self) -> u64 {
        ENVELOPE_BYTES
            + match self {
                Message::Ping { .. } | Message::Pong { .. } | Message::Gossip { .. } => 8,
                Message::IndirectPing { .. } => 16,
                Message::IndirectReply { .. } => 9,
            }
    }

    pub const fn name(&self) -> &'static str {
        match self {
            Message::Ping { .. } => "ping",
            Message::Pong { .. } => "pong",
            Message::IndirectPing { .. } => "indirect-ping",
            Message::IndirectReply { .. } => "indirect-reply",
            Message::Gossip { .. } => "gossip",
        }
    }
}

/// A message the host must deliver to `to` (a silo of that generation
/// only: a restarted node drops messages for its old generation).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Transmit {
    pub to: SiloId,
    pub message: Message,
}

/// Something the agent did that its host (and the reports) care about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AgentEvent {
    /// This silo wrote itself Active.
    Joined,
    /// This silo could not join within `max_join_attempt_time` and stops.
    JoinGaveUp,
    /// The judge says `target` has failed (the start of a suspicion).
    SuspicionStarted { target: SiloId },
    /// `target` answered again, or left the monitored set.
    SuspicionEnded { target: SiloId },
    /// A vote against `target` was written; `declared` when it made the row Dead.
    Voted { target: SiloId, declared: bool },
    /// A vote was withheld: `target` was heard from within the liveness window.
    VoteWithheld { target: SiloId },
    /// This silo read its own row Dead and stops (self-termination).
    Terminated,
    /// The view moved forward to this table version.
    ViewChanged { version: u64 },
}
