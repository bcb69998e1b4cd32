//! The QoS tables of `fdlab run`: five CSV files and a compact terminal table.
//!
//! Every file has a header row and a stable column order (the `*_HEADER`
//! constants below are the documentation of record), one row per item, rows in
//! the order the scenarios, seeds and detectors were given. Files are written
//! atomically ([`crate::atomic`]). Figures are defined in [`crate::metrics`]
//! (Chen, Toueg & Aguilera's QoS metrics).
//!
//! Number formats, fixed so that files diff cleanly between versions and
//! machines (Rust formats floats exactly, with no locale):
//! - times `*_ms` in milliseconds with 3 decimals (whole microseconds; exact
//!   integer rounding for measured times); `duration_s` and `pair_seconds` in
//!   seconds with 3 decimals; `must_not_detect_pair_hours` with 6 decimals;
//! - rates (`*_per_pair_hour`, `*_per_pair_second`) with 6 decimals; shares
//!   (`query_accuracy_healthy`, `alive_share_must_not_detect`,
//!   `share_runs_with_mistake`) as fractions with 9 decimals, so that one
//!   short mistake in thousands of pair-hours still shows;
//! - a figure with no samples behind it (no detection, no must-not-detect time,
//!   fewer than two runs for an interval) is an empty field; in `detections.csv`
//!   a missed detection has `missed` as its verdict time and an empty delay.
//!
//! Files:
//! - `summary.csv` ([`SUMMARY_HEADER`]): one row per scenario × detector,
//!   pooled over all pairs and seeds; `*_n`, `detect_windows`, `*_ci_runs`,
//!   `recovery_n`, `mistakes`, `false_failed`, `suspicions`,
//!   `must_not_detect_pair_hours`, `healthy_pair_hours`, `runs` and
//!   `pair_seconds` are the sample sizes behind the figures next to them.
//!   `*_ci_low/high` are 95% Student-t intervals over per-run values (see
//!   [`crate::metrics`]); the three rate intervals rest on the same runs,
//!   `mistake_rate_ci_runs`. `false_failed + suspicions = mistakes`.
//! - `runs.csv` ([`RUNS_HEADER`]): one row per scenario × seed × detector.
//! - `classes.csv` ([`CLASSES_HEADER`]): one row per scenario × detector ×
//!   link class with pairs (`mesh`; `source`, `forwarded` on a dataflow; see
//!   [`crate::metrics::LinkClass`]), with every figure of `summary.csv` over
//!   that class's pairs alone; counts and times add up to the summary's.
//! - `detections.csv` ([`DETECTIONS_HEADER`]): one row per must-detect window
//!   with judged time, per detector.
//! - `mistakes.csv` ([`MISTAKES_HEADER`]): one row per mistake; `active_faults`
//!   lists the faults (`kind target`, `; `-separated) in progress when it began,
//!   the likely cause.

use std::fmt::Write as _;
use std::io::{self, Write};
use std::path::Path;

use fdlab_protocol::time::{NANOS_PER_MILLI, NANOS_PER_SEC};
use fdlab_protocol::Nanos;

use crate::atomic::{ensure_dir, write_atomically};
use crate::metrics::{
    scenario_metrics, DetectorRun, DetectorSummary, DurationStats, MeanCi, RunMetrics,
    ScenarioMetrics, ScenarioResult,
};

pub const SUMMARY_CSV: &str = "summary.csv";
pub const RUNS_CSV: &str = "runs.csv";
pub const DETECTIONS_CSV: &str = "detections.csv";
pub const MISTAKES_CSV: &str = "mistakes.csv";
pub const CLASSES_CSV: &str = "classes.csv";

