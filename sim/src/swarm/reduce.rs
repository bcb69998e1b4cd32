//! The smaller scenarios one shrinking step may try (see [`super::shrink`]):
//! each function returns the candidates of one *unit* of one class of
//! step, most ambitious first, and every candidate keeps the property's
//! subject (its detector or judge, and distribution) and the nodes the
//! violation names. A candidate that is not a valid scenario is left out
//! by the caller.

use fdlab_protocol::Nanos;

use super::draw::{expect_for, on_grain, STRENGTH_STEPS};
use crate::scenario::{
    Fault, FaultKind, MonitorCount, Scenario, SignedNanos, Strength, SwarmSetup, Topology,
};

/// What a shrunk scenario must keep of the violation it reproduces.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Focus {
    /// The detector or judge that broke the property.
    pub subject: String,
    /// The placement distribution, for a split.
    pub distribution: Option<String>,
    /// The nodes the violation names (monitor, target), by name.
    pub nodes: Vec<String>,
    /// When the violation happened.
    pub at: Nanos,
}

/// Leave out every detector (a membership scenario: every judge) but the
/// subject, or else each other one; a placement scenario keeps only the
/// subject's distribution.
pub fn detectors(s: &Scenario, focus: &Focus) -> Vec<Scenario> {
    let mut out = Vec::new();
    if s.is_membership() {
        let judges = s.judge_names();
        if judges.len() > 1 && judges.contains(&focus.subject) {
            let mut c = s.clone();
            c.detectors.retain(|d| d.name == focus.subject);
            if let Some(cm) = c.membership.as_mut() {
                cm.judges = Some(vec![focus.subject.clone()]);
            }
            out.push(c);
        }
        return out;
    }
    if s.detectors.len() > 1 && s.detectors.iter().any(|d| d.name == focus.subject) {
        let mut only = s.clone();
        only.detectors.retain(|d| d.name == focus.subject);
        out.push(only);
        for (i, d) in s.detectors.iter().enumerate() {
            if d.name != focus.subject {
                let mut c = s.clone();
                c.detectors.remove(i);
                out.push(c);
            }
        }
    }
    if let (Some(p), Some(dist)) = (&s.placement, &focus.distribution) {
        if p.distributions.as_ref().is_none_or(|d| d.len() > 1) {
            let mut c = s.clone();
            if let Some(cp) = c.placement.as_mut() {
                cp.distributions = Some(vec![dist.clone()]);
            }
            out.push(c);
        }
    }
    out
}

/// Delta debugging over the faults (Zeller & Hildebrandt, "Simplifying and
/// Isolating Failure-Inducing Input", IEEE TSE 28(2), 2002; ddmin with its
/// complements): drop them all, then each half, each quarter, ... each one.
pub fn faults(s: &Scenario) -> Vec<Scenario> {
    let n = s.faults.len();
    let mut out = Vec::new();
    if n == 0 {
        return out;
    }
    let dropped = |from: usize, to: usize| {
        let mut c = s.clone();
        c.faults.drain(from..to);
        c
    };
    out.push(dropped(0, n));
    let mut chunk = n / 2;
    let mut last = n;
    while chunk >= 1 {
        if chunk < last {
            let mut from = 0;
            while from < n {
                out.push(dropped(from, (from + chunk).min(n)));
                from += chunk;
            }
            last = chunk;
        }
        chunk /= 2;
    }
    out
}

/// A shortened run ends on a whole number of these.
pub const RUN_END_STEP: Nanos = Nanos::from_secs(1);

/// The run ends soon after the violation (and after the last fault's
/// start): at the next whole [`RUN_END_STEP`] past both, then halfway from
/// there to its end.
pub fn run_end(s: &Scenario, focus: &Focus) -> Vec<Scenario> {
    let second = RUN_END_STEP.as_nanos();
    let last_start = s
        .faults
        .iter()
        .filter_map(|f| f.at)
        .max()
        .unwrap_or_default();
    let need = focus.at.max(last_start).as_nanos() / second * second + second;
    let mut out = Vec::new();
    for end in [need, (need + s.duration.as_nanos()) / 2 / second * second] {
        if end < s.duration.as_nanos()
            && !out.iter().any(|c: &Scenario| c.duration.as_nanos() == end)
        {
            let mut c = s.clone();
            c.duration = Nanos(end);
            out.push(c);
        }
    }
    out
}

