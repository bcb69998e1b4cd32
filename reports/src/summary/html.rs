//! The summary on the page: the first section of `index.html`. Per part a
//! heading, per group the scenarios it pools, the table (each candidate in
//! its chart colour, pass and fail marked, the unit under each heading, the
//! table scrolling inside its box when the page is narrow) and the
//! recommendation.

use std::fmt::Write as _;

use super::{Cell, Summary};
use crate::charts::{xml_escape, Palette};
use crate::html_parts::code_spans;

/// The summary's own styles, added to the page's.
pub const STYLE: &str = "
div.summary table td.pass { color: #0a6b2a; }
div.summary table td.partial { color: #8a5a00; }
div.summary table td.fail { color: #b00020; font-weight: 600; }
div.summary table td.pass::before { content: '✓ '; }
div.summary table td.partial::before { content: '~ '; }
div.summary table td.fail::before { content: '✗ '; }
div.summary th span.unit { display: block; font-weight: 400; color: #555; font-size: 12px; }
div.summary p.on { margin: 10px 0 2px; color: #444; font-size: 14px; }
div.summary ul.pick li { margin: 3px 0; font-size: 14.5px; }
div.summary ul.pick li:first-child { font-weight: 600; }
";

/// The body of the page's summary section, its styles first; each part's heading has the id
/// `summary-<part>`. Detectors and judges carry their colours from
/// `palette`; distributions and policies have none there.
pub fn render(summary: &Summary, palette: &Palette) -> String {
    let mut out = format!("<style>{STYLE}</style>\n<div class=\"summary\">\n");
    out.push_str("<p class=\"meta\">Per part, candidates compared on the scenarios they all ran: the fault classes each passes (✓), passes in part (~) or fails (✗), then its figures pooled over those runs, and the pick with what it trades. The rule behind the pick: docs/reports.md.</p>\n");
    for part in &summary.parts {
        let coloured = matches!(part.id.as_str(), "detectors" | "membership");
        let _ = writeln!(
            out,
            "<h3 id=\"summary-{}\">{}</h3>",
            xml_escape(&part.id),
            xml_escape(&part.title)
        );
        for group in &part.groups {
            let _ = writeln!(
                out,
                "<p class=\"on\">On {} scenario{}: {}</p>",
                group.scenarios.len(),
                crate::words::plural(group.scenarios.len()),
                xml_escape(&group.scenarios.join(", "))
            );
            out.push_str("<div class=\"table\"><table>\n<thead><tr>");
            let _ = write!(out, "<th>{}</th>", xml_escape(&part.candidate));
            for c in &group.columns {
                let unit = c.unit.as_deref().map_or(String::new(), |u| {
                    format!("<span class=\"unit\">{}</span>", xml_escape(u))
                });
                let _ = write!(out, "<th>{}{unit}</th>", xml_escape(&c.title));
            }
            out.push_str("</tr></thead>\n<tbody>\n");
            for row in &group.rows {
                let swatch = if coloured {
                    format!(
                        "<span class=\"swatch\" style=\"background:{}\"></span>",
                        palette.css(&row.name)
                    )
                } else {
                    String::new()
                };
                let _ = write!(out, "<tr><td>{swatch}{}</td>", xml_escape(&row.name));
                for cell in &row.cells {
                    let class = match cell {
                        Cell::Pass { .. } => " class=\"pass\"",
                        Cell::Partial { .. } => " class=\"partial\"",
                        Cell::Fail { .. } => " class=\"fail\"",
                        _ => "",
                    };
                    let _ = write!(out, "<td{class}>{}</td>", xml_escape(cell.text()));
                }
                out.push_str("</tr>\n");
            }
            out.push_str("</tbody></table></div>\n<ul class=\"pick\">\n");
            for sentence in &group.sentences {
                let _ = writeln!(out, "<li>{}</li>", code_spans(sentence));
            }
            out.push_str("</ul>\n");
        }
    }
    out.push_str("</div>\n");
    out
}
