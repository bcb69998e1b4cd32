//! SVG charts of a report, drawn with plotters' SVG backend into memory.
//!
//! One concept per module: [`cdf`] (how fast each detector detects),
//! [`tradeoff`] (false Failed rate against p99 detection time), [`sweep`]
//! (the trade-off of a sweep), [`timeline`] (one pair of a replay over time),
//! [`columns`] (a score series reduced to pixel columns for the timeline),
//! [`score_scale`] (how each detector kind's score is drawn there),
//! `labels` (names beside points, nudged apart), `frame` (a chart's title, axes and gridlines, and the frame every
//! trade-off chart shares) and [`axis`] (time axes: units, ticks, and how
//! times are written). This module holds what they share: the detector
//! colours, the sizes of text, and the finishing of the SVG text.
//!
//! Charts are deterministic bytes: plotters writes no timestamp or random id,
//! floats are formatted by Rust (no locale), and every series is drawn in the
//! scenario's detector order. Text is written as SVG `<text>` elements in the
//! browser's sans-serif font, so no font file or system library is needed;
//! plotters only estimates text widths for its layout.

pub mod axis;
pub mod cdf;
pub mod columns;
pub(crate) mod frame;
pub(crate) mod labels;
pub mod score_scale;
pub mod sweep;
pub mod timeline;
pub mod tradeoff;

use std::fmt::Display;
use std::io;

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

pub(crate) use axis::log_coord;
pub use axis::{
    fmt_number, fmt_seconds, log_ticks, TimeAxis, TimeUnit, LOG_SPAN, MAX_DECADE_TICKS,
    MAX_LOG_TICKS, RIGHT_ROOM,
};

/// Colours for detectors, in order of first appearance in a report: the
/// Okabe–Ito palette for colour-blind readers (without its yellow, too pale on
/// white), then darker tones. Beyond these, colours repeat.
pub const PALETTE: [RGBColor; 10] = [
    RGBColor(0, 114, 178),   // blue
    RGBColor(213, 94, 0),    // vermillion
    RGBColor(0, 158, 115),   // bluish green
    RGBColor(204, 121, 167), // reddish purple
    RGBColor(230, 159, 0),   // orange
    RGBColor(86, 180, 233),  // sky blue
    RGBColor(60, 60, 60),    // near black
    RGBColor(140, 86, 75),   // brown
    RGBColor(128, 128, 0),   // olive
    RGBColor(100, 60, 160),  // violet
];

/// Colours for key distributions (the placement charts), in order of first
/// appearance: Paul Tol's muted scheme (colour-blind safe; its olive left
/// out, a detector colour). Softer tones than [`PALETTE`], and drawn as
/// squares, so that a distribution is not read as a detector.
pub const DISTRIBUTION_PALETTE: [RGBColor; 8] = [
    RGBColor(51, 34, 136),   // indigo
    RGBColor(136, 204, 238), // cyan
    RGBColor(68, 170, 153),  // teal
    RGBColor(204, 102, 119), // rose
    RGBColor(17, 119, 51),   // green
    RGBColor(221, 204, 119), // sand
    RGBColor(136, 34, 85),   // wine
    RGBColor(170, 68, 153),  // purple
];

/// Which colours a [`Palette`] hands out.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum Scheme {
    /// Detectors, judges and policies: [`PALETTE`].
    #[default]
    Detectors,
    /// Key distributions: [`DISTRIBUTION_PALETTE`].
    Distributions,
}

/// One colour per detector name, the same in every chart of a report (or,
/// [`Palette::for_distributions`], one per key distribution).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Palette {
    scheme: Scheme,
    names: Vec<String>,
    /// `(label, name)`: a label drawn in its name's colour (a judge shown
    /// with its Orleans version, `classic (10.2)`, is `classic`'s colour).
    aliases: Vec<(String, String)>,
}