/// Fault `i` shorter: its kind's shortest, then half as long (its `expect`
/// follows the rule the swarm drew it with).
pub fn shorter(s: &Scenario, setup: &SwarmSetup, i: usize) -> Vec<Scenario> {
    let f = &s.faults[i];
    let (Some(kind), Some(d)) = (f.kind, f.duration) else {
        return Vec::new();
    };
    let Some([lo, _]) = setup.bounds(kind).duration else {
        return Vec::new();
    };
    steps_down(d, lo)
        .into_iter()
        .map(|d| {
            let mut c = s.clone();
            c.faults[i].duration = Some(d);
            c.faults[i].expect = Some(expect_for(kind, Some(d), setup.detect_from()));
            c
        })
        .collect()
}

/// Fault `i` milder: its kind's least strength, then halfway there (a
/// capacity rises toward its most, every other strength falls); a
/// partition's named side narrower, by halves.
pub fn milder(s: &Scenario, setup: &SwarmSetup, i: usize) -> Vec<Scenario> {
    let f = &s.faults[i];
    let Some(kind) = f.kind else {
        return Vec::new();
    };
    let with = |edit: &dyn Fn(&mut Fault)| {
        let mut c = s.clone();
        edit(&mut c.faults[i]);
        c
    };
    let thousandths = |x: f64| libm::round(x * STRENGTH_STEPS) / STRENGTH_STEPS;
    if let (FaultKind::Partition, Some(side)) = (kind, &f.nodes) {
        // A narrower side: its first half, then its second.
        let half = side.len() / 2;
        if half == 0 {
            return Vec::new();
        }
        return [&side[..half], &side[half..]]
            .into_iter()
            .map(|part| with(&|g| g.nodes = Some(part.to_vec())))
            .collect();
    }
    match setup.bounds(kind).strength {
        Some(Strength::ExtraLatency([lo, _])) => f.extra_latency.map_or(Vec::new(), |x| {
            steps_down(x, lo)
                .into_iter()
                .map(|x| with(&|g| g.extra_latency = Some(x)))
                .collect()
        }),
        Some(Strength::Slowdown([lo, _])) => f.slowdown.map_or(Vec::new(), |x| {
            steps_down(x, lo)
                .into_iter()
                .map(|x| with(&|g| g.slowdown = Some(x)))
                .collect()
        }),
        Some(Strength::Offset([lo, _])) => f.offset.map_or(Vec::new(), |o| {
            let sign = if o.0 < 0 { -1 } else { 1 };
            steps_down(Nanos(o.0.unsigned_abs()), lo)
                .into_iter()
                .map(|x| with(&|g| g.offset = Some(SignedNanos(sign * x.as_nanos() as i64))))
                .collect()
        }),
        Some(Strength::Probability([lo, _])) => f.probability.map_or(Vec::new(), |p| {
            distinct([lo, thousandths(p / 2.0).max(lo)], |x| x < p)
                .into_iter()
                .map(|x| with(&|g| g.probability = Some(x)))
                .collect()
        }),
        Some(Strength::Capacity([_, hi])) => f.capacity.map_or(Vec::new(), |c| {
            distinct([hi, thousandths((c + hi) / 2.0).min(hi)], |x| x > c)
                .into_iter()
                .map(|x| with(&|g| g.capacity = Some(x)))
                .collect()
        }),
        None => Vec::new(),
    }
}

