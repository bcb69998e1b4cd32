//! `fdlab sweep` and `fdlab merge`: a detector's parameters over a grid (or
//! a Latin-hypercube sample) of points, across seeds, on one machine or many.
//!
//! Points that differ only in detector parameters watch the same simulated
//! traffic: each seed is simulated once with every point of it as one
//! detector of the run (shadow mode). A point's result does not depend on
//! which other points share its run (every detector has its own random
//! streams and timers; the traffic does not depend on the detectors), which
//! is what lets shards split a sweep anywhere and merge to the very bytes of
//! an unsharded run (a test checks it).

pub mod cluster;
pub mod cluster_output;
pub mod cluster_units;
mod front_notes;
pub mod lock;
mod merge;
pub mod output;
pub mod units;

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use clap::Args;
use fdlab_reports::atomic::{ensure_dir, remove_stale_temporaries, write_file};
use fdlab_scenarios::resolve;
use fdlab_sim::valid::ValidScenario;
use rayon::prelude::*;

use crate::budget::{self, SizeArgs, Work};
use crate::simulate::{progress, seed_totals, thread_pool};
use fdlab_scenarios::sweep_plan::{plan, Plan, PlanFile, Shard};
use fdlab_scenarios::vary::parse_vary;
use lock::SweepLock;
pub use merge::{merge, MergeArgs};
use output::{PARETO_CSV, SWEEP_CSV, TRADEOFF_SVG};
use units::{Figures, Journal, Unit, UnitSet, JOURNAL, UNITS};

/// Where a sweep writes unless `--out` says otherwise.
pub const DEFAULT_OUT: &str = "sweep-out";
/// The plan's file in a sweep directory.
pub const PLAN: &str = "sweep.toml";

#[derive(Args)]
pub struct SweepArgs {
    /// A built-in scenario name or a scenario file.
    #[arg(value_name = "SCENARIO")]
    scenario: String,
    /// DETECTOR.PARAM=SPEC: a list `1,2,4`, a range `0.80..0.99:0.01`, a
    /// geometric range `100ms..10s:x2` or a log range `0.5..16:log11`.
    /// DETECTOR is a detector name of the scenario or a kind. Several make
    /// a grid. On a membership scenario: membership.orleans.KEY=SPEC or
    /// JUDGE.PARAM=SPEC.
    #[arg(long = "vary", value_name = "KEY=SPEC", required = true)]
    vary: Vec<String>,
    /// A membership scenario: run only this judge (repeat for several;
    /// default: every judge, or the judge whose keys are varied).
    #[arg(long, value_name = "NAME")]
    judge: Vec<String>,
    /// Draw N points of a Latin hypercube over the --vary values instead of
    /// the whole grid.
    #[arg(long, value_name = "N")]
    sample: Option<usize>,
    /// Seeds per point (default: the scenario's `seeds`).
    #[arg(long, value_name = "N")]
    seeds: Option<u32>,
    /// First seed (also seeds the Latin hypercube).
    #[arg(long, value_name = "S", default_value_t = 1)]
    seed: u64,
    /// Worker threads (default: one per core). Results do not depend on it.
    #[arg(long, value_name = "J")]
    jobs: Option<usize>,
    /// Directory for the plan, the units and the results.
    #[arg(long, value_name = "DIR", default_value = DEFAULT_OUT)]
    out: PathBuf,
    /// Run share I (0-based) of N of the (point, seed) units; `fdlab merge`
    /// joins the shards' directories.
    #[arg(long, value_name = "I/N", conflicts_with = "shard_count")]
    shard: Option<String>,
    /// Like --shard I/N, with I from JOB_COMPLETION_INDEX (Kubernetes
    /// Indexed Job) or SLURM_ARRAY_TASK_ID (Slurm array, 0-based).
    #[arg(long, value_name = "N")]
    shard_count: Option<usize>,
    /// Continue an interrupted sweep in --out, without redoing finished units.
    #[arg(long)]
    resume: bool,
    /// Run again into an --out that holds a sweep, replacing its files
    #[arg(long, conflicts_with = "resume")]
    force: bool,
    #[command(flatten)]
    size: SizeArgs,
}

/// Set by Ctrl-C: no new seed starts; finished units are already on disk.
pub(crate) static INTERRUPTED: AtomicBool = AtomicBool::new(false);

