//! What a placement run produced: per detector × distribution, the cost of
//! the clients' declarations (SPEC §9's metrics). Reports compute rates
//! and shares from these counts alone.

use fdlab_protocol::placement::DistributionKind;
use fdlab_protocol::Nanos;

/// One detector feeding one distribution, over one run.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PlacementCell {
    pub detector: String,
    pub distribution: Option<DistributionKind>,
    /// A client marking a server dead while the server was down for it
    /// (in a must-detect window of that client's pair), and otherwise.
    pub true_declarations: u64,
    pub false_declarations: u64,
    /// Keys whose owner changed in the declaring client's placement, summed
    /// over the true (false) declarations.
    pub moved_true: u64,
    pub moved_false: u64,
    /// Keys whose owner changed again when those marks lifted.
    pub moved_back_true: u64,
    pub moved_back_false: u64,
    pub requests: u64,
    /// Requests sent to a reachable server that did not hold the key (a
    /// cache miss: the client reads the backing store and sets it there).
    pub misses: u64,
    /// Hits on a copy older than the key's freshest (set on another server
    /// since): stale reads if the value changed meanwhile.
    pub stale: u64,
    /// Requests with no server (every candidate marked dead, or failover
    /// off), or sent to a server down for that client.
    pub failed: u64,
    /// Key-nanoseconds during which the clients did not all place a key on
    /// the same server (stale-read and split-write risk).
    pub disagreement: u128,
    /// The longest stretch of time one key had more than one owner among
    /// the clients (the first such key, by start, then key order); none if
    /// the clients always agreed.
    pub longest_split: Option<Split>,
}

/// A key the clients did not all place on the same server, from `start`
/// for `length` (to the end of the run if it never healed).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Split {
    /// The key's index in the workload (key `i` is the `i+1`-th most popular).
    pub key: u32,
    pub start: Nanos,
    pub length: Nanos,
}

/// Everything a placement run produced.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlacementOutcome {
    pub scenario: String,
    pub seed: u64,
    pub duration: Nanos,
    pub servers: u32,
    pub clients: u32,
    pub keys: u32,
    /// Server-time not crashed, summed over servers.
    pub healthy_server_time: Nanos,
    /// Detector-major, in scenario order; distributions in report order.
    pub cells: Vec<PlacementCell>,
}
