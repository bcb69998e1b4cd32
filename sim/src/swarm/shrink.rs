//! Shrinking a schedule that violates a property to a smallest one that
//! still does, in the manner of delta debugging (Zeller & Hildebrandt,
//! "Simplifying and Isolating Failure-Inducing Input", IEEE TSE 28(2),
//! 2002) and of QuickCheck's shrinkers: the candidates of each step are
//! tried in a fixed order, the first that still violates *the same
//! property by the same detector or judge* on the same seed is kept, and
//! the passes repeat until one changes nothing (a fixpoint).
//!
//! A pass takes, in this order ([`Step`]): every detector (judge) but the
//! subject out, first (each later run is then cheaper); faults out, ddmin
//! style (all, halves, quarters, ... each one); nodes or stages nobody
//! names out; the run ended soon after the violation; then each fault in
//! turn shorter (to its kind's shortest, else by half), milder (its
//! strength likewise) and earlier (to the swarm's earliest start, else
//! halfway there). A step that succeeds is tried again on the same fault
//! before the next, so a long fault shrinks in a few runs.
//!
//! Determinism: the candidates and their order depend only on the current
//! scenario; [`Oracle::first_failing`] must return the *first* candidate in
//! order that fails (it may test them in parallel), so the result, and the
//! count of candidates a sequential search would have tried, are the same
//! for any number of threads.

use fdlab_protocol::Nanos;

use super::reduce::{self, Focus};
use crate::scenario::{Scenario, SwarmSetup};
use crate::valid::ValidScenario;

/// The classes of shrinking steps, in the order a pass takes them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    Detectors,
    Faults,
    Nodes,
    RunEnd,
    Shorter,
    Milder,
    Earlier,
}

impl Step {
    pub const PASS: [Step; 7] = [
        Step::Detectors,
        Step::Faults,
        Step::Nodes,
        Step::RunEnd,
        Step::Shorter,
        Step::Milder,
        Step::Earlier,
    ];
}

/// Runs candidates: what shrinking needs of the simulator and the checks.
pub trait Oracle<V> {
    /// The first of `candidates`, in order, whose run still violates the
    /// property being shrunk, with that violation.
    fn first_failing(&mut self, candidates: &[ValidScenario]) -> Option<(usize, V)>;
    /// Whether to stop now (a time budget ran out): the scenario so far is
    /// kept, and still violates the property.
    fn out_of_time(&self) -> bool {
        false
    }
}

/// A shrunk schedule.
#[derive(Clone, Debug)]
pub struct Shrunk<V> {
    pub scenario: ValidScenario,
    /// Its violation of the property.
    pub violation: V,
    /// Candidates a sequential search tried (runs simulated).
    pub tried: u64,
    /// Candidates kept: the steps that made it smaller.
    pub accepted: u64,
    /// False if the time budget stopped it before a fixpoint.
    pub complete: bool,
}

/// Shrinks `start` (whose run shows `violation`) under the bounds of
/// `setup`; `focus` says what a violation keeps (its subject, its nodes).
pub fn shrink<V>(
    start: ValidScenario,
    violation: V,
    setup: &SwarmSetup,
    focus: &dyn Fn(&V) -> Focus,
    oracle: &mut dyn Oracle<V>,
) -> Shrunk<V> {
    let window = setup.start_window(start.duration);
    let mut current = start;
    let mut violation = violation;
    let (mut tried, mut accepted) = (0u64, 0u64);
    let mut progress = true;
    while progress {
        progress = false;
        for step in Step::PASS {
            let mut unit = 0;
            loop {
                if oracle.out_of_time() {
                    return Shrunk {
                        scenario: current,
                        violation,
                        tried,
                        accepted,
                        complete: false,
                    };
                }
                let f = focus(&violation);
                let Some(candidates) = candidates(step, &current, setup, window, &f, unit) else {
                    break;
                };
                let mut valid: Vec<ValidScenario> = candidates
                    .into_iter()
                    .filter_map(|c| ValidScenario::new(c).ok())
                    .collect();
                if valid.is_empty() {
                    unit += 1;
                    continue;
                }
                match oracle.first_failing(&valid) {
                    Some((i, v)) => {
                        debug_assert!(i < valid.len());
                        debug_assert!(valid[i].faults.len() <= current.faults.len());
                        tried += i as u64 + 1;
                        accepted += 1;
                        current = valid.swap_remove(i);
                        violation = v;
                        progress = true;
                    }
                    None => {
                        tried += valid.len() as u64;
                        unit += 1;
                    }
                }
            }
        }
    }
    Shrunk {
        scenario: current,
        violation,
        tried,
        accepted,
        complete: true,
    }
}

