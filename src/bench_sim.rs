//! `fdlab bench`'s simulator figures: the dataflow pipeline and the
//! built-in dataflow scenarios (events per second on one core) with the
//! references they are read against (the bare heap loop, the same loop on
//! fdlab's queue, the detectors' calls replayed alone), the madsim
//! workload, and the meshes.

use std::time::Instant;

use fdlab_protocol::decay::DataflowDecayConfig;
use fdlab_protocol::fixed::FixedTimeoutConfig;
use fdlab_protocol::phi::PhiAccrualConfig;
use fdlab_protocol::probe::AdaptiveProbeConfig;
use fdlab_protocol::{DetectorConfig, Nanos};
use fdlab_sim::engine::{part_count, run, run_recording_calls};
use fdlab_sim::scenario::{
    DetectorSetup, Dist, Expect, Fault, FaultKind, MonitorCount, Network, Scenario, Topology,
};
use fdlab_sim::valid::ValidScenario;

fn setup(name: &str, config: DetectorConfig) -> DetectorSetup {
    DetectorSetup {
        name: name.into(),
        config,
    }
}

fn heartbeat_detectors() -> Vec<DetectorSetup> {
    vec![
        setup(
            "fixed-3s",
            DetectorConfig::FixedTimeout(FixedTimeoutConfig::default()),
        ),
        setup(
            "phi-akka",
            DetectorConfig::PhiAccrual(PhiAccrualConfig::default()),
        ),
    ]
}

/// A one-seed scenario over links of ~1 ms (log-normal) with one fault.
fn scenario(
    name: &str,
    topology: Topology,
    detectors: Vec<DetectorSetup>,
    fault: Fault,
    duration: Nanos,
) -> Scenario {
    Scenario {
        network: Network {
            latency: Dist::Lognormal {
                median: Nanos::from_millis(1),
                sigma: 0.5,
            },
            ..Default::default()
        },
        detectors,
        faults: vec![fault],
        ..Scenario::new(name, topology, duration)
    }
}

/// The 6-stage pipeline of the built-in suite, with every detector kind,
/// and a 30 s freeze of a middle stage.
pub fn pipeline(duration: Nanos) -> Scenario {
    let mut detectors = heartbeat_detectors();
    detectors.push(setup(
        "phi-100ms",
        DetectorConfig::PhiAccrual(PhiAccrualConfig {
            interval: Nanos::from_millis(100),
            acceptable_heartbeat_pause: Nanos::ZERO,
            first_heartbeat_estimate: Nanos::from_millis(100),
            ..Default::default()
        }),
    ));
    detectors.push(setup(
        "probe-orleans",
        DetectorConfig::AdaptiveProbe(AdaptiveProbeConfig::default()),
    ));
    detectors.push(setup(
        "decay",
        DetectorConfig::DataflowDecay(DataflowDecayConfig::default()),
    ));
    let freeze = Fault {
        kind: Some(FaultKind::Pause),
        node: Some("s1.0".into()),
        at: Some(Nanos(duration.as_nanos() / 4)),
        duration: Some(Nanos(duration.as_nanos() / 4).min(Nanos::from_secs(30))),
        expect: Some(Expect::Detect),
        ..Default::default()
    };
    let layers = vec![2, 2, 2];
    scenario(
        "bench-pipeline",
        Topology::Dataflow { layers },
        detectors,
        freeze,
        duration,
    )
}

/// Every built-in dataflow scenario with its own seed count (or `seeds`
/// when given), the seeds one after another on one thread: the events
/// per second of the scenarios users run, faults and reports' inputs
/// included, beside the long single run above. Then the same runs'
/// detector calls made again alone (see [`detectors_alone`]). Returns
/// the events, the runs' wall time and the detectors' alone (bounds).
pub fn builtin_dataflow(seeds: Option<u32>) -> Result<(u64, f64, (f64, f64)), String> {
    let mut total = (0u64, 0.0f64);
    let mut scenarios = Vec::new();
    for scenario in fdlab_scenarios::builtin_suite().map_err(|e| e.to_string())? {
        if !matches!(scenario.topology, Topology::Dataflow { .. }) {
            continue;
        }
        let seeds = seeds.unwrap_or(scenario.seeds);
        let start = Instant::now();
        let mut events = 0;
        for seed in 1..=seeds {
            let (outcome, _) = run(&scenario, u64::from(seed), false);
            events += outcome.events;
        }
        let wall = start.elapsed().as_secs_f64();
        total = (total.0 + events, total.1 + wall);
        say!(
            "  {:<52} {seeds:>4} seeds 1 thr {events:>11} events in {wall:>7.2} s = {:>6.2} M events/s per thread",
            format!("built-in {}", scenario.name),
            events as f64 / wall / 1e6
        );
        scenarios.push((scenario, seeds));
    }
    say!(
        "  {:<52}            {:>11} events in {:>7.2} s = {:>6.2} M events/s per thread",
        "built-in dataflow scenarios, all",
        total.0,
        total.1,
        total.0 as f64 / total.1 / 1e6
    );
    let alone = detectors_alone(&scenarios, total.1);
    Ok((total.0, total.1, alone))
}

