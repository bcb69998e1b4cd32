//! Drawing one run's fault schedule, swarm-style (Groce, Zhang, Eide, Chen
//! & Regehr, "Swarm Testing", ISSTA 2012): the run first enables each fault
//! kind of the scenario with that kind's `rate` (at least one kind), then
//! draws between `swarm.faults` fewest and most faults, each of an enabled
//! kind, starting uniformly in `swarm.start`, on a uniformly drawn node or
//! monitored link, lasting a log-uniform draw within its kind's duration
//! bounds (faults from 100 ms to 40 s are as likely to be short as long),
//! with a strength drawn within its bounds. Instants and durations are
//! whole milliseconds ([`GRAIN`]), probabilities and capacities thousandths,
//! so that the schedule reads back exactly from a scenario file.
//!
//! Everything comes from one stream of the run's seed
//! (`Streams::swarm_schedule`), in a fixed order: the schedule is a function
//! of the seed and the scenario alone, and the run's own streams are not
//! touched, so the same faults written as `[[faults]]` replay the same run.

use fdlab_protocol::Nanos;
use rand::RngExt;
use rand_chacha::ChaCha8Rng;

use crate::rng::Streams;
use crate::scenario::{
    Direction, Expect, Fault, FaultKind, PartitionMode, PartitionShape, Scenario, SignedNanos,
    Strength, SwarmSetup, Topology, GRAIN,
};

/// Probabilities and capacities are drawn to this many parts of one.
pub const STRENGTH_STEPS: f64 = 1_000.0;

/// One run's schedule.
#[derive(Clone, Debug, PartialEq)]
pub struct Drawn {
    /// The kinds this run enabled, in [`FaultKind::ALL`] order.
    pub enabled: Vec<FaultKind>,
    /// The faults, by start (ties in draw order); every one has `at`, its
    /// `expect` and, but for restart and clock faults, a `duration`.
    pub faults: Vec<Fault>,
}

/// The `expect` of a drawn fault: a crash must be detected; a pause or a
/// partition that lasts at least `detect_from` too (a silent node is
/// declared after some time, and a swarm must say after how long); every
/// other fault must be tolerated.
pub fn expect_for(kind: FaultKind, duration: Option<Nanos>, detect_from: Nanos) -> Expect {
    match kind {
        FaultKind::Crash => Expect::Detect,
        FaultKind::Pause | FaultKind::Partition if duration.is_some_and(|d| d >= detect_from) => {
            Expect::Detect
        }
        _ => Expect::Tolerate,
    }
}

/// The kinds a swarm over `scenario` with `setup` draws from:
/// `swarm.kinds` (in [`FaultKind::ALL`] order) or every kind its topology
/// takes.
pub fn kinds(scenario: &Scenario, setup: &SwarmSetup) -> Vec<FaultKind> {
    let allowed = scenario.swarm_kinds();
    match setup.kinds.as_ref() {
        Some(listed) => allowed.into_iter().filter(|k| listed.contains(k)).collect(),
        None => allowed,
    }
}

/// The schedule of the run of `scenario` with `seed` under `setup` (see
/// the module docs).
pub fn draw(scenario: &Scenario, setup: &SwarmSetup, seed: u64) -> Drawn {
    let mut rng = Streams::new(seed).swarm_schedule();
    let kinds = kinds(scenario, setup);
    let mut enabled: Vec<FaultKind> = kinds
        .iter()
        .copied()
        .filter(|&k| {
            let rate = setup.bounds(k).rate;
            rng.random::<f64>() < rate
        })
        .collect();
    if enabled.is_empty() {
        // Groce et al. omit each feature with probability one half, but a
        // run with none would test nothing: take one kind that can be on.
        let possible: Vec<FaultKind> = kinds
            .iter()
            .copied()
            .filter(|&k| setup.bounds(k).rate > 0.0)
            .collect();
        if !possible.is_empty() {
            enabled.push(possible[rng.random_range(0..possible.len())]);
        }
    }
    let mut faults = Vec::new();
    if !enabled.is_empty() {
        let [fewest, most] = setup.faults_per_run();
        let count = rng.random_range(fewest..=most);
        let window = setup.start_window(scenario.duration);
        for _ in 0..count {
            let kind = enabled[rng.random_range(0..enabled.len())];
            faults.push(fault(scenario, setup, kind, window, &mut rng));
        }
    }
    faults.sort_by_key(|f| f.at);
    debug_assert!(faults.iter().all(|f| f.at.is_some()));
    Drawn { enabled, faults }
}

