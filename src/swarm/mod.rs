//! `fdlab swarm SCENARIO --runs N` (SPEC §11, docs/swarm.md): each run
//! draws its own fault schedule swarm-style from the scenario's `[swarm]`
//! table, is simulated and checked against its `[properties]`; the first
//! violation of each property by each detector (or judge) is shrunk to a
//! smallest schedule that still violates it, written as a plain scenario
//! file (`minimal-<n>.toml`) with the `fdlab replay` command that shows it.
//!
//! Exit status 1 when a property was violated, 0 when every run held them.
//! The same arguments give the same files for any `--jobs`: runs are
//! collected in run order, shrinking is sequential per finding and keeps
//! the first failing candidate in order. The wall clock is read only for
//! `--time-budget` (with the time schedules take to validate, by which
//! shrinking steps are planned) and the speed printed last.

pub mod findings;
pub mod runs;

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use clap::Args;
use fdlab_protocol::Nanos;
use fdlab_reports::atomic::write_atomically;
use fdlab_reports::atomic::write_file;
use fdlab_reports::report_dir::{check_out, publish, ReportKind};
use fdlab_reports::swarm::output::{
    summary_table, write_findings, write_runs, write_violations, SWARM_CSV, SWARM_RUNS_CSV,
    VIOLATIONS_CSV,
};
use fdlab_scenarios::resolve::files_of;
use fdlab_scenarios::resolve_with_swarm;
use fdlab_scenarios::seed_range::seed_range;
use fdlab_sim::estimate::swarm::shrinking as shrink_estimate;
use fdlab_sim::scenario::{FaultKind, Strength};
use fdlab_sim::swarm;

use crate::budget::{self, SizeArgs, Work};
use crate::simulate::thread_pool;

/// Where a swarm's files go unless `--out` says otherwise.
pub const DEFAULT_OUT: &str = "swarm-out";
/// The share of `--time-budget` in which runs may start: the rest is kept
/// for shrinking what they found (a CI job bounded by the budget still
/// gets its reproducers).
pub const RUNS_SHARE_OF_BUDGET: f64 = 0.75;

#[derive(Args)]
pub struct SwarmArgs {
    /// A built-in scenario name or a scenario file; its `[swarm]` table
    /// says which faults to draw and `[properties]` what to check
    /// (docs/swarm.md). Its own faults are left out.
    #[arg(value_name = "SCENARIO")]
    scenario: String,
    /// Runs, with seeds S, S+1, ...; each draws its own schedule.
    #[arg(long, value_name = "N")]
    runs: u64,
    /// The first run's seed.
    #[arg(long, value_name = "S", default_value_t = 1)]
    seed: u64,
    /// Worker threads (default: one per core). Results do not depend on it.
    #[arg(long, value_name = "J")]
    jobs: Option<usize>,
    /// Directory for swarm.csv, violations.csv, runs.csv and the
    /// minimal-<n>.toml reproducers (replaced whole).
    #[arg(long, value_name = "DIR", default_value = DEFAULT_OUT)]
    out: PathBuf,
    /// Start no run after three quarters of this much time, and no
    /// shrinking step that would not end within all of it (`30s`, `10m`);
    /// the runs done are the first runs of the full swarm.
    #[arg(long, value_name = "T")]
    time_budget: Option<String>,
    #[command(flatten)]
    size: SizeArgs,
}

