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

pub mod output;
pub mod units;

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use clap::Args;
use fdlab_reports::atomic::{ensure_dir, write_file};
use fdlab_scenarios::resolve;
use fdlab_sim::valid::ValidScenario;
use rayon::prelude::*;

use crate::simulate::{progress, seed_totals, thread_pool};
use fdlab_scenarios::sweep_plan::{plan, Plan, PlanFile, Shard};
use fdlab_scenarios::vary::parse_vary;
use units::{Journal, Unit, JOURNAL, UNITS};

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
    /// a grid.
    #[arg(long = "vary", value_name = "KEY=SPEC", required = true)]
    vary: Vec<String>,
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
}

#[derive(Args)]
pub struct MergeArgs {
    /// Shard directories of one sweep (each with sweep.toml and units.csv).
    #[arg(value_name = "DIR", required = true)]
    dirs: Vec<PathBuf>,
    /// Directory for the merged sweep.
    #[arg(long, value_name = "DIR", default_value = DEFAULT_OUT)]
    out: PathBuf,
}

/// Set by Ctrl-C: no new seed starts; finished units are already on disk.
static INTERRUPTED: AtomicBool = AtomicBool::new(false);

fn on_interrupt() {
    // A second handler would fail; one per process is all we need.
    let _ = ctrlc::set_handler(|| INTERRUPTED.store(true, Ordering::SeqCst));
}

/// What a sweep computed: its plan and every finished unit of its shard.
pub struct SweepRun {
    pub plan: Plan,
    pub units: Vec<Unit>,
    /// Whether the units cover the whole plan (not a shard).
    pub complete: bool,
}