/// Fault `i` earlier: at the earliest start the swarm draws, then halfway
/// there.
pub fn earlier(s: &Scenario, window: [Nanos; 2], i: usize) -> Vec<Scenario> {
    let Some(at) = s.faults[i].at else {
        return Vec::new();
    };
    let lo = window[0];
    let mut out: Vec<Scenario> = Vec::new();
    for t in [lo, on_grain(lo + Nanos((at - lo).as_nanos() / 2), [lo, at])] {
        if t < at && !out.iter().any(|c| c.faults[i].at == Some(t)) {
            let mut c = s.clone();
            c.faults[i].at = Some(t);
            out.push(c);
        }
    }
    out
}

/// The values of `steps` that `keep` keeps, each once, in order.
fn distinct(steps: [f64; 2], keep: impl Fn(f64) -> bool) -> Vec<f64> {
    let mut out: Vec<f64> = Vec::new();
    for x in steps {
        if keep(x) && !out.contains(&x) {
            out.push(x);
        }
    }
    out
}

/// `x` at `lo`, then halved (on the grain, not below `lo`): the values
/// below `x`, each once.
fn steps_down(x: Nanos, lo: Nanos) -> Vec<Nanos> {
    let half = on_grain(Nanos(x.as_nanos() / 2), [lo, x]);
    let mut out = Vec::new();
    for t in [lo, half] {
        if t < x && !out.contains(&t) {
            out.push(t);
        }
    }
    debug_assert!(out.iter().all(|&t| t >= lo && t < x));
    out
}

/// The node names a fault names.
fn fault_nodes(f: &Fault) -> impl Iterator<Item = &String> {
    f.node
        .iter()
        .chain(f.nodes.iter().flatten())
        .chain(f.from.iter())
        .chain(f.to.iter())
}

/// `s` with every node renamed by `map` (faults and clocks; a clock of a
/// node `map` drops is dropped).
fn renamed(s: &Scenario, map: &dyn Fn(&str) -> Option<String>) -> Scenario {
    let mut c = s.clone();
    let name = |n: &mut String| {
        if let Some(m) = map(n) {
            *n = m;
        }
    };
    for f in &mut c.faults {
        f.node.iter_mut().for_each(name);
        f.nodes.iter_mut().flatten().for_each(name);
        f.from.iter_mut().for_each(name);
        f.to.iter_mut().for_each(name);
    }
    c.clocks.retain_mut(|clock| match map(&clock.node) {
        Some(m) => {
            clock.node = m;
            true
        }
        None => false,
    });
    c
}

