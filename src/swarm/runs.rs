//! Running swarm runs and shrinking candidates: one scenario with one seed,
//! simulated and checked against the properties (detectors on monitored
//! pairs, a placement ledger, or each judge's cluster run), runs in
//! parallel with the results in run order, and a shrinking oracle that
//! tests candidates in parallel batches and keeps the first that fails.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use fdlab_reports::swarm::output::SwarmRun;
use fdlab_reports::swarm::{
    check_cluster, check_detectors, check_lock, check_placement, Violation,
};
use fdlab_sim::outcome::FaultRecord;
use fdlab_sim::scenario::{Check, Property, SwarmSetup};
use fdlab_sim::swarm::{self, Oracle};
use fdlab_sim::valid::ValidScenario;
use fdlab_sim::{engine, lockrpc, membership, placement};
use rayon::prelude::*;

use crate::simulate::progress;

/// Nanoseconds in a second, for the validation time measured.
const NANOS_PER_SECOND: f64 = 1e9;

/// One run, checked.
#[derive(Clone, Debug)]
pub struct Checked {
    pub violations: Vec<Violation>,
    /// The run's faults as they happened.
    pub faults: Vec<FaultRecord>,
    pub events: u64,
}

/// A placement scenario's setup when `checks` ask for its splits (a
/// placement ledger is kept only then).
fn placement_to_check(
    scenario: &ValidScenario,
    checks: &[Check],
) -> Result<Option<placement::Setup>, String> {
    let splits = checks
        .iter()
        .any(|c| c.property == Property::PlacementSplitWithin);
    let Some(p) = scenario.placement.as_ref().filter(|_| splits) else {
        return Ok(None);
    };
    placement::Setup::new(p, &scenario.topology.node_names())
        .map(Some)
        .map_err(|e| format!("{}: placement: {e}", scenario.name))
}

/// Simulates `scenario` with `seed` and checks it; a membership scenario
/// runs each judge (only `judge`, if given).
pub fn check_run(
    scenario: &ValidScenario,
    seed: u64,
    checks: &[Check],
    judge: Option<&str>,
) -> Result<Checked, String> {
    if scenario.is_lockrpc() {
        return Ok(check_lock_run(scenario, seed, checks, judge));
    }
    if scenario.is_membership() {
        let mut out = Checked {
            violations: Vec::new(),
            faults: Vec::new(),
            events: 0,
        };
        let setup = placement_to_check(scenario, checks)?;
        for (j, name) in scenario.judge_names().iter().enumerate() {
            if judge.is_some_and(|only| only != name) {
                continue;
            }
            let (o, _) = membership::run(scenario, seed, j, false);
            out.violations.extend(check_cluster(&o, checks));
            if let Some(setup) = &setup {
                let placed = placement::evaluate_cluster(setup, scenario, &o);
                out.violations.extend(check_placement(&placed, checks));
            }
            out.events += o.events;
            out.faults = o.faults;
        }
        return Ok(out);
    }
    let (o, _) = engine::run(scenario, seed, false);
    let mut violations = check_detectors(&o, checks);
    if let Some(setup) = placement_to_check(scenario, checks)? {
        violations.extend(check_placement(&placement::evaluate(&setup, &o), checks));
    }
    Ok(Checked {
        violations,
        faults: o.faults,
        events: o.events,
    })
}

/// A lock-RPC scenario's run: each policy (only `policy`, if given) on
/// `seed`, checked.
fn check_lock_run(
    scenario: &ValidScenario,
    seed: u64,
    checks: &[Check],
    policy: Option<&str>,
) -> Checked {
    let mut out = Checked {
        violations: Vec::new(),
        faults: Vec::new(),
        events: 0,
    };
    let Some(setup) = lockrpc::Setup::new(scenario) else {
        return out;
    };
    let names = scenario.topology.node_names();
    for (p, kind) in setup.policies.iter().enumerate() {
        if policy.is_some_and(|only| only != kind.name()) {
            continue;
        }
        let o = lockrpc::run(scenario, &setup, seed, p);
        out.violations.extend(check_lock(&o, checks, &names));
        out.events += o.events;
        out.faults = o.faults;
    }
    out
}

/// What a swarm's runs did.
pub struct Swarmed {
    /// The runs done, in run order: the first of the runs asked for (all
    /// of them, unless the time budget ran out).
    pub runs: Vec<SwarmRun>,
    pub wall: f64,
    /// Seconds this machine took to validate one fault of a drawn
    /// schedule, measured on the runs: what a shrinking step's candidates
    /// cost before they run (0 when no run had a fault).
    pub seconds_per_fault_check: f64,
}

