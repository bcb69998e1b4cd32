//! What a finished membership sweep writes: `sweep.csv` (one row per point
//! × judge, every figure of a `membership.csv` row), `pareto.csv` (the
//! front alone) and `tradeoff.svg`; all derived from the plan and the units
//! alone, in the plan's order, so that they do not depend on `--jobs` or on
//! how often the sweep was interrupted.
//!
//! The front is over (median time from a crash to its Dead declaration,
//! false declarations per node-hour up): a row is on it when no other row
//! is at least as good on both and better on one. The median is *strict*:
//! a crash never declared ranks after every declared one, so a row that
//! declares half its crashes or fewer has none and stays off the front (as
//! a detector sweep's strict p99 does with misses).

use std::path::Path;

use fdlab_protocol::Nanos;
use fdlab_reports::atomic::write_file;
use fdlab_reports::charts::sweep::{sweep_svg_with, SweepPoint, MEMBERSHIP_AXES};
use fdlab_reports::cluster::tables::{
    membership_metric_fields, secs6, MEMBERSHIP_HEADER, MEMBERSHIP_METRIC_COLUMNS,
};
use fdlab_reports::cluster::{
    strict_declare_p50, summarize_totals, ClusterRunTotals, JudgeSummary,
};
use fdlab_scenarios::cluster_keys::ORLEANS_PREFIX;
use fdlab_scenarios::cluster_plan::ClusterPlanFile;

use super::output::{PARETO_CSV, SWEEP_CSV, TRADEOFF_SVG};
use super::units::Unit;

/// One row's figures: a point under one judge, pooled over the seeds.
pub struct RowResult {
    pub summary: JudgeSummary,
    /// Median time to declaration with a crash never declared counted as
    /// never ([`strict_declare_p50`]).
    pub strict_p50: Option<Nanos>,
    pub pareto: bool,
}

impl RowResult {
    /// The rate the front weighs: false declarations per node-hour up.
    pub fn rate(&self) -> f64 {
        self.summary.false_rate().unwrap_or(0.0)
    }
}

