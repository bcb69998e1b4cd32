//! The fault schedule of one run: scheduled faults with their times resolved
//! (a fixed `at`, or a random start in a `window`, drawn per seed), random
//! faults drawn swarm-style, and the ground truth they imply for every
//! monitored pair.

use fdlab_protocol::Nanos;
use rand::RngExt;
use rand_chacha::ChaCha8Rng;

mod outages;
mod truth;

use std::collections::{BTreeMap, VecDeque};

use crate::dist::{exponential, Sampler};
use crate::outcome::{FaultRecord, Window};
use crate::rng::Streams;
use crate::scenario::{
    Direction, Expect, Fault, FaultKind, PartitionMode, PartitionShape, RandomFaults, Scenario,
};
use outages::{NodeFault, Outages};
use truth::{Affected, DetectRule};

/// Duration of a random fault whose entry gives none.
pub const DEFAULT_RANDOM_FAULT_DURATION: Nanos = Nanos::from_secs(1);

/// What the engine must do at an instant.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Action {
    Crash {
        node: u32,
    },
    Restart {
        node: u32,
    },
    PauseStart {
        node: u32,
        planned: Option<Nanos>,
    },
    PauseEnd {
        node: u32,
    },
    /// A partition heals: release what it held, resume blocked data links.
    Heal {
        partition: u32,
    },
    BackpressureStart {
        node: u32,
        capacity: f64,
    },
    BackpressureEnd {
        node: u32,
    },
    DegradeStart {
        node: u32,
        slowdown: Nanos,
        /// Membership runs: an index into [`Schedule::processing`].
        processing: Option<u32>,
    },
    DegradeEnd {
        node: u32,
    },
    ClockStep {
        node: u32,
        offset: i64,
    },
    ClockDrift {
        node: u32,
        drift: f64,
    },
}

/// An active partition: which messages it cuts, and when.
#[derive(Clone, Debug)]
pub struct Partition {
    pub window: Window,
    /// Nodes on the named side (the isolated node, or `nodes`).
    side: Vec<bool>,
    bridge: Option<u32>,
    one_way: bool,
    pub hold: bool,
    pub record: usize,
}

impl Partition {
    /// Whether a message `from -> to` sent at `at` is cut.
    pub fn cuts(&self, from: u32, to: u32, at: Nanos) -> bool {
        if at < self.window.start || at >= self.window.end {
            return false;
        }
        if self.bridge.is_some_and(|b| b == from || b == to) {
            return false;
        }
        let (a, b) = (self.side[from as usize], self.side[to as usize]);
        if self.one_way {
            a && !b
        } else {
            a != b
        }
    }
}

/// Loss behaviour of a loss fault.
#[derive(Clone, Debug)]
enum LossModel {
    Independent(f64),
    /// Gilbert-Elliott: loss `p` inside the listed bursts, none outside.
    Bursts {
        p: f64,
        bursts: Vec<Window>,
    },
}

/// A slow-link or loss fault on some links.
#[derive(Clone, Debug)]
pub struct LinkFault {
    pub window: Window,
    from: Option<u32>,
    to: Option<u32>,
    one_way: bool,
    pub extra_latency: Nanos,
    loss: Option<LossModel>,
    pub record: usize,
}

impl LinkFault {
    /// Whether the fault applies to a message `from -> to` sent at `at`.
    pub fn applies(&self, from: u32, to: u32, at: Nanos) -> bool {
        if at < self.window.start || at >= self.window.end {
            return false;
        }
        let forward = self.from.is_none_or(|f| f == from) && self.to.is_none_or(|t| t == to);
        let backward =
            !self.one_way && self.from.is_none_or(|f| f == to) && self.to.is_none_or(|t| t == from);
        forward || backward
    }

    /// The loss probability (inside bursts, for bursty loss) and the bursts,
    /// if any: for a host that applies the fault itself (`fdlab live`).
    pub fn loss(&self) -> Option<(f64, Option<&[Window]>)> {
        match &self.loss {
            None => None,
            Some(LossModel::Independent(p)) => Some((*p, None)),
            Some(LossModel::Bursts { p, bursts }) => Some((*p, Some(bursts))),
        }
    }

