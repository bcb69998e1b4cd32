//! The summary on the console: each part's groups as tables no wider than
//! the width given (a table too wide is cut into column blocks, each
//! repeating the candidate's name), headings on at most two lines and the
//! unit under them, pass and fail in colour when asked, then the
//! recommendation wrapped to the same width.

use std::fmt::Write as _;

use super::{Cell, Column, Group, Summary};

/// The console's width when nothing else is known.
pub const WIDTH: usize = 120;
/// Spaces between columns.
const GAP: usize = 2;

/// ANSI colours of cells, or none.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Style {
    pub color: bool,
}

impl Style {
    fn paint(self, cell: &Cell, text: &str) -> String {
        let code = match cell {
            Cell::Pass { .. } => "32",
            Cell::Partial { .. } => "33",
            Cell::Fail { .. } => "31",
            _ => return text.to_string(),
        };
        if self.color {
            format!("\x1b[{code}m{text}\x1b[0m")
        } else {
            text.to_string()
        }
    }
    fn bold(self, text: &str) -> String {
        if self.color {
            format!("\x1b[1m{text}\x1b[0m")
        } else {
            text.to_string()
        }
    }
}

/// Display width of `text`: characters (the summary's text has no wide or
/// combining characters).
fn width(text: &str) -> usize {
    text.chars().count()
}

/// `words` wrapped into lines of at most `max` characters (a longer word
/// gets a line of its own).
pub fn wrap(text: &str, max: usize) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        if !line.is_empty() && width(&line) + 1 + width(word) > max {
            lines.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    if !line.is_empty() {
        lines.push(line);
    }
    lines
}

/// A column's heading in two lines at most, in `w` characters: the title
/// wrapped (its last line carrying the rest), then the unit.
fn heading(column: &Column, w: usize) -> [String; 3] {
    let title = wrap(&column.title, w);
    let (first, second) = match title.as_slice() {
        [] => (String::new(), String::new()),
        [one] => (String::new(), one.clone()),
        [one, rest @ ..] => (one.clone(), rest.join(" ")),
    };
    [first, second, column.unit.clone().unwrap_or_default()]
}

/// The width a column needs: its cells, its unit, and its title in at
/// most two lines.
fn column_width(column: &Column, cells: &[&Cell]) -> usize {
    let cells = cells.iter().map(|c| width(c.text())).max().unwrap_or(1);
    let unit = column.unit.as_deref().map_or(0, width);
    let longest_word = column.title.split(' ').map(width).max().unwrap_or(0);
    let mut w = cells.max(unit).max(longest_word);
    // Widen until the title fits in two lines.
    while wrap(&column.title, w).len() > 2 {
        w += 1;
    }
    w
}

fn table(out: &mut String, group: &Group, candidate: &str, max: usize, style: Style) {
    let name_w = group
        .rows
        .iter()
        .map(|r| width(&r.name))
        .chain([width(candidate)])
        .max()
        .unwrap_or(0);
    let widths: Vec<usize> = group
        .columns
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let cells: Vec<&Cell> = group.rows.iter().map(|r| &r.cells[i]).collect();
            column_width(c, &cells)
        })
        .collect();
    // Blocks of columns that fit beside the name column.
    let mut blocks: Vec<Vec<usize>> = vec![Vec::new()];
    let mut used = name_w;
    for (i, w) in widths.iter().enumerate() {
        let last = blocks.last_mut().expect("one block at least");
        if !last.is_empty() && used + GAP + w > max {
            blocks.push(vec![i]);
            used = name_w + GAP + w;
        } else {
            blocks.last_mut().expect("one block at least").push(i);
            used += GAP + w;
        }
    }
    for block in blocks.iter().filter(|b| !b.is_empty()) {
        let headings: Vec<[String; 3]> = block
            .iter()
            .map(|&i| heading(&group.columns[i], widths[i]))
            .collect();
        for line in 0..3 {
            let first = if line == 1 { candidate } else { "" };
            let mut text = format!("{first:<name_w$}");
            for (heading, &i) in headings.iter().zip(block) {
                let _ = write!(
                    text,
                    "{:gap$}{:>w$}",
                    "",
                    heading[line],
                    gap = GAP,
                    w = widths[i]
                );
            }
            let text = text.trim_end();
            if !text.is_empty() {
                let _ = writeln!(out, "{}", style.bold(text));
            }
        }
        for row in &group.rows {
            let _ = write!(out, "{:<name_w$}", row.name);
            for &i in block {
                let cell = &row.cells[i];
                let pad = widths[i].saturating_sub(width(cell.text()));
                let _ = write!(
                    out,
                    "{:gap$}{:pad$}{}",
                    "",
                    "",
                    style.paint(cell, cell.text()),
                    gap = GAP
                );
            }
            out.push('\n');
        }
    }
}

/// The summary as console text, each line at most `max` characters wide
/// (colour codes aside).
pub fn render(summary: &Summary, max: usize, style: Style) -> String {
    let mut out = String::new();
    for part in &summary.parts {
        let _ = writeln!(out, "{}", style.bold(&format!("== {} ==", part.title)));
        for group in &part.groups {
            let on = format!(
                "on {} scenario{}: {}",
                group.scenarios.len(),
                crate::words::plural(group.scenarios.len()),
                group.scenarios.join(", ")
            );
            for line in wrap(&on, max) {
                let _ = writeln!(out, "{line}");
            }
            table(&mut out, group, &part.candidate, max, style);
            for sentence in &group.sentences {
                for (k, line) in wrap(sentence, max - 2).iter().enumerate() {
                    let _ = writeln!(out, "{}{line}", if k == 0 { "> " } else { "  " });
                }
            }
            out.push('\n');
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::summary::{Part, Row};

    fn summary(columns: usize) -> Summary {
        let group = Group {
            scenarios: vec!["a".into(), "b".into()],
            columns: (0..columns)
                .map(|i| {
                    Column::new(
                        &format!("c{i}"),
                        &format!("tolerates slow-link {i}"),
                        Some("per pair-h"),
                    )
                })
                .collect(),
            rows: vec![Row {
                name: "phi-100ms".into(),
                cells: (0..columns)
                    .map(|i| {
                        if i % 2 == 0 {
                            Cell::Pass { text: "yes".into() }
                        } else {
                            Cell::number(1234.5, 1)
                        }
                    })
                    .collect(),
            }],
            pick: Some("phi-100ms".into()),
            sentences: vec!["pick `phi-100ms`: ".to_string() + &"word ".repeat(60)],
        };
        Summary {
            parts: vec![Part {
                id: "detectors".into(),
                title: "Detectors".into(),
                candidate: "detector".into(),
                groups: vec![group],
            }],
        }
    }

    #[test]
    fn every_line_fits_the_width_and_wide_tables_are_cut_into_blocks() {
        let text = render(&summary(20), 80, Style { color: false });
        for line in text.lines() {
            assert!(width(line) <= 80, "{} > 80: {line}", width(line));
        }
        // 20 columns do not fit in 80: the name heads more than one block.
        assert!(text.matches("phi-100ms  ").count() >= 2, "{text}");
        assert!(text.contains("> pick `phi-100ms`"));
    }

    #[test]
    fn colour_only_when_asked() {
        assert!(!render(&summary(2), 120, Style { color: false }).contains('\x1b'));
        let coloured = render(&summary(2), 120, Style { color: true });
        assert!(coloured.contains("\x1b[32myes\x1b[0m"), "{coloured}");
    }
}
