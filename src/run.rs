//! `fdlab run` (the main job) and `fdlab replay`.

use std::path::{Path, PathBuf};
use std::time::Instant;

use clap::Args;
use fdlab_protocol::Nanos;
use fdlab_reports::charts::timeline::Timeline;
use fdlab_reports::cluster::{cluster_terminal_table, write_cluster_replay, MembershipReport};
use fdlab_reports::lockrpc::{lockrpc_metrics, LockrpcMetrics};
use fdlab_reports::metrics::{scenario_metrics, ScenarioResult};
use fdlab_reports::placement::{placement_metrics, PlacementReport};
use fdlab_reports::replay::{write_replay, TIMELINE_HTML, TIMELINE_SVG, TRACE_CSV};
use fdlab_reports::report::{write_report_with, About, CHARTS_DIR, INDEX_HTML};
use fdlab_reports::report_dir::{check_out, ReportKind, RUN_REPORT_FILES};
use fdlab_reports::summary::Summary;
use fdlab_reports::tables::terminal_table;
use fdlab_scenarios::{builtin, resolve};
use fdlab_sim::engine;
use fdlab_sim::membership;
use fdlab_sim::plan::RunPlan;
use fdlab_sim::scores::ScoreSampler;
use fdlab_sim::valid::ValidScenario;

use crate::budget::{self, SizeArgs, Work};
use crate::cluster_runs::simulate_clusters;
use crate::lockrpc_runs::simulate_locks;
use crate::out_paths::{refuse_in_dir, scenario_inputs};
use crate::run_console::{
    self, print_lines, print_next, print_summary, print_tables, RunJson, RunView,
};
use crate::simulate::{simulate, thread_pool, Simulated};

/// Where reports go unless `--out` says otherwise.
pub const DEFAULT_OUT: &str = "reports-out";
/// Where a replay goes unless `--out` says otherwise: not the run's
/// directory, since a directory holds one report, replaced whole.
pub const DEFAULT_REPLAY_OUT: &str = "replay-out";

#[derive(Args)]
pub struct RunArgs {
    /// Built-in scenario names (see `fdlab list`) or scenario files; none runs
    /// the whole built-in suite.
    #[arg(value_name = "SCENARIO")]
    scenarios: Vec<String>,
    /// Seeds per scenario (default: each scenario's own `seeds`).
    #[arg(long, value_name = "N")]
    seeds: Option<u32>,
    /// First seed; runs use seeds S, S+1, ...
    #[arg(long, value_name = "S", default_value_t = 1)]
    seed: u64,
    /// Worker threads (default: one per core). Results do not depend on it.
    #[arg(long, value_name = "J")]
    jobs: Option<usize>,
    /// Directory for the reports.
    #[arg(long, value_name = "DIR", default_value = DEFAULT_OUT)]
    out: PathBuf,
    /// Print every scenario's full tables and verdict (the default when one
    /// scenario is run; a suite prints one line per scenario).
    #[arg(short, long, conflicts_with_all = ["quiet", "json"])]
    verbose: bool,
    /// Print nothing on standard output; errors still go to standard error.
    #[arg(short, long, conflicts_with = "json")]
    quiet: bool,
    /// Print the decision summary and every scenario's figures as one JSON
    /// document on standard output instead of text (docs/json.md).
    #[arg(long)]
    json: bool,
    /// Also write `mistakes.csv`, one row per mistake (tens of MB for the
    /// built-in suite).
    #[arg(long)]
    mistakes: bool,
    #[command(flatten)]
    size: SizeArgs,
}

/// `fdlab` with no arguments: the built-in suite with its own seed counts.
impl Default for RunArgs {
    fn default() -> Self {
        RunArgs {
            scenarios: Vec::new(),
            seeds: None,
            seed: 1,
            jobs: None,
            out: PathBuf::from(DEFAULT_OUT),
            verbose: false,
            quiet: false,
            json: false,
            mistakes: false,
            size: SizeArgs::default(),
        }
    }
}

/// How the command line named `scenario`: the argument it came from (a
/// file's path as given, or a built-in's name), or its name for the suite.
fn named_as<'a>(
    args: &'a [String],
    resolved: &[ValidScenario],
    scenario: &'a ValidScenario,
) -> &'a str {
    resolved
        .iter()
        .position(|r| r.name == scenario.name)
        .and_then(|i| args.get(i))
        .map_or(scenario.name.as_str(), String::as_str)
}