/// Every row's figures (units taken in seed order) and the Pareto front.
pub fn results(plan: &ClusterPlanFile, units: &[Unit<ClusterRunTotals>]) -> Vec<RowResult> {
    let mut per_row: Vec<Vec<&Unit<ClusterRunTotals>>> = vec![Vec::new(); plan.rows()];
    for u in units {
        per_row[u.point].push(u);
    }
    let mut out: Vec<RowResult> = per_row
        .into_iter()
        .enumerate()
        .map(|(row, mut us)| {
            us.sort_by_key(|u| u.seed);
            let totals: Vec<ClusterRunTotals> = us.iter().map(|u| u.totals.clone()).collect();
            let (_, j) = plan.row(row);
            RowResult {
                summary: summarize_totals(&plan.judges[j], &totals),
                strict_p50: strict_declare_p50(&totals),
                pareto: false,
            }
        })
        .collect();
    // As a detector sweep's front: in (time, rate, row) order a row is
    // dominated exactly when an earlier one has a rate at most its own.
    let mut order: Vec<(Nanos, f64, usize)> = out
        .iter()
        .enumerate()
        .filter_map(|(i, r)| r.strict_p50.map(|t| (t, r.rate(), i)))
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

fn header(plan: &ClusterPlanFile) -> Vec<String> {
    let mut h = vec!["point".to_string(), "judge".to_string()];
    h.extend(plan.params.iter().cloned());
    h.extend(
        MEMBERSHIP_HEADER[MEMBERSHIP_METRIC_COLUMNS]
            .iter()
            .map(|s| s.to_string()),
    );
    h.push("strict_declare_p50_s".into());
    h.push("pareto".into());
    h
}

fn row(plan: &ClusterPlanFile, index: usize, r: &RowResult) -> Vec<String> {
    let (p, j) = plan.row(index);
    let point = &plan.points[p];
    let mut row = vec![point.name.clone(), plan.judges[j].clone()];
    row.extend(point.values.iter().cloned());
    row.extend(membership_metric_fields(&r.summary));
    row.push(
        r.strict_p50
            .map_or(String::new(), |t| secs6(u128::from(t.0))),
    );
    row.push(r.pareto.to_string());
    row
}

fn csv_text(
    plan: &ClusterPlanFile,
    rows: impl Iterator<Item = Vec<String>>,
) -> Result<Vec<u8>, String> {
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record(header(plan)).map_err(|e| e.to_string())?;
    for r in rows {
        w.write_record(&r).map_err(|e| e.to_string())?;
    }
    w.into_inner().map_err(|e| e.to_string())
}

/// A varied key as labels show it: `probe_timeout`, `threshold`.
fn short(plan: &ClusterPlanFile, key: &str) -> String {
    let judge_prefix = plan.judges.first().map(|j| format!("{j}."));
    key.strip_prefix(ORLEANS_PREFIX)
        .or_else(|| judge_prefix.as_deref().and_then(|p| key.strip_prefix(p)))
        .unwrap_or(key)
        .to_string()
}

/// The label of a row on the chart and in tables: `probe_timeout=2s,
/// num_missed_probes_limit=3`, and its judge when the sweep runs several.
pub fn label(plan: &ClusterPlanFile, index: usize) -> String {
    let (p, j) = plan.row(index);
    let mut parts: Vec<String> = plan
        .params
        .iter()
        .zip(&plan.points[p].values)
        .map(|(k, v)| format!("{}={v}", short(plan, k)))
        .collect();
    if plan.judges.len() > 1 {
        parts.push(plan.judges[j].clone());
    }
    parts.join(", ")
}

/// Front rows by strict median, fastest first.
pub fn front(results: &[RowResult]) -> Vec<usize> {
    let mut front: Vec<usize> = (0..results.len()).filter(|&i| results[i].pareto).collect();
    front.sort_by_key(|&i| (results[i].strict_p50, i));
    front
}

/// Writes `sweep.csv`, `pareto.csv` and `tradeoff.svg` into `dir`.
pub fn write_outputs(
    dir: &Path,
    plan: &ClusterPlanFile,
    results: &[RowResult],
) -> Result<(), String> {
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
                time: r.strict_p50?.as_secs_f64(),
                rate: r.rate(),
                front: r.pareto,
            })
        })
        .collect();
    let keys: Vec<String> = plan.params.iter().map(|k| short(plan, k)).collect();
    let title = format!(
        "{}: membership sweep of {} ({})",
        plan.scenario,
        keys.join(", "),
        size(plan)
    );
    let svg = sweep_svg_with(&title, &MEMBERSHIP_AXES, &points).map_err(|e| io(TRADEOFF_SVG, e))?;
    write_file(&dir.join(TRADEOFF_SVG), svg.as_bytes()).map_err(|e| io(TRADEOFF_SVG, e))
}

/// `3 points × 1 judge × 20 seeds`.
pub fn size(plan: &ClusterPlanFile) -> String {
    let judges = plan.judges.len();
    format!(
        "{} point{} × {judges} judge{} × {} seed{}",
        plan.points.len(),
        if plan.points.len() == 1 { "" } else { "s" },
        if judges == 1 { "" } else { "s" },
        plan.seeds,
        if plan.seeds == 1 { "" } else { "s" }
    )
}

