//! `fdlab sweep` of a membership scenario: Orleans keys and a judge's keys
//! over a grid (or a sample) of points, each point × judge × seed one
//! cluster run ([`fdlab_sim::membership::run`]).
//!
//! There is no shadow mode here: a point that changes an Orleans key
//! changes the whole cluster, and judges cannot share a run (a declaration
//! changes the cluster). Which judges a point runs is the plan's
//! ([`fdlab_scenarios::cluster_plan`]): a varied judge alone, else every
//! judge of the scenario or those `--judge` names.
//!
//! The guarantees of a detector sweep hold: every point is checked before
//! anything runs; finished runs go to the journal as they end, so Ctrl-C
//! and `--resume` lose and redo nothing finished; one sweep at a time
//! holds the directory's lock; `--force` removes the sweep's own files and
//! nothing else; results are written atomically, and `units.csv` last. The
//! results depend only on the plan and the units, never on `--jobs`. Not
//! supported: `--shard` and `--shard-count` (and so `fdlab merge`): a
//! membership sweep runs on one machine.

use std::sync::atomic::Ordering;
use std::sync::Mutex;
use std::time::Instant;

use fdlab_reports::atomic::{ensure_dir, remove_stale_temporaries, write_file};
use fdlab_reports::cluster::ClusterRunTotals;
use fdlab_scenarios::cluster_plan::{cluster_plan, ClusterPlan};
use fdlab_sim::membership;
use fdlab_sim::valid::ValidScenario;
use rayon::prelude::*;

use super::cluster_output::{self, print_front};
use super::cluster_units::CLUSTER_HEADER;
use super::lock::SweepLock;
use super::units::{self, Journal, Unit, UnitSet, JOURNAL, UNITS};
use super::{on_interrupt, open, SweepArgs, INTERRUPTED, MAX_UNITS};
use crate::budget::{self, Work};
use crate::cluster_runs::distinct_sizes;
use crate::simulate::progress;

/// Checks every input and builds the plan, before anything runs.
fn make_plan(args: &SweepArgs, scenario: &ValidScenario) -> Result<ClusterPlan, String> {
    if args.shard.is_some() || args.shard_count.is_some() {
        return Err(format!(
            "--shard: `{}` is a membership scenario, whose sweep runs on one machine (shards and `fdlab merge` are for detector sweeps); leave it out, and --jobs sets the threads",
            scenario.name
        ));
    }
    let (dims, seeds) = super::dimensions_and_seeds(args, scenario)?;
    let plan = cluster_plan(
        scenario,
        &dims,
        &args.judge,
        args.sample.unwrap_or(0),
        args.seed,
        args.seed,
        seeds,
    )?;
    let units = plan.file.unit_count();
    if units > MAX_UNITS {
        return Err(format!(
            "--seeds: {} points x {} judges x {seeds} seeds make {units} cluster runs; at most {MAX_UNITS}",
            plan.file.points.len(),
            plan.file.judges.len()
        ));
    }
    Ok(plan)
}

/// What the sweep will simulate, for the size checks and `--dry-run`.
fn work_of(plan: &ClusterPlan) -> Result<Vec<(ValidScenario, u64)>, String> {
    let file = &plan.file;
    // As for `fdlab run`, a scenario's estimate per seed covers all its
    // judges (a variant has only the plan's).
    distinct_sizes((0..file.points.len()).map(|p| {
        Ok((
            file.points[p].name.clone(),
            plan.variant(p)?,
            u64::from(file.seeds),
        ))
    }))
}

/// `fdlab sweep` of membership scenario `scenario` (see the module docs).
pub fn run(args: &SweepArgs, scenario: &ValidScenario) -> Result<(), String> {
    let plan = make_plan(args, scenario)?;
    let threads = budget::threads(args.jobs)?;
    let kinds = work_of(&plan)?;
    let work = Work {
        runs: kinds.iter().map(|(s, n)| (s, *n)).collect(),
        logged: false,
    };
    let checked = budget::check(&work, &args.size, threads)?;
    if args.size.dry_run {
        return budget::dry_run(&work, &checked, threads);
    }
    let pool = crate::simulate::thread_pool(args.jobs)?;
    let file = &plan.file;
    let text = file.render()?;
    let keys: Vec<String> = (0..file.rows()).map(|r| file.row_key(r)).collect();
    let labels: Vec<String> = (0..file.rows()).map(|r| file.row_label(r)).collect();
    let dir = &args.out;
    if dir.exists() && !dir.is_dir() {
        return Err(format!("{}: is a file, not a directory", dir.display()));
    }
    ensure_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let _lock = SweepLock::acquire(dir)?;
    remove_stale_temporaries(dir);
    let mut done: UnitSet<ClusterRunTotals> =
        UnitSet::with_rows(keys.clone(), labels, file.first_seed, file.seeds);
    open(dir, &text, args, &mut done)?;
    let seeds = file.seed_list();
    // Seed-major, as a detector sweep: an interrupted sweep has whole seeds.
    let todo: Vec<(usize, u64)> = seeds
        .iter()
        .flat_map(|&seed| (0..file.rows()).map(move |row| (row, seed)))
        .filter(|&(row, seed)| !done.contains(row, seed))
        .collect();
    let total = file.unit_count();
    if !done.is_empty() {
        say!(
            "resuming {}: {} of {total} cluster runs already done",
            dir.display(),
            total - todo.len()
        );
    }
    on_interrupt();
    let journal = Mutex::new(Journal::open(dir, CLUSTER_HEADER)?);
    let bar = progress(todo.len() as u64, "cluster runs");
    let started = Instant::now();
    let results: Vec<Result<Option<Unit<ClusterRunTotals>>, String>> = pool.install(|| {
        todo.par_iter()
            .map(|&(row, seed)| {
                if INTERRUPTED.load(Ordering::SeqCst) {
                    return Ok(None);
                }
                let (point, judge) = file.row(row);
                let variant = plan.variant(point)?;
                let (outcome, _) = membership::run(&variant, seed, judge, false);
                let unit = Unit {
                    point: row,
                    seed,
                    totals: ClusterRunTotals::of(&outcome),
                };
                journal
                    .lock()
                    .map_err(|_| "the journal's lock was poisoned".to_string())?
                    .append(std::slice::from_ref(&unit), &keys)
                    .map_err(|e| format!("{}: {e}", dir.join(JOURNAL).display()))?;
                bar.inc(1);
                Ok(Some(unit))
            })
            .collect()
    });
    bar.finish_and_clear();
    let mut ran = 0;
    for r in results {
        if let Some(unit) = r? {
            done.add([unit]);
            ran += 1;
        }
    }
    let wall = started.elapsed().as_secs_f64();
    if !done.covers_plan() {
        let have = total - todo.len() + ran;
        return Err(format!(
            "interrupted: {have} of {total} cluster runs done and kept in {}; run the same command with --resume to continue",
            dir.join(JOURNAL).display()
        ));
    }
    say!(
        "{ran} cluster runs ({}, each point its own cluster) in {wall:.2} s on {} threads",
        cluster_output::size(file),
        pool.current_num_threads()
    );
    let mut units = done.into_units();
    let units_text = units::canonical(&mut units, &keys);
    let results = cluster_output::results(file, &units);
    cluster_output::write_outputs(dir, file, &results)?;
    write_file(&dir.join(UNITS), units_text.as_bytes())
        .map_err(|e| format!("{}: {e}", dir.join(UNITS).display()))?;
    let _ = std::fs::remove_file(dir.join(JOURNAL));
    print_front(dir, file, &results);
    Ok(())
}
