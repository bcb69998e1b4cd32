//! The timeline of one monitored pair in a replay: what happened (the faults
//! and the ground truth, on top) and what each detector made of it (one panel
//! per detector below: its score over time, its thresholds, and its Suspect
//! and Failed periods shaded behind). Every panel shares the time axis, and
//! dashed lines mark where the faults start and end, so a reader can follow a
//! fault down through every detector.
//!
//! A score can change faster than a pixel can show: the health score dips
//! at every late frame and recovers at the next, dozens of times per pixel
//! column. Such a score is drawn as the level it rests at (one steady line)
//! over a light band of its range in each column, not as a line zigzagging
//! through the band; and Suspect or Failed periods too brief to be seen are
//! drawn [`MIN_VERDICT_PX`] wide, so a detector flickering between verdicts
//! shows as stripes rather than as never having left Alive.
//!
//! While the monitor is paused or down it runs nothing: nobody could read a
//! score then, and a curve drawn through the pause would show phi soaring
//! with no verdict to match (the detector learns of the stall when it
//! resumes). Those stretches are shaded instead, with no curve.
//!
//! Each panel has its own vertical axis, the scale of its detector's score
//! ([`super::score_scale`]).

use std::io;

use fdlab_protocol::{Nanos, Verdict};
use fdlab_sim::outcome::{RunOutcome, Window};
use fdlab_sim::scenario::{Expect, FaultKind, Scenario};
use fdlab_sim::scores::ScoreSeries;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::columns::{awake, flicker_band, reduce, verdict_spans, widen, Column};
use super::score_scale::{axis_name, rising, trim_number};
pub use super::score_scale::{score_scale, ScoreScale};
use super::{
    chart_error, finish_svg, Palette, TimeAxis, AXIS_NAME_SIZE, FONT, LEGEND_SIZE, TICK_SIZE,
    TIMELINE, TITLE_SIZE,
};

/// Width of the chart, px.
pub const WIDTH: u32 = 1_200;
/// Heights, px: the title and legend line, the ground-truth strip, one
/// detector panel, and the extra room of the last panel for the time axis.
const HEADER: u32 = 64;
const TRUTH: u32 = 96;
const PANEL: u32 = 170;
const TIME_AXIS: u32 = 50;
/// Room left of every panel for its vertical axis, px (the same for all, so
/// that their time axes line up).
const Y_AREA: u32 = 96;
const MARGIN_RIGHT: u32 = 24;
/// Room between the ground truth's row names and its axis line, px.
const ROW_NAME_GAP: i32 = 8;
/// Room above each panel for the detector's name, px.
const NAME_ROW: u32 = 24;
/// A pixel column whose score spans more than this, px, is shaded as a
/// band of flicker; a smaller range the 2 px line covers anyway.
const FLICKER_PX: f64 = 4.0;
/// Opacity of the flicker band: light, so the resting line reads above it.
const FLICKER_OPACITY: f64 = 0.2;
/// Narrowest a Suspect or Failed period is drawn, px.
const MIN_VERDICT_PX: f64 = 2.0;

const SUSPECT_FILL: RGBColor = RGBColor(255, 200, 80);
const FAILED_FILL: RGBColor = RGBColor(230, 60, 60);
const MUST_DETECT_FILL: RGBColor = RGBColor(150, 30, 30);
const FAULT_FILL: RGBColor = RGBColor(110, 110, 110);
const OTHER_FAULT_FILL: RGBColor = RGBColor(200, 200, 200);
const FROZEN_FILL: RGBColor = RGBColor(120, 130, 170);
const GRID: RGBColor = RGBColor(230, 230, 230);
const INK: RGBColor = RGBColor(40, 40, 40);

/// One detector's panel.
#[derive(Clone, Debug, PartialEq)]
pub struct DetectorTrack {
    pub name: String,
    pub scale: ScoreScale,
    pub samples: Vec<(Nanos, f64)>,
    /// Verdict changes, Alive before the first.
    pub changes: Vec<(Nanos, Verdict)>,
}

/// A fault as the timeline shows it.
#[derive(Clone, Debug, PartialEq)]
pub struct FaultSpan {
    pub label: String,
    pub window: Window,
    /// It hits the monitor or the target of the pair.
    pub on_pair: bool,
}

