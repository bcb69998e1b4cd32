//! Per membership scenario: what a judge costs the cluster at a glance.
//! One point per judge at (median time from a crash to its Dead
//! declaration, false declarations per node-hour up), labelled with the
//! judge's name, with the 95% interval of that rate over seeds as a
//! vertical whisker. Down and to the left is better: a cluster that
//! declares crashed silos fast and live ones never. A judge that declared
//! no crash has no median and is named in the legend as not plotted.
//!
//! A scenario with no crash to declare gets the false declaration rates
//! alone as bars (there is no latency to trade); one with nothing to plot
//! at all (no crash and no false declaration, or no crash ever declared)
//! gets a line of text instead of a chart, as the detector charts do; so
//! does one with no false declaration ([`ALL_ZERO`]).
//!
//! The median is the nearest-rank p50 over every declared crash of every
//! seed; the rate pools the seeds (false declarations / node-hours up).

use std::io;

use plotters::coord::ranged1d::{Ranged, ValueFormatter};
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::metrics::{ClusterMetrics, JudgeSummary};
use crate::charts::frame::{tradeoff_frame, TradeoffAxes};
use crate::charts::labels::{place, Label};
use crate::charts::tradeoff::{fmt_rate, rate_bars, rate_tick, rate_top, RateBar};
use crate::charts::{
    chart_error, draw_legend, finish_svg, fmt_seconds, legend_height, log_coord, Chart, Marker,
    Palette, TimeAxis, FONT, LEGEND_SIZE, SCENARIO_CHART_SIZE,
};

/// The chart's kind, as tagged in the SVG (`data-chart="cluster"`).
pub const CLUSTER: &str = "cluster";
/// The name of the rate axis.
const RATE_NAME: &str = "false declarations per node-hour";
/// The axes of a membership scenario's chart.
const AXES: TradeoffAxes = TradeoffAxes {
    time: "median time from crash to Dead declaration",
    rate: RATE_NAME,
    tick: rate_tick,
    all_zero: "no false declaration in any run: every point is at 0",
};
const POINT_RADIUS: i32 = 6;
/// Height of a point's name, px: [`LEGEND_SIZE`] as the SVG backend
/// writes it (size / 1.24).
const NAME_PX: f64 = LEGEND_SIZE / 1.24;
const CAP: u32 = 10;

/// What the chart says with no crash and no false declaration.
pub const QUIET: &str =
    "No crash to declare and no false declaration in any run: nothing to chart.";

/// What the chart says when no judge declared a live silo Dead: every
/// point at 0 would only repeat the table's times to declaration, on a
/// chart that looks empty.
pub const ALL_ZERO: &str = "No false declaration in any run: every judge is at 0 on the chart, so it is not drawn (the times to declaration are in the table).";

/// What the chart says when crashes were never declared.
pub fn never_declared(crashes: usize) -> String {
    format!("No judge declared any of the {crashes} crashes: no time to declaration to chart.")
}

struct Point {
    /// Beside the point: the judge's name (the legend gives its label,
    /// with the Orleans version, which would crowd the points).
    judge: String,
    label: String,
    /// Median time to declaration, s.
    median: f64,
    rate: f64,
    ci: Option<(f64, f64)>,
}

fn rate_of(s: &JudgeSummary) -> f64 {
    s.false_rate().unwrap_or(0.0)
}

