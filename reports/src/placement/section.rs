//! The "Key placement" section of one placement scenario in `index.html`
//! and `report.md`: the table of [`super::PlacementSummary`] figures with
//! their units, a key to them, and the chart of [`super::chart`].

use std::fmt::Write as _;

use super::metrics::{PlacementMetrics, PlacementSummary};
use super::tables::{amount, percent};
use super::PlacementReport;
use crate::charts::{xml_escape, Chart, Palette};
use crate::html_parts as html;
use crate::markdown_table::{self as markdown, cell};

/// One placement scenario as the reports show it.
pub struct PlacementSection<'a> {
    pub report: &'a PlacementReport,
    /// An id for links within `index.html`, unique in the report.
    pub anchor: String,
    pub chart: Chart,
    /// The chart's file, relative to the output directory.
    pub chart_file: String,
}

/// Column names of the table, with units.
pub const COLUMNS: [&str; 12] = [
    "detector",
    "distribution",
    "detection p50",
    "declarations true / false",
    "keys moved per true declaration (back)",
    "per false declaration (back)",
    "keys lost per healthy server-hour",
    "cache misses",
    "stale reads",
    "requests failed",
    "missed or failed per declaration",
    "disagreement key-s per hour",
];

/// The columns of `m`'s table: [`COLUMNS`], or for clients that follow a
/// membership view, the judge and its time to declare a crash.
fn columns(m: &PlacementMetrics) -> [&'static str; 12] {
    let mut c = COLUMNS;
    if m.by_view {
        c[0] = "judge";
        c[2] = "declaration p50";
    }
    c
}

/// What the columns mean.
pub const KEY: [(&str, &str); 8] = [
    (
        "declarations",
        "a client marking a server dead on its detector's Failed; true when the server was down for that client (crashed, paused past tolerance, or cut off from it), false otherwise",
    ),
    (
        "keys moved",
        "the share of all keys whose server changed in the declaring client's placement, per declaration; back: the share that changed again when the mark lifted",
    ),
    (
        "keys lost per healthy server-hour",
        "keys moved by false declarations, summed over clients, per hour of servers that were not crashed: the cache a wrong declaration throws away",
    ),
    (
        "cache misses",
        "requests to a reachable server that did not hold the key; the client then reads the backing store and sets the key there. The cache starts warm (every key on every server a client places it on) and a crash empties the crashed server's",
    ),
    (
        "stale reads",
        "hits on a copy older than the key's freshest, which was set on another server since: the value read may be out of date (a flapping server's old copies, twemproxy #604, or clients that disagree, #134)",
    ),
    (
        "requests failed",
        "requests with no server (every candidate marked dead, or failover off) or sent to a server down for that client",
    ),
    (
        "disagreement",
        "key-seconds during which the clients did not all place a key on the same server: the risk of stale reads and split writes (twemproxy #134), per simulated hour",
    ),
    (
        "same requests",
        "every detector and distribution of a seed sees the same requests (Zipf keys, Poisson arrivals per client) and the same verdicts of its detector",
    ),
];

/// One row per detector × distribution, cells in [`COLUMNS`] order.
pub fn rows(summary: &[PlacementSummary]) -> Vec<Vec<String>> {
    summary
        .iter()
        .map(|s| {
            vec![
                s.detector.clone(),
                s.distribution.clone(),
                s.detect_p50
                    .map_or_else(|| "-".into(), |t| format!("{:.3} s", t.as_secs_f64())),
                format!("{} / {}", s.true_declarations, s.false_declarations),
                format!(
                    "{} ({})",
                    percent(s.moved_per_true()),
                    percent(s.moved_back_per_true())
                ),
                format!(
                    "{} ({})",
                    percent(s.moved_per_false()),
                    percent(s.moved_back_per_false())
                ),
                amount(s.keys_lost_per_healthy_server_hour()),
                format!("{} ({})", s.misses, percent(s.miss_share())),
                format!("{} ({})", s.stale, percent(s.stale_share())),
                format!("{} ({})", s.failed, percent(s.failed_share())),
                amount(s.cost_per_declaration()),
                amount(s.disagreement_per_hour()),
            ]
        })
        .collect()
}

fn meta(r: &PlacementReport) -> String {
    let m = &r.metrics;
    let how = if m.by_view {
        "servers and clients are members of one cluster, and every client marks a server dead while its own membership view holds it Dead: each judge's cluster runs on its own, and each distribution places the same requests through every client's view. A judge's declaration p50 is the median time it takes to declare a crash; a declared Orleans silo stops itself, losing its cache"
    } else {
        "every client runs every detector on every server, and each distribution places the same requests through each detector's verdicts"
    };
    format!(
        "Key placement: {} servers, {} clients, {} keys; {} seed{}; {how}.",
        m.servers,
        m.clients,
        m.keys,
        m.seeds,
        if m.seeds == 1 { "" } else { "s" }
    )
}

/// The section in `index.html`.
pub fn html_section(out: &mut String, s: &PlacementSection<'_>, palette: &Palette, first: bool) {
    let r = s.report;
    let title = format!("{}: key placement", r.metrics.scenario);
    html::open_section(out, &s.anchor, Some("placement"), &title);
    let _ = writeln!(out, "<p class=\"meta\">{}</p>", xml_escape(&meta(r)));
    html::table(
        out,
        &columns(&r.metrics),
        rows(&r.metrics.summary).into_iter(),
        palette,
    );
    if first {
        html::key(out, "How to read the placement table", &KEY);
    }
    html::chart(out, &s.chart);
    html::close_section(out);
}

/// The section in `report.md`.
pub fn markdown_section(out: &mut String, s: &PlacementSection<'_>) {
    let r = s.report;
    let _ = writeln!(out, "## {}: key placement\n", cell(&r.metrics.scenario));
    let _ = writeln!(out, "{}\n", meta(r));
    markdown::table(out, &columns(&r.metrics), 2, rows(&r.metrics.summary));
    match &s.chart {
        Chart::Svg(_) => {
            let _ = writeln!(
                out,
                "![keys lost against detection time of {}]({})\n",
                cell(&r.metrics.scenario),
                s.chart_file
            );
        }
        Chart::Nothing(line) => {
            let _ = writeln!(out, "{line}\n");
        }
    }
}

/// The key of the placement table, for the end of `report.md`.
pub fn markdown_key(out: &mut String) {
    out.push_str("## How to read the placement tables\n\n");
    for (term, meaning) in KEY {
        let _ = writeln!(out, "- **{term}**: {meaning}");
    }
}
