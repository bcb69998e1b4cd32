//! What a cluster pays for declarations, not verdicts: the reports of
//! membership scenarios (SPEC §8). In a membership scenario every node runs
//! an Orleans membership agent, and each *judge* (`classic`, Orleans'
//! missed-probe count, or a detector of §3 plugged in as the per-peer
//! judge) is a separate cluster run on the same seed and fault schedule:
//! judges are compared **seed-paired, not event-paired** (once a silo is
//! declared Dead the runs diverge).
//!
//! From the [`ClusterOutcome`]s of one scenario (every judge × seed),
//! [`cluster_metrics`] computes per judge ([`JudgeSummary`], pooled over
//! seeds; all instants are true simulation time):
//!
//! - **crashes**: crash faults of live silos, which the cluster must
//!   declare; **declared**: those whose row was written Dead, the rest
//!   **never declared** (before the run ended).
//! - **time to declaration**: from the crash to the first Dead write of the
//!   crashed silo's row; mean with a 95% Student-t interval over per-run
//!   means (the seeds are the independent replications, as in
//!   [`crate::metrics`]), nearest-rank p50 and p90, max, and the number of
//!   samples (`declared`).
//! - **time to agreement**: from the crash to the first instant at or
//!   after its declaration when every live Active silo's view shows it Dead
//!   (p50, p90, max); **never agreed**: crashes that never got there,
//!   undeclared ones included.
//! - **declarations**: Dead writes. A **false declaration** is one about a
//!   live silo (paused, slow, partitioned or clock-skewed); an older
//!   generation declared by its own restarted node is not false. Counted,
//!   and as a rate per **node-hour up** (the sum over nodes of the time a
//!   silo process was up, `node_time`), with a 95% interval over per-run
//!   rates. **Node-time destroyed**: for each false declaration, from the
//!   declaration until the node is Active again as a new generation (or
//!   the run ends); total and mean per false declaration.
//! - **suspicions**: a monitor's judge said its target failed; those during
//!   which the target was not declared Dead **did not lead to a
//!   declaration**.
//! - **votes** written (a declaring write counts as one) and **withheld**
//!   by the connection-liveness check; **table** reads, writes (applied),
//!   conflicts (refused for a stale ETag or version) and operations that
//!   found the table unreachable, as means per run.
//! - **messages and bytes per node per second**: between silos, over the
//!   node-time up.
//! - **self-terminations** (a silo read itself Dead and stopped),
//!   **join give-ups**, **restarts** (new generations), and **two active
//!   generations**: instants at which one node had two generations Active
//!   in the table, a safety violation that must stay 0 (shown so that it
//!   is seen to be 0).
//!
//! And per ordered pair of judges ([`compare`], [`JudgeComparison`]): how
//! many times judge A's false declarations per node-hour (all of them, and
//! those of healthy members) are judge B's, seed-paired, with Fieller's 95%
//! interval for a ratio of paired means ([`crate::metrics::ratio_ci95`]).
//!
//! Outputs: `membership.csv`, `declarations.csv` and `comparisons.csv`
//! ([`tables`]), the
//! console table ([`terminal`]), per scenario a chart of median time to
//! declaration against false declarations per node-hour ([`chart`]), the
//! "Cluster membership" sections of `index.html` and `report.md`
//! ([`section`]), and the replay of one cluster run: `trace.csv` and its
//! timeline ([`replay`], drawn by [`timeline`] from the lanes of
//! [`lanes`], with the view lags of [`lag`], folded for many nodes by
//! [`fold`]).
//!
//! [`totals`] holds what one run contributes ([`ClusterRunTotals`]): the
//! figures are pooled from those, so a membership sweep (`fdlab sweep`)
//! keeps them as its units and gets the same figures as a run.
//!
//! Determinism: no hash maps; judges and seeds in order of first
//! appearance; sums of times are exact integer sums.

pub mod chart;
pub mod compare;
pub mod fold;
pub mod lag;
pub mod lanes;
pub mod metrics;
pub mod replay;
pub mod section;
pub mod tables;
pub mod terminal;
pub mod timeline;
pub mod totals;
pub mod verdict;

#[cfg(test)]
pub(crate) mod fixture;
#[cfg(test)]
mod metrics_tests;
#[cfg(test)]
mod report_tests;

pub use chart::cluster_chart_svg;
pub use compare::{compare_judges, JudgeComparison, JudgeRuns, PairedRatio};
pub use metrics::{cluster_metrics, summarize_judge, ClusterMetrics, DeclarationRow, JudgeSummary};
pub use replay::write_cluster_replay;
pub use tables::{write_membership_tables, COMPARISONS_CSV, DECLARATIONS_CSV, MEMBERSHIP_CSV};
pub use terminal::cluster_terminal_table;
pub use totals::{strict_declare_p50, summarize_totals, ClusterRunTotals};
pub use verdict::cluster_verdict;

