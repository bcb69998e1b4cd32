//! What Orleans silos send each other for membership, and what an agent
//! hands its host.

use std::sync::Arc;

use crate::time::Nanos;

use super::table::{SiloId, TableView};

/// Bytes of a message's envelope (addresses, generation, headers), as a
/// round figure for an Orleans system message; see [`Message::bytes`].
pub const ENVELOPE_BYTES: u64 = 96;

/// Bytes of one row of a gossiped snapshot (`MembershipEntry`: address with
/// its generation, status, two votes, times, names), as a round figure.
pub const ROW_BYTES: u64 = 96;

/// A message between silos.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Message {
    /// A probe (`IMembershipService.Ping`); the target answers with a
    /// [`Message::Pong`] of the same id.
    Ping {
        probe: u64,
    },
    Pong {
        probe: u64,
    },
    /// Probe `target` on my behalf and wait at most `wait` for it
    /// (`IMembershipService.ProbeIndirectly`).
    IndirectPing {
        probe: u64,
        target: SiloId,
        wait: Nanos,
    },
    /// The intermediary's answer (`IndirectProbeResponse`): whether the
    /// target answered, and the intermediary's own health score.
    IndirectReply {
        probe: u64,
        answered: bool,
        health: u32,
    },
    /// The table as the sender holds it after a write
    /// (`MembershipChangeNotification` with a snapshot): the receiver takes
    /// it if it is newer than its view, without reading the table.
    Gossip {
        view: Arc<TableView>,
    },
}

impl Message {
    /// Bytes on the wire: the envelope plus the fields.
    pub fn bytes(&self) -> u64 {
        ENVELOPE_BYTES
            + match self {
                Message::Ping { .. } | Message::Pong { .. } => 8,
                Message::IndirectPing { .. } => 24,
                Message::IndirectReply { .. } => 13,
                Message::Gossip { view } => 8 + ROW_BYTES * view.rows.len() as u64,
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
/// only). A host that cannot (the process is gone, or a newer generation
/// runs at that address) tells the sender with
/// [`super::OrleansAgent::handle_unreachable`], as a refused connection does.
#[derive(Clone, Debug, PartialEq, Eq)]
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
    /// A vote was withheld: a message from `target` arrived on a connection
    /// still open within the liveness window (main).
    VoteWithheld { target: SiloId },
    /// This silo read its own row Dead and stops (self-termination).
    Terminated,
    /// This silo found `target` holding enough fresh votes yet not Dead and
    /// stops itself ("Found a bug! Will stop.", `InnerTryToSuspectOrKill`).
    KilledItself { target: SiloId },
    /// The view moved forward to this table version.
    ViewChanged { version: u64 },
}