    /// Loss probability at `at` (for a message the fault applies to).
    pub fn loss_at(&self, at: Nanos) -> f64 {
        match &self.loss {
            None => 0.0,
            Some(LossModel::Independent(p)) => *p,
            Some(LossModel::Bursts { p, bursts }) => {
                let i = bursts.partition_point(|w| w.end <= at);
                if bursts.get(i).is_some_and(|w| w.start <= at) {
                    *p
                } else {
                    0.0
                }
            }
        }
    }
}

/// A fault of the membership table service: an outage (no
/// `extra_latency`) or slow operations.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TableFault {
    pub window: Window,
    pub extra_latency: Option<Nanos>,
    pub record: usize,
}

impl TableFault {
    pub fn active(&self, at: Nanos) -> bool {
        at >= self.window.start && at < self.window.end
    }
}

/// The resolved schedule of one run.
#[derive(Clone, Debug, Default)]
pub struct Schedule {
    pub records: Vec<FaultRecord>,
    /// Engine actions in time order (ties in schedule order).
    pub actions: Vec<(Nanos, Action)>,
    pub partitions: Vec<Partition>,
    pub link_faults: Vec<LinkFault>,
    /// Faults of a membership scenario's table service.
    pub table_faults: Vec<TableFault>,
    /// The processing-time distributions of degrade faults (membership).
    pub processing: Vec<crate::scenario::Dist>,
    detect: Vec<DetectRule>,
    /// Windows during which a node is crashed.
    downtime: Vec<(u32, Window)>,
    /// Each node's crash, restart and pause faults, in scenario order, until
    /// [`Schedule::finish`] resolves them.
    node_faults: BTreeMap<u32, Vec<NodeFault>>,
}

impl Schedule {
    /// Resolves the scenario's faults for one seed. `names` are the node names
    /// in index order.
    pub(crate) fn resolve(scenario: &Scenario, names: &[String], streams: &Streams) -> Schedule {
        // One map, not a search per name: a partition's side may name
        // half of 100,000 nodes.
        let numbers: BTreeMap<&str, u32> = names
            .iter()
            .enumerate()
            .map(|(i, n)| (n.as_str(), i as u32))
            .collect();
        let index =
            |name: &Option<String>| -> Option<u32> { numbers.get(name.as_deref()?).copied() };
        let end = scenario.duration;
        let mut s = Schedule::default();
        for (i, fault) in scenario.faults.iter().enumerate() {
            let mut rng = streams.fault(i);
            let start = match (fault.at, fault.window) {
                (Some(at), _) => at,
                (None, Some([a, b])) if b > a => {
                    Nanos(rng.random_range(a.as_nanos()..=b.as_nanos()))
                }
                (None, Some([a, _])) => a,
                (None, None) => Nanos::ZERO,
            };
            let stop = fault.duration.map_or(end, |d| (start + d).min(end));
            s.add(fault, start, stop, &index, names, &mut rng);
        }
        for (i, random) in scenario.random_faults.iter().enumerate() {
            s.add_random(i, random, names, end, streams);
        }
        s.finish(end);
        s
    }