#[derive(Args)]
pub struct ReplayArgs {
    /// A built-in scenario name or a scenario file.
    #[arg(value_name = "SCENARIO")]
    scenario: String,
    /// The seed of the run to replay.
    #[arg(long, value_name = "S")]
    seed: u64,
    /// The monitored pair to draw in the timeline, as two node names
    /// (default: the first pair affected by a fault).
    #[arg(long, value_name = "MONITOR,TARGET")]
    pair: Option<String>,
    /// A membership scenario: the judge whose cluster run to replay
    /// (default: its first judge).
    #[arg(long, value_name = "NAME")]
    judge: Option<String>,
    /// Directory for `trace.csv`, `timeline.svg` and `timeline.html`
    /// (default: `replay-out/<scenario>-<seed>[-<judge>]`, one directory per
    /// replay, so that a replay never replaces another's).
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    #[command(flatten)]
    size: SizeArgs,
}

/// `MONITOR,TARGET` as two trimmed, non-empty names.
fn parse_pair(text: &str) -> Result<(&str, &str), String> {
    let parts: Vec<&str> = text.split(',').map(str::trim).collect();
    match parts[..] {
        [m, t] if !m.is_empty() && !t.is_empty() => Ok((m, t)),
        _ => Err(format!(
            "--pair: expected MONITOR,TARGET (two node names and a comma), got `{}`",
            fdlab_scenarios::excerpt::excerpt(text)
        )),
    }
}

pub fn run(args: &RunArgs) -> Result<(), String> {
    // Every input is checked before anything runs or is written.
    let scenarios: Vec<ValidScenario> = if args.scenarios.is_empty() {
        builtin()
            .iter()
            .map(|(name, _)| resolve(name).map_err(|e| e.to_string()))
            .collect::<Result<_, _>>()?
    } else {
        args.scenarios
            .iter()
            .map(|s| resolve(s).map_err(|e| e.to_string()))
            .collect::<Result<_, _>>()?
    };
    if args.seeds == Some(0) {
        return Err("--seeds: must be at least 1".into());
    }
    let threads = budget::threads(args.jobs)?;
    let work = Work {
        runs: scenarios
            .iter()
            .map(|s| (s, u64::from(args.seeds.unwrap_or(s.seeds))))
            .collect(),
        logged: false,
    };
    let checked = budget::check(&work, &args.size, threads)?;
    if args.size.dry_run {
        return budget::dry_run(&work, &checked, threads);
    }
    // The more specific refusal first: an output that would replace an input.
    let inputs = scenario_inputs(&args.scenarios, &scenarios);
    refuse_in_dir(
        "--out",
        &args.out,
        &RUN_REPORT_FILES,
        &[CHARTS_DIR],
        &inputs,
    )?;
    check_out(&args.out, ReportKind::Run).map_err(|e| format!("{}: {e}", args.out.display()))?;
    let pool = thread_pool(args.jobs)?;
    // Membership scenarios run as clusters, one run per judge and seed; the
    // others as detector pairs in shadow mode.
    // Lock-RPC scenarios run once per policy and seed (SPEC §10).
    let (locks, others): (Vec<&ValidScenario>, Vec<&ValidScenario>) =
        scenarios.iter().partition(|s| s.is_lockrpc());
    let (clusters, pairs): (Vec<&ValidScenario>, Vec<&ValidScenario>) =
        others.into_iter().partition(|s| s.is_membership());
    let pairs: Vec<ValidScenario> = pairs.into_iter().cloned().collect();
    let Simulated {
        results,
        placements,
        runs,
        events,
        wall,
        threads,
    } = simulate(&pairs, args.seeds, args.seed, &pool)?;
    let clustered = simulate_clusters(&clusters, args.seeds, args.seed, &pool)?;
    let locked = simulate_locks(&locks, args.seeds, args.seed, &pool)?;
    let lockrpc: Vec<LockrpcMetrics> = locks
        .iter()
        .zip(&locked.results)
        .map(|(s, r)| lockrpc_metrics(&s.name, r))
        .collect();
    let metrics: Vec<_> = results.iter().map(scenario_metrics).collect();
    // A placement scenario's costs, beside its detectors' own figures.
    let mut placement: Vec<PlacementReport> = metrics
        .iter()
        .zip(&placements)
        .filter(|(_, p)| !p.is_empty())
        .map(|(m, p)| {
            let detect: Vec<(String, Option<Nanos>)> = m
                .summary
                .iter()
                .map(|d| (d.detector.clone(), d.failed.map(|f| f.p50)))
                .collect();
            PlacementReport {
                metrics: placement_metrics(&m.scenario, p, &detect),
            }
        })
        .collect();
    let membership: Vec<MembershipReport> = clusters
        .iter()
        .zip(&clustered.results)
        .map(|(s, r)| MembershipReport::new(s, &r.runs))
        .collect();
    // A cluster's clients placing keys by their views: the judges' costs,
    // beside the time each takes to declare a crash.
    for (report, result) in membership.iter().zip(&clustered.results) {
        if result.placements.is_empty() {
            continue;
        }
        let declare: Vec<(String, Option<Nanos>)> = report
            .metrics
            .summary
            .iter()
            .map(|j| (j.judge.clone(), j.declare.map(|d| d.p50)))
            .collect();
        let mut metrics = placement_metrics(&report.metrics.scenario, &result.placements, &declare);
        metrics.by_view = true;
        placement.push(PlacementReport { metrics });
    }
    let about: Vec<About> = pairs
        .iter()
        .map(|s| About::of(s).invoked(named_as(&args.scenarios, &scenarios, s)))
        .collect();
    let summary = Summary::of_run(&metrics, &membership, &placement, &lockrpc);
    let view = RunView {
        pairs: &pairs,
        metrics: &metrics,
        clusters: &clusters,
        membership: &membership,
        placement: &placement,
        locks: &locks,
        lockrpc: &lockrpc,
        about: &about,
    };
    let text = !args.quiet && !args.json;
    let width = run_console::width();
    if text {
        print_summary(&summary, width);
        if args.verbose || scenarios.len() == 1 {
            print_tables(&view);
        } else {
            print_lines(&view, width);
        }
        print_next(&view, width);
        say!();
    }
    let report_started = Instant::now();
    write_report_with(
        &args.out,
        &metrics,
        &about,
        &membership,
        &placement,
        &lockrpc,
        args.mistakes,
    )
    .map_err(|e| format!("{}: {e}", args.out.display()))?;
    let report_wall = report_started.elapsed().as_secs_f64();
    let (runs, events, wall) = (
        runs + clustered.runs + locked.runs,
        events + clustered.events + locked.events,
        wall + clustered.wall + locked.wall,
    );
    let index = args.out.join(INDEX_HTML);
    if args.json {
        return RunJson::new(&view, summary, index.display().to_string()).print();
    }
    if text {
        // The process's peak memory (Linux), for a user sizing a larger
        // run, and for `fdlab bench`'s end-to-end rows, which read it here.
        let peak = crate::bench::vm_hwm_kib().map_or(String::new(), |kib| {
            format!(", peak memory {:.1} MiB", kib as f64 / 1024.0)
        });
        say!(
            "{runs} runs, {events} simulated events in {wall:.2} s ({:.2} M events/s on {threads} thread{}){peak}",
            events as f64 / wall.max(1e-9) / 1e6,
            fdlab_reports::words::plural(threads),
        );
        say!("report written in {report_wall:.2} s: {}", index.display());
    }
    Ok(())
}