impl Palette {
    /// Assigns colours to names in order of first appearance (give scenarios in
    /// report order and, in each, detectors in scenario order).
    pub fn new<'a>(names: impl IntoIterator<Item = &'a str>) -> Palette {
        let mut palette = Palette::default();
        for name in names {
            palette.add(name);
        }
        palette
    }

    /// The colours of key distributions, in order of first appearance,
    /// from [`DISTRIBUTION_PALETTE`]: never a detector's.
    pub fn for_distributions<'a>(names: impl IntoIterator<Item = &'a str>) -> Palette {
        let mut palette = Palette::new(names);
        palette.scheme = Scheme::Distributions;
        palette
    }

    /// Gives `name` the next colour, unless it has one.
    pub fn add(&mut self, name: &str) {
        if !self.names.iter().any(|n| n == name) {
            self.names.push(name.to_string());
        }
    }

    /// Draws `label` in `name`'s colour.
    pub fn alias(&mut self, label: &str, name: &str) {
        if label != name && !self.aliases.iter().any(|(l, _)| l == label) {
            self.aliases.push((label.to_string(), name.to_string()));
        }
    }

    /// The colour of `name` (or of the name a label stands for); a name
    /// never added gets the colour after the last assigned one (charts then
    /// still draw).
    pub fn colour(&self, name: &str) -> RGBColor {
        let name = self
            .aliases
            .iter()
            .find(|(l, _)| l == name)
            .map_or(name, |(_, n)| n.as_str());
        let index = self
            .names
            .iter()
            .position(|n| n == name)
            .unwrap_or(self.names.len());
        let colours: &[RGBColor] = match self.scheme {
            Scheme::Detectors => &PALETTE,
            Scheme::Distributions => &DISTRIBUTION_PALETTE,
        };
        colours[index % colours.len()]
    }

    /// The colour as CSS `#rrggbb`, for legends in HTML.
    pub fn css(&self, name: &str) -> String {
        let RGBColor(r, g, b) = self.colour(name);
        format!("#{r:02x}{g:02x}{b:02x}")
    }
}

/// The font family of every text (the reader's sans-serif).
pub const FONT: &str = "sans-serif";
/// Text sizes in plotters' units; the SVG backend writes `size / 1.24` px, so
/// these give 17 px titles, 14 px axis names and 13 px tick labels and legends.
pub const TITLE_SIZE: f64 = 21.0;
pub const AXIS_NAME_SIZE: f64 = 17.5;
pub const TICK_SIZE: f64 = 16.0;
pub const LEGEND_SIZE: f64 = 16.0;

/// Width and height of the plot of a per-scenario chart, px (its legend
/// below adds [`legend_height`]): two charts fit side by side in a 1400 px
/// window.
pub const SCENARIO_CHART_SIZE: (u32, u32) = (640, 400);

/// Legend entries per row below a chart.
pub const LEGEND_COLUMNS: usize = 2;
/// Height of one legend row, px.
pub const LEGEND_ROW: u32 = 22;

/// How a legend entry shows its detector.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Marker {
    /// A line (a curve).
    Line,
    /// A filled dot (a point).
    Dot,
    /// An empty ring (a detector not plotted).
    Ring,
    /// A filled square (a key distribution).
    Square,
}

/// Height of a legend of `entries` below a chart, px.
pub fn legend_height(entries: usize) -> u32 {
    if entries == 0 {
        0
    } else {
        (entries.div_ceil(LEGEND_COLUMNS) as u32) * LEGEND_ROW + 12
    }
}

/// Draws a legend in its own strip below the plot, so it never covers data:
/// entries in rows of [`LEGEND_COLUMNS`], in the order given.
pub(crate) fn draw_legend(
    area: &DrawingArea<SVGBackend<'_>, Shift>,
    entries: &[(String, RGBColor, Marker)],
) -> io::Result<()> {
    let (w, _) = area.dim_in_pixel();
    let left = 64;
    let column = (w as i32 - left) / LEGEND_COLUMNS as i32;
    for (i, (label, colour, marker)) in entries.iter().enumerate() {
        let x = left + (i % LEGEND_COLUMNS) as i32 * column;
        let y = 6 + (i / LEGEND_COLUMNS) as i32 * LEGEND_ROW as i32 + LEGEND_ROW as i32 / 2;
        match marker {
            Marker::Line => area.draw(&PathElement::new(
                vec![(x, y), (x + 22, y)],
                colour.stroke_width(3),
            )),
            Marker::Dot => area.draw(&Circle::new((x + 11, y), 6, colour.filled())),
            Marker::Ring => area.draw(&Circle::new((x + 11, y), 6, colour.stroke_width(2))),
            Marker::Square => area.draw(&Rectangle::new(
                [(x + 5, y - 6), (x + 17, y + 6)],
                colour.filled(),
            )),
        }
        .map_err(chart_error)?;
        area.draw(&Text::new(
            label.clone(),
            (x + 30, y),
            TextStyle::from((FONT, LEGEND_SIZE))
                .color(&BLACK)
                .pos(Pos::new(HPos::Left, VPos::Center)),
        ))
        .map_err(chart_error)?;
    }
    Ok(())
}

/// A chart of a report, or the one line that stands in for it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Chart {
    /// The chart's SVG text.
    Svg(String),
    /// Nothing to plot: a full-size chart of empty axes would only make the
    /// reader look for what is not there, so the report prints this line
    /// (a sentence, with its full stop) and no chart file is written.
    Nothing(String),
}

impl Chart {
    /// The SVG text, if there is a chart.
    pub fn svg(&self) -> Option<&str> {
        match self {
            Chart::Svg(svg) => Some(svg),
            Chart::Nothing(_) => None,
        }
    }