/// The chart of one membership scenario as SVG text, tagged
/// `data-chart="cluster"`; or the line that stands in for it.
pub fn cluster_chart_svg(m: &ClusterMetrics, palette: &Palette) -> io::Result<Chart> {
    let crashes: usize = m.summary.iter().map(|s| s.crashes).sum();
    if crashes == 0 && m.summary.iter().all(|s| s.false_declarations == 0) {
        return Ok(Chart::Nothing(QUIET.to_string()));
    }
    if crashes > 0 && m.summary.iter().all(|s| s.declare.is_none()) {
        return Ok(Chart::Nothing(never_declared(crashes)));
    }
    if crashes > 0
        && m.summary
            .iter()
            .all(|s| s.false_declarations == 0 && s.false_rate_ci.is_none_or(|c| c.high == 0.0))
    {
        return Ok(Chart::Nothing(ALL_ZERO.to_string()));
    }
    let points: Vec<Point> = m
        .summary
        .iter()
        .filter_map(|s| {
            Some(Point {
                judge: s.judge.clone(),
                label: s.label.clone(),
                median: s.declare?.p50.as_secs_f64(),
                rate: rate_of(s),
                ci: s.false_rate_ci.map(|c| (c.low, c.high)),
            })
        })
        .collect();
    let mut legend: Vec<(String, RGBColor, Marker)> = Vec::new();
    if crashes > 0 {
        legend.extend(points.iter().map(|p| {
            (
                format!(
                    "{}: median {}, {}/node-h",
                    p.label,
                    fmt_seconds(p.median),
                    fmt_rate(p.rate)
                ),
                palette.colour(&p.judge),
                Marker::Dot,
            )
        }));
        legend.extend(m.summary.iter().filter(|s| s.declare.is_none()).map(|s| {
            (
                format!("{}: declared no crash, not plotted", s.label),
                palette.colour(&s.judge),
                Marker::Ring,
            )
        }));
    }
    let title = if crashes == 0 {
        format!("{}: false declarations (no crash to declare)", m.scenario)
    } else {
        format!(
            "{}: false declarations against median time to declaration",
            m.scenario
        )
    };
    let mut svg = String::new();
    {
        let (w, h) = SCENARIO_CHART_SIZE;
        let root = SVGBackend::with_string(&mut svg, (w, h + legend_height(legend.len())))
            .into_drawing_area();
        root.fill(&WHITE).map_err(chart_error)?;
        let (plot, legend_area) = root.split_vertically(h);
        if crashes == 0 {
            bars(&plot, &title, &m.summary, palette)?;
        } else {
            draw_legend(&legend_area, &legend)?;
            let axis = TimeAxis::covering(points.iter().map(|p| p.median));
            if axis.log {
                scatter(&plot, log_coord(&axis), &title, &axis, &points, palette)?;
            } else {
                let x: RangedCoordf64 = (axis.low..axis.high).into();
                scatter(&plot, x, &title, &axis, &points, palette)?;
            }
        }
        root.present().map_err(chart_error)?;
    }
    Ok(Chart::Svg(finish_svg(svg, CLUSTER, &m.scenario, &title)))
}

fn scatter<X>(
    root: &DrawingArea<SVGBackend<'_>, plotters::coord::Shift>,
    x: X,
    title: &str,
    axis: &TimeAxis,
    points: &[Point],
    palette: &Palette,
) -> io::Result<()>
where
    X: Ranged<ValueType = f64> + ValueFormatter<f64>,
{
    let top = rate_top(
        points
            .iter()
            .flat_map(|p| [p.rate, p.ci.map_or(0.0, |c| c.1)]),
    );
    let all_zero = points.iter().all(|p| p.rate == 0.0);
    let mut chart = tradeoff_frame(root, x, title, axis, &AXES, top, all_zero)?;
    for p in points {
        let colour = palette.colour(&p.judge);
        let x = axis.clamp(p.median);
        if let Some((low, high)) = p.ci {
            chart
                .draw_series(std::iter::once(ErrorBar::new_vertical(
                    x,
                    low,
                    p.rate,
                    high,
                    colour.stroke_width(2),
                    CAP,
                )))
                .map_err(chart_error)?;
        }
        chart
            .draw_series(std::iter::once(Circle::new(
                (x, p.rate),
                POINT_RADIUS,
                colour.filled(),
            )))
            .map_err(chart_error)?;
    }
    // Each name beside its point, on the side with room for it, nudged up
    // where names of close points would overlap.
    let names: Vec<Label> = points
        .iter()
        .map(|p| {
            let x = axis.clamp(p.median);
            let (px, py) = chart.backend_coord(&(x, p.rate));
            let left = share_of(axis, x) > 0.75;
            let dx = if left {
                -(POINT_RADIUS + 3)
            } else {
                POINT_RADIUS + 3
            };
            Label {
                x: f64::from(px + dx),
                y: f64::from(py - POINT_RADIUS),
                chars: p.judge.chars().count(),
                size: NAME_PX,
                ends_at_x: left,
            }
        })
        .collect();
    for ((p, name), y) in points.iter().zip(&names).zip(place(&names)) {
        let colour = palette.colour(&p.judge);
        let side = if name.ends_at_x {
            HPos::Right
        } else {
            HPos::Left
        };
        let label = TextStyle::from((FONT, LEGEND_SIZE))
            .color(&colour)
            .pos(Pos::new(side, VPos::Bottom));
        let (px, py) = chart.backend_coord(&(axis.clamp(p.median), p.rate));
        let offset = (name.x as i32 - px, y as i32 - py);
        chart
            .draw_series(std::iter::once(
                EmptyElement::at((axis.clamp(p.median), p.rate))
                    + Text::new(p.judge.clone(), offset, label),
            ))
            .map_err(chart_error)?;
    }
    Ok(())
}

/// Where `x` is along `axis`, from 0 (its start) to 1 (its end).
fn share_of(axis: &TimeAxis, x: f64) -> f64 {
    if axis.log {
        (x / axis.low).ln() / (axis.high / axis.low).ln()
    } else {
        (x - axis.low) / (axis.high - axis.low)
    }
}

