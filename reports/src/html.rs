//! `index.html`: the report of a run as one self-contained file. The styles
//! are inline, the charts are inline SVG, there is no script and no URL, so it
//! opens the same in any browser, offline, mailed or archived as an artefact.
//!
//! A page one can move through ([`crate::html_nav`]): a bar fixed at the top
//! of the window links the parts of the page and the top; the contents list
//! each scenario once, under its part (detectors; membership; placement;
//! lock RPCs); each scenario's section folds under its heading (`<details>`,
//! no script); tables scroll sideways in their own box with the names'
//! column in view ([`crate::html_table`]). A caller may put sections of its
//! own at the head of the page ([`render_with_lead`], [`LeadSection`]).
//!
//! One section per scenario: what it simulates, the detailed table (every §5
//! figure with its sample counts and 95% intervals), and its two charts side
//! by side (or, for a chart with nothing to plot, one line saying so).
//! Detector names carry their chart colour in the tables. Then one "Cluster
//! membership" section per membership scenario ([`crate::cluster::section`]),
//! and the key placement and lock-RPC sections; a report of membership
//! scenarios alone has a verdict section too: its judges'
//! ([`crate::cluster::verdict`]).

use std::fmt::Write as _;

use crate::charts::{inline_svg, xml_escape, Palette};
use crate::cluster::section::{html_section, ClusterSection};
use crate::detail_table::{self, CLASS_COLUMNS, COLUMNS, KEY};
pub use crate::html_nav::LeadSection;
use crate::html_nav::{contents, nav_bar, part_heading, Entry, Part, TOP, VERDICT};
use crate::html_parts::{close_section, code_spans, key, legend, open_section, table};
use crate::lockrpc::section::LockrpcSection;
use crate::placement::section::PlacementSection;
use crate::scenario_report::ScenarioReport;
use crate::verdict::verdict;
use crate::words::plural;

