//! `fdlab bench --only mesh`, the large meshes: 10,000 and 100,000 nodes
//! (`--quick`: 10,000 nodes for a minute), 10 monitors each, fixed timeout
//! and phi accrual over 1 s heartbeats, one crash, one simulated hour, on
//! every thread: events, wall time, events per second and the process's
//! peak memory during the run (the targets of issue 21 on a 2-core machine:
//! 10,000 nodes under 15 s; 100,000 nodes under 150 s and 4 GiB).

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use fdlab_protocol::Nanos;
use fdlab_sim::engine::{part_count, run};
use fdlab_sim::valid::ValidScenario;

use crate::bench_ratios::{Ratios, Target};
use crate::bench_sim::big_mesh;

/// The highest peak memory seen before a reset (KiB), so that the whole
/// benchmark's peak still counts the runs measured before it.
static EARLIER_PEAK_KIB: AtomicU64 = AtomicU64::new(0);

/// The process's peak resident memory in KiB since it started (Linux only),
/// whatever was reset to measure one run.
pub fn peak_kib() -> Option<u64> {
    let now = crate::bench::vm_hwm_kib()?;
    Some(now.max(EARLIER_PEAK_KIB.load(Ordering::Relaxed)))
}

/// Resets the process's high-water mark to its current resident memory
/// (Linux `clear_refs`; does nothing where that is not available), keeping
/// the earlier peak for [`peak_kib`].
fn reset_peak() {
    if let Some(kib) = crate::bench::vm_hwm_kib() {
        EARLIER_PEAK_KIB.fetch_max(kib, Ordering::Relaxed);
    }
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

/// The 10,000-node mesh for 10 minutes (`scenarios/bench/mesh-10000.toml`)
/// on every thread: simulated in this process, then `fdlab run` of the
/// file end to end, beside the bare heap loop over as many events (issue
/// 37's target: per thread, at least the loop's events/s).
fn end_to_end(threads: usize, ratios: &mut Ratios) -> Result<(), String> {
    let file = crate::bench_e2e::MESH_10000;
    let scenario = crate::bench_e2e::scenario(file)?;
    let fdlab_sim::scenario::Topology::Mesh { nodes, .. } = scenario.topology else {
        return Err(format!("{}: not a mesh", file.0));
    };
    let parts = part_count(&scenario, 1);
    let start = Instant::now();
    let (outcome, _) = run(&scenario, 1, false);
    let wall = start.elapsed().as_secs_f64();
    let events = outcome.events;
    let per_thread = |wall: f64| events as f64 / wall / 1e6 / threads as f64;
    let label = format!(
        "mesh {nodes} nodes x 10 monitors, 2 detectors, {}",
        scenario.duration
    );
    say!(
        "  {label:<52} {parts:>4} parts {threads:>2} thr {events:>11} events in {wall:>7.2} s = {:>6.2} M events/s per thread",
        per_thread(wall)
    );
    let (child, heap) = crate::bench_e2e::interleaved(file, threads, events)?;
    say!(
        "  {:<52}          {threads:>2} thr {events:>11} events in {:>7.2} s = {:>6.2} M events/s per thread, peak memory {}",
        format!("the same, `fdlab run {} --jobs {threads}` (median of 3)", file.0),
        child.wall,
        per_thread(child.wall),
        child.peak.text(Some((nodes, "node")))
    );
    let what = format!("`fdlab run` of the {nodes}-node mesh");
    let ratio = crate::bench_sim::interleaved_row(&what, events, child.wall, heap, threads);
    ratios.add(
        format!("{nodes}-node mesh, `fdlab run` end to end: events/s per thread"),
        ratio,
        Some(Target::AtLeast(1.0)),
    );
    Ok(())
}

/// Runs the large meshes and prints their figures.
pub fn measure(quick: bool, ratios: &mut Ratios) -> Result<(), String> {
    end_to_end(rayon::current_num_threads(), ratios)?;
    let runs: &[(u32, u64)] = if quick {
        &[(10_000, 60)]
    } else {
        &[(10_000, 3_600), (100_000, 3_600)]
    };
    let threads = rayon::current_num_threads();
    for &(nodes, secs) in runs {
        let duration = Nanos::from_secs(secs);
        let scenario = ValidScenario::new(big_mesh(nodes, duration)).map_err(|e| e.to_string())?;
        let parts = part_count(&scenario, 1);
        reset_peak();
        let start = Instant::now();
        let (outcome, _) = run(&scenario, 1, false);
        let wall = start.elapsed().as_secs_f64();
        let peak = crate::bench::vm_hwm_kib().map_or("not available".to_string(), |kib| {
            crate::bench_e2e::Peak(Some(kib)).text(Some((nodes, "node")))
        });
        say!(
            "  {:<52} {parts:>4} parts {threads:>2} thr {:>11} events in {wall:>7.2} s = {:>6.2} M events/s, peak memory {peak}",
            format!("mesh {nodes} nodes x 10 monitors, 2 detectors, {duration}"),
            outcome.events,
            outcome.events as f64 / wall / 1e6
        );
    }
    Ok(())
}
