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

use fdlab_protocol::Nanos;

use crate::scenario::{Dist, FaultKind, Scenario, Topology};

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

/// One source of events: the key that sets it and what it makes.
#[derive(Clone, Debug, PartialEq)]
pub struct Source {
    /// The scenario key (`detectors[1].interval`, `workload.interval`).
    pub key: String,
    /// What it is, for a person (`heartbeats every 1ns on 20 monitored pairs`).
    pub what: String,
    /// Its events in one run.
    pub events: f64,
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
    /// Where the events come from, largest first.
    pub sources: Vec<Source>,
}

impl Estimate {
    /// The largest source of events, if any.
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
        return membership_estimate(scenario, m);
    }
    if let Some(l) = &scenario.lockrpc {
        return lockrpc_estimate(scenario, l);
    }
    let duration = scenario.duration.as_nanos_f64();
    let pairs = scenario.monitored_pairs() as f64;
    let mut sources = Vec::new();
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
        sources.push(Source {
            key: format!("detectors[{i}].interval"),
            what: format!(
                "`{}`'s heartbeats every {interval} on {pairs} monitored pairs",
                d.name
            ),
            events: pairs * per_pair * EVENTS_PER_HEARTBEAT,
        });
    }
    for (i, d) in scenario.detectors.iter().enumerate() {
        if let Some(period) = probe_period(&d.config) {
            sources.push(Source {
                key: format!("detectors[{i}].initial_timeout"),
                what: format!(
                    "`{}`'s probes every {period} on {pairs} monitored pairs",
                    d.name
                ),
                events: pairs * duration / period.as_nanos_f64().max(1.0) * EVENTS_PER_PROBE,
            });
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
    if let Some(p) = &scenario.placement {
        let detectors = scenario.detectors.len() as u64;
        let (source, held) = placement_cost(scenario, p, detectors, detectors, "detectors");
        sources.push(source);
        bytes = bytes.saturating_add(held);
        whole_bytes = whole_bytes.saturating_add(held);
    }
    sources.sort_by(|a, b| b.events.total_cmp(&a.events));
    let events = sources.iter().map(|s| s.events).sum();
    Estimate {
        events,
        bytes,
        whole_bytes,
        sources,
    }
}

/// A placement run's requests, counted as events at
/// [`EVENTS_PER_PLACED_REQUEST`] per request and distribution, and the bytes
/// of its ledgers: per detector (each its own ledger, all at once at
/// worst) and distribution, an owner byte per client and key and a count
/// per key and server; plus the keys and their hashes.
///
/// `subjects` ledgers are run (one per detector, or one per membership
/// judge), `at_once` of them held at once (every detector's of a run; a
/// membership run's one judge).
fn placement_cost(
    scenario: &Scenario,
    p: &crate::scenario::PlacementSetup,
    subjects: u64,
    at_once: u64,
    what: &str,
) -> (Source, u64) {
    let clients = scenario.monitored_pairs() / u64::from(p.servers.max(1));
    let kinds = p.kinds().len() as u64;
    let requests = p.requests_per_second * clients as f64 * scenario.duration.as_secs_f64();
    let source = Source {
        key: "placement.requests_per_second".into(),
        what: format!(
            "{clients} clients requesting {}/s, placed by {kinds} distributions for each of {subjects} {what}",
            p.requests_per_second
        ),
        events: requests * (kinds * subjects) as f64 * EVENTS_PER_PLACED_REQUEST,
    };
    let keys = u64::from(p.keys);
    let per_ledger = keys.saturating_mul(clients + 2 * (u64::from(p.servers) + 1) + 1);
    let held = per_ledger
        .saturating_mul(kinds * at_once)
        .saturating_add(keys.saturating_mul(KEY_BYTES + HASH_BYTES * kinds));
    (source, held)
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
    let source = Source {
        key: "lockrpc.rpcs_per_second".into(),
        what: format!(
            "{clients} clients sending {}/s lock RPCs (and their unlocks) under {policies} policies",
            l.rpcs_per_second
        ),
        events: 2.0 * rpcs * policies * EVENTS_PER_LOCK_RPC + dsync_storm_events(scenario, l),
    };
    // One 4-byte latency sample per acquisition, and a wanted-until stamp.
    let acquisitions = rpcs / nodes.max(1.0);
    let bytes = (acquisitions * 12.0 * policies) as u64
        + (clients as u64).saturating_mul(LOCK_CLIENT_BYTES);
    Estimate {
        events: source.events,
        bytes,
        whole_bytes: bytes,
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

/// A placed request's cost in simulated events (drawing it, and looking up
/// its owner under each distribution, is cheaper than an event): measured
/// on `fdlab bench --only placement`.
pub const EVENTS_PER_PLACED_REQUEST: f64 = 0.2;
/// Bytes of one key's name (`ns0.item.123456` and its string header).
const KEY_BYTES: u64 = 40;
/// Bytes of one key's hash under one distribution.
const HASH_BYTES: u64 = 8;

/// Membership events per probe: the ping's and the pong's arrivals and the
/// agent's timer. Measured: 1,000 silos for an hour, 23.2 M events for
/// 7.2 M probes (3.2, the startup's joins and gossip included).
pub const EVENTS_PER_MEMBERSHIP_PROBE: f64 = 3.3;
/// SWIM events per member per gossip interval: the gossip timer, and the
/// packets it sends, which it does only when there are updates to
/// piggyback: about 0.2 in a quiet cluster (the Lifeguard study with one
/// member starved, its starvation counted apart).
pub const EVENTS_PER_GOSSIP_TICK: f64 = 0.2;
/// SWIM events per second per starved member (a `degrade` fault), over the
/// packets its slow replies, the suspicions of it and their refutations
/// add at every member. Measured on the Lifeguard study (100 members,
/// heavy-tailed processing): 20 to 165 per second as 1 to 16 members
/// starve (more starved members starve each other's probes too); 55
/// keeps 1 to 16 within a factor of 2.
pub const EVENTS_PER_STARVED_MEMBER_SECOND: f64 = 55.0;
/// Events of one cycle of a duty-cycle starvation: its stop and its resume.
pub const EVENTS_PER_DUTY_CYCLE: f64 = 2.0;
/// Membership events per periodic table operation (a refresh, an
/// IAmAlive): its arrival at the table, the reply's at the silo, the timer.
pub const EVENTS_PER_TABLE_OPERATION: f64 = 3.0;
/// Bytes of one silo besides its view: the agent, its judges, its node.
const SILO_BYTES: u64 = 8 * 1024;
/// Bytes of one row in one silo's view (views are copies once the table
/// changed between two reads, which IAmAlive writes make the usual case).
const VIEW_ROW_BYTES: u64 = 96;
/// Bytes a SWIM member holds per member of the cluster: its entry in the
/// member list and in the probe order. Measured: 2.70 GiB at the peak of
/// 10,000 members for an hour (`fdlab bench --only swim`), 27 bytes x
/// members².
const SWIM_MEMBER_BYTES: u64 = 28;

/// A membership scenario: every judge is a run on each seed; each silo
/// probes `num_probed_silos` peers every `probe_timeout`.
fn membership_estimate(scenario: &Scenario, m: &crate::scenario::MembershipSetup) -> Estimate {
    let silos = scenario.topology.node_names().len() as f64;
    let judges = scenario.orleans_judge_names().len() as f64;
    let swims = scenario.judge_names().len() as f64 - judges;
    let o = &m.orleans;
    let probed = f64::from(o.num_probed_silos).min((silos - 1.0).max(0.0));
    let duration = scenario.duration.as_nanos_f64();
    let per = |period: Nanos| duration / period.as_nanos_f64().max(1.0);
    let mut sources = vec![
        Source {
            key: "membership.orleans.probe_timeout".into(),
            what: format!(
                "{silos} silos probing {probed} peers every {} for each of {judges} judges",
                o.probe_timeout
            ),
            events: judges * silos * probed * per(o.probe_timeout) * EVENTS_PER_MEMBERSHIP_PROBE,
        },
        Source {
            key: "membership.orleans.table_refresh_period".into(),
            what: format!(
                "{silos} silos reading the table every {} for each of {judges} judges",
                o.table_refresh_period
            ),
            events: judges * silos * per(o.table_refresh_period) * EVENTS_PER_TABLE_OPERATION,
        },
        Source {
            key: "membership.orleans.i_am_alive_period".into(),
            what: format!(
                "{silos} silos writing IAmAlive every {} for each of {judges} judges",
                o.i_am_alive_period
            ),
            events: judges * silos * per(o.i_am_alive_period) * EVENTS_PER_TABLE_OPERATION,
        },
        Source {
            key: "membership.swim.probe_interval".into(),
            what: format!(
                "{silos} SWIM members probing every {} and gossiping every {} for each of {swims} SWIM runs",
                m.swim.probe_interval, m.swim.gossip_interval
            ),
            events: swims
                * silos
                * (per(m.swim.probe_interval) * EVENTS_PER_MEMBERSHIP_PROBE
                    + per(m.swim.gossip_interval) * EVENTS_PER_GOSSIP_TICK),
        },
    ];
    let (starved, cycles) = starvation(scenario, m.swim.probe_interval);
    sources.push(Source {
        key: "faults.degrade".into(),
        what: format!(
            "{:.0} member-seconds of starvation for each of {swims} SWIM runs, {cycles:.0} stop-resume cycles for each of {} runs",
            starved,
            judges + swims
        ),
        events: swims * starved * EVENTS_PER_STARVED_MEMBER_SECOND
            + (judges + swims) * cycles * EVENTS_PER_DUTY_CYCLE,
    });
    let mut placed = 0;
    if let Some(p) = &scenario.placement {
        let runs = scenario.judge_names().len() as u64;
        let (source, held) = placement_cost(scenario, p, runs, 1, "judges' runs");
        sources.push(source);
        placed = held;
    }
    sources.retain(|s| s.events > 0.0);
    sources.sort_by(|a, b| b.events.total_cmp(&a.events));
    let n = silos as u64;
    // Runs are one judge each: the largest is an Orleans one if any.
    let per_member = if judges > 0.0 {
        VIEW_ROW_BYTES
    } else {
        SWIM_MEMBER_BYTES
    };
    let bytes = n
        .saturating_mul(SILO_BYTES)
        .saturating_add(n.saturating_mul(n).saturating_mul(per_member))
        .saturating_add(placed);
    Estimate {
        events: sources.iter().map(|s| s.events).sum(),
        bytes,
        whole_bytes: bytes,
        sources,
    }
}

/// The seconds members spend starved by slowed or drawn processing
/// (`degrade` faults) or by duty-cycle stops longer than a probe round
/// (`probe_interval`), and the stop-resume cycles of the duty cycles. A fault drawn in a
/// window counts from the window's middle.
fn starvation(scenario: &Scenario, probe_interval: Nanos) -> (f64, f64) {
    let end = scenario.duration.as_nanos_f64();
    let mut seconds = 0.0;
    let mut cycles = 0.0;
    for f in &scenario.faults {
        if f.kind != Some(crate::scenario::FaultKind::Degrade) {
            continue;
        }
        let start = match (f.at, f.window) {
            (Some(at), _) => at.as_nanos_f64(),
            (None, Some([a, b])) => (a.as_nanos_f64() + b.as_nanos_f64()) / 2.0,
            (None, None) => 0.0,
        };
        let stop = f
            .duration
            .map_or(end, |d| (start + d.as_nanos_f64()).min(end));
        let span = (stop - start).max(0.0);
        match (f.every, f.stopped) {
            // A duty cycle's stops cost their stop and resume. Stops within
            // a probe round (the study's 20% quota, 80 ms of every 100 ms,
            // up to 1 s of every 2 s) never get the member suspected, so
            // they add no SWIM traffic; longer ones get it suspected as a
            // starved member is (measured, docs/lifeguard.md).
            (Some(every), Some(stopped)) => {
                cycles += span / every.as_nanos_f64().max(1.0);
                if stopped > probe_interval {
                    seconds += span / NANOS_PER_SECOND;
                }
            }
            _ => seconds += span / NANOS_PER_SECOND,
        }
    }
    (seconds, cycles)
}

/// Nanoseconds in a second, for the member-seconds of starvation.
const NANOS_PER_SECOND: f64 = 1e9;

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
        Source {
            key: "workload.interval".into(),
            what: format!(
                "data frames every {} on {source_links} source links, over {} hops",
                Nanos::from_nanos_f64(interval),
                layers.len() - 1
            ),
            events: hops * EVENTS_PER_FRAME_HOP + source_frames * EVENTS_PER_SOURCE_FRAME,
        },
        Source {
            key: "workload.idle_frame_interval".into(),
            what: format!("idle checks on {links} data links"),
            events: links * idle,
        },
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
