//! Key placement (SPEC §9): memcached clients that place keys on servers
//! and mark servers dead on their own detectors' verdicts, and what each
//! declaration costs: keys moved, requests missed or failed, key-seconds
//! of clients disagreeing on an owner.
//!
//! A placement run is first a detector run (`crate::engine`) of the mesh
//! whose clients monitor every server; then, for each detector, a ledger
//! ([`ledger`]) replays its verdicts through each distribution against
//! one request stream ([`workload`]), the same for every detector and
//! distribution of the seed. In a scenario that is also a membership
//! cluster, the clients follow their membership views instead: each
//! judge's cluster run ([`crate::membership`]) is replayed the same way
//! ([`evaluate_cluster`]), its servers' caches lost when their silos stop.
//!
//! | file | what it holds |
//! |---|---|
//! | `setup.rs` | the scenario resolved: server lists, placements, key hashes |
//! | `workload.rs` | Zipf keys, the clients' Poisson requests |
//! | `changes.rs` | verdicts and ground truth read off the detector run |
//! | `ledger.rs` | marks, owners and counts of one detector over time |
//! | `outcome.rs` | what a run produced |

pub mod changes;
mod ledger;
pub mod outcome;
pub mod setup;
pub mod workload;

use fdlab_protocol::Nanos;
use rayon::prelude::*;

use crate::faults::Schedule;
use crate::membership::outcome::ClusterOutcome;
use crate::outcome::{FaultRecord, RunOutcome};
use crate::rng::Streams;
use crate::valid::ValidScenario;

pub use outcome::{PlacementCell, PlacementOutcome, Split};
pub use setup::Setup;

/// The placement costs of a detector run `outcome` of a placement scenario
/// resolved as `setup`: one cell per detector × distribution.
pub fn evaluate(setup: &Setup, outcome: &RunOutcome) -> PlacementOutcome {
    let servers = setup.servers.len() as u32;
    let streams = Streams::new(outcome.seed);
    let down = changes::crash_windows(outcome);
    let per_detector: Vec<Vec<PlacementCell>> = (0..outcome.detectors.len())
        .into_par_iter()
        .map(|d| {
            let changes = changes::changes(outcome, d, servers);
            let requests = requests(setup, &streams);
            let subject = &outcome.detectors[d];
            ledger::run(setup, subject, outcome.duration, &down, &changes, requests)
        })
        .collect();
    let cells = per_detector.into_iter().flatten().collect();
    let run = (outcome.scenario.as_str(), outcome.seed, outcome.duration);
    placed(setup, run, &outcome.faults, cells)
}

/// The placement costs of a membership run `cluster` of scenario
/// `scenario` (with `[placement]`, resolved as `setup`), whose clients
/// place keys by their membership views: one cell per distribution, under
/// the run's judge. The requests are those a detector run of the same
/// seed draws.
pub fn evaluate_cluster(
    setup: &Setup,
    scenario: &ValidScenario,
    cluster: &ClusterOutcome,
) -> PlacementOutcome {
    let servers = setup.servers.len() as u32;
    let streams = Streams::new(cluster.seed);
    // The run's own schedule again (a function of the scenario and the
    // seed): whom each client must find down, and when.
    let schedule = Schedule::resolve(scenario, &cluster.nodes, &streams);
    let changes = changes::cluster_changes(cluster, &schedule, servers);
    let down = changes::cluster_down(cluster, servers);
    let requests = requests(setup, &streams);
    let end = cluster.duration;
    let cells = ledger::run(setup, &cluster.judge, end, &down, &changes, requests);
    let run = (cluster.scenario.as_str(), cluster.seed, cluster.duration);
    placed(setup, run, &cluster.faults, cells)
}

/// The seed's requests: the same for every subject and distribution.
fn requests<'a>(setup: &'a Setup, streams: &Streams) -> workload::Requests<'a> {
    workload::Requests::new(
        streams.placement_requests(),
        &setup.zipf,
        setup.clients,
        setup.requests_per_second,
    )
}

/// What the ledgers of one run (`scenario`, `seed`, `duration`) with
/// `faults` produced.
fn placed(
    setup: &Setup,
    (scenario, seed, duration): (&str, u64, Nanos),
    faults: &[FaultRecord],
    cells: Vec<PlacementCell>,
) -> PlacementOutcome {
    let servers = setup.servers.len() as u32;
    PlacementOutcome {
        scenario: scenario.to_string(),
        seed,
        duration,
        servers,
        clients: setup.clients,
        keys: setup.keys() as u32,
        healthy_server_time: changes::healthy_server_time(faults, duration, servers),
        cells,
    }
}
#[cfg(test)]
mod tests;
