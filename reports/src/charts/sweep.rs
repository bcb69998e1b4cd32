//! The trade-off curve of a sweep: every point at (p99 detection time,
//! false Failed per monitored-pair-hour), the Pareto front drawn through the
//! points no other point beats on both, and the front's points labelled.

use plotters::coord::ranged1d::{Ranged, ValueFormatter};
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::tradeoff::{rate_against_p99, rate_top};
use super::{chart_error, draw_note, finish_svg, log_coord, TimeAxis, FONT, TICK_SIZE};

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

/// One sweep point on the chart.
#[derive(Clone, Debug, PartialEq)]
pub struct SweepPoint {
    /// What the label shows (its parameter values).
    pub label: String,
    /// p99 detection time, s.
    pub p99: f64,
    pub rate: f64,
    pub front: bool,
}

/// The SVG of a sweep's trade-off, tagged `data-chart="sweep"`. With no
/// point to plot it is one line of text saying so, not a full-size chart
/// of empty axes (the file is still written: a sweep's folder always holds
/// it).
pub fn sweep_svg(title: &str, points: &[SweepPoint]) -> std::io::Result<String> {
    let mut svg = String::new();
    if points.is_empty() {
        {
            let root = SVGBackend::with_string(&mut svg, (SIZE.0, LINE_HEIGHT)).into_drawing_area();
            root.fill(&WHITE).map_err(chart_error)?;
            root.draw(&Text::new(
                NO_POINT,
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
        let axis = TimeAxis::covering(points.iter().map(|p| p.p99));
        if axis.log {
            draw(&root, log_coord(&axis), title, &axis, points)?;
        } else {
            let x: RangedCoordf64 = (axis.low..axis.high).into();
            draw(&root, x, title, &axis, points)?;
        }
        root.present().map_err(chart_error)?;
    }
    Ok(finish_svg(svg, SWEEP, title, title))
}

fn draw<X>(
    root: &DrawingArea<SVGBackend<'_>, plotters::coord::Shift>,
    x: X,
    title: &str,
    axis: &TimeAxis,
    points: &[SweepPoint],
) -> std::io::Result<()>
where
    X: Ranged<ValueType = f64> + ValueFormatter<f64>,
{
    let top = rate_top(points.iter().map(|p| p.rate));
    let all_zero = !points.is_empty() && points.iter().all(|p| p.rate == 0.0);
    let mut chart = rate_against_p99(
        root,
        x,
        title,
        axis,
        "false Failed per pair-hour",
        top,
        all_zero,
    )?;
    if all_zero {
        draw_note(
            &chart.plotting_area().strip_coord_spec(),
            "no false Failed at any point: every point is at 0",
        )?;
    }
    let at = |p: &SweepPoint| (axis.clamp(p.p99), p.rate);
    chart
        .draw_series(
            points
                .iter()
                .filter(|p| !p.front)
                .map(|p| Circle::new(at(p), 3, CLOUD.filled())),
        )
        .map_err(chart_error)?;
    let mut front: Vec<&SweepPoint> = points.iter().filter(|p| p.front).collect();
    front.sort_by(|a, b| a.p99.total_cmp(&b.p99));
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
                p99: 2.0,
                rate: 3.0,
                front: true,
            },
            SweepPoint {
                label: "threshold=8".into(),
                p99: 4.0,
                rate: 0.5,
                front: true,
            },
            SweepPoint {
                label: "threshold=9".into(),
                p99: 5.0,
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
    fn a_sweep_with_no_point_is_one_line() {
        let svg = sweep_svg("sweep of phi", &[]).unwrap();
        assert!(svg.contains("data-chart=\"sweep\""));
        assert!(svg.contains(&format!("height=\"{LINE_HEIGHT}\"")), "{svg}");
        assert!(svg.contains(NO_POINT));
    }
}