/// One fault of `kind`, drawn in a fixed order: start, target, duration,
/// strength, then direction and mode, then a partition's shape and sides
/// or whether loss comes in bursts (and their lengths).
fn fault(
    scenario: &Scenario,
    setup: &SwarmSetup,
    kind: FaultKind,
    window: [Nanos; 2],
    rng: &mut ChaCha8Rng,
) -> Fault {
    let bounds = setup.bounds(kind);
    let start = on_grain(
        Nanos(rng.random_range(window[0].as_nanos()..=window[1].as_nanos())),
        window,
    );
    let names = scenario.topology.node_names();
    // The node drawn for a node fault, by index.
    let mut node = None;
    let mut f = Fault {
        kind: Some(kind),
        at: Some(start),
        ..Fault::default()
    };
    match kind {
        FaultKind::SlowLink | FaultKind::Loss => {
            let (from, to) = link(scenario, rng);
            f.from = Some(names[from as usize].clone());
            f.to = Some(names[to as usize].clone());
        }
        FaultKind::Backpressure => f.node = Some(names[stage(scenario, rng) as usize].clone()),
        FaultKind::TableOutage | FaultKind::SlowTable => {}
        _ => {
            let i = rng.random_range(0..names.len());
            f.node = Some(names[i].clone());
            node = Some(i as u32);
        }
    }
    f.duration = bounds.duration.map(|d| log_uniform(rng, d));
    match bounds.strength {
        Some(Strength::ExtraLatency(b)) => f.extra_latency = Some(log_uniform(rng, b)),
        Some(Strength::Slowdown(b)) => f.slowdown = Some(log_uniform(rng, b)),
        Some(Strength::Probability(b)) => f.probability = Some(uniform(rng, b)),
        Some(Strength::Capacity(b)) => f.capacity = Some(uniform(rng, b)),
        Some(Strength::Offset(b)) => {
            let size = log_uniform(rng, b).as_nanos() as i64;
            f.offset = Some(SignedNanos(if rng.random::<bool>() { size } else { -size }));
        }
        None => {}
    }
    if matches!(
        kind,
        FaultKind::Partition | FaultKind::SlowLink | FaultKind::Loss
    ) && rng.random::<bool>()
    {
        f.direction = Some(Direction::OneWay);
    }
    if kind == FaultKind::Partition && rng.random::<bool>() {
        f.mode = Some(PartitionMode::Hold);
    }
    if let (FaultKind::Partition, Some(node)) = (kind, node) {
        shape(&mut f, setup, &names, node, rng);
    }
    if kind == FaultKind::Loss {
        let b = setup.loss_bursts();
        if rng.random::<f64>() < b.share {
            f.burst = Some(log_uniform(rng, b.burst));
            f.gap = Some(log_uniform(rng, b.gap));
        }
    }
    f.expect = Some(expect_for(kind, f.duration, setup.detect_from()));
    f
}

/// A drawn partition's shape, among [`SwarmSetup::partition_shapes`]:
/// `isolate` keeps the node drawn (`node`, by index); `halves` puts it on a named side of
/// more nodes, drawn uniformly; `bridge` makes it the bridge and names a
/// side among the others. A named side is a strict minority (of the
/// nodes, or of those but the bridge), so that it is the side cut off:
/// what a `no_live_declared_dead` exemption names (`FaultRecord::held`),
/// and what a one-way partition silences. Its size is uniform from one
/// node to the largest minority.
fn shape(f: &mut Fault, setup: &SwarmSetup, names: &[String], node: u32, rng: &mut ChaCha8Rng) {
    let n = names.len() as u32;
    let shapes = setup.partition_shapes(n);
    let shape = shapes[rng.random_range(0..shapes.len())];
    let side = match shape {
        PartitionShape::Isolate => return,
        PartitionShape::Halves => {
            f.node = None;
            minority(rng, n, Some(node), None)
        }
        PartitionShape::Bridge => minority(rng, n, None, Some(node)),
    };
    f.shape = Some(shape);
    f.nodes = Some(side.iter().map(|&i| names[i as usize].clone()).collect());
}

