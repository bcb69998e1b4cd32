//! Membership agents: what a cluster does with its failure detectors'
//! verdicts. Each agent is a sans-IO state machine of one node, driven like
//! a detector (`handle_*`, `poll_*`, getters); the table service, the
//! network and the clocks belong to the host.
//!
//! | protocol | module | source |
//! |---|---|---|
//! | Orleans cluster membership, release 10.2 or main | [`agent`] | dotnet/orleans v10.2.2 and main e558829b: `MembershipTableManager`, `ClusterHealthMonitor`, `SiloHealthMonitor`, `LocalSiloHealthMonitor`; SPEC §8.1; docs/membership.md |
//! | SWIM and Lifeguard | [`swim`] | hashicorp/memberlist `config.go`, `state.go`, `suspicion.go`, `awareness.go`; Das et al. 2002; Dadgar et al. 2018; SPEC §8.2 |

pub mod agent;
pub(crate) mod backoff;
pub mod config;
pub(crate) mod entropy;
pub(crate) mod health;
pub mod judge;
pub(crate) mod lanes;
pub mod messages;
pub(crate) mod probe_timeout;
pub(crate) mod probing;
pub mod ring;
pub(crate) mod suspect;
pub mod swim;
pub mod table;
pub mod votes;

#[cfg(test)]
mod tests;

pub use agent::OrleansAgent;
pub use config::{OrleansConfig, OrleansVersion};
pub use judge::JudgeSpec;
pub use messages::{AgentEvent, Message, Transmit};
pub use table::{
    OpId, Row, SiloId, SiloStatus, TableOp, TableReply, TableRequest, TableResult, TableView, Vote,
};
