//! The trade-off curve of a sweep: every point at (its time, its rate) —
//! for a detector sweep (p99 detection time, false Failed per
//! monitored-pair-hour), for a membership sweep (median time to a Dead
//! declaration, false declarations per node-hour) — the Pareto front drawn
//! through the points no other point beats on both, and the front's points
//! labelled.

use plotters::coord::ranged1d::{Ranged, ValueFormatter};
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::frame::{tradeoff_frame, TradeoffAxes};
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
    chart
        .draw_series(front.iter().step_by(step).map(|p| {
            Text::new(
                p.label.clone(),
                at(p),
                TextStyle::from((FONT, TICK_SIZE - 3.0))
                    .color(&RGBColor(40, 40, 40))
                    .pos(Pos::new(HPos::Left, VPos::Bottom)),
            )
        }))
        .map_err(chart_error)?;
    Ok(())
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
        assert!(svg.contains("threshold=8") && !svg.contains("threshold=9"));
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
}
