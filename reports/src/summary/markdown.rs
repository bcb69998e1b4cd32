//! The summary in `report.md`: per part a heading, per group the scenarios
//! it pools, the table (units in the headings) and the recommendation as a
//! list.

use std::fmt::Write as _;

use super::{Cell, Summary};
use crate::markdown_table::table;

fn shown(cell: &Cell) -> String {
    match cell {
        Cell::Pass { text } => format!("✓ {text}"),
        Cell::Partial { text } => format!("~ {text}"),
        Cell::Fail { text } => format!("✗ {text}"),
        other => other.text().to_string(),
    }
}

/// The "Decision summary" section of `report.md`.
pub fn render(summary: &Summary) -> String {
    let mut out = String::from("## Decision summary\n\n");
    if summary.parts.is_empty() {
        out.push_str("Nothing to weigh: the run had no scenario.\n\n");
    }
    for part in &summary.parts {
        let _ = writeln!(out, "### {}\n", part.title);
        for group in &part.groups {
            let _ = writeln!(out, "On {}:\n", group.scenarios.join(", "));
            let mut header = vec![part.candidate.clone()];
            header.extend(group.columns.iter().map(|c| match &c.unit {
                Some(unit) => format!("{} ({unit})", c.title),
                None => c.title.clone(),
            }));
            let header: Vec<&str> = header.iter().map(String::as_str).collect();
            table(
                &mut out,
                &header,
                1,
                group.rows.iter().map(|r| {
                    let mut cells = vec![r.name.clone()];
                    cells.extend(r.cells.iter().map(shown));
                    cells
                }),
            );
            for sentence in &group.sentences {
                let _ = writeln!(out, "- {sentence}");
            }
            out.push('\n');
        }
    }
    out
}