/// The swarm's runs of `scenario`, one per seed of `seeds`, in parallel on
/// `pool`; none starts after `deadline`. Workers take runs in order, so
/// the runs done are always the first ones.
pub fn swarm_runs(
    scenario: &ValidScenario,
    setup: &SwarmSetup,
    checks: &[Check],
    seeds: &[u64],
    pool: &rayon::ThreadPool,
    deadline: Option<Instant>,
) -> Result<Swarmed, String> {
    let started = Instant::now();
    let bar = progress(seeds.len() as u64, "runs");
    let next = AtomicUsize::new(0);
    let failed = AtomicBool::new(false);
    let done: Mutex<Vec<(usize, Result<SwarmRun, String>)>> = Mutex::new(Vec::new());
    // Nanoseconds spent validating schedules, and their faults.
    let validated = (AtomicU64::new(0), AtomicU64::new(0));
    let run = |i: usize| -> Result<SwarmRun, String> {
        let seed = seeds[i];
        let drawn = swarm::draw(scenario, setup, seed);
        let faults = drawn.faults.len() as u64;
        let checking = Instant::now();
        let s = swarm::with_schedule(scenario, drawn.faults)
            .map_err(|e| format!("{}: a drawn schedule is invalid: {e}", scenario.name))?;
        let nanos = checking.elapsed().as_nanos().min(u128::from(u64::MAX)) as u64;
        validated.0.fetch_add(nanos, Ordering::Relaxed);
        validated.1.fetch_add(faults, Ordering::Relaxed);
        let c = check_run(&s, seed, checks, None)?;
        Ok(SwarmRun {
            run: i as u64 + 1,
            seed,
            enabled: drawn.enabled,
            faults: c.faults,
            events: c.events,
            violations: c.violations,
        })
    };
    pool.install(|| {
        (0..pool.current_num_threads())
            .into_par_iter()
            .for_each(|_| loop {
                if failed.load(Ordering::Relaxed) || deadline.is_some_and(|d| Instant::now() >= d) {
                    break;
                }
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= seeds.len() {
                    break;
                }
                let result = run(i);
                failed.fetch_or(result.is_err(), Ordering::Relaxed);
                bar.inc(1);
                done.lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .push((i, result));
            })
    });
    bar.finish_and_clear();
    let mut done = done.into_inner().unwrap_or_else(|e| e.into_inner());
    done.sort_by_key(|(i, _)| *i);
    // Every run below the largest index taken was taken, and every one
    // taken finished: the runs done are a prefix.
    debug_assert!(done.iter().enumerate().all(|(k, (i, _))| k == *i));
    let runs = done
        .into_iter()
        .map(|(_, r)| r)
        .collect::<Result<Vec<_>, _>>()?;
    let (nanos, faults) = (validated.0.into_inner(), validated.1.into_inner());
    Ok(Swarmed {
        runs,
        wall: started.elapsed().as_secs_f64(),
        seconds_per_fault_check: nanos as f64 / NANOS_PER_SECOND / faults.max(1) as f64,
    })
}

/// The violation a shrinking step keeps, with the faults of its run.
#[derive(Clone, Debug)]
pub struct Kept {
    pub violation: Violation,
    pub faults: Vec<FaultRecord>,
}

/// Tests shrinking candidates: each is run with the seed of the violation
/// and checked; a candidate fails when it violates the same property by
/// the same detector or judge. When the violation needs the faults (the
/// run's world, its scenario without faults, does not violate it alone), a
/// candidate that changes the world (fewer nodes, detectors, judges) must
/// keep that so: its world is run too, and must not violate it. A smaller
/// world may break the property on its own (default dataflow-decay
/// declares Failed with no fault in a `[1, 1, 2]` pipeline, whose one
/// source's stream is irregular), and a reproducer that slipped to such
/// another failure would not show the one found.
pub struct Shrinker<'a> {
    pub seed: u64,
    pub checks: Vec<Check>,
    pub like: Violation,
    /// The last world known not to violate the property alone; none when
    /// the violation needs no fault.
    pub world: Option<ValidScenario>,
    pub pool: &'a rayon::ThreadPool,
    pub deadline: Option<Instant>,
    /// Runs simulated (more than a sequential search when batches run
    /// past the first success) and their events.
    pub runs: u64,
    pub events: u64,
    pub error: Option<String>,
}

/// `s` without its faults: the world its schedule runs in.
pub fn world_of(s: &ValidScenario) -> Result<ValidScenario, String> {
    swarm::with_schedule(s, Vec::new()).map_err(|e| format!("{}: {e}", s.name))
}

