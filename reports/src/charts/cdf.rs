//! Per scenario: the cumulative distribution of detection time, one step curve
//! per detector. A point (t, y) reads "y% of the must-detect faults were
//! detected (a lasting Failed) within t of their onset". Curves end below 100%
//! by the share of missed detections, so a fast detector that misses is not
//! mistaken for a good one.
//!
//! A scenario with nothing to detect (all faults tolerated) gets, in the same
//! place, the distribution of mistake durations: how long wrong suspicions
//! last, the figure such a scenario is about.

use plotters::coord::ranged1d::{Ranged, ValueFormatter};
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;

use super::frame::{draw_frame, Frame};
use super::{
    chart_error, draw_legend, finish_svg, fmt_seconds, legend_height, log_coord, Chart, Marker,
    Palette, TimeAxis, CDF, QUIET, SCENARIO_CHART_SIZE,
};
use crate::metrics::ScenarioMetrics;
use fdlab_protocol::Nanos;

/// Top of the share axis, %: a little above 100 so that curves reaching 100%
/// stay clear of the frame.
const Y_TOP: f64 = 104.0;

/// Steps drawn per curve at most; more samples are thinned to evenly spaced
/// ranks (the curve keeps its shape, the SVG stays small).
pub const MAX_STEPS: usize = 1_000;

/// One detector's curve: sorted samples (s) out of `total` events.
struct Curve {
    name: String,
    sorted: Vec<f64>,
    total: usize,
}

/// What a scenario's CDF chart shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Measure {
    DetectionTime,
    MistakeDuration,
}

fn secs(t: Nanos) -> f64 {
    t.as_secs_f64()
}

fn curves(m: &ScenarioMetrics, measure: Measure) -> Vec<Curve> {
    m.summary
        .iter()
        .map(|s| {
            let runs = m
                .runs
                .iter()
                .flat_map(|r| r.detectors.iter())
                .filter(|d| d.detector == s.detector);
            let mut sorted: Vec<f64> = Vec::new();
            let mut total = 0;
            for d in runs {
                match measure {
                    Measure::DetectionTime => {
                        total += d.detections.len();
                        sorted.extend(
                            d.detections
                                .iter()
                                .filter_map(|x| x.failed_delay())
                                .map(secs),
                        );
                    }
                    Measure::MistakeDuration => {
                        total += d.mistakes.len();
                        sorted.extend(d.mistakes.iter().map(|x| secs(x.duration())));
                    }
                }
            }
            sorted.sort_by(f64::total_cmp);
            Curve {
                name: s.detector.clone(),
                sorted,
                total,
            }
        })
        .collect()
}

/// The CDF chart of one scenario as SVG text, tagged `data-chart="cdf"`; or,
/// when no curve has a point (nothing detected, or nothing to detect and no
/// mistake), the line that says so.
pub fn cdf_svg(m: &ScenarioMetrics, palette: &Palette) -> std::io::Result<Chart> {
    let windows: usize = m.summary.iter().map(|s| s.detect_windows).sum();
    let measure = if windows > 0 {
        Measure::DetectionTime
    } else {
        Measure::MistakeDuration
    };
    let curves = curves(m, measure);
    if curves.iter().all(|c| c.sorted.is_empty()) {
        return Ok(Chart::Nothing(match measure {
            Measure::DetectionTime => not_detected(m),
            Measure::MistakeDuration => QUIET.to_string(),
        }));
    }
    let title = match measure {
        Measure::DetectionTime => format!("{}: detection time", m.scenario),
        Measure::MistakeDuration => format!("{}: mistake duration (nothing to detect)", m.scenario),
    };
    let axis = TimeAxis::covering(curves.iter().flat_map(|c| c.sorted.iter().copied()));
    let (what, y_name) = match measure {
        Measure::DetectionTime => (
            "fault onset to lasting Failed",
            "must-detect faults detected (%)",
        ),
        Measure::MistakeDuration => ("mistake duration", "mistakes ended within (%)"),
    };
    let mut svg = String::new();
    {
        let (w, h) = SCENARIO_CHART_SIZE;
        let size = (w, h + legend_height(curves.len()));
        let root = SVGBackend::with_string(&mut svg, size).into_drawing_area();
        root.fill(&WHITE).map_err(chart_error)?;
        let (plot, legend_area) = root.split_vertically(h);
        let legend: Vec<(String, RGBColor, Marker)> = curves
            .iter()
            .map(|c| (legend(c), palette.colour(&c.name), Marker::Line))
            .collect();
        draw_legend(&legend_area, &legend)?;
        let root = plot;
        let x_name = axis.name(what);
        if axis.log {
            let x = log_coord(&axis);
            draw(&root, x, &title, &x_name, y_name, &axis, &curves, palette)?;
        } else {
            let x: RangedCoordf64 = (axis.low..axis.high).into();
            draw(&root, x, &title, &x_name, y_name, &axis, &curves, palette)?;
        }
        root.present().map_err(chart_error)?;
    }
    Ok(Chart::Svg(finish_svg(svg, CDF, &m.scenario, &title)))
}