    /// The line that stands in for the chart, if there is none.
    pub fn nothing(&self) -> Option<&str> {
        match self {
            Chart::Svg(_) => None,
            Chart::Nothing(line) => Some(line),
        }
    }
}

/// What a scenario's charts say when nothing was to be detected and no
/// detector made a mistake (both charts, one line).
pub const QUIET: &str = "No fault to detect and no mistake in any run: nothing to chart.";

/// Width of a character of a note, px (about half the text size).
const NOTE_CHAR: f64 = 7.5;

/// Writes `note` in the middle of a chart's plot on a white ground, so
/// that neither the gridlines nor the tick labels (all outside the plot)
/// run through it.
pub(crate) fn draw_note(plot: &DrawingArea<SVGBackend<'_>, Shift>, note: &str) -> io::Result<()> {
    let (w, h) = plot.dim_in_pixel();
    let (x, y) = (w as i32 / 2, h as i32 / 2);
    let half = (note.chars().count() as f64 * NOTE_CHAR / 2.0) as i32 + 8;
    plot.draw(&Rectangle::new(
        [(x - half, y - 13), (x + half, y + 13)],
        WHITE.filled(),
    ))
    .map_err(chart_error)?;
    plot.draw(&Text::new(
        note.to_string(),
        (x, y),
        TextStyle::from((FONT, AXIS_NAME_SIZE))
            .color(&RGBColor(90, 90, 90))
            .pos(Pos::new(HPos::Center, VPos::Center)),
    ))
    .map_err(chart_error)
}

/// A plotters error as an I/O error (writing the report fails with it).
pub(crate) fn chart_error(e: impl Display) -> io::Error {
    io::Error::other(format!("drawing a chart: {e}"))
}

/// The kinds of chart, as tagged in the SVG (`data-chart="..."`).
pub const CDF: &str = "cdf";
pub const TRADEOFF: &str = "tradeoff";
pub const TIMELINE: &str = "timeline";

/// Tags the root `<svg>` of plotters' output with `data-chart` and
/// `data-scenario` (for tests and styles) and an accessible title.
pub(crate) fn finish_svg(svg: String, kind: &str, scenario: &str, title: &str) -> String {
    let Some(open_end) = svg.find('>') else {
        return svg;
    };
    let (open, rest) = svg.split_at(open_end);
    let open = open.replacen(
        "<svg ",
        &format!(
            "<svg data-chart=\"{kind}\" data-scenario=\"{}\" role=\"img\" ",
            xml_escape(scenario)
        ),
        1,
    );
    // `rest` starts with the `>` of the opening tag.
    format!(
        "{open}>\n<title>{}</title>{}",
        xml_escape(title),
        &rest[1..]
    )
}

/// An SVG for embedding in HTML: without the XML namespace attribute (implied
/// inside HTML), so the report holds no URL at all.
pub fn inline_svg(svg: &str) -> String {
    svg.replacen(" xmlns=\"http://www.w3.org/2000/svg\"", "", 1)
}

/// Escapes text for XML and HTML content and attribute values.
pub fn xml_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colours_follow_first_appearance_and_repeat_past_the_palette() {
        let p = Palette::new(["b", "a", "b", "c"]);
        assert_eq!(p.colour("b"), PALETTE[0]);
        assert_eq!(p.colour("a"), PALETTE[1]);
        assert_eq!(p.colour("c"), PALETTE[2]);
        assert_eq!(p.colour("unknown"), PALETTE[3]);
        assert_eq!(p.css("b"), "#0072b2");
        let many: Vec<String> = (0..12).map(|i| format!("d{i}")).collect();
        let p = Palette::new(many.iter().map(String::as_str));
        assert_eq!(p.colour("d10"), PALETTE[0]);
    }

    #[test]
    fn distributions_have_colours_no_detector_has() {
        let d = Palette::for_distributions(["ketama", "rendezvous", "ketama"]);
        assert_eq!(d.colour("ketama"), DISTRIBUTION_PALETTE[0]);
        assert_eq!(d.colour("rendezvous"), DISTRIBUTION_PALETTE[1]);
        for c in DISTRIBUTION_PALETTE {
            assert!(!PALETTE.contains(&c), "{c:?} is a detector's colour");
        }
    }

    #[test]
    fn finished_svg_is_tagged_and_escaped() {
        let svg = "<svg width=\"1\" height=\"1\" xmlns=\"http://www.w3.org/2000/svg\">\n<rect/>\n</svg>\n";
        let out = finish_svg(svg.into(), CDF, "a&b", "T <1>");
        assert!(out
            .starts_with("<svg data-chart=\"cdf\" data-scenario=\"a&amp;b\" role=\"img\" width="));
        assert!(out.contains("<title>T &lt;1&gt;</title>\n<rect/>"));
        assert!(!inline_svg(&out).contains("http"));
    }
}
