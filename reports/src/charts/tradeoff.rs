//! Per scenario: the latency / accuracy trade-off at a glance. One point per
//! detector at (p99 detection time, false Failed per monitored-pair-hour),
//! with the 95% interval of that rate as a vertical whisker. Down and to the
//! left is better; a detector that detected nothing has no p99 and is named in
//! the legend as not plotted.
//!
//! The rate plotted is that of false Failed mistakes, not of all mistakes: a
//! Failed verdict is what hosts act on (failover, eviction), while a
//! Suspect-only flicker costs little, and a data-stream detector can flicker
//! thousands of times per pair-hour without one false Failed. Plotting the sum
//! would put the fastest detector far up the chart for suspicions nobody acts
//! on, and plotting both on one linear axis would flatten every false Failed
//! rate to zero; the suspicions are in the tables beside the chart.
//!
//! A scenario with nothing to detect gets, in the same place, the false
//! Failed rates alone as bars (with their intervals): there is no latency to
//! trade.

use plotters::coord::ranged1d::{Ranged, SegmentValue, ValueFormatter};
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::frame::{tradeoff_frame, TradeoffAxes};
use super::{
    chart_error, draw_legend, finish_svg, fmt_seconds, legend_height, log_coord, Chart, Marker,
    Palette, TimeAxis, AXIS_NAME_SIZE, FONT, LEGEND_SIZE, QUIET, SCENARIO_CHART_SIZE, TICK_SIZE,
    TITLE_SIZE, TRADEOFF,
};
use crate::metrics::{DetectorSummary, ScenarioMetrics};

/// Radius of a detector's point, px.
const POINT_RADIUS: i32 = 6;
/// Half width of a whisker's caps, px.
const CAP: i32 = 5;
/// Gap between bars, px on each side.
const BAR_GAP: u32 = 14;

/// A detector's place on the chart.
struct Point {
    name: String,
    /// p99 detection time, s.
    p99: f64,
    rate: f64,
    ci: Option<(f64, f64)>,
}

/// The figure plotted: false Failed per pair-hour.
fn rate_of(s: &DetectorSummary) -> f64 {
    s.false_failed_rate().unwrap_or(0.0)
}

/// The name of the rate axis.
const RATE_NAME: &str = "false Failed per pair-hour";

/// The axes of a scenario's trade-off chart.
const AXES: TradeoffAxes = TradeoffAxes {
    time: "p99 detection time",
    rate: RATE_NAME,
    tick: rate_tick,
    all_zero: "no false Failed in any run: every point is at 0",
};

/// A rate axis tick: as few digits as its value needs, nothing below zero.
pub(crate) fn rate_tick(v: f64) -> String {
    if v < 0.0 {
        return String::new();
    }
    let text = format!("{v:.3}");
    text.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// A mistake rate for a legend or a bar: 3 significant digits.
pub fn fmt_rate(v: f64) -> String {
    if v == 0.0 {
        "0".into()
    } else if v >= 100.0 {
        format!("{v:.0}")
    } else if v >= 10.0 {
        format!("{v:.1}")
    } else if v >= 1.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.3}")
    }
}

/// What the trade-off chart says when no detector detected anything.
pub const NO_P99: &str = "No detector detected a fault: no p99 detection time to chart.";

/// What the trade-off chart says when every detector detected and none
/// made a false Failed: a row of points along 0 would only repeat the p99
/// column of the table, on a chart that looks empty.
pub const ALL_ZERO: &str = "No false Failed in any run: every detector is at 0 on the trade-off chart, so it is not drawn (the p99 detection times are in the table).";

