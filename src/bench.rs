//! `fdlab bench`: measured speed, printed (never asserted by timed tests).
//!
//! Figures: nanoseconds per input and per query for every detector kind, driven
//! through the same `Detector` interface hosts use, and the throughput of
//! `fdlab trace` (parse, replay, write) on a generated one-million-row file.
//! Each figure is the median of several repetitions. Peak memory is the
//! process's high-water mark (Linux `VmHWM`).

use std::hint::black_box;
use std::io;
use std::time::Instant;

use clap::Args;
use fdlab_protocol::decay::DataflowDecayConfig;
use fdlab_protocol::fixed::FixedTimeoutConfig;
use fdlab_protocol::phi::{PhiAccrualConfig, PhiDistribution};
use fdlab_protocol::probe::AdaptiveProbeConfig;
use fdlab_protocol::two_stage::TwoStageConfig;
use fdlab_protocol::{Detector, DetectorConfig, FailureDetector, Frame, Nanos, ProbeOutcome};
use fdlab_reports::query_csv::QueryCsvWriter;
use fdlab_scenarios::events::parse_events;
use fdlab_sim::event_replay::{monitoring_start, replay};

use crate::bench_sim as sim;

use crate::stats::median_nearest_rank;

#[derive(Args)]
pub struct BenchArgs {
    /// Fewer repetitions and a smaller trace (for a smoke run, not for figures).
    #[arg(long)]
    quick: bool,
    /// Only these parts: detectors, trace, pipeline, madsim, mesh, sweep,
    /// membership, placement, lockrpc, swarm, swim (default: all).
    #[arg(long, value_delimiter = ',', value_name = "PART")]
    only: Vec<Part>,
}

/// The parts of the benchmark.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Part {
    Detectors,
    Trace,
    Pipeline,
    /// fdlab's side of the madsim comparison (`cargo simbench` runs both).
    Madsim,
    Mesh,
    Sweep,
    Membership,
    Placement,
    Lockrpc,
    Swarm,
    Swim,
}

/// Repetitions per figure; the median is reported.
const REPETITIONS: usize = 5;
/// Inputs per repetition.
const OPS: u64 = 2_000_000;
/// Runs of the pipeline; the median wall time is reported (a run takes about
/// a second, short enough for a neighbour's burst to skew one).
const PIPELINE_REPETITIONS: usize = 5;
/// Rows of the generated trace.
const TRACE_ROWS: usize = 1_000_000;
/// Heartbeat period of the generated inputs.
const PERIOD: Nanos = Nanos::from_millis(1000);

/// A deterministic spread of +-200 ms around the period (no randomness needed
/// for a benchmark; a fixed pattern keeps runs comparable).
fn interval(i: u64) -> Nanos {
    let spread_ms = (i.wrapping_mul(7919) % 401) as i64 - 200;
    Nanos((PERIOD.as_nanos() as i64 + spread_ms * 1_000_000) as u64)
}

/// How a detector kind is fed its liveness input.
#[derive(Clone, Copy)]
enum Feed {
    Heartbeat,
    Frame,
    ProbeOutcome,
}

fn feed(detector: &mut Detector, how: Feed, now: Nanos, i: u64) {
    match how {
        Feed::Heartbeat => detector.handle_heartbeat(now),
        Feed::Frame => detector.handle_frame(now, Frame::Data),
        Feed::ProbeOutcome => detector.handle_probe_outcome(
            now,
            ProbeOutcome::Answered {
                rtt: Nanos::from_micros(500 + i % 300),
            },
        ),
    }
}

/// A figure is the median of its repetitions (nearest rank; their count is
/// odd, so it is the middle one); none is an error.
pub(crate) const NO_RUNS: &str = "no repetition to take the median of";

