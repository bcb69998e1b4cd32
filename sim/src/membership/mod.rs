//! The membership simulator: every node of a membership scenario runs a
//! membership agent (`fdlab_protocol::membership`), over the same network,
//! clocks and faults as the detector simulator, with the membership table as
//! a simulated service (SPEC §8).
//!
//! One run is one judge on one seed: the judge decides, inside every agent,
//! that a monitored silo failed, and the run shows what the cluster then did
//! with it. Judges cannot share a run as detectors do (shadow mode): a
//! declaration changes the cluster (the declared silo stops), so each judge
//! gets its own run on the same seed, fault schedule and start times.
//!
//! Files, one per simulated thing: [`silos`] (a node's processes: up, down,
//! paused, starved, its clock), [`network`] (messages between silos),
//! [`table`] (the table service), [`ledger`] (ground truth, counts, the
//! replay log), [`outcome`] (what a run produced).

mod agents;
mod cluster;
mod ledger;
mod network;
pub mod outcome;
mod silos;
mod table;

use fdlab_protocol::membership::swim::{SwimConfig, Variant};
use fdlab_protocol::membership::JudgeSpec;
use fdlab_protocol::Nanos;
use rand::RngExt;

use crate::clock::Clock;
use crate::dist::Sampler;
use crate::faults::Schedule;
use crate::rng::Streams;
use crate::scenario::{CLASSIC_JUDGE, LIFEGUARD_RUN, SWIM_RUN};
use crate::valid::ValidScenario;
pub use agents::Contender;
use cluster::Cluster;
use outcome::{ClusterLogRecord, ClusterOutcome};

/// The judges of a membership scenario, in order, with what each run's
/// silos are (see `Scenario::judge_names`): Orleans with its judge, or the
/// whole cluster under SWIM (`swim`) or Lifeguard (`lifeguard`).
pub fn judges(scenario: &ValidScenario) -> Vec<(String, Contender)> {
    let Some(setup) = scenario.membership.as_ref() else {
        return Vec::new();
    };
    let swim = |variant: Variant| {
        let preset = SwimConfig::preset(variant);
        Contender::Swim(SwimConfig {
            local_health_multiplier: preset.local_health_multiplier,
            dogpile: preset.dogpile,
            buddy_system: preset.buddy_system,
            ..setup.swim.clone()
        })
    };
    scenario
        .judge_names()
        .into_iter()
        .filter_map(|name| {
            let contender = match name.as_str() {
                CLASSIC_JUDGE => Contender::Orleans(setup.orleans.clone(), JudgeSpec::Classic),
                SWIM_RUN => swim(Variant::Swim),
                LIFEGUARD_RUN => swim(Variant::Lifeguard),
                _ => {
                    let d = scenario.detectors.iter().position(|d| d.name == name)?;
                    let judge = JudgeSpec::Detector(scenario.config(d).clone());
                    Contender::Orleans(setup.orleans.clone(), judge)
                }
            };
            Some((name, contender))
        })
        .collect()
}

/// The faults of membership scenario `scenario` on `seed`, resolved as
/// [`run`] resolves them (the same streams): what a run of the real
/// system beside the model injects (`fdlab live`).
pub fn schedule(scenario: &ValidScenario, seed: u64) -> Schedule {
    let names = scenario.topology.node_names();
    Schedule::resolve(scenario, &names, &Streams::new(seed))
}

/// `fdlab live` only: how much later than planned a real run of `seed`
/// sets its time zero, uniform within `probe_interval`. The real agents'
/// tickers run from their creation and the harness sees the cluster
/// converge in rows they write on those ticks, so a fixed delay would put
/// every crash at one of a few points of the agents' probe interval; the
/// model draws that point uniformly (`swim_created_within`), and so does
/// this, from a stream of its own.
pub fn live_zero_offset(seed: u64, probe_interval: Nanos) -> Nanos {
    let mut rng = Streams::new(seed).live_membership_phase();
    Nanos(rng.random_range(0..probe_interval.as_nanos().max(1)))
}