/// The trade-off chart of one scenario as SVG text, tagged
/// `data-chart="tradeoff"`; or, with no point to plot (nothing detected),
/// only bars of zero (nothing to detect, no mistake) or only points at 0
/// (no false Failed, whose interval is 0 too: [`ALL_ZERO`]), the line that
/// says so.
pub fn tradeoff_svg(m: &ScenarioMetrics, palette: &Palette) -> std::io::Result<Chart> {
    let windows: usize = m.summary.iter().map(|s| s.detect_windows).sum();
    if windows == 0 && m.summary.iter().all(|s| rate_of(s) == 0.0) {
        return Ok(Chart::Nothing(QUIET.to_string()));
    }
    if windows > 0 && m.summary.iter().all(|s| s.failed.is_none()) {
        return Ok(Chart::Nothing(NO_P99.to_string()));
    }
    let zero = |s: &DetectorSummary| {
        rate_of(s) == 0.0 && s.false_failed_rate_ci.is_none_or(|c| c.high == 0.0)
    };
    if windows > 0 && m.summary.iter().all(zero) {
        return Ok(Chart::Nothing(ALL_ZERO.to_string()));
    }
    let mut svg = String::new();
    let title;
    {
        let (w, h) = SCENARIO_CHART_SIZE;
        let entries = if windows == 0 { 0 } else { m.summary.len() };
        let root =
            SVGBackend::with_string(&mut svg, (w, h + legend_height(entries))).into_drawing_area();
        root.fill(&WHITE).map_err(chart_error)?;
        let (plot, legend_area) = root.split_vertically(h);
        let root = plot;
        if windows == 0 {
            title = format!("{}: false Failed (nothing to detect)", m.scenario);
            bars(&root, &title, m, palette)?;
        } else {
            title = format!("{}: false Failed against p99 detection time", m.scenario);
            let points: Vec<Point> = m
                .summary
                .iter()
                .filter_map(|s| {
                    Some(Point {
                        name: s.detector.clone(),
                        p99: s.failed?.p99.as_secs_f64(),
                        rate: rate_of(s),
                        ci: s.false_failed_rate_ci.map(|c| (c.low, c.high)),
                    })
                })
                .collect();
            let missing: Vec<&str> = m
                .summary
                .iter()
                .filter(|s| s.failed.is_none())
                .map(|s| s.detector.as_str())
                .collect();
            let mut legend: Vec<(String, RGBColor, Marker)> = points
                .iter()
                .map(|p| {
                    let label = format!(
                        "{}: p99 {}, {}/pair-h",
                        p.name,
                        fmt_seconds(p.p99),
                        fmt_rate(p.rate)
                    );
                    (label, palette.colour(&p.name), Marker::Dot)
                })
                .collect();
            legend.extend(missing.iter().map(|name| {
                (
                    format!("{name}: no detection, not plotted"),
                    palette.colour(name),
                    Marker::Ring,
                )
            }));
            draw_legend(&legend_area, &legend)?;
            let axis = TimeAxis::covering(points.iter().map(|p| p.p99));
            if axis.log {
                let x = log_coord(&axis);
                scatter(&root, x, &title, &axis, &points, palette)?;
            } else {
                let x: RangedCoordf64 = (axis.low..axis.high).into();
                scatter(&root, x, &title, &axis, &points, palette)?;
            }
        }
        root.present().map_err(chart_error)?;
    }
    Ok(Chart::Svg(finish_svg(svg, TRADEOFF, &m.scenario, &title)))
}

/// Top of the rate axis: above every point and whisker, never zero.
pub(crate) fn rate_top(values: impl IntoIterator<Item = f64>) -> f64 {
    let max = values
        .into_iter()
        .filter(|v| v.is_finite())
        .fold(0.0f64, f64::max);
    if max > 0.0 {
        max * 1.15
    } else {
        1.0
    }
}