/// The judge a membership replay runs (an index into the scenario's
/// judges, and its name), or `None` for a detector scenario.
fn replay_judge(
    args: &ReplayArgs,
    scenario: &ValidScenario,
) -> Result<Option<(usize, String)>, String> {
    if !scenario.is_membership() {
        return Ok(None);
    }
    let names = scenario.judge_names();
    let judge = match &args.judge {
        None => 0,
        Some(name) => names.iter().position(|n| n == name).ok_or_else(|| {
            format!(
                "--judge {}: {} has no such judge; its judges: {}",
                fdlab_scenarios::excerpt::excerpt(name),
                scenario.name,
                names.join(", ")
            )
        })?,
    };
    Ok(names.get(judge).map(|name| (judge, name.clone())))
}

/// `replay-out/<scenario>-<seed>[-<judge>]`, made safe for a file name as
/// a report's file stems are ([`fdlab_reports::report::file_stem`]).
fn default_replay_dir(scenario: &str, seed: u64, judge: Option<&str>) -> PathBuf {
    let mut name = format!("{scenario}-{seed}");
    if let Some(judge) = judge {
        name = format!("{name}-{judge}");
    }
    Path::new(DEFAULT_REPLAY_OUT).join(fdlab_reports::report::file_stem(&name, &[]))
}

