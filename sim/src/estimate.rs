//! What a run will cost before it runs: its simulated events and the memory
//! it holds at its peak, with the keys that set them, so that a run too
//! large to finish or to fit is refused up front with the figure that is
//! too large (and `--dry-run` can print them).
//!
//! The model counts the traffic the scenario asks for, with no fault: every
//! heartbeat stream (one per monitored pair and distinct interval), every
//! probing detector's probes, and on a dataflow every frame on every hop
//! (each stage forwards what it receives, at most what its service time
//! lets through) and every idle link's stream heartbeats. Each unit of
//! traffic costs the engine a few events (a heartbeat: its tick and its
//! arrival, and about one pair timer for every four; a frame on a hop: its
//! arrival, its service and a share of timers): the factors below were
//! measured on the built-in scenarios, whose estimates fall within a factor
//! of 1.5 of their real counts (a test holds them within 2). Faults only
//! remove traffic (a crashed node sends nothing), so the estimate is an
//! upper bound up to that factor.
//!
//! Not every cost is a simulated event: a placement run places every key
//! for every client before its first request, and an Orleans event costs
//! more as the cluster grows. So each source says what its work is
//! counted in ([`Pace`]), and the time a dry run prints sums each
//! source's work at its own nominal speed (`src/budget.rs`). Membership
//! scenarios are in `estimate_membership.rs`, placement ledgers in
//! `estimate_placement.rs`, and what shrinking a swarm's findings costs in
//! `estimate_swarm.rs`.

use fdlab_protocol::Nanos;

use crate::scenario::{Dist, FaultKind, Scenario, Topology};

// Beside this file (`sim/src/estimate_*.rs`) rather than in a folder, so
// that the module keeps its one path.
#[path = "estimate_membership.rs"]
mod membership;
#[path = "estimate_placement.rs"]
mod placement;
#[path = "estimate_swarm.rs"]
pub mod swarm;

pub use membership::{
    EVENTS_PER_DUTY_CYCLE, EVENTS_PER_GOSSIP_TICK, EVENTS_PER_MEMBERSHIP_PROBE,
    EVENTS_PER_STARVED_MEMBER_SECOND, EVENTS_PER_TABLE_OPERATION, JOIN_EVENTS_PER_SILO_PAIR,
};
pub use placement::EVENTS_PER_PLACED_REQUEST;

/// Engine events per heartbeat sent: the tick, the arrival, and a share of
/// pair-timer firings. Measured on the built-in meshes (1.9-2.1).
pub const EVENTS_PER_HEARTBEAT: f64 = 2.1;
/// Engine events per probe: the probe's and its reply's arrivals and a timer.
pub const EVENTS_PER_PROBE: f64 = 3.0;
/// Engine events per data frame on one hop: its arrival, its service, and a
/// share of timers. Measured on the built-in pipelines (2.6-3.0).
pub const EVENTS_PER_FRAME_HOP: f64 = 2.8;
/// Engine events per frame a source emits (the emission itself).
pub const EVENTS_PER_SOURCE_FRAME: f64 = 1.0;
/// Bytes a pending event takes in the queue.
const QUEUE_ENTRY_BYTES: u64 = 32;
/// Host-side bytes per detector slot (slot, random stream, timeline head).
const SLOT_BYTES: u64 = 512;
/// Bytes of one line of a replay's event log, held until it is written.
pub const LOG_RECORD_BYTES: u64 = 96;
/// Bytes of a frame waiting in a send buffer or in flight.
const FRAME_BYTES: u64 = 16;

/// What a source's work is counted in. Each has its own nominal speed
/// (`src/budget.rs`, measured in docs/perf.md).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pace {
    /// Simulated events of the detector engine or of a lock run (and
    /// placed requests, counted as events at [`EVENTS_PER_PLACED_REQUEST`]).
    Engine,
    /// Events of an Orleans cluster of `silos` silos: a table read or a
    /// gossiped snapshot hands a silo a view of every row, so an event
    /// costs more as the cluster grows.
    Orleans { silos: u64 },
    /// Events of a SWIM cluster of `members` members.
    Swim { members: u64 },
    /// Keys placed: one client's owner of one key under one distribution,
    /// computed (no simulated event counts it).
    KeyPlacement,
    /// Events of a mesh simulated whole (not split into pairs: a degraded
    /// node couples them) over `pairs` monitored pairs: every pair's state
    /// is live at once, so an event costs more as the mesh outgrows the
    /// caches.
    WholeMesh { pairs: u64 },
}

