//! Per placement scenario: detection time against the cache a detector's
//! false declarations cost. One point per detector × distribution at (the
//! detector's median time to Failed on a client–server pair, keys moved by
//! false declarations per healthy server-hour), coloured by distribution;
//! a detector's points share its x. Down and to the left is better.
//!
//! With nothing to detect (no detector has a detection time), the x axis
//! is the false declarations per healthy server-hour instead: each
//! distribution's points then lie on a line whose slope is the keys one
//! false declaration moves under it.

use std::io;

use plotters::coord::ranged1d::{Ranged, ValueFormatter};
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::metrics::{PlacementMetrics, PlacementSummary};
use crate::charts::frame::{draw_frame, tradeoff_frame, Frame, TradeoffAxes, BELOW_ZERO};
use crate::charts::tradeoff::{fmt_rate, rate_tick, rate_top};
use crate::charts::{
    chart_error, draw_legend, finish_svg, legend_height, log_coord, Chart, Marker, Palette,
    TimeAxis, FONT, SCENARIO_CHART_SIZE, TICK_SIZE,
};

/// The chart's kind, as tagged in the SVG (`data-chart="placement"`).
pub const PLACEMENT: &str = "placement";
const RATE_NAME: &str = "keys lost per healthy server-hour";
/// The axes of a placement scenario's chart with a detection time.
const AXES: TradeoffAxes = TradeoffAxes {
    time: "detector's median time to Failed",
    rate: RATE_NAME,
    tick: count_tick,
    all_zero: "no false declaration in any run: every point is at 0",
};
/// The same, for clients that follow a membership view: the x axis is the
/// judge's time to declare a crash.
const VIEW_AXES: TradeoffAxes = TradeoffAxes {
    time: "judge's median time to declare a crash Dead",
    ..AXES
};
const POINT_RADIUS: i32 = 6;
/// Points of one detector are spread this share of the x axis apart, so
/// that distributions with the same cost stay visible.
const SPREAD: f64 = 0.008;

/// What stands in for the chart when no detector declared anything.
pub const NO_DETECTION: &str =
    "No detector declared a server Failed in any run: no detection time to chart.";

/// What stands in for the chart when no key was lost to a false
/// declaration: every point at 0 would only repeat the table's detection
/// times, on a chart that looks empty.
pub const ALL_ZERO: &str = "No key lost to a false declaration in any run: every point is at 0, so the chart is not drawn (the detection times are in the table).";

fn lost(s: &PlacementSummary) -> f64 {
    s.keys_lost_per_healthy_server_hour().unwrap_or(0.0)
}

/// The chart of one placement scenario, or the line that stands in for it;
/// `palette` colours the distributions ([`Palette::for_distributions`]),
/// drawn as squares: a detector is named beside its points instead.
pub fn placement_chart_svg(m: &PlacementMetrics, palette: &Palette) -> io::Result<Chart> {
    let points: Vec<(&PlacementSummary, f64)> = m
        .summary
        .iter()
        .filter_map(|s| Some((s, s.detect_p50?.as_secs_f64())))
        .collect();
    if points.is_empty() {
        if m.summary.iter().all(|s| s.false_declarations == 0) {
            return Ok(Chart::Nothing(NO_DETECTION.to_string()));
        }
        return by_false_declarations(m, palette);
    }
    if points.iter().all(|p| lost(p.0) == 0.0) {
        return Ok(Chart::Nothing(ALL_ZERO.to_string()));
    }
    let mut distributions: Vec<&str> = Vec::new();
    for s in &m.summary {
        if !distributions.contains(&s.distribution.as_str()) {
            distributions.push(&s.distribution);
        }
    }
    let legend: Vec<(String, RGBColor, Marker)> = distributions
        .iter()
        .map(|d| (d.to_string(), palette.colour(d), Marker::Square))
        .collect();
    let title = format!(
        "{}: cache lost to false declarations against detection time",
        m.scenario
    );
    let mut svg = String::new();
    {
        let (w, h) = SCENARIO_CHART_SIZE;
        let root = SVGBackend::with_string(&mut svg, (w, h + legend_height(legend.len())))
            .into_drawing_area();
        root.fill(&WHITE).map_err(chart_error)?;
        let (plot, legend_area) = root.split_vertically(h);
        draw_legend(&legend_area, &legend)?;
        let axis = TimeAxis::covering(points.iter().map(|p| p.1));
        let axes = if m.by_view { &VIEW_AXES } else { &AXES };
        if axis.log {
            scatter(
                &plot,
                log_coord(&axis),
                axes,
                &title,
                &axis,
                &points,
                &distributions,
                palette,
            )?;
        } else {
            let x: RangedCoordf64 = (axis.low..axis.high).into();
            scatter(
                &plot,
                x,
                axes,
                &title,
                &axis,
                &points,
                &distributions,
                palette,
            )?;
        }
        root.present().map_err(chart_error)?;
    }
    Ok(Chart::Svg(finish_svg(svg, PLACEMENT, &m.scenario, &title)))
}

