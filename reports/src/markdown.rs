//! `report.md`: the report as Markdown, for a pull request, a wiki or a
//! terminal pager. The same tables as `index.html`; the charts are linked
//! (the SVG files under `charts/`), since Markdown cannot inline them, and a
//! chart with nothing to plot is one line of text. Membership scenarios
//! follow, each in a "cluster membership" section.

use std::fmt::Write as _;

use crate::cluster::section::{markdown_key, markdown_section, ClusterSection};
use crate::detail_table::{self, CLASS_COLUMNS, COLUMNS, KEY};
use crate::lockrpc::section::LockrpcSection;
pub(crate) use crate::markdown_table::{cell, table};
use crate::placement::section::PlacementSection;
use crate::scenario_report::ScenarioReport;

/// The whole document: the detector scenarios, then the membership
/// scenarios ([`crate::cluster::section`]), then the keys of the tables
/// shown.
pub fn render(
    scenarios: &[ScenarioReport<'_>],
    membership: &[ClusterSection<'_>],
    placement: &[PlacementSection<'_>],
    lockrpc: &[LockrpcSection<'_>],
) -> String {
    render_with_lead("", scenarios, membership, placement, lockrpc)
}

/// [`render`], with `lead` (Markdown: the decision summary) right after the
/// title.
pub fn render_with_lead(
    lead: &str,
    scenarios: &[ScenarioReport<'_>],
    membership: &[ClusterSection<'_>],
    placement: &[PlacementSection<'_>],
    lockrpc: &[LockrpcSection<'_>],
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
    let pooled = match (scenarios.is_empty(), membership.is_empty()) {
        (false, true) => "Every figure pools all monitored pairs and seeds of a scenario; `summary.csv` holds them unrounded.",
        (true, false) => "Every figure pools all seeds of a judge; `membership.csv` holds them unrounded.",
        (true, true) if !lockrpc.is_empty() => "Every figure pools all seeds of a policy; `lockrpc.csv` holds them unrounded.",
        _ => "Every figure pools all monitored pairs and seeds of a scenario (in cluster membership sections, all seeds of a judge); `summary.csv` and `membership.csv` hold them unrounded.",
    };
    let _ = writeln!(
        out,
        "# fdlab report\n\n{} scenario(s), {runs} simulated run(s) (fdlab {}). {pooled} \
`index.html` shows the same tables with the charts inline.\n",
        scenarios.len() + membership.len() + lockrpc.len(),
        env!("CARGO_PKG_VERSION")
    );
    out.push_str(lead);
    for s in scenarios {
        let m = s.metrics;
        let _ = writeln!(out, "## {}\n", cell(&m.scenario));
        if !s.description.trim().is_empty() {
            let _ = writeln!(out, "{}\n", s.description.trim());
        }
        let events: u128 = m.runs.iter().map(|r| u128::from(r.events)).sum();
        let _ = writeln!(out, "{} run(s), {events} simulated events.\n", m.runs.len());
        let visible = detail_table::visible_columns(&m.summary);
        let names: Vec<&str> = visible.iter().map(|&i| COLUMNS[i]).collect();
        let _ = writeln!(out, "| {} |", names.join(" | "));
        let align: Vec<&str> = visible
            .iter()
            .map(|&i| if i == 0 { ":--" } else { "--:" })
            .collect();
        let _ = writeln!(out, "| {} |", align.join(" | "));
        for row in detail_table::rows(&m.summary) {
            let cells: Vec<String> = visible.iter().map(|&i| cell(&row[i])).collect();
            let _ = writeln!(out, "| {} |", cells.join(" | "));
        }
        if detail_table::has_classes(&m.classes) {
            let _ = writeln!(out, "\nBy link class:\n");
            table(
                &mut out,
                &CLASS_COLUMNS,
                2,
                detail_table::class_rows(&m.classes),
            );
        } else {
            out.push('\n');
        }
        let name = cell(&m.scenario);
        let mut images = Vec::new();
        if s.cdf.svg().is_some() {
            images.push(format!("![detection time of {name}]({})", s.cdf_file));
        }
        if s.tradeoff.svg().is_some() {
            images.push(format!(
                "![false Failed against detection time of {name}]({})",
                s.tradeoff_file
            ));
        }
        if !images.is_empty() {
            let _ = writeln!(out, "{}\n", images.join(" "));
        }
        for line in s.nothing_lines() {
            let _ = writeln!(out, "{line}\n");
        }
    }
    for s in membership {
        markdown_section(&mut out, s);
    }
    for s in placement {
        crate::placement::section::markdown_section(&mut out, s);
    }
    for s in lockrpc {
        crate::lockrpc::section::markdown_section(&mut out, s);
    }
    if !scenarios.is_empty() {
        out.push_str("## How to read the tables\n\n");
        for (term, meaning) in KEY {
            let _ = writeln!(out, "- **{term}**: {meaning}");
        }
    }
    if !membership.is_empty() {
        if !scenarios.is_empty() {
            out.push('\n');
        }
        markdown_key(&mut out);
    }
    if !placement.is_empty() {
        out.push('\n');
        crate::placement::section::markdown_key(&mut out);
    }
    if !lockrpc.is_empty() {
        out.push('\n');
        crate::lockrpc::section::markdown_key(&mut out);
    }
    out
}
