//! The trade-off curve of a sweep: every point at (its time, its rate) —
//! for a detector sweep (p99 detection time, false Failed per
//! monitored-pair-hour), for a membership sweep (median time to a Dead
//! declaration, false declarations per node-hour) — the Pareto front drawn
//! through the points no other point beats on both, and the front's points
//! labelled: with their values only when every label names the same keys
//! (the keys said once, in the plot's top right corner), nudged apart so
//! that none covers another ([`super::labels`]), and written to the right
//! of their points unless that would take them out of the plot.

use plotters::coord::ranged1d::{Ranged, ValueFormatter};
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::frame::{tradeoff_frame, TradeoffAxes};
use super::labels::{place, Label};
use super::tradeoff::{rate_tick, rate_top};
use super::{chart_error, finish_svg, log_coord, TimeAxis, FONT, TICK_SIZE};

/// The chart kind, as tagged in the SVG.
pub const SWEEP: &str = "sweep";
/// Chart size, px.
pub const SIZE: (u32, u32) = (900, 560);
/// Height of the chart that is one line of text, px.
pub const LINE_HEIGHT: u32 = 40;
/// What the chart says when no point has a p99 detection time.
pub const NO_POINT: &str =
    "No point has a p99 detection time (nothing to detect, or nothing detected): no trade-off to chart.";
/// Points on the front labelled with their parameters (the rest would overlap).
pub const MAX_LABELS: usize = 12;
/// Colours: every point, and the front.
const CLOUD: RGBColor = RGBColor(170, 170, 170);
const FRONT: RGBColor = RGBColor(0, 114, 178);
/// Font size of a point's label, px.
const LABEL_SIZE: f64 = TICK_SIZE - 3.0;
/// A label's anchor from its point's centre, px: beside the front's dot
/// (radius 5), its baseline a little above the point.
const LABEL_DX: i32 = 8;
const LABEL_DY: i32 = -6;
/// Margin of the note naming the labels' keys from the plot's corner, px.
const KEYS_MARGIN: i32 = 8;

/// What the axes of a sweep's chart show, and what it says instead.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SweepAxes {
    /// The time on the x axis.
    pub time: &'static str,
    /// The rate on the y axis.
    pub rate: &'static str,
    /// The note when every point's rate is 0.
    pub all_zero: &'static str,
    /// The line that stands for the chart when no point has a time.
    pub no_point: &'static str,
}

/// A detector sweep's axes.
pub const DETECTOR_AXES: SweepAxes = SweepAxes {
    time: "p99 detection time",
    rate: "false Failed per pair-hour",
    all_zero: "no false Failed at any point: every point is at 0",
    no_point: NO_POINT,
};

/// A membership sweep's axes (one point per point × judge).
pub const MEMBERSHIP_AXES: SweepAxes = SweepAxes {
    time: "median time to Dead",
    rate: "false declarations per node-hour",
    all_zero: "no false declaration at any point: every point is at 0",
    no_point: "No point has a median time to declaration (no crash to declare, or half of them or more never declared): no trade-off to chart.",
};

/// One sweep point on the chart.
#[derive(Clone, Debug, PartialEq)]
pub struct SweepPoint {
    /// What the label shows (its parameter values).
    pub label: String,
    /// Its time, s (the axes' `time`).
    pub time: f64,
    pub rate: f64,
    pub front: bool,
}

/// The SVG of a detector sweep's trade-off: [`sweep_svg_with`] and
/// [`DETECTOR_AXES`].
pub fn sweep_svg(title: &str, points: &[SweepPoint]) -> std::io::Result<String> {
    sweep_svg_with(title, &DETECTOR_AXES, points)
}

