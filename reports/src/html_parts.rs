//! The blocks every section of `index.html` is built from, whatever its
//! part: a folding section, a key of terms, a legend of settings, a chart
//! or the line standing in for it, and the table ([`crate::html_table`]).
//! A leaf: the page ([`crate::html`]) and each part's section
//! (`cluster`, `placement`, `lockrpc`) use it, and it uses none of them.

use std::fmt::Write as _;

use crate::charts::{inline_svg, xml_escape, Chart, Palette};
pub(crate) use crate::html_table::table;

/// Opens a scenario's section, which folds: its heading is the handle
/// (a reader folds a scenario read, or all but one, with no script).
/// `class` tells the kind (`cluster`, `placement`, `lockrpc`; none for a
/// detector scenario). Close it with [`close_section`].
pub(crate) fn open_section(out: &mut String, anchor: &str, class: Option<&str>, title: &str) {
    let class = class.map_or(String::new(), |c| format!(" class=\"{c}\""));
    let _ = writeln!(
        out,
        "<section id=\"{}\"{class}>\n<details open>\n<summary class=\"fold\"><h2>{}</h2></summary>",
        xml_escape(anchor),
        xml_escape(title)
    );
}

/// Closes a section of [`open_section`].
pub(crate) fn close_section(out: &mut String) {
    out.push_str("</details>\n</section>\n");
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

/// Escapes `text` and sets its `backquoted` names in code.
pub(crate) fn code_spans(text: &str) -> String {
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
