//! The detailed comparison table of one scenario, shared by the HTML and
//! Markdown reports: every figure of §5 with the number of samples behind it
//! and the 95% intervals, as text cells; and, for a dataflow, the same
//! figures per link class ([`class_rows`]). (The terminal shows a compact
//! subset, [`crate::tables::terminal_table`]; the CSV files hold every figure
//! unrounded.)

use fdlab_protocol::Nanos;

use crate::charts::tradeoff::fmt_rate;
use crate::metrics::{ClassSummary, DetectorSummary, DurationStats, MeanCi};

/// Column names, with units.
pub const COLUMNS: [&str; 18] = [
    "detector",
    "T_D p50",
    "p90",
    "p99",
    "max",
    "mean [95% CI]",
    "detected / faults",
    "to Suspect p50",
    "recovery p50 (p99)",
    "false Failed",
    "per pair-hour [95% CI]",
    "mean",
    "suspicions",
    "per pair-hour [95% CI]",
    "mean",
    "P_A",
    "runs with a mistake",
    "msgs (bytes) / pair / s",
];

/// What each column means, for the reports' key.
pub const KEY: [(&str, &str); 12] = [
    (
        "T_D",
        "detection time: from a detect-fault's onset to the first Failed verdict that lasts until the fault ends (nearest-rank percentiles over all monitored pairs and seeds)",
    ),
    (
        "detected / faults",
        "must-detect windows (pair × fault × seed) with a lasting Failed, out of all; the rest were missed",
    ),
    ("to Suspect", "the same, to the first lasting Suspect-or-worse"),
    (
        "recovery",
        "recovery lag: from the end of a fault the detector was suspecting to its first Alive verdict about the peer (nearest-rank p50 and p99; recoveries cut short by another fault, the monitor going down or the end of the run are not counted)",
    ),
    (
        "false Failed",
        "mistakes (Suspect or Failed verdicts about a peer that must not be detected at that moment) that reached Failed: what a failover would have acted on",
    ),
    (
        "suspicions",
        "mistakes that never reached Failed (Suspect-only); false Failed + suspicions = all mistakes (in the CSV files)",
    ),
    (
        "per pair-hour",
        "per monitored-pair-hour of must-not-detect time (Chen et al.'s λ_M, split)",
    ),
    (
        "95% CI",
        "Student-t interval over per-seed values (the seeds are the independent replications)",
    ),
    (
        "mean",
        "mean time until such a mistaken verdict returns to Alive (T_M, split)",
    ),
    (
        "P_A",
        "query accuracy over healthy time: the share of must-not-detect time outside recovery lags during which the verdict was Alive",
    ),
    (
        "by link class",
        "on a dataflow, the same figures over source links (monitors of a layer-0 source) and forwarded links (monitors of deeper stages) apart",
    ),
    (
        "msgs (bytes) / pair / s",
        "liveness messages (and their bytes) per monitored pair per second",
    ),
];

/// How a cell writes a duration of `ns`: (unit, ns per unit, decimals).
/// Seconds with 3 decimals from a millisecond up; a shorter duration, which
/// would read `0.000 s`, in µs (ns below a µs).
fn unit_of(ns: f64) -> (&'static str, f64, usize) {
    if ns >= 1e6 || ns == 0.0 {
        ("s", 1e9, 3)
    } else if ns >= 1e3 {
        ("µs", 1e3, 1)
    } else {
        ("ns", 1.0, 0)
    }
}

/// A duration (`1.234 s`, `235.7 µs`), or `-`.
pub(crate) fn secs(t: Option<Nanos>) -> String {
    t.map_or_else(
        || "-".into(),
        |t| {
            let ns = t.as_nanos() as f64;
            let (unit, per, decimals) = unit_of(ns);
            format!("{:.decimals$} {unit}", ns / per)
        },
    )
}

/// `1.234 s [0.900, 1.500]` (the interval in the mean's unit), or the mean
/// alone with fewer than two runs.
pub(crate) fn mean_with_ci(stats: Option<DurationStats>, ci: Option<MeanCi>) -> String {
    let Some(s) = stats else {
        return "-".into();
    };
    match ci {
        Some(ci) => {
            let (_, per, decimals) = unit_of(s.mean.as_nanos() as f64);
            format!(
                "{} [{:.decimals$}, {:.decimals$}]",
                secs(Some(s.mean)),
                ci.low / per,
                ci.high / per
            )
        }
        None => secs(Some(s.mean)),
    }
}

