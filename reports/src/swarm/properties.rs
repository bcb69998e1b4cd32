//! Checking one run against the properties of `[properties]` (SPEC §11,
//! docs/swarm.md): each property is read off the run's ground truth and
//! verdicts, with the same judgement as the metrics of a report
//! ([`crate::metrics`] for detectors, the cluster outcome for membership,
//! the placement ledger's longest split).
//!
//! - `detect_within`: a must-detect window at least as long as the bound
//!   that has no lasting Failed verdict (Chen et al.'s T_D) within the bound
//!   of its onset; for a cluster, a crash that long not declared Dead within
//!   the bound (a `restart` is down for no time). A shorter window that ends undetected is not a violation:
//!   it asked for nothing the bound allows. The time the monitor itself
//!   was paused or down meanwhile is added to the bound (it handled
//!   nothing), here and for `recover_within`.
//! - `no_false_failed`: a mistake (a verdict about a target that must not
//!   be detected) that reached Failed.
//! - `recover_within`: after a must-detect window ends, the verdict is not
//!   Alive again within the bound (a recovery lag over it, or none while
//!   the bound ran out before the run ended or another fault began).
//! - `no_live_declared_dead`: a Dead declaration of a live silo, unless a
//!   fault the swarm drew with `expect = "detect"` (a long pause or
//!   partition) held it then (`FaultRecord::held`: the paused node, the
//!   isolated one, a partition's named minority side).
//! - `converge_within`: a true declaration (of a crashed silo; a false
//!   one is `no_live_declared_dead`'s) not in every live silo's view within
//!   the bound of it, or of the run's last fault if later (its end, or its
//!   start if it lasts to the end of the run), when that deadline falls
//!   inside the run.
//! - `placement_split_within`: a key with more than one owner among the
//!   clients for longer than the bound.
//! - `stop_using_dead_within` (lock RPCs): a crashed server still used by
//!   a request (an RPC, or a dial made for one; breaker probes and late
//!   releases aside) later than the bound after its crash, or into the
//!   last second of its crash window (the window's `DeadPeerStop`).
//! - `no_healthy_evicted` (lock RPCs): a channel evicting a peer that was
//!   under no fault (the run's first such eviction).

use fdlab_protocol::Nanos;
use fdlab_sim::lockrpc::LockOutcome;
use fdlab_sim::membership::outcome::ClusterOutcome;
use fdlab_sim::outcome::{FaultRecord, RunOutcome};
use fdlab_sim::placement::PlacementOutcome;
use fdlab_sim::scenario::{Check, Expect, FaultKind, Property};

use super::Violation;
use crate::metrics::run_metrics;

/// The violations of `checks` by the detectors of one run, property by
/// property in `checks` order, then detector order, then pair order.
pub fn check_detectors(outcome: &RunOutcome, checks: &[Check]) -> Vec<Violation> {
    let metrics = run_metrics(outcome);
    let name = |n: u32| metrics.node_name(n);
    let mut out = Vec::new();
    for check in checks {
        for d in &metrics.detectors {
            let v = |at: Nanos, monitor: u32, target: u32| Violation {
                property: check.property,
                subject: d.detector.clone(),
                distribution: None,
                monitor: Some(name(monitor)),
                target: Some(name(target)),
                at,
                observed: None,
                bound: check.bound,
                fault: None,
            };
            match (check.property, check.bound) {
                (Property::DetectWithin, Some(bound)) => {
                    for det in &d.detections {
                        let w = det.window;
                        let due = deadline(&outcome.faults, det.monitor, w.start, bound);
                        let late = match det.failed_at {
                            Some(t) => t > due,
                            None => w.end >= due,
                        };
                        if late {
                            out.push(Violation {
                                observed: det.failed_delay(),
                                fault: Some(det.fault),
                                ..v(due, det.monitor, det.target)
                            });
                        }
                    }
                }
                (Property::NoFalseFailed, _) => {
                    for m in d.mistakes.iter().filter(|m| m.is_false_failed()) {
                        out.push(Violation {
                            observed: Some(m.duration()),
                            fault: fault_near(&outcome.faults, m.target, m.start)
                                .or_else(|| fault_near(&outcome.faults, m.monitor, m.start)),
                            ..v(m.start, m.monitor, m.target)
                        });
                    }
                }
                (Property::RecoverWithin, Some(bound)) => {
                    for r in &d.recoveries {
                        let due = deadline(&outcome.faults, r.monitor, r.from, bound);
                        let late = match r.alive_at {
                            Some(t) => t > due,
                            None => r.until > due,
                        };
                        if late {
                            out.push(Violation {
                                observed: r.lag(),
                                fault: Some(r.fault),
                                ..v(due, r.monitor, r.target)
                            });
                        }
                    }
                }
                _ => {}
            }
        }
    }
    out
}

