//! The CSV files of membership scenarios, beside the QoS tables of a run
//! ([`crate::tables`]), written atomically the same way: a header row with
//! a stable column order (the `*_HEADER` constants are the documentation
//! of record), rows in the order the scenarios, judges and seeds were
//! given. A run writes them only when it has membership scenarios.
//!
//! - `membership.csv` ([`MEMBERSHIP_HEADER`]): one row per scenario ×
//!   judge, the figures of [`super::JudgeSummary`] pooled over seeds.
//!   `declare_n`, `declare_ci_runs`, `agree_n`, `false_ci_runs`, `runs`
//!   and `node_hours` are the sample sizes and exposure behind the figures
//!   next to them; `declared + never_declared = crashes`;
//!   `suspicions_undeclared` is the part of `suspicions` during which the
//!   target was not declared Dead.
//! - `declarations.csv` ([`DECLARATIONS_HEADER`]): one row per Dead write,
//!   runs in the order given, then time order; `time_s` and `agreed_s` are
//!   instants of true time (`agreed_s` empty if the views never agreed),
//!   `target` and `by` silos as `n3#1` (node 3, generation 1), `false`
//!   is `true` for a declaration of a live silo, `impaired` `true` when
//!   the silo's node was paused or starved then (a false declaration that
//!   is not is one of a healthy member), `destroyed_s` the node-time
//!   it destroyed, and `unresponsive_s` how much of that time the silo
//!   could not answer anyone (paused or stopped, or busy with one event
//!   for at least a second): a declaration in force longer than that is
//!   one the protocol did not take back.
//! - `comparisons.csv` ([`COMPARISONS_HEADER`]): one row per scenario ×
//!   ordered pair of judges (`judge_a` before `judge_b` in judge order),
//!   seed-paired ([`super::compare`]): `seeds` is the number of seeds both
//!   ran with node-time, the pairs behind every figure of the row;
//!   `a_false_healthy` and `b_false_healthy` the two judges' false
//!   declarations of healthy members over those seeds, `ratio_false_healthy`
//!   mean(A's per-seed rates per node-hour) / mean(B's) with Fieller's 95%
//!   interval (`_ci_low`, `_ci_high`); `a_false`, `b_false`, `ratio_false`
//!   and its interval the same for all false declarations. The ratio and
//!   its interval are empty when B made none (a ratio to zero has no
//!   value), the interval also with fewer than two seeds; `_ci_high` alone
//!   is empty when the interval has no upper bound (B's rate is not
//!   clearly above zero with these seeds; `_ci_low` then says how small the
//!   ratio can be, 0 when these seeds do not bound it).
//!
//! Number formats (fixed, as in the other CSV files): times `*_s` in
//! seconds with 6 decimals (whole microseconds, exact integer rounding for
//! measured times); `node_hours` with 6 decimals; rates (`*_per_node_hour`,
//! `*_per_node_second`) with 6 decimals; means per run (`*_per_run`) with 3
//! decimals; counts as integers; a figure with no sample behind it (no
//! declaration, no node-time, fewer than two runs for an interval) is an
//! empty field.

use std::io::{self, Write};
use std::path::Path;

use fdlab_protocol::Nanos;

use super::compare::PairedRatio;
use super::metrics::{ClusterMetrics, JudgeSummary};
use crate::atomic::{ensure_dir, write_atomically};
use crate::metrics::DurationStats;
use crate::tables::format::{hours, opt};

pub const MEMBERSHIP_CSV: &str = "membership.csv";
pub const DECLARATIONS_CSV: &str = "declarations.csv";
pub const COMPARISONS_CSV: &str = "comparisons.csv";

/// Columns of `membership.csv`.
pub const MEMBERSHIP_HEADER: [&str; 53] = [
    "scenario",
    "judge",
    "runs",
    "node_hours",
    "crashes",
    "declared",
    "never_declared",
    "declare_n",
    "declare_mean_s",
    "declare_mean_ci_low_s",
    "declare_mean_ci_high_s",
    "declare_ci_runs",
    "declare_p50_s",
    "declare_p90_s",
    "declare_max_s",
    "agree_n",
    "agree_p50_s",
    "agree_p90_s",
    "agree_max_s",
    "never_agreed",
    "declarations",
    "false_declarations",
    "false_per_node_hour",
    "false_per_node_hour_ci_low",
    "false_per_node_hour_ci_high",
    "false_ci_runs",
    "false_healthy",
    "false_healthy_per_node_hour",
    "false_healthy_per_node_hour_ci_low",
    "false_healthy_per_node_hour_ci_high",
    "destroyed_s",
    "destroyed_mean_s",
    "suspicions",
    "suspicions_undeclared",
    "votes",
    "votes_withheld",
    "table_reads_per_run",
    "table_writes_per_run",
    "table_conflicts_per_run",
    "table_unavailable_per_run",
    "messages",
    "bytes",
    "messages_per_node_second",
    "bytes_per_node_second",
    "self_terminations",
    "join_give_ups",
    "restarts",
    "two_active_generations",
    "events",
    "observer_false_healthy",
    "observer_false_healthy_per_node_hour",
    "observer_false_starved",
    "observer_false_starved_per_node_hour",
];