/// Prints the front of a finished membership sweep, written in `dir`.
pub fn print_front(dir: &Path, plan: &ClusterPlanFile, results: &[RowResult]) {
    let front = front(results);
    say!(
        "\n{}: {}, one cluster run each; Pareto front of median time to Dead (a crash never declared counts as never) against false declarations per node-hour:",
        plan.scenario,
        size(plan)
    );
    say!(
        "{:<8} {:<16} {:>14} {:>12} {:>18} {:>10}  parameters",
        "point",
        "judge",
        "to Dead p50 (s)",
        "declared",
        "false decl./node-h",
        "false decl."
    );
    for &i in front.iter().take(20) {
        let (p, j) = plan.row(i);
        let r = &results[i];
        let s = &r.summary;
        say!(
            "{:<8} {:<16} {:>14.3} {:>12} {:>18.4} {:>10}  {}",
            plan.points[p].name,
            plan.judges[j],
            r.strict_p50.map_or(f64::NAN, |t| t.as_secs_f64()),
            format!("{}/{}", s.declared, s.crashes),
            r.rate(),
            s.false_declarations,
            label(plan, i)
        );
    }
    if front.len() > 20 {
        say!("... {} more on the front (pareto.csv)", front.len() - 20);
    }
    if front.is_empty() {
        say!("(no point declared more than half of its crashes: nothing on the front; sweep.csv has every point's figures)");
    }
    say!(
        "wrote {SWEEP_CSV}, {PARETO_CSV} and {TRADEOFF_SVG} in {}",
        dir.display()
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use fdlab_scenarios::sweep_plan::PointFile;

    fn plan(points: usize, judges: &[&str]) -> ClusterPlanFile {
        ClusterPlanFile {
            scenario: "s".into(),
            scenario_sha256: String::new(),
            judges: judges.iter().map(|j| j.to_string()).collect(),
            vary: vec![],
            sample: 0,
            sample_seed: 1,
            first_seed: 1,
            seeds: 1,
            params: vec!["membership.orleans.probe_timeout".into()],
            points: (0..points)
                .map(|i| PointFile {
                    name: format!("p{i}"),
                    values: vec![format!("{}s", i + 1)],
                })
                .collect(),
        }
    }

    /// A run with one crash declared after `secs` (none: never) and
    /// `false_declarations` over an hour of node-time.
    fn unit(row: usize, secs: Option<u64>, false_declarations: u64) -> Unit<ClusterRunTotals> {
        Unit {
            point: row,
            seed: 1,
            totals: ClusterRunTotals {
                declare: vec![secs.map(Nanos::from_secs)],
                agree: vec![None],
                false_declarations,
                declarations: false_declarations + u64::from(secs.is_some()),
                node_time: Nanos::from_secs(3600),
                ..ClusterRunTotals::default()
            },
        }
    }

    #[test]
    fn the_front_keeps_the_undominated_rows_and_not_the_undeclared() {
        let plan = plan(5, &["classic"]);
        // (time, false): (10, 2) front, (20, 0) front, (30, 0) dominated,
        // never declared: off the front, however clean; (20, 0) again:
        // equal to row 1, not repeated.
        let units = vec![
            unit(0, Some(10), 2),
            unit(1, Some(20), 0),
            unit(2, Some(30), 0),
            unit(3, None, 0),
            unit(4, Some(20), 0),
        ];
        let r = results(&plan, &units);
        let flags: Vec<bool> = r.iter().map(|x| x.pareto).collect();
        assert_eq!(flags, [true, true, false, false, false]);
        assert_eq!(front(&r), [0, 1]);
        assert_eq!(r[0].rate(), 2.0);
        assert_eq!(label(&plan, 2), "probe_timeout=3s");
    }

    #[test]
    fn rows_are_points_by_judges_and_columns_are_membership_csv_s() {
        let plan = plan(2, &["classic", "phi"]);
        let units: Vec<_> = (0..4)
            .map(|row| unit(row, Some(10 + row as u64), 0))
            .collect();
        let r = results(&plan, &units);
        assert_eq!(r[3].summary.judge, "phi");
        assert_eq!(label(&plan, 3), "probe_timeout=2s, phi");
        let h = header(&plan);
        assert_eq!(
            h[..4],
            ["point", "judge", "membership.orleans.probe_timeout", "runs"]
        );
        let fields = row(&plan, 3, &r[3]);
        assert_eq!(fields.len(), h.len());
        assert_eq!(fields[..3], ["p1", "phi", "2s"]);
        assert_eq!(fields[fields.len() - 2..], ["13.000000", "false"]);
    }
}
