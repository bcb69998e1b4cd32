//! SVG charts of a report, drawn with plotters' SVG backend into memory.
//!
//! One concept per module: [`cdf`] (how fast each detector detects),
//! [`tradeoff`] (false Failed rate against p99 detection time) and [`timeline`]
//! (one pair of a replay over time). This module holds what they share: the
//! detector colours, the sizes of text, and the finishing of the SVG text.
//!
//! Charts are deterministic bytes: plotters writes no timestamp or random id,
//! floats are formatted by Rust (no locale), and every series is drawn in the
//! scenario's detector order. Text is written as SVG `<text>` elements in the
//! browser's sans-serif font, so no font file or system library is needed;
//! plotters only estimates text widths for its layout.

pub mod cdf;
pub mod sweep;
pub mod timeline;
pub mod tradeoff;

use std::fmt::Display;
use std::io;

use plotters::coord::combinators::{BindKeyPoints, WithKeyPoints};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

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

/// One colour per detector name, the same in every chart of a report.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Palette {
    names: Vec<String>,
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

    /// Gives `name` the next colour, unless it has one.
    pub fn add(&mut self, name: &str) {
        if !self.names.iter().any(|n| n == name) {
            self.names.push(name.to_string());
        }
    }

    /// The colour of `name`; a name never added gets the colour after the
    /// last assigned one (charts then still draw).
    pub fn colour(&self, name: &str) -> RGBColor {
        let index = self
            .names
            .iter()
            .position(|n| n == name)
            .unwrap_or(self.names.len());
        PALETTE[index % PALETTE.len()]
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

/// A time in seconds for an axis tick or a legend: few digits, unit included
/// where it reads better (`250 ms`, `1.5 s`, `2 min`).
pub fn fmt_seconds(s: f64) -> String {
    if !s.is_finite() {
        return "-".into();
    }
    let trim = |v: f64, decimals: usize| {
        let text = format!("{v:.decimals$}");
        if text.contains('.') {
            text.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            text
        }
    };
    let a = s.abs();
    if a == 0.0 {
        "0".into()
    } else if a < 1e-3 {
        format!("{} µs", trim(s * 1e6, 1))
    } else if a < 1.0 {
        format!("{} ms", trim(s * 1e3, 1))
    } else if a < 600.0 {
        format!("{} s", trim(s, 2))
    } else {
        format!("{} min", trim(s / 60.0, 1))
    }
}

/// A time axis: linear from zero, or logarithmic where the values span more
/// than [`LOG_SPAN`] (one slow detector would otherwise squash the others
/// into the first pixels).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TimeAxis {
    pub low: f64,
    pub high: f64,
    pub log: bool,
}

/// Ratio of largest to smallest positive value above which a time axis is
/// logarithmic.
pub const LOG_SPAN: f64 = 8.0;

/// Ticks of a log axis over `[low, high]`: 1, 2, 5 × 10^k, or powers of ten
/// alone when that would be more than [`MAX_LOG_TICKS`]. (plotters' own
/// log ticks start at the first power of ten and crowd near the next one.)
pub fn log_ticks(low: f64, high: f64) -> Vec<f64> {
    if !(low > 0.0 && high > low && high.is_finite()) {
        return Vec::new();
    }
    let ticks = |mantissas: &[f64]| -> Vec<f64> {
        let (first, last) = (low.log10().floor() as i32, high.log10().ceil() as i32);
        let mut out = Vec::new();
        for k in first..=last {
            for m in mantissas {
                // `m / 10^-k` for negative k keeps 0.5, 0.2 exact.
                let v = if k < 0 {
                    m / 10f64.powi(-k)
                } else {
                    m * 10f64.powi(k)
                };
                if v >= low && v <= high {
                    out.push(v);
                }
            }
        }
        out
    };
    let fine = ticks(&[1.0, 2.0, 5.0]);
    if fine.len() <= MAX_LOG_TICKS {
        fine
    } else {
        ticks(&[1.0])
    }
}

/// Most ticks on a log axis.
pub const MAX_LOG_TICKS: usize = 10;

/// A log coordinate over `axis` with [`log_ticks`].
pub(crate) fn log_coord(axis: &TimeAxis) -> WithKeyPoints<LogCoord<f64>> {
    let coord: LogCoord<f64> = (axis.low..axis.high).log_scale().into();
    coord.with_key_points(log_ticks(axis.low, axis.high))
}

impl TimeAxis {
    /// An axis covering `values` (seconds; non-finite ones ignored).
    pub fn covering(values: impl IntoIterator<Item = f64>) -> TimeAxis {
        let mut min_positive = f64::INFINITY;
        let mut max = 0.0f64;
        for v in values.into_iter().filter(|v| v.is_finite()) {
            max = max.max(v);
            if v > 0.0 {
                min_positive = min_positive.min(v);
            }
        }
        if max <= 0.0 || !min_positive.is_finite() {
            return TimeAxis {
                low: 0.0,
                high: 1.0,
                log: false,
            };
        }
        if max / min_positive > LOG_SPAN {
            TimeAxis {
                low: min_positive / 1.5,
                high: max * 1.5,
                log: true,
            }
        } else {
            TimeAxis {
                low: 0.0,
                high: max * 1.08,
                log: false,
            }
        }
    }

    /// `v` moved inside the axis (a zero on a log axis goes to its low end).
    pub fn clamp(&self, v: f64) -> f64 {
        v.clamp(self.low, self.high)
    }

    /// The axis name with its scale: `"… (s)"` or `"… (s, log scale)"`.
    pub fn name(&self, what: &str) -> String {
        if self.log {
            format!("{what} (s, log scale)")
        } else {
            format!("{what} (s)")
        }
    }
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
    fn time_axis_goes_log_only_for_wide_spans() {
        let a = TimeAxis::covering([0.5, 1.0, 3.9]);
        assert!(!a.log);
        assert_eq!(a.low, 0.0);
        let a = TimeAxis::covering([0.0, 0.05, 3.0]);
        assert!(a.log);
        assert!(a.low < 0.05 && a.high > 3.0);
        assert_eq!(a.clamp(0.0), a.low);
        let a = TimeAxis::covering([0.0, f64::NAN]);
        assert_eq!((a.low, a.high, a.log), (0.0, 1.0, false));
        assert_eq!(a.name("T_D"), "T_D (s)");
    }

    #[test]
    fn log_ticks_are_round_and_few() {
        assert_eq!(log_ticks(0.38, 15.0), vec![0.5, 1.0, 2.0, 5.0, 10.0]);
        assert_eq!(log_ticks(0.004, 0.03), vec![0.005, 0.01, 0.02]);
        assert_eq!(
            log_ticks(1e-4, 1e3),
            vec![1e-4, 1e-3, 1e-2, 1e-1, 1.0, 10.0, 100.0, 1000.0]
        );
        assert!(log_ticks(0.0, 1.0).is_empty());
    }

    #[test]
    fn seconds_read_well() {
        assert_eq!(fmt_seconds(0.0), "0");
        assert_eq!(fmt_seconds(0.25), "250 ms");
        assert_eq!(fmt_seconds(0.0005), "500 µs");
        assert_eq!(fmt_seconds(1.5), "1.5 s");
        assert_eq!(fmt_seconds(3.0), "3 s");
        assert_eq!(fmt_seconds(150.0), "150 s");
        assert_eq!(fmt_seconds(900.0), "15 min");
        assert_eq!(fmt_seconds(f64::INFINITY), "-");
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