/// Columns of `declarations.csv`.
pub const DECLARATIONS_HEADER: [&str; 11] = [
    "scenario",
    "judge",
    "seed",
    "time_s",
    "target",
    "by",
    "false",
    "impaired",
    "destroyed_s",
    "unresponsive_s",
    "agreed_s",
];

/// Columns of `comparisons.csv`.
pub const COMPARISONS_HEADER: [&str; 24] = [
    "scenario",
    "judge_a",
    "judge_b",
    "seeds",
    "a_false_healthy",
    "b_false_healthy",
    "ratio_false_healthy",
    "ratio_false_healthy_ci_low",
    "ratio_false_healthy_ci_high",
    "a_false",
    "b_false",
    "ratio_false",
    "ratio_false_ci_low",
    "ratio_false_ci_high",
    "a_observer_false_healthy",
    "b_observer_false_healthy",
    "ratio_observer_false_healthy",
    "ratio_observer_false_healthy_ci_low",
    "ratio_observer_false_healthy_ci_high",
    "a_observer_false",
    "b_observer_false",
    "ratio_observer_false",
    "ratio_observer_false_ci_low",
    "ratio_observer_false_ci_high",
];

/// Nanoseconds as seconds with 6 decimals, rounded to the nearest
/// microsecond in integers.
pub fn secs6(ns: u128) -> String {
    let us = (ns + 500) / 1_000;
    format!("{}.{:06}", us / 1_000_000, us % 1_000_000)
}

fn opt_secs6(t: Option<Nanos>) -> String {
    t.map_or_else(String::new, |t| secs6(u128::from(t.0)))
}

/// Writes `membership.csv`, `declarations.csv` and `comparisons.csv` of
/// `metrics` into `dir` (created if missing).
pub fn write_membership_tables(dir: &Path, metrics: &[ClusterMetrics]) -> io::Result<()> {
    ensure_dir(dir)?;
    write_atomically(&dir.join(MEMBERSHIP_CSV), |out| {
        write_membership(out, metrics)
    })?;
    write_atomically(&dir.join(DECLARATIONS_CSV), |out| {
        write_declarations(out, metrics)
    })?;
    write_atomically(&dir.join(COMPARISONS_CSV), |out| {
        write_comparisons(out, metrics)
    })
}

/// Writes `membership.csv` into `out`.
pub fn write_membership(out: &mut dyn Write, metrics: &[ClusterMetrics]) -> io::Result<()> {
    let mut w = csv::Writer::from_writer(out);
    w.write_record(MEMBERSHIP_HEADER)?;
    for m in metrics {
        for s in &m.summary {
            w.write_record(membership_row(&m.scenario, s))?;
        }
    }
    w.flush()
}

fn push_stats(row: &mut Vec<String>, stats: Option<DurationStats>) {
    row.extend([
        opt_secs6(stats.map(|d| d.p50)),
        opt_secs6(stats.map(|d| d.p90)),
        opt_secs6(stats.map(|d| d.max)),
    ]);
}

/// The columns of [`MEMBERSHIP_HEADER`] that hold a judge's figures (all
/// but `scenario` and `judge`): a sweep's rows have them too.
pub const MEMBERSHIP_METRIC_COLUMNS: std::ops::RangeFrom<usize> = 2..;

fn membership_row(scenario: &str, s: &JudgeSummary) -> Vec<String> {
    let mut row = vec![scenario.to_string(), s.judge.clone()];
    row.extend(membership_metric_fields(s));
    row
}

