//! `index.html`: the report of a run as one self-contained file. The styles
//! are inline, the charts are inline SVG, there is no script and no URL, so it
//! opens the same in any browser, offline, mailed or archived as an artefact.
//!
//! One section per scenario: what it simulates, the detailed table (every §5
//! figure with its sample counts and 95% intervals), and its two charts side
//! by side (or, for a chart with nothing to plot, one line saying so). Detector names carry their chart colour in the tables.
//! Then one "Cluster membership" section per membership scenario
//! ([`crate::cluster::section`]); a report of membership scenarios alone
//! has a verdict section too: its judges' ([`crate::cluster::verdict`]).

use std::fmt::Write as _;

use crate::charts::{inline_svg, xml_escape, Chart, Palette};
use crate::cluster::section::{html_section, ClusterSection};
use crate::detail_table::{self, CLASS_COLUMNS, COLUMNS, KEY};
use crate::lockrpc::section::LockrpcSection;
use crate::placement::section::PlacementSection;
use crate::report::ScenarioReport;
use crate::verdict::verdict;
use crate::words::plural;

const STYLE: &str = "
body { font-family: sans-serif; margin: 24px 32px; color: #222; max-width: 1500px; }
h1 { font-size: 26px; margin: 0 0 4px; }
h2 { font-size: 21px; margin: 36px 0 4px; padding-top: 12px; border-top: 1px solid #ccc; }
p.meta, p.description { margin: 2px 0 10px; color: #444; }
nav { columns: 3; font-size: 14px; margin: 12px 0; }
nav a { display: block; padding: 1px 0; color: #0050a0; }
table { border-collapse: collapse; font-size: 13.5px; margin: 8px 0 12px; }
th, td { padding: 4px 8px; border-bottom: 1px solid #e2e2e2; text-align: right; white-space: nowrap; }
th { background: #f4f4f4; font-weight: 600; border-bottom: 2px solid #ccc; white-space: normal; vertical-align: bottom; }
div.table { overflow-x: auto; }
td:first-child, th:first-child { text-align: left; }
tr:hover td { background: #fafae8; }
.swatch { display: inline-block; width: 12px; height: 12px; border-radius: 2px; margin-right: 6px; vertical-align: -1px; }
.charts { display: flex; flex-wrap: wrap; gap: 16px; }
.charts svg { max-width: 100%; height: auto; border: 1px solid #e4e4e4; }
p.no-chart { margin: 4px 0 12px; color: #555; font-style: italic; }
dl.key { font-size: 13.5px; display: grid; grid-template-columns: max-content 1fr; gap: 3px 14px; }
dl.key dt { font-weight: 600; }
dl.key dd { margin: 0; color: #444; }
dl.legend { font-size: 12.5px; display: grid; grid-template-columns: max-content 1fr; gap: 2px 12px; margin: 0 0 12px; }
dl.legend dt { font-weight: 600; }
dl.legend dd { margin: 0; color: #555; }
section.verdict li { margin: 4px 0; font-size: 14.5px; }
pre.next { background: #f6f6f6; padding: 8px 12px; font-size: 13px; overflow-x: auto; }
details summary { cursor: pointer; color: #0050a0; font-size: 14px; }
p.warn { color: #b00; font-weight: 600; }
";

/// The whole page: the detector scenarios' sections (after the verdict on
/// them), then the membership scenarios' ([`crate::cluster::section`]).
pub fn render(
    scenarios: &[ScenarioReport<'_>],
    membership: &[ClusterSection<'_>],
    placement: &[PlacementSection<'_>],
    lockrpc: &[LockrpcSection<'_>],
    palette: &Palette,
) -> String {
    let mut out = String::new();
    let runs: usize = scenarios
        .iter()
        .map(|s| s.metrics.runs.len())
        .sum::<usize>()
        + membership
            .iter()
            .map(|s| s.report.metrics.runs())
            .sum::<usize>();
    let runs = runs
        + lockrpc
            .iter()
            .map(|s| {
                s.metrics
                    .summary
                    .iter()
                    .map(|p| p.runs as usize)
                    .sum::<usize>()
            })
            .sum::<usize>();
    let count = scenarios.len() + membership.len() + lockrpc.len();
    let pooled = match (scenarios.is_empty(), membership.is_empty()) {
        (false, true) => "Every figure pools all monitored pairs and seeds of a scenario",
        (true, false) => "Every figure pools all seeds of a judge",
        (true, true) if !lockrpc.is_empty() => "Every figure pools all seeds of a policy",
        _ => "Every figure pools all monitored pairs and seeds of a scenario (in cluster membership sections, all seeds of a judge)",
    };
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
<title>fdlab report</title>\n<style>{STYLE}</style>\n</head>\n<body>\n\
<h1>fdlab report</h1>\n<p class=\"meta\">{count} scenario{}, {runs} simulated run{} (fdlab {}). \
{pooled}; the CSV files next to this page hold them unrounded.</p>\n",
        plural(count),
        plural(runs),
        env!("CARGO_PKG_VERSION"),
    );
    out.push_str("<nav>\n");
    for s in scenarios {
        let _ = writeln!(
            out,
            "<a href=\"#{}\">{}</a>",
            xml_escape(&s.anchor),
            xml_escape(&s.metrics.scenario)
        );
    }
    for s in membership {
        let _ = writeln!(
            out,
            "<a href=\"#{}\">{}: cluster membership</a>",
            xml_escape(&s.anchor),
            xml_escape(&s.report.metrics.scenario)
        );
    }
    for s in placement {
        let _ = writeln!(
            out,
            "<a href=\"#{}\">{}: key placement</a>",
            xml_escape(&s.anchor),
            xml_escape(&s.report.metrics.scenario)
        );
    }
    for s in lockrpc {
        let _ = writeln!(
            out,
            "<a href=\"#{}\">{}: lock RPCs</a>",
            xml_escape(&s.anchor),
            xml_escape(&s.metrics.scenario)
        );
    }
    out.push_str("</nav>\n");
    if !scenarios.is_empty() || !membership.is_empty() {
        verdicts(&mut out, scenarios, membership, placement);
    }
    for (i, s) in scenarios.iter().enumerate() {
        section(&mut out, s, palette, i == 0);
    }
    for (i, s) in membership.iter().enumerate() {
        html_section(&mut out, s, palette, i == 0);
    }
    for (i, s) in placement.iter().enumerate() {
        crate::placement::section::html_section(&mut out, s, palette, i == 0);
    }
    for (i, s) in lockrpc.iter().enumerate() {
        crate::lockrpc::section::html_section(&mut out, s, palette, i == 0);
    }
    out.push_str("</body>\n</html>\n");
    out
}

/// The verdict on every scenario ([`crate::verdict`]; a membership
/// scenario's: [`crate::cluster::verdict`]), and what to run next.
fn verdicts(
    out: &mut String,
    scenarios: &[ScenarioReport<'_>],
    membership: &[ClusterSection<'_>],
    placement: &[PlacementSection<'_>],
) {
    out.push_str("<section class=\"verdict\">\n<h2>Verdict</h2>\n<ul>\n");
    let mut first = None;
    for s in scenarios {
        let v = verdict(s.metrics);
        let _ = write!(
            out,
            "<li><a href=\"#{}\">{}</a>: ",
            xml_escape(&s.anchor),
            xml_escape(&s.metrics.scenario)
        );
        let sentences: Vec<String> = v.sentences().iter().map(|l| code_spans(l)).collect();
        let _ = writeln!(out, "{}</li>", sentences.join("; "));
        if first.is_none() {
            let kind = v
                .best_name()
                .and_then(|name| s.settings.iter().find(|(n, _)| n == name))
                .and_then(|(_, settings)| kind_of(settings));
            first = Some(v.next_steps(s.invoked_as, kind.as_deref()));
        }
    }
    for s in membership {
        let _ = write!(
            out,
            "<li><a href=\"#{}\">{}</a> (cluster membership): ",
            xml_escape(&s.anchor),
            xml_escape(&s.report.metrics.scenario)
        );
        let sentences: Vec<String> = crate::cluster::cluster_verdict(&s.report.metrics)
            .iter()
            .map(|l| code_spans(l))
            .collect();
        let _ = writeln!(out, "{}</li>", sentences.join("; "));
    }
    for s in placement {
        let _ = write!(
            out,
            "<li><a href=\"#{}\">{}</a> (key placement): ",
            xml_escape(&s.anchor),
            xml_escape(&s.report.metrics.scenario)
        );
        let sentences: Vec<String> = crate::placement::placement_verdict(&s.report.metrics)
            .iter()
            .map(|l| code_spans(l))
            .collect();
        let _ = writeln!(out, "{}</li>", sentences.join("; "));
    }
    out.push_str("</ul>\n");
    if let Some(steps) = first {
        out.push_str("<p class=\"meta\">Next:</p>\n<pre class=\"next\">");
        for step in steps {
            let _ = writeln!(out, "{}", xml_escape(&step));
        }
        out.push_str("</pre>\n");
    }
    out.push_str("</section>\n");
}

/// `kind = "x", ...` -> `x`.
fn kind_of(settings: &str) -> Option<String> {
    let rest = settings.strip_prefix("kind = \"")?;
    Some(rest[..rest.find('"')?].to_string())
}

/// Escapes `text` and sets its `backquoted` names in code.
fn code_spans(text: &str) -> String {
    let mut out = String::new();
    for (i, part) in text.split('`').enumerate() {
        if i % 2 == 1 {
            let _ = write!(out, "<code>{}</code>", xml_escape(part));
        } else {
            out.push_str(&xml_escape(part));
        }
    }
    out
}

/// A table: a header row, then rows whose first cell is a detector's (or
/// judge's) name (shown with its chart colour).
pub(crate) fn table(
    out: &mut String,
    headers: &[&str],
    rows: impl Iterator<Item = Vec<String>>,
    palette: &Palette,
) {
    out.push_str("<div class=\"table\"><table>\n<thead><tr>");
    for h in headers {
        let _ = write!(out, "<th>{}</th>", xml_escape(h));
    }
    out.push_str("</tr></thead>\n<tbody>\n");
    for row in rows {
        out.push_str("<tr>");
        for (i, cell) in row.iter().enumerate() {
            if i == 0 {
                let _ = write!(
                    out,
                    "<td><span class=\"swatch\" style=\"background:{}\"></span>{}</td>",
                    palette.css(cell),
                    xml_escape(cell)
                );
            } else {
                let _ = write!(out, "<td>{}</td>", xml_escape(cell));
            }
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</tbody>\n</table></div>\n");
}

/// The key of the tables' terms, shown next to the first table.
fn glossary(out: &mut String) {
    key(out, "How to read the table", &KEY);
}

/// A key of terms, open, under `title`.
pub(crate) fn key(out: &mut String, title: &str, terms: &[(&str, &str)]) {
    let _ = writeln!(
        out,
        "<details open><summary>{}</summary>\n<dl class=\"key\">",
        xml_escape(title)
    );
    for (term, meaning) in terms {
        let _ = writeln!(
            out,
            "<dt>{}</dt><dd>{}</dd>",
            xml_escape(term),
            xml_escape(meaning)
        );
    }
    out.push_str("</dl>\n</details>\n");
}

/// The legend of a scenario's detectors (or judges): each one's settings.
pub(crate) fn legend(out: &mut String, settings: &[(String, String)], palette: &Palette) {
    if settings.is_empty() {
        return;
    }
    out.push_str("<dl class=\"legend\">\n");
    for (name, settings) in settings {
        let _ = writeln!(
            out,
            "<dt><span class=\"swatch\" style=\"background:{}\"></span>{}</dt><dd><code>{}</code></dd>",
            palette.css(name),
            xml_escape(name),
            xml_escape(settings)
        );
    }
    out.push_str("</dl>\n");
}

fn section(out: &mut String, s: &ScenarioReport<'_>, palette: &Palette, first: bool) {
    let m = s.metrics;
    let _ = writeln!(
        out,
        "<section id=\"{}\">\n<h2>{}</h2>",
        xml_escape(&s.anchor),
        xml_escape(&m.scenario)
    );
    if !s.description.trim().is_empty() {
        let _ = writeln!(
            out,
            "<p class=\"description\">{}</p>",
            xml_escape(s.description.trim())
        );
    }
    let seeds: Vec<u64> = m.runs.iter().map(|r| r.seed).collect();
    let events: u128 = m.runs.iter().map(|r| u128::from(r.events)).sum();
    let seed_text = match (seeds.first(), seeds.last()) {
        (Some(a), Some(b)) if a != b => format!("seeds {a}–{b}"),
        (Some(a), _) => format!("seed {a}"),
        _ => "no seed".into(),
    };
    let _ = writeln!(
        out,
        "<p class=\"meta\">{} run{} ({seed_text}), {events} simulated events</p>",
        m.runs.len(),
        plural(m.runs.len())
    );
    let visible = detail_table::visible_columns(&m.summary);
    let headers: Vec<&str> = visible.iter().map(|&c| COLUMNS[c]).collect();
    let rows = detail_table::rows(&m.summary)
        .into_iter()
        .map(|row| visible.iter().map(|&i| row[i].clone()).collect());
    table(out, &headers, rows, palette);
    legend(out, s.settings, palette);
    if first {
        glossary(out);
    }
    if detail_table::has_classes(&m.classes) {
        out.push_str("<p class=\"meta\">By link class:</p>\n");
        let rows = detail_table::class_rows(&m.classes).into_iter();
        table(out, &CLASS_COLUMNS, rows, palette);
    }
    let drawn = s.drawn();
    if !drawn.is_empty() {
        out.push_str("<div class=\"charts\">\n");
        for (svg, _) in drawn {
            out.push_str(&inline_svg(svg));
        }
        out.push_str("</div>\n");
    }
    for line in s.nothing_lines() {
        let _ = writeln!(out, "<p class=\"no-chart\">{}</p>", xml_escape(line));
    }
    out.push_str("</section>\n");
}

/// A section's chart inline, or the line that stands in for it.
pub(crate) fn chart(out: &mut String, chart: &Chart) {
    match chart {
        Chart::Svg(svg) => {
            let _ = writeln!(out, "<div class=\"charts\">\n{}</div>", inline_svg(svg));
        }
        Chart::Nothing(line) => {
            let _ = writeln!(out, "<p class=\"no-chart\">{}</p>", xml_escape(line));
        }
    }
}