fn bars(
    root: &DrawingArea<SVGBackend<'_>, plotters::coord::Shift>,
    title: &str,
    summary: &[JudgeSummary],
    palette: &Palette,
) -> io::Result<()> {
    let bars: Vec<RateBar> = summary
        .iter()
        .map(|s| RateBar {
            name: s.label.clone(),
            rate: rate_of(s),
            ci: s.false_rate_ci.map(|c| (c.low, c.high)),
            colour: palette.colour(&s.judge),
        })
        .collect();
    rate_bars(root, title, &bars, RATE_NAME, "node-h")
}

#[cfg(test)]
mod tests {
    use super::super::fixture::synthetic;
    use super::super::metrics::cluster_metrics;
    use super::*;

    fn metrics(
        edit: impl Fn(&mut fdlab_sim::membership::outcome::ClusterOutcome),
    ) -> ClusterMetrics {
        let runs: Vec<_> = ["classic", "phi"]
            .iter()
            .flat_map(|j| {
                [1, 2].map(|seed| {
                    let mut o = synthetic(20, seed, j, 0).0;
                    if *j == "phi" {
                        // phi declares 5 s sooner, and never falsely.
                        o.crashes[0].declared =
                            Some(o.crashes[0].at + super::super::fixture::secs(15.0));
                        o.declarations.retain(|d| !d.false_positive);
                    }
                    edit(&mut o);
                    o
                })
            })
            .collect();
        cluster_metrics("mixed", &runs)
    }

    #[test]
    fn one_labelled_point_per_judge() {
        let m = metrics(|_| {});
        let palette = Palette::new(["classic", "phi"]);
        let chart = cluster_chart_svg(&m, &palette).unwrap();
        let svg = chart.svg().unwrap();
        assert!(svg.starts_with("<svg data-chart=\"cluster\" data-scenario=\"mixed\""));
        assert!(svg.contains("false declarations per node-hour"));
        assert!(svg.contains("median time from crash to Dead declaration (s)"));
        assert!(svg.contains("classic: median 20 s, "), "{svg}");
        assert!(svg.contains("phi: median 15 s, 0/node-h"), "{svg}");
        // Each point carries its judge's name beside it, in its colour.
        assert!(svg.contains(">\nclassic\n</text>") && svg.contains(">\nphi\n</text>"));
        assert_eq!(svg, cluster_chart_svg(&m, &palette).unwrap().svg().unwrap());
    }

    #[test]
    fn names_of_points_at_the_same_place_do_not_overlap() {
        // Both judges declare at 20 s with the same false declarations.
        let m = metrics(|o| {
            let at = o.crashes[0].at;
            o.crashes[0].declared = Some(at + super::super::fixture::secs(20.0));
        });
        let mut m = m;
        let same = m.summary[0].clone();
        m.summary[1].declare = same.declare;
        m.summary[1].false_declarations = same.false_declarations;
        m.summary[1].false_rate_ci = same.false_rate_ci;
        m.summary[1].node_time = same.node_time;
        let svg = cluster_chart_svg(&m, &Palette::new(["classic", "phi"])).unwrap();
        let svg = svg.svg().unwrap();
        let y_of = |name: &str| -> f64 {
            let end = svg.find(&format!(">\n{name}\n</text>")).unwrap();
            let open = svg[..end].rfind("<text").unwrap();
            let y = svg[open..end].split("y=\"").nth(1).unwrap();
            y.split('"').next().unwrap().parse().unwrap()
        };
        assert!((y_of("classic") - y_of("phi")).abs() >= NAME_PX, "{svg}");
    }

    #[test]
    fn nothing_to_plot_is_a_line_and_no_crash_gives_bars() {
        let palette = Palette::default();
        let quiet = metrics(|o| {
            o.crashes.clear();
            o.declarations.clear();
        });
        assert_eq!(
            cluster_chart_svg(&quiet, &palette).unwrap(),
            Chart::Nothing(QUIET.into())
        );
        let undeclared = metrics(|o| {
            o.crashes[0].declared = None;
            o.declarations.retain(|d| d.false_positive);
        });
        assert_eq!(
            cluster_chart_svg(&undeclared, &palette).unwrap().nothing(),
            Some("No judge declared any of the 4 crashes: no time to declaration to chart.")
        );
        // Every crash declared, no live silo declared: nothing but zeros.
        let truthful = metrics(|o| o.declarations.retain(|d| !d.false_positive));
        assert_eq!(
            cluster_chart_svg(&truthful, &palette).unwrap(),
            Chart::Nothing(ALL_ZERO.into())
        );
        let no_crash = metrics(|o| o.crashes.clear());
        let svg = cluster_chart_svg(&no_crash, &palette).unwrap();
        let svg = svg.svg().unwrap();
        assert!(svg.contains("(no crash to declare)"));
        assert!(svg.contains("/node-h\n</text>"));
    }
}
