//! A table of `index.html` that fits its column: a box that scrolls sideways
//! inside the page when the table is wider (its first column, the detector's
//! or judge's name, stays in view while it scrolls: see the page's style in
//! [`crate::html`]), headers of at most two lines, and a unit every cell of a
//! column shares written once in its header instead of in every cell.
//!
//! Tables of 18 columns are wider than any window; before this, headers
//! wrapped word by word (five lines deep) and the last columns were cut off
//! at the edge of the column of text. The cells' text is the one the
//! Markdown report shows ([`crate::detail_table`] and each part's rows),
//! less the unit lifted into the header.

use std::fmt::Write as _;

use crate::charts::{xml_escape, Palette};

/// Longest header line, in characters, before a header is broken in two:
/// about the width of the widest cells (`2.520 [2.428, 2.616]`), so that a
/// header does not make its column wider than its figures.
const HEADER_LINE: usize = 12;

/// The unit lifted from cells into their column's header: seconds, the
/// unit of every time in the tables (`2.497 s`).
const SECONDS: &str = " s";

/// A table: a header row, then rows whose first cell is a detector's (or
/// judge's) name, shown with its chart colour. A column whose figures are
/// all in seconds has the unit in its header ([`lift_seconds`]); headers
/// are broken into at most two lines ([`header_lines`]).
pub(crate) fn table(
    out: &mut String,
    headers: &[&str],
    rows: impl Iterator<Item = Vec<String>>,
    palette: &Palette,
) {
    let mut rows: Vec<Vec<String>> = rows.collect();
    let headers = lift_seconds(headers, &mut rows);
    out.push_str("<div class=\"table\"><table>\n<thead><tr>");
    for h in &headers {
        let _ = write!(out, "<th>{}</th>", header_html(h));
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

/// A header as HTML: escaped, its lines joined by `<br>`.
fn header_html(header: &str) -> String {
    header_lines(header)
        .iter()
        .map(|l| xml_escape(l))
        .collect::<Vec<_>>()
        .join("<br>")
}

/// A header in at most two lines (the page's style keeps each line whole).
/// A short header is one line, or its name over its trailing brackets
/// (`mean` over `[95% CI] (s)`); a long one is cut at the space that makes
/// its longer line shortest.
pub(crate) fn header_lines(header: &str) -> Vec<String> {
    let header = header.trim();
    if let Some(cut) = trailing_brackets(header) {
        let (name, brackets) = header.split_at(cut);
        if name.trim_end().chars().count() <= HEADER_LINE {
            return vec![name.trim_end().to_string(), brackets.trim().to_string()];
        }
    }
    if header.chars().count() <= HEADER_LINE {
        return vec![header.to_string()];
    }
    let best = header.match_indices(' ').map(|(i, _)| i).min_by_key(|&i| {
        header[..i]
            .chars()
            .count()
            .max(header[i + 1..].chars().count())
    });
    match best {
        Some(i) => vec![header[..i].to_string(), header[i + 1..].to_string()],
        None => vec![header.to_string()],
    }
}

/// Where the brackets that end `header` start (`recovery p50 (p99) (s)`:
/// before `(p99)`), if it ends with a bracket and has a name before them.
fn trailing_brackets(header: &str) -> Option<usize> {
    let mut cut = header.len();
    loop {
        let head = header[..cut].trim_end();
        let open = match head.chars().last()? {
            ')' => '(',
            ']' => '[',
            _ => break,
        };
        let start = head.rfind(open)?;
        if !header[..start].ends_with(' ') {
            break;
        }
        cut = start;
    }
    (cut < header.len() && !header[..cut].trim().is_empty()).then_some(cut)
}

/// Moves the unit of a column whose figures are all in seconds into its
/// header: every cell but `-` holds a time (`2.497 s`) and nothing else
/// but numbers and punctuation (`2.520 s [2.428, 2.616]`, `1.2 s (3.4 s)`);
/// its cells lose the unit and its header gains `(s)`. The first column
/// (names) is never changed.
pub(crate) fn lift_seconds(headers: &[&str], rows: &mut [Vec<String>]) -> Vec<String> {
    let mut out: Vec<String> = headers.iter().map(|h| h.to_string()).collect();
    for (c, header) in out.iter_mut().enumerate().skip(1) {
        let cells = rows.iter().filter_map(|r| r.get(c)).filter(|v| *v != "-");
        let mut any = false;
        let mut all = true;
        for cell in cells {
            any = true;
            all &= without_seconds(cell).is_some();
        }
        if !(any && all) {
            continue;
        }
        for row in rows.iter_mut() {
            if let Some(cell) = row.get_mut(c) {
                if let Some(bare) = without_seconds(cell) {
                    *cell = bare;
                }
            }
        }
        header.push_str(" (s)");
    }
    out
}

/// `cell` without its unit of seconds, if it has one after a number and,
/// without it, holds no letter (only figures and punctuation).
fn without_seconds(cell: &str) -> Option<String> {
    let mut out = String::with_capacity(cell.len());
    let mut found = false;
    let mut rest = cell;
    while let Some(i) = rest.find(SECONDS) {
        let after = &rest[i + SECONDS.len()..];
        let unit_ends = after
            .chars()
            .next()
            .is_none_or(|c| matches!(c, ' ' | ')' | ']' | ','));
        let after_digit = rest[..i].ends_with(|c: char| c.is_ascii_digit());
        out.push_str(&rest[..i]);
        if unit_ends && after_digit {
            found = true;
        } else {
            out.push_str(SECONDS);
        }
        rest = after;
    }
    out.push_str(rest);
    (found && !out.chars().any(char::is_alphabetic)).then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_are_at_most_two_lines() {
        assert_eq!(header_lines("P_A"), ["P_A"]);
        assert_eq!(header_lines("T_D p50 (s)"), ["T_D p50", "(s)"]);
        assert_eq!(header_lines("mean [95% CI] (s)"), ["mean", "[95% CI] (s)"]);
        assert_eq!(
            header_lines("recovery p50 (p99) (s)"),
            ["recovery p50", "(p99) (s)"]
        );
        assert_eq!(
            header_lines("msgs (bytes) / pair / s"),
            ["msgs (bytes)", "/ pair / s"]
        );
        assert_eq!(
            header_lines("keys moved per true declaration (back)"),
            ["keys moved per true", "declaration (back)"]
        );
        for h in crate::cluster::section::COLUMNS
            .iter()
            .chain(&crate::detail_table::COLUMNS)
            .chain(&crate::placement::section::COLUMNS)
        {
            assert!(header_lines(h).len() <= 2, "{h}");
            assert_eq!(header_lines(h).join(" "), *h, "a word lost");
        }
    }

    #[test]
    fn a_column_of_seconds_has_its_unit_in_the_header() {
        let mut rows = vec![
            vec![
                "a".into(),
                "2.497 s".into(),
                "2.520 s [2.428, 2.616]".into(),
                "57 / 57".into(),
            ],
            vec![
                "b".into(),
                "-".into(),
                "1.2 s (3.4 s)".into(),
                "0 / 57".into(),
            ],
        ];
        let headers = lift_seconds(&["detector", "T_D p50", "mean", "detected"], &mut rows);
        assert_eq!(headers, ["detector", "T_D p50 (s)", "mean (s)", "detected"]);
        assert_eq!(rows[0], ["a", "2.497", "2.520 [2.428, 2.616]", "57 / 57"]);
        assert_eq!(rows[1], ["b", "-", "1.2 (3.4)", "0 / 57"]);
    }

    #[test]
    fn a_column_with_other_units_or_words_keeps_its_cells() {
        for cell in ["0.89 (57 B)", "0.0 (2/2 stopped)", "3 suspicions", "12 ms"] {
            let mut rows = vec![vec!["s".to_string(), cell.to_string()]];
            let headers = lift_seconds(&["name", "x"], &mut rows);
            assert_eq!(headers, ["name", "x"], "{cell}");
            assert_eq!(rows[0][1], cell);
        }
        // Nor a column of nothing but `-`, nor the names.
        let mut rows = vec![vec!["1 s".to_string(), "-".to_string()]];
        assert_eq!(lift_seconds(&["name", "x"], &mut rows), ["name", "x"]);
        assert_eq!(rows[0][0], "1 s");
    }

    #[test]
    fn the_table_scrolls_in_its_box_with_two_line_headers() {
        let mut out = String::new();
        let rows = vec![vec!["fixed".to_string(), "2.497 s".to_string()]].into_iter();
        table(
            &mut out,
            &["detector", "T_D p50"],
            rows,
            &Palette::new(["fixed"]),
        );
        assert!(out.starts_with("<div class=\"table\"><table>"), "{out}");
        assert!(out.contains("<th>T_D p50<br>(s)</th>"), "{out}");
        assert!(out.contains("<td>2.497</td>"), "{out}");
        assert!(
            out.contains("background:#0072b2\"></span>fixed</td>"),
            "{out}"
        );
    }
}
