//! What a declaration costs a memcached client (SPEC §9): the reports of
//! placement scenarios. Each client runs every detector on every server;
//! each distribution (`sockiopool`, `namespace`, `modulo-failover`,
//! `modulo-eject`, `ketama`, `rendezvous`) places the same requests
//! through each detector's verdicts ([`fdlab_sim::placement`]).
//!
//! Per detector × distribution, pooled over seeds ([`PlacementSummary`]):
//! declarations (true: the server was down for the declaring client;
//! false: it was not), the share of keys moved per true and per false
//! declaration and moved back when the mark lifted, keys lost per healthy
//! server-hour (keys moved by false declarations, summed over clients,
//! per hour of servers not crashed), cache misses, stale reads and failed
//! requests (see [`fdlab_sim::placement`]'s cache model), missed-or-failed
//! requests per declaration, and
//! key-seconds of owner disagreement between clients; beside each, the
//! detector's median time to Failed from the detectors' own report.
//!
//! Outputs: `placement.csv` and the console table ([`tables`]), the
//! verdict ([`verdict`]), a chart of detection time against keys lost per
//! healthy server-hour ([`chart`]), and the "Key placement" sections of
//! `index.html` and `report.md` ([`section`]).

pub mod chart;
pub mod metrics;
pub mod section;
pub mod tables;
pub mod verdict;

pub use metrics::{placement_metrics, PlacementMetrics, PlacementSummary};
pub use tables::{placement_terminal_table, write_placement_table};
pub use verdict::placement_verdict;

/// The placement table's file name.
pub const PLACEMENT_CSV: &str = "placement.csv";

/// One placement scenario as reported.
#[derive(Clone, Debug, PartialEq)]
pub struct PlacementReport {
    pub metrics: PlacementMetrics,
}