pub(crate) fn on_interrupt() {
    // A second handler would fail; one per process is all we need.
    let _ = ctrlc::set_handler(|| INTERRUPTED.store(true, Ordering::SeqCst));
}

/// Most (point, seed) units a sweep holds (each keeps its figures, about a
/// hundred bytes, until the results are written).
pub const MAX_UNITS: usize = 10_000_000;

/// The `--vary` dimensions and the seed count of `args`, checked: what
/// every sweep, of detectors or of a membership scenario, plans from.
fn dimensions_and_seeds(
    args: &SweepArgs,
    scenario: &ValidScenario,
) -> Result<(Vec<fdlab_scenarios::vary::Dimension>, u32), String> {
    let dims = args
        .vary
        .iter()
        .map(|v| parse_vary(v))
        .collect::<Result<Vec<_>, _>>()?;
    if args.sample == Some(0) {
        return Err("--sample: must be at least 1".into());
    }
    if args.seeds == Some(0) {
        return Err("--seeds: must be at least 1".into());
    }
    let seeds = args.seeds.unwrap_or(scenario.seeds);
    crate::simulate::seed_list(args.seed, args.seeds, scenario.seeds)?;
    budget::runs_fit(u64::from(seeds))?;
    Ok((dims, seeds))
}

/// Builds the plan of `args` (checking every input before anything runs).
fn make_plan(args: &SweepArgs, scenario: &ValidScenario) -> Result<(Plan, ValidScenario), String> {
    let (dims, seeds) = dimensions_and_seeds(args, scenario)?;
    let plan = plan(
        scenario,
        &dims,
        args.sample.unwrap_or(0),
        args.seed,
        args.seed,
        seeds,
    )?;
    let units = plan.file.unit_count();
    if units > MAX_UNITS {
        return Err(format!(
            "--seeds: {} points x {seeds} seeds make {units} units; at most {MAX_UNITS}",
            plan.file.points.len()
        ));
    }
    // The run of one seed with every point must be a valid scenario; a
    // seed's run with some of them is then one too.
    let points = scenario
        .with_detectors(plan.setups.clone())
        .map_err(|e| format!("the sweep of {} points: {e}", plan.setups.len()))?;
    Ok((plan, points))
}

fn shard_of(args: &SweepArgs) -> Result<Shard, String> {
    match (&args.shard, args.shard_count) {
        (Some(text), _) => Shard::parse(text),
        (None, Some(n)) => {
            if n == 0 {
                return Err("--shard-count: must be at least 1".into());
            }
            Shard::from_env(n, |k| std::env::var(k).ok())
        }
        (None, None) => Ok(Shard::WHOLE),
    }
}

