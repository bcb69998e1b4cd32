//! The console table of one membership scenario: one line per judge, in
//! the style of the detector table ([`crate::tables::terminal_table`]).

use std::fmt::Write as _;

use fdlab_protocol::Nanos;

use super::metrics::{ClusterMetrics, JudgeSummary};
use crate::metrics::DurationStats;
use crate::tables::terminal::{aligned, secs3, short_rate};
use crate::words::plural;

/// The table of one membership scenario for the terminal: one line per
/// judge, columns aligned (names left, figures right), no trailing spaces.
/// `declared` as declared/crashes; times to the first Dead write and to
/// agreeing views in seconds with 3 decimals (nearest-rank p50, p90, max);
/// false declarations with their rate per node-hour up, how many were of a
/// healthy silo (neither paused nor starved), and the node-time they
/// destroyed, in seconds; the false-positive events at every observer (the
/// Lifeguard paper's count), at healthy and at starved or paused
/// observers; suspicions and those that led to no
/// declaration; votes; table conflicts per run; messages per node per
/// second; and the count of two active generations of one node, which must
/// be 0. `-` where there is nothing to measure.
pub fn cluster_terminal_table(m: &ClusterMetrics) -> String {
    let header = [
        "judge",
        "declared",
        "to Dead p50 (s)",
        "p90 (s)",
        "max (s)",
        "views agree p50 (s)",
        "false decl.",
        "per node-h",
        "of healthy",
        "destroyed (s)",
        "fp events healthy/starved obs.",
        "suspicions",
        "no decl.",
        "votes",
        "conflicts/run",
        "msgs/node/s",
        "2 active gens",
    ];
    let mut rows: Vec<Vec<String>> = vec![header.iter().map(|h| h.to_string()).collect()];
    rows.extend(m.summary.iter().map(row));
    let runs = m.runs();
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{} (cluster membership, {runs} run{}: {} judge{} x {} seed{}, seed-paired)",
        m.scenario,
        plural(runs),
        m.summary.len(),
        plural(m.summary.len()),
        m.seeds.len(),
        plural(m.seeds.len()),
    );
    out.push_str(&aligned(&rows));
    out
}

fn row(s: &JudgeSummary) -> Vec<String> {
    let secs = |stats: Option<DurationStats>, f: fn(&DurationStats) -> Nanos| {
        stats.map_or_else(|| "-".to_string(), |st| secs3(f(&st)))
    };
    let dash = |v: Option<String>| v.unwrap_or_else(|| "-".into());
    vec![
        s.label.clone(),
        format!("{}/{}", s.declared, s.crashes),
        secs(s.declare, |d| d.p50),
        secs(s.declare, |d| d.p90),
        secs(s.declare, |d| d.max),
        secs(s.agree, |d| d.p50),
        s.false_declarations.to_string(),
        dash(s.false_rate().map(short_rate)),
        s.false_declarations_healthy.to_string(),
        secs3(Nanos(u64::try_from(s.destroyed).unwrap_or(u64::MAX))),
        format!("{}/{}", s.observer_false_healthy, s.observer_false_starved),
        s.suspicions.to_string(),
        s.suspicions_undeclared.to_string(),
        s.votes.to_string(),
        dash(s.per_run(s.table_conflicts).map(|v| format!("{v:.1}"))),
        dash(s.messages_per_node_second().map(|v| format!("{v:.2}"))),
        s.two_active_generations.to_string(),
    ]
}

#[cfg(test)]
mod tests {
    use super::super::fixture::synthetic;
    use super::super::metrics::cluster_metrics;
    use super::*;

    #[test]
    fn one_aligned_line_per_judge() {
        let mut runs = vec![synthetic(20, 1, "classic", 0).0];
        let mut quiet = synthetic(20, 1, "a-long-judge-name", 0).0;
        quiet.crashes[0].declared = None;
        quiet.crashes[0].agreed = None;
        quiet.declarations.clear();
        runs.push(quiet);
        let table = cluster_terminal_table(&cluster_metrics("mixed", &runs));
        let lines: Vec<&str> = table.lines().collect();
        assert_eq!(
            lines[0],
            "mixed (cluster membership, 2 runs: 2 judges x 1 seed, seed-paired)"
        );
        assert_eq!(lines.len(), 4);
        let width = lines[1].chars().count();
        for line in &lines[1..] {
            assert_eq!(line.chars().count(), width, "{table}");
        }
        let cells = |line: &str| {
            line.split_whitespace()
                .map(String::from)
                .collect::<Vec<_>>()
        };
        let classic = cells(lines[2]);
        assert_eq!(
            classic[..5],
            ["classic", "1/1", "20.000", "20.000", "20.000"]
        );
        assert!(classic[5].starts_with("20.0"), "{table}");
        // One false declaration, of a paused silo (none of a healthy one),
        // 32.3 s of node-time lost, no second active generation.
        assert_eq!(classic[6], "1");
        assert_eq!(classic[8], "0");
        assert_eq!(classic[9], "32.300");
        assert_eq!(classic.last().unwrap(), "0");
        let quiet = cells(lines[3]);
        assert_eq!(quiet[..6], ["a-long-judge-name", "0/1", "-", "-", "-", "-"]);
        assert_eq!(quiet[6..10], ["0", "0", "0", "0.000"]);
    }
}
