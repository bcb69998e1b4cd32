//! Markdown tables for `report.md`, whatever the part: a leaf that the
//! document ([`crate::markdown`]), the summary and each part's section use.

use std::fmt::Write as _;

/// A table cell: pipes escaped, no line breaks.
pub(crate) fn cell(text: &str) -> String {
    text.replace('|', "\\|").replace(['\n', '\r'], " ")
}

/// A Markdown table: `header`, its first `left` columns aligned left and
/// the others right, then `rows` (escaped), then a blank line.
pub(crate) fn table(
    out: &mut String,
    header: &[&str],
    left: usize,
    rows: impl IntoIterator<Item = Vec<String>>,
) {
    let _ = writeln!(out, "| {} |", header.join(" | "));
    let align: Vec<&str> = (0..header.len())
        .map(|i| if i < left { ":--" } else { "--:" })
        .collect();
    let _ = writeln!(out, "| {} |", align.join(" | "));
    for row in rows {
        let cells: Vec<String> = row.iter().map(|c| cell(c)).collect();
        let _ = writeln!(out, "| {} |", cells.join(" | "));
    }
    out.push('\n');
}
