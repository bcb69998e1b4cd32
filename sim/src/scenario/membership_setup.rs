//! The `[membership]` table: every node runs a membership agent (Orleans'
//! table-based membership, or SWIM with or without Lifeguard), judged by
//! Orleans' own missed-probe count or by the scenario's detectors (SPEC §8).

use fdlab_protocol::membership::swim::SwimConfig;
use fdlab_protocol::membership::OrleansConfig;
use fdlab_protocol::Nanos;
use serde::{Deserialize, Serialize};

use super::Dist;

/// The `[membership]` table: which protocol the nodes run, which judges
/// decide that a monitored peer failed, the table service, and what a node
/// does after it stops.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct MembershipSetup {
    #[serde(default)]
    pub protocol: MembershipProtocol,
    /// The judges, by name: `classic` (Orleans' missed-probe count) or the
    /// name of a `[[detectors]]` table. Each judge is a separate cluster run
    /// on the same seed and fault schedule. Default: `classic`, then every
    /// detector in order.
    #[serde(default)]
    pub judges: Option<Vec<String>>,
    /// A node that stopped because it read itself Dead (or gave up joining)
    /// restarts as a new generation after this delay; none: it stays down.
    #[serde(default)]
    pub restart_after: Option<Nanos>,
    /// Each node's first silo starts at a uniformly random instant in
    /// `[0, start_spread]` (a rolling deployment; all at once makes every
    /// joining silo's table write conflict).
    #[serde(default = "default_start_spread")]
    pub start_spread: Nanos,
    /// SWIM runs: the members were created (memberlist's `Create`, which
    /// starts their probe and gossip tickers) together, within this span of
    /// one another, at a point of the probe interval drawn per seed, before
    /// the cluster formed at time 0; so they probe in lockstep, as the real
    /// library's members created together do. None: each member's tickers
    /// at a phase of their own (members created at unrelated instants).
    #[serde(default)]
    pub swim_created_within: Option<Nanos>,
    /// Latency of one table operation, each way (request, then reply).
    #[serde(default = "default_table_latency")]
    pub table_latency: Dist,
    /// Orleans' keys (`ClusterMembershipOptions`), SPEC §8.1 defaults.
    #[serde(default)]
    pub orleans: OrleansConfig,
    /// SWIM's keys (memberlist's `DefaultLANConfig`), for the runs of the
    /// [`SWIM_RUN`] and [`LIFEGUARD_RUN`] judges, which set Lifeguard's
    /// three switches themselves.
    #[serde(default)]
    pub swim: SwimConfig,
}

/// The judge name of a run of the whole cluster under plain SWIM (SPEC
/// §8.2) instead of Orleans: none of Lifeguard's three mechanisms.
pub const SWIM_RUN: &str = "swim";
/// The judge name of a run under SWIM with Lifeguard's three mechanisms
/// (what hashicorp/memberlist runs).
pub const LIFEGUARD_RUN: &str = "lifeguard";

/// Whether `judge` names a SWIM run rather than an Orleans judge.
pub fn is_swim_run(judge: &str) -> bool {
    judge == SWIM_RUN || judge == LIFEGUARD_RUN
}

/// The judge name of Orleans' own missed-probe count.
pub const CLASSIC_JUDGE: &str = "classic";

fn default_start_spread() -> Nanos {
    Nanos::from_secs(10)
}

fn default_table_latency() -> Dist {
    Dist::Lognormal {
        median: Nanos::from_millis(5),
        sigma: 0.5,
    }
}

impl Default for MembershipSetup {
    fn default() -> Self {
        MembershipSetup {
            protocol: MembershipProtocol::default(),
            judges: None,
            restart_after: None,
            start_spread: default_start_spread(),
            swim_created_within: None,
            table_latency: default_table_latency(),
            orleans: OrleansConfig::default(),
            swim: SwimConfig::default(),
        }
    }
}

/// The membership protocol of a membership scenario.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum MembershipProtocol {
    /// Orleans' table-based membership (SPEC §8.1).
    #[default]
    Orleans,
}

impl MembershipProtocol {
    pub const fn name(self) -> &'static str {
        match self {
            MembershipProtocol::Orleans => "orleans",
        }
    }
}