/// Columns of `summary.csv`.
pub const SUMMARY_HEADER: [&str; 60] = [
    "scenario",
    "detector",
    "runs",
    "pair_runs",
    "detect_windows",
    "failed_n",
    "failed_mean_ms",
    "failed_p50_ms",
    "failed_p90_ms",
    "failed_p99_ms",
    "failed_max_ms",
    "failed_mean_ci_low_ms",
    "failed_mean_ci_high_ms",
    "failed_ci_runs",
    "failed_missed",
    "suspect_n",
    "suspect_mean_ms",
    "suspect_p50_ms",
    "suspect_p90_ms",
    "suspect_p99_ms",
    "suspect_max_ms",
    "suspect_mean_ci_low_ms",
    "suspect_mean_ci_high_ms",
    "suspect_ci_runs",
    "suspect_missed",
    "recovery_n",
    "recovery_mean_ms",
    "recovery_p50_ms",
    "recovery_p90_ms",
    "recovery_p99_ms",
    "recovery_max_ms",
    "recovery_unfinished",
    "mistakes",
    "must_not_detect_pair_hours",
    "mistakes_per_pair_hour",
    "mistakes_per_pair_hour_ci_low",
    "mistakes_per_pair_hour_ci_high",
    "mistake_rate_ci_runs",
    "mistake_mean_ms",
    "false_failed",
    "false_failed_per_pair_hour",
    "false_failed_per_pair_hour_ci_low",
    "false_failed_per_pair_hour_ci_high",
    "false_failed_mean_ms",
    "suspicions",
    "suspicions_per_pair_hour",
    "suspicions_per_pair_hour_ci_low",
    "suspicions_per_pair_hour_ci_high",
    "suspicion_mean_ms",
    "healthy_pair_hours",
    "query_accuracy_healthy",
    "alive_share_must_not_detect",
    "runs_with_mistake",
    "share_runs_with_mistake",
    "messages",
    "bytes",
    "pair_seconds",
    "messages_per_pair_second",
    "bytes_per_pair_second",
    "events",
];

/// Columns of `runs.csv`.
pub const RUNS_HEADER: [&str; 45] = [
    "scenario",
    "seed",
    "detector",
    "pairs",
    "duration_s",
    "events",
    "detect_windows",
    "failed_n",
    "failed_mean_ms",
    "failed_p50_ms",
    "failed_p90_ms",
    "failed_p99_ms",
    "failed_max_ms",
    "failed_missed",
    "suspect_n",
    "suspect_mean_ms",
    "suspect_p50_ms",
    "suspect_p90_ms",
    "suspect_p99_ms",
    "suspect_max_ms",
    "suspect_missed",
    "recovery_n",
    "recovery_mean_ms",
    "recovery_p50_ms",
    "recovery_p90_ms",
    "recovery_p99_ms",
    "recovery_max_ms",
    "recovery_unfinished",
    "mistakes",
    "must_not_detect_pair_hours",
    "mistakes_per_pair_hour",
    "mistake_mean_ms",
    "false_failed",
    "false_failed_per_pair_hour",
    "false_failed_mean_ms",
    "suspicions",
    "suspicions_per_pair_hour",
    "suspicion_mean_ms",
    "healthy_pair_hours",
    "query_accuracy_healthy",
    "alive_share_must_not_detect",
    "messages",
    "bytes",
    "messages_per_pair_second",
    "bytes_per_pair_second",
];

/// Columns of `detections.csv`.
pub const DETECTIONS_HEADER: [&str; 14] = [
    "scenario",
    "seed",
    "detector",
    "monitor",
    "target",
    "fault",
    "fault_kind",
    "fault_target",
    "onset_ms",
    "end_ms",
    "suspect_at_ms",
    "suspect_delay_ms",
    "failed_at_ms",
    "failed_delay_ms",
];

/// Columns of `mistakes.csv`.
pub const MISTAKES_HEADER: [&str; 11] = [
    "scenario",
    "seed",
    "detector",
    "monitor",
    "target",
    "start_ms",
    "end_ms",
    "duration_ms",
    "worst_verdict",
    "ended_by",
    "active_faults",
];

/// The columns of `classes.csv`: the scenario, the detector and the class,
/// then those of [`SUMMARY_METRIC_COLUMNS`].
pub fn classes_header() -> Vec<&'static str> {
    let mut header = vec!["scenario", "detector", "class"];
    header.extend(&SUMMARY_HEADER[SUMMARY_METRIC_COLUMNS]);
    header
}

/// Computes the metrics of `results` and writes the five CSV files into `dir`
/// (created if missing).
pub fn write_run_tables(dir: &Path, results: &[ScenarioResult]) -> io::Result<()> {
    let metrics: Vec<ScenarioMetrics> = results.iter().map(scenario_metrics).collect();
    write_tables(dir, &metrics)
}

