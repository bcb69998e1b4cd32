//! What a finished sweep writes: `sweep.csv` (one row per point, every
//! metric of a `summary.csv` row), `pareto.csv` (the front alone) and
//! `tradeoff.svg`; all derived from the plan and the units alone, so an
//! unsharded sweep and merged shards write the same bytes.

use std::path::Path;

use fdlab_protocol::Nanos;
use fdlab_reports::atomic::write_file;
use fdlab_reports::charts::sweep::{sweep_svg, SweepPoint};
use fdlab_reports::metrics::{summarize_totals, DetectorSummary, RunTotals};
use fdlab_reports::tables::{summary_metric_fields, SUMMARY_HEADER, SUMMARY_METRIC_COLUMNS};

use fdlab_scenarios::sweep_plan::PlanFile;

use super::units::Unit;

pub const SWEEP_CSV: &str = "sweep.csv";
pub const PARETO_CSV: &str = "pareto.csv";
pub const TRADEOFF_SVG: &str = "tradeoff.svg";

/// One point's figures.
pub struct PointResult {
    pub summary: DetectorSummary,
    /// p99 detection time with a missed detection counted as never
    /// (nearest rank over every must-detect window): `None` when misses
    /// reach the 99th percentile, or nothing was to be detected.
    pub strict_p99: Option<Nanos>,
    pub pareto: bool,
}

impl PointResult {
    /// The rate the front weighs: false Failed per pair-hour (a Suspect that
    /// ended without Failed is flicker, counted apart in `sweep.csv`).
    pub fn rate(&self) -> f64 {
        self.summary.false_failed_rate().unwrap_or(0.0)
    }
}

/// The p99 over all windows, a miss ranking after every detection.
fn strict_p99(totals: &[RunTotals]) -> Option<Nanos> {
    let windows: usize = totals.iter().map(|t| t.failed.len()).sum();
    if windows == 0 {
        return None;
    }
    let mut detected: Vec<Nanos> = totals
        .iter()
        .flat_map(|t| t.failed.iter().flatten().copied())
        .collect();
    detected.sort_unstable();
    // Nearest rank over every window; misses fill the ranks past `detected`.
    let rank = (99 * windows).div_ceil(100).max(1);
    detected.get(rank - 1).copied()
}

/// Every point's summary (units taken in seed order) and the Pareto front of
/// (strict p99, false Failed per pair-hour): the points no other point matches
/// or beats on both with a strict gain on one.
pub fn results(plan: &PlanFile, units: &[Unit]) -> Vec<PointResult> {
    let mut per_point: Vec<Vec<&Unit>> = vec![Vec::new(); plan.points.len()];
    for u in units {
        per_point[u.point].push(u);
    }
    let mut out: Vec<PointResult> = per_point
        .into_iter()
        .zip(&plan.points)
        .map(|(mut us, p)| {
            us.sort_by_key(|u| u.seed);
            let totals: Vec<RunTotals> = us.iter().map(|u| u.totals.clone()).collect();
            PointResult {
                summary: summarize_totals(&p.name, &totals),
                strict_p99: strict_p99(&totals),
                pareto: false,
            }
        })
        .collect();
    // In (p99, rate, index) order, a point is dominated exactly when an
    // earlier one has a rate at most its own (equal points: the first one
    // stands for them); one pass keeps the lowest rate so far. O(n log n),
    // for sweeps of many thousands of points.
    let mut order: Vec<(Nanos, f64, usize)> = out
        .iter()
        .enumerate()
        .filter_map(|(i, r)| r.strict_p99.map(|t| (t, r.rate(), i)))
        .collect();
    order.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.total_cmp(&b.1)).then(a.2.cmp(&b.2)));
    let mut lowest = f64::INFINITY;
    for (_, rate, i) in order {
        if rate < lowest {
            out[i].pareto = true;
            lowest = rate;
        }
    }
    out
}

fn header(plan: &PlanFile) -> Vec<String> {
    let mut h = vec!["point".to_string()];
    h.extend(plan.params.iter().cloned());
    h.extend(
        SUMMARY_HEADER[SUMMARY_METRIC_COLUMNS]
            .iter()
            .map(|s| s.to_string()),
    );
    h.push("strict_p99_ms".into());
    h.push("pareto".into());
    h
}

fn row(plan: &PlanFile, index: usize, r: &PointResult) -> Vec<String> {
    let p = &plan.points[index];
    let mut row = vec![p.name.clone()];
    row.extend(p.values.iter().cloned());
    row.extend(summary_metric_fields(&r.summary));
    row.push(r.strict_p99.map_or(String::new(), |t| {
        let mut s = String::new();
        t.fmt_millis(&mut s);
        s
    }));
    row.push(r.pareto.to_string());
    row
}