/// The line for a scenario whose must-detect faults no detector detected.
fn not_detected(m: &ScenarioMetrics) -> String {
    // Every detector watches the same pairs: the same windows.
    let faults = m
        .summary
        .iter()
        .map(|s| s.detect_windows)
        .max()
        .unwrap_or(0);
    let which = if faults == 1 {
        "the one must-detect fault".to_string()
    } else {
        format!("any of the {faults} must-detect faults")
    };
    format!("No detector detected {which}: no detection times to chart.")
}

#[allow(clippy::too_many_arguments)]
fn draw<X>(
    root: &DrawingArea<SVGBackend<'_>, plotters::coord::Shift>,
    x: X,
    title: &str,
    x_name: &str,
    y_name: &str,
    axis: &TimeAxis,
    curves: &[Curve],
    palette: &Palette,
) -> std::io::Result<()>
where
    X: Ranged<ValueType = f64> + ValueFormatter<f64>,
{
    let x_tick = |v: &f64| axis.label(*v);
    // The share axis is labelled up to 100%; its headroom above is not.
    let y_tick = |v: &f64| {
        if *v <= 100.0 {
            format!("{v:.0}")
        } else {
            String::new()
        }
    };
    let frame = Frame {
        title,
        x_name,
        y_name,
        x_tick: &x_tick,
        y_tick: &y_tick,
    };
    let mut chart = draw_frame(root, x, 0.0..Y_TOP, &frame, false)?;
    for c in curves.iter().filter(|c| !c.sorted.is_empty()) {
        chart
            .draw_series(LineSeries::new(
                steps(c, axis),
                palette.colour(&c.name).stroke_width(2),
            ))
            .map_err(chart_error)?;
    }
    Ok(())
}

/// `name: p50 1.2 s, n=57, 3 missed`.
fn legend(c: &Curve) -> String {
    let missed = c.total - c.sorted.len();
    if c.total == 0 {
        return format!("{}: none", c.name);
    }
    if c.sorted.is_empty() {
        return format!("{}: none of {}", c.name, c.total);
    }
    let p50 = c.sorted[c.sorted.len().div_ceil(2) - 1];
    let mut text = format!("{}: p50 {}, n={}", c.name, fmt_seconds(p50), c.sorted.len());
    if missed > 0 {
        text.push_str(&format!(", {missed} missed"));
    }
    text
}

/// The step curve: up one rank at each sample, from 0 at the first sample to
/// the share reached at the last; a curve that ends below 100% (missed
/// detections) runs on flat to the axis end, so the plateau shows. Curves
/// at 100% stop there rather than overlap along the top.
fn steps(c: &Curve, axis: &TimeAxis) -> Vec<(f64, f64)> {
    let n = c.sorted.len();
    let total = c.total.max(n).max(1) as f64;
    let stride = n.div_ceil(MAX_STEPS).max(1);
    let mut points = Vec::new();
    let mut previous = 0.0;
    let mut rank = stride;
    while rank < n + stride {
        let r = rank.min(n);
        let x = axis.clamp(c.sorted[r - 1]);
        let y = 100.0 * r as f64 / total;
        points.push((x, previous));
        points.push((x, y));
        previous = y;
        rank += stride;
        if r == n {
            break;
        }
    }
    if n < c.total {
        points.push((axis.high, previous));
    }
    points
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_climb_one_rank_at_a_time_and_stop_at_the_detected_share() {
        let c = Curve {
            name: "x".into(),
            sorted: vec![1.0, 2.0, 2.0],
            total: 4,
        };
        let axis = TimeAxis {
            low: 0.0,
            high: 3.0,
            log: false,
        };
        assert_eq!(
            steps(&c, &axis),
            vec![
                (1.0, 0.0),
                (1.0, 25.0),
                (2.0, 25.0),
                (2.0, 50.0),
                (2.0, 50.0),
                (2.0, 75.0),
                (3.0, 75.0)
            ]
        );
        assert_eq!(legend(&c), "x: p50 2 s, n=3, 1 missed");
        // Thinned: never more than about MAX_STEPS steps, last rank kept.
        let c = Curve {
            name: "x".into(),
            sorted: (0..10_001).map(f64::from).collect(),
            total: 10_001,
        };
        let points = steps(&c, &TimeAxis::covering([1.0, 10_000.0]));
        assert!(points.len() <= 2 * MAX_STEPS + 2, "{}", points.len());
        assert_eq!(points.last(), Some(&(10_000.0, 100.0)));
    }
}