/// Everything the timeline of one pair shows.
#[derive(Clone, Debug, PartialEq)]
pub struct Timeline {
    pub scenario: String,
    pub seed: u64,
    pub monitor: String,
    pub target: String,
    pub duration: Nanos,
    pub faults: Vec<FaultSpan>,
    /// When the monitor must declare the target Failed.
    pub must_detect: Vec<Window>,
    /// When the monitor was paused or down: it ran nothing, so no score.
    pub frozen: Vec<Window>,
    pub detectors: Vec<DetectorTrack>,
}

impl Timeline {
    /// The timeline of `pair` (monitor, target) in a replayed run, with the
    /// score series sampled for it (one per detector, in scenario order).
    pub fn of_run(
        scenario: &Scenario,
        outcome: &RunOutcome,
        pair: (u32, u32),
        series: &[ScoreSeries],
    ) -> Timeline {
        let node = |i: u32| {
            outcome
                .nodes
                .get(i as usize)
                .cloned()
                .unwrap_or_else(|| i.to_string())
        };
        let found = outcome.pairs.iter().find(|p| (p.monitor, p.target) == pair);
        let faults = outcome
            .faults
            .iter()
            .map(|f| FaultSpan {
                label: format!(
                    "{} {}{}",
                    f.kind.name(),
                    f.target,
                    if f.expect == Expect::Detect {
                        " (detect)"
                    } else {
                        ""
                    }
                ),
                window: f.window,
                on_pair: f.node.is_some_and(|n| n == pair.0 || n == pair.1),
            })
            .collect();
        let detectors = outcome
            .detectors
            .iter()
            .enumerate()
            .map(|(d, name)| {
                let scale = scenario.detectors.get(d).map_or_else(
                    || rising("score", Vec::new(), None),
                    |s| score_scale(&s.config),
                );
                DetectorTrack {
                    name: name.clone(),
                    scale,
                    samples: series.get(d).map(|s| s.samples.clone()).unwrap_or_default(),
                    changes: found
                        .and_then(|p| p.detectors.get(d))
                        .map(|t| t.changes.clone())
                        .unwrap_or_default(),
                }
            })
            .collect();
        Timeline {
            scenario: outcome.scenario.clone(),
            seed: outcome.seed,
            monitor: node(pair.0),
            target: node(pair.1),
            duration: outcome.duration,
            faults,
            must_detect: found
                .map(|p| p.must_detect.iter().map(|m| m.window).collect())
                .unwrap_or_default(),
            frozen: {
                let mut frozen: Vec<Window> = found.map(|p| p.unjudged.clone()).unwrap_or_default();
                frozen.extend(
                    outcome
                        .faults
                        .iter()
                        .filter(|f| f.kind == FaultKind::Pause && f.node == Some(pair.0))
                        .map(|f| f.window),
                );
                frozen.sort();
                frozen
            },
            detectors,
        }
    }

    /// The title: which run, which pair.
    pub fn title(&self) -> String {
        format!(
            "{} seed {}: {} watching {}",
            self.scenario, self.seed, self.monitor, self.target
        )
    }
}

/// The timeline as SVG text, tagged `data-chart="timeline"`.
pub fn timeline_svg(t: &Timeline, palette: &Palette) -> io::Result<String> {
    let panels = t.detectors.len() as u32;
    let height = HEADER + TRUTH + PANEL * panels.max(1) + TIME_AXIS;
    let end = t.duration.as_secs_f64().max(1e-9);
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, height)).into_drawing_area();
        root.fill(&WHITE).map_err(chart_error)?;
        let (header, rest) = root.split_vertically(HEADER);
        draw_header(&header, t)?;
        let (truth, mut rest) = rest.split_vertically(TRUTH);
        draw_truth(&truth, t, end)?;
        for (k, d) in t.detectors.iter().enumerate() {
            let last = k + 1 == t.detectors.len();
            let size = if last { PANEL + TIME_AXIS } else { PANEL };
            let (panel, below) = rest.split_vertically(size);
            draw_panel(&panel, t, d, palette.colour(&d.name), end, last)?;
            rest = below;
        }
        root.present().map_err(chart_error)?;
    }
    Ok(finish_svg(svg, TIMELINE, &t.scenario, &t.title()))
}

