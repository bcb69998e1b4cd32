//! The frame of a chart with two value axes: its title, margins, axis
//! names, tick labels and gridlines ([`draw_frame`]). The CDF, the
//! trade-off charts and the placement chart of a scenario with nothing to
//! detect all draw it here, so that they look alike and a change of layout
//! is made once.
//!
//! On top of it, [`tradeoff_frame`]: the frame of the trade-off charts
//! with a time to trade (a scenario's detectors, a sweep, a membership
//! scenario's judges, a placement scenario's detectors), a time against a
//! rate that starts a little below zero, with a note across the plot when
//! every rate is 0.

use std::io;
use std::ops::Range;

use plotters::coord::ranged1d::{Ranged, ValueFormatter};
use plotters::coord::types::RangedCoordf64;
use plotters::coord::Shift;
use plotters::prelude::*;

use super::{
    chart_error, draw_note, TimeAxis, AXIS_NAME_SIZE, FONT, RIGHT_ROOM, TICK_SIZE, TITLE_SIZE,
};

/// Room below a zero rate, as a share of the axis: points at zero stay clear
/// of the other axis.
pub(crate) const BELOW_ZERO: f64 = 0.04;

/// What a chart's frame writes: its title, the names of its axes, and how
/// their ticks are written.
pub(crate) struct Frame<'t> {
    pub(crate) title: &'t str,
    pub(crate) x_name: &'t str,
    pub(crate) y_name: &'t str,
    pub(crate) x_tick: &'t dyn Fn(&f64) -> String,
    pub(crate) y_tick: &'t dyn Fn(&f64) -> String,
}

/// Draws the frame of a chart on `root`, `x` (a time axis, or any other
/// coordinate of `f64`) against `y`: the title above, the axis names and
/// tick labels, and gridlines at the labelled ticks only (the lighter ones
/// between them would only add noise). With `one_y_tick` the y axis is
/// labelled at a single round value (0 on a rate axis where every rate is
/// 0, which has no scale to read). Returns the chart, to draw the data on.
pub(crate) fn draw_frame<'a, 'b, X>(
    root: &'a DrawingArea<SVGBackend<'b>, Shift>,
    x: X,
    y: Range<f64>,
    frame: &Frame,
    one_y_tick: bool,
) -> io::Result<ChartContext<'a, SVGBackend<'b>, Cartesian2d<X, RangedCoordf64>>>
where
    X: Ranged<ValueType = f64> + ValueFormatter<f64>,
{
    let mut chart = ChartBuilder::on(root)
        .caption(frame.title, (FONT, TITLE_SIZE))
        .margin(12)
        .margin_right(RIGHT_ROOM)
        .x_label_area_size(48)
        .y_label_area_size(64)
        .build_cartesian_2d::<X, RangedCoordf64>(x, y.into())
        .map_err(chart_error)?;
    let mut mesh = chart.configure_mesh();
    mesh.x_desc(frame.x_name)
        .y_desc(frame.y_name)
        .axis_desc_style((FONT, AXIS_NAME_SIZE))
        .label_style((FONT, TICK_SIZE))
        .x_label_formatter(frame.x_tick)
        .y_label_formatter(frame.y_tick)
        .light_line_style(TRANSPARENT)
        .bold_line_style(RGBColor(225, 225, 225));
    if one_y_tick {
        mesh.y_labels(1);
    }
    mesh.draw().map_err(chart_error)?;
    Ok(chart)
}

/// What the axes of a kind of trade-off chart show, and what the chart
/// says when every rate is 0.
pub(crate) struct TradeoffAxes<'t> {
    /// The time on the x axis, without its unit (the axis adds it): `p99
    /// detection time`, `median time to Dead`.
    pub(crate) time: &'t str,
    /// The name of the rate (y) axis: `false Failed per pair-hour`.
    pub(crate) rate: &'t str,
    /// How a tick of the rate axis is written.
    pub(crate) tick: fn(f64) -> String,
    /// The note written across the plot when every rate is 0.
    pub(crate) all_zero: &'t str,
}

/// The frame of a trade-off chart, drawn ([`draw_frame`]): the time of
/// `axes` on `x` (laid out by `axis`) against its rate from a little below
/// zero ([`BELOW_ZERO`]) to `top`, under `title`. With `all_zero` (every
/// rate is 0) the rate axis has no scale to read: it has one tick, 0, and
/// `axes.all_zero` is written in the middle of the plot
/// ([`super::draw_note`]), so the row of points along the bottom is not
/// taken for missing data. Returns the chart, to draw the points on.
pub(crate) fn tradeoff_frame<'a, 'b, X>(
    root: &'a DrawingArea<SVGBackend<'b>, Shift>,
    x: X,
    title: &str,
    axis: &TimeAxis,
    axes: &TradeoffAxes,
    top: f64,
    all_zero: bool,
) -> io::Result<ChartContext<'a, SVGBackend<'b>, Cartesian2d<X, RangedCoordf64>>>
where
    X: Ranged<ValueType = f64> + ValueFormatter<f64>,
{
    let x_tick = |v: &f64| axis.label(*v);
    let y_tick = |v: &f64| (axes.tick)(*v);
    let frame = Frame {
        title,
        x_name: &axis.name(axes.time),
        y_name: axes.rate,
        x_tick: &x_tick,
        y_tick: &y_tick,
    };
    // With `all_zero`, one rate tick: over [-top * BELOW_ZERO, top], 0.
    let chart = draw_frame(root, x, -top * BELOW_ZERO..top, &frame, all_zero)?;
    if all_zero {
        draw_note(&chart.plotting_area().strip_coord_spec(), axes.all_zero)?;
    }
    Ok(chart)
}