/// A strict minority of the `n` nodes but `bridge`, of uniform size from
/// one, with `first` on it and the rest drawn uniformly (a partial
/// Fisher-Yates shuffle); in index order.
fn minority(rng: &mut ChaCha8Rng, n: u32, first: Option<u32>, bridge: Option<u32>) -> Vec<u32> {
    let others = n - u32::from(bridge.is_some());
    let largest = (others - 1) / 2;
    debug_assert!(largest >= 1, "{n} nodes are too few for a minority side");
    let size = rng.random_range(1..=largest) as usize;
    let mut pool: Vec<u32> = (0..n)
        .filter(|&i| Some(i) != first && Some(i) != bridge)
        .collect();
    let picks = size - usize::from(first.is_some());
    for t in 0..picks {
        let j = rng.random_range(t..pool.len());
        pool.swap(t, j);
    }
    let mut side: Vec<u32> = first
        .into_iter()
        .chain(pool[..picks].iter().copied())
        .collect();
    side.sort_unstable();
    side
}

/// A monitored link, as (sender, receiver) node indices: in a dataflow, an
/// upstream and one of its downstreams; in a placement scenario, a server
/// and a client; otherwise any two nodes.
fn link(scenario: &Scenario, rng: &mut ChaCha8Rng) -> (u32, u32) {
    match (&scenario.topology, &scenario.placement) {
        (Topology::Dataflow { layers }, _) => {
            let pairs: u64 = layers
                .windows(2)
                .map(|w| u64::from(w[0]) * u64::from(w[1]))
                .sum();
            let mut k = rng.random_range(0..pairs);
            let mut first = 0u32;
            for w in layers.windows(2) {
                let here = u64::from(w[0]) * u64::from(w[1]);
                if k < here {
                    let up = first + (k / u64::from(w[1])) as u32;
                    let down = first + w[0] + (k % u64::from(w[1])) as u32;
                    return (up, down);
                }
                k -= here;
                first += w[0];
            }
            unreachable!("k is below the number of data links")
        }
        (Topology::Mesh { nodes, .. }, Some(p)) => {
            let server = rng.random_range(0..p.servers);
            let client = rng.random_range(p.servers..*nodes);
            (server, client)
        }
        (Topology::Mesh { nodes, .. }, None) => {
            let from = rng.random_range(0..*nodes);
            let other = rng.random_range(0..nodes - 1);
            (from, if other >= from { other + 1 } else { other })
        }
    }
}

/// A stage that serves frames (not a source), for a backpressure fault.
fn stage(scenario: &Scenario, rng: &mut ChaCha8Rng) -> u32 {
    match &scenario.topology {
        Topology::Dataflow { layers } => {
            let sources = layers[0];
            let total: u32 = layers.iter().sum();
            rng.random_range(sources..total)
        }
        Topology::Mesh { nodes, .. } => rng.random_range(0..*nodes),
    }
}

/// `t` down to the grain, kept within `bounds`.
pub fn on_grain(t: Nanos, bounds: [Nanos; 2]) -> Nanos {
    let g = GRAIN.as_nanos();
    Nanos(t.as_nanos() / g * g).clamp(bounds[0], bounds[1])
}

/// A log-uniform draw in `bounds`, rounded to the grain.
fn log_uniform(rng: &mut ChaCha8Rng, bounds: [Nanos; 2]) -> Nanos {
    let [lo, hi] = bounds;
    let u: f64 = rng.random();
    if lo >= hi {
        return lo;
    }
    let (a, b) = (libm::log(lo.as_nanos_f64()), libm::log(hi.as_nanos_f64()));
    let x = libm::exp(a + u * (b - a));
    let g = GRAIN.as_nanos_f64();
    Nanos::from_nanos_f64(libm::round(x / g) * g).clamp(lo, hi)
}

