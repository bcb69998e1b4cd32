//! The comparison table of one scenario for the terminal, and its number
//! formats (seconds, short rates, percentages rounded down).

use std::fmt::Write as _;

use fdlab_protocol::time::NANOS_PER_MILLI;
use fdlab_protocol::Nanos;

use crate::metrics::{DetectorSummary, DurationStats, ScenarioMetrics};

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
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{} ({} run{})",
        m.scenario,
        m.runs.len(),
        if m.runs.len() == 1 { "" } else { "s" }
    );
    out.push_str(&aligned(&rows));
    out
}

/// Rows as aligned lines: the first column left, the others right, two
/// spaces apart, no trailing spaces.
pub(crate) fn aligned(rows: &[Vec<String>]) -> String {
    let columns = rows.first().map_or(0, Vec::len);
    let widths: Vec<usize> = (0..columns)
        .map(|c| rows.iter().map(|r| r[c].chars().count()).max().unwrap_or(0))
        .collect();
    let mut out = String::new();
    for row in rows {
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

/// Seconds with 3 decimals, rounded to the nearest millisecond in integers.
pub(crate) fn secs3(t: Nanos) -> String {
    let ms = (u128::from(t.0) + NANOS_PER_MILLI as u128 / 2) / NANOS_PER_MILLI as u128;
    format!("{}.{:03}", ms / 1_000, ms % 1_000)
}

/// Three significant digits for small rates, fewer decimals for large ones;
/// `0` for none.
pub(crate) fn short_rate(v: f64) -> String {
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
    use crate::metrics::scenario_metrics;
    use crate::metrics::tests::two_seeds;

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
    }
}