/// Fewer nodes: in a mesh (and a membership cluster), the nodes the faults
/// and the violation name renumbered from `n0` with the rest left out,
/// then every node after the last one named, then the last node; in a
/// placement scenario, the clients after the last one named; in a
/// dataflow, the same per layer (stages `s<l>.<i>`), and a last layer
/// nobody names.
pub fn nodes(s: &Scenario, focus: &Focus) -> Vec<Scenario> {
    let named: Vec<&String> = s
        .faults
        .iter()
        .flat_map(fault_nodes)
        .chain(&focus.nodes)
        .collect();
    let mut out = Vec::new();
    match &s.topology {
        Topology::Mesh {
            nodes,
            monitors_per_node,
        } => {
            let index = |n: &str| n.strip_prefix('n').and_then(|i| i.parse::<u32>().ok());
            let mut used: Vec<u32> = named.iter().filter_map(|n| index(n)).collect();
            used.sort_unstable();
            used.dedup();
            let least = match &s.placement {
                Some(p) => p.servers + 1,
                None => 2,
            };
            let sized = |c: &mut Scenario, n: u32| {
                let count = match monitors_per_node {
                    MonitorCount::Count(k) => MonitorCount::Count((*k).min(n - 1)),
                    MonitorCount::All => MonitorCount::All,
                };
                c.topology = Topology::Mesh {
                    nodes: n,
                    monitors_per_node: count,
                };
                c.clocks
                    .retain(|clock| index(&clock.node).is_some_and(|i| i < n));
            };
            let compact = (used.len() as u32).max(least);
            let highest = used.last().map_or(0, |&i| i + 1);
            if s.placement.is_none() && compact < *nodes && highest > compact {
                let map = |n: &str| {
                    let i = index(n)?;
                    used.iter().position(|&u| u == i).map(|k| format!("n{k}"))
                };
                let mut c = renamed(s, &map);
                sized(&mut c, compact);
                out.push(c);
            }
            let trailing = highest.max(least);
            for n in [trailing, nodes - 1] {
                if n >= trailing
                    && n < *nodes
                    && !out.iter().any(|c| c.topology == s.topology_of(n))
                {
                    let mut c = s.clone();
                    sized(&mut c, n);
                    out.push(c);
                }
            }
        }
        Topology::Dataflow { layers } => {
            let stage = |n: &str| {
                let (l, i) = n.strip_prefix('s')?.split_once('.')?;
                Some((l.parse::<usize>().ok()?, i.parse::<u32>().ok()?))
            };
            for (l, &count) in layers.iter().enumerate() {
                let mut used: Vec<u32> = named
                    .iter()
                    .filter_map(|n| stage(n))
                    .filter(|&(layer, _)| layer == l)
                    .map(|(_, i)| i)
                    .collect();
                used.sort_unstable();
                used.dedup();
                let with_layer = |c: &mut Scenario, n: u32| {
                    let mut sizes = layers.clone();
                    sizes[l] = n;
                    c.topology = Topology::Dataflow { layers: sizes };
                    c.clocks.retain(|clock| {
                        stage(&clock.node).is_none_or(|(cl, ci)| cl != l || ci < n)
                    });
                };
                let compact = (used.len() as u32).max(1);
                let highest = used.last().map_or(0, |&i| i + 1);
                if compact < count && highest > compact {
                    let map = |n: &str| {
                        let (layer, i) = stage(n)?;
                        if layer != l {
                            return Some(n.to_string());
                        }
                        used.iter()
                            .position(|&u| u == i)
                            .map(|k| format!("s{l}.{k}"))
                    };
                    let mut c = renamed(s, &map);
                    with_layer(&mut c, compact);
                    out.push(c);
                }
                let trailing = highest.max(1);
                if trailing < count {
                    let mut c = s.clone();
                    with_layer(&mut c, trailing);
                    out.push(c);
                }
            }
            let last = layers.len() - 1;
            if layers.len() > 2
                && !named
                    .iter()
                    .any(|n| stage(n).is_some_and(|(l, _)| l == last))
            {
                let mut c = s.clone();
                c.topology = Topology::Dataflow {
                    layers: layers[..last].to_vec(),
                };
                c.clocks
                    .retain(|clock| stage(&clock.node).is_none_or(|(l, _)| l != last));
                out.push(c);
            }
        }
    }
    out
}