/// Median nanoseconds per call of `op` over `ops` calls.
fn per_op(
    reps: usize,
    ops: u64,
    mut setup: impl FnMut() -> Box<dyn FnMut(u64)>,
) -> Result<f64, String> {
    let mut runs: Vec<f64> = (0..reps)
        .map(|_| {
            let mut op = setup();
            let start = Instant::now();
            for i in 0..ops {
                op(i);
            }
            start.elapsed().as_nanos() as f64 / ops as f64
        })
        .collect();
    Ok(median_nearest_rank(&mut runs).ok_or(NO_RUNS)?)
}

fn kinds() -> Vec<(&'static str, DetectorConfig, Feed)> {
    let phi = |distribution| {
        DetectorConfig::PhiAccrual(PhiAccrualConfig {
            distribution,
            ..Default::default()
        })
    };
    vec![
        (
            "fixed-timeout",
            DetectorConfig::FixedTimeout(FixedTimeoutConfig::default()),
            Feed::Heartbeat,
        ),
        (
            "phi-accrual (normal, 1000 samples)",
            phi(PhiDistribution::Normal),
            Feed::Heartbeat,
        ),
        (
            "phi-accrual (normal-exact)",
            phi(PhiDistribution::NormalExact),
            Feed::Heartbeat,
        ),
        (
            "phi-accrual (exponential)",
            phi(PhiDistribution::Exponential),
            Feed::Heartbeat,
        ),
        (
            "adaptive-probe (recorded outcomes)",
            DetectorConfig::AdaptiveProbe(AdaptiveProbeConfig::default()),
            Feed::ProbeOutcome,
        ),
        (
            "dataflow-decay",
            DetectorConfig::DataflowDecay(DataflowDecayConfig::default()),
            Feed::Frame,
        ),
        (
            "two-stage (decay + phi)",
            DetectorConfig::TwoStage(TwoStageConfig {
                fast: Box::new(DetectorConfig::DataflowDecay(DataflowDecayConfig::default())),
                confirm: Box::new(phi(PhiDistribution::Normal)),
            }),
            Feed::Frame,
        ),
    ]
}

/// A detector that has already seen a full window of inputs.
fn warmed(config: &DetectorConfig, how: Feed) -> (Detector, Nanos) {
    let mut detector = Detector::new(config.clone(), Nanos::ZERO).expect("bench configs are valid");
    let mut now = Nanos::ZERO;
    for i in 0..2_000 {
        now = now + interval(i);
        feed(&mut detector, how, now, i);
    }
    (detector, now)
}

pub fn run(args: &BenchArgs) -> Result<(), String> {
    let (reps, ops, rows) = if args.quick {
        (1, OPS / 20, TRACE_ROWS / 20)
    } else {
        (REPETITIONS, OPS, TRACE_ROWS)
    };
    if cfg!(debug_assertions) {
        note!("fdlab bench: this is a debug build; figures are only meaningful with --release");
    }
    let want = |part: Part| args.only.is_empty() || args.only.contains(&part);
    if want(Part::Detectors) {
        detectors(reps, ops)?;
    }
    if want(Part::Trace) {
        trace(reps, rows)?;
    }
    if want(Part::Pipeline) || want(Part::Mesh) {
        say!("\nsimulator (one seed each; a mesh run is split into parts that run in parallel):");
    }
    let (pipeline_len, mesh_len) = if args.quick {
        (Nanos::from_secs(30), Nanos::from_secs(60))
    } else {
        (Nanos::from_secs(3600), Nanos::from_secs(3600))
    };
    let all = rayon::current_num_threads();
    let mut ratios = crate::bench_ratios::Ratios::default();
    if want(Part::Pipeline) {
        let (events, wall) = sim::measure(
            &format!("dataflow 3x2 stages, 5 detectors, {pipeline_len}"),
            &sim::pipeline(pipeline_len),
            1,
            if args.quick { 1 } else { PIPELINE_REPETITIONS },
        )?;
        let (all_events, all_wall, alone) = sim::builtin_dataflow(args.quick.then_some(2))?;
        sim::heap_reference("the pipeline above", events, wall);
        let heap = sim::heap_reference("the built-in dataflow scenarios", all_events, all_wall);
        sim::wheel_reference(all_events, heap);
        sim::budget(all_events, all_wall, alone, heap, &mut ratios);
    }
    if want(Part::Madsim) {
        sim::madsim_workload(&mut ratios)?;
    }
    if want(Part::Mesh) {
        let mesh = sim::big_mesh(1000, mesh_len);
        let label = format!("mesh 1000 nodes x 10 monitors, 2 detectors, {mesh_len}");
        sim::measure(&label, &mesh, 1, 1)?;
        if all > 1 {
            sim::measure(&label, &mesh, all, 1)?;
        }
        crate::bench_mesh::measure(args.quick, &mut ratios)?;
    }
    if want(Part::Sweep) {
        sweeps(args.quick)?;
    }
    if want(Part::Membership) {
        crate::bench_cluster::measure(args.quick, &mut ratios)?;
    }
    if want(Part::Placement) {
        crate::bench_placement::measure(args.quick)?;
    }
    if want(Part::Lockrpc) {
        crate::bench_lockrpc::measure(args.quick)?;
    }
    if want(Part::Swarm) {
        crate::bench_swarm::measure(args.quick)?;
    }
    // Last: its peak memory (some GB) would hide the others'.
    if want(Part::Swim) {
        crate::bench_cluster::measure_swim(args.quick, &mut ratios)?;
    }
    say!("");
    ratios.print();
    match peak_memory_kib() {
        Some(kib) => say!("\npeak memory (VmHWM): {:.1} MiB", kib as f64 / 1024.0),
        None => say!("\npeak memory: not available on this platform"),
    };
    Ok(())
}