/// One source of work: the key that sets it and what it makes.
#[derive(Clone, Debug, PartialEq)]
pub struct Source {
    /// The scenario key (`detectors[1].interval`, `workload.interval`).
    pub key: String,
    /// What it is, for a person (`heartbeats every 1ns on 20 monitored pairs`).
    pub what: String,
    /// Its simulated events in one run (none for work that no event
    /// counts: keys placed).
    pub events: f64,
    /// What its work is counted in.
    pub pace: Pace,
    /// Its work in one run, in `pace`'s unit (its events, for simulated
    /// work).
    pub work: f64,
}

impl Source {
    /// A source of simulated events, whose work is its events.
    pub fn simulated(key: &str, what: String, events: f64, pace: Pace) -> Source {
        Source {
            key: key.into(),
            what,
            events,
            pace,
            work: events,
        }
    }
}

/// The cost of one run of a scenario.
#[derive(Clone, Debug, PartialEq)]
pub struct Estimate {
    /// Simulated events of one run.
    pub events: f64,
    /// Bytes one run holds at its peak, without a replay's event log.
    pub bytes: u64,
    /// Bytes it holds when simulated in one pass, as a replay is: more
    /// than `bytes` for a run split into pairs simulated on their own
    /// (see [`split_run`]), which hold one pair's detectors at a time.
    pub whole_bytes: u64,
    /// The key that sets most of the memory: `topology` (nodes, pairs,
    /// links) or `placement.keys` (the key ledgers).
    pub memory_key: String,
    /// Where the events come from, largest first.
    pub sources: Vec<Source>,
}

impl Estimate {
    /// The largest source of simulated events, if any.
    pub fn main_source(&self) -> Option<&Source> {
        self.sources.first()
    }

    /// Bytes of a replay of the run: the run in one pass and its event log.
    pub fn replay_bytes(&self) -> u64 {
        self.whole_bytes
            .saturating_add((self.events * LOG_RECORD_BYTES as f64).min(u64::MAX as f64) as u64)
    }
}

/// The mean of a distribution, at least 1 ns (the engine waits at least
/// that long between two sends); a Pareto tail without a mean counts its
/// median.
pub fn mean(dist: &Dist) -> Nanos {
    let ns = match dist {
        Dist::Constant { value } => value.as_nanos_f64(),
        Dist::Uniform { min, max } => (min.as_nanos_f64() + max.as_nanos_f64()) / 2.0,
        Dist::Normal { mean, .. } => mean.as_nanos_f64(),
        Dist::Lognormal { median, sigma } => median.as_nanos_f64() * (sigma * sigma / 2.0).exp(),
        Dist::Pareto { scale, shape } if *shape > 1.0 => {
            scale.as_nanos_f64() * shape / (shape - 1.0)
        }
        Dist::Pareto { scale, shape } => scale.as_nanos_f64() * 2f64.powf(1.0 / shape),
        Dist::Empirical { samples, .. } => {
            let sum: f64 = samples.iter().map(|s| s.as_nanos_f64()).sum();
            sum / samples.len().max(1) as f64
        }
    };
    Nanos::from_nanos_f64(ns.max(1.0))
}