pub fn run(args: &SwarmArgs) -> Result<ExitCode, String> {
    let started = Instant::now();
    // Every input is checked before anything runs or is written.
    let (scenario, tables) = resolve_with_swarm(&args.scenario).map_err(|e| e.to_string())?;
    // The count first: the seeds are a vector of that many.
    budget::count_fits("--runs", args.runs)?;
    let seeds: Vec<u64> = seed_range(args.seed, args.runs, "--seed", "--runs")?.collect();
    let budget = match &args.time_budget {
        None => None,
        Some(text) => {
            let t: Nanos = text.parse().map_err(|e| format!("--time-budget: {e}"))?;
            if t.is_zero() {
                return Err("--time-budget: must be a positive duration, like 30s or 10m".into());
            }
            Some(Duration::from_nanos(t.as_nanos()))
        }
    };
    let threads = budget::threads(args.jobs)?;
    let work = Work {
        runs: vec![(&scenario, args.runs)],
        logged: false,
    };
    let checked = budget::check(&work, &args.size, threads)?;
    let setup = tables.setup();
    let kind = scenario.swarm_kind();
    let checks = tables.property_setup().checks(kind);
    // Shrinking's candidates are built a step at a time, each step's all
    // at once: sized by the largest schedule a run draws.
    let [_, most] = setup.faults_per_run();
    let shrinking = shrink_estimate(&scenario, most, checks.len());
    budget::check_shrinking(&scenario.name, most, &shrinking, threads)?;
    if args.size.dry_run {
        budget::dry_run_swarm(&work, &checked, threads, &shrinking, most)?;
        return Ok(ExitCode::SUCCESS);
    }
    let inputs = files_of(&args.scenario, &scenario);
    refuse_inputs_inside(&args.out, &inputs)?;
    check_out(&args.out, ReportKind::Swarm).map_err(|e| format!("{}: {e}", args.out.display()))?;
    let pool = thread_pool(args.jobs)?;
    let run_deadline = budget.map(|b| started + b.mul_f64(RUNS_SHARE_OF_BUDGET));
    let kinds = swarm::kinds(&scenario, &setup);
    say!(
        "swarm over {}: {} runs, seeds {} to {}",
        scenario.name,
        args.runs,
        seeds[0],
        seeds[seeds.len() - 1]
    );
    let own = scenario.faults.len() + scenario.random_faults.len();
    if own > 0 {
        say!(
            "  the scenario's own {own} fault entr{} left out: each run draws its own schedule",
            if own == 1 { "y is" } else { "ies are" }
        );
    }
    say!("{}", describe_draws(&scenario, &setup, &kinds));
    let done = runs::swarm_runs(&scenario, &setup, &checks, &seeds, &pool, run_deadline)?;
    if done.runs.is_empty() {
        // Only a budget stops runs from starting: one too small for any
        // run must not pass as a swarm that found nothing.
        return Err(format!(
            "--time-budget {}: the budget allowed no run to finish (one run takes about {:.2} s, estimated); give it more time",
            args.time_budget.as_deref().unwrap_or_default(),
            checked.estimates.first().map_or(0.0, budget::run_seconds)
        ));
    }
    // No shrinking step starts unless it can end within the budget: a
    // step's candidates are built and validated at once, about 2 f² faults
    // for a schedule of f faults, before its runs.
    let step = Duration::from_secs_f64(done.seconds_per_fault_check * shrinking.step_fault_checks);
    let deadline = budget.map(|b| (started + b).checked_sub(step).unwrap_or(started));
    let violated = done
        .runs
        .iter()
        .filter(|r| !r.violations.is_empty())
        .count();
    let samples = samples_dir(&args.scenario);
    let cx = findings::Context {
        scenario: &scenario,
        setup: &setup,
        checks: &checks,
        pool: &pool,
        deadline,
        samples_dir: samples.as_deref(),
    };
    let (found, cost) = findings::shrink_all(&cx, &done.runs)?;
    publish(&args.out, ReportKind::Swarm, |dir| {
        let findings: Vec<_> = found.iter().map(|r| r.finding.clone()).collect();
        write_atomically(&dir.join(SWARM_CSV), |out| write_findings(out, &findings))?;
        write_atomically(&dir.join(VIOLATIONS_CSV), |out| {
            write_violations(out, &done.runs)
        })?;
        write_atomically(&dir.join(SWARM_RUNS_CSV), |out| write_runs(out, &done.runs))?;
        for r in &found {
            write_file(&dir.join(&r.finding.file), r.text.as_bytes())?;
        }
        Ok(())
    })
    .map_err(|e| format!("{}: {e}", args.out.display()))?;

    say!();
    say!(
        "{} of {} runs violated a property; {} reproducer{} in {}:",
        violated,
        done.runs.len(),
        found.len(),
        if found.len() == 1 { "" } else { "s" },
        args.out.display()
    );
    let mut findings: Vec<_> = found.into_iter().map(|r| r.finding).collect();
    for f in &mut findings {
        // The console's commands name the files where they are.
        f.replay = f
            .replay
            .replacen(&f.file, &args.out.join(&f.file).display().to_string(), 1);
    }
    say!(
        "{}",
        summary_table(&checks, done.runs.len() as u64, &findings)
    );
    // The wall-clock figures, apart: they are the only lines that differ
    // between two runs of the same swarm.
    let events: u64 = done.runs.iter().map(|r| r.events).sum();
    say!(
        "speed: {} runs in {:.2} s ({:.1} runs/s, {:.2} M events/s on {} thread{}); shrinking: {} runs in {:.2} s",
        done.runs.len(),
        done.wall,
        done.runs.len() as f64 / done.wall.max(1e-9),
        events as f64 / done.wall.max(1e-9) / 1e6,
        pool.current_num_threads(),
        fdlab_reports::words::plural(pool.current_num_threads()),
        cost.runs,
        cost.wall
    );
    if done.runs.len() < seeds.len() || findings.iter().any(|f| !f.complete) {
        say!(
            "time budget {}: {} of {} runs done (the first {} of the full swarm, with the same results){}",
            args.time_budget.as_deref().unwrap_or_default(),
            done.runs.len(),
            seeds.len(),
            done.runs.len(),
            if findings.iter().any(|f| !f.complete) {
                "; shrinking was cut short, the reproducers may not be the smallest"
            } else {
                ""
            }
        );
    }
    Ok(if findings.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// What each run may draw, in one paragraph.
fn describe_draws(
    scenario: &fdlab_sim::valid::ValidScenario,
    setup: &fdlab_sim::scenario::SwarmSetup,
    kinds: &[FaultKind],
) -> String {
    let secs = |t: Nanos| format!("{}", t);
    let parts: Vec<String> = kinds
        .iter()
        .map(|&k| {
            let b = setup.bounds(k);
            let mut p = format!("{} (rate {}", k.name(), b.rate);
            if let Some([lo, hi]) = b.duration {
                p.push_str(&format!(", {}-{}", secs(lo), secs(hi)));
            }
            match b.strength {
                Some(Strength::ExtraLatency([lo, hi])) => p.push_str(&format!(", +{lo}-{hi}")),
                Some(Strength::Slowdown([lo, hi])) => p.push_str(&format!(", slowdown {lo}-{hi}")),
                Some(Strength::Offset([lo, hi])) => p.push_str(&format!(", step ±{lo}-{hi}")),
                Some(Strength::Probability([lo, hi])) => p.push_str(&format!(", p {lo}-{hi}")),
                Some(Strength::Capacity([lo, hi])) => p.push_str(&format!(", capacity {lo}-{hi}")),
                None => {}
            }
            if k == FaultKind::Partition {
                let nodes = scenario.topology.node_names().len() as u32;
                let shapes: Vec<&str> = setup
                    .partition_shapes(nodes)
                    .iter()
                    .map(|s| s.name())
                    .collect();
                p.push_str(&format!(", {}", shapes.join(" | ")));
            }
            if k == FaultKind::Loss {
                let l = setup.loss_bursts();
                if l.share > 0.0 {
                    p.push_str(&format!(
                        ", bursty {} (bursts {}-{}, gaps {}-{})",
                        l.share, l.burst[0], l.burst[1], l.gap[0], l.gap[1]
                    ));
                }
            }
            p.push(')');
            p
        })
        .collect();
    let [fewest, most] = setup.faults_per_run();
    let [from, to] = setup.start_window(scenario.duration);
    let expect = if scenario.is_lockrpc() {
        // A lock run detects nothing: its properties are the policies'.
        String::new()
    } else {
        format!(
            "; crashes, and pauses and partitions of {} or more, must be detected",
            setup.detect_from()
        )
    };
    format!(
        "  each run enables each kind with its rate: {}\n  and draws {fewest} to {most} faults of the enabled kinds starting between {from} and {to}{expect}",
        parts.join(", "),
    )
}

/// The directory a scenario file's samples are read from, absolute (none
/// for a built-in): the reproducers name the samples files by their
/// absolute paths.
fn samples_dir(arg: &str) -> Option<PathBuf> {
    let path = Path::new(arg);
    if !path.exists() {
        return None;
    }
    let parent = path.parent().filter(|p| !p.as_os_str().is_empty());
    parent.unwrap_or(Path::new(".")).canonicalize().ok()
}

/// A swarm replaces its directory whole: no input of it may be inside.
fn refuse_inputs_inside(dir: &Path, inputs: &[PathBuf]) -> Result<(), String> {
    let Ok(out) = dir.canonicalize() else {
        return Ok(());
    };
    for input in inputs {
        if input.canonicalize().is_ok_and(|p| p.starts_with(&out)) {
            return Err(format!(
                "--out {}: {} is inside it, and a swarm replaces its directory whole; choose another --out",
                dir.display(),
                input.display()
            ));
        }
    }
    Ok(())
}
