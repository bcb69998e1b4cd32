//! SWIM with Lifeguard's refinements, after hashicorp/memberlist: a
//! membership agent with no central table, where members probe each other
//! and gossip who is alive, suspect or dead.
//!
//! Sources: Das, Gupta, Motivala, "SWIM: Scalable Weakly-consistent
//! Infection-style Process Group Membership Protocol", DSN 2002; Dadgar,
//! Phillips, Currey, "Lifeguard: Local Health Awareness for More Accurate
//! Failure Detection", DSN workshops 2018; hashicorp/memberlist
//! (`config.go`, `state.go`, `suspicion.go`, `awareness.go`, `queue.go`,
//! `net.go`), whose LAN defaults are the defaults here; SPEC §8.2. Each
//! module cites the part it follows and its deviations; the agent's
//! driving contract and the deviations of the whole are in [`agent`].
//!
//! | concept | module |
//! |---|---|
//! | keys, defaults, the `swim` / `lifeguard` presets | [`config`] |
//! | the agent: inputs, outputs, getters, gossip rounds | [`agent`] |
//! | probe rounds, ping-reqs, nacks | `probe` |
//! | Alive / Suspect / Dead, refutation | `updates` |
//! | the member list and probe order | [`members`] |
//! | the suspicion timer (LHA-Suspicion) | [`suspicion`] |
//! | the local health multiplier (LHA-Probe) | [`awareness`] |
//! | the broadcast queue and piggybacking | `gossip` |
//! | push/pull: the full state exchange over TCP | `push_pull` |
//! | messages, packets and their bytes, events | [`messages`] |
//! | the host's entropy, SplitMix64 | `super::entropy` (shared with Orleans) |

pub mod agent;
pub mod awareness;
pub mod config;
pub(crate) mod gossip;
pub mod members;
pub mod messages;
pub(crate) mod probe;
pub(crate) mod push_pull;
pub mod suspicion;
pub(crate) mod updates;

#[cfg(test)]
mod memberlist_tests;
#[cfg(test)]
mod network_tests;
#[cfg(test)]
mod proptests;
#[cfg(test)]
mod tests;

pub use agent::SwimAgent;
pub use config::{SwimConfig, Variant};
pub use gossip::retransmit_limit;
pub use members::{MemberId, MemberState};
pub use messages::{
    Message, Packet, PushNodeState, PushState, Stream, StreamTransmit, SwimEvent, Transmit,
};
