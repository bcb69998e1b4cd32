//! The plan of one run: everything a run of a scenario with a seed fixes
//! before its first event, built once and shared by every host of the run.
//!
//! [`RunPlan::build`] is the one owner of the layout (who monitors whom, the
//! data links), the resolved fault schedule, each node's starting clock, the
//! detector prototypes, and every random stream a run draws from: its
//! identity (see [`crate::rng`]), and the order of its draws where a host
//! must keep in step with another (a heartbeat stream's phase comes first;
//! a probing detector's jitter is the first draw of its stream). The
//! simulator, `fdlab live`, the replay's score sampler and the madsim
//! cross-check all take their streams from here, so a live node and the
//! simulator cannot disagree on a heartbeat phase or a loss draw.

use fdlab_protocol::{Detector, Nanos};
use rand::RngExt;
use rand_chacha::ChaCha8Rng;

use crate::clock::Clock;
use crate::faults::Schedule;
use crate::outcome::{FaultRecord, MustDetect};
use crate::rng::Streams;
use crate::topology::{DataLink, Layout};
use crate::valid::ValidScenario;

/// What a run of a scenario with a seed is, before it runs.
#[derive(Clone, Debug)]
pub struct RunPlan<'s> {
    scenario: &'s ValidScenario,
    seed: u64,
    streams: Streams,
    layout: Layout,
    schedule: Schedule,
    /// Each node's clock at true time zero (`[[clocks]]`; exact otherwise).
    clocks: Vec<Clock>,
    /// By detector, `(local start, instance)`: detectors that start at the
    /// same local instant start identical, so each is built once and cloned
    /// (phi accrual's threshold search and window reservation are then paid
    /// once per run, not once per pair).
    prototypes: Vec<Vec<(Nanos, Detector)>>,
}

impl<'s> RunPlan<'s> {
    /// The plan of the run of `scenario` with `seed`.
    pub fn build(scenario: &'s ValidScenario, seed: u64) -> RunPlan<'s> {
        let streams = Streams::new(seed);
        let mut layout = Layout::build(&scenario.topology, &streams);
        layout.pairs.retain(|&(m, t)| scenario.monitors(m, t));
        let schedule = Schedule::resolve(scenario, &layout.nodes, &streams);
        let mut clocks = vec![Clock::default(); layout.nodes.len()];
        for c in &scenario.clocks {
            if let Some(i) = layout.nodes.iter().position(|x| *x == c.node) {
                clocks[i] = Clock::new(c.drift, c.offset.0);
            }
        }
        let mut starts: Vec<Nanos> = layout
            .pairs
            .iter()
            .map(|&(m, _)| clocks[m as usize].local(Nanos::ZERO))
            .collect();
        starts.sort_unstable();
        starts.dedup();
        let prototypes = (0..scenario.detectors.len())
            .map(|d| {
                starts
                    .iter()
                    .map(|&start| (start, scenario.start_detector(d, start)))
                    .collect()
            })
            .collect();
        RunPlan {
            scenario,
            seed,
            streams,
            layout,
            schedule,
            clocks,
            prototypes,
        }
    }

    pub fn scenario(&self) -> &'s ValidScenario {
        self.scenario
    }

    pub fn seed(&self) -> u64 {
        self.seed
    }

    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    pub fn schedule(&self) -> &Schedule {
        &self.schedule
    }

    /// Node names, by index.
    pub fn nodes(&self) -> &[String] {
        &self.layout.nodes
    }

    /// Monitored pairs `(monitor, target)`, sorted, as in the outcome.
    pub fn pairs(&self) -> &[(u32, u32)] {
        &self.layout.pairs
    }

    /// The faults of this run, resolved for its seed.
    pub fn faults(&self) -> &[FaultRecord] {
        &self.schedule.records
    }

    /// Node `node`'s clock at true time zero.
    pub fn clock(&self, node: u32) -> Clock {
        self.clocks[node as usize]
    }

    /// Detector `d` (its position in the scenario) starting to monitor at
    /// local time `start`: a clone of the prototype when one starts then.
    pub fn detector(&self, d: usize, start: Nanos) -> Detector {
        match self.prototypes[d].iter().find(|(ps, _)| *ps == start) {
            Some((_, proto)) => proto.clone(),
            None => self.scenario.start_detector(d, start),
        }
    }

    // ---- random streams, with their draw order ---------------------------

    /// The heartbeats `target` sends `monitor` every `interval`: their phase,
    /// latency and loss. Its first draw is the phase
    /// ([`RunPlan::heartbeat_phase`]), then per heartbeat sent a loss draw
    /// when some loss is in force and a latency sample; a restart of the
    /// sender draws a new phase from the same stream.
    pub fn heartbeat_stream(&self, monitor: u32, target: u32, interval: Nanos) -> ChaCha8Rng {
        self.streams.heartbeat(monitor, target, interval)
    }