/// Writes the five CSV files of metrics already computed (e.g. also printed
/// with [`terminal_table`]) into `dir` (created if missing).
pub fn write_tables(dir: &Path, metrics: &[ScenarioMetrics]) -> io::Result<()> {
    ensure_dir(dir)?;
    write_atomically(&dir.join(SUMMARY_CSV), |out| write_summary(out, metrics))?;
    write_atomically(&dir.join(RUNS_CSV), |out| write_runs(out, metrics))?;
    write_atomically(&dir.join(DETECTIONS_CSV), |out| {
        write_detections(out, metrics)
    })?;
    write_atomically(&dir.join(MISTAKES_CSV), |out| write_mistakes(out, metrics))?;
    write_atomically(&dir.join(CLASSES_CSV), |out| write_classes(out, metrics))
}

fn write_summary(out: &mut dyn Write, metrics: &[ScenarioMetrics]) -> io::Result<()> {
    let mut w = csv::Writer::from_writer(out);
    w.write_record(SUMMARY_HEADER)?;
    for m in metrics {
        let events: u128 = m.runs.iter().map(|r| u128::from(r.events)).sum();
        for s in &m.summary {
            let mut row = vec![m.scenario.clone(), s.detector.clone()];
            row.extend(summary_metric_fields(s));
            row.push(events.to_string());
            w.write_record(&row)?;
        }
    }
    w.flush()
}

/// The columns of [`SUMMARY_HEADER`] that hold one detector's figures (from
/// `runs` to `bytes_per_pair_second`), for tables keyed otherwise (a sweep's
/// points).
pub const SUMMARY_METRIC_COLUMNS: std::ops::Range<usize> = 2..59;

/// One detector's figures, as [`SUMMARY_METRIC_COLUMNS`] names them.
pub fn summary_metric_fields(s: &DetectorSummary) -> Vec<String> {
    let mut row = vec![
        s.runs.to_string(),
        s.pair_runs.to_string(),
        s.detect_windows.to_string(),
    ];
    push_summary_stats(&mut row, s.failed, s.failed_ci, s.failed_missed);
    push_summary_stats(&mut row, s.suspect, s.suspect_ci, s.suspect_missed);
    push_stats(&mut row, s.recovery);
    row.extend([
        s.recovery_unfinished.to_string(),
        s.mistakes.to_string(),
        hours(s.must_not_detect),
        opt(s.mistake_rate(), 6),
        opt(s.mistake_rate_ci.map(|c| c.low), 6),
        opt(s.mistake_rate_ci.map(|c| c.high), 6),
        s.mistake_rate_ci.map_or(0, |c| c.runs).to_string(),
        opt_ms(s.mean_mistake()),
        s.false_failed.to_string(),
        opt(s.false_failed_rate(), 6),
        opt(s.false_failed_rate_ci.map(|c| c.low), 6),
        opt(s.false_failed_rate_ci.map(|c| c.high), 6),
        opt_ms(s.mean_false_failed()),
        s.suspicions().to_string(),
        opt(s.suspicion_rate(), 6),
        opt(s.suspicion_rate_ci.map(|c| c.low), 6),
        opt(s.suspicion_rate_ci.map(|c| c.high), 6),
        opt_ms(s.mean_suspicion()),
        hours(s.healthy),
        opt(s.query_accuracy(), 9),
        opt(s.alive_share_must_not_detect(), 9),
        s.runs_with_mistake.to_string(),
        opt(s.share_runs_with_mistake(), 9),
        s.messages.to_string(),
        s.bytes.to_string(),
        seconds(s.pair_time),
        opt(s.messages_per_pair_second(), 6),
        opt(s.bytes_per_pair_second(), 6),
    ]);
    row
}

fn push_summary_stats(
    row: &mut Vec<String>,
    stats: Option<DurationStats>,
    ci: Option<MeanCi>,
    missed: usize,
) {
    push_stats(row, stats);
    row.extend([
        opt_ms_f64(ci.map(|c| c.low)),
        opt_ms_f64(ci.map(|c| c.high)),
        ci.map_or(0, |c| c.runs).to_string(),
        missed.to_string(),
    ]);
}