const STYLE: &str = "
html { scroll-padding-top: 56px; }
body { font-family: sans-serif; margin: 0 32px 24px; color: #222; max-width: 1500px; }
h1 { font-size: 26px; margin: 16px 0 4px; }
h2 { font-size: 21px; margin: 36px 0 4px; padding-top: 12px; border-top: 1px solid #ccc; }
h2.part { font-size: 24px; margin: 48px 0 0; padding: 10px 12px; border: 0; background: #2f3e4e; color: #fff; border-radius: 3px; }
p.meta, p.description { margin: 2px 0 10px; color: #444; }
nav.bar { position: sticky; top: 0; z-index: 10; background: #fff; border-bottom: 1px solid #ccc; padding: 8px 0; font-size: 14.5px; display: flex; flex-wrap: wrap; gap: 4px 18px; }
nav.bar a { color: #0050a0; text-decoration: none; }
nav.bar a:hover { text-decoration: underline; }
nav.bar a.home { font-weight: 600; color: #222; }
nav.bar a.top { margin-left: auto; }
nav.contents { display: grid; grid-template-columns: repeat(auto-fill, minmax(300px, 1fr)); gap: 4px 24px; font-size: 14px; margin: 12px 0; }
nav.contents h3 { font-size: 15px; margin: 8px 0 2px; }
nav.contents ul { margin: 0; padding-left: 18px; }
nav.contents li { padding: 1px 0; }
nav.contents a { color: #0050a0; }
nav.contents a.also { font-size: 12.5px; color: #557; }
nav.contents span.count { color: #777; font-weight: normal; }
section > details > summary.fold { cursor: pointer; list-style-position: outside; margin-left: 18px; }
section > details > summary.fold h2 { display: inline-block; margin-top: 28px; border-top: 0; }
section > details[open] > summary.fold { border-top: 1px solid #ccc; }
table { border-collapse: separate; border-spacing: 0; font-size: 13.5px; margin: 8px 0 12px; }
th, td { padding: 4px 6px; border-bottom: 1px solid #e2e2e2; text-align: right; white-space: nowrap; background: #fff; }
th { background: #f4f4f4; font-weight: 600; border-bottom: 2px solid #ccc; vertical-align: bottom; line-height: 1.25; }
div.table { overflow-x: auto; max-width: 100%; }
td:first-child, th:first-child { text-align: left; }
div.table td:first-child, div.table thead tr:first-child th:first-child { position: sticky; left: 0; z-index: 1; border-right: 1px solid #ddd; }
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
section > details > summary.fold { color: #222; font-size: 21px; }
p.warn { color: #b00; font-weight: 600; }
";

/// The whole page, with no lead section: [`render_with_lead`].
pub fn render(
    scenarios: &[ScenarioReport<'_>],
    membership: &[ClusterSection<'_>],
    placement: &[PlacementSection<'_>],
    lockrpc: &[LockrpcSection<'_>],
    palette: &Palette,
) -> String {
    render_with_lead(&[], scenarios, membership, placement, lockrpc, palette)
}

/// The whole page: the navigation bar, the title, the `lead` sections in
/// the order given (each linked from the bar: see [`LeadSection`]), the
/// contents, the verdict, then the parts ([`page_parts`]): the detector
/// scenarios' sections, the membership scenarios'
/// ([`crate::cluster::section`]), the placement scenarios' (each with its
/// detectors' or judges' section), the lock-RPC scenarios'.
pub fn render_with_lead(
    lead: &[LeadSection<'_>],
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
    let has_verdict = !scenarios.is_empty() || !membership.is_empty();
    let (parts, order) = page_parts(scenarios, membership, placement, lockrpc);
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
<title>fdlab report</title>\n<style>{STYLE}</style>\n</head>\n<body>\n"
    );
    nav_bar(&mut out, lead, has_verdict, &parts);
    let _ = write!(
        out,
        "<h1 id=\"{TOP}\">fdlab report</h1>\n<p class=\"meta\">{count} scenario{}, {runs} simulated run{} (fdlab {}). \
{pooled}; the CSV files next to this page hold them unrounded.</p>\n",
        plural(count),
        plural(runs),
        env!("CARGO_PKG_VERSION"),
    );
    for l in lead {
        let _ = writeln!(
            out,
            "<section id=\"{}\" class=\"lead\">\n<h2>{}</h2>\n{}\n</section>",
            xml_escape(l.id),
            xml_escape(l.title),
            l.html
        );
    }
    contents(&mut out, &parts);
    if has_verdict {
        verdicts(&mut out, scenarios, membership, placement);
    }
    // The key of a kind's table goes with its first table on the page.
    let (mut detectors, mut members, mut placed, mut locks) = (true, true, true, true);
    for (part, sections) in parts.iter().zip(&order) {
        if sections.is_empty() {
            continue;
        }
        part_heading(&mut out, part);
        for &shown in sections {
            match shown {
                Shown::Detectors(i) => {
                    section(&mut out, &scenarios[i], palette, detectors);
                    detectors = false;
                }
                Shown::Membership(i) => {
                    html_section(&mut out, &membership[i], palette, members);
                    members = false;
                }
                Shown::Placement(i) => {
                    crate::placement::section::html_section(
                        &mut out,
                        &placement[i],
                        palette,
                        placed,
                    );
                    placed = false;
                }
                Shown::Lockrpc(i) => {
                    crate::lockrpc::section::html_section(&mut out, &lockrpc[i], palette, locks);
                    locks = false;
                }
            }
        }
    }
    out.push_str("</body>\n</html>\n");
    out
}

/// A section of the page: which kind, and its index in its list.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Shown {
    Detectors(usize),
    Membership(usize),
    Placement(usize),
    Lockrpc(usize),
}

/// The page's parts and, for each, its sections in page order. A
/// placement scenario's detectors' (or membership) section, the one of
/// the same name, goes in the placement part after its placement section,
/// and is listed with it in the contents; every other section is in its
/// own kind's part, in the order given.
fn page_parts(
    scenarios: &[ScenarioReport<'_>],
    membership: &[ClusterSection<'_>],
    placement: &[PlacementSection<'_>],
    lockrpc: &[LockrpcSection<'_>],
) -> (Vec<Part>, Vec<Vec<Shown>>) {
    let mut taken_detectors = vec![false; scenarios.len()];
    let mut taken_membership = vec![false; membership.len()];
    let mut placed = Vec::new();
    let mut placed_entries = Vec::new();
    for (i, p) in placement.iter().enumerate() {
        let name = &p.report.metrics.scenario;
        let mut entry = Entry {
            anchor: p.anchor.clone(),
            name: name.clone(),
            also: Vec::new(),
        };
        placed.push(Shown::Placement(i));
        if let Some(d) = (0..scenarios.len())
            .find(|&d| !taken_detectors[d] && &scenarios[d].metrics.scenario == name)
        {
            taken_detectors[d] = true;
            placed.push(Shown::Detectors(d));
            entry.also.push((scenarios[d].anchor.clone(), "detectors"));
        }
        if let Some(c) = (0..membership.len())
            .find(|&c| !taken_membership[c] && &membership[c].report.metrics.scenario == name)
        {
            taken_membership[c] = true;
            placed.push(Shown::Membership(c));
            entry
                .also
                .push((membership[c].anchor.clone(), "membership"));
        }
        placed_entries.push(entry);
    }
    let single = |anchor: &str, name: &str| Entry {
        anchor: anchor.to_string(),
        name: name.to_string(),
        also: Vec::new(),
    };
    let detectors: Vec<usize> = (0..scenarios.len())
        .filter(|&d| !taken_detectors[d])
        .collect();
    let members: Vec<usize> = (0..membership.len())
        .filter(|&c| !taken_membership[c])
        .collect();
    let parts = vec![
        Part {
            id: "part:detectors",
            title: "Detectors",
            entries: detectors
                .iter()
                .map(|&d| single(&scenarios[d].anchor, &scenarios[d].metrics.scenario))
                .collect(),
        },
        Part {
            id: "part:membership",
            title: "Membership",
            entries: members
                .iter()
                .map(|&c| {
                    single(
                        &membership[c].anchor,
                        &membership[c].report.metrics.scenario,
                    )
                })
                .collect(),
        },
        Part {
            id: "part:placement",
            title: "Placement",
            entries: placed_entries,
        },
        Part {
            id: "part:lockrpc",
            title: "Lock RPCs",
            entries: lockrpc
                .iter()
                .map(|l| single(&l.anchor, &l.metrics.scenario))
                .collect(),
        },
    ];
    let order = vec![
        detectors.into_iter().map(Shown::Detectors).collect(),
        members.into_iter().map(Shown::Membership).collect(),
        placed,
        (0..lockrpc.len()).map(Shown::Lockrpc).collect(),
    ];
    (parts, order)
}

/// The verdict on every scenario ([`crate::verdict`]; a membership
/// scenario's: [`crate::cluster::verdict`]), and what to run next.
fn verdicts(
    out: &mut String,
    scenarios: &[ScenarioReport<'_>],
    membership: &[ClusterSection<'_>],
    placement: &[PlacementSection<'_>],
) {
    let _ = write!(
        out,
        "<section class=\"verdict\" id=\"{VERDICT}\">\n<h2>Verdict</h2>\n<ul>\n"
    );
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

/// The key of the tables' terms, shown next to the first table.
fn glossary(out: &mut String) {
    key(out, "How to read the table", &KEY);
}

fn section(out: &mut String, s: &ScenarioReport<'_>, palette: &Palette, first: bool) {
    let m = s.metrics;
    open_section(out, &s.anchor, None, &m.scenario);
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
    close_section(out);
}