    #[allow(clippy::too_many_arguments)]
    fn add(
        &mut self,
        fault: &Fault,
        start: Nanos,
        stop: Nanos,
        index: &dyn Fn(&Option<String>) -> Option<u32>,
        names: &[String],
        rng: &mut ChaCha8Rng,
    ) {
        let kind = fault.kind();
        let expect = fault.expect();
        let window = Window { start, end: stop };
        let node = index(&fault.node);
        let record = self.records.len();
        let mut target = fault.node.clone().unwrap_or_default();
        let one_way = fault.direction == Some(Direction::OneWay);
        // The nodes the fault holds, where they are not its node (see
        // `FaultRecord::held`).
        let mut held: Option<Vec<u32>> = None;
        match kind {
            FaultKind::Crash => {
                if let Some(n) = node {
                    self.actions.push((start, Action::Crash { node: n }));
                    let restarts = fault.duration.is_some();
                    if restarts {
                        self.actions.push((stop, Action::Restart { node: n }));
                    }
                    self.node_fault(n, NodeFault::Crash { window, restarts });
                    self.detect_target(record, expect, window, n);
                }
            }
            FaultKind::Restart => {
                if let Some(n) = node {
                    self.actions.push((start, Action::Restart { node: n }));
                    self.node_fault(n, NodeFault::Restart { at: start });
                }
            }
            FaultKind::Pause => {
                if let Some(n) = node {
                    let announced = fault.planned.unwrap_or(false);
                    let planned = announced.then_some(stop - start);
                    self.actions
                        .push((start, Action::PauseStart { node: n, planned }));
                    self.actions.push((stop, Action::PauseEnd { node: n }));
                    let pause = NodeFault::Pause {
                        window,
                        planned: announced,
                    };
                    self.node_fault(n, pause);
                    self.detect_target(record, expect, window, n);
                }
            }
            FaultKind::Partition => {
                let shape = fault.shape.unwrap_or_default();
                let mut side = vec![false; names.len()];
                let mut bridge = None;
                match shape {
                    PartitionShape::Isolate => {
                        if let Some(n) = node {
                            side[n as usize] = true;
                        }
                    }
                    PartitionShape::Halves | PartitionShape::Bridge => {
                        for name in fault.nodes.iter().flatten() {
                            if let Some(n) = index(&Some(name.clone())) {
                                side[n as usize] = true;
                            }
                        }
                        if shape == PartitionShape::Bridge {
                            bridge = node;
                        }
                    }
                }
                if shape != PartitionShape::Isolate {
                    let named = |(i, &on): (usize, &bool)| on.then_some(i as u32);
                    let side = side.iter().enumerate().filter_map(named);
                    held = Some(side.filter(|&n| Some(n) != bridge).collect());
                }
                target = match shape {
                    PartitionShape::Isolate => target,
                    _ => fault.nodes.clone().unwrap_or_default().join("+"),
                };
                target = format!("{target} {}", if one_way { "-/->" } else { "<-/->" });
                let hold = fault.mode == Some(PartitionMode::Hold);
                let id = self.partitions.len();
                self.partitions.push(Partition {
                    window,
                    side,
                    bridge,
                    one_way,
                    hold,
                    record,
                });
                self.actions.push((
                    stop,
                    Action::Heal {
                        partition: id as u32,
                    },
                ));
                if expect == Expect::Detect {
                    self.detect.push(DetectRule {
                        record,
                        window,
                        affected: Affected::Partition(id),
                    });
                }
            }
            FaultKind::SlowLink | FaultKind::Loss => {
                let loss = fault.probability.map(|p| match (fault.burst, fault.gap) {
                    (Some(burst), Some(gap)) => LossModel::Bursts {
                        p,
                        bursts: bursts(window, burst, gap, rng),
                    },
                    _ => LossModel::Independent(p),
                });
                target = match (&fault.from, &fault.to) {
                    (Some(f), Some(t)) => format!("{f} {} {t}", if one_way { "->" } else { "<->" }),
                    _ => "all links".into(),
                };
                let id = self.link_faults.len();
                self.link_faults.push(LinkFault {
                    window,
                    from: index(&fault.from),
                    to: index(&fault.to),
                    one_way,
                    extra_latency: fault.extra_latency.unwrap_or_default(),
                    loss,
                    record,
                });
                if expect == Expect::Detect {
                    self.detect.push(DetectRule {
                        record,
                        window,
                        affected: Affected::Link(id),
                    });
                }
            }
            FaultKind::Backpressure => {
                if let Some(n) = node {
                    let capacity = fault.capacity.unwrap_or(0.1);
                    self.actions
                        .push((start, Action::BackpressureStart { node: n, capacity }));
                    self.actions
                        .push((stop, Action::BackpressureEnd { node: n }));
                    self.detect_target(record, expect, window, n);
                }
            }
            FaultKind::Degrade => {
                if let (Some(n), Some(stopped), Some(every)) = (node, fault.stopped, fault.every) {
                    // A duty cycle: degraded (for the ledger) throughout, and
                    // stopped for `stopped` at the start of every `every`.
                    self.actions.push((
                        start,
                        Action::DegradeStart {
                            node: n,
                            slowdown: Nanos::ZERO,
                            processing: None,
                        },
                    ));
                    // Each stop is a pause of the node, resolved with its
                    // crashes and other pauses as any pause is (`finish`
                    // keeps only the pause actions the outages resolve to).
                    let mut at = start;
                    while at < stop {
                        let resume = (at + stopped).min(stop);
                        let window = Window {
                            start: at,
                            end: resume,
                        };
                        let planned = false;
                        self.node_fault(n, NodeFault::Pause { window, planned });
                        at = at + every;
                    }
                    self.actions.push((stop, Action::DegradeEnd { node: n }));
                    self.detect_target(record, expect, window, n);
                } else if let Some(n) = node {
                    let (slowdown, processing) = match &fault.processing {
                        Some(dist) => {
                            self.processing.push(dist.clone());
                            (Nanos::ZERO, Some(self.processing.len() as u32 - 1))
                        }
                        None => (fault.slowdown.unwrap_or(Nanos::from_millis(10)), None),
                    };
                    self.actions.push((
                        start,
                        Action::DegradeStart {
                            node: n,
                            slowdown,
                            processing,
                        },
                    ));
                    self.actions.push((stop, Action::DegradeEnd { node: n }));
                    self.detect_target(record, expect, window, n);
                }
            }
            FaultKind::TableOutage | FaultKind::SlowTable => {
                target = "table".into();
                self.table_faults.push(TableFault {
                    window,
                    extra_latency: (kind == FaultKind::SlowTable)
                        .then(|| fault.extra_latency.unwrap_or_default()),
                    record,
                });
            }
            FaultKind::Clock => {
                if let Some(n) = node {
                    if let Some(offset) = fault.offset {
                        self.actions.push((
                            start,
                            Action::ClockStep {
                                node: n,
                                offset: offset.0,
                            },
                        ));
                    }
                    if let Some(drift) = fault.drift {
                        self.actions
                            .push((start, Action::ClockDrift { node: n, drift }));
                    }
                    self.detect_target(record, expect, window, n);
                }
            }
        }
        let about = node.or_else(|| index(&fault.from)).or_else(|| {
            fault
                .nodes
                .iter()
                .flatten()
                .find_map(|n| index(&Some(n.clone())))
        });
        self.records.push(FaultRecord {
            kind,
            target,
            node: about,
            held: held.unwrap_or_else(|| about.into_iter().collect()),
            window,
            expect,
        });
    }