/// Columns about detection (T_D to Failed and to Suspect, recovery).
const DETECTION_COLUMNS: std::ops::RangeInclusive<usize> = 1..=8;

/// The columns worth showing for `summary`: all of them, except that a
/// scenario with nothing to detect drops the detection columns (all `-`).
pub fn visible_columns(summary: &[DetectorSummary]) -> Vec<usize> {
    let detects = summary.iter().any(|s| s.detect_windows > 0);
    (0..COLUMNS.len())
        .filter(|i| detects || !DETECTION_COLUMNS.contains(i))
        .collect()
}

/// One row per detector, cells in [`COLUMNS`] order.
pub fn rows(summary: &[DetectorSummary]) -> Vec<Vec<String>> {
    summary.iter().map(row).collect()
}

/// A rate per pair-hour with its interval, `-` without exposure.
fn rate_with_ci(rate: Option<f64>, ci: Option<MeanCi>) -> String {
    match (rate, ci) {
        (Some(r), Some(ci)) => format!(
            "{} [{}, {}]",
            fmt_rate(r),
            fmt_rate(ci.low),
            fmt_rate(ci.high)
        ),
        (Some(r), None) => fmt_rate(r),
        (None, _) => "-".into(),
    }
}

/// `0.250 s (1.000 s)`: the p50 and p99 recovery lag.
fn recovery(stats: Option<DurationStats>) -> String {
    match stats {
        Some(r) => format!("{} ({})", secs(Some(r.p50)), secs(Some(r.p99))),
        None => "-".into(),
    }
}

/// P_A, rounded down so that only a detector never wrong shows 100%.
fn p_a(s: &DetectorSummary) -> String {
    match s.query_accuracy() {
        Some(p) => format!("{:.4}%", (p * 1e6).floor() / 1e4),
        None => "-".into(),
    }
}

fn row(s: &DetectorSummary) -> Vec<String> {
    let failed = s.failed;
    let detected = failed.map_or(0, |f| f.n);
    let overhead = match (s.messages_per_pair_second(), s.bytes_per_pair_second()) {
        (Some(m), Some(b)) => format!("{m:.2} ({b:.0})"),
        _ => "-".into(),
    };
    vec![
        s.detector.clone(),
        secs(failed.map(|f| f.p50)),
        secs(failed.map(|f| f.p90)),
        secs(failed.map(|f| f.p99)),
        secs(failed.map(|f| f.max)),
        mean_with_ci(failed, s.failed_ci),
        format!("{detected} / {}", s.detect_windows),
        secs(s.suspect.map(|f| f.p50)),
        recovery(s.recovery),
        s.false_failed.to_string(),
        rate_with_ci(s.false_failed_rate(), s.false_failed_rate_ci),
        secs(s.mean_false_failed()),
        s.suspicions().to_string(),
        rate_with_ci(s.suspicion_rate(), s.suspicion_rate_ci),
        secs(s.mean_suspicion()),
        p_a(s),
        format!("{} / {}", s.runs_with_mistake, s.runs),
        overhead,
    ]
}

/// Column names of the per-class table.
pub const CLASS_COLUMNS: [&str; 10] = [
    "detector",
    "link class",
    "pairs (× seeds)",
    "T_D p50",
    "p99",
    "detected / faults",
    "false Failed",
    "per pair-hour",
    "suspicions",
    "per pair-hour",
];

/// Whether a scenario's classes are worth a table of their own: more than
/// one class (a mesh has one, the blend itself).
pub fn has_classes(classes: &[ClassSummary]) -> bool {
    classes.iter().any(|c| c.class != classes[0].class)
}