/// `fdlab sweep`: runs (or resumes) a sweep; see the module docs. Writes
/// and prints the results of a complete sweep, or says what a shard left
/// to merge.
pub fn run(args: &SweepArgs) -> Result<(), String> {
    let scenario = resolve(&args.scenario).map_err(|e| e.to_string())?;
    crate::lockrpc_runs::refuse_lockrpc(&scenario, "sweep")?;
    let inputs = crate::out_paths::scenario_inputs(
        std::slice::from_ref(&args.scenario),
        std::slice::from_ref(&scenario),
    );
    let written = [
        PLAN,
        UNITS,
        JOURNAL,
        output::SWEEP_CSV,
        output::PARETO_CSV,
        output::TRADEOFF_SVG,
    ];
    crate::out_paths::refuse_in_dir("--out", &args.out, &written, &[], &inputs)?;
    if scenario.is_membership() {
        return cluster::run(args, &scenario);
    }
    if let Some(judge) = args.judge.first() {
        return Err(format!(
            "--judge {}: `{}` is not a membership scenario (it has no judges; --vary names its detectors)",
            fdlab_scenarios::excerpt::excerpt(judge),
            scenario.name
        ));
    }
    if let Some(v) = args
        .vary
        .iter()
        .find(|v| v.trim_start().starts_with("membership."))
    {
        return Err(format!(
            "--vary {}: `{}` is not a membership scenario (it has no [membership] table)",
            fdlab_scenarios::excerpt::excerpt_to(v, fdlab_scenarios::excerpt::KEY_CHARS),
            scenario.name
        ));
    }
    let (plan, points) = make_plan(args, &scenario)?;
    let shard = shard_of(args)?;
    if shard
        .units(plan.file.points.len(), plan.file.seeds as usize)
        .is_empty()
    {
        // A share that runs nothing would end "done" and merge to nothing.
        let units = plan.file.points.len() * plan.file.seeds as usize;
        return Err(format!(
            "--shard {}/{}: the sweep has {units} units (points x seeds), and share {} holds none of them; use at most {units} shards",
            shard.index, shard.count, shard.index
        ));
    }
    let threads = budget::threads(args.jobs)?;
    let work = Work {
        runs: vec![(&points, u64::from(plan.file.seeds))],
        logged: false,
    };
    let checked = budget::check(&work, &args.size, threads)?;
    if args.size.dry_run {
        return budget::dry_run(&work, &checked, threads);
    }
    let pool = thread_pool(args.jobs)?;
    let text = plan.file.render()?;
    let names: Vec<String> = plan.file.points.iter().map(|p| p.name.clone()).collect();
    let dir = &args.out;
    if dir.exists() && !dir.is_dir() {
        return Err(format!("{}: is a file, not a directory", dir.display()));
    }
    ensure_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    // One sweep at a time in `dir`, until this function returns (Ctrl-C
    // included: it makes the sweep return).
    let _lock = SweepLock::acquire(dir)?;
    remove_stale_temporaries(dir);
    let mut done = UnitSet::new(&plan.file);
    open(dir, &text, args, &mut done)?;
    let mine = shard.units(plan.file.points.len(), plan.file.seeds as usize);
    let seeds = plan.file.seed_list();
    // Remaining units, grouped by seed: one simulation per seed.
    let mut todo: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    for &(s, p) in &mine {
        if !done.contains(p, seeds[s]) {
            todo.entry(s).or_default().push(p);
        }
    }
    let remaining: usize = todo.values().map(Vec::len).sum();
    if !done.is_empty() {
        say!(
            "resuming {}: {} of {} units already done",
            dir.display(),
            mine.len() - remaining,
            mine.len()
        );
    }
    on_interrupt();
    let journal = Mutex::new(Journal::open(dir, units::HEADER)?);
    let bar = progress(remaining as u64, "units");
    let started = Instant::now();
    let groups: Vec<(usize, Vec<usize>)> = todo.into_iter().collect();
    let results: Vec<Result<Vec<Unit>, String>> = pool.install(|| {
        groups
            .par_iter()
            .map(|(s, todo_points)| {
                if INTERRUPTED.load(Ordering::SeqCst) {
                    return Ok(Vec::new());
                }
                let units = run_seed(&points, seeds[*s], todo_points);
                journal
                    .lock()
                    .map_err(|_| "the journal's lock was poisoned".to_string())?
                    .append(&units, &names)
                    .map_err(|e| format!("{}: {e}", dir.join(JOURNAL).display()))?;
                bar.inc(units.len() as u64);
                Ok(units)
            })
            .collect()
    });
    bar.finish_and_clear();
    for r in results {
        done.add(r?);
    }
    let wall = started.elapsed().as_secs_f64();
    let mine_done = mine
        .iter()
        .filter(|&&(s, p)| done.contains(p, seeds[s]))
        .count();
    if INTERRUPTED.load(Ordering::SeqCst) && mine_done < mine.len() {
        return Err(format!(
            "interrupted: {mine_done} of {} units done and kept in {}; run the same command with --resume to continue",
            mine.len(),
            dir.join(JOURNAL).display()
        ));
    }
    say!(
        "{remaining} units ({} seeds simulated once each for all their points) in {wall:.2} s on {} threads",
        groups.len(),
        pool.current_num_threads()
    );
    commit(dir, &plan.file, &names, done)
}