/// The cost of one run of `scenario` (validated).
pub fn estimate(scenario: &Scenario) -> Estimate {
    if let Some(m) = &scenario.membership {
        return membership::estimate(scenario, m);
    }
    if let Some(l) = &scenario.lockrpc {
        return lockrpc_estimate(scenario, l);
    }
    let duration = scenario.duration.as_nanos_f64();
    let pairs = scenario.monitored_pairs() as f64;
    let mut sources = Vec::new();
    let pace = if matches!(scenario.topology, Topology::Mesh { .. }) && !split_run(scenario) {
        Pace::WholeMesh {
            pairs: scenario.monitored_pairs(),
        }
    } else {
        Pace::Engine
    };
    // Heartbeat streams: one per pair and distinct interval.
    let mut intervals: Vec<Nanos> = Vec::new();
    for (i, d) in scenario.detectors.iter().enumerate() {
        let Some(interval) = d.config.heartbeat_interval() else {
            continue;
        };
        if intervals.contains(&interval) {
            continue;
        }
        intervals.push(interval);
        let per_pair = duration / interval.as_nanos_f64().max(1.0);
        sources.push(Source::simulated(
            &format!("detectors[{i}].interval"),
            format!(
                "`{}`'s heartbeats every {interval} on {pairs} monitored pairs",
                d.name
            ),
            pairs * per_pair * EVENTS_PER_HEARTBEAT,
            pace,
        ));
    }
    for (i, d) in scenario.detectors.iter().enumerate() {
        if let Some(period) = probe_period(&d.config) {
            sources.push(Source::simulated(
                &format!("detectors[{i}].initial_timeout"),
                format!(
                    "`{}`'s probes every {period} on {pairs} monitored pairs",
                    d.name
                ),
                pairs * duration / period.as_nanos_f64().max(1.0) * EVENTS_PER_PROBE,
                pace,
            ));
        }
    }
    if let Topology::Dataflow { layers } = &scenario.topology {
        sources.extend(dataflow_sources(scenario, layers, duration));
    }
    let mut whole_bytes = bytes(scenario, intervals.len());
    let mut bytes = if split_run(scenario) {
        split_bytes(scenario)
    } else {
        whole_bytes
    };
    let mut memory_key = TOPOLOGY_KEY.to_string();
    if let Some(p) = &scenario.placement {
        let detectors = scenario.detectors.len() as u64;
        let cost = placement::cost(scenario, p, detectors, detectors, "detectors");
        sources.extend(cost.sources);
        memory_key = memory_key_of(bytes, cost.held);
        bytes = bytes.saturating_add(cost.held);
        whole_bytes = whole_bytes.saturating_add(cost.held);
    }
    sources.sort_by(|a, b| b.events.total_cmp(&a.events));
    let events = sources.iter().map(|s| s.events).sum();
    Estimate {
        events,
        bytes,
        whole_bytes,
        memory_key,
        sources,
    }
}

/// The key named for the memory of nodes, pairs and links.
const TOPOLOGY_KEY: &str = "topology";
/// The key named for the memory of the key ledgers.
const KEYS_KEY: &str = "placement.keys";

/// The key that sets most of a run's memory: the key ledgers' (`placed`
/// bytes) or the rest's (`topology` bytes).
fn memory_key_of(topology: u64, placed: u64) -> String {
    if placed > topology {
        KEYS_KEY
    } else {
        TOPOLOGY_KEY
    }
    .to_string()
}

/// Simulated events per lock RPC a client sends (arrival at the server,
/// service end, reply, the channel timer, and the unlock's share):
/// measured on the five lock built-ins, 2.85 to 3.19.
pub const EVENTS_PER_LOCK_RPC: f64 = 3.0;
/// Bytes per client of a lock-RPC run (channels, timers, generators).
const LOCK_CLIENT_BYTES: u64 = 4_096;

/// A lock-RPC scenario: every client's lock RPCs (and as many unlocks)
/// under every policy, and the latency samples it keeps.
fn lockrpc_estimate(scenario: &Scenario, l: &crate::scenario::LockrpcSetup) -> Estimate {
    let nodes = scenario.topology.node_names().len() as f64;
    let clients = nodes * f64::from(l.clients_per_node);
    let policies = l.kinds().len() as f64;
    let rpcs = l.rpcs_per_second * clients * scenario.duration.as_secs_f64();
    let source = Source::simulated(
        "lockrpc.rpcs_per_second",
        format!(
            "{clients} clients sending {}/s lock RPCs (and their unlocks) under {policies} policies",
            l.rpcs_per_second
        ),
        2.0 * rpcs * policies * EVENTS_PER_LOCK_RPC + dsync_storm_events(scenario, l),
        Pace::Engine,
    );
    // One 4-byte latency sample per acquisition, and a wanted-until stamp.
    let acquisitions = rpcs / nodes.max(1.0);
    let bytes = (acquisitions * 12.0 * policies) as u64
        + (clients as u64).saturating_mul(LOCK_CLIENT_BYTES);
    Estimate {
        events: source.events,
        bytes,
        whole_bytes: bytes,
        memory_key: TOPOLOGY_KEY.into(),
        sources: vec![source],
    }
}

/// A lock server is overloaded when its offered Lock RPCs reach this share
/// of what it serves a second (queues then grow past a dsync attempt's
/// 1 s wait, given the service time's spread).
const LOCK_OVERLOAD_SHARE: f64 = 0.9;
/// Simulated events per Lock call of a dsync attempt in a retry storm
/// (the call, its service and reply, and its share of the attempt's
/// release round to every server): measured on `lockrpc-convoy`, 3.8.
const EVENTS_PER_STORM_CALL: f64 = 3.8;