/// One row per detector and class, cells in [`CLASS_COLUMNS`] order.
pub fn class_rows(classes: &[ClassSummary]) -> Vec<Vec<String>> {
    classes
        .iter()
        .map(|c| {
            let s = &c.summary;
            let rate = |r: Option<f64>| r.map_or_else(|| "-".into(), fmt_rate);
            vec![
                s.detector.clone(),
                c.class.as_str().to_string(),
                s.pair_runs.to_string(),
                secs(s.failed.map(|f| f.p50)),
                secs(s.failed.map(|f| f.p99)),
                format!("{} / {}", s.failed.map_or(0, |f| f.n), s.detect_windows),
                s.false_failed.to_string(),
                rate(s.false_failed_rate()),
                s.suspicions().to_string(),
                rate(s.suspicion_rate()),
            ]
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::scenario_metrics;
    use crate::metrics::tests::two_seeds;

    #[test]
    fn rows_carry_figures_intervals_and_sample_counts() {
        let m = scenario_metrics(&two_seeds());
        let rows = rows(&m.summary);
        assert_eq!(rows.len(), 2);
        for r in &rows {
            assert_eq!(r.len(), COLUMNS.len());
        }
        let fixed = &rows[0];
        assert_eq!(fixed[0], "fixed");
        assert_eq!(fixed[1], "2.000 s");
        assert_eq!(fixed[3], "3.000 s");
        // t(1) = 12.7062: 2.5 s ± 6.353 s, clamped at 0.
        assert_eq!(fixed[5], "2.500 s [0.000, 8.853]");
        assert_eq!(fixed[6], "2 / 2");
        assert_eq!(fixed[8], "0.500 s (0.500 s)");
        assert_eq!(fixed[9], "0");
        assert_eq!(fixed[10], "0 [0, 0]");
        assert_eq!(fixed[12], "0");
        assert_eq!(fixed[15], "100.0000%");
        assert_eq!(fixed[16], "0 / 2");
        assert_eq!(fixed[17], "1.00 (100)");
        let phi = &rows[1];
        assert_eq!(phi[9], "0");
        assert_eq!(phi[11], "-");
        assert_eq!(phi[12], "1");
        assert!(phi[13].starts_with("20.0 [0, "), "{}", phi[13]);
        assert_eq!(phi[14], "0.500 s");
        assert_eq!(phi[15], "99.7222%");
        assert_eq!(phi[16], "1 / 2");
        assert_eq!(
            visible_columns(&m.summary),
            (0..COLUMNS.len()).collect::<Vec<_>>()
        );
        let mut quiet = m.summary.clone();
        for s in &mut quiet {
            s.detect_windows = 0;
        }
        assert_eq!(
            visible_columns(&quiet),
            vec![0, 9, 10, 11, 12, 13, 14, 15, 16, 17]
        );
        // A mesh has one class: no table of its own.
        assert!(!has_classes(&m.classes));
    }

    #[test]
    fn class_rows_of_a_dataflow() {
        let mut result = two_seeds();
        for run in &mut result.runs {
            run.layers = vec![0, 1, 2];
        }
        let m = scenario_metrics(&result);
        assert!(has_classes(&m.classes));
        let rows = class_rows(&m.classes);
        assert_eq!(rows.len(), 4);
        for r in &rows {
            assert_eq!(r.len(), CLASS_COLUMNS.len());
        }
        // n2 watches the source n0 (nothing to detect); n0 watches n1.
        assert_eq!(rows[0][..3], ["fixed", "source", "2"]);
        assert_eq!(rows[0][5], "0 / 0");
        assert_eq!(rows[1][..3], ["fixed", "forwarded", "2"]);
        assert_eq!(rows[1][3], "2.000 s");
        assert_eq!(rows[1][5], "2 / 2");
        // One suspicion in 60 pair-seconds of must-not-detect time.
        assert_eq!(rows[3][6..], ["0", "0", "1", "60.0"]);
    }

    #[test]
    fn durations_below_a_millisecond_are_not_zero() {
        assert_eq!(secs(Some(Nanos(235_700))), "235.7 µs");
        assert_eq!(secs(Some(Nanos(40))), "40 ns");
        assert_eq!(secs(Some(Nanos(1_000_000))), "0.001 s");
        assert_eq!(secs(Some(Nanos::ZERO)), "0.000 s");
        assert_eq!(secs(None), "-");
        let stats = DurationStats::from_samples([Nanos(200_000), Nanos(300_000)]);
        let ci = MeanCi {
            mean: 250_000.0,
            low: 120_000.0,
            high: 380_000.0,
            runs: 2,
        };
        assert_eq!(mean_with_ci(stats, Some(ci)), "250.0 µs [120.0, 380.0]");
    }
}