impl Shrinker<'_> {
    /// Whether `s`'s run shows a violation like the one being shrunk.
    fn shows(&self, c: &Checked) -> Option<Violation> {
        c.violations
            .iter()
            .find(|v| v.same_kind(&self.like))
            .cloned()
    }

    /// Runs `jobs` in parallel, in order.
    fn run_all(&mut self, jobs: &[&ValidScenario], judge: Option<&str>) -> Option<Vec<Checked>> {
        let results: Vec<Result<Checked, String>> = self.pool.install(|| {
            jobs.par_iter()
                .map(|s| check_run(s, self.seed, &self.checks, judge))
                .collect()
        });
        self.runs += results.len() as u64;
        let mut out = Vec::with_capacity(results.len());
        for r in results {
            match r {
                Ok(c) => {
                    self.events += c.events;
                    out.push(c);
                }
                Err(e) => {
                    self.error.get_or_insert(e);
                    return None;
                }
            }
        }
        Some(out)
    }
}

impl Oracle<Kept> for Shrinker<'_> {
    fn first_failing(&mut self, candidates: &[ValidScenario]) -> Option<(usize, Kept)> {
        let batch = self.pool.current_num_threads().max(1);
        // A cluster's judge, or a lock run's policy: only it is rerun.
        let judge = candidates
            .first()
            .filter(|s| s.is_membership() || s.is_lockrpc())
            .map(|_| self.like.subject.clone());
        for (k, chunk) in candidates.chunks(batch).enumerate() {
            // A step of many candidates (2,000 for a schedule of 1,000
            // faults) stops between batches when the budget runs out: the
            // scenario so far is kept, as when a step is not started.
            if k > 0 && self.out_of_time() {
                return None;
            }
            // Each candidate, and the worlds that changed.
            let mut worlds: Vec<Option<ValidScenario>> = Vec::with_capacity(chunk.len());
            for c in chunk {
                let changed = match &self.world {
                    Some(w) => {
                        let cw = match world_of(c) {
                            Ok(cw) => cw,
                            Err(e) => {
                                self.error.get_or_insert(e);
                                return None;
                            }
                        };
                        (cw.scenario() != w.scenario()).then_some(cw)
                    }
                    None => None,
                };
                worlds.push(changed);
            }
            let mut jobs: Vec<&ValidScenario> = chunk.iter().collect();
            jobs.extend(worlds.iter().flatten());
            let checked = self.run_all(&jobs, judge.as_deref())?;
            let (runs, world_runs) = checked.split_at(chunk.len());
            let mut world_runs = world_runs.iter();
            for (i, (c, w)) in runs.iter().zip(&worlds).enumerate() {
                let alone = w
                    .as_ref()
                    .map(|_| world_runs.next().expect("one run per world"));
                let shown = self.shows(c);
                if alone.is_some_and(|a| self.shows(a).is_some()) {
                    continue;
                }
                if let Some(v) = shown {
                    if let Some(w) = &worlds[i] {
                        self.world = Some(w.clone());
                    }
                    return Some((
                        k * batch + i,
                        Kept {
                            violation: v,
                            faults: c.faults.clone(),
                        },
                    ));
                }
            }
        }
        None
    }

    fn out_of_time(&self) -> bool {
        self.error.is_some() || self.deadline.is_some_and(|d| Instant::now() >= d)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fdlab_protocol::Nanos;

    /// A membership scenario with `[placement]` is checked for the splits
    /// of its clients' keys too, judge by judge, and only when asked.
    #[test]
    fn a_cluster_whose_clients_place_keys_is_checked_for_splits() {
        let s = fdlab_scenarios::builtin_scenario("orleans-placement")
            .unwrap()
            .unwrap();
        // Any split of a key over the crash of n7 lasts more than 1 ms.
        let split = Check {
            property: Property::PlacementSplitWithin,
            bound: Some(Nanos::from_millis(1)),
        };
        let checked = check_run(&s, 1, &[split], Some("classic")).unwrap();
        assert!(!checked.violations.is_empty());
        assert!(checked
            .violations
            .iter()
            .all(|v| v.subject == "classic" && v.distribution.is_some()));
        let detect = Check {
            property: Property::DetectWithin,
            bound: Some(Nanos::from_secs(120)),
        };
        let checked = check_run(&s, 1, &[detect], Some("classic")).unwrap();
        assert!(checked.violations.is_empty(), "{:?}", checked.violations);
    }
}
