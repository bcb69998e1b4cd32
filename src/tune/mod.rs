//! `fdlab tune SCENARIO|--trace FILE --detector KIND`: searches a detector's
//! parameters on a simulated scenario or on a recorded heartbeat trace, and
//! recommends a setting.
//!
//! On a scenario, every setting of the grid watches the same simulated
//! traffic (each seed is simulated once with all of them, as in
//! `fdlab sweep`); detection times are those of the scenario's detect-faults
//! and mistakes (false Failed and suspicions apart) are counted per
//! monitored-pair-hour.
//!
//! The trace gives the heartbeat period (its median inter-arrival time), the
//! grid comes from [`fdlab_scenarios::search_space`], every point is evaluated
//! by [`fdlab_sim::heartbeat_eval::evaluate`] (mistakes on the trace as recorded,
//! detection time by cutting it at random instants, after Chen, Toueg &
//! Aguilera 2002 and Hayashibara et al. 2004), and [`rank`] picks the fastest
//! point within the mistake bounds ([`rank::Constraint`]: false Failed,
//! suspicions, or all mistakes per hour). Points run in parallel; the result is the
//! same for any number of threads (each point is independent and the ranking
//! is a total order).
//!
//! Exit status: 0 with a recommendation; 2 when no point meets the constraint
//! (so a CI job notices), after showing the point with the fewest mistakes;
//! 1 on bad input, with nothing written.

pub mod cluster;
pub mod cluster_render;
pub mod rank;
pub mod render;

use std::io::{self, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Args;
use fdlab_protocol::Nanos;
use fdlab_reports::atomic::write_file;
use fdlab_scenarios::detector_spec::parse_key_values;
use fdlab_scenarios::heartbeat_recording::parse_heartbeat_recording;
use fdlab_scenarios::read_limit::{open_limited, RECORDING_LIMIT};
use fdlab_scenarios::search_space::{search_space, End, Point, SearchSpace};
use fdlab_sim::heartbeat_eval::{
    evaluate, median_interval, HeartbeatEvalError, HeartbeatEvaluation,
};
use rayon::prelude::*;

use fdlab_sim::scenario::DetectorSetup;

use crate::budget::{self, SizeArgs, Work};
use crate::out_paths::{refuse_same_file, Input};
use crate::simulate::{seed_list, simulate_points};
use rank::{rank, Candidate, Constraint, Objective};

/// Exit status when no setting meets the mistake constraint.
pub const EXIT_NO_SETTING: u8 = 2;

/// Default crash instants drawn per setting: enough that the p99 rests on ten
/// samples.
pub const DEFAULT_CUTS: usize = 1_000;
/// Most cuts accepted (memory and time grow with them).
pub const MAX_CUTS: usize = 1_000_000;

#[derive(Args)]
pub struct TuneArgs {
    /// A built-in scenario name or a scenario file to tune on (or --trace).
    #[arg(
        value_name = "SCENARIO",
        required_unless_present = "trace",
        conflicts_with = "trace"
    )]
    scenario: Option<String>,
    /// Heartbeat arrivals recorded in a real system: CSV with a `time_ms` column
    /// (decimal ms; other columns ignored); `-` reads standard input.
    #[arg(long, value_name = "FILE")]
    trace: Option<PathBuf>,
    /// With SCENARIO: seeds per setting (default: the scenario's `seeds`).
    #[arg(long, value_name = "N")]
    seeds: Option<u32>,
    /// The detector kind to tune: fixed-timeout, phi-accrual, dataflow-decay,
    /// two-stage or (on a scenario) adaptive-probe. Not on a membership
    /// scenario, whose judges are tuned.
    #[arg(long, value_name = "KIND")]
    detector: Option<String>,
    /// A membership scenario: tune only this judge (repeat for several;
    /// default: every judge).
    #[arg(long, value_name = "NAME", conflicts_with = "trace")]
    judge: Vec<String>,
    /// Most mistakes per hour a setting may make, false Failed and
    /// suspicions together (per hour of trace, or per monitored-pair-hour of a
    /// scenario). With none of the three --max-* bounds: 0, no mistake at all.
    #[arg(long, value_name = "X", value_parser = parse_rate)]
    max_mistakes_per_hour: Option<f64>,
    /// Most false Failed per hour: mistakes that reach Failed about a live
    /// peer (what a failover acts on).
    #[arg(long, value_name = "X", value_parser = parse_rate)]
    max_false_failed_per_hour: Option<f64>,
    /// Most suspicions per hour: mistakes that stay Suspect and end without
    /// a Failed.
    #[arg(long, value_name = "X", value_parser = parse_rate)]
    max_suspicions_per_hour: Option<f64>,
    /// Detection-time figure to minimize [default: p99; on a membership
    /// scenario p50, of the time to a Dead declaration].
    #[arg(long, value_enum)]
    objective: Option<Objective>,
    /// Keys to hold fixed instead of searching or deriving them from the trace
    /// (`acceptable_heartbeat_pause=2s,name=phi-edge`), as in a scenario's
    /// `[[detectors]]` table.
    #[arg(long, value_name = "KEY=VALUE,...")]
    set: Option<String>,
    /// Crash instants drawn per setting to measure detection time.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_CUTS)]
    cuts: usize,
    /// Seed of the crash instants (--trace), or the first seed (SCENARIO).
    #[arg(long, value_name = "S", default_value_t = 1)]
    seed: u64,
    /// Worker threads (default: one per core). Results do not depend on it.
    #[arg(long, value_name = "J")]
    jobs: Option<usize>,
    #[command(flatten)]
    size: SizeArgs,
    /// Also write every setting with its figures here as CSV (atomically).
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
}