#[allow(clippy::too_many_arguments)]
fn scatter<X>(
    root: &DrawingArea<SVGBackend<'_>, plotters::coord::Shift>,
    x: X,
    axes: &TradeoffAxes,
    title: &str,
    axis: &TimeAxis,
    points: &[(&PlacementSummary, f64)],
    distributions: &[&str],
    palette: &Palette,
) -> io::Result<()>
where
    X: Ranged<ValueType = f64> + ValueFormatter<f64>,
{
    let top = rate_top(points.iter().map(|p| lost(p.0)));
    let all_zero = points.iter().all(|p| lost(p.0) == 0.0);
    let mut chart = tradeoff_frame(root, x, title, axis, axes, top, all_zero)?;
    let middle = (distributions.len() as f64 - 1.0) / 2.0;
    for (s, x) in points {
        let colour = palette.colour(&s.distribution);
        let rank = distributions
            .iter()
            .position(|d| *d == s.distribution)
            .unwrap_or(0) as f64;
        let x = spread(axis, axis.clamp(*x), (rank - middle) * SPREAD);
        chart
            .draw_series(std::iter::once(
                EmptyElement::at((x, lost(s))) + Rectangle::new(SQUARE, colour.filled()),
            ))
            .map_err(chart_error)?;
    }
    // Each detector named once, above its highest point, staggered so that
    // names of close detectors do not overlap.
    let mut named: Vec<&str> = Vec::new();
    for (s, x) in points {
        if named.contains(&s.detector.as_str()) {
            continue;
        }
        named.push(&s.detector);
        let high = points
            .iter()
            .filter(|p| p.0.detector == s.detector)
            .map(|p| lost(p.0))
            .fold(0.0, f64::max);
        let x = axis.clamp(*x);
        let lift = top * (0.04 + 0.07 * ((named.len() - 1) % 3) as f64);
        let label = if all_zero {
            s.detector.clone()
        } else {
            format!("{} ({}/server-h)", s.detector, fmt_rate(high))
        };
        chart
            .draw_series(std::iter::once(Text::new(
                label,
                (x, high + lift),
                name_style(share_of(axis, x)),
            )))
            .map_err(chart_error)?;
    }
    Ok(())
}

/// A distribution's point: a square of side `2 * POINT_RADIUS`, px.
const SQUARE: [(i32, i32); 2] = [(-POINT_RADIUS, -POINT_RADIUS), (POINT_RADIUS, POINT_RADIUS)];

/// A tick of a count axis: 1.4M, 200k, 35, 0.5.
fn count_tick(v: f64) -> String {
    let a = v.abs();
    if a >= 1e6 {
        format!("{}M", trim(v / 1e6))
    } else if a >= 1e4 {
        format!("{}k", trim(v / 1e3))
    } else {
        rate_tick(v)
    }
}

fn trim(v: f64) -> String {
    let s = format!("{v:.1}");
    s.strip_suffix(".0").map_or(s.clone(), str::to_string)
}