/// The fields of [`MEMBERSHIP_HEADER`]`[`[`MEMBERSHIP_METRIC_COLUMNS`]`]`
/// for `s`.
pub fn membership_metric_fields(s: &JudgeSummary) -> Vec<String> {
    let declare = s.declare;
    let ci_secs = |v: Option<f64>| opt(v.map(|ns| ns / 1e9), 6);
    let mut row = vec![
        s.runs.to_string(),
        hours(s.node_time),
        s.crashes.to_string(),
        s.declared.to_string(),
        s.never_declared().to_string(),
        declare.map_or(0, |d| d.n).to_string(),
        opt_secs6(declare.map(|d| d.mean)),
        ci_secs(s.declare_ci.map(|c| c.low)),
        ci_secs(s.declare_ci.map(|c| c.high)),
        s.declare_ci.map_or(0, |c| c.runs).to_string(),
    ];
    push_stats(&mut row, declare);
    row.push(s.agree.map_or(0, |d| d.n).to_string());
    push_stats(&mut row, s.agree);
    row.extend([
        s.never_agreed.to_string(),
        s.declarations.to_string(),
        s.false_declarations.to_string(),
        opt(s.false_rate(), 6),
        opt(s.false_rate_ci.map(|c| c.low), 6),
        opt(s.false_rate_ci.map(|c| c.high), 6),
        s.false_rate_ci.map_or(0, |c| c.runs).to_string(),
        s.false_declarations_healthy.to_string(),
        opt(s.healthy_false_rate(), 6),
        opt(s.healthy_false_rate_ci.map(|c| c.low), 6),
        opt(s.healthy_false_rate_ci.map(|c| c.high), 6),
        secs6(s.destroyed),
        opt_secs6(s.mean_destroyed()),
        s.suspicions.to_string(),
        s.suspicions_undeclared.to_string(),
        s.votes.to_string(),
        s.votes_withheld.to_string(),
    ]);
    for total in [
        s.table_reads,
        s.table_writes,
        s.table_conflicts,
        s.table_unavailable,
    ] {
        row.push(opt(s.per_run(total), 3));
    }
    row.extend([
        s.messages.to_string(),
        s.bytes.to_string(),
        opt(s.messages_per_node_second(), 6),
        opt(s.bytes_per_node_second(), 6),
        s.self_terminations.to_string(),
        s.join_give_ups.to_string(),
        s.restarts.to_string(),
        s.two_active_generations.to_string(),
        s.events.to_string(),
        s.observer_false_healthy.to_string(),
        opt(s.rate(s.observer_false_healthy), 6),
        s.observer_false_starved.to_string(),
        opt(s.rate(s.observer_false_starved), 6),
    ]);
    row
}

/// Writes `declarations.csv` into `out`.
pub fn write_declarations(out: &mut dyn Write, metrics: &[ClusterMetrics]) -> io::Result<()> {
    let mut w = csv::Writer::from_writer(out);
    w.write_record(DECLARATIONS_HEADER)?;
    for m in metrics {
        for row in &m.declarations {
            let d = &row.declaration;
            w.write_record([
                m.scenario.clone(),
                row.judge.clone(),
                row.seed.to_string(),
                secs6(u128::from(d.at.0)),
                d.target.to_string(),
                d.by.to_string(),
                d.false_positive.to_string(),
                d.impaired.to_string(),
                secs6(u128::from(d.destroyed.0)),
                secs6(u128::from(d.unresponsive.0)),
                opt_secs6(d.agreed),
            ])?;
        }
    }
    w.flush()
}

/// Writes `comparisons.csv` into `out`.
pub fn write_comparisons(out: &mut dyn Write, metrics: &[ClusterMetrics]) -> io::Result<()> {
    let mut w = csv::Writer::from_writer(out);
    w.write_record(COMPARISONS_HEADER)?;
    for m in metrics {
        for c in &m.comparisons {
            let mut row = vec![
                m.scenario.clone(),
                c.judge_a.clone(),
                c.judge_b.clone(),
                c.seeds.to_string(),
            ];
            push_ratio(&mut row, &c.false_healthy);
            push_ratio(&mut row, &c.false_declarations);
            push_ratio(&mut row, &c.observer_healthy);
            push_ratio(&mut row, &c.observer_all);
            w.write_record(row)?;
        }
    }
    w.flush()
}

/// The two counts, the ratio and its interval's ends (ratios with 6
/// decimals; empty when there is none). An undefined ratio (B made none)
/// has no interval either: [`crate::metrics::ratio_ci95`]'s `[0,
/// unbounded)` then bounds nothing.
fn push_ratio(row: &mut Vec<String>, r: &PairedRatio) {
    let ci = r.ci.filter(|c| c.ratio.is_some());
    row.extend([
        r.a_count.to_string(),
        r.b_count.to_string(),
        opt(r.ratio, 6),
        opt(ci.map(|c| c.low), 6),
        opt(ci.and_then(|c| c.high), 6),
    ]);
}

