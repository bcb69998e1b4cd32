//! fdlab's outputs. Every file is written atomically ([`atomic`]): the query
//! table of `fdlab trace` ([`query_csv`]); the QoS metrics of Chen, Toueg &
//! Aguilera computed from run outcomes ([`metrics`]) and their CSV files and
//! terminal table ([`tables`]); SVG charts ([`charts`]); the report of a run
//! as Markdown and self-contained HTML ([`report`], [`markdown`], [`html`],
//! with the tables of [`detail_table`]); the replay trace, its digest and the
//! timeline of one pair ([`replay`]); the CI gate's comparison ([`gate`]) and
//! its baseline file ([`baseline_file`]); what `fdlab swarm` checks and
//! writes ([`swarm`]). A report's directory is written
//! whole ([`swap_dir`]), and replaced only when it is a report ([`report_dir`]).
//!
//! Membership scenarios (SPEC §8, "a cluster pays for declarations, not
//! verdicts") are reported by [`cluster`]. From the
//! `fdlab_sim::membership::outcome::ClusterOutcome`s of one scenario (every
//! judge × seed, judge order then seed order):
//!
//! - [`cluster::MembershipReport::new`]`(&Scenario, &[ClusterOutcome])`
//!   computes the per-judge figures ([`cluster::cluster_metrics`] →
//!   [`cluster::ClusterMetrics`], one [`cluster::JudgeSummary`] per judge)
//!   and what the report says of the scenario ([`cluster::ClusterAbout`]);
//! - [`cluster::cluster_terminal_table`]`(&ClusterMetrics)` is its console
//!   table;
//! - [`report::write_report`]`(dir, &[ScenarioMetrics], &[About],
//!   &[MembershipReport])` writes the run's report with a "cluster
//!   membership" section per membership scenario, `membership.csv`,
//!   `declarations.csv`, `comparisons.csv` and
//!   `charts/<scenario>-cluster.svg` (those only when there are membership
//!   scenarios; either list may be empty);
//! - [`cluster::write_cluster_replay`]`(dir, &ClusterOutcome,
//!   &[ClusterLogRecord])` writes the replay of one cluster run
//!   (`trace.csv`, `timeline.svg`, `timeline.html`) and returns the
//!   trace's digest.

pub mod atomic;
pub mod baseline_file;
pub mod charts;
pub mod cluster;
pub mod detail_table;
pub mod gate;
pub mod html;
mod html_nav;
mod html_parts;
mod html_table;
pub mod lockrpc;
pub mod markdown;
mod markdown_table;
pub mod metrics;
pub mod pid;
pub mod placement;
pub mod query_csv;
pub mod replay;
pub mod report;
pub mod report_dir;
mod scenario_report;
pub mod summary;
pub mod swap_dir;
pub mod swarm;
pub mod tables;
pub mod verdict;
pub mod words;