/// Runs membership scenario `scenario` with its judge `judge` (an index
/// into [`judges`]) on `seed`; with `log`, also the replay log.
///
/// # Panics
/// If the scenario has no `[membership]` table or `judge` is out of range
/// (callers check both when they load the scenario).
pub fn run(
    scenario: &ValidScenario,
    seed: u64,
    judge: usize,
    log: bool,
) -> (ClusterOutcome, Option<Vec<ClusterLogRecord>>) {
    let setup = scenario.membership.as_ref().expect("a membership scenario");
    let (judge_name, contender) = judges(scenario).swap_remove(judge);
    let label = contender.label(&judge_name);
    let streams = Streams::new(seed);
    let names = scenario.topology.node_names();
    let schedule = Schedule::resolve(scenario, &names, &streams);
    let mut clocks = vec![Clock::default(); names.len()];
    for c in &scenario.clocks {
        if let Some(i) = names.iter().position(|x| *x == c.node) {
            clocks[i] = Clock::new(c.drift, c.offset.0);
        }
    }
    let mut start_rng = streams.membership_start();
    let spread = setup.start_spread.as_nanos();
    let starts: Vec<Nanos> = (0..names.len())
        .map(|_| Nanos(start_rng.random_range(0..=spread)))
        .collect();
    // A SWIM member starts knowing every member (it has no join, see
    // `fdlab_protocol::membership::swim`): the cluster is formed at time 0,
    // or members not yet started would be suspected, and declared, by the
    // others. The draws above are made all the same, so that the start
    // stream is the same for every judge.
    let starts = match contender {
        Contender::Swim(_) => vec![Nanos::ZERO; names.len()],
        Contender::Orleans(..) => starts,
    };
    let network = network::Network::new(
        Sampler::new(&scenario.network.latency),
        scenario.network.loss,
        (0..names.len() as u32)
            .map(|n| streams.membership_send(n))
            .collect(),
    );
    let table = table::TableService::new(
        schedule.table_faults.clone(),
        Sampler::new(&setup.table_latency),
        streams.membership_table(),
    );
    let mut ledger = ledger::Ledger::new(names.len(), log);
    if let Some(p) = &scenario.placement {
        ledger.watch_servers(p.servers);
    }
    let entropy = (0..names.len() as u32)
        .map(|n| streams.membership_entropy(n))
        .collect();
    let processing = (0..names.len() as u32)
        .map(|n| streams.membership_processing(n))
        .collect();
    // SWIM members created together: at a point of the probe interval
    // drawn for the seed, each within `swim_created_within` of it.
    let swim_created = match (&contender, setup.swim_created_within) {
        (Contender::Swim(config), Some(within)) => {
            let mut rng = streams.swim_created();
            let phase = rng.random_range(0..config.probe_interval.as_nanos());
            Some(
                (0..names.len())
                    .map(|_| Nanos(phase + rng.random_range(0..=within.as_nanos())))
                    .collect::<Vec<Nanos>>(),
            )
        }
        _ => None,
    };
    let mut cluster = Cluster::new(
        contender,
        entropy,
        processing,
        setup.restart_after,
        schedule,
        clocks,
        network,
        table,
        ledger,
    );
    if let Some(ago) = swim_created {
        cluster.swim_created(ago);
    }
    cluster.run(&starts, scenario.duration);
    let (ledger, schedule, events) = cluster.into_parts();
    let mut ledger = ledger;
    ledger.finish(scenario.duration);
    let outcome = ClusterOutcome {
        scenario: scenario.name.clone(),
        seed,
        judge: judge_name,
        label,
        duration: scenario.duration,
        nodes: names,
        faults: schedule.records,
        crashes: ledger.crashes,
        declarations: ledger.declarations,
        suspicions: ledger.suspicions,
        counts: ledger.counts,
        node_time: ledger.node_time,
        stopped: ledger.stopped,
        views: ledger.views,
        events,
    };
    (outcome, ledger.log)
}