/// `n, mean, p50, p90, p99, max`.
fn push_stats(row: &mut Vec<String>, stats: Option<DurationStats>) {
    match stats {
        Some(s) => row.extend([
            s.n.to_string(),
            ms(s.mean),
            ms(s.p50),
            ms(s.p90),
            ms(s.p99),
            ms(s.max),
        ]),
        None => {
            row.push("0".into());
            row.extend(std::iter::repeat_n(String::new(), 5));
        }
    }
}

fn write_runs(out: &mut dyn Write, metrics: &[ScenarioMetrics]) -> io::Result<()> {
    let mut w = csv::Writer::from_writer(out);
    w.write_record(RUNS_HEADER)?;
    for m in metrics {
        for run in &m.runs {
            for d in &run.detectors {
                w.write_record(run_row(&m.scenario, run, d))?;
            }
        }
    }
    w.flush()
}

fn run_row(scenario: &str, run: &RunMetrics, d: &DetectorRun) -> Vec<String> {
    let mut row = vec![
        scenario.to_string(),
        run.seed.to_string(),
        d.detector.clone(),
        d.pairs.to_string(),
        seconds(u128::from(run.duration.0)),
        run.events.to_string(),
        d.detections.len().to_string(),
    ];
    push_stats(&mut row, d.failed_stats());
    row.push(d.failed_missed().to_string());
    push_stats(&mut row, d.suspect_stats());
    row.push(d.suspect_missed().to_string());
    push_stats(&mut row, d.recovery_stats());
    row.extend([
        d.recovery_unfinished().to_string(),
        d.mistakes.len().to_string(),
        hours(d.must_not_detect),
        opt(d.mistake_rate(), 6),
        opt_ms(d.mean_mistake()),
        d.false_failed().to_string(),
        opt(d.false_failed_rate(), 6),
        opt_ms(d.mean_false_failed()),
        d.suspicions().to_string(),
        opt(d.suspicion_rate(), 6),
        opt_ms(d.mean_suspicion()),
        hours(d.healthy),
        opt(d.query_accuracy(), 9),
        opt(d.alive_share_must_not_detect(), 9),
        d.messages.to_string(),
        d.bytes.to_string(),
        opt(d.messages_per_pair_second(), 6),
        opt(d.bytes_per_pair_second(), 6),
    ]);
    row
}

fn write_classes(out: &mut dyn Write, metrics: &[ScenarioMetrics]) -> io::Result<()> {
    let mut w = csv::Writer::from_writer(out);
    w.write_record(classes_header())?;
    for m in metrics {
        for c in &m.classes {
            let mut row = vec![
                m.scenario.clone(),
                c.summary.detector.clone(),
                c.class.as_str().to_string(),
            ];
            row.extend(summary_metric_fields(&c.summary));
            w.write_record(&row)?;
        }
    }
    w.flush()
}

fn write_detections(out: &mut dyn Write, metrics: &[ScenarioMetrics]) -> io::Result<()> {
    let mut w = csv::Writer::from_writer(out);
    w.write_record(DETECTIONS_HEADER)?;
    for m in metrics {
        for run in &m.runs {
            for d in &run.detectors {
                for x in &d.detections {
                    let fault = run.faults.get(x.fault);
                    let verdict_at = |t: Option<Nanos>| t.map_or_else(|| "missed".into(), ms);
                    w.write_record([
                        m.scenario.clone(),
                        run.seed.to_string(),
                        d.detector.clone(),
                        run.node_name(x.monitor),
                        run.node_name(x.target),
                        x.fault.to_string(),
                        fault.map_or_else(String::new, |f| f.kind.name().to_string()),
                        fault.map_or_else(String::new, |f| f.target.clone()),
                        ms(x.window.start),
                        ms(x.window.end),
                        verdict_at(x.suspect_at),
                        opt_ms(x.suspect_delay()),
                        verdict_at(x.failed_at),
                        opt_ms(x.failed_delay()),
                    ])?;
                }
            }
        }
    }
    w.flush()
}

