//! The QoS tables of `fdlab run`: five CSV files, written here, and a compact
//! terminal table ([`terminal_table`]); their number formats are fixed (below).
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
//! - `classes.csv` ([`classes_header`]): one row per scenario × detector ×
//!   link class with pairs (`mesh`; `source`, `forwarded` on a dataflow; see
//!   [`crate::metrics::LinkClass`]), with every figure of `summary.csv` over
//!   that class's pairs alone; counts and times add up to the summary's.
//! - `detections.csv` ([`DETECTIONS_HEADER`]): one row per must-detect window
//!   with judged time, per detector.
//! - `mistakes.csv` ([`MISTAKES_HEADER`]): one row per mistake; `active_faults`
//!   lists the faults (`kind target`, `; `-separated) in progress when it began,
//!   the likely cause.

pub(crate) mod format;
mod json;
pub(crate) mod terminal;
#[cfg(test)]
mod tests;

pub use terminal::terminal_table;

use std::io::{self, Write};
use std::path::Path;

use fdlab_protocol::Nanos;

use crate::atomic::{ensure_dir, write_atomically};
use crate::metrics::{
    scenario_metrics, DetectorRun, DetectorSummary, DurationStats, MeanCi, RunMetrics,
    ScenarioMetrics, ScenarioResult,
};
use format::{hours, ms, opt, opt_ms, opt_ms_f64, seconds};

pub const SUMMARY_CSV: &str = "summary.csv";
/// `summary.csv`'s rows as JSON objects, for machines.
pub const SUMMARY_JSON: &str = "summary.json";
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
    write_tables_with(dir, metrics, true)
}

/// [`write_tables`], with `mistakes.csv` only when `mistakes` is set: one
/// row per mistake is most of a suite's bytes.
pub fn write_tables_with(
    dir: &Path,
    metrics: &[ScenarioMetrics],
    mistakes: bool,
) -> io::Result<()> {
    ensure_dir(dir)?;
    let mut summary = Vec::new();
    write_summary(&mut summary, metrics)?;
    write_atomically(&dir.join(SUMMARY_CSV), |out| out.write_all(&summary))?;
    let text = String::from_utf8_lossy(&summary);
    let json = json::rows_to_json(&text).map_err(io::Error::other)?;
    write_atomically(&dir.join(SUMMARY_JSON), |out| {
        out.write_all(json.as_bytes())
    })?;
    write_atomically(&dir.join(RUNS_CSV), |out| write_runs(out, metrics))?;
    write_atomically(&dir.join(DETECTIONS_CSV), |out| {
        write_detections(out, metrics)
    })?;
    if mistakes {
        write_atomically(&dir.join(MISTAKES_CSV), |out| write_mistakes(out, metrics))?;
    }
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