/// Checks what `dir` holds: nothing of a sweep yet (then the plan `text` is
/// written), or, with `resume`, the same sweep (then its units are read
/// into `done`).
fn open<T: Figures>(
    dir: &Path,
    text: &str,
    args: &SweepArgs,
    done: &mut UnitSet<T>,
) -> Result<(), String> {
    let plan_path = dir.join(PLAN);
    let mut started_before =
        plan_path.exists() || dir.join(JOURNAL).exists() || dir.join(UNITS).exists();
    if started_before && args.force {
        // Only the sweep's own files go; anything else in --out stays.
        for file in [SWEEP_CSV, PARETO_CSV, TRADEOFF_SVG, UNITS, JOURNAL, PLAN] {
            match fs::remove_file(dir.join(file)) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(format!("{}: {e}", dir.join(file).display())),
            }
        }
        started_before = false;
    }
    if !started_before {
        return write_file(&plan_path, text.as_bytes())
            .map_err(|e| format!("{}: {e}", plan_path.display()));
    }
    let existing = fs::read_to_string(&plan_path).unwrap_or_default();
    let finished = dir.join(UNITS).exists() && !dir.join(JOURNAL).exists();
    if !args.resume {
        return Err(if finished && existing == text {
            format!(
                "{} holds this sweep, finished: its results are {SWEEP_CSV}, {PARETO_CSV} and {TRADEOFF_SVG} there; --force runs it again, replacing them",
                dir.display()
            )
        } else {
            format!(
                "{} already holds a sweep; --resume continues it, --force replaces it, or choose another --out",
                dir.display()
            )
        });
    }
    if existing != text {
        return Err(format!(
            "{} holds a different sweep (its sweep.toml differs: scenario, --vary, --judge, --sample, --seed or --seeds changed); choose another --out",
            dir.display()
        ));
    }
    for file in [UNITS, JOURNAL] {
        let path = dir.join(file);
        if path.exists() {
            done.read(&path, file == JOURNAL)?;
        }
    }
    Ok(())
}

/// Writes what the units `done` give. A complete sweep writes its results
/// first and `units.csv` last, so that a directory with `units.csv` is
/// finished (a kill before leaves the journal, and `--resume` finishes);
/// a shard writes `units.csv` alone. The journal goes last.
fn commit(dir: &Path, plan: &PlanFile, names: &[String], done: UnitSet) -> Result<(), String> {
    let complete = done.covers_plan();
    let mut units = done.into_units();
    let text = units::canonical(&mut units, names);
    let results = complete.then(|| output::results(plan, &units));
    if let Some(results) = &results {
        output::write_outputs(dir, plan, results)?;
    }
    write_file(&dir.join(UNITS), text.as_bytes())
        .map_err(|e| format!("{}: {e}", dir.join(UNITS).display()))?;
    let _ = fs::remove_file(dir.join(JOURNAL));
    match results {
        Some(results) => print_front(dir, plan, &results),
        None => {
            say!(
                "shard done: {} units in {}; `fdlab merge` the shard directories for the results",
                units.len(),
                dir.join(UNITS).display()
            );
            Ok(())
        }
    }
}

/// Simulates one seed with the plan's points `todo` (indices into every
/// point's scenario `points`) as the scenario's detectors.
fn run_seed(points: &ValidScenario, seed: u64, todo: &[usize]) -> Vec<Unit> {
    let totals = seed_totals(&points.select_detectors(todo), seed);
    todo.iter()
        .zip(totals)
        .map(|(&point, totals)| Unit {
            point,
            seed,
            totals,
        })
        .collect()
}

/// Prints the front of a complete sweep's results, written in `dir`.
fn print_front(dir: &Path, plan: &PlanFile, results: &[output::PointResult]) -> Result<(), String> {
    let front = output::front(results);
    say!(
        "\n{}: {} points × {} seeds; Pareto front of p99 detection time (a miss counts as never) against false Failed per pair-hour:",
        plan.scenario,
        plan.points.len(),
        plan.seeds
    );
    say!(
        "{:<8} {:>12} {:>16} {:>14} {:>8}  parameters",
        "point",
        "p99 (s)",
        "false Failed/p-h",
        "suspicions/p-h",
        "missed"
    );
    for &i in front.iter().take(20) {
        let r = &results[i];
        say!(
            "{:<8} {:>12.3} {:>16.4} {:>14.4} {:>8}  {}",
            plan.points[i].name,
            r.strict_p99.map_or(f64::NAN, |t| t.as_secs_f64()),
            r.rate(),
            r.summary.suspicion_rate().unwrap_or(0.0),
            r.summary.failed_missed,
            output::label(plan, i)
        );
    }
    if front.len() > 20 {
        say!("... {} more on the front (pareto.csv)", front.len() - 20);
    }
    if front.is_empty() {
        say!("(no point detected at least 99% of its must-detect faults)");
    }
    for note in front_notes::notes(plan, results, &front) {
        say!("{note}");
    }
    say!(
        "wrote {}, {} and {} in {}",
        output::SWEEP_CSV,
        output::PARETO_CSV,
        output::TRADEOFF_SVG,
        dir.display()
    );
    Ok(())
}