fn scatter<X>(
    root: &DrawingArea<SVGBackend<'_>, plotters::coord::Shift>,
    x: X,
    title: &str,
    axis: &TimeAxis,
    points: &[Point],
    palette: &Palette,
) -> std::io::Result<()>
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
        let colour = palette.colour(&p.name);
        let x = axis.clamp(p.p99);
        if let Some((low, high)) = p.ci {
            chart
                .draw_series(std::iter::once(ErrorBar::new_vertical(
                    x,
                    low,
                    p.rate,
                    high,
                    colour.stroke_width(2),
                    2 * CAP as u32,
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
    Ok(())
}

fn bars(
    root: &DrawingArea<SVGBackend<'_>, plotters::coord::Shift>,
    title: &str,
    m: &ScenarioMetrics,
    palette: &Palette,
) -> std::io::Result<()> {
    let bars: Vec<RateBar> = m
        .summary
        .iter()
        .map(|s| RateBar {
            name: s.detector.clone(),
            rate: rate_of(s),
            ci: s.false_failed_rate_ci.map(|c| (c.low, c.high)),
            colour: palette.colour(&s.detector),
        })
        .collect();
    rate_bars(root, title, &bars, RATE_NAME, "pair-h")
}

/// One bar of a chart of rates: a name, its rate, the rate's interval.
pub(crate) struct RateBar {
    pub(crate) name: String,
    pub(crate) rate: f64,
    pub(crate) ci: Option<(f64, f64)>,
    pub(crate) colour: RGBColor,
}

/// A bar per name of a false rate (`axis` names it, `unit` is its unit in
/// the labels, e.g. `pair-h`), with its interval as a whisker and its value
/// above: what a trade-off chart draws when there is no detection time to
/// put on its x axis.
pub(crate) fn rate_bars(
    root: &DrawingArea<SVGBackend<'_>, plotters::coord::Shift>,
    title: &str,
    bars: &[RateBar],
    axis: &str,
    unit: &str,
) -> std::io::Result<()> {
    let n = bars.len() as i32;
    let top = rate_top(
        bars.iter()
            .flat_map(|b| [b.rate, b.ci.map_or(0.0, |(_, high)| high)]),
    );
    let names: Vec<String> = bars.iter().map(|b| b.name.clone()).collect();
    let mut chart = ChartBuilder::on(root)
        .caption(title, (FONT, TITLE_SIZE))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(64)
        .build_cartesian_2d((0..(n - 1).max(0)).into_segmented(), 0.0..top)
        .map_err(chart_error)?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(names.len().max(1))
        .y_desc(axis)
        .axis_desc_style((FONT, AXIS_NAME_SIZE))
        .label_style((FONT, TICK_SIZE))
        .x_label_formatter(&|v| match v {
            SegmentValue::CenterOf(i) => names.get(*i as usize).cloned().unwrap_or_default(),
            _ => String::new(),
        })
        .y_label_formatter(&|v| rate_tick(*v))
        .light_line_style(TRANSPARENT)
        .bold_line_style(RGBColor(225, 225, 225))
        .draw()
        .map_err(chart_error)?;
    for (i, b) in bars.iter().enumerate() {
        let i = i as i32;
        let rate = b.rate;
        let mut bar = Rectangle::new(
            [
                (SegmentValue::Exact(i), 0.0),
                (SegmentValue::Exact(i + 1), rate),
            ],
            b.colour.mix(0.85).filled(),
        );
        bar.set_margin(0, 0, BAR_GAP, BAR_GAP);
        chart
            .draw_series(std::iter::once(bar))
            .map_err(chart_error)?;
        if let Some((low, high)) = b.ci {
            chart
                .draw_series(std::iter::once(ErrorBar::new_vertical(
                    SegmentValue::CenterOf(i),
                    low,
                    rate,
                    high,
                    RGBColor(40, 40, 40).stroke_width(1),
                    2 * CAP as u32,
                )))
                .map_err(chart_error)?;
        }
        // The value above the bar and its whisker, never on them.
        let above = b.ci.map_or(rate, |(_, high)| high.max(rate));
        chart
            .draw_series(std::iter::once(Text::new(
                format!("{}/{unit}", fmt_rate(rate)),
                (SegmentValue::CenterOf(i), above + top * 0.015),
                TextStyle::from((FONT, LEGEND_SIZE)).pos(Pos::new(HPos::Center, VPos::Bottom)),
            )))
            .map_err(chart_error)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::scenario_metrics;
    use crate::metrics::tests::two_seeds;

    #[test]
    fn points_all_at_zero_are_a_line_and_one_false_failed_a_chart() {
        let mut m = scenario_metrics(&two_seeds());
        let palette = Palette::new(m.summary.iter().map(|s| s.detector.as_str()));
        assert!(m.summary.iter().all(|s| s.false_failed == 0));
        assert_eq!(
            tradeoff_svg(&m, &palette).unwrap(),
            Chart::Nothing(ALL_ZERO.into())
        );
        m.summary[0].false_failed = 1;
        let chart = tradeoff_svg(&m, &palette).unwrap();
        let svg = chart.svg().expect("a false Failed is something to chart");
        // It plots false Failed, not all mistakes.
        assert!(svg.contains("false Failed per pair-hour"), "{svg}");
        assert!(!svg.contains("mistakes"), "{svg}");
    }
}