/// The violation of `placement_split_within` in each of a placement run's
/// detector × distribution cells (the longest split, if over the bound).
pub fn check_placement(outcome: &PlacementOutcome, checks: &[Check]) -> Vec<Violation> {
    let Some(bound) = checks
        .iter()
        .find(|c| c.property == Property::PlacementSplitWithin)
        .and_then(|c| c.bound)
    else {
        return Vec::new();
    };
    outcome
        .cells
        .iter()
        .filter_map(|cell| {
            let split = cell.longest_split.filter(|s| s.length > bound)?;
            Some(Violation {
                property: Property::PlacementSplitWithin,
                subject: cell.detector.clone(),
                distribution: cell.distribution.map(|d| d.name().to_string()),
                monitor: None,
                target: Some(format!("key {}", split.key)),
                at: split.start + bound,
                observed: Some(split.length),
                bound: Some(bound),
                fault: None,
            })
        })
        .collect()
}

/// The violations of `stop_using_dead_within` and `no_healthy_evicted`
/// by one lock-RPC run (its policy is the subject): each crash window of
/// a server used longer than the bound after its crash (or to its end),
/// and the run's first eviction of a peer under no fault. `names` are the
/// scenario's node names.
pub fn check_lock(outcome: &LockOutcome, checks: &[Check], names: &[String]) -> Vec<Violation> {
    let name = |i: u32| {
        names
            .get(i as usize)
            .cloned()
            .unwrap_or_else(|| format!("n{i}"))
    };
    let subject = outcome.policy.name().to_string();
    let mut out = Vec::new();
    for check in checks {
        match (check.property, check.bound) {
            (Property::StopUsingDeadWithin, Some(bound)) => {
                for d in outcome.dead_peers.iter().filter(|d| d.stop_after > bound) {
                    let fault = outcome.faults.iter().position(|f| {
                        f.kind == FaultKind::Crash
                            && f.node == Some(d.server)
                            && f.window.start == d.start
                    });
                    out.push(Violation {
                        property: check.property,
                        subject: subject.clone(),
                        distribution: None,
                        monitor: None,
                        target: Some(name(d.server)),
                        at: d.start + bound,
                        observed: d.stopped.then_some(d.stop_after),
                        bound: Some(bound),
                        fault,
                    });
                }
            }
            (Property::NoHealthyEvicted, _) => {
                if let Some((at, node, server)) = outcome.first_healthy_eviction {
                    out.push(Violation {
                        property: check.property,
                        subject: subject.clone(),
                        distribution: None,
                        monitor: Some(name(node)),
                        target: Some(name(server)),
                        at,
                        observed: None,
                        bound: None,
                        fault: None,
                    });
                }
            }
            _ => {}
        }
    }
    out
}