#[cfg(test)]
mod tests {
    use super::super::fixture::synthetic;
    use super::super::metrics::cluster_metrics;
    use super::*;

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
    fn one_row_per_scenario_and_judge_and_one_per_declaration() {
        let runs: Vec<_> = ["classic", "phi"]
            .iter()
            .flat_map(|j| [1, 2].map(|seed| synthetic(20, seed, j, 0).0))
            .collect();
        let m = cluster_metrics("mixed", &runs);
        let dir = tempfile::tempdir().unwrap();
        write_membership_tables(dir.path(), &[m.clone(), m]).unwrap();
        let (header, rows) = read(&dir.path().join(MEMBERSHIP_CSV));
        assert_eq!(header, MEMBERSHIP_HEADER);
        assert_eq!(rows.len(), 4, "two scenarios x two judges");
        let col = |name: &str| MEMBERSHIP_HEADER.iter().position(|h| *h == name).unwrap();
        let classic = &rows[0];
        assert_eq!(classic[..3], ["mixed", "classic", "2"]);
        assert_eq!(rows[1][col("judge")], "phi");
        assert_eq!(classic[col("crashes")], "2");
        assert_eq!(classic[col("declared")], "2");
        assert_eq!(classic[col("never_declared")], "0");
        assert_eq!(classic[col("declare_n")], "2");
        assert_eq!(classic[col("declare_p50_s")], "20.000000");
        assert_eq!(classic[col("declare_mean_s")], "20.000000");
        // Both runs declare in 20 s: an interval of no width.
        assert_eq!(classic[col("declare_mean_ci_low_s")], "20.000000");
        assert_eq!(classic[col("declare_mean_ci_high_s")], "20.000000");
        assert_eq!(classic[col("declare_ci_runs")], "2");
        assert_eq!(classic[col("false_declarations")], "2");
        // Both were of the paused silo: none of a healthy one.
        assert_eq!(classic[col("false_healthy")], "0");
        assert_eq!(classic[col("false_healthy_per_node_hour")], "0.000000");
        assert_eq!(classic[col("destroyed_s")], "64.600000");
        assert_eq!(classic[col("destroyed_mean_s")], "32.300000");
        assert_eq!(classic[col("two_active_generations")], "0");
        assert_eq!(classic[col("table_conflicts_per_run")], "2.000");
        assert!(classic[col("agree_p50_s")].starts_with("20.0"));
        // Per run, 20 nodes from their start (n × 50 ms) to 300 s, less
        // 240 s of n5 down and 10 s of n12: 5 740.5 s; two runs.
        assert_eq!(classic[col("node_hours")], "3.189167");
        for row in &rows {
            assert_eq!(row.len(), MEMBERSHIP_HEADER.len());
        }

        let (header, rows) = read(&dir.path().join(DECLARATIONS_CSV));
        assert_eq!(header, DECLARATIONS_HEADER);
        assert_eq!(rows.len(), 16, "2 declarations x 4 runs x 2 scenarios");
        assert_eq!(
            rows[0][..6],
            ["mixed", "classic", "1", "80.000000", "n5#0", "n7#0"]
        );
        assert_eq!(rows[0][6], "false");
        // The paused silo's false declaration: impaired, not of a healthy one.
        assert_eq!(
            rows[1][4..9],
            ["n12#0", "n14#0", "true", "true", "32.300000"]
        );
        assert_eq!(rows[1][9], "0.000000", "unresponsive_s");
        assert!(rows[1][10].starts_with("160.0"), "{:?}", rows[1]);
        assert_eq!(rows[2][2], "2");
        assert_eq!(rows[4][1], "phi");
        // Nothing else left in the directory (no temporary files).
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 3);
    }

    #[test]
    fn empty_input_writes_headers_only_and_seconds_are_exact() {
        let dir = tempfile::tempdir().unwrap();
        write_membership_tables(dir.path(), &[]).unwrap();
        for (file, len) in [
            (MEMBERSHIP_CSV, MEMBERSHIP_HEADER.len()),
            (DECLARATIONS_CSV, DECLARATIONS_HEADER.len()),
            (COMPARISONS_CSV, COMPARISONS_HEADER.len()),
        ] {
            let (header, rows) = read(&dir.path().join(file));
            assert_eq!(header.len(), len);
            assert!(rows.is_empty());
        }
        assert_eq!(secs6(1_234_567_890), "1.234568");
        assert_eq!(secs6(999_999_999_600), "1000.000000");
        assert_eq!(secs6(0), "0.000000");
    }
}