fn csv_text(plan: &PlanFile, rows: impl Iterator<Item = Vec<String>>) -> Result<Vec<u8>, String> {
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record(header(plan)).map_err(|e| e.to_string())?;
    for r in rows {
        w.write_record(&r).map_err(|e| e.to_string())?;
    }
    w.into_inner().map_err(|e| e.to_string())
}

/// The label of a point on the chart and in tables: `threshold=8, ...`.
pub fn label(plan: &PlanFile, index: usize) -> String {
    plan.params
        .iter()
        .zip(&plan.points[index].values)
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Front points by strict p99, fastest first.
pub fn front(results: &[PointResult]) -> Vec<usize> {
    let mut front: Vec<usize> = (0..results.len()).filter(|&i| results[i].pareto).collect();
    front.sort_by_key(|&i| (results[i].strict_p99, i));
    front
}

/// Writes `sweep.csv`, `pareto.csv` and `tradeoff.svg` into `dir`.
pub fn write_outputs(dir: &Path, plan: &PlanFile, results: &[PointResult]) -> Result<(), String> {
    let io = |file: &str, e: std::io::Error| format!("{}: {e}", dir.join(file).display());
    let all = csv_text(
        plan,
        results.iter().enumerate().map(|(i, r)| row(plan, i, r)),
    )?;
    write_file(&dir.join(SWEEP_CSV), &all).map_err(|e| io(SWEEP_CSV, e))?;
    let front = front(results);
    let pareto = csv_text(plan, front.iter().map(|&i| row(plan, i, &results[i])))?;
    write_file(&dir.join(PARETO_CSV), &pareto).map_err(|e| io(PARETO_CSV, e))?;
    let points: Vec<SweepPoint> = results
        .iter()
        .enumerate()
        .filter_map(|(i, r)| {
            Some(SweepPoint {
                label: label(plan, i),
                time: r.strict_p99?.as_secs_f64(),
                rate: r.rate(),
                front: r.pareto,
            })
        })
        .collect();
    let title = format!(
        "{}: sweep of {} ({} points × {} seeds)",
        plan.scenario,
        plan.detector,
        plan.points.len(),
        plan.seeds
    );
    let svg = sweep_svg(&title, &points).map_err(|e| io(TRADEOFF_SVG, e))?;
    write_file(&dir.join(TRADEOFF_SVG), svg.as_bytes()).map_err(|e| io(TRADEOFF_SVG, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One run's totals: detection delays and `false_failed` false Failed.
    fn totals(failed: Vec<Option<u64>>, false_failed: u64) -> RunTotals {
        RunTotals {
            pairs: 1,
            suspect: failed.iter().map(|_| None).collect(),
            failed: failed.into_iter().map(|d| d.map(Nanos)).collect(),
            mistakes: false_failed,
            false_failed,
            must_not_detect: 3_600_000_000_000,
            ..RunTotals::default()
        }
    }

    #[test]
    fn a_miss_counts_as_never_in_the_strict_p99() {
        assert_eq!(
            strict_p99(&[totals(vec![Some(5), Some(7)], 0)]),
            Some(Nanos(7))
        );
        assert_eq!(strict_p99(&[totals(vec![Some(5), None], 0)]), None);
        let many: Vec<Option<u64>> = (1..=200).map(Some).chain([None]).collect();
        assert_eq!(strict_p99(&[totals(many, 0)]), Some(Nanos(199)));
        assert_eq!(strict_p99(&[totals(vec![], 0)]), None);
    }

    #[test]
    fn the_front_keeps_the_undominated_points() {
        let plan = PlanFile {
            scenario: "s".into(),
            scenario_sha256: String::new(),
            detector: "d".into(),
            vary: vec![],
            sample: 0,
            sample_seed: 1,
            first_seed: 1,
            seeds: 1,
            params: vec!["x".into()],
            points: (0..4)
                .map(|i| fdlab_scenarios::sweep_plan::PointFile {
                    name: format!("p{i}"),
                    values: vec![i.to_string()],
                })
                .collect(),
        };
        // Point 1 also flickers (100 suspicions): ranked on all mistakes it
        // would fall behind point 2; flicker does not count against a point.
        let unit = |point, d, m, suspicions| {
            let mut t = totals(vec![Some(d)], m);
            t.mistakes += suspicions;
            Unit {
                point,
                seed: 1,
                totals: t,
            }
        };
        // (time, false Failed): (1, 5) front, (2, 1) front, (3, 1) dominated,
        // (2, 1) again: equal to point 1, not repeated on the front.
        let units = vec![
            unit(0, 1, 5, 0),
            unit(1, 2, 1, 100),
            unit(2, 3, 1, 0),
            unit(3, 2, 1, 100),
        ];
        let r = results(&plan, &units);
        let flags: Vec<bool> = r.iter().map(|x| x.pareto).collect();
        assert_eq!(flags, [true, true, false, false]);
        assert_eq!(front(&r), [0, 1]);
    }
}