    /// A heartbeat sender's start: its phase, drawn first from the stream
    /// ([`RunPlan::heartbeat_phase`]), and the stream left to draw each
    /// heartbeat's fate (for a host that starts the sender once).
    pub fn heartbeat_sender(
        &self,
        monitor: u32,
        target: u32,
        interval: Nanos,
    ) -> (Nanos, ChaCha8Rng) {
        let mut rng = self.heartbeat_stream(monitor, target, interval);
        let phase = RunPlan::heartbeat_phase(&mut rng, interval);
        (phase, rng)
    }

    /// A heartbeat sender's phase: when, within its first interval, it sends
    /// its first heartbeat (uniform over the interval).
    pub fn heartbeat_phase(rng: &mut ChaCha8Rng, interval: Nanos) -> Nanos {
        Nanos(rng.random_range(0..interval.as_nanos().max(1)))
    }

    /// The probes of detector `d` on the pair: its first draw is the jitter
    /// of its first probe ([`RunPlan::probe_jitter`]), then each probe's and
    /// reply's loss draw (when some loss is in force) and latency sample.
    pub fn liveness_stream(&self, monitor: u32, target: u32, d: usize) -> ChaCha8Rng {
        let name = &self.scenario.detectors[d].name;
        self.streams.liveness(monitor, target, name)
    }

    /// The jitter a probing detector starts with, in [0, 1).
    pub fn probe_jitter(rng: &mut ChaCha8Rng) -> f64 {
        rng.random()
    }

    /// The jitter detector `d` of the pair starts probing with, drawn from a
    /// fresh copy of its stream (for a host that draws nothing else from it).
    pub fn first_probe_jitter(&self, monitor: u32, target: u32, d: usize) -> f64 {
        RunPlan::probe_jitter(&mut self.liveness_stream(monitor, target, d))
    }

    /// Inter-send times (and on/off periods) of a data link's source.
    pub fn workload_stream(&self, link: DataLink) -> ChaCha8Rng {
        self.streams.workload(link.from, link.to)
    }

    /// Latency of a data link's frames.
    pub fn data_link_stream(&self, link: DataLink) -> ChaCha8Rng {
        self.streams.data_link(link.from, link.to)
    }

    /// Service times of stage `node`.
    pub fn service_stream(&self, node: u32) -> ChaCha8Rng {
        self.streams.service(node)
    }

    /// `fdlab live` only: the losses of the probes and replies `me` sends
    /// `peer`. The simulator draws a probe's and its reply's fate from the
    /// pair's liveness stream, which two processes cannot share.
    pub fn live_probe_stream(&self, me: u32, peer: u32) -> ChaCha8Rng {
        self.streams.live_probe(me, peer)
    }

    // ---- what a replay asks before it runs --------------------------------

    /// When `monitor` must declare `target` Failed in this run.
    pub fn must_detect(&self, monitor: u32, target: u32) -> Vec<MustDetect> {
        self.schedule.must_detect(monitor, target)
    }

    /// The first pair affected by a fault: faults are taken by onset (ties in
    /// scenario order); for each, the first pair that must detect it, else the
    /// first pair whose target it hits, else the first whose monitor it hits.
    /// Without any such fault, the first pair. `None` if there is no pair.
    pub fn default_pair(&self) -> Option<(u32, u32)> {
        let (pairs, faults) = (self.pairs(), self.faults());
        let mut order: Vec<usize> = (0..faults.len()).collect();
        order.sort_by_key(|&i| faults[i].window.start);
        let detects: Vec<Vec<MustDetect>> =
            pairs.iter().map(|&(m, t)| self.must_detect(m, t)).collect();
        for i in order {
            let fault = &faults[i];
            let must = pairs
                .iter()
                .zip(&detects)
                .find(|(_, d)| d.iter().any(|x| x.fault == i))
                .map(|(p, _)| *p);
            let target = || pairs.iter().find(|p| Some(p.1) == fault.node).copied();
            let monitor = || pairs.iter().find(|p| Some(p.0) == fault.node).copied();
            if let Some(pair) = must.or_else(target).or_else(monitor) {
                return Some(pair);
            }
        }
        pairs.first().copied()
    }

    /// The pair `monitor,target` named by node names; the error says what is
    /// wrong (an unknown node, or not a monitored pair, with the targets that
    /// monitor does watch).
    pub fn find_pair(&self, monitor: &str, target: &str) -> Result<(u32, u32), String> {
        let nodes = self.nodes();
        let index = |name: &str| -> Result<u32, String> {
            nodes
                .iter()
                .position(|n| n == name)
                .map(|i| i as u32)
                .ok_or_else(|| format!("unknown node `{name}` (nodes: {})", nodes.join(", ")))
        };
        let (m, t) = (index(monitor)?, index(target)?);
        if self.pairs().binary_search(&(m, t)).is_ok() {
            return Ok((m, t));
        }
        let watched: Vec<&str> = self
            .pairs()
            .iter()
            .filter(|p| p.0 == m)
            .map(|p| nodes[p.1 as usize].as_str())
            .collect();
        Err(if watched.is_empty() {
            format!("`{monitor}` monitors no node in this run")
        } else {
            format!(
                "`{monitor}` does not monitor `{target}` in this run (it monitors {})",
                watched.join(", ")
            )
        })
    }
}