/// Sweeps of 1,000 points on the built-in 6-stage pipeline (`pipeline-freeze`,
/// 2 simulated minutes per seed), every seed simulated once for all points.
const SWEEP_SCENARIO: &str = "pipeline-freeze";
const SWEEP_SEEDS: u32 = 20;

fn sweeps(quick: bool) -> Result<(), String> {
    let scenario = fdlab_scenarios::resolve(SWEEP_SCENARIO).map_err(|e| e.to_string())?;
    let seeds = if quick { 2 } else { SWEEP_SEEDS };
    let pool = crate::simulate::thread_pool(None)?;
    say!(
        "\nsweeps of 1000 points x {seeds} seeds on {SWEEP_SCENARIO} ({} threads):",
        pool.current_num_threads()
    );
    for vary in [
        vec!["phi-accrual.threshold=0.5..16:log1000"],
        vec![
            "dataflow-decay.decay=0.800..0.999:0.001",
            "dataflow-decay.suspect_below=0.3,0.4,0.5,0.6,0.7",
        ],
    ] {
        let dims = vary
            .iter()
            .map(|v| fdlab_scenarios::vary::parse_vary(v))
            .collect::<Result<Vec<_>, _>>()?;
        let plan = fdlab_scenarios::sweep_plan::plan(&scenario, &dims, 0, 1, 1, seeds)?;
        let seed_list = plan.file.seed_list();
        let start = Instant::now();
        let points = scenario
            .with_detectors(plan.setups.clone())
            .map_err(|e| e.to_string())?;
        crate::simulate::simulate_points(&points, &seed_list, &pool)?;
        let wall = start.elapsed().as_secs_f64();
        say!(
            "  {:<70} {:>7.2} s = {:>7.0} points x seeds/s",
            vary.join(" "),
            wall,
            (plan.setups.len() * seed_list.len()) as f64 / wall
        );
    }
    Ok(())
}

