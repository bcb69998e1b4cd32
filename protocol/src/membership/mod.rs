//! Membership agents: what a cluster does with its failure detectors'
//! verdicts. Each agent is a sans-IO state machine of one node, driven like
//! a detector (`handle_*`, `poll_*`, getters); the table service, the
//! network and the clocks belong to the host.
//!
//! | protocol | module | source |
//! |---|---|---|
//! | Orleans cluster membership | [`agent`] | dotnet/orleans `MembershipTableManager`, `ClusterHealthMonitor`, `SiloHealthMonitor`, `LocalSiloHealthMonitor`; SPEC §8.1 |
//! | SWIM and Lifeguard | [`swim`] | hashicorp/memberlist `config.go`, `state.go`, `suspicion.go`, `awareness.go`; Das et al. 2002; Dadgar et al. 2018; SPEC §8.2 |

pub mod agent;
pub mod config;
pub(crate) mod health;
pub mod judge;
pub mod messages;
pub(crate) mod probing;
pub mod ring;
pub mod swim;
pub mod table;
pub(crate) mod tasks;
pub mod votes;

#[cfg(test)]
mod tests;

pub use agent::OrleansAgent;
pub use config::OrleansConfig;
pub use judge::JudgeSpec;
pub use messages::{AgentEvent, IndirectOutcome, Message, Transmit};
pub use table::{
    OpId, Row, SiloId, SiloStatus, TableOp, TableReply, TableRequest, TableResult, TableView, Vote,
};