fn write_mistakes(out: &mut dyn Write, metrics: &[ScenarioMetrics]) -> io::Result<()> {
    let mut w = csv::Writer::from_writer(out);
    w.write_record(MISTAKES_HEADER)?;
    for m in metrics {
        for run in &m.runs {
            for d in &run.detectors {
                for x in &d.mistakes {
                    let active: Vec<String> = run
                        .faults
                        .iter()
                        .filter(|f| f.window.start <= x.start && x.start < f.window.end)
                        .map(|f| format!("{} {}", f.kind.name(), f.target))
                        .collect();
                    w.write_record([
                        m.scenario.clone(),
                        run.seed.to_string(),
                        d.detector.clone(),
                        run.node_name(x.monitor),
                        run.node_name(x.target),
                        ms(x.start),
                        ms(x.end),
                        ms(x.duration()),
                        x.worst.as_str().to_string(),
                        x.ended_by.as_str().to_string(),
                        active.join("; "),
                    ])?;
                }
            }
        }
    }
    w.flush()
}

/// The comparison table of one scenario for the terminal: one line per
/// detector, columns aligned (detector names left, figures right), no trailing
/// spaces. Detection times (to Failed) and recovery lags in seconds with 3
/// decimals; `missed` as missed/windows; mistakes split into false Failed and
/// Suspect-only ones (suspicions), each with its rate per pair-hour; P_A over
/// healthy time as a percentage rounded down to 0.01%, so that only a
/// detector with no mistake at all shows 100.00%; `-` where there is nothing
/// to measure.
pub fn terminal_table(m: &ScenarioMetrics) -> String {
    let header = [
        "detector",
        "T_D p50 (s)",
        "p99 (s)",
        "max (s)",
        "missed",
        "false Failed",
        "per pair-h",
        "suspicions",
        "per pair-h",
        "recovery p50 (s)",
        "p99 (s)",
        "P_A",
        "msgs/pair/s",
    ];
    let mut rows: Vec<Vec<String>> = vec![header.iter().map(|h| h.to_string()).collect()];
    for s in &m.summary {
        rows.push(terminal_row(s));
    }
    let columns = header.len();
    let widths: Vec<usize> = (0..columns)
        .map(|c| rows.iter().map(|r| r[c].chars().count()).max().unwrap_or(0))
        .collect();
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{} ({} run{})",
        m.scenario,
        m.runs.len(),
        if m.runs.len() == 1 { "" } else { "s" }
    );
    for row in &rows {
        let mut line = String::new();
        for (c, cell) in row.iter().enumerate() {
            let pad = widths[c].saturating_sub(cell.chars().count());
            if c == 0 {
                line.push_str(cell);
                line.extend(std::iter::repeat_n(' ', pad));
            } else {
                line.push_str("  ");
                line.extend(std::iter::repeat_n(' ', pad));
                line.push_str(cell);
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

fn terminal_row(s: &DetectorSummary) -> Vec<String> {
    let secs = |stats: Option<DurationStats>, f: fn(&DurationStats) -> Nanos| {
        stats
            .as_ref()
            .map_or_else(|| "-".to_string(), |st| secs3(f(st)))
    };
    let rate = |r: Option<f64>| r.map_or_else(|| "-".into(), short_rate);
    vec![
        s.detector.clone(),
        secs(s.failed, |st| st.p50),
        secs(s.failed, |st| st.p99),
        secs(s.failed, |st| st.max),
        format!("{}/{}", s.failed_missed, s.detect_windows),
        s.false_failed.to_string(),
        rate(s.false_failed_rate()),
        s.suspicions().to_string(),
        rate(s.suspicion_rate()),
        secs(s.recovery, |st| st.p50),
        secs(s.recovery, |st| st.p99),
        percent_floor(s.alive_healthy, s.healthy),
        s.messages_per_pair_second()
            .map_or_else(|| "-".into(), |v| format!("{v:.2}")),
    ]
}

/// Milliseconds with 3 decimals, rounded to the nearest microsecond in integers.
fn ms(t: Nanos) -> String {
    let us = (u128::from(t.0) + 500) / 1_000;
    format!("{}.{:03}", us / 1_000, us % 1_000)
}

fn opt_ms(t: Option<Nanos>) -> String {
    t.map_or_else(String::new, ms)
}

fn opt_ms_f64(ns: Option<f64>) -> String {
    ns.map_or_else(String::new, |v| {
        format!("{:.3}", v / NANOS_PER_MILLI as f64 + 0.0)
    })
}

/// Seconds with 3 decimals, rounded to the nearest millisecond in integers.
fn secs3(t: Nanos) -> String {
    let ms = (u128::from(t.0) + NANOS_PER_MILLI as u128 / 2) / NANOS_PER_MILLI as u128;
    format!("{}.{:03}", ms / 1_000, ms % 1_000)
}

/// A sum of nanoseconds as seconds with 3 decimals.
fn seconds(ns: u128) -> String {
    let ms = (ns + NANOS_PER_MILLI as u128 / 2) / NANOS_PER_MILLI as u128;
    format!("{}.{:03}", ms / 1_000, ms % 1_000)
}

/// A sum of nanoseconds as hours with 6 decimals.
fn hours(ns: u128) -> String {
    format!("{:.6}", ns as f64 / (3_600.0 * NANOS_PER_SEC as f64))
}

fn opt(v: Option<f64>, decimals: usize) -> String {
    // `+ 0.0` turns a -0.0 into 0.0.
    v.map_or_else(String::new, |v| format!("{:.*}", decimals, v + 0.0))
}

/// Three significant digits for small rates, fewer decimals for large ones;
/// `0` for none.
fn short_rate(v: f64) -> String {
    if v <= 0.0 || !v.is_finite() {
        return if v.is_finite() {
            "0".into()
        } else {
            "-".into()
        };
    }
    let decimals = if v >= 100.0 {
        0
    } else if v >= 10.0 {
        1
    } else if v >= 1.0 {
        2
    } else {
        let mut decimals = 3;
        let mut threshold = 0.1;
        while v < threshold && decimals < 12 {
            threshold /= 10.0;
            decimals += 1;
        }
        decimals
    };
    format!("{v:.decimals$}")
}

/// `part / whole` as a percentage with 2 decimals, rounded down (integer
/// arithmetic); `-` if `whole` is zero.
fn percent_floor(part: u128, whole: u128) -> String {
    if whole == 0 {
        return "-".into();
    }
    let basis_points = part.min(whole).saturating_mul(10_000) / whole;
    format!("{}.{:02}%", basis_points / 100, basis_points % 100)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::tests::two_seeds;

    fn read(path: &Path) -> (Vec<String>, Vec<Vec<String>>) {
        let mut r = csv::Reader::from_path(path).unwrap();
        let header = r.headers().unwrap().iter().map(String::from).collect();
        let rows = r
            .records()
            .map(|x| x.unwrap().iter().map(String::from).collect())
            .collect();
        (header, rows)
    }

    #[test]
    fn csv_files_have_headers_and_one_row_per_item() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        write_run_tables(&out, &[two_seeds()]).unwrap();

        let (header, rows) = read(&out.join(SUMMARY_CSV));
        assert_eq!(header, SUMMARY_HEADER);
        assert_eq!(rows.len(), 2, "one row per scenario x detector");
        let col = |name: &str| SUMMARY_HEADER.iter().position(|h| *h == name).unwrap();
        let fixed = &rows[0];
        assert_eq!(fixed[col("detector")], "fixed");
        assert_eq!(fixed[col("failed_n")], "2");
        assert_eq!(fixed[col("failed_mean_ms")], "2500.000");
        assert_eq!(fixed[col("failed_p50_ms")], "2000.000");
        assert_eq!(fixed[col("failed_max_ms")], "3000.000");
        assert_eq!(fixed[col("failed_ci_runs")], "2");
        assert_eq!(fixed[col("failed_mean_ci_high_ms")], "8853.100");
        assert_eq!(fixed[col("mistakes_per_pair_hour")], "0.000000");
        assert_eq!(fixed[col("must_not_detect_pair_hours")], "0.050000");
        assert_eq!(fixed[col("messages_per_pair_second")], "1.000000");
        assert_eq!(fixed[col("pair_seconds")], "240.000");
        let phi = &rows[1];
        assert_eq!(phi[col("mistakes")], "1");
        assert_eq!(phi[col("mistake_mean_ms")], "500.000");
        assert_eq!(phi[col("share_runs_with_mistake")], "0.500000000");
        assert_eq!(phi[col("mistakes_per_pair_hour")], "20.000000");
        // The one mistake is a suspicion; none is a false Failed.
        assert_eq!(phi[col("false_failed")], "0");
        assert_eq!(phi[col("false_failed_per_pair_hour")], "0.000000");
        assert_eq!(phi[col("false_failed_mean_ms")], "");
        assert_eq!(phi[col("suspicions")], "1");
        assert_eq!(phi[col("suspicions_per_pair_hour")], "20.000000");
        assert_eq!(phi[col("suspicion_mean_ms")], "500.000");
        // fixed trusts the restarted n1 500 ms after the fault, and makes no
        // mistake: P_A over healthy time is whole.
        assert_eq!(fixed[col("recovery_n")], "2");
        assert_eq!(fixed[col("recovery_p50_ms")], "500.000");
        assert_eq!(fixed[col("recovery_p99_ms")], "500.000");
        assert_eq!(fixed[col("recovery_unfinished")], "0");
        assert_eq!(fixed[col("healthy_pair_hours")], "0.049722");
        assert_eq!(fixed[col("query_accuracy_healthy")], "1.000000000");
        assert_eq!(fixed[col("alive_share_must_not_detect")], "0.994444444");
        assert_eq!(phi[col("query_accuracy_healthy")], "0.997222222");

        let (header, rows) = read(&out.join(RUNS_CSV));
        assert_eq!(header, RUNS_HEADER);
        assert_eq!(rows.len(), 4, "one row per seed x detector");
        assert_eq!(rows[0][..3], ["crash", "1", "fixed"]);
        assert_eq!(rows[3][..3], ["crash", "2", "phi"]);
        assert_eq!(rows[0][4], "60.000");
        let col = |name: &str| RUNS_HEADER.iter().position(|h| *h == name).unwrap();
        assert_eq!(rows[0][col("recovery_p50_ms")], "500.000");
        assert_eq!(rows[3][col("suspicions")], "1");
        assert_eq!(rows[3][col("false_failed")], "0");
        assert_eq!(rows[3][col("suspicions_per_pair_hour")], "40.000000");
        assert_eq!(rows[0][col("query_accuracy_healthy")], "1.000000000");

        // A mesh: one class per detector, with the summary's figures.
        let (header, rows) = read(&out.join(CLASSES_CSV));
        assert_eq!(header, classes_header());
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[1][..3], ["crash", "phi", "mesh"]);
        let (_, summary) = read(&out.join(SUMMARY_CSV));
        assert_eq!(rows[1][3..], summary[1][2..summary[1].len() - 1]);

        let (header, rows) = read(&out.join(DETECTIONS_CSV));
        assert_eq!(header, DETECTIONS_HEADER);
        assert_eq!(rows.len(), 4, "one window per seed x detector");
        assert_eq!(
            rows[0],
            [
                "crash",
                "1",
                "fixed",
                "n0",
                "n1",
                "0",
                "crash",
                "n1",
                "10000.000",
                "40000.000",
                "12000.000",
                "2000.000",
                "12000.000",
                "2000.000"
            ]
        );

        let (header, rows) = read(&out.join(MISTAKES_CSV));
        assert_eq!(header, MISTAKES_HEADER);
        assert_eq!(rows.len(), 1);
        assert_eq!(
            rows[0],
            [
                "crash", "2", "phi", "n0", "n1", "5000.000", "5500.000", "500.000", "suspect",
                "alive", ""
            ]
        );
        // Nothing else left in the directory (no temporary files).
        assert_eq!(std::fs::read_dir(&out).unwrap().count(), 5);
    }

    #[test]
    fn missed_detection_is_written_as_missed() {
        let mut result = two_seeds();
        result.runs.truncate(1);
        result.runs[0].pairs[0].detectors[0].changes.clear();
        let dir = tempfile::tempdir().unwrap();
        write_run_tables(dir.path(), &[result]).unwrap();
        let (_, rows) = read(&dir.path().join(DETECTIONS_CSV));
        assert_eq!(rows[0][12], "missed");
        assert_eq!(rows[0][13], "");
        let (_, rows) = read(&dir.path().join(SUMMARY_CSV));
        let col = |name: &str| SUMMARY_HEADER.iter().position(|h| *h == name).unwrap();
        assert_eq!(rows[0][col("failed_n")], "0");
        assert_eq!(rows[0][col("failed_mean_ms")], "");
        assert_eq!(rows[0][col("failed_missed")], "1");
        assert_eq!(rows[0][col("failed_ci_runs")], "0");
    }

    #[test]
    fn empty_input_writes_headers_only() {
        let dir = tempfile::tempdir().unwrap();
        write_run_tables(dir.path(), &[]).unwrap();
        for (file, len) in [
            (SUMMARY_CSV, SUMMARY_HEADER.len()),
            (RUNS_CSV, RUNS_HEADER.len()),
            (DETECTIONS_CSV, DETECTIONS_HEADER.len()),
            (MISTAKES_CSV, MISTAKES_HEADER.len()),
            (CLASSES_CSV, classes_header().len()),
        ] {
            let (header, rows) = read(&dir.path().join(file));
            assert_eq!(header.len(), len);
            assert!(rows.is_empty());
        }
    }

    #[test]
    fn terminal_table_aligns() {
        let mut result = two_seeds();
        // A detector with a long name and no detection at all.
        for run in &mut result.runs {
            run.detectors.push("a-much-longer-detector-name".into());
            for pair in &mut run.pairs {
                pair.detectors.push(Default::default());
            }
        }
        let m = scenario_metrics(&result);
        let table = terminal_table(&m);
        let lines: Vec<&str> = table.lines().collect();
        assert_eq!(lines[0], "crash (2 runs)");
        assert_eq!(lines.len(), 5);
        let width = lines[1].chars().count();
        for line in &lines[1..] {
            assert_eq!(line.chars().count(), width, "{table}");
            assert!(!line.ends_with(' '));
        }
        // Right-aligned columns end at the same offsets: each header name ends
        // where the figures below it end.
        for name in ["p99 (s)", "missed", "suspicions", "P_A", "msgs/pair/s"] {
            let end = lines[1].find(name).unwrap() + name.len();
            for line in &lines[2..] {
                let before = &line[..end];
                assert!(!before.ends_with(' '), "{name} misaligned:\n{table}");
                assert!(
                    line[end..].is_empty() || line[end..].starts_with("  "),
                    "{name} misaligned:\n{table}"
                );
            }
        }
        assert_eq!(
            table,
            "crash (2 runs)\n\
detector                     T_D p50 (s)  p99 (s)  max (s)  missed  false Failed  per pair-h  suspicions  per pair-h  recovery p50 (s)  p99 (s)      P_A  msgs/pair/s\n\
fixed                              2.000    3.000    3.000     0/2             0           0           0           0             0.500    0.500  100.00%         1.00\n\
phi                                1.000    1.000    1.000     0/2             0           0           1        20.0             0.000    0.000   99.72%        10.00\n\
a-much-longer-detector-name            -        -        -     2/2             0           0           0           0                 -        -  100.00%         0.00\n"
        );
    }

    #[test]
    fn number_formats() {
        assert_eq!(ms(Nanos(1_234_567_890)), "1234.568");
        assert_eq!(ms(Nanos(999_999_999_500)), "1000000.000");
        assert_eq!(ms(Nanos::ZERO), "0.000");
        assert_eq!(secs3(Nanos(2_499_600_000)), "2.500");
        assert_eq!(short_rate(0.0), "0");
        assert_eq!(short_rate(0.05), "0.0500");
        assert_eq!(short_rate(0.5), "0.500");
        assert_eq!(short_rate(4.5678), "4.57");
        assert_eq!(short_rate(1234.5), "1234");
        assert_eq!(percent_floor(9_999, 10_000), "99.99%");
        assert_eq!(percent_floor(99_999, 100_000), "99.99%");
        assert_eq!(percent_floor(1, 1), "100.00%");
        assert_eq!(percent_floor(0, 0), "-");
        assert_eq!(opt(Some(-0.0), 3), "0.000");
        assert_eq!(opt(None, 3), "");
    }
}