impl TuneArgs {
    /// The bounds of the three `--max-*-per-hour` flags.
    fn constraint(&self) -> Constraint {
        Constraint::from_flags(
            self.max_false_failed_per_hour,
            self.max_suspicions_per_hour,
            self.max_mistakes_per_hour,
        )
    }
}

fn parse_rate(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(x) if x.is_finite() && x >= 0.0 => Ok(x),
        _ => Err(format!(
            "`{}` is not a number of mistakes per hour (0 or more)",
            fdlab_scenarios::excerpt::excerpt(text)
        )),
    }
}

/// The evaluated grid: what the ranking and the report need.
struct Evaluated {
    /// Lines that say what was searched, before the recommendation.
    header: Vec<String>,
    space: SearchSpace,
    points: Vec<Point>,
    candidates: Vec<Candidate>,
    /// What detection times were measured on, in the singular (`cut`,
    /// `pause fault window`).
    crashes: String,
}

pub fn run(args: &TuneArgs) -> Result<ExitCode, String> {
    // A membership scenario tunes its judges (an unreadable scenario is
    // reported below, in the order of the checks of a detector's tuning).
    if let (Some(arg), None) = (&args.scenario, &args.trace) {
        if let Ok(scenario) = fdlab_scenarios::resolve(arg) {
            if scenario.is_membership() {
                return cluster::run(args, arg, &scenario);
            }
        }
    }
    if let Some(judge) = args.judge.first() {
        return Err(format!(
            "--judge {}: only a membership scenario has judges; tune a detector with --detector KIND",
            fdlab_scenarios::excerpt::excerpt(judge)
        ));
    }
    // Every argument is checked before the input is read, the input before any
    // evaluation, and nothing is written before everything has run.
    let kind = args
        .detector
        .as_deref()
        .ok_or("--detector: required: the detector kind to tune (fixed-timeout, phi-accrual, dataflow-decay, two-stage, adaptive-probe)")?
        .trim();
    let objective = args.objective.unwrap_or(Objective::P99);
    search_space(kind, Nanos::from_secs(1)).map_err(|e| format!("--detector: {e}"))?;
    let pins = match &args.set {
        Some(text) => parse_key_values(text).map_err(|e| format!("--set: {e}"))?,
        None => Vec::new(),
    };
    if let Some(out) = &args.out {
        crate::out_paths::refuse_unwritable_file("--out", out)?;
    }
    let pool = crate::simulate::thread_pool(args.jobs)?;
    let Evaluated {
        header: mut report,
        space,
        points,
        candidates,
        crashes,
    } = match (&args.scenario, &args.trace) {
        (Some(scenario), None) => match on_scenario(args, scenario, kind, pins, &pool)? {
            Some(evaluated) => evaluated,
            None => return Ok(ExitCode::SUCCESS),
        },
        (None, Some(trace)) => on_trace(args, trace, kind, pins, &pool)?,
        _ => return Err("give a SCENARIO or --trace FILE (one of them)".into()),
    };
    let constraint = args.constraint();
    let ranking = rank(&candidates, objective, &constraint);

    let status = match ranking.best() {
        Some(best) => {
            report.push(format!("recommended: {}", points[best].describe()));
            report.extend(render::evidence(&candidates[best], &crashes).map(|l| format!("  {l}")));
            report.push(format!(
                "  {} of {} settings meet the constraint",
                ranking.feasible,
                points.len()
            ));
            if let Some(note) = edge_note(&space, &points[best]) {
                report.push(note);
            }
            let runner_ups = render::runner_ups(
                &points,
                &candidates,
                &ranking,
                objective,
                render::RUNNER_UPS,
            );
            if !runner_ups.is_empty() {
                report.push(String::new());
                report.push("runner-ups:".into());
                report.extend(runner_ups.into_iter().map(|l| format!("  {l}")));
            }
            report.push(String::new());
            report.push("paste into a scenario (keys not shown keep their defaults):".into());
            report.push(snippet(&points[best], kind));
            ExitCode::SUCCESS
        }
        None => {
            let least = ranking.order[0];
            report.push(format!(
                "no setting meets the constraint of {} on this {}; \
                 the closest to it is: {}",
                constraint.describe("per hour"),
                if args.trace.is_some() {
                    "trace"
                } else {
                    "scenario"
                },
                points[least].describe()
            ));
            report.extend(render::evidence(&candidates[least], &crashes).map(|l| format!("  {l}")));
            let keys: Vec<&str> = space.axes.iter().map(|a| a.key.as_str()).collect();
            report.push(if keys.is_empty() {
                "  raise the --max-*-per-hour bounds, or hold other values with --set KEY=VALUE".into()
            } else {
                format!(
                    "  raise the --max-*-per-hour bounds, or hold one of the searched keys ({}) with --set KEY=VALUE to search elsewhere",
                    keys.join(", ")
                )
            });
            report.push(String::new());
            report.push("its table (does not meet the constraint):".into());
            report.push(snippet(&points[least], kind));
            ExitCode::from(EXIT_NO_SETTING)
        }
    };

    if let Some(out) = &args.out {
        let table = render::points_csv(&points, &candidates, &ranking);
        write_file(out, table.as_bytes()).map_err(|e| format!("{}: {e}", out.display()))?;
        report.push(format!("every setting: {}", out.display()));
    }
    for line in report {
        say!("{line}");
    }
    if status != ExitCode::SUCCESS {
        note!(
            "fdlab tune: no setting meets the constraint of {} (exit status {EXIT_NO_SETTING})",
            constraint.describe("per hour")
        );
    }
    Ok(status)
}