use fdlab_protocol::membership::OrleansVersion;

use fdlab_sim::membership::outcome::ClusterOutcome;
use fdlab_sim::scenario::{Scenario, CLASSIC_JUDGE};

/// What a report says of a membership scenario besides its figures.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ClusterAbout {
    pub description: String,
    /// The protocol and its main keys, one line.
    pub setup: String,
    /// `(judge, settings)`, in judge order.
    pub judges: Vec<(String, String)>,
}

impl ClusterAbout {
    /// The description, membership setup and judge settings of `scenario`
    /// (judges as `[membership] judges` lists them; by default `classic`,
    /// then every detector).
    pub fn of(scenario: &Scenario) -> ClusterAbout {
        let setup = scenario.membership.clone().unwrap_or_default();
        let o = &setup.orleans;
        let judges = scenario
            .judge_names()
            .into_iter()
            .map(|name| {
                let swim = &setup.swim;
                let settings = if fdlab_sim::scenario::is_swim_run(&name) {
                    format!(
                        "the whole cluster under {} instead of Orleans (no table): a probe every probe_interval = {}, suspicion_mult = {}, suspicion_max_timeout_mult = {}, indirect_checks = {}, gossip every {} to {} members",
                        if name == fdlab_sim::scenario::SWIM_RUN {
                            "plain SWIM"
                        } else {
                            "SWIM with Lifeguard (local health, dogpile suspicion, buddy system)"
                        },
                        swim.probe_interval,
                        swim.suspicion_mult,
                        swim.suspicion_max_timeout_mult,
                        swim.indirect_checks,
                        swim.gossip_interval,
                        swim.gossip_nodes
                    )
                } else if name == CLASSIC_JUDGE {
                    format!(
                        "Orleans' missed-probe count: suspects after num_missed_probes_limit = {} missed probes (one every probe_timeout = {})",
                        o.num_missed_probes_limit, o.probe_timeout
                    )
                } else {
                    scenario
                        .detectors
                        .iter()
                        .find(|d| d.name == name)
                        .map(|d| toml_line(&d.config))
                        .unwrap_or_default()
                };
                (name, settings)
            })
            .collect();
        let restart = match setup.restart_after {
            Some(t) => format!("a stopped silo restarts after {t}"),
            None => "a stopped silo stays down".to_string(),
        };
        ClusterAbout {
            description: scenario.description.clone(),
            setup: format!(
                "{} {}, {} nodes starting within {}: num_probed_silos = {}, num_votes_for_death_declaration = {}, death_vote_expiration = {}, i_am_alive_period = {}, table_refresh_period = {}, connection_liveness_check = {}, table latency {}; {restart}",
                setup.protocol.name(),
                o.version,
                node_count(scenario),
                setup.start_spread,
                o.num_probed_silos,
                o.num_votes_for_death_declaration,
                o.death_vote_expiration,
                o.i_am_alive_period,
                o.table_refresh_period,
                match (o.version, o.connection_liveness_check()) {
                    (_, true) => "on",
                    (OrleansVersion::Main, false) => "off",
                    (OrleansVersion::V10_2, false) => "none (10.2 has none)",
                },
                toml_line(&setup.table_latency),
            ),
            judges,
        }
    }
}

/// `kind = "x", key = value, ...` of a serializable table, on one line.
fn toml_line(value: &impl serde::Serialize) -> String {
    let text = toml::to_string(value).unwrap_or_default();
    let keys: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    keys.join(", ")
}

fn node_count(scenario: &Scenario) -> u32 {
    match &scenario.topology {
        fdlab_sim::scenario::Topology::Mesh { nodes, .. } => *nodes,
        fdlab_sim::scenario::Topology::Dataflow { layers } => layers.iter().sum(),
    }
}

/// One membership scenario as the report of a run shows it (pass these to
/// [`crate::report::write_report`]).
#[derive(Clone, Debug, PartialEq)]
pub struct MembershipReport {
    pub metrics: ClusterMetrics,
    pub about: ClusterAbout,
}

impl MembershipReport {
    /// The report of `scenario`'s runs: every judge × seed, in judge order
    /// then seed order.
    pub fn new(scenario: &Scenario, outcomes: &[ClusterOutcome]) -> MembershipReport {
        MembershipReport {
            metrics: cluster_metrics(&scenario.name, outcomes),
            about: ClusterAbout::of(scenario),
        }
    }
}