/// dsync's retry storm: when a lock server cannot keep up, every dsync
/// attempt is abandoned after `dsync.acquire_wait` and tried again after
/// MinIO's backoff (half its cap on average), so each acquisition makes
/// an attempt (a Lock call to every server) every second or few until the
/// run ends: the calls grow with the square of the duration. Zero when the
/// servers keep up, or dsync is not run.
fn dsync_storm_events(scenario: &Scenario, l: &crate::scenario::LockrpcSetup) -> f64 {
    use fdlab_protocol::lockrpc::{retry_wait, PolicyKind};
    if !l.kinds().contains(&PolicyKind::Dsync) {
        return 0.0;
    }
    let nodes = scenario.topology.node_names().len() as f64;
    let arrivals = f64::from(l.clients_per_node) * l.rpcs_per_second; // per second, all clients
    let service = mean(&l.service_time).as_secs_f64();
    let lanes = if l.convoy { 1.0 } else { f64::from(l.workers) };
    if arrivals < LOCK_OVERLOAD_SHARE * lanes / service {
        return 0.0;
    }
    let d = l.channel_config(PolicyKind::Dsync).dsync;
    let end = scenario.duration.as_secs_f64();
    let timeout = d.acquire_timeout.as_secs_f64();
    // Attempts of an acquisition with `left` seconds of the run to go.
    let attempts = |left: f64| {
        let (mut t, mut k) = (0.0, 0u32);
        while t < left.min(timeout) {
            k += 1;
            t += d.acquire_wait.as_secs_f64() + retry_wait(&d, k, 0.5).as_secs_f64();
        }
        f64::from(k)
    };
    let step = 1.0;
    let calls: f64 = (0..end as u64)
        .map(|a| arrivals * step * attempts(end - a as f64) * nodes)
        .sum();
    calls * EVENTS_PER_STORM_CALL
}

/// A probing detector's probe period: its learned timeout, which settles at
/// the lower clamp on a quick network.
fn probe_period(config: &fdlab_protocol::DetectorConfig) -> Option<Nanos> {
    use fdlab_protocol::DetectorConfig;
    match config {
        DetectorConfig::AdaptiveProbe(c) => Some(c.min_timeout()),
        DetectorConfig::TwoStage(c) => probe_period(&c.fast).or_else(|| probe_period(&c.confirm)),
        _ => None,
    }
}

/// A dataflow's frames on every hop, and its idle links' stream heartbeats.
fn dataflow_sources(scenario: &Scenario, layers: &[u32], duration: f64) -> Vec<Source> {
    let w = &scenario.workload;
    let interval = mean(&w.interval).as_nanos_f64();
    let duty = match (&w.on, &w.off) {
        (Some(on), Some(off)) => {
            let (on, off) = (mean(on).as_nanos_f64(), mean(off).as_nanos_f64());
            on / (on + off)
        }
        _ => 1.0,
    };
    let service = mean(&w.service_time).as_nanos_f64();
    let source_links = f64::from(layers[0]) * f64::from(layers.get(1).copied().unwrap_or(0));
    let source_frames = source_links * duration / interval * duty;
    // Each stage forwards what it receives, at most what it can serve.
    let mut hops = source_frames;
    let mut through = source_frames;
    for &stages in &layers[1..layers.len().saturating_sub(1)] {
        through = through.min(f64::from(stages) * duration / service);
        hops += through;
    }
    let links: f64 = layers
        .windows(2)
        .map(|p| f64::from(p[0]) * f64::from(p[1]))
        .sum();
    let idle = duration
        / scenario
            .workload
            .idle_frame_interval
            .as_nanos_f64()
            .max(1.0);
    vec![
        Source::simulated(
            "workload.interval",
            format!(
                "data frames every {} on {source_links} source links, over {} hops",
                Nanos::from_nanos_f64(interval),
                layers.len() - 1
            ),
            hops * EVENTS_PER_FRAME_HOP + source_frames * EVENTS_PER_SOURCE_FRAME,
            Pace::Engine,
        ),
        Source::simulated(
            "workload.idle_frame_interval",
            format!("idle checks on {links} data links"),
            links * idle,
            Pace::Engine,
        ),
    ]
}

/// Bytes of a monitored pair's outcome, held until the run's metrics are
/// computed (its ends, ground truth and detector list) ...
const PAIR_OUTCOME_BYTES: u64 = 96;
/// ... and of each of its detectors' timelines (message counts, a
/// verdict change or two). Measured: a 100,000-node mesh with 10 monitors
/// and 2 detectors peaks at 277 MiB (`fdlab bench --only mesh`), about
/// 280 bytes a pair.
const TIMELINE_BYTES: u64 = 96;
/// Pairs whose detectors a split run may hold at once: one per thread.
const PAIRS_IN_FLIGHT: u64 = 64;