/// Says which settings of the recommended point sit at an end of the grid,
/// where a better setting may lie just outside what was searched.
fn edge_note(space: &SearchSpace, best: &Point) -> Option<String> {
    let edges = space.edges(best);
    if edges.is_empty() {
        return None;
    }
    let named: Vec<String> = edges
        .iter()
        .map(|(key, value, end)| {
            let which = match end {
                End::First => "lowest",
                End::Last => "highest",
            };
            match beyond(value, *end) {
                Some(next) => format!(
                    "{key} = {value} is the {which} value searched: try `--set {key}={next}`"
                ),
                None => format!("{key} = {value} is the {which} value searched"),
            }
        })
        .collect();
    Some(format!(
        "  note: at the edge of the grid ({}): a better setting may lie beyond it",
        named.join("; ")
    ))
}

/// A value past `value` at `end` of its axis, to hold with `--set`: half
/// the lowest, twice the highest (numbers and durations); none past 0 or
/// for anything else.
fn beyond(value: &toml::Value, end: End) -> Option<String> {
    let factor = match end {
        End::First => 0.5,
        End::Last => 2.0,
    };
    match value {
        toml::Value::Float(x) if *x > 0.0 => Some(format!("{}", x * factor)),
        toml::Value::Integer(n) if *n > 0 => {
            let next = (*n as f64 * factor).round() as i64;
            (next != *n && next > 0).then(|| next.to_string())
        }
        toml::Value::String(text) => {
            let d: fdlab_protocol::Nanos = text.parse().ok()?;
            (d.as_nanos() > 0)
                .then(|| fdlab_protocol::Nanos((d.as_nanos() as f64 * factor) as u64).to_string())
        }
        _ => None,
    }
}

/// Builds the grid of `kind` at `interval` with `pins` held.
fn grid(
    kind: &str,
    interval: Nanos,
    pins: Vec<(String, toml::Value)>,
) -> Result<(SearchSpace, Vec<Point>, Vec<fdlab_protocol::DetectorConfig>), String> {
    let mut space = search_space(kind, interval).map_err(|e| format!("--detector: {e}"))?;
    for (key, value) in pins {
        space.pin(&key, value).map_err(|e| format!("--set: {e}"))?;
    }
    let points = space.points();
    let configs = points
        .iter()
        .map(|p| p.spec().map(|s| s.config))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("--set: {e}"))?;
    Ok((space, points, configs))
}

