//! The "Cluster membership" section of one membership scenario in
//! `index.html` and `report.md`: what it simulates, how the cluster is set
//! up and each judge's settings, the table of [`super::JudgeSummary`]
//! figures with their units (and, in HTML, a key to them next to the first
//! such table), and the chart of [`super::chart`] (or its line of text).

use std::fmt::Write as _;

use super::metrics::JudgeSummary;
use super::MembershipReport;
use crate::charts::tradeoff::fmt_rate;
use crate::charts::{xml_escape, Chart, Palette};
use crate::detail_table::{mean_with_ci, secs};
use crate::html_parts as html;
use crate::markdown_table::{self as markdown, cell};
use crate::metrics::MeanCi;

/// One membership scenario as the reports show it.
pub struct ClusterSection<'a> {
    pub report: &'a MembershipReport,
    /// An id for links within `index.html`, unique in the report.
    pub anchor: String,
    pub chart: Chart,
    /// The chart's file, relative to the output directory (written only
    /// when it is drawn).
    pub chart_file: String,
}

/// Column names of the table, with units.
pub const COLUMNS: [&str; 18] = [
    "judge",
    "declared / crashes",
    "to Dead p50",
    "p90",
    "max",
    "mean [95% CI]",
    "views agree p50 (max)",
    "never agreed",
    "false declarations",
    "per node-hour [95% CI]",
    "node-time destroyed (each)",
    "false-positive events at healthy / starved observers",
    "suspicions (no declaration)",
    "votes (withheld)",
    "table reads / writes / conflicts / unreachable per run",
    "msgs (bytes) / node / s",
    "self-terminations / restarts / join give-ups",
    "two active generations",
];

/// What the columns mean, for the reports' key.
pub const KEY: [(&str, &str); 12] = [
    (
        "judge",
        "what decides that a monitored silo failed: classic is Orleans' count of missed probes; any other is a detector plugged in per monitored peer. Each judge is its own cluster run on the same seeds and faults (seed-paired, not event-paired: the runs diverge once a silo is declared)",
    ),
    (
        "to Dead",
        "from a silo's crash to the first write of its row as Dead (nearest-rank percentiles over every declared crash of every seed; the interval is Student-t over per-seed means)",
    ),
    (
        "views agree",
        "from the crash until every live Active silo's view shows it Dead; never agreed counts crashes that never got there, undeclared ones included",
    ),
    (
        "false declarations",
        "Dead writes about a live silo (paused, slow, partitioned or clock-skewed); per node-hour of silo processes up",
    ),
    (
        "false-positive events",
        "as the Lifeguard paper counts them (Dadgar et al. 2018): each member that moved a live member to Dead, by its own timeout or by gossip (an Orleans silo: its view), split by whether that observer was healthy or itself paused or starved at the time",
    ),
    (
        "node-time destroyed",
        "from a false declaration until the node is Active again as a new generation (or the run ends): total, and per false declaration",
    ),
    (
        "suspicions",
        "a monitor's judge said its target failed; in brackets, those during which the target was not declared Dead",
    ),
    (
        "votes",
        "suspicion votes written to the table (a declaring write counts as one); withheld: votes the connection-liveness check held back",
    ),
    (
        "table",
        "table reads, applied writes, writes refused for a stale ETag or version, and operations that found the table unreachable, per run",
    ),
    (
        "msgs (bytes) / node / s",
        "messages between silos (and their bytes) per node per second up",
    ),
    (
        "self-terminations",
        "silos that read themselves Dead and stopped (or stopped themselves on a row with enough votes but not Dead: Orleans' \"Found a bug!\"); restarts: new generations; join give-ups: silos that could not join in time",
    ),
    (
        "two active generations",
        "instants at which one node had two generations Active in the table: a safety violation, which must be 0",
    ),
];

/// Seconds with 3 decimals from a millisecond up (`-` for none).
fn time(t: Option<fdlab_protocol::Nanos>) -> String {
    secs(t)
}

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