/// Whether a run is split into pairs simulated on their own, one pair's
/// detectors at a time (`engine::run`): its pairs do not interact, as they
/// do over data links or through a degraded node.
pub fn split_run(scenario: &Scenario) -> bool {
    matches!(scenario.topology, Topology::Mesh { .. })
        && !scenario
            .faults
            .iter()
            .any(|f| f.kind == Some(FaultKind::Degrade))
        && !scenario
            .random_faults
            .iter()
            .any(|r| r.kind == FaultKind::Degrade)
}

/// Bytes a split run holds at its peak: every pair's outcome, and the
/// detectors of the pairs being simulated.
fn split_bytes(scenario: &Scenario) -> u64 {
    let pairs = scenario.monitored_pairs();
    let detectors = scenario.detectors.len() as u64;
    let per_pair: u64 = scenario
        .detectors
        .iter()
        .map(|d| d.config.memory_estimate() + SLOT_BYTES)
        .sum();
    pairs
        .saturating_mul(PAIR_OUTCOME_BYTES + detectors * TIMELINE_BYTES)
        .saturating_add(per_pair.saturating_mul(PAIRS_IN_FLIGHT.min(pairs)))
}

/// Bytes one run holds at its peak in one pass: every detector's state, the
/// slots, the pending events (one or two per heartbeat stream and pair, a window of
/// frames per link) and the links' buffers.
fn bytes(scenario: &Scenario, intervals: usize) -> u64 {
    let pairs = scenario.monitored_pairs();
    let per_pair: u64 = scenario
        .detectors
        .iter()
        .map(|d| d.config.memory_estimate() + SLOT_BYTES)
        .sum();
    let links = match &scenario.topology {
        Topology::Dataflow { layers } => layers
            .windows(2)
            .map(|p| u64::from(p[0]) * u64::from(p[1]))
            .sum(),
        Topology::Mesh { .. } => 0,
    };
    let net = &scenario.network;
    let per_link = (u64::from(net.send_buffer) + u64::from(net.receive_queue)) * FRAME_BYTES
        + u64::from(net.receive_queue) * QUEUE_ENTRY_BYTES;
    let pending = pairs.saturating_mul(intervals as u64 + 2) * QUEUE_ENTRY_BYTES;
    pairs
        .saturating_mul(per_pair)
        .saturating_add(pending)
        .saturating_add(links.saturating_mul(per_link))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn means_are_at_least_a_nanosecond() {
        let c = Dist::Constant { value: Nanos::ZERO };
        assert_eq!(mean(&c), Nanos(1));
        let u = Dist::Uniform {
            min: Nanos::from_millis(5),
            max: Nanos::from_millis(15),
        };
        assert_eq!(mean(&u), Nanos::from_millis(10));
        let heavy = Dist::Pareto {
            scale: Nanos::from_millis(1),
            shape: 0.5,
        };
        assert_eq!(mean(&heavy), Nanos::from_millis(4));
    }

    /// A mesh's run holds its pairs' outcomes and one pair's detectors at
    /// a time, unless a degraded node couples its pairs; a replay holds
    /// every detector.
    #[test]
    fn a_split_run_holds_outcomes_not_every_detector() {
        use crate::scenario::{DetectorSetup, Fault, MonitorCount};
        use fdlab_protocol::phi::PhiAccrualConfig;
        use fdlab_protocol::DetectorConfig;
        let topology = Topology::Mesh {
            nodes: 10_000,
            monitors_per_node: MonitorCount::Count(10),
        };
        let mut s = Scenario {
            detectors: vec![DetectorSetup {
                name: "phi".into(),
                config: DetectorConfig::PhiAccrual(PhiAccrualConfig::default()),
            }],
            ..Scenario::new("mesh", topology, Nanos::from_secs(60))
        };
        let split = estimate(&s);
        assert!(split_run(&s));
        assert_eq!(split.whole_bytes, bytes(&s, 1));
        assert!(split.bytes * 20 < split.whole_bytes, "{split:?}");
        assert!(split.replay_bytes() > split.whole_bytes);
        s.faults.push(Fault {
            kind: Some(FaultKind::Degrade),
            ..Default::default()
        });
        let coupled = estimate(&s);
        assert!(!split_run(&s));
        assert_eq!(coupled.bytes, coupled.whole_bytes);
    }
}
