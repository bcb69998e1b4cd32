//! Running membership scenarios over seeds and judges in parallel: every
//! (judge, seed) is one cluster run (`fdlab_sim::membership::run`), and
//! with `[placement]` its clients' key placement by their views; results
//! come back in judge order, then seed order, whatever the pool's size.

use std::time::Instant;

use fdlab_sim::estimate::estimate;
use fdlab_sim::membership::{self, outcome::ClusterOutcome};
use fdlab_sim::placement::{self, PlacementOutcome};
use fdlab_sim::valid::ValidScenario;

use crate::longest_first::run_longest_first;
use crate::simulate::{placement_setups, progress, seed_list};

/// Every run of one membership scenario.
pub struct ClusterResult {
    /// Judge-major, then seed order.
    pub runs: Vec<ClusterOutcome>,
    /// With `[placement]`: each run's key-placement costs, clients
    /// following their views (the same order; empty without).
    pub placements: Vec<PlacementOutcome>,
}

/// What [`simulate_clusters`] did.
pub struct ClustersSimulated {
    pub results: Vec<ClusterResult>,
    pub runs: usize,
    pub events: u64,
    pub wall: f64,
}

/// Runs every membership scenario with every judge on `seeds` seeds (default:
/// each scenario's own) from `first_seed` on.
pub fn simulate_clusters(
    scenarios: &[&ValidScenario],
    seeds: Option<u32>,
    first_seed: u64,
    pool: &rayon::ThreadPool,
) -> Result<ClustersSimulated, String> {
    let mut jobs: Vec<(usize, usize, u64)> = Vec::new();
    let mut results = Vec::with_capacity(scenarios.len());
    for (i, s) in scenarios.iter().enumerate() {
        let list = seed_list(first_seed, seeds, s.seeds).map_err(|e| format!("{}: {e}", s.name))?;
        for j in 0..s.judge_names().len() {
            jobs.extend(list.iter().map(|&seed| (i, j, seed)));
        }
        results.push(ClusterResult {
            runs: Vec::new(),
            placements: Vec::new(),
        });
    }
    let setups = placement_setups(scenarios.iter().copied())?;
    let bar = progress(jobs.len() as u64, "cluster runs");
    let started = Instant::now();
    // A scenario's runs last about as long as its estimated events.
    let size: Vec<f64> = scenarios.iter().map(|s| estimate(s).events).collect();
    let costs: Vec<f64> = jobs.iter().map(|&(i, _, _)| size[i]).collect();
    let outcomes: Vec<(ClusterOutcome, Option<PlacementOutcome>)> =
        run_longest_first(pool, &costs, |k| {
            let (i, j, seed) = jobs[k];
            let (outcome, _) = membership::run(scenarios[i], seed, j, false);
            let placed = setups[i]
                .as_ref()
                .map(|setup| placement::evaluate_cluster(setup, scenarios[i], &outcome));
            bar.inc(1);
            (outcome, placed)
        });
    bar.finish_and_clear();
    let wall = started.elapsed().as_secs_f64();
    let events = outcomes.iter().map(|(o, _)| o.events).sum();
    for (&(i, _, _), (outcome, placed)) in jobs.iter().zip(outcomes) {
        results[i].runs.push(outcome);
        results[i].placements.extend(placed);
    }
    Ok(ClustersSimulated {
        results,
        runs: jobs.len(),
        events,
        wall,
    })
}

/// What a command that runs many variants of a membership scenario will
/// simulate, for the size checks and `--dry-run` of [`crate::budget`]:
/// one variant per size of run (events and memory), named `scenario
/// NAME` by the first variant of that size, with the runs of every variant
/// of that size. `variants` gives each variant's name and scenario, and
/// the runs of each.
pub fn distinct_sizes(
    variants: impl IntoIterator<Item = Result<(String, ValidScenario, u64), String>>,
) -> Result<Vec<(ValidScenario, u64)>, String> {
    let mut kinds: Vec<(ValidScenario, u64, (u64, u64))> = Vec::new();
    for v in variants {
        let (name, variant, runs) = v?;
        let e = estimate(&variant);
        let size = (e.events.to_bits(), e.bytes);
        match kinds.iter_mut().find(|(_, _, s)| *s == size) {
            Some((_, n, _)) => *n += runs,
            None => {
                let mut scenario = variant.into_inner();
                scenario.name = format!("{} {name}", scenario.name);
                let variant = ValidScenario::new(scenario).map_err(|e| e.to_string())?;
                kinds.push((variant, runs, size));
            }
        }
    }
    Ok(kinds.into_iter().map(|(v, n, _)| (v, n)).collect())
}
