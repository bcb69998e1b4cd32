//! `placement.csv` (one row per scenario × detector × distribution) and
//! the console table of one placement scenario.

use std::io::{self, Write};
use std::path::Path;

use fdlab_protocol::Nanos;

use super::metrics::{PlacementMetrics, PlacementSummary};
use super::PLACEMENT_CSV;
use crate::atomic::write_atomically;
use crate::tables::terminal::aligned;

/// The header of `placement.csv`.
pub const PLACEMENT_HEADER: [&str; 26] = [
    "scenario",
    "detector",
    "distribution",
    "runs",
    "keys",
    "detect_p50_s",
    "true_declarations",
    "false_declarations",
    "moved_per_true_share",
    "moved_back_per_true_share",
    "moved_per_false_share",
    "moved_back_per_false_share",
    "keys_moved_true",
    "keys_moved_false",
    "keys_lost_per_healthy_server_hour",
    "requests",
    "misses",
    "miss_share",
    "stale",
    "stale_share",
    "failed",
    "failed_share",
    "missed_or_failed_per_declaration",
    "disagreement_key_seconds",
    "disagreement_key_seconds_per_hour",
    "healthy_server_hours",
];

/// Writes `placement.csv` into `dir`.
pub fn write_placement_table(dir: &Path, metrics: &[PlacementMetrics]) -> io::Result<()> {
    write_atomically(&dir.join(PLACEMENT_CSV), |out| {
        write_placement(out, metrics)
    })
}

/// Writes the rows of `placement.csv` into `out`.
pub fn write_placement(out: &mut dyn Write, metrics: &[PlacementMetrics]) -> io::Result<()> {
    let mut w = csv::Writer::from_writer(out);
    w.write_record(PLACEMENT_HEADER)?;
    for m in metrics {
        for s in &m.summary {
            w.write_record(row(&m.scenario, s))?;
        }
    }
    w.flush()
}

fn opt(v: Option<f64>, decimals: usize) -> String {
    v.map_or_else(String::new, |v| format!("{v:.decimals$}"))
}

fn secs(t: Option<Nanos>) -> String {
    opt(t.map(Nanos::as_secs_f64), 6)
}

fn row(scenario: &str, s: &PlacementSummary) -> Vec<String> {
    vec![
        scenario.to_string(),
        s.detector.clone(),
        s.distribution.clone(),
        s.runs.to_string(),
        s.keys.to_string(),
        secs(s.detect_p50),
        s.true_declarations.to_string(),
        s.false_declarations.to_string(),
        opt(s.moved_per_true(), 6),
        opt(s.moved_back_per_true(), 6),
        opt(s.moved_per_false(), 6),
        opt(s.moved_back_per_false(), 6),
        s.moved_true.to_string(),
        s.moved_false.to_string(),
        opt(s.keys_lost_per_healthy_server_hour(), 3),
        s.requests.to_string(),
        s.misses.to_string(),
        opt(s.miss_share(), 6),
        s.stale.to_string(),
        opt(s.stale_share(), 6),
        s.failed.to_string(),
        opt(s.failed_share(), 6),
        opt(s.cost_per_declaration(), 3),
        format!("{:.3}", s.disagreement as f64 / 1e9),
        opt(s.disagreement_per_hour(), 3),
        format!("{:.3}", s.healthy_server_time as f64 / 3.6e12),
    ]
}

/// A share as a percentage with one decimal (`-` for none).
pub(crate) fn percent(v: Option<f64>) -> String {
    v.map_or_else(|| "-".into(), |v| format!("{:.1}%", 100.0 * v))
}

/// A count with no decimals, or with 3 significant digits below 10.
pub(crate) fn amount(v: Option<f64>) -> String {
    match v {
        None => "-".into(),
        Some(v) if v < 10.0 => format!("{v:.2}"),
        Some(v) => format!("{v:.0}"),
    }
}

/// The console table: one line per detector × distribution.
pub fn placement_terminal_table(m: &PlacementMetrics) -> String {
    let (subject, detect) = if m.by_view {
        ("judge", "declare p50 (s)")
    } else {
        ("detector", "detect p50 (s)")
    };
    let header = [
        subject,
        "distribution",
        detect,
        "true decl.",
        "false decl.",
        "moved/true",
        "back/true",
        "moved/false",
        "keys lost/healthy server-h",
        "misses",
        "stale",
        "failed",
        "disagree key-s/h",
    ];
    let mut rows: Vec<Vec<String>> = vec![header.iter().map(|h| h.to_string()).collect()];
    for s in &m.summary {
        rows.push(vec![
            s.detector.clone(),
            s.distribution.clone(),
            s.detect_p50
                .map_or_else(|| "-".into(), |t| format!("{:.3}", t.as_secs_f64())),
            s.true_declarations.to_string(),
            s.false_declarations.to_string(),
            percent(s.moved_per_true()),
            percent(s.moved_back_per_true()),
            percent(s.moved_per_false()),
            amount(s.keys_lost_per_healthy_server_hour()),
            percent(s.miss_share()),
            percent(s.stale_share()),
            percent(s.failed_share()),
            amount(s.disagreement_per_hour()),
        ]);
    }
    format!(
        "{} (key placement{}: {} servers, {} clients, {} keys; {} run{} per {subject} x distribution, same requests)\n{}",
        m.scenario,
        if m.by_view { " by membership view" } else { "" },
        m.servers,
        m.clients,
        m.keys,
        m.seeds,
        if m.seeds == 1 { "" } else { "s" },
        aligned(&rows)
    )
}
