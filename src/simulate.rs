//! Running scenarios over seeds in parallel: what the commands that simulate
//! share. [`simulate`] runs whole scenarios (`fdlab run`, `fdlab check`);
//! [`simulate_points`] runs one scenario with many detector settings at once
//! (`fdlab tune`, `fdlab bench`), and [`seed_totals`] one seed of it
//! (`fdlab sweep`).

use std::io::IsTerminal;
use std::time::Instant;

use fdlab_reports::metrics::{
    run_metrics, summarize_totals, DetectorSummary, RunTotals, ScenarioResult,
};
use fdlab_scenarios::seed_range::seed_range;
use fdlab_sim::engine;
use fdlab_sim::placement::{self, PlacementOutcome};
use fdlab_sim::valid::ValidScenario;
use indicatif::{ProgressBar, ProgressStyle};
use rayon::prelude::*;

/// Every run of a set of scenarios.
pub struct Simulated {
    /// One per scenario, in the order given; runs in seed order.
    pub results: Vec<ScenarioResult>,
    /// One per scenario, the same order: a placement scenario's costs per
    /// run, in seed order (empty for the others).
    pub placements: Vec<Vec<PlacementOutcome>>,
    pub runs: usize,
    pub events: u64,
    /// Wall time of the simulation, seconds.
    pub wall: f64,
    pub threads: usize,
}

/// A rayon pool of `jobs` threads (default: one per core).
pub fn thread_pool(jobs: Option<usize>) -> Result<rayon::ThreadPool, String> {
    let threads = crate::budget::threads(jobs)?;
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .map_err(|e| format!("--jobs: {e}"))
}

/// A progress bar on standard error, only when it is a terminal.
pub fn progress(len: u64, unit: &str) -> ProgressBar {
    if !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(len);
    let template = format!(
        "{{spinner}} {{bar:40}} {{pos}}/{{len}} {unit}  {{elapsed_precise}}, about {{eta}} left"
    );
    bar.set_style(
        ProgressStyle::with_template(&template).unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    bar
}

/// The seeds `--seed first` and `--seeds seeds` (default: the scenario's
/// own `seeds`) stand for, refused when they would wrap past the largest
/// seed (see `fdlab_scenarios::seed_range`) or more than
/// [`crate::budget::MAX_RUNS`].
pub fn seed_list(first: u64, seeds: Option<u32>, scenario_seeds: u32) -> Result<Vec<u64>, String> {
    let (count, option) = match seeds {
        Some(n) => (n, format!("--seeds {n}")),
        None => (
            scenario_seeds,
            format!("the scenario's `seeds = {scenario_seeds}`"),
        ),
    };
    // Before the list is made: four billion seeds are 32 GiB of them.
    if u64::from(count) > crate::budget::MAX_RUNS {
        return Err(format!(
            "{option}: {count} seeds; at most {} runs",
            crate::budget::MAX_RUNS
        ));
    }
    Ok(seed_range(first, u64::from(count), "--seed", &option)?.collect())
}

/// Each placement scenario's servers, keys and hashes, resolved once for
/// all its runs (`None` for the other scenarios).
pub fn placement_setups<'a>(
    scenarios: impl IntoIterator<Item = &'a ValidScenario>,
) -> Result<Vec<Option<placement::Setup>>, String> {
    scenarios
        .into_iter()
        .map(|s| {
            s.placement
                .as_ref()
                .map(|p| placement::Setup::new(p, &s.topology.node_names()))
                .transpose()
                .map_err(|e| format!("{}: placement: {e}", s.name))
        })
        .collect()
}

/// Runs every scenario with `seeds` seeds (default: its own count) from
/// `first_seed` on, in parallel; the results do not depend on the pool's size.
pub fn simulate(
    scenarios: &[ValidScenario],
    seeds: Option<u32>,
    first_seed: u64,
    pool: &rayon::ThreadPool,
) -> Result<Simulated, String> {
    if seeds == Some(0) {
        return Err("--seeds: must be at least 1".into());
    }
    let mut jobs: Vec<(usize, u64)> = Vec::new();
    for (i, s) in scenarios.iter().enumerate() {
        let list = seed_list(first_seed, seeds, s.seeds).map_err(|e| format!("{}: {e}", s.name))?;
        jobs.extend(list.into_iter().map(|seed| (i, seed)));
    }
    let bar = progress(jobs.len() as u64, "runs");
    let started = Instant::now();
    let setups = placement_setups(scenarios)?;
    let outcomes = pool.install(|| {
        jobs.par_iter()
            .map(|&(i, seed)| {
                let (outcome, _) = engine::run(&scenarios[i], seed, false);
                let placed = setups[i]
                    .as_ref()
                    .map(|setup| placement::evaluate(setup, &outcome));
                bar.inc(1);
                (outcome, placed)
            })
            .collect::<Vec<_>>()
    });
    bar.finish_and_clear();
    let wall = started.elapsed().as_secs_f64();
    let events = outcomes.iter().map(|(o, _)| o.events).sum();
    let mut results: Vec<ScenarioResult> = scenarios
        .iter()
        .map(|s| ScenarioResult {
            scenario: s.name.clone(),
            runs: Vec::new(),
        })
        .collect();
    let mut placements = vec![Vec::new(); scenarios.len()];
    for (&(i, _), (outcome, placed)) in jobs.iter().zip(outcomes) {
        results[i].runs.push(outcome);
        placements[i].extend(placed);
    }
    Ok(Simulated {
        results,
        placements,
        runs: jobs.len(),
        events,
        wall,
        threads: pool.current_num_threads(),
    })
}

/// Simulates one seed of `scenario` and returns each detector's totals, in
/// order.
pub fn seed_totals(scenario: &ValidScenario, seed: u64) -> Vec<RunTotals> {
    let (outcome, _) = engine::run(scenario, seed, false);
    run_metrics(&outcome)
        .detectors
        .iter()
        .map(|d| d.totals())
        .collect()
}

/// The summary of every detector of `points` (one per setting) over
/// `seeds`, each seed simulated once for all of them, seeds in parallel on
/// `pool`.
pub fn simulate_points(
    points: &ValidScenario,
    seeds: &[u64],
    pool: &rayon::ThreadPool,
) -> Result<Vec<DetectorSummary>, String> {
    let setups = &points.detectors;
    let bar = progress(seeds.len() as u64, "seeds");
    let per_seed: Vec<Vec<RunTotals>> = pool.install(|| {
        seeds
            .par_iter()
            .map(|&seed| {
                let totals = seed_totals(points, seed);
                bar.inc(1);
                totals
            })
            .collect()
    });
    bar.finish_and_clear();
    Ok(setups
        .iter()
        .enumerate()
        .map(|(i, setup)| {
            let runs: Vec<RunTotals> = per_seed.iter().map(|t| t[i].clone()).collect();
            summarize_totals(&setup.name, &runs)
        })
        .collect())
}