fn on_trace(
    args: &TuneArgs,
    trace: &Path,
    kind: &str,
    pins: Vec<(String, toml::Value)>,
    pool: &rayon::ThreadPool,
) -> Result<Evaluated, String> {
    if kind == "adaptive-probe" {
        return Err(format!("--detector: {}", HeartbeatEvalError::NeedsProbes));
    }
    if !(1..=MAX_CUTS).contains(&args.cuts) {
        return Err(format!("--cuts: must be between 1 and {MAX_CUTS}"));
    }
    if args.seeds.is_some() {
        return Err("--seeds: only with a SCENARIO (a trace is cut at --cuts instants)".into());
    }
    if let Some(out) = &args.out {
        refuse_same_file("--out", out, &[Input::new("--trace", trace)])?;
    }
    let name = trace.display().to_string();
    let arrivals = read_trace(trace)?;
    let interval = median_interval(&arrivals).ok_or_else(|| format!("{name}: too short"))?;
    let (space, points, configs) = grid(kind, interval, pins)?;
    if configs.iter().any(|c| c.uses_probes()) {
        return Err(format!("--set: {}", HeartbeatEvalError::NeedsProbes));
    }
    let evaluations: Vec<HeartbeatEvaluation> = pool
        .install(|| {
            configs
                .par_iter()
                .map(|config| evaluate(config, &arrivals, args.cuts, args.seed))
                .collect::<Result<Vec<_>, _>>()
        })
        .map_err(|e| format!("{name}: {e}"))?;
    let first = &evaluations[0];
    let header = vec![
        format!("fdlab tune: {kind} on {name}"),
        format!(
            "  trace: {} heartbeats over {}, median interval {}",
            first.heartbeats,
            render::duration(first.span),
            render::duration(interval),
        ),
        format!(
            "  search: {} settings x {} cuts (seed {}); {}; objective: {} detection time",
            points.len(),
            args.cuts,
            args.seed,
            args.constraint().describe("per hour"),
            args.objective.unwrap_or(Objective::P99).name()
        ),
        String::new(),
    ];
    Ok(Evaluated {
        header,
        space,
        points,
        candidates: evaluations.iter().map(candidate).collect(),
        crashes: "cut".into(),
    })
}

fn on_scenario(
    args: &TuneArgs,
    scenario: &str,
    kind: &str,
    pins: Vec<(String, toml::Value)>,
    pool: &rayon::ThreadPool,
) -> Result<Option<Evaluated>, String> {
    let arg = scenario;
    let scenario = fdlab_scenarios::resolve(arg).map_err(|e| e.to_string())?;
    crate::lockrpc_runs::refuse_lockrpc(&scenario, "tune")?;
    if let Some(out) = &args.out {
        let inputs: Vec<Input> = fdlab_scenarios::resolve::files_of(arg, &scenario)
            .into_iter()
            .map(|f| Input::new("the scenario's file", f))
            .collect();
        refuse_same_file("--out", out, &inputs)?;
    }
    budget::runs_fit(u64::from(args.seeds.unwrap_or(scenario.seeds)))?;
    let seed_list = seed_list(args.seed, args.seeds, scenario.seeds)?;
    // The period to scale the grid by: the scenario's own detector of this
    // kind if it has one, else the kind's default.
    let interval = scenario
        .detectors
        .iter()
        .find(|d| d.config.kind() == kind)
        .and_then(|d| d.config.heartbeat_interval())
        .unwrap_or(Nanos::from_secs(1));
    let (space, points, configs) = grid(kind, interval, pins)?;
    let setups: Vec<DetectorSetup> = configs
        .into_iter()
        .enumerate()
        .map(|(i, config)| DetectorSetup {
            name: format!("t{:04}", i + 1),
            config,
        })
        .collect();
    let seeds = seed_list.len();
    let count = setups.len();
    let settings = scenario
        .with_detectors(setups)
        .map_err(|e| format!("{count} settings together: {e}"))?;
    let work = Work {
        runs: vec![(&settings, seeds as u64)],
        logged: false,
    };
    let threads = pool.current_num_threads();
    let checked = budget::check(&work, &args.size, threads)?;
    if args.size.dry_run {
        budget::dry_run(&work, &checked, threads)?;
        return Ok(None);
    }
    let summaries = simulate_points(&settings, &seed_list, pool)?;
    let candidates = summaries
        .iter()
        .map(|s| Candidate {
            crashes: s.detect_windows,
            detection: s.failed,
            missed: s.failed_missed,
            mistakes: s.mistakes,
            mistakes_per_hour: s.mistake_rate().unwrap_or(0.0),
            false_failed: s.false_failed,
            false_failed_per_hour: s.false_failed_rate().unwrap_or(0.0),
            suspicions_per_hour: s.suspicion_rate().unwrap_or(0.0),
            mean_mistake: s.mean_mistake(),
            query_accuracy: s.query_accuracy().unwrap_or(1.0),
        })
        .collect();
    let header = vec![
        format!("fdlab tune: {kind} on scenario {}", scenario.name),
        format!(
            "  search: {} settings x {seeds} seeds (from seed {}), each seed simulated once for every setting; {}; objective: {} detection time",
            points.len(),
            args.seed,
            args.constraint().describe("per monitored-pair-hour"),
            args.objective.unwrap_or(Objective::P99).name()
        ),
        String::new(),
    ];
    Ok(Some(Evaluated {
        header,
        space,
        points,
        candidates,
        crashes: windows_of(&scenario),
    }))
}