/// The candidates of `step` on unit `unit` (a fault, for the steps on
/// faults; the steps on the whole scenario have one unit); `None` past the
/// last unit.
fn candidates(
    step: Step,
    s: &Scenario,
    setup: &SwarmSetup,
    window: [Nanos; 2],
    focus: &Focus,
    unit: usize,
) -> Option<Vec<Scenario>> {
    let whole = |make: &dyn Fn() -> Vec<Scenario>| (unit == 0).then(make);
    let each = |make: &dyn Fn(usize) -> Vec<Scenario>| (unit < s.faults.len()).then(|| make(unit));
    match step {
        Step::Detectors => whole(&|| reduce::detectors(s, focus)),
        Step::Faults => whole(&|| reduce::faults(s)),
        Step::Nodes => whole(&|| reduce::nodes(s, focus)),
        Step::RunEnd => whole(&|| reduce::run_end(s, focus)),
        Step::Shorter => each(&|i| reduce::shorter(s, setup, i)),
        Step::Milder => each(&|i| reduce::milder(s, setup, i)),
        Step::Earlier => each(&|i| reduce::earlier(s, window, i)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::{DetectorSetup, Expect, Fault, FaultKind, MonitorCount, Topology};
    use crate::swarm::draw::draw;
    use fdlab_protocol::fixed::FixedTimeoutConfig;
    use fdlab_protocol::DetectorConfig;

    fn mesh() -> Scenario {
        let detector = |name: &str| DetectorSetup {
            name: name.into(),
            config: DetectorConfig::FixedTimeout(FixedTimeoutConfig::default()),
        };
        let topology = Topology::Mesh {
            nodes: 8,
            monitors_per_node: MonitorCount::All,
        };
        Scenario {
            detectors: vec![detector("a"), detector("b"), detector("c")],
            ..Scenario::new("m", topology, Nanos::from_secs(120))
        }
    }

    /// A stand-in for a run: detector `b` "fails" when the scenario has a
    /// pause of at least 3 s; the violation is that pause's node and end.
    /// It tests `batch` candidates at a time, as a pool of threads would.
    struct Fake {
        batch: usize,
        runs: u64,
    }

    fn violation(s: &Scenario) -> Option<(String, Nanos)> {
        s.detectors.iter().find(|d| d.name == "b")?;
        s.faults
            .iter()
            .find(|f| {
                f.kind == Some(FaultKind::Pause)
                    && f.duration.is_some_and(|d| d >= Nanos::from_secs(3))
            })
            .map(|f| (f.node.clone().unwrap(), f.at.unwrap() + f.duration.unwrap()))
    }

    impl Oracle<(String, Nanos)> for Fake {
        fn first_failing(&mut self, c: &[ValidScenario]) -> Option<(usize, (String, Nanos))> {
            for (k, chunk) in c.chunks(self.batch).enumerate() {
                self.runs += chunk.len() as u64;
                let found: Vec<_> = chunk.iter().map(|s| violation(s)).collect();
                if let Some(i) = found.iter().position(Option::is_some) {
                    return Some((k * self.batch + i, found[i].clone().unwrap()));
                }
            }
            None
        }
    }

    fn focus(v: &(String, Nanos)) -> Focus {
        Focus {
            subject: "b".into(),
            distribution: None,
            nodes: vec![v.0.clone()],
            at: v.1,
        }
    }

    #[test]
    fn a_drawn_schedule_shrinks_to_the_one_fault_that_matters_for_any_batch() {
        let setup = SwarmSetup {
            faults: Some([10, 10]),
            kinds: Some(vec![FaultKind::Pause, FaultKind::Loss, FaultKind::Crash]),
            ..SwarmSetup::default()
        };
        let mut s = mesh();
        // A seed whose ten faults include a pause of 3 s or more.
        let (seed, faults) = (1..)
            .map(|seed| (seed, draw(&s, &setup, seed).faults))
            .find(|(_, f)| {
                let mut t = s.clone();
                t.faults = f.clone();
                violation(&t).is_some()
            })
            .unwrap();
        s.faults = faults;
        assert_eq!(s.faults.len(), 10, "seed {seed}");
        let first = violation(&s).unwrap();
        let mut results = Vec::new();
        for batch in [1, 2, 5] {
            let mut oracle = Fake { batch, runs: 0 };
            let start = ValidScenario::new(s.clone()).unwrap();
            let out = shrink(start, first.clone(), &setup, &focus, &mut oracle);
            assert!(out.complete);
            assert!(oracle.runs >= out.tried, "batch {batch}");
            let m = &out.scenario;
            assert_eq!(m.faults.len(), 1, "{:?}", m.faults);
            let f = &m.faults[0];
            assert_eq!(f.kind, Some(FaultKind::Pause));
            // 40 s at most, halved while 3 s or more: 3 s to 6 s, and
            // detected from 10 s only.
            let d = f.duration.unwrap();
            assert!(d >= Nanos::from_secs(3) && d < Nanos::from_secs(6), "{d}");
            assert_eq!(f.expect, Some(Expect::Tolerate));
            assert_eq!(f.at, Some(setup.start_window(s.duration)[0]));
            assert_eq!(f.node.as_deref(), Some("n0"));
            assert_eq!(
                m.topology,
                Topology::Mesh {
                    nodes: 2,
                    monitors_per_node: MonitorCount::All
                }
            );
            let names: Vec<&str> = m.detectors.iter().map(|d| d.name.as_str()).collect();
            assert_eq!(names, ["b"]);
            assert!(m.duration < s.duration);
            results.push((format!("{:?}", out.scenario), out.tried, out.accepted));
        }
        assert!(results.windows(2).all(|w| w[0] == w[1]), "{results:?}");
    }

    #[test]
    fn a_schedule_that_needs_no_fault_shrinks_to_none() {
        let mut s = mesh();
        s.faults = vec![Fault {
            kind: Some(FaultKind::Crash),
            node: Some("n3".into()),
            at: Some(Nanos::from_secs(50)),
            duration: Some(Nanos::from_secs(5)),
            ..Fault::default()
        }];
        struct Always;
        impl Oracle<()> for Always {
            fn first_failing(&mut self, c: &[ValidScenario]) -> Option<(usize, ())> {
                (!c.is_empty()).then_some((0, ()))
            }
        }
        let focus = |_: &()| Focus {
            subject: "a".into(),
            distribution: None,
            nodes: Vec::new(),
            at: Nanos::from_secs(1),
        };
        let out = shrink(
            ValidScenario::new(s).unwrap(),
            (),
            &SwarmSetup::default(),
            &focus,
            &mut Always,
        );
        assert!(out.scenario.faults.is_empty());
        assert_eq!(out.scenario.detectors.len(), 1);
        assert_eq!(out.scenario.duration, Nanos::from_secs(2));
    }
}
