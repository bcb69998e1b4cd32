//! The calibration of the simulator against a live run (`calibration.csv`
//! and the table `fdlab live` prints): per detector, the delay from each
//! fault's start to a Failed verdict (the detection of a fault to detect, or
//! a mistake about the node a tolerated fault names), live and simulated on
//! the same seed, the simulator's distribution over several seeds, and the
//! mistakes on either side.

use std::collections::BTreeMap;

use fdlab_protocol::{Nanos, Verdict};
use fdlab_reports::metrics::run_metrics;
use fdlab_sim::outcome::RunOutcome;
use fdlab_sim::scenario::Expect;

use crate::stats::median_nearest_rank;

/// Calibration tolerance: a live detection-time median must lie within this
/// share of the simulated one...
pub const TOLERANCE_SHARE: f64 = 0.10;
/// ... or within this many milliseconds of it, whichever is wider.
pub const TOLERANCE_MS: f64 = 200.0;

fn millis(n: Nanos) -> f64 {
    n.as_nanos_f64() / 1e6
}

fn mean(values: &[f64]) -> Option<f64> {
    (!values.is_empty()).then(|| values.iter().sum::<f64>() / values.len() as f64)
}

/// One detector's row of the calibration table.
#[derive(Debug)]
pub struct CalibrationRow {
    pub detector: String,
    pub live_detected: usize,
    pub live_missed: usize,
    pub live_p50_ms: Option<f64>,
    pub live_mean_ms: Option<f64>,
    pub sim_p50_ms: Option<f64>,
    pub sim_mean_ms: Option<f64>,
    pub diff_p50_ms: Option<f64>,
    /// Largest |live - simulated| over the pairs of this seed.
    pub max_pair_diff_ms: Option<f64>,
    pub seeds_p50_ms: Option<f64>,
    pub seeds_mean_ms: Option<f64>,
    pub live_mistakes: usize,
    pub sim_mistakes: usize,
    pub seeds_mistakes_per_run: Option<f64>,
    pub within: Option<bool>,
}

/// Detection delays (ms) per detector, keyed by (monitor, target, fault);
/// ordered, so that the means summed from them are the same bytes every run.
type Delays = Vec<BTreeMap<(u32, u32, usize), f64>>;

fn d_index(run: &RunOutcome, name: &str) -> usize {
    run.detectors.iter().position(|n| n == name).unwrap_or(0)
}

/// The first instant at or after `from` when the pair's detector says Failed
/// (a mistake may start as Suspect).
fn failed_time(run: &RunOutcome, monitor: u32, target: u32, d: usize, from: Nanos) -> Nanos {
    run.pairs
        .iter()
        .find(|p| p.monitor == monitor && p.target == target)
        .and_then(|p| p.detectors.get(d))
        .and_then(|t| {
            t.changes
                .iter()
                .find(|&&(at, v)| at >= from && v == Verdict::Failed)
        })
        .map_or(from, |&(at, _)| at)
}

fn delays_and_mistakes(run: &RunOutcome) -> (Delays, Vec<usize>, Vec<usize>) {
    let m = run_metrics(run);
    let mut delays = Vec::new();
    let mut mistakes = Vec::new();
    let mut missed = Vec::new();
    for d in &m.detectors {
        let mut map = BTreeMap::new();
        for det in &d.detections {
            if let Some(delay) = det.failed_delay() {
                map.insert((det.monitor, det.target, det.fault), millis(delay));
            }
        }
        // A fault to tolerate (a pause) that a detector wrongly declared
        // Failed: the delay from its start to that verdict, which is the same
        // quantity (how long the silence lasts before the verdict).
        for mistake in &d.mistakes {
            if mistake.worst != Verdict::Failed {
                continue;
            }
            let fault = run.faults.iter().enumerate().find(|(_, f)| {
                f.expect == Expect::Tolerate
                    && f.node == Some(mistake.target)
                    && f.window.start <= mistake.start
                    && mistake.start < f.window.end
            });
            if let Some((i, f)) = fault {
                let failed_at = failed_time(
                    run,
                    mistake.monitor,
                    mistake.target,
                    d_index(run, &d.detector),
                    mistake.start,
                );
                map.entry((mistake.monitor, mistake.target, i))
                    .or_insert_with(|| millis(failed_at - f.window.start));
            }
        }
        missed.push(d.failed_missed());
        mistakes.push(d.mistakes.len());
        delays.push(map);
    }
    (delays, mistakes, missed)
}