fn text_style(size: f64, colour: &'static RGBColor, h: HPos, v: VPos) -> TextStyle<'static> {
    TextStyle::from((FONT, size))
        .color(colour)
        .pos(Pos::new(h, v))
}

/// Title, then a key to the shadings.
fn draw_header(area: &DrawingArea<SVGBackend<'_>, Shift>, t: &Timeline) -> io::Result<()> {
    let (w, _) = area.dim_in_pixel();
    area.draw(&Text::new(
        t.title(),
        (w as i32 / 2, 8),
        text_style(TITLE_SIZE, &INK, HPos::Center, VPos::Top),
    ))
    .map_err(chart_error)?;
    let y = 46;
    let mut x = Y_AREA as i32;
    let swatch = |x: i32, fill: ShapeStyle| Rectangle::new([(x, y - 7), (x + 22, y + 7)], fill);
    // Only the keys of what this timeline shows.
    let keys = [
        ("Suspect", SUSPECT_FILL.mix(0.45).filled(), true),
        ("Failed", FAILED_FILL.mix(0.35).filled(), true),
        (
            "must detect (ground truth)",
            MUST_DETECT_FILL.filled(),
            !t.must_detect.is_empty(),
        ),
        (
            "fault on this pair",
            FAULT_FILL.filled(),
            t.faults.iter().any(|f| f.on_pair),
        ),
        (
            "other fault",
            OTHER_FAULT_FILL.filled(),
            t.faults.iter().any(|f| !f.on_pair),
        ),
        (
            "monitor paused or down (no score)",
            FROZEN_FILL.mix(0.3).filled(),
            !t.frozen.is_empty(),
        ),
    ];
    for (label, fill, _) in keys.into_iter().filter(|k| k.2) {
        area.draw(&swatch(x, fill)).map_err(chart_error)?;
        area.draw(&Text::new(
            label,
            (x + 28, y),
            text_style(LEGEND_SIZE, &INK, HPos::Left, VPos::Center),
        ))
        .map_err(chart_error)?;
        x += 28 + (label.chars().count() as i32) * 7 + 30;
    }
    Ok(())
}

/// The ground-truth strip: rows "must detect" and "faults".
fn draw_truth(area: &DrawingArea<SVGBackend<'_>, Shift>, t: &Timeline, end: f64) -> io::Result<()> {
    let rows = ["faults", "must detect"];
    let mut chart = ChartBuilder::on(area)
        .margin_left(0)
        .margin_right(MARGIN_RIGHT)
        .margin_top(6)
        .margin_bottom(6)
        .y_label_area_size(Y_AREA)
        .build_cartesian_2d(0.0..end, 0.0..rows.len() as f64)
        .map_err(chart_error)?;
    chart
        .configure_mesh()
        .disable_mesh()
        .disable_x_axis()
        .y_labels(0)
        .draw()
        .map_err(chart_error)?;
    // Row names just left of the axis line, in pixels: plotters moves a
    // point left of the time axis onto it, which put the names on the line.
    let top = area.get_base_pixel().1;
    for (i, label) in rows.iter().enumerate() {
        let (_, y) = chart.backend_coord(&(0.0, i as f64 + 0.5));
        area.draw(&Text::new(
            label.to_string(),
            (Y_AREA as i32 - ROW_NAME_GAP, y - top),
            text_style(LEGEND_SIZE, &INK, HPos::Right, VPos::Center),
        ))
        .map_err(chart_error)?;
    }
    // Row 0: faults, those on the pair darker and on top.
    let mut faults: Vec<&FaultSpan> = t.faults.iter().collect();
    faults.sort_by_key(|f| f.on_pair);
    for f in faults {
        let (s, e) = (
            f.window.start.as_secs_f64(),
            f.window.end.as_secs_f64().min(end),
        );
        let fill = if f.on_pair {
            FAULT_FILL
        } else {
            OTHER_FAULT_FILL
        };
        chart
            .draw_series(std::iter::once(Rectangle::new(
                [(s, 0.12), (e.max(s + end / 1_000.0), 0.88)],
                fill.filled(),
            )))
            .map_err(chart_error)?;
        // The label inside the bar if it fits, else nothing (the key and the
        // dashed lines below still show it).
        let px = (e - s) / end * f64::from(WIDTH - Y_AREA - MARGIN_RIGHT);
        if f.on_pair && px > f.label.chars().count() as f64 * 8.0 + 8.0 {
            chart
                .draw_series(std::iter::once(Text::new(
                    f.label.clone(),
                    ((s + e) / 2.0, 0.5),
                    text_style(LEGEND_SIZE, &WHITE, HPos::Center, VPos::Center),
                )))
                .map_err(chart_error)?;
        }
    }
    for w in &t.must_detect {
        let (s, e) = (w.start.as_secs_f64(), w.end.as_secs_f64().min(end));
        chart
            .draw_series(std::iter::once(Rectangle::new(
                [(s, 1.12), (e, 1.88)],
                MUST_DETECT_FILL.filled(),
            )))
            .map_err(chart_error)?;
    }
    Ok(())
}

fn draw_panel(
    area: &DrawingArea<SVGBackend<'_>, Shift>,
    t: &Timeline,
    d: &DetectorTrack,
    colour: RGBColor,
    end: f64,
    with_time_axis: bool,
) -> io::Result<()> {
    let (name_row, area) = area.split_vertically(NAME_ROW);
    name_row
        .draw(&Text::new(
            d.name.clone(),
            (Y_AREA as i32, NAME_ROW as i32 - 4),
            TextStyle::from((FONT, AXIS_NAME_SIZE).into_font().style(FontStyle::Bold))
                .color(&colour)
                .pos(Pos::new(HPos::Left, VPos::Bottom)),
        ))
        .map_err(chart_error)?;
    let area = &area;
    let scale = &d.scale;
    let plot_width = WIDTH - Y_AREA - MARGIN_RIGHT;
    let segments: Vec<Vec<Column>> = awake(&d.samples, &t.frozen)
        .into_iter()
        .map(|part| reduce(part, t.duration, plot_width, scale.clip))
        .collect();
    let max = segments
        .iter()
        .flatten()
        .map(|c| c.high)
        .chain(scale.thresholds.iter().map(|x| x.1))
        .filter(|v| v.is_finite())
        .fold(0.0f64, f64::max);
    let top = match scale.top {
        Some(top) => top,
        None if max > 0.0 => max * 1.12,
        None => 1.0,
    };
    let mut chart = ChartBuilder::on(area)
        .margin_left(0)
        .margin_right(MARGIN_RIGHT)
        .margin_top(2)
        .margin_bottom(4)
        .x_label_area_size(if with_time_axis { TIME_AXIS } else { 0 })
        .y_label_area_size(Y_AREA)
        .build_cartesian_2d(0.0..end, 0.0..top)
        .map_err(chart_error)?;
    let y_name = axis_name(&scale.name, scale.clip);
    let time = TimeAxis {
        low: 0.0,
        high: end,
        log: false,
    };
    let time_label = |v: &f64| time.label(*v);
    {
        let mut mesh = chart.configure_mesh();
        mesh.y_desc(y_name)
            .y_labels(4)
            .x_labels(12)
            .axis_desc_style((FONT, AXIS_NAME_SIZE))
            .label_style((FONT, TICK_SIZE))
            .x_label_formatter(&time_label)
            .y_label_formatter(&|v| trim_number(*v))
            .light_line_style(TRANSPARENT)
            .bold_line_style(GRID);
        if with_time_axis {
            mesh.x_desc(time.name("time"));
        } else {
            mesh.x_label_style((FONT, 0.0));
        }
        mesh.draw().map_err(chart_error)?;
    }
    let (plot_w, plot_h) = chart.plotting_area().dim_in_pixel();
    let per_px_x = end / f64::from(plot_w.max(1));
    let per_px_y = top / f64::from(plot_h.max(1));
    // Verdict periods, behind everything; a brief one still shows.
    for (which, fill) in [
        (Verdict::Suspect, SUSPECT_FILL.mix(0.45)),
        (Verdict::Failed, FAILED_FILL.mix(0.35)),
    ] {
        let spans = verdict_spans(&d.changes, t.duration, which);
        chart
            .draw_series(
                widen(&spans, MIN_VERDICT_PX * per_px_x)
                    .into_iter()
                    .map(|(s, e)| Rectangle::new([(s, 0.0), (e.min(end), top)], fill.filled())),
            )
            .map_err(chart_error)?;
    }
    // The monitor paused or down: no score.
    chart
        .draw_series(t.frozen.iter().map(|w| {
            Rectangle::new(
                [
                    (w.start.as_secs_f64(), 0.0),
                    (w.end.as_secs_f64().min(end), top),
                ],
                FROZEN_FILL.mix(0.3).filled(),
            )
        }))
        .map_err(chart_error)?;
    // Fault starts and ends on this pair, dashed.
    for f in t.faults.iter().filter(|f| f.on_pair) {
        for x in [f.window.start.as_secs_f64(), f.window.end.as_secs_f64()] {
            if x > 0.0 && x < end {
                chart
                    .draw_series(DashedLineSeries::new(
                        [(x, 0.0), (x, top)],
                        6,
                        4,
                        FAULT_FILL.stroke_width(1),
                    ))
                    .map_err(chart_error)?;
            }
        }
    }
    // The score: where it rests in each pixel column as the line, and where
    // it flickers within a column, the range as a light band below (or
    // above) it.
    let half_column = end / f64::from(plot_width) / 2.0;
    for columns in segments.iter().filter(|c| !c.is_empty()) {
        chart
            .draw_series(
                flicker_band(columns, half_column, FLICKER_PX * per_px_y)
                    .into_iter()
                    .map(|outline| Polygon::new(outline, colour.mix(FLICKER_OPACITY).filled())),
            )
            .map_err(chart_error)?;
        chart
            .draw_series(LineSeries::new(
                columns.iter().map(|c| (c.at, c.rest(scale.lower_is_worse))),
                colour.stroke_width(2),
            ))
            .map_err(chart_error)?;
    }
    // Thresholds: dashed, labelled at the right on a white ground.
    for (label, value) in &scale.thresholds {
        if *value > top {
            continue;
        }
        chart
            .draw_series(DashedLineSeries::new(
                [(0.0, *value), (end, *value)],
                4,
                3,
                INK.stroke_width(1),
            ))
            .map_err(chart_error)?;
        let label_px = label.chars().count() as f64 * 7.5 + 8.0;
        chart
            .draw_series(std::iter::once(Rectangle::new(
                [
                    (end - label_px * per_px_x, *value),
                    (end, *value + 17.0 * per_px_y),
                ],
                WHITE.mix(0.85).filled(),
            )))
            .map_err(chart_error)?;
        chart
            .draw_series(std::iter::once(Text::new(
                label.clone(),
                (end - 4.0 * per_px_x, *value + 2.0 * per_px_y),
                text_style(TICK_SIZE, &INK, HPos::Right, VPos::Bottom),
            )))
            .map_err(chart_error)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use fdlab_protocol::DetectorConfig;

    /// Widths (px) of the full-height rectangles of `fill` in `svg`.
    fn stripes(svg: &str, fill: &str) -> Vec<u32> {
        svg.split("<rect ")
            .skip(1)
            .filter(|r| r.contains(&format!("fill=\"{fill}\"")))
            .filter_map(|r| {
                let number = |key: &str| -> Option<u32> {
                    let at = r.find(&format!(" {key}=\""))? + key.len() + 3;
                    r[at..].split('"').next()?.parse().ok()
                };
                (number("height")? > PANEL / 2).then(|| number("width"))?
            })
            .collect()
    }

    #[test]
    fn a_flickering_health_score_reads_at_a_glance() {
        let ms = Nanos::from_millis;
        // The score rests at 1 and dips to 0.6 every 10 ms for a minute,
        // with a Suspect of 3 µs at 20 s.
        let samples: Vec<(Nanos, f64)> = (0..6_000u64)
            .map(|k| (ms(10 * k), if k % 2 == 0 { 1.0 } else { 0.6 }))
            .collect();
        let track = DetectorTrack {
            name: "decay".into(),
            scale: score_scale(&DetectorConfig::DataflowDecay(Default::default())),
            samples,
            changes: vec![
                (ms(20_000), Verdict::Suspect),
                (ms(20_000) + Nanos(3_000), Verdict::Alive),
            ],
        };
        let timeline = Timeline {
            scenario: "s".into(),
            seed: 1,
            monitor: "a".into(),
            target: "b".into(),
            duration: ms(60_000),
            faults: Vec::new(),
            must_detect: Vec::new(),
            frozen: Vec::new(),
            detectors: vec![track],
        };
        let palette = Palette::new(["decay"]);
        let svg = timeline_svg(&timeline, &palette).unwrap();
        // The 3 µs Suspect is a stripe 2 px wide, not a rectangle of 0 px.
        assert_eq!(stripes(&svg, "#FFC850"), [MIN_VERDICT_PX as u32]);
        // The line rests at 1: one polyline of the detector's colour, flat.
        let colour = palette.css("decay").to_uppercase();
        let line = svg
            .split("<polyline ")
            .find(|p| p.contains(&format!("stroke=\"{colour}\"")))
            .unwrap();
        let points = line
            .split("points=\"")
            .nth(1)
            .unwrap()
            .split('"')
            .next()
            .unwrap();
        let heights: std::collections::BTreeSet<&str> = points
            .split_whitespace()
            .map(|p| p.split(',').nth(1).unwrap())
            .collect();
        assert_eq!(heights.len(), 1, "{points}");
        // The dips are a light band below it.
        assert!(svg.contains(&format!(
            "<polygon opacity=\"{FLICKER_OPACITY}\" fill=\"{colour}\""
        )));
        assert_eq!(svg, timeline_svg(&timeline, &palette).unwrap());
    }
}