    fn node_fault(&mut self, node: u32, fault: NodeFault) {
        self.node_faults.entry(node).or_default().push(fault);
    }

    fn detect_target(&mut self, record: usize, expect: Expect, window: Window, node: u32) {
        if expect == Expect::Detect {
            self.detect.push(DetectRule {
                record,
                window,
                affected: Affected::Target(node),
            });
        }
    }

    /// A Poisson process of faults per node (swarm testing).
    fn add_random(
        &mut self,
        i: usize,
        r: &RandomFaults,
        names: &[String],
        end: Nanos,
        streams: &Streams,
    ) {
        if r.rate_per_node_hour <= 0.0 {
            return;
        }
        // Mean seconds between faults on one node.
        let mean_gap_s = 3600.0 / r.rate_per_node_hour;
        if !mean_gap_s.is_finite() {
            return;
        }
        let lengths = r.duration.as_ref().map(Sampler::new);
        for (n, name) in names.iter().enumerate() {
            let mut rng = streams.random_fault(i, n);
            let mut t = 0.0f64;
            loop {
                t += exponential(&mut rng, mean_gap_s);
                let start = Nanos::from_nanos_f64(t * 1e9);
                if start >= end {
                    break;
                }
                let length = lengths
                    .as_ref()
                    .map_or(DEFAULT_RANDOM_FAULT_DURATION, |s| s.sample(&mut rng));
                let fault = Fault {
                    kind: Some(r.kind),
                    node: matches!(
                        r.kind,
                        FaultKind::Crash
                            | FaultKind::Pause
                            | FaultKind::Backpressure
                            | FaultKind::Degrade
                    )
                    .then(|| name.clone()),
                    from: matches!(r.kind, FaultKind::SlowLink | FaultKind::Loss)
                        .then(|| name.clone()),
                    direction: Some(Direction::OneWay),
                    duration: Some(length),
                    extra_latency: r.extra_latency,
                    probability: r.probability,
                    slowdown: r.slowdown,
                    capacity: r.capacity,
                    expect: r.expect,
                    ..Fault::default()
                };
                let index = |name: &Option<String>| -> Option<u32> {
                    let name = name.as_deref()?;
                    names.iter().position(|x| x == name).map(|i| i as u32)
                };
                let stop = (start + length).min(end);
                self.add(&fault, start, stop, &index, names, &mut rng);
                // A crash in a Poisson stream lasts `length`, then restarts.
            }
        }
    }