impl Scenario {
    /// This scenario's mesh topology with `n` nodes (the same
    /// `monitors_per_node`, at most `n - 1`).
    fn topology_of(&self, n: u32) -> Topology {
        match &self.topology {
            Topology::Mesh {
                monitors_per_node, ..
            } => Topology::Mesh {
                nodes: n,
                monitors_per_node: match monitors_per_node {
                    MonitorCount::Count(k) => MonitorCount::Count((*k).min(n.saturating_sub(1))),
                    MonitorCount::All => MonitorCount::All,
                },
            },
            other => other.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::DetectorSetup;
    use fdlab_protocol::decay::DataflowDecayConfig;
    use fdlab_protocol::DetectorConfig;

    fn scenario(topology: Topology, fault_node: &str) -> Scenario {
        Scenario {
            detectors: vec![DetectorSetup {
                name: "d".into(),
                config: DetectorConfig::DataflowDecay(DataflowDecayConfig::default()),
            }],
            faults: vec![Fault {
                kind: Some(FaultKind::Pause),
                node: Some(fault_node.into()),
                at: Some(Nanos::from_secs(10)),
                duration: Some(Nanos::from_secs(5)),
                ..Fault::default()
            }],
            ..Scenario::new("r", topology, Nanos::from_secs(60))
        }
    }

    fn focus(nodes: &[&str]) -> Focus {
        Focus {
            subject: "d".into(),
            distribution: None,
            nodes: nodes.iter().map(|n| n.to_string()).collect(),
            at: Nanos::from_secs(20),
        }
    }

    #[test]
    fn a_partition_side_narrows_by_halves() {
        let topology = Topology::Mesh {
            nodes: 8,
            monitors_per_node: MonitorCount::All,
        };
        let mut s = scenario(topology, "n0");
        let f = &mut s.faults[0];
        f.kind = Some(FaultKind::Partition);
        f.shape = Some(crate::scenario::PartitionShape::Halves);
        f.node = None;
        f.nodes = Some(["n1", "n4", "n6"].map(String::from).to_vec());
        let sides: Vec<Vec<String>> = milder(&s, &SwarmSetup::default(), 0)
            .into_iter()
            .map(|c| c.faults[0].nodes.clone().unwrap())
            .collect();
        assert_eq!(sides, [vec!["n1"], vec!["n4", "n6"]]);
        s.faults[0].nodes = Some(vec!["n1".into()]);
        assert!(milder(&s, &SwarmSetup::default(), 0).is_empty());
    }

    #[test]
    fn a_mesh_keeps_the_named_nodes_renumbered_then_the_first_ones() {
        let s = scenario(
            Topology::Mesh {
                nodes: 8,
                monitors_per_node: MonitorCount::Count(5),
            },
            "n5",
        );
        let c = nodes(&s, &focus(&["n2", "n5"]));
        let sizes: Vec<Topology> = c.iter().map(|c| c.topology.clone()).collect();
        let mesh = |n, k| Topology::Mesh {
            nodes: n,
            monitors_per_node: MonitorCount::Count(k),
        };
        assert_eq!(sizes, [mesh(2, 1), mesh(6, 5), mesh(7, 5)]);
        assert_eq!(c[0].faults[0].node.as_deref(), Some("n1"));
        assert_eq!(c[1].faults[0].node.as_deref(), Some("n5"));
    }

    #[test]
    fn a_dataflow_drops_stages_per_layer_and_an_unnamed_last_layer() {
        let s = scenario(
            Topology::Dataflow {
                layers: vec![2, 3, 2, 2],
            },
            "s1.2",
        );
        let c = nodes(&s, &focus(&["s2.1", "s1.2"]));
        let layers: Vec<Topology> = c.iter().map(|c| c.topology.clone()).collect();
        let flow = |l: &[u32]| Topology::Dataflow { layers: l.to_vec() };
        assert_eq!(
            layers,
            [
                flow(&[1, 3, 2, 2]),
                flow(&[2, 1, 2, 2]),
                flow(&[2, 3, 1, 2]),
                flow(&[2, 3, 2, 1]),
                flow(&[2, 3, 2]),
            ]
        );
        assert_eq!(c[1].faults[0].node.as_deref(), Some("s1.0"));
    }

    #[test]
    fn faults_go_all_then_by_halves_to_single_ones() {
        let mut s = scenario(Topology::Dataflow { layers: vec![2, 2] }, "s1.0");
        s.faults = (0..5u64)
            .map(|i| Fault {
                at: Some(Nanos::from_secs(10 + i)),
                ..s.faults[0].clone()
            })
            .collect();
        let left: Vec<usize> = faults(&s).iter().map(|c| c.faults.len()).collect();
        // All; halves of 2 (2, 2, 1 left out); then each one.
        assert_eq!(left, [0, 3, 3, 4, 4, 4, 4, 4, 4]);
        let mild = shorter(&s, &SwarmSetup::default(), 0);
        let d: Vec<Nanos> = mild.iter().map(|c| c.faults[0].duration.unwrap()).collect();
        assert_eq!(d, [Nanos::from_millis(100), Nanos::from_millis(2_500)]);
    }
}