/// The SVG of a sweep's trade-off, tagged `data-chart="sweep"`. With no
/// point to plot it is one line of text saying so (`axes.no_point`), not a
/// full-size chart of empty axes (the file is still written: a sweep's
/// folder always holds it).
pub fn sweep_svg_with(
    title: &str,
    axes: &SweepAxes,
    points: &[SweepPoint],
) -> std::io::Result<String> {
    let mut svg = String::new();
    if points.is_empty() {
        {
            let root = SVGBackend::with_string(&mut svg, (SIZE.0, LINE_HEIGHT)).into_drawing_area();
            root.fill(&WHITE).map_err(chart_error)?;
            root.draw(&Text::new(
                axes.no_point,
                (12, LINE_HEIGHT as i32 / 2),
                TextStyle::from((FONT, TICK_SIZE))
                    .color(&RGBColor(90, 90, 90))
                    .pos(Pos::new(HPos::Left, VPos::Center)),
            ))
            .map_err(chart_error)?;
            root.present().map_err(chart_error)?;
        }
        return Ok(finish_svg(svg, SWEEP, title, title));
    }
    {
        let root = SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
        root.fill(&WHITE).map_err(chart_error)?;
        let axis = TimeAxis::covering(points.iter().map(|p| p.time));
        if axis.log {
            draw(&root, log_coord(&axis), title, axes, &axis, points)?;
        } else {
            let x: RangedCoordf64 = (axis.low..axis.high).into();
            draw(&root, x, title, axes, &axis, points)?;
        }
        root.present().map_err(chart_error)?;
    }
    Ok(finish_svg(svg, SWEEP, title, title))
}

fn draw<X>(
    root: &DrawingArea<SVGBackend<'_>, plotters::coord::Shift>,
    x: X,
    title: &str,
    axes: &SweepAxes,
    axis: &TimeAxis,
    points: &[SweepPoint],
) -> std::io::Result<()>
where
    X: Ranged<ValueType = f64> + ValueFormatter<f64>,
{
    let top = rate_top(points.iter().map(|p| p.rate));
    let all_zero = !points.is_empty() && points.iter().all(|p| p.rate == 0.0);
    let tradeoff_axes = TradeoffAxes {
        time: axes.time,
        rate: axes.rate,
        tick: rate_tick,
        all_zero: axes.all_zero,
    };
    let mut chart = tradeoff_frame(root, x, title, axis, &tradeoff_axes, top, all_zero)?;
    let at = |p: &SweepPoint| (axis.clamp(p.time), p.rate);
    chart
        .draw_series(
            points
                .iter()
                .filter(|p| !p.front)
                .map(|p| Circle::new(at(p), 3, CLOUD.filled())),
        )
        .map_err(chart_error)?;
    let mut front: Vec<&SweepPoint> = points.iter().filter(|p| p.front).collect();
    front.sort_by(|a, b| a.time.total_cmp(&b.time));
    chart
        .draw_series(LineSeries::new(
            front.iter().map(|p| at(p)),
            FRONT.stroke_width(2),
        ))
        .map_err(chart_error)?;
    chart
        .draw_series(front.iter().map(|p| Circle::new(at(p), 5, FRONT.filled())))
        .map_err(chart_error)?;
    // Label the front, evenly thinned when it is long.
    let step = front.len().div_ceil(MAX_LABELS).max(1);
    let shown: Vec<&SweepPoint> = front.iter().step_by(step).copied().collect();
    let (texts, keys) = short_labels(shown.iter().map(|p| p.label.as_str()));
    let plot_x = chart.plotting_area().get_pixel_range().0;
    let names: Vec<Label> = shown
        .iter()
        .zip(&texts)
        .map(|(p, text)| {
            let (x, y) = chart.backend_coord(&at(p));
            let right = Label {
                x: f64::from(x + LABEL_DX),
                y: f64::from(y + LABEL_DY),
                chars: text.chars().count(),
                size: LABEL_SIZE,
                ends_at_x: false,
            };
            // To the right of its point, unless it would leave the plot.
            if right.span().1 <= f64::from(plot_x.end) {
                right
            } else {
                Label {
                    x: f64::from(x - LABEL_DX),
                    ends_at_x: true,
                    ..right
                }
            }
        })
        .collect();
    let style = TextStyle::from((FONT, LABEL_SIZE)).color(&RGBColor(40, 40, 40));
    for ((name, text), y) in names.iter().zip(&texts).zip(place(&names)) {
        let h = if name.ends_at_x {
            HPos::Right
        } else {
            HPos::Left
        };
        root.draw(&Text::new(
            text.clone(),
            (name.x as i32, y as i32),
            style.pos(Pos::new(h, VPos::Bottom)),
        ))
        .map_err(chart_error)?;
    }
    if let Some(keys) = keys {
        let plot_y = chart.plotting_area().get_pixel_range().1;
        root.draw(&Text::new(
            format!("labels: {keys}"),
            (plot_x.end - KEYS_MARGIN, plot_y.start + KEYS_MARGIN),
            TextStyle::from((FONT, LABEL_SIZE))
                .color(&RGBColor(90, 90, 90))
                .pos(Pos::new(HPos::Right, VPos::Top)),
        ))
        .map_err(chart_error)?;
    }
    Ok(())
}