/// The violations of `checks` by one cluster run (its judge is the
/// subject), property by property.
pub fn check_cluster(outcome: &ClusterOutcome, checks: &[Check]) -> Vec<Violation> {
    let name = |node: u32| {
        outcome
            .nodes
            .get(node as usize)
            .cloned()
            .unwrap_or_else(|| format!("n{node}"))
    };
    let v = |check: &Check, at: Nanos| Violation {
        property: check.property,
        subject: outcome.judge.clone(),
        distribution: None,
        monitor: None,
        target: None,
        at,
        observed: None,
        bound: check.bound,
        fault: None,
    };
    // The last fault's last change: its end, or its start if it lasts to
    // the end of the run (a crash for good) or is an instant (a clock step).
    let quiet = outcome
        .faults
        .iter()
        .map(|f| match f.kind {
            FaultKind::Clock => f.window.start,
            _ if f.window.end >= outcome.duration => f.window.start,
            _ => f.window.end,
        })
        .max()
        .unwrap_or(Nanos::ZERO);
    let mut out = Vec::new();
    for check in checks {
        match (check.property, check.bound) {
            (Property::DetectWithin, Some(bound)) => {
                for c in &outcome.crashes {
                    let Some(f) = outcome.faults.get(c.fault) else {
                        continue;
                    };
                    // A restart is down for no time: its silo is back at
                    // once as a new generation, and nothing must detect it.
                    let down = match f.kind {
                        FaultKind::Restart => c.at,
                        _ => f.window.end.min(outcome.duration),
                    };
                    if down - c.at < bound {
                        continue;
                    }
                    let delay = c.declared.map(|t| t - c.at);
                    if delay.is_none_or(|d| d > bound) {
                        out.push(Violation {
                            target: Some(name(c.silo.node)),
                            observed: delay,
                            fault: Some(c.fault),
                            ..v(check, c.at + bound)
                        });
                    }
                }
            }
            (Property::NoLiveDeclaredDead, _) => {
                for d in outcome.declarations.iter().filter(|d| d.false_positive) {
                    let node = d.target.node;
                    let detect = outcome.faults.iter().any(|f| {
                        f.expect == Expect::Detect
                            && f.held.contains(&node)
                            && f.window.start <= d.at
                            && d.at <= f.window.end
                    });
                    if detect {
                        continue;
                    }
                    out.push(Violation {
                        monitor: Some(name(d.by.node)),
                        target: Some(name(node)),
                        observed: Some(d.destroyed),
                        fault: fault_near(&outcome.faults, node, d.at),
                        ..v(check, d.at)
                    });
                }
            }
            (Property::ConvergeWithin, Some(bound)) => {
                // A false declaration is no_live_declared_dead's: its
                // silo may come back (a SWIM member refutes it), and the
                // views rightly never agree that it is Dead.
                for d in outcome.declarations.iter().filter(|d| !d.false_positive) {
                    let from = d.at.max(quiet);
                    let deadline = from + bound;
                    if deadline >= outcome.duration {
                        continue;
                    }
                    if d.agreed.is_none_or(|t| t > deadline) {
                        out.push(Violation {
                            monitor: Some(name(d.by.node)),
                            target: Some(name(d.target.node)),
                            observed: d.agreed.map(|t| t - from),
                            ..v(check, deadline)
                        });
                    }
                }
            }
            _ => {}
        }
    }
    out
}

/// When a monitor must have decided, from `from` with `bound`: `bound` of
/// its own running time later. A paused monitor handles nothing (SPEC §4),
/// and a crashed one is not there, so the time it spends paused or down in
/// between is added: a detector is not late because its host was stopped.
fn deadline(faults: &[FaultRecord], monitor: u32, from: Nanos, bound: Nanos) -> Nanos {
    let mut pauses: Vec<(Nanos, Nanos)> = faults
        .iter()
        .filter(|f| {
            matches!(f.kind, FaultKind::Pause | FaultKind::Crash) && f.node == Some(monitor)
        })
        .map(|f| (f.window.start, f.window.end))
        .collect();
    pauses.sort_unstable();
    let stopped = |to: Nanos| -> Nanos {
        // The union of the pauses within [from, to).
        let mut total = Nanos::ZERO;
        let mut reach = from;
        for &(a, b) in &pauses {
            let (a, b) = (a.max(reach), b.min(to));
            if b > a {
                total = total + (b - a);
                reach = b;
            }
        }
        total
    };
    let mut due = from + bound;
    loop {
        let next = from + bound + stopped(due);
        debug_assert!(next >= due, "the deadline only moves later");
        if next == due {
            return due;
        }
        due = next;
    }
}