/// The style of a detector's name: anchored on the side with room for it.
fn name_style(share_of_axis: f64) -> TextStyle<'static> {
    let side = if share_of_axis > 0.75 {
        HPos::Right
    } else {
        HPos::Left
    };
    TextStyle::from((FONT, TICK_SIZE))
        .color(&BLACK)
        .pos(Pos::new(side, VPos::Bottom))
}

/// False declarations per healthy server-hour.
fn false_rate(s: &PlacementSummary) -> f64 {
    let hours = s.healthy_server_time as f64 / 3.6e12;
    if hours > 0.0 {
        s.false_declarations as f64 / hours
    } else {
        0.0
    }
}

/// The chart with nothing to detect: keys lost against false declarations.
fn by_false_declarations(m: &PlacementMetrics, palette: &Palette) -> io::Result<Chart> {
    let mut distributions: Vec<&str> = Vec::new();
    for s in &m.summary {
        if !distributions.contains(&s.distribution.as_str()) {
            distributions.push(&s.distribution);
        }
    }
    let legend: Vec<(String, RGBColor, Marker)> = distributions
        .iter()
        .map(|d| (d.to_string(), palette.colour(d), Marker::Square))
        .collect();
    let title = format!(
        "{}: cache lost against false declarations (nothing to detect)",
        m.scenario
    );
    let x_top = rate_top(m.summary.iter().map(false_rate));
    let y_top = rate_top(m.summary.iter().map(lost));
    let mut svg = String::new();
    {
        let (w, h) = SCENARIO_CHART_SIZE;
        let root = SVGBackend::with_string(&mut svg, (w, h + legend_height(legend.len())))
            .into_drawing_area();
        root.fill(&WHITE).map_err(chart_error)?;
        let (plot, legend_area) = root.split_vertically(h);
        draw_legend(&legend_area, &legend)?;
        let tick = |v: &f64| count_tick(*v);
        let frame = Frame {
            title: &title,
            x_name: "false declarations per healthy server-hour",
            y_name: RATE_NAME,
            x_tick: &tick,
            y_tick: &tick,
        };
        let x = RangedCoordf64::from(-x_top * BELOW_ZERO..x_top);
        let mut chart = draw_frame(&plot, x, -y_top * BELOW_ZERO..y_top, &frame, false)?;
        for s in &m.summary {
            chart
                .draw_series(std::iter::once(
                    EmptyElement::at((false_rate(s), lost(s)))
                        + Rectangle::new(SQUARE, palette.colour(&s.distribution).filled()),
                ))
                .map_err(chart_error)?;
        }
        // Each detector named once, beside its highest point.
        let mut named: Vec<&str> = Vec::new();
        for s in &m.summary {
            if named.contains(&s.detector.as_str()) {
                continue;
            }
            named.push(&s.detector);
            let high = m
                .summary
                .iter()
                .filter(|p| p.detector == s.detector)
                .map(lost)
                .fold(0.0, f64::max);
            let lift = y_top * (0.04 + 0.07 * ((named.len() - 1) % 3) as f64);
            chart
                .draw_series(std::iter::once(Text::new(
                    s.detector.clone(),
                    (false_rate(s), high + lift),
                    name_style(false_rate(s) / x_top),
                )))
                .map_err(chart_error)?;
        }
        root.present().map_err(chart_error)?;
    }
    Ok(Chart::Svg(finish_svg(svg, PLACEMENT, &m.scenario, &title)))
}

/// Where `x` is along `axis`, from 0 (its start) to 1 (its end).
fn share_of(axis: &TimeAxis, x: f64) -> f64 {
    if axis.log {
        (x / axis.low).ln() / (axis.high / axis.low).ln()
    } else {
        (x - axis.low) / (axis.high - axis.low)
    }
}

/// `x` moved by `share` of the axis (in its own scale).
fn spread(axis: &TimeAxis, x: f64, share: f64) -> f64 {
    if axis.log {
        x * (axis.high / axis.low).powf(share)
    } else {
        x + (axis.high - axis.low) * share
    }
}