/// What a scenario's detection times are measured on, named by the kinds of
/// its faults to detect (`pause fault window`, `crash or partition fault
/// window`), in the singular.
fn windows_of(scenario: &fdlab_sim::scenario::Scenario) -> String {
    use fdlab_sim::scenario::Expect;
    let mut kinds: Vec<&str> = Vec::new();
    let scheduled = scenario.faults.iter().map(|f| (f.kind(), f.expect()));
    let random = scenario
        .random_faults
        .iter()
        .map(|r| (r.kind, r.expect.unwrap_or(r.kind.default_expect())));
    for (kind, expect) in scheduled.chain(random) {
        if expect == Expect::Detect && !kinds.contains(&kind.name()) {
            kinds.push(kind.name());
        }
    }
    match kinds.split_last() {
        None => "fault window".into(),
        Some((last, [])) => format!("{last} fault window"),
        Some((last, rest)) => format!("{} or {last} fault window", rest.join(", ")),
    }
}

/// The ranking's view of one evaluation.
pub fn candidate(e: &HeartbeatEvaluation) -> Candidate {
    Candidate {
        crashes: e.cuts,
        detection: e.detection,
        missed: e.missed,
        mistakes: e.mistakes,
        mistakes_per_hour: e.mistakes_per_hour,
        false_failed: e.false_failed,
        false_failed_per_hour: e.false_failed_per_hour,
        suspicions_per_hour: e.suspicions_per_hour,
        mean_mistake: e.mean_mistake,
        query_accuracy: e.query_accuracy,
    }
}

/// The `[[detectors]]` table of a point, named `KIND-tuned` unless `--set name=`.
fn snippet(point: &Point, kind: &str) -> String {
    point
        .snippet(&format!("{kind}-tuned"))
        .trim_end()
        .to_string()
}

fn read_trace(path: &Path) -> Result<Vec<Nanos>, String> {
    let name = path.display().to_string();
    let reader: Box<dyn Read> = if name == "-" {
        Box::new(io::stdin().lock())
    } else {
        Box::new(open_limited(path, RECORDING_LIMIT).map_err(|e| format!("{name}: {e}"))?)
    };
    parse_heartbeat_recording(&name, BufReader::with_capacity(1 << 16, reader))
        .map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_beyond_the_edge_is_half_the_lowest_or_twice_the_highest() {
        let s = |t: &str| toml::Value::String(t.into());
        assert_eq!(
            beyond(&toml::Value::Float(1.0), End::First).as_deref(),
            Some("0.5")
        );
        assert_eq!(
            beyond(&toml::Value::Integer(3), End::Last).as_deref(),
            Some("6")
        );
        assert_eq!(beyond(&s("1250ms"), End::First).as_deref(), Some("625ms"));
        assert_eq!(beyond(&s("3s"), End::Last).as_deref(), Some("6s"));
        // Nothing below zero, nor for a name.
        assert_eq!(beyond(&s("0s"), End::First), None);
        assert_eq!(beyond(&toml::Value::Integer(1), End::First), None);
        assert_eq!(beyond(&s("fast"), End::Last), None);
    }
}