/// One row per judge, cells in [`COLUMNS`] order.
pub fn rows(summary: &[JudgeSummary]) -> Vec<Vec<String>> {
    summary.iter().map(row).collect()
}

fn row(s: &JudgeSummary) -> Vec<String> {
    let per_run = |total: u128| {
        s.per_run(total)
            .map_or_else(|| "-".into(), |v| format!("{v:.1}"))
    };
    let destroyed = u64::try_from(s.destroyed).unwrap_or(u64::MAX);
    let destroyed = if s.false_declarations == 0 {
        "-".to_string()
    } else {
        format!(
            "{} ({})",
            time(Some(fdlab_protocol::Nanos(destroyed))),
            time(s.mean_destroyed())
        )
    };
    let traffic = match (s.messages_per_node_second(), s.bytes_per_node_second()) {
        (Some(m), Some(b)) => format!("{m:.2} ({b:.0} B)"),
        _ => "-".into(),
    };
    vec![
        s.label.clone(),
        format!("{} / {}", s.declared, s.crashes),
        time(s.declare.map(|d| d.p50)),
        time(s.declare.map(|d| d.p90)),
        time(s.declare.map(|d| d.max)),
        mean_with_ci(s.declare, s.declare_ci),
        match s.agree {
            Some(a) => format!("{} ({})", time(Some(a.p50)), time(Some(a.max))),
            None => "-".into(),
        },
        s.never_agreed.to_string(),
        s.false_declarations.to_string(),
        rate_with_ci(s.false_rate(), s.false_rate_ci),
        destroyed,
        format!(
            "{} / {}",
            s.observer_false_healthy, s.observer_false_starved
        ),
        format!("{} ({})", s.suspicions, s.suspicions_undeclared),
        format!("{} ({})", s.votes, s.votes_withheld),
        format!(
            "{} / {} / {} / {}",
            per_run(s.table_reads),
            per_run(s.table_writes),
            per_run(s.table_conflicts),
            per_run(s.table_unavailable)
        ),
        traffic,
        format!(
            "{} / {} / {}",
            s.self_terminations, s.restarts, s.join_give_ups
        ),
        s.two_active_generations.to_string(),
    ]
}

/// The one-line summary under a section's heading.
fn meta(r: &MembershipReport) -> String {
    let m = &r.metrics;
    let seeds = match (m.seeds.first(), m.seeds.last()) {
        (Some(a), Some(b)) if a != b => format!("seeds {a}–{b}"),
        (Some(a), _) => format!("seed {a}"),
        _ => "no seed".into(),
    };
    format!(
        "Cluster membership: {} judge{} × {} seed{} ({seeds}), {} cluster runs, {} simulated events. \
Each judge runs its own cluster on the same seeds and faults: the comparison is seed-paired, not event-paired.",
        m.summary.len(),
        if m.summary.len() == 1 { "" } else { "s" },
        m.seeds.len(),
        if m.seeds.len() == 1 { "" } else { "s" },
        m.runs(),
        m.events()
    )
}

/// The safety line, when a run broke it.
fn violations(r: &MembershipReport) -> Option<String> {
    let bad: Vec<String> = r
        .metrics
        .summary
        .iter()
        .filter(|s| s.two_active_generations > 0)
        .map(|s| format!("{} ({})", s.judge, s.two_active_generations))
        .collect();
    (!bad.is_empty()).then(|| {
        format!(
            "Safety violated: two generations of one node were Active at once under {}.",
            bad.join(", ")
        )
    })
}

