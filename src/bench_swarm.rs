//! `fdlab bench --only swarm`: swarm runs of the built-in `pipeline-freeze`
//! (six stages, six detectors, two simulated minutes) with ten faults each,
//! then shrinking the first run that violates a property: every violation
//! of it (one per property × detector), each to its reproducer, timed and
//! counted (the target of issue 8/9 is under 30 s for a ten-fault schedule
//! on a 2-core machine).

use std::time::Instant;

use fdlab_sim::scenario::{SwarmSetup, SwarmTables};

use crate::swarm::findings::{group, shrink_one, Context};
use crate::swarm::runs::swarm_runs;

/// The built-in pipeline the benchmark swarms over.
const SCENARIO: &str = "pipeline-freeze";
/// Faults each run draws.
const FAULTS: u32 = 10;
/// Runs timed for the swarm's throughput (fewer with --quick).
const RUNS: u64 = 200;
/// The target wall time of one ten-fault schedule's shrinking (issue 8/9).
const TARGET_SECS: f64 = 30.0;

/// Runs the benchmark and prints its figures.
pub fn measure(quick: bool) -> Result<(), String> {
    let scenario = fdlab_scenarios::resolve(SCENARIO).map_err(|e| e.to_string())?;
    let setup = SwarmSetup {
        faults: Some([FAULTS, FAULTS]),
        ..SwarmSetup::default()
    };
    let checks = SwarmTables::default()
        .property_setup()
        .checks(scenario.swarm_kind());
    let pool = crate::simulate::thread_pool(None)?;
    let runs = if quick { RUNS / 10 } else { RUNS };
    let seeds: Vec<u64> = (1..=runs).collect();
    say!(
        "\nswarm ({SCENARIO}, {} detectors, {FAULTS} faults per run, {}):",
        scenario.detectors.len(),
        scenario.duration
    );
    let done = swarm_runs(&scenario, &setup, &checks, &seeds, &pool, None)?;
    say!(
        "  {} runs in {:.2} s: {:.1} runs/s on {} threads",
        done.runs.len(),
        done.wall,
        done.runs.len() as f64 / done.wall.max(1e-9),
        pool.current_num_threads()
    );
    let Some(run) = done.runs.iter().find(|r| !r.violations.is_empty()) else {
        say!("  no run violated a property: nothing to shrink");
        return Ok(());
    };
    let cx = Context {
        scenario: &scenario,
        setup: &setup,
        checks: &checks,
        pool: &pool,
        deadline: None,
        samples_dir: None,
    };
    let started = Instant::now();
    let mut total_runs = 0;
    let violated = group(std::slice::from_ref(run));
    for (n, (_, first, _, _)) in violated.into_iter().enumerate() {
        let (found, cost) = shrink_one(&cx, run, first, n + 1)?;
        let f = &found.finding;
        total_runs += cost.runs;
        say!(
            "  seed {}: {} by {}: {} -> {} faults, {} candidates tried ({} runs simulated), {} kept, {:.2} s",
            f.seed,
            f.first.property.name(),
            f.first.who(),
            f.faults,
            f.minimal_faults,
            f.tried,
            cost.runs,
            f.kept,
            cost.wall
        );
    }
    let total = started.elapsed().as_secs_f64();
    say!(
        "  shrinking the {FAULTS}-fault schedule for every violation of it: {total_runs} runs in {total:.2} s"
    );
    if !quick {
        say!(
            "  target: each under {TARGET_SECS:.0} s on a 2-core machine: {}",
            if total < TARGET_SECS {
                format!(
                    "met ({:.0}% of it for all of them)",
                    100.0 * total / TARGET_SECS
                )
            } else {
                format!("the sum is {total:.1} s; see each above")
            }
        );
    }
    Ok(())
}
