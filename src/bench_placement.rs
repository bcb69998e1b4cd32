//! `fdlab bench --only placement`: the built-in `placement-crash` (10
//! servers, 20 clients, three detectors, all six distributions) with
//! 100,000 keys at 1,000 requests per second per client for one simulated
//! hour, one seed: the detector run and the placement ledgers timed apart,
//! requests placed per second, and the process's peak memory (the target
//! of issue 6/9 is under 60 s on a 2-core machine).

use std::time::Instant;

use fdlab_protocol::Nanos;
use fdlab_scenarios::builtin::builtin_scenario;
use fdlab_sim::engine;
use fdlab_sim::placement;
use fdlab_sim::valid::ValidScenario;

/// Requests per second of each client in the benchmark.
const REQUESTS_PER_SECOND: f64 = 1_000.0;
/// Keys of the benchmark's workload.
const KEYS: u32 = 100_000;
/// The target wall time on a 2-core machine (issue 6/9).
const TARGET_SECS: f64 = 60.0;

/// Runs the benchmark and prints its figures.
pub fn measure(quick: bool) -> Result<(), String> {
    let base = builtin_scenario("placement-crash")
        .ok_or("the built-in placement-crash is missing")?
        .map_err(|e| e.to_string())?;
    let mut s = base.into_inner();
    s.duration = Nanos::from_secs(if quick { 60 } else { 3_600 });
    s.faults[0].at = Some(Nanos(s.duration.as_nanos() / 2));
    if let Some(p) = s.placement.as_mut() {
        p.keys = KEYS;
        p.requests_per_second = REQUESTS_PER_SECOND;
    }
    let s = ValidScenario::new(s).map_err(|e| e.to_string())?;
    let p = s.placement.as_ref().ok_or("not a placement scenario")?;
    let clients = s.monitored_pairs() / u64::from(p.servers);
    say!(
        "\nkey placement ({} servers, {clients} clients, {} detectors x {} distributions, {KEYS} keys, {REQUESTS_PER_SECOND}/s per client, {}, one seed):",
        p.servers,
        s.detectors.len(),
        p.kinds().len(),
        s.duration
    );
    let started = Instant::now();
    let setup = placement::Setup::new(p, &s.topology.node_names())?;
    let setup_wall = started.elapsed().as_secs_f64();
    let started = Instant::now();
    let (outcome, _) = engine::run(&s, 1, false);
    let engine_wall = started.elapsed().as_secs_f64();
    let started = Instant::now();
    let placed = placement::evaluate(&setup, &outcome);
    let ledger_wall = started.elapsed().as_secs_f64();
    let requests = placed.cells.first().map_or(0, |c| c.requests);
    let placements = requests * placed.cells.len() as u64;
    let total = setup_wall + engine_wall + ledger_wall;
    say!(
        "  setup (keys, hashes) {setup_wall:.2} s; detectors {engine_wall:.2} s ({} events); ledgers {ledger_wall:.2} s ({requests} requests x {} placements = {:.1} M placed requests/s)",
        outcome.events,
        placed.cells.len(),
        placements as f64 / ledger_wall.max(1e-9) / 1e6,
    );
    let declared: u64 = placed.cells.iter().map(|c| c.true_declarations).sum();
    say!("  total {total:.2} s; {declared} true declarations over all detectors and distributions");
    if !quick {
        crate::bench::say_target(total, TARGET_SECS);
    }
    crate::bench::say_peak_memory();
    Ok(())
}