    /// Resolves each node's crashes, restarts and pauses together (see
    /// [`outages`]): the scheduled actions become one clean sequence per
    /// node (an action that stays in it keeps its place; the rest go, and
    /// the ends that overlaps moved are added), in time order (ties in
    /// schedule order); then the downtimes and the ground truth.
    fn finish(&mut self, end: Nanos) {
        let mut canonical: Vec<(Nanos, Action)> = Vec::new();
        let mut outages = BTreeMap::new();
        for (&node, faults) in &self.node_faults {
            let o = Outages::resolve(faults, end);
            for &(w, restarts) in &o.down {
                canonical.push((w.start, Action::Crash { node }));
                if restarts {
                    canonical.push((w.end, Action::Restart { node }));
                }
                self.downtime.push((node, w));
            }
            for &at in &o.instant_restarts {
                canonical.push((at, Action::Restart { node }));
            }
            for &(w, planned) in &o.paused {
                canonical.push((w.start, Action::PauseStart { node, planned }));
                canonical.push((w.end, Action::PauseEnd { node }));
            }
            outages.insert(node, o);
        }
        // Where each canonical action stands, by its key, first ones first:
        // a scheduled action takes the first unused one of its key.
        let mut places: BTreeMap<OutageKey, VecDeque<usize>> = BTreeMap::new();
        for (i, &(t, action)) in canonical.iter().enumerate() {
            if let Some(key) = OutageKey::of(t, action) {
                places.entry(key).or_default().push_back(i);
            }
        }
        let mut taken = vec![false; canonical.len()];
        let scheduled = std::mem::take(&mut self.actions);
        for (t, action) in scheduled {
            match OutageKey::of(t, action) {
                None => self.actions.push((t, action)),
                Some(key) => {
                    if let Some(i) = places.get_mut(&key).and_then(VecDeque::pop_front) {
                        taken[i] = true;
                        self.actions.push((t, action));
                    }
                }
            }
        }
        let canonical = canonical
            .into_iter()
            .zip(taken)
            .filter_map(|(action, taken)| (!taken).then_some(action));
        self.actions.extend(canonical);
        self.actions.sort_by_key(|(t, _)| *t);
        self.downtime.sort_by_key(|&(n, w)| (n, w.start));
        self.settle_truth(&outages);
    }
}

/// A crash, restart or pause action with its instant, as a key that orders
/// and compares (the other actions are not resolved per node).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum OutageKey {
    Crash(Nanos, u32),
    Restart(Nanos, u32),
    PauseStart(Nanos, u32, Option<Nanos>),
    PauseEnd(Nanos, u32),
}

impl OutageKey {
    fn of(at: Nanos, action: Action) -> Option<OutageKey> {
        Some(match action {
            Action::Crash { node } => OutageKey::Crash(at, node),
            Action::Restart { node } => OutageKey::Restart(at, node),
            Action::PauseStart { node, planned } => OutageKey::PauseStart(at, node, planned),
            Action::PauseEnd { node } => OutageKey::PauseEnd(at, node),
            _ => return None,
        })
    }
}

/// Alternating gaps and bursts with exponential lengths of the given means,
/// covering `window`.
fn bursts(window: Window, burst: Nanos, gap: Nanos, rng: &mut ChaCha8Rng) -> Vec<Window> {
    let mut out = Vec::new();
    let (burst_mean, gap_mean) = (burst.as_nanos_f64().max(1.0), gap.as_nanos_f64().max(1.0));
    let mut t = window.start;
    while t < window.end {
        t = t + Nanos::from_nanos_f64(exponential(rng, gap_mean));
        let b_end = (t + Nanos::from_nanos_f64(exponential(rng, burst_mean))).min(window.end);
        if t < b_end {
            out.push(Window {
                start: t,
                end: b_end,
            });
        }
        t = b_end.max(t + Nanos(1));
    }
    out
}

#[cfg(test)]
mod tests;