/// A uniform draw in `bounds`, rounded to thousandths.
fn uniform(rng: &mut ChaCha8Rng, bounds: [f64; 2]) -> f64 {
    let [lo, hi] = bounds;
    let u: f64 = rng.random();
    let x = lo + u * (hi - lo);
    (libm::round(x * STRENGTH_STEPS) / STRENGTH_STEPS).clamp(lo, hi)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::DetectorSetup;
    use crate::valid::ValidScenario;
    use fdlab_protocol::decay::DataflowDecayConfig;
    use fdlab_protocol::DetectorConfig;
    use proptest::prelude::*;
    use std::collections::BTreeSet;

    fn pipeline() -> Scenario {
        let topology = Topology::Dataflow {
            layers: vec![2, 3, 1],
        };
        Scenario {
            detectors: vec![DetectorSetup {
                name: "decay".into(),
                config: DetectorConfig::DataflowDecay(DataflowDecayConfig::default()),
            }],
            ..Scenario::new("p", topology, Nanos::from_secs(120))
        }
    }

    #[test]
    fn long_silences_are_detected_and_the_rest_tolerated() {
        let from = Nanos::from_secs(10);
        let d = |s| Some(Nanos::from_secs(s));
        assert_eq!(expect_for(FaultKind::Crash, d(1), from), Expect::Detect);
        assert_eq!(expect_for(FaultKind::Pause, d(10), from), Expect::Detect);
        assert_eq!(expect_for(FaultKind::Pause, d(9), from), Expect::Tolerate);
        assert_eq!(
            expect_for(FaultKind::Partition, d(30), from),
            Expect::Detect
        );
        assert_eq!(expect_for(FaultKind::Loss, d(30), from), Expect::Tolerate);
        assert_eq!(expect_for(FaultKind::Clock, None, from), Expect::Tolerate);
    }

    #[test]
    fn links_are_data_links_of_a_dataflow() {
        let s = pipeline();
        let mut rng = Streams::new(3).swarm_schedule();
        let mut seen = std::collections::BTreeSet::new();
        for _ in 0..2_000 {
            seen.insert(link(&s, &mut rng));
        }
        // Layers [2, 3, 1]: s0.* -> s1.* (6 links), s1.* -> s2.0 (3 links).
        let expected: std::collections::BTreeSet<(u32, u32)> = (0..2)
            .flat_map(|u| (2..5).map(move |d| (u, d)))
            .chain((2..5).map(|u| (u, 5)))
            .collect();
        assert_eq!(seen, expected);
    }

    /// The kinds of partition and loss each run draws, over many seeds.
    fn shapes_and_bursts(s: &Scenario, swarm: &SwarmSetup) -> (BTreeSet<String>, [u32; 2]) {
        let (mut shapes, mut loss) = (BTreeSet::new(), [0u32; 2]);
        for seed in 0..300 {
            for f in draw(s, swarm, seed).faults {
                match f.kind.unwrap() {
                    FaultKind::Partition => {
                        shapes.insert(f.shape.unwrap_or_default().name().to_string());
                    }
                    FaultKind::Loss => loss[usize::from(f.burst.is_some())] += 1,
                    _ => {}
                }
            }
        }
        (shapes, loss)
    }

    #[test]
    fn every_partition_shape_and_both_loss_models_are_drawn() {
        let mut swarm = SwarmSetup {
            kinds: Some(vec![FaultKind::Partition, FaultKind::Loss]),
            ..SwarmSetup::default()
        };
        let (shapes, loss) = shapes_and_bursts(&pipeline(), &swarm);
        assert_eq!(
            shapes,
            ["bridge", "halves", "isolate"].map(String::from).into()
        );
        assert!(loss[0] > 50 && loss[1] > 50, "{loss:?}");
        // As the scenario says: one shape; no bursts.
        swarm.partition = Some(crate::scenario::KindBounds {
            shapes: Some(vec![PartitionShape::Halves]),
            ..Default::default()
        });
        swarm.loss = Some(crate::scenario::KindBounds {
            bursty: Some(0.0),
            ..Default::default()
        });
        let (shapes, loss) = shapes_and_bursts(&pipeline(), &swarm);
        assert_eq!(shapes, ["halves".to_string()].into());
        assert_eq!(loss[1], 0);
        // Too few nodes for a minority side: isolate instead.
        let two = Scenario::new(
            "two",
            Topology::Mesh {
                nodes: 2,
                monitors_per_node: crate::scenario::MonitorCount::All,
            },
            Nanos::from_secs(120),
        );
        let (shapes, _) = shapes_and_bursts(&two, &swarm);
        assert_eq!(shapes, ["isolate".to_string()].into());
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        /// The same seed draws the same schedule, every drawn fault is
        /// within its kind's bounds and the start window, and the scenario
        /// with the schedule is valid.
        #[test]
        fn draws_are_deterministic_and_within_bounds(
            seed in any::<u64>(),
            fewest in 0u32..4,
            extra in 1u32..8,
            pause_min in 1u64..5_000,
            rate in 0.0f64..=1.0,
        ) {
            let mut swarm = SwarmSetup {
                faults: Some([fewest, fewest + extra]),
                start: Some([Nanos::from_secs(5), Nanos::from_secs(100)]),
                ..SwarmSetup::default()
            };
            swarm.pause = Some(crate::scenario::KindBounds {
                rate: Some(rate),
                duration: Some([Nanos::from_millis(pause_min), Nanos::from_secs(40)]),
                ..Default::default()
            });
            let s = pipeline();
            let a = draw(&s, &swarm, seed);
            prop_assert_eq!(&a, &draw(&s, &swarm, seed));
            prop_assert!(!a.enabled.is_empty());
            let n = a.faults.len() as u32;
            prop_assert!(n >= fewest && n <= fewest + extra, "{} faults", n);
            let mut last = Nanos::ZERO;
            for f in &a.faults {
                let kind = f.kind.unwrap();
                prop_assert!(a.enabled.contains(&kind));
                let at = f.at.unwrap();
                prop_assert!(at >= Nanos::from_secs(5) && at <= Nanos::from_secs(100));
                prop_assert!(at >= last);
                last = at;
                let b = swarm.bounds(kind);
                match (b.duration, f.duration) {
                    (Some([lo, hi]), Some(d)) => prop_assert!(d >= lo && d <= hi, "{:?}", f),
                    (None, None) => {}
                    other => prop_assert!(false, "{:?}", other),
                }
                match b.strength {
                    Some(Strength::ExtraLatency([lo, hi])) => {
                        let x = f.extra_latency.unwrap();
                        prop_assert!(x >= lo && x <= hi);
                    }
                    Some(Strength::Slowdown([lo, hi])) => {
                        let x = f.slowdown.unwrap();
                        prop_assert!(x >= lo && x <= hi);
                    }
                    Some(Strength::Probability([lo, hi])) => {
                        let x = f.probability.unwrap();
                        prop_assert!(x >= lo && x <= hi);
                    }
                    Some(Strength::Capacity([lo, hi])) => {
                        let x = f.capacity.unwrap();
                        prop_assert!(x >= lo && x <= hi);
                    }
                    Some(Strength::Offset([lo, hi])) => {
                        let x = Nanos(f.offset.unwrap().0.unsigned_abs());
                        prop_assert!(x >= lo && x <= hi);
                    }
                    None => {}
                }
                prop_assert_eq!(
                    f.expect,
                    Some(expect_for(kind, f.duration, swarm.detect_from()))
                );
                // A named side is a strict minority of the six stages (but
                // the bridge), without the bridge.
                if let Some(side) = &f.nodes {
                    let bridge = f.shape == Some(PartitionShape::Bridge);
                    prop_assert_eq!(bridge, f.node.is_some());
                    prop_assert!(side.len() * 2 < 6 - usize::from(bridge), "{:?}", f);
                    prop_assert!(f.node.as_ref().is_none_or(|b| !side.contains(b)));
                }
                let loss = swarm.loss_bursts();
                match (f.burst, f.gap) {
                    (Some(b), Some(g)) => {
                        prop_assert!(b >= loss.burst[0] && b <= loss.burst[1]);
                        prop_assert!(g >= loss.gap[0] && g <= loss.gap[1]);
                    }
                    (None, None) => {}
                    other => prop_assert!(false, "{:?}", other),
                }
            }
            let mut run = s.clone();
            run.faults = a.faults.clone();
            prop_assert!(ValidScenario::new(run).is_ok());
        }
    }
}