fn detectors(reps: usize, ops: u64) -> Result<(), String> {
    say!("fdlab bench: median of {reps} runs of {ops} calls each\n");
    say!(
        "{:<36} {:>14} {:>20} {:>12}",
        "detector",
        "ns/input",
        "ns/input+poll",
        "ns/query"
    );
    for (name, config, how) in kinds() {
        let input = per_op(reps, ops, || {
            let (mut d, mut now) = warmed(&config, how);
            Box::new(move |i| {
                now = now + interval(i);
                feed(&mut d, how, now, i);
                black_box(&d);
            })
        })?;
        let input_poll = per_op(reps, ops, || {
            let (mut d, mut now) = warmed(&config, how);
            Box::new(move |i| {
                now = now + interval(i);
                feed(&mut d, how, now, i);
                black_box(d.poll_timeout());
            })
        })?;
        let query = per_op(reps, ops, || {
            let (d, last) = warmed(&config, how);
            Box::new(move |i| {
                // Queries spread over the 6 s after the last input: Alive,
                // near-threshold and Failed answers alike.
                let now = last + Nanos::from_micros((i * 2_999) % 6_000_000);
                black_box((d.score(now), d.verdict()));
            })
        })?;
        say!("{name:<36} {input:>14.1} {input_poll:>20.1} {query:>12.1}");
    }
    Ok(())
}

fn trace(reps: usize, rows: usize) -> Result<(), String> {
    say!("\nfdlab trace on a generated {rows}-row file (heartbeats, one query per 10 rows):");
    let csv = generate_trace(rows);
    let mb = csv.len() as f64 / 1e6;
    let mut parse_s = Vec::new();
    let mut total_s = Vec::new();
    for _ in 0..reps {
        let start = Instant::now();
        let events = parse_events("generated.csv", csv.as_bytes()).map_err(|e| e.to_string())?;
        parse_s.push(start.elapsed().as_secs_f64());
        let config = DetectorConfig::PhiAccrual(PhiAccrualConfig::default());
        let mut detector =
            Detector::new(config, monitoring_start(&events)).map_err(|e| e.to_string())?;
        let mut out = QueryCsvWriter::new(io::sink()).map_err(|e| e.to_string())?;
        replay(&mut detector, &events, |row| {
            let _ = out.write(&row);
        });
        out.finish().map_err(|e| e.to_string())?;
        total_s.push(start.elapsed().as_secs_f64());
    }
    let parse = median_nearest_rank(&mut parse_s).ok_or(NO_RUNS)?;
    let total = median_nearest_rank(&mut total_s).ok_or(NO_RUNS)?;
    say!(
        "  {mb:.1} MB: parse {:.3} s, parse + replay (phi-accrual) + write {:.3} s = {:.2} M rows/s",
        parse,
        total,
        rows as f64 / total / 1e6
    );
    Ok(())
}

/// A recorded-trace-like file: heartbeats with jitter, a query every 10 rows.
fn generate_trace(rows: usize) -> String {
    use std::fmt::Write;
    let mut text = String::with_capacity(rows * 24);
    text.push_str("time_ms,event\n");
    let mut now = Nanos::from_secs(1_700_000_000);
    for i in 0..rows as u64 {
        now = now + Nanos(interval(i).as_nanos() / 10);
        let event = if i % 10 == 9 { "query" } else { "heartbeat" };
        now.fmt_millis(&mut text);
        let _ = writeln!(text, ",{event}");
    }
    text
}

/// Prints whether a run of `wall` seconds met a target of `target` seconds.
pub fn say_target(wall: f64, target: f64) {
    say!(
        "  target: under {target:.0} s on a 2-core machine: {}",
        if wall < target {
            format!("met ({:.0}% of it)", 100.0 * wall / target)
        } else {
            format!("NOT met ({wall:.1} s)")
        }
    );
}

/// Prints the process's peak memory so far.
pub fn say_peak_memory() {
    match peak_memory_kib() {
        Some(kib) => say!(
            "  peak memory so far (VmHWM): {:.1} MiB",
            kib as f64 / 1024.0
        ),
        None => say!("  peak memory: not available on this platform"),
    }
}

/// The process's peak resident memory in KiB (Linux only), over the whole
/// benchmark (`bench_mesh` resets the mark to measure one run).
pub fn peak_memory_kib() -> Option<u64> {
    crate::bench_mesh::peak_kib()
}

/// The process's resident memory high-water mark in KiB (Linux `VmHWM`).
pub fn vm_hwm_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}