/// The detector calls of every run above, recorded (in a run of their
/// own, untimed) and made again on the same detectors with no simulator
/// around them ([`fdlab_sim::engine::CallLog::replay`]), on one thread:
/// the detectors' own work on that traffic, which no event loop can take
/// away. The replay also reads the log; reading it alone
/// ([`fdlab_sim::engine::CallLog::walk`]) takes a part of that time,
/// which overlaps the detectors' work in the replay, so the work is
/// between the replay's time less the walk's and the replay's. Returns
/// both bounds.
fn detectors_alone(scenarios: &[(ValidScenario, u32)], runs_wall: f64) -> (f64, f64) {
    let (mut calls, mut replay, mut walk) = (0usize, 0.0f64, 0.0f64);
    for (scenario, seeds) in scenarios {
        for seed in 1..=*seeds {
            let (_, log) = run_recording_calls(scenario, u64::from(seed));
            calls += log.calls.len();
            let start = Instant::now();
            std::hint::black_box(log.walk());
            walk += start.elapsed().as_secs_f64();
            let start = Instant::now();
            std::hint::black_box(log.replay());
            replay += start.elapsed().as_secs_f64();
        }
    }
    let alone = (replay - walk).max(0.0);
    say!(
        "  {:<52}            {calls:>11} calls  in {replay:>7.2} s ({walk:.2} s reading them alone) = {:.0}-{:.0}% of those runs' time",
        "their detectors alone, the runs' calls made again",
        100.0 * alone / runs_wall,
        100.0 * replay / runs_wall
    );
    (alone, replay)
}

/// Queue entries the bare heap loop holds: about what the 6-stage
/// pipeline's queue holds (timers, ticks, frames in flight). Measured
/// means over a run: 93 in `pipeline-freeze`, 35-41 in the other
/// built-in dataflow scenarios (docs/perf.md, "The benchmark's parts");
/// a deeper heap is slower, so 100 errs in fdlab's favour.
const HEAP_PENDING: usize = 100;

/// The bare binary-heap loop over as many events as a measured run,
/// printed with the ratio of that run's events/s to the loop's; returns
/// the loop's wall time.
pub fn heap_reference(what: &str, events: u64, wall: f64) -> f64 {
    let label = format!("bare binary-heap loop, {HEAP_PENDING} pending, no work");
    bare_row(&label, fdlab_sim::baseline::heap_loop, events, |heap| {
        format!("{what} ran at {:.2}x the loop's events/s", heap / wall)
    })
}

/// The same bare loop on fdlab's own event queue, beside the heap's.
pub fn wheel_reference(events: u64, heap: f64) {
    let label = format!("the same loop on fdlab's timing wheel, {HEAP_PENDING} pending");
    bare_row(&label, fdlab_sim::baseline::wheel_loop, events, |wheel| {
        format!("{:.2}x the heap loop's", heap / wheel)
    });
}

/// The bare heap loop's time over `events` events, s (no row printed).
pub fn heap_loop_secs(events: u64) -> f64 {
    let start = Instant::now();
    std::hint::black_box(fdlab_sim::baseline::heap_loop(events, HEAP_PENDING));
    start.elapsed().as_secs_f64()
}

/// The row of a run's median against the heap loop's median, both over
/// [`crate::bench_e2e::ROUNDS`] interleaved rounds; returns the ratio of
/// the run's events/s per thread to the loop's.
pub fn interleaved_row(what: &str, events: u64, wall: f64, heap: f64, threads: usize) -> f64 {
    let ratio = heap / (wall * threads as f64);
    say!(
        "  {:<52}            {events:>11} events in {heap:>7.2} s = {:>6.2} M events/s; {what} ran at {ratio:.2}x the loop's events/s{}",
        format!("bare binary-heap loop, {HEAP_PENDING} pending, no work"),
        events as f64 / heap / 1e6,
        if threads == 1 { "" } else { " per thread" }
    );
    ratio
}

/// Times `bare_loop` over `events` events and prints its row, ended by
/// what `compared` says of its wall time; returns that time.
fn bare_row(
    label: &str,
    bare_loop: fn(u64, usize) -> u64,
    events: u64,
    compared: impl FnOnce(f64) -> String,
) -> f64 {
    let start = Instant::now();
    std::hint::black_box(bare_loop(events, HEAP_PENDING));
    let secs = start.elapsed().as_secs_f64();
    say!(
        "  {label:<52}            {events:>11} events in {secs:>7.2} s = {:>6.2} M events/s; {}",
        events as f64 / secs / 1e6,
        compared(secs)
    );
    secs
}