pub fn replay(args: &ReplayArgs) -> Result<(), String> {
    let scenario = resolve(&args.scenario).map_err(|e| e.to_string())?;
    let work = Work {
        runs: vec![(&scenario, 1)],
        logged: true,
    };
    let checked = budget::check(&work, &args.size, 1)?;
    if args.size.dry_run {
        return budget::dry_run(&work, &checked, 1);
    }
    let inputs = scenario_inputs(
        std::slice::from_ref(&args.scenario),
        std::slice::from_ref(&scenario),
    );
    let judge = replay_judge(args, &scenario)?;
    let out = args.out.clone().unwrap_or_else(|| {
        default_replay_dir(
            &scenario.name,
            args.seed,
            judge.as_ref().map(|j| j.1.as_str()),
        )
    });
    let written = [TRACE_CSV, TIMELINE_SVG, TIMELINE_HTML];
    refuse_in_dir("--out", &out, &written, &[], &inputs)?;
    check_out(&out, ReportKind::Replay).map_err(|e| format!("{}: {e}", out.display()))?;
    if scenario.is_lockrpc() {
        return Err(format!(
            "{}: a lock-RPC scenario has no monitored pair to replay; `fdlab run` it (docs/lockrpc.md)",
            scenario.name
        ));
    }
    if let Some((judge, _)) = judge {
        return replay_cluster(args, &scenario, judge, &out);
    }
    if let Some(judge) = &args.judge {
        return Err(format!(
            "--judge {}: {} is not a membership scenario (it has no judges; see --pair)",
            fdlab_scenarios::excerpt::excerpt(judge),
            scenario.name
        ));
    }
    // The pair is checked against this seed's layout before anything runs.
    let planned = RunPlan::build(&scenario, args.seed);
    let pair = match &args.pair {
        Some(text) => {
            let (m, t) = parse_pair(text)?;
            planned
                .find_pair(m, t)
                .map_err(|e| format!("--pair {text}: {e}"))?
        }
        None => planned
            .default_pair()
            .ok_or_else(|| format!("{}: no monitored pair to draw", scenario.name))?,
    };
    let started = Instant::now();
    let mut sampler = ScoreSampler::new(pair, scenario.detectors.len(), scenario.duration);
    let (outcome, records) = engine::run_with_scores(&scenario, args.seed, &mut sampler);
    let wall = started.elapsed().as_secs_f64();
    let series = sampler.finish(outcome.duration);
    let records = records.unwrap_or_default();
    let timeline = Timeline::of_run(&scenario, &outcome, pair, &series);
    let digest = write_replay(&out, &outcome, &records, &timeline)
        .map_err(|e| format!("{}: {e}", out.display()))?;
    let metrics = scenario_metrics(&ScenarioResult {
        scenario: scenario.name.clone(),
        runs: vec![outcome.clone()],
    });
    say!("{}", terminal_table(&metrics));
    say!(
        "{} trace records, {} simulated events in {wall:.2} s -> {}",
        records.len(),
        outcome.events,
        out.join(TRACE_CSV).display()
    );
    say!(
        "timeline of {} -> {}: {}",
        timeline.monitor,
        timeline.target,
        out.join(TIMELINE_HTML).display()
    );
    say!("trace digest (SHA-256 of trace.csv): {digest}");
    Ok(())
}

/// `fdlab replay` of a membership scenario: one judge's cluster run, its
/// log (`trace.csv`) and timeline.
fn replay_cluster(
    args: &ReplayArgs,
    scenario: &ValidScenario,
    judge: usize,
    out: &Path,
) -> Result<(), String> {
    if args.pair.is_some() {
        return Err(format!(
            "--pair: {} is a membership scenario; choose a judge with --judge instead",
            scenario.name
        ));
    }
    let started = Instant::now();
    let (outcome, log) = membership::run(scenario, args.seed, judge, true);
    let wall = started.elapsed().as_secs_f64();
    let log = log.unwrap_or_default();
    let digest =
        write_cluster_replay(out, &outcome, &log).map_err(|e| format!("{}: {e}", out.display()))?;
    let report = MembershipReport::new(scenario, std::slice::from_ref(&outcome));
    say!("{}", cluster_terminal_table(&report.metrics));
    say!(
        "{} trace records, {} simulated events in {wall:.2} s -> {}",
        log.len(),
        outcome.events,
        out.join(TRACE_CSV).display()
    );
    say!(
        "timeline of the cluster under `{}`: {}",
        outcome.label,
        out.join(TIMELINE_HTML).display()
    );
    say!("trace digest (SHA-256 of trace.csv): {digest}");
    Ok(())
}