/// The section in `index.html`.
pub fn html_section(out: &mut String, s: &ClusterSection<'_>, palette: &Palette, first: bool) {
    let r = s.report;
    let title = format!("{}: cluster membership", r.metrics.scenario);
    html::open_section(out, &s.anchor, Some("cluster"), &title);
    if !r.about.description.trim().is_empty() {
        let _ = writeln!(
            out,
            "<p class=\"description\">{}</p>",
            xml_escape(r.about.description.trim())
        );
    }
    let _ = writeln!(out, "<p class=\"meta\">{}</p>", xml_escape(&meta(r)));
    if let Some(line) = violations(r) {
        let _ = writeln!(out, "<p class=\"warn\">{}</p>", xml_escape(&line));
    }
    html::table(out, &COLUMNS, rows(&r.metrics.summary).into_iter(), palette);
    if !r.about.setup.is_empty() {
        let _ = writeln!(
            out,
            "<p class=\"meta\">Cluster: <code>{}</code></p>",
            xml_escape(&r.about.setup)
        );
    }
    html::legend(out, &r.about.judges, palette);
    if first {
        html::key(out, "How to read the cluster table", &KEY);
    }
    html::chart(out, &s.chart);
    html::close_section(out);
}

/// The section in `report.md`.
pub fn markdown_section(out: &mut String, s: &ClusterSection<'_>) {
    let r = s.report;
    let _ = writeln!(
        out,
        "## {}: cluster membership\n",
        cell(&r.metrics.scenario)
    );
    if !r.about.description.trim().is_empty() {
        let _ = writeln!(out, "{}\n", r.about.description.trim());
    }
    let _ = writeln!(out, "{}\n", meta(r));
    if let Some(line) = violations(r) {
        let _ = writeln!(out, "**{line}**\n");
    }
    markdown::table(out, &COLUMNS, 1, rows(&r.metrics.summary));
    if !r.about.setup.is_empty() {
        let _ = writeln!(out, "Cluster: `{}`\n", r.about.setup);
    }
    for (judge, settings) in &r.about.judges {
        let _ = writeln!(out, "- **{}**: `{}`", cell(judge), settings);
    }
    if !r.about.judges.is_empty() {
        out.push('\n');
    }
    match &s.chart {
        Chart::Svg(_) => {
            let _ = writeln!(
                out,
                "![false declarations against time to declaration of {}]({})\n",
                cell(&r.metrics.scenario),
                s.chart_file
            );
        }
        Chart::Nothing(line) => {
            let _ = writeln!(out, "{line}\n");
        }
    }
}

/// The key of the cluster table, for the end of `report.md`.
pub fn markdown_key(out: &mut String) {
    out.push_str("## How to read the cluster tables\n\n");
    for (term, meaning) in KEY {
        let _ = writeln!(out, "- **{term}**: {meaning}");
    }
}

#[cfg(test)]
mod tests {
    use super::super::fixture::synthetic;
    use super::super::metrics::cluster_metrics;
    use super::*;

    #[test]
    fn rows_carry_units_and_sample_counts() {
        let runs: Vec<_> = [1, 2]
            .map(|seed| synthetic(20, seed, "classic", 0).0)
            .into();
        let rows = rows(&cluster_metrics("m", &runs).summary);
        assert_eq!(rows.len(), 1);
        let r = &rows[0];
        assert_eq!(r.len(), COLUMNS.len());
        assert_eq!(
            r[..5],
            ["classic", "2 / 2", "20.000 s", "20.000 s", "20.000 s"]
        );
        assert_eq!(r[5], "20.000 s [20.000, 20.000]");
        assert!(
            r[6].starts_with("20.0") && r[6].ends_with(" s)"),
            "{}",
            r[6]
        );
        assert_eq!(r[7], "0");
        assert_eq!(r[8], "2");
        assert_eq!(r[10], "64.600 s (32.300 s)");
        assert_eq!(r[11], "0 / 0");
        assert_eq!(r[12], "18 (6)");
        assert_eq!(r[13], "10 (2)");
        assert_eq!(r[14], "800.0 / 247.0 / 2.0 / 60.0");
        assert!(r[15].ends_with(" B)"), "{}", r[15]);
        assert_eq!(r[16], "2 / 2 / 0");
        assert_eq!(r[17], "0");
    }
}
