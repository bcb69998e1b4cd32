//! How a reader moves through `index.html`: a bar fixed at the top of the
//! window with a link to each part of the page and back to the top, and
//! the contents, grouped by part, each scenario listed once.
//!
//! A report of the built-in suite is some fifty screens long; a flat list
//! of forty-odd links (a placement scenario listed twice, once for its
//! detectors and once for its placement) and no way back made it hard to
//! find a scenario, or the verdict again after reading one. The page's
//! parts ([`Part`]) are its kinds of scenario: detectors, cluster
//! membership, key placement, lock RPCs. A scenario of two kinds (a
//! placement scenario also has its detectors' or judges' section) is one
//! entry of its main part, with links to its other sections.
//!
//! Ids made here hold a `:` (`part:detectors`, `page:contents`), which no
//! scenario's anchor holds ([`crate::report::file_stem`] turns it into
//! `_`), so they never clash with a scenario's.

use std::fmt::Write as _;

use crate::charts::xml_escape;

/// A section the caller places at the head of the page, after its title
/// and before the contents, with a link in the navigation bar: e.g. a
/// summary of the decisions, `id` `summary`. The page writes
/// `<section id="{id}" class="lead"><h2>{title}</h2>{html}</section>`, so
/// the link always has its target.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LeadSection<'a> {
    /// The section's id, unique in the page (it should not be a scenario's
    /// anchor: a scenario's name, made safe for a file name).
    pub id: &'a str,
    /// Its heading, and its link's text in the bar (plain text, escaped
    /// by the page).
    pub title: &'a str,
    /// Its body: HTML, written as given (the caller escapes its text).
    pub html: &'a str,
}

/// Id of the page's title: where "top" goes.
pub(crate) const TOP: &str = "page:top";
/// Id of the contents.
pub(crate) const CONTENTS: &str = "page:contents";
/// Id of the verdict.
pub(crate) const VERDICT: &str = "page:verdict";

/// One part of the page: its id and heading, and its scenarios.
pub(crate) struct Part {
    pub(crate) id: &'static str,
    pub(crate) title: &'static str,
    pub(crate) entries: Vec<Entry>,
}

/// A scenario in the contents: its main section, and its other sections.
pub(crate) struct Entry {
    pub(crate) anchor: String,
    pub(crate) name: String,
    /// `(anchor, what)`: e.g. the detectors' section of a placement
    /// scenario, `detectors`.
    pub(crate) also: Vec<(String, &'static str)>,
}

/// The bar fixed at the top of the window: the report's name (back to the
/// top), the lead sections, the contents, the verdict (if the page has
/// one) and each part with a scenario.
pub(crate) fn nav_bar(out: &mut String, lead: &[LeadSection<'_>], verdict: bool, parts: &[Part]) {
    out.push_str("<nav class=\"bar\">\n");
    let _ = writeln!(out, "<a class=\"home\" href=\"#{TOP}\">fdlab report</a>");
    for l in lead {
        link(out, l.id, l.title);
    }
    link(out, CONTENTS, "Contents");
    if verdict {
        link(out, VERDICT, "Verdict");
    }
    for p in parts.iter().filter(|p| !p.entries.is_empty()) {
        link(out, p.id, p.title);
    }
    let _ = writeln!(out, "<a class=\"top\" href=\"#{TOP}\">↑ top</a>");
    out.push_str("</nav>\n");
}

fn link(out: &mut String, id: &str, text: &str) {
    let _ = writeln!(
        out,
        "<a href=\"#{}\">{}</a>",
        xml_escape(id),
        xml_escape(text)
    );
}

/// The contents: per part with a scenario, its heading (a link to the
/// part) and its scenarios, each once, with its other sections beside it.
pub(crate) fn contents(out: &mut String, parts: &[Part]) {
    let _ = writeln!(
        out,
        "<nav class=\"contents\" id=\"{CONTENTS}\" aria-label=\"Contents\">"
    );
    for p in parts.iter().filter(|p| !p.entries.is_empty()) {
        let _ = writeln!(
            out,
            "<div class=\"group\"><h3><a href=\"#{}\">{}</a> <span class=\"count\">({})</span></h3>\n<ul>",
            p.id,
            xml_escape(p.title),
            p.entries.len()
        );
        for e in &p.entries {
            let _ = write!(
                out,
                "<li><a href=\"#{}\">{}</a>",
                xml_escape(&e.anchor),
                xml_escape(&e.name)
            );
            for (anchor, what) in &e.also {
                let _ = write!(
                    out,
                    " <a class=\"also\" href=\"#{}\">{}</a>",
                    xml_escape(anchor),
                    xml_escape(what)
                );
            }
            out.push_str("</li>\n");
        }
        out.push_str("</ul></div>\n");
    }
    out.push_str("</nav>\n");
}

/// A part's heading in the page, the target of its links.
pub(crate) fn part_heading(out: &mut String, part: &Part) {
    let _ = writeln!(
        out,
        "<h2 class=\"part\" id=\"{}\">{}</h2>",
        part.id,
        xml_escape(part.title)
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts() -> Vec<Part> {
        vec![
            Part {
                id: "part:detectors",
                title: "Detectors",
                entries: vec![Entry {
                    anchor: "crash".into(),
                    name: "crash".into(),
                    also: vec![],
                }],
            },
            Part {
                id: "part:membership",
                title: "Membership",
                entries: vec![],
            },
            Part {
                id: "part:placement",
                title: "Placement",
                entries: vec![Entry {
                    anchor: "p-placement".into(),
                    name: "p <1>".into(),
                    also: vec![("p".into(), "detectors")],
                }],
            },
        ]
    }

    #[test]
    fn the_bar_links_the_lead_sections_and_the_parts_present() {
        let mut out = String::new();
        let lead = [LeadSection {
            id: "summary",
            title: "Summary",
            html: "<p>x</p>",
        }];
        nav_bar(&mut out, &lead, true, &parts());
        assert!(out.contains("<a href=\"#summary\">Summary</a>"), "{out}");
        assert!(
            out.contains("<a href=\"#page:verdict\">Verdict</a>"),
            "{out}"
        );
        assert!(out.contains("<a href=\"#part:detectors\">Detectors</a>"));
        assert!(out.contains("<a href=\"#part:placement\">Placement</a>"));
        // A part with no scenario has no link, nor a page with no verdict.
        assert!(!out.contains("Membership"), "{out}");
        let mut bare = String::new();
        nav_bar(&mut bare, &[], false, &parts());
        assert!(!bare.contains("Verdict") && !bare.contains("#summary"));
        assert!(bare.contains("href=\"#page:top\">↑ top</a>"));
    }

    #[test]
    fn the_contents_list_each_scenario_once_under_its_part() {
        let mut out = String::new();
        contents(&mut out, &parts());
        assert_eq!(out.matches("<div class=\"group\">").count(), 2, "{out}");
        assert!(out.contains(
            "<li><a href=\"#p-placement\">p &lt;1&gt;</a> <a class=\"also\" href=\"#p\">detectors</a></li>"
        ));
        assert_eq!(out.matches("href=\"#p\"").count(), 1);
        assert!(!out.contains("Membership"));
    }
}