/// Builds the plan of `args` (checking every input before anything runs).
fn make_plan(args: &SweepArgs, scenario: &ValidScenario) -> Result<(Plan, ValidScenario), String> {
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
    let plan = plan(
        scenario,
        &dims,
        args.sample.unwrap_or(0),
        args.seed,
        args.seed,
        seeds,
    )?;
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

/// Runs (or resumes) a sweep; see the module docs.
pub fn sweep(args: &SweepArgs) -> Result<SweepRun, String> {
    let scenario = resolve(&args.scenario).map_err(|e| e.to_string())?;
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
    let (plan, points) = make_plan(args, &scenario)?;
    let shard = shard_of(args)?;
    let pool = thread_pool(args.jobs)?;
    let text = plan.file.render()?;
    let names: Vec<String> = plan.file.points.iter().map(|p| p.name.clone()).collect();
    let dir = &args.out;
    let plan_path = dir.join(PLAN);
    let started_before =
        plan_path.exists() || dir.join(JOURNAL).exists() || dir.join(UNITS).exists();
    let mut done: Vec<Unit> = Vec::new();
    if started_before {
        if !args.resume {
            return Err(format!(
                "{} already holds a sweep; --resume continues it, or choose another --out",
                dir.display()
            ));
        }
        let existing =
            fs::read_to_string(&plan_path).map_err(|e| format!("{}: {e}", plan_path.display()))?;
        if existing != text {
            return Err(format!(
                "{} holds a different sweep (its sweep.toml differs: scenario, --vary, --sample, --seed or --seeds changed); choose another --out",
                dir.display()
            ));
        }
        for file in [UNITS, JOURNAL] {
            let path = dir.join(file);
            if path.exists() {
                done.extend(units::read(&path, &names, file == JOURNAL)?);
            }
        }
    } else {
        ensure_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        write_file(&plan_path, text.as_bytes())
            .map_err(|e| format!("{}: {e}", plan_path.display()))?;
    }
    let mine = shard.units(plan.file.points.len(), plan.file.seeds as usize);
    let seeds = plan.file.seed_list();
    let finished: std::collections::BTreeSet<(usize, u64)> =
        done.iter().map(|u| (u.point, u.seed)).collect();
    // Remaining units, grouped by seed: one simulation per seed.
    let mut todo: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    for &(s, p) in &mine {
        if !finished.contains(&(p, seeds[s])) {
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
    let journal = Mutex::new(Journal::open(dir)?);
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
        done.extend(r?);
    }
    let wall = started.elapsed().as_secs_f64();
    if INTERRUPTED.load(Ordering::SeqCst) && done.len() < mine.len() {
        return Err(format!(
            "interrupted: {} of {} units done and kept in {}; run the same command with --resume to continue",
            done.len(),
            mine.len(),
            dir.join(JOURNAL).display()
        ));
    }
    say!(
        "{remaining} units ({} seeds simulated once each for all their points) in {wall:.2} s on {} threads",
        groups.len(),
        pool.current_num_threads()
    );
    let text = units::canonical(&mut done, &names);
    write_file(&dir.join(UNITS), text.as_bytes())
        .map_err(|e| format!("{}: {e}", dir.join(UNITS).display()))?;
    let _ = fs::remove_file(dir.join(JOURNAL));
    let complete = done.len() == plan.file.unit_count();
    Ok(SweepRun {
        plan,
        units: done,
        complete,
    })
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

/// `fdlab sweep`: run, then write and print the results (or say what a
/// shard left to merge).
pub fn run(args: &SweepArgs) -> Result<(), String> {
    let done = sweep(args)?;
    if !done.complete {
        say!(
            "shard done: {} units in {}; `fdlab merge` the shard directories for the results",
            done.units.len(),
            args.out.join(UNITS).display()
        );
        return Ok(());
    }
    finish(&args.out, &done.plan.file, &done.units)
}

/// Writes the results of a complete sweep and prints its front.
fn finish(dir: &Path, plan: &PlanFile, units: &[Unit]) -> Result<(), String> {
    let results = output::results(plan, units);
    output::write_outputs(dir, plan, &results)?;
    let front = output::front(&results);
    say!(
        "\n{}: {} points × {} seeds; Pareto front of p99 detection time (a miss counts as never) against mistakes per pair-hour:",
        plan.scenario,
        plan.points.len(),
        plan.seeds
    );
    say!(
        "{:<8} {:>12} {:>14} {:>8}  parameters",
        "point",
        "p99 (s)",
        "mistakes/p-h",
        "missed"
    );
    for &i in front.iter().take(20) {
        let r = &results[i];
        say!(
            "{:<8} {:>12.3} {:>14.4} {:>8}  {}",
            plan.points[i].name,
            r.strict_p99.map_or(f64::NAN, |t| t.as_secs_f64()),
            r.rate(),
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
    say!(
        "wrote {}, {} and {} in {}",
        output::SWEEP_CSV,
        output::PARETO_CSV,
        output::TRADEOFF_SVG,
        dir.display()
    );
    Ok(())
}

/// `fdlab merge`: joins shard directories into what one unsharded sweep writes.
pub fn merge(args: &MergeArgs) -> Result<(), String> {
    let mut text: Option<(PathBuf, String)> = None;
    for dir in &args.dirs {
        let path = dir.join(PLAN);
        let t = fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        match &text {
            None => text = Some((dir.clone(), t)),
            Some((first, t0)) if *t0 != t => {
                return Err(format!(
                    "{} and {} hold different sweeps (their sweep.toml differ)",
                    first.display(),
                    dir.display()
                ))
            }
            Some(_) => {}
        }
    }
    let (_, text) = text.ok_or("no directory to merge")?;
    let plan: PlanFile = toml::from_str(&text).map_err(|e| format!("{PLAN}: {e}"))?;
    let names: Vec<String> = plan.points.iter().map(|p| p.name.clone()).collect();
    let mut all: BTreeMap<(usize, u64), Unit> = BTreeMap::new();
    for dir in &args.dirs {
        let path = dir.join(UNITS);
        if !path.exists() {
            return Err(if dir.join(JOURNAL).exists() {
                format!(
                    "{}: the shard is unfinished; rerun it with --resume",
                    dir.display()
                )
            } else {
                format!("{}: no {UNITS}", dir.display())
            });
        }
        for u in units::read(&path, &names, false)? {
            match all.get(&(u.point, u.seed)) {
                Some(prev) if *prev != u => {
                    return Err(format!(
                        "{}: point {} on seed {} differs from another shard's",
                        path.display(),
                        names[u.point],
                        u.seed
                    ))
                }
                _ => {
                    all.insert((u.point, u.seed), u);
                }
            }
        }
    }
    let seeds = plan.seed_list();
    let missing: Vec<(usize, u64)> = (0..plan.points.len())
        .flat_map(|p| seeds.iter().map(move |&s| (p, s)))
        .filter(|k| !all.contains_key(k))
        .collect();
    if let Some(&(p, s)) = missing.first() {
        return Err(format!(
            "{} of {} units are missing (e.g. point {} on seed {s}): is a shard directory left out?",
            missing.len(),
            plan.unit_count(),
            names[p]
        ));
    }
    let out = &args.out;
    ensure_dir(out).map_err(|e| format!("{}: {e}", out.display()))?;
    let mut units: Vec<Unit> = all.into_values().collect();
    let units_text = units::canonical(&mut units, &names);
    write_file(&out.join(PLAN), text.as_bytes()).map_err(|e| format!("{}: {e}", out.display()))?;
    write_file(&out.join(UNITS), units_text.as_bytes())
        .map_err(|e| format!("{}: {e}", out.display()))?;
    let _ = fs::remove_file(out.join(JOURNAL));
    finish(out, &plan, &units)
}