/// The fault about `node` a verdict at `at` follows, for the evidence: the
/// first in progress then (its end included), else the last one about it
/// that began before. (A false verdict is about its target, or follows a
/// fault of its monitor: the caller asks for both.)
fn fault_near(faults: &[FaultRecord], node: u32, at: Nanos) -> Option<usize> {
    let about = |f: &&FaultRecord| f.node == Some(node) && f.window.start <= at;
    let during = faults.iter().position(|f| about(&f) && at <= f.window.end);
    during.or_else(|| {
        faults
            .iter()
            .enumerate()
            .filter(|(_, f)| about(f))
            .max_by_key(|(i, f)| (f.window.end, *i))
            .map(|(i, _)| i)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use fdlab_scenarios::builtin_scenario;
    use fdlab_sim::{engine, membership, placement};

    fn check(property: Property, bound: Option<Nanos>) -> Vec<Check> {
        vec![Check { property, bound }]
    }

    fn subjects(v: &[Violation]) -> Vec<&str> {
        let mut s: Vec<&str> = v.iter().map(|v| v.subject.as_str()).collect();
        s.dedup();
        s
    }

    #[test]
    fn detector_properties_on_the_freeze_of_a_pipeline() {
        let s = builtin_scenario("pipeline-freeze").unwrap().unwrap();
        let (o, _) = engine::run(&s, 1, false);
        // Literal decay declares the drained stage Failed again after the
        // freeze (tests/decay_backlog.rs); decay-drain does not.
        let v = check_detectors(&o, &check(Property::NoFalseFailed, None));
        assert_eq!(subjects(&v), ["decay"]);
        assert!(v.iter().all(|v| v.at >= o.faults[0].window.end), "{v:?}");
        // About the frozen stage, or by it about its upstreams: after it.
        assert!(v.iter().all(|v| v.fault == Some(0)), "{v:?}");
        assert!(v.iter().all(|v| [&v.monitor, &v.target]
            .iter()
            .any(|n| n.as_deref() == Some("s1.0"))));
        // Every detector detects the 30 s freeze within 30 s; none within 1 ms.
        let thirty = Some(Nanos::from_secs(30));
        assert!(check_detectors(&o, &check(Property::DetectWithin, thirty)).is_empty());
        let v = check_detectors(&o, &check(Property::DetectWithin, Some(Nanos(1_000_000))));
        assert_eq!(subjects(&v).len(), s.detectors.len());
        assert!(v
            .iter()
            .all(|v| v.observed.is_some_and(|t| t > Nanos(1_000_000))));
        // Trusted again within a few seconds, not within a nanosecond.
        assert!(check_detectors(
            &o,
            &check(Property::RecoverWithin, Some(Nanos::from_secs(10)))
        )
        .is_empty());
        assert!(!check_detectors(&o, &check(Property::RecoverWithin, Some(Nanos(1)))).is_empty());
    }

    #[test]
    fn cluster_properties() {
        let s = builtin_scenario("orleans-crash").unwrap().unwrap();
        let (o, _) = membership::run(&s, 1, 0, false);
        assert_eq!(o.judge, "classic");
        let minutes = |m: u64| Some(Nanos::from_secs(60 * m));
        assert!(check_cluster(&o, &check(Property::DetectWithin, minutes(2))).is_empty());
        // Orleans' defaults take about 55 s to declare a crash.
        let v = check_cluster(
            &o,
            &check(Property::DetectWithin, Some(Nanos::from_secs(10))),
        );
        assert_eq!(v.len(), 1, "{v:?}");
        assert_eq!(v[0].target.as_deref(), Some("n7"));
        assert!(check_cluster(&o, &check(Property::ConvergeWithin, minutes(1))).is_empty());
        assert_eq!(
            check_cluster(&o, &check(Property::ConvergeWithin, Some(Nanos(1)))).len(),
            1
        );
        assert!(check_cluster(&o, &check(Property::NoLiveDeclaredDead, None)).is_empty());
        // SWIM declares a silo paused for 30 s Dead; the pause is tolerated
        // in this scenario.
        let s = builtin_scenario("orleans-gc-pause").unwrap().unwrap();
        let swim = s.judge_names().iter().position(|j| j == "swim").unwrap();
        let (o, _) = membership::run(&s, 1, swim, false);
        let v = check_cluster(&o, &check(Property::NoLiveDeclaredDead, None));
        assert!(!v.is_empty());
        assert!(v
            .iter()
            .all(|v| v.subject == "swim" && v.target.as_deref() == Some("n4")));
    }

    /// A must-detect `halves` partition excuses declaring its named
    /// (minority) side, and only that side: a declaration of a node on the
    /// other side is still a violation.
    #[test]
    fn a_long_halves_partition_excuses_declaring_its_named_side() {
        use fdlab_sim::scenario::{Expect, Fault, PartitionShape};
        let mut s = builtin_scenario("orleans-crash")
            .unwrap()
            .unwrap()
            .scenario()
            .clone();
        // Orleans main: 10.2 never votes against a silent silo (its
        // indirect probes end "unknown", docs/membership.md).
        s.membership.as_mut().unwrap().orleans.version =
            fdlab_protocol::membership::OrleansVersion::Main;
        let side = ["n3", "n4", "n5"];
        s.faults = vec![Fault {
            kind: Some(FaultKind::Partition),
            shape: Some(PartitionShape::Halves),
            nodes: Some(side.iter().map(|n| n.to_string()).collect()),
            at: Some(Nanos::from_secs(60)),
            duration: Some(Nanos::from_secs(180)),
            expect: Some(Expect::Detect),
            ..Fault::default()
        }];
        let s = fdlab_sim::valid::ValidScenario::new(s).unwrap();
        let (o, _) = membership::run(&s, 1, 0, false);
        assert_eq!(o.faults[0].held, [3, 4, 5]);
        let on_side = |node: u32| (3..=5).contains(&node);
        // The majority declares the cut-off side Dead: no violation.
        let declared: Vec<u32> = o
            .declarations
            .iter()
            .filter(|d| d.false_positive)
            .map(|d| d.target.node)
            .collect();
        assert!(declared.iter().any(|&n| on_side(n)), "{declared:?}");
        let v = check_cluster(&o, &check(Property::NoLiveDeclaredDead, None));
        let named = |v: &Violation| v.target.as_deref().map(|t| t[1..].parse::<u32>().unwrap());
        assert!(v.iter().all(|v| !on_side(named(v).unwrap())), "{v:?}");
        // Every false declaration of the other side is one.
        let others = declared.iter().filter(|&&n| !on_side(n)).count();
        assert_eq!(v.len(), others, "{v:?}");
        // Tolerated, the same partition excuses nothing.
        let mut o = o;
        o.faults[0].expect = Expect::Tolerate;
        let v = check_cluster(&o, &check(Property::NoLiveDeclaredDead, None));
        assert_eq!(v.len(), declared.len());
    }

    #[test]
    fn clients_with_other_server_orders_split_keys_for_the_whole_run() {
        let s = builtin_scenario("placement-orders").unwrap().unwrap();
        let p = s.placement.as_ref().unwrap();
        let setup = placement::Setup::new(p, &s.topology.node_names()).unwrap();
        let (o, _) = engine::run(&s, 1, false);
        let placed = placement::evaluate(&setup, &o);
        let v = check_placement(
            &placed,
            &check(Property::PlacementSplitWithin, Some(Nanos::from_secs(60))),
        );
        // Positional hashes split on the orders; ketama and rendezvous hash
        // server names and agree.
        assert!(!v.is_empty());
        assert!(v
            .iter()
            .all(|v| v.observed.is_some_and(|t| t > Nanos::from_secs(60))));
        let names: Vec<&str> = v.iter().filter_map(|v| v.distribution.as_deref()).collect();
        assert!(!names.contains(&"ketama"), "{names:?}");
    }
}