/// The labels as written on the chart, and the keys they leave out: when
/// every label names the same keys in the same places (`key=value` parts
/// joined by `, `; a part without `=`, a judge's name, is kept as it is),
/// each label keeps its values (`2s, classic`) and the keys are returned
/// once (`probe_timeout`); otherwise the labels are written whole.
fn short_labels<'a>(labels: impl Iterator<Item = &'a str>) -> (Vec<String>, Option<String>) {
    let labels: Vec<&str> = labels.collect();
    let keys_of = |label: &'a str| -> Vec<Option<&'a str>> {
        label
            .split(", ")
            .map(|part| part.split_once('=').map(|(k, _)| k))
            .collect()
    };
    let Some(first) = labels.first() else {
        return (Vec::new(), None);
    };
    let keys = keys_of(first);
    let same = labels.iter().all(|l| keys_of(l) == keys);
    let named: Vec<&str> = keys.iter().flatten().copied().collect();
    if !same || named.is_empty() {
        return (labels.iter().map(|l| l.to_string()).collect(), None);
    }
    let values = labels
        .iter()
        .map(|l| {
            l.split(", ")
                .map(|part| part.split_once('=').map_or(part, |(_, v)| v))
                .collect::<Vec<_>>()
                .join(", ")
        })
        .collect();
    (values, Some(named.join(", ")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_chart_is_tagged_and_labels_the_front() {
        let points = vec![
            SweepPoint {
                label: "threshold=4".into(),
                time: 2.0,
                rate: 3.0,
                front: true,
            },
            SweepPoint {
                label: "threshold=8".into(),
                time: 4.0,
                rate: 0.5,
                front: true,
            },
            SweepPoint {
                label: "threshold=9".into(),
                time: 5.0,
                rate: 0.6,
                front: false,
            },
        ];
        let svg = sweep_svg("sweep of phi", &points).unwrap();
        assert!(svg.contains("data-chart=\"sweep\""));
        // The front's values, the key once; not the point off the front.
        let written: Vec<String> = texts(&svg).into_iter().map(|t| t.text).collect();
        assert!(written.contains(&"4".into()) && written.contains(&"8".into()));
        assert!(!written.contains(&"9".into()) && !svg.contains("threshold=8"));
        assert!(written.contains(&"labels: threshold".into()), "{written:?}");
        assert_eq!(svg, sweep_svg("sweep of phi", &points).unwrap());
    }

    #[test]
    fn a_membership_sweep_names_its_own_axes() {
        let points = vec![SweepPoint {
            label: "probe_timeout=2s, classic".into(),
            time: 24.0,
            rate: 0.0,
            front: true,
        }];
        let svg = sweep_svg_with("sweep of membership", &MEMBERSHIP_AXES, &points).unwrap();
        assert!(svg.contains("median time to Dead"), "{svg}");
        assert!(svg.contains("false declarations per node-hour"));
        assert!(svg.contains("no false declaration at any point"));
        assert!(!svg.contains("p99 detection time"));
        let none = sweep_svg_with("sweep of membership", &MEMBERSHIP_AXES, &[]).unwrap();
        assert!(none.contains("No point has a median time to declaration"));
    }

    #[test]
    fn a_sweep_with_no_point_is_one_line() {
        let svg = sweep_svg("sweep of phi", &[]).unwrap();
        assert!(svg.contains("data-chart=\"sweep\""));
        assert!(svg.contains(&format!("height=\"{LINE_HEIGHT}\"")), "{svg}");
        assert!(svg.contains(NO_POINT));
    }

    #[test]
    fn labels_keep_their_values_when_they_name_the_same_keys() {
        let (texts, keys) = short_labels(["a=1, b=2s, classic", "a=3, b=4s, phi-5s"].into_iter());
        assert_eq!(texts, ["1, 2s, classic", "3, 4s, phi-5s"]);
        assert_eq!(keys.as_deref(), Some("a, b"));
        // Other keys, or a key in another place: whole labels.
        let (texts, keys) = short_labels(["a=1", "b=1"].into_iter());
        assert_eq!((texts, keys), (vec!["a=1".into(), "b=1".into()], None));
        let (_, keys) = short_labels(["a=1, x", "x, a=1"].into_iter());
        assert_eq!(keys, None);
        // No key at all (judges only): as they are.
        let (texts, keys) = short_labels(["classic", "phi-5s"].into_iter());
        assert_eq!(
            (texts, keys),
            (vec!["classic".into(), "phi-5s".into()], None)
        );
    }

    #[test]
    fn close_points_labels_do_not_cover_each_other() {
        // acceptable_heartbeat_pause 2500ms, 3s and 3500ms of the README's
        // sweep: three points a few pixels apart on an axis to 9 s.
        let point = |label: &str, time: f64, rate: f64| SweepPoint {
            label: label.into(),
            time,
            rate,
            front: true,
        };
        let points = vec![
            point("pause=2500ms", 4.19, 1.74),
            point("pause=3s", 4.70, 1.61),
            point("pause=3500ms", 5.20, 1.54),
            point("pause=0s", 1.64, 6.30),
            point("pause=6s", 9.0, 0.0),
        ];
        let svg = sweep_svg("sweep of phi", &points).unwrap();
        let labels: Vec<SvgText> = texts(&svg)
            .into_iter()
            .filter(|t| ["2500ms", "3s", "3500ms", "0s", "6s"].contains(&t.text.as_str()))
            .collect();
        assert_eq!(labels.len(), 5, "{svg}");
        for (i, a) in labels.iter().enumerate() {
            for b in &labels[i + 1..] {
                let apart_x = a.right() <= b.left() || b.right() <= a.left();
                let apart_y = (a.y - b.y).abs() >= LABEL_SIZE;
                assert!(apart_x || apart_y, "{a:?} covers {b:?}");
            }
        }
    }

    /// A `<text>` of the SVG: where plotters put it, and what it says.
    #[derive(Debug)]
    struct SvgText {
        x: f64,
        y: f64,
        ends_at_x: bool,
        text: String,
    }

    impl SvgText {
        /// Its width as `labels` estimates it (the same share of the font
        /// size per character).
        fn width(&self) -> f64 {
            self.text.chars().count() as f64 * LABEL_SIZE * 0.6
        }
        fn left(&self) -> f64 {
            if self.ends_at_x {
                self.x - self.width()
            } else {
                self.x
            }
        }
        fn right(&self) -> f64 {
            self.left() + self.width()
        }
    }

    /// Every `<text>` of an SVG written by plotters (its text on a line of
    /// its own).
    fn texts(svg: &str) -> Vec<SvgText> {
        let attr = |tag: &str, name: &str| -> Option<String> {
            let from = tag.find(&format!(" {name}=\""))? + name.len() + 3;
            let to = from + tag[from..].find('"')?;
            Some(tag[from..to].to_string())
        };
        svg.split("<text")
            .skip(1)
            .map(|rest| {
                let (tag, body) = rest.split_once('>').unwrap();
                let text = body.split("</text>").next().unwrap().trim().to_string();
                SvgText {
                    x: attr(tag, "x").unwrap().parse().unwrap(),
                    y: attr(tag, "y").unwrap().parse().unwrap(),
                    ends_at_x: attr(tag, "text-anchor").as_deref() == Some("end"),
                    text,
                }
            })
            .collect()
    }
}