/// What the heap loop's pace leaves the simulator per event, once the
/// detectors' own work ([`detectors_alone`], its two bounds) is paid,
/// against what it takes now.
pub fn budget(
    events: u64,
    wall: f64,
    (low, high): (f64, f64),
    heap: f64,
    ratios: &mut crate::bench_ratios::Ratios,
) {
    let ns = |secs: f64| secs / events as f64 * 1e9;
    say!(
        "  per event: the runs {:.1} ns, their detectors' calls {:.1}-{:.1} ns, the heap loop {:.1} ns: at the loop's pace\n  \
         the rest of a run (queue, draws, links, stages, timers) would have {:.1}-{:.1} ns; it takes {:.1}-{:.1} ns",
        ns(wall),
        ns(low),
        ns(high),
        ns(heap),
        ns(heap - high),
        ns(heap - low),
        ns(wall - high),
        ns(wall - low)
    );
    // Issue 37: the engine's own cost per event at most the heap loop's
    // (the detectors' cost taken at its upper bound: fdlab's best case).
    ratios.add(
        "dataflow built-ins: a run's cost per event beyond its detectors",
        (wall - high) / heap,
        Some(crate::bench_ratios::Target::AtMost(1.0)),
    );
}

/// fdlab's side of the madsim comparison (issue 9/9): the workload
/// simulated, its metrics computed, on one thread and on all; `cargo
/// simbench` runs madsim's side beside the same.
pub fn madsim_workload(ratios: &mut crate::bench_ratios::Ratios) -> Result<(), String> {
    let scenario =
        ValidScenario::new(fdlab_sim::baseline::madsim_workload()).map_err(|e| e.to_string())?;
    let mut one_thread = None;
    let all = rayon::current_num_threads();
    for threads in std::iter::once(1).chain((all > 1).then_some(all)) {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .map_err(|e| e.to_string())?;
        let start = Instant::now();
        let events = pool.install(|| {
            let (outcome, _) = run(&scenario, 1, false);
            let events = outcome.events;
            let result = fdlab_reports::metrics::ScenarioResult {
                scenario: scenario.name.clone(),
                runs: vec![outcome],
            };
            std::hint::black_box(fdlab_reports::metrics::scenario_metrics(&result));
            events
        });
        let wall = start.elapsed().as_secs_f64();
        say!(
            "  {:<52} {threads:>4} thr {events:>11} events in {wall:>7.2} s = {:>6.2} M events/s (madsim's side: cargo simbench)",
            "madsim workload: 10 nodes all-to-all, 10 ms, 1000 s",
            events as f64 / wall / 1e6
        );
        one_thread.get_or_insert((events, wall));
    }
    let Some((events, wall)) = one_thread else {
        return Ok(());
    };
    heap_reference("the madsim workload on one thread", events, wall);
    // The user's command, end to end: what issue 37's target is read on.
    let (child, heap) =
        crate::bench_e2e::interleaved(crate::bench_e2e::MADSIM_WORKLOAD, 1, events)?;
    say!(
        "  {:<52}    1 thr {events:>11} events in {:>7.2} s = {:>6.2} M events/s, peak memory {}",
        "the same, `fdlab run FILE --jobs 1` (median of 3)",
        child.wall,
        events as f64 / child.wall / 1e6,
        child.peak.text(None)
    );
    let ratio = interleaved_row(
        "`fdlab run` of the madsim workload",
        events,
        child.wall,
        heap,
        1,
    );
    // Madsim itself runs only under `cargo simbench`, whose target (30x
    // madsim's events/s) this table cannot show.
    ratios.add(
        "madsim workload, `fdlab run` end to end: events/s",
        ratio,
        None,
    );
    Ok(())
}

/// `nodes` nodes, 10 monitors each, fixed timeout and phi accrual over
/// 1 s heartbeats, n7 crashed half way.
pub fn big_mesh(nodes: u32, duration: Nanos) -> Scenario {
    let crash = Fault {
        kind: Some(FaultKind::Crash),
        node: Some("n7".into()),
        at: Some(Nanos(duration.as_nanos() / 2)),
        ..Default::default()
    };
    let topology = Topology::Mesh {
        nodes,
        monitors_per_node: MonitorCount::Count(10),
    };
    scenario(
        "bench-mesh",
        topology,
        heartbeat_detectors(),
        crash,
        duration,
    )
}

/// Runs `scenario` `reps` times on `threads` threads and prints the
/// figures of the median run; returns its events and wall time (s).
pub fn measure(
    label: &str,
    scenario: &Scenario,
    threads: usize,
    reps: usize,
) -> Result<(u64, f64), String> {
    let scenario = &ValidScenario::new(scenario.clone()).map_err(|e| e.to_string())?;
    let parts = part_count(scenario, 1);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .map_err(|e| e.to_string())?;
    let mut walls = Vec::with_capacity(reps);
    let mut events = 0;
    for _ in 0..reps.max(1) {
        let start = Instant::now();
        let (outcome, _) = pool.install(|| run(scenario, 1, false));
        walls.push(start.elapsed().as_secs_f64());
        events = outcome.events;
    }
    let wall = crate::stats::median_nearest_rank(&mut walls).ok_or(crate::bench::NO_RUNS)?;
    let per_thread = events as f64 / wall / 1e6 / threads.min(parts) as f64;
    say!(
        "  {label:<52} {parts:>4} parts {threads:>2} thr {:>11} events in {wall:>7.2} s = {:>6.2} M events/s per thread",
        events,
        per_thread
    );
    Ok((events, wall))
}