pub fn calibrate(
    live: &RunOutcome,
    same_seed: &RunOutcome,
    seeds: &[RunOutcome],
) -> Vec<CalibrationRow> {
    let (live_d, live_m, live_missed) = delays_and_mistakes(live);
    let (sim_d, sim_m, _) = delays_and_mistakes(same_seed);
    let per_seed: Vec<_> = seeds.iter().map(delays_and_mistakes).collect();
    live.detectors
        .iter()
        .enumerate()
        .map(|(d, name)| {
            let mut lv: Vec<f64> = live_d[d].values().copied().collect();
            let mut sv: Vec<f64> = sim_d[d].values().copied().collect();
            let mut all: Vec<f64> = per_seed
                .iter()
                .flat_map(|(ds, _, _)| ds[d].values().copied())
                .collect();
            let max_pair_diff_ms = live_d[d]
                .iter()
                .filter_map(|(k, l)| sim_d[d].get(k).map(|s| (l - s).abs()))
                .max_by(f64::total_cmp);
            let (live_p50_ms, sim_p50_ms) =
                (median_nearest_rank(&mut lv), median_nearest_rank(&mut sv));
            let diff_p50_ms = live_p50_ms.zip(sim_p50_ms).map(|(l, s)| l - s);
            let within = diff_p50_ms
                .zip(sim_p50_ms)
                .map(|(diff, s)| diff.abs() <= (s * TOLERANCE_SHARE).max(TOLERANCE_MS));
            let seeds_mistakes: Vec<f64> = per_seed.iter().map(|(_, m, _)| m[d] as f64).collect();
            CalibrationRow {
                detector: name.clone(),
                live_detected: lv.len(),
                live_missed: live_missed[d],
                live_p50_ms,
                live_mean_ms: mean(&lv),
                sim_p50_ms,
                sim_mean_ms: mean(&sv),
                diff_p50_ms,
                max_pair_diff_ms,
                seeds_p50_ms: median_nearest_rank(&mut all),
                seeds_mean_ms: mean(&all),
                live_mistakes: live_m[d],
                sim_mistakes: sim_m[d],
                seeds_mistakes_per_run: mean(&seeds_mistakes),
                within,
            }
        })
        .collect()
}

fn opt(v: Option<f64>) -> String {
    v.map_or_else(|| "-".into(), |v| format!("{v:.1}"))
}

pub fn calibration_csv(
    rows: &[CalibrationRow],
    seed: u64,
    sim_seeds: u32,
) -> Result<Vec<u8>, String> {
    let mut w = csv::Writer::from_writer(Vec::new());
    let header = [
        "detector",
        "live_detected",
        "live_missed",
        "live_p50_ms",
        "live_mean_ms",
        "sim_same_seed_p50_ms",
        "sim_same_seed_mean_ms",
        "diff_p50_ms",
        "max_pair_diff_ms",
        "sim_seeds",
        "sim_seeds_p50_ms",
        "sim_seeds_mean_ms",
        "live_mistakes",
        "sim_same_seed_mistakes",
        "sim_seeds_mistakes_per_run",
        "within_tolerance",
        "seed",
    ];
    w.write_record(header).map_err(|e| e.to_string())?;
    let f = |v: Option<f64>| v.map_or_else(String::new, |v| format!("{v:.3}"));
    for r in rows {
        w.write_record([
            r.detector.clone(),
            r.live_detected.to_string(),
            r.live_missed.to_string(),
            f(r.live_p50_ms),
            f(r.live_mean_ms),
            f(r.sim_p50_ms),
            f(r.sim_mean_ms),
            f(r.diff_p50_ms),
            f(r.max_pair_diff_ms),
            sim_seeds.to_string(),
            f(r.seeds_p50_ms),
            f(r.seeds_mean_ms),
            r.live_mistakes.to_string(),
            r.sim_mistakes.to_string(),
            f(r.seeds_mistakes_per_run),
            r.within.map_or_else(String::new, |b| b.to_string()),
            seed.to_string(),
        ])
        .map_err(|e| e.to_string())?;
    }
    w.into_inner().map_err(|e| e.to_string())
}

/// Prints the calibration table of `rows` (live seed `seed`, the simulator
/// over `sim_seeds` seeds).
pub fn print_table(rows: &[CalibrationRow], seed: u64, sim_seeds: u32) -> Result<(), String> {
    say!(
        "calibration: delay in ms from a fault's start to a Failed verdict (the detection of a fault to detect, or a mistake about the node a tolerated fault names), live seed {} vs the simulator on the same seed, and over {} seeds (tolerance: |live p50 - sim p50| <= max({:.0}% of sim p50, {TOLERANCE_MS:.0} ms))",
        seed,
        sim_seeds,
        TOLERANCE_SHARE * 100.0
    );
    say!(
        "{:<16} {:>6} {:>9} {:>9} {:>9} {:>9} {:>9} {:>10} {:>10} {:>7} {:>7} {:>9} {:>6}",
        "detector",
        "n/miss",
        "live p50",
        "live mean",
        "sim p50",
        "diff",
        "max |pair|",
        "seeds p50",
        "seeds mean",
        "mist L",
        "mist S",
        "mist S/run",
        "ok"
    );
    for r in rows {
        say!(
            "{:<16} {:>6} {:>9} {:>9} {:>9} {:>9} {:>9} {:>10} {:>10} {:>7} {:>7} {:>9} {:>6}",
            r.detector,
            format!("{}/{}", r.live_detected, r.live_missed),
            opt(r.live_p50_ms),
            opt(r.live_mean_ms),
            opt(r.sim_p50_ms),
            r.diff_p50_ms
                .map_or_else(|| "-".into(), |v| format!("{v:+.1}")),
            opt(r.max_pair_diff_ms),
            opt(r.seeds_p50_ms),
            opt(r.seeds_mean_ms),
            r.live_mistakes,
            r.sim_mistakes,
            opt(r.seeds_mistakes_per_run),
            match r.within {
                Some(true) => "yes",
                Some(false) => "NO",
                None => "-",
            }
        );
    }
    Ok(())
}
