//! Running lock-RPC scenarios (SPEC §10): every policy of every seed, in
//! parallel; the results do not depend on the pool's size.

use std::time::Instant;

use fdlab_sim::estimate::estimate;
use fdlab_sim::lockrpc::{self, LockOutcome, Setup};
use fdlab_sim::valid::ValidScenario;

use crate::longest_first::run_longest_first;
use crate::simulate::{progress, seed_list};

/// Every run of a set of lock-RPC scenarios.
pub struct LockRuns {
    /// One per scenario, in the order given: every policy of every seed,
    /// seed-major, policies in report order.
    pub results: Vec<Vec<LockOutcome>>,
    pub runs: usize,
    pub events: u64,
    pub wall: f64,
}

pub fn simulate_locks(
    scenarios: &[&ValidScenario],
    seeds: Option<u32>,
    first_seed: u64,
    pool: &rayon::ThreadPool,
) -> Result<LockRuns, String> {
    let mut jobs: Vec<(usize, u64, usize)> = Vec::new();
    let mut setups = Vec::with_capacity(scenarios.len());
    for (i, s) in scenarios.iter().enumerate() {
        let setup = Setup::new(s).ok_or_else(|| format!("{}: no [lockrpc] table", s.name))?;
        let list = seed_list(first_seed, seeds, s.seeds).map_err(|e| format!("{}: {e}", s.name))?;
        for seed in list {
            jobs.extend((0..setup.policies.len()).map(|p| (i, seed, p)));
        }
        setups.push(setup);
    }
    let bar = progress(jobs.len() as u64, "runs");
    let started = Instant::now();
    // A scenario's runs last about as long as its estimated events.
    let size: Vec<f64> = scenarios.iter().map(|s| estimate(s).events).collect();
    let costs: Vec<f64> = jobs.iter().map(|&(i, _, _)| size[i]).collect();
    let outcomes: Vec<LockOutcome> = run_longest_first(pool, &costs, |k| {
        let (i, seed, p) = jobs[k];
        let o = lockrpc::run(scenarios[i], &setups[i], seed, p);
        bar.inc(1);
        o
    });
    bar.finish_and_clear();
    let wall = started.elapsed().as_secs_f64();
    let events = outcomes.iter().map(|o| o.events).sum();
    let mut results = vec![Vec::new(); scenarios.len()];
    for (&(i, _, _), o) in jobs.iter().zip(outcomes) {
        results[i].push(o);
    }
    Ok(LockRuns {
        results,
        runs: jobs.len(),
        events,
        wall,
    })
}

/// Refuses a lock-RPC scenario in `command`, which only `fdlab run` takes:
/// it has no detectors or pairs to tune, sweep, replay or run live.
pub fn refuse_lockrpc(scenario: &ValidScenario, command: &str) -> Result<(), String> {
    if scenario.is_lockrpc() {
        return Err(format!(
            "{}: a lock-RPC scenario ([lockrpc]) has no detectors for `fdlab {command}`; run it with `fdlab run` (docs/lockrpc.md)",
            scenario.name
        ));
    }
    Ok(())
}
