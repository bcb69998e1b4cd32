//! The timeline of one cluster run as SVG ([`cluster_timeline_svg`]): on
//! top, the faults and the table's unreachable and slow windows; below,
//! one lane per node ([`super::lanes`]): its state bands, a thin amber
//! strip over them while it is suspected, votes (▼; hollow: withheld),
//! Dead declarations (✕; a red dot: false), new generations (a tick and
//! `#g`), an outline around the band while a fault hits the node, and a
//! thin blue strip under it while its view is behind the table's version
//! (darker: more versions behind). The table's unreachable windows are
//! also shaded pink through every lane: nobody can be declared then.
//!
//! Pixels, not events: a view lag is drawn in a pixel column only when it
//! covers at least half of that column's time (views normally catch up
//! within milliseconds of each write, a lag nobody could see), so what
//! shows is a view that stayed behind; a suspicion too brief to see is
//! drawn [`MIN_MARK_PX`] wide.

use std::io;

use fdlab_protocol::Nanos;
use fdlab_sim::outcome::Window;
use fdlab_sim::scenario::FaultKind;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::lag::lag_columns;
use super::lanes::{ClusterTimeline, Lane, LaneState};
use crate::charts::columns::widen;
use crate::charts::{
    chart_error, finish_svg, TimeAxis, AXIS_NAME_SIZE, FONT, LEGEND_SIZE, TICK_SIZE, TIMELINE,
    TITLE_SIZE,
};

/// Width of the chart, px.
pub const WIDTH: u32 = 1_200;
/// Title row, one key row, px.
const TITLE_ROW: u32 = 36;
const KEY_ROW: u32 = 22;
/// One row of the fault strip, px.
const STRIP_ROW: u32 = 18;
/// Most rows of faults; more overlapping faults share the last.
const MAX_FAULT_ROWS: usize = 4;
/// A lane's height, px: roomy for a few lanes, compact for many.
const LANE: u32 = 22;
const COMPACT_LANE: u32 = 14;
const ROOMY_LANES: usize = 24;
const TIME_AXIS: u32 = 50;
const Y_AREA: u32 = 96;
const MARGIN_RIGHT: u32 = 24;
const NAME_GAP: i32 = 8;
/// Narrowest a suspicion is drawn, px.
pub const MIN_MARK_PX: f64 = 2.0;

const INK: RGBColor = RGBColor(40, 40, 40);
const GRID: RGBColor = RGBColor(230, 230, 230);
const SUSPECTED: RGBColor = RGBColor(240, 170, 30);
const VOTE: RGBColor = RGBColor(180, 60, 0);
const FALSE_DEAD: RGBColor = RGBColor(215, 25, 28);
const LAG: RGBColor = RGBColor(40, 80, 200);
const TABLE_OUT: RGBColor = RGBColor(235, 120, 120);
const TABLE_OUT_SHADE: RGBColor = RGBColor(255, 225, 225);
const TABLE_SLOW: RGBColor = RGBColor(235, 175, 60);
const CRASH_FILL: RGBColor = RGBColor(150, 30, 30);
const FAULT_FILL: RGBColor = RGBColor(110, 110, 110);

/// The fill of a state band.
pub fn state_colour(state: LaneState) -> RGBColor {
    match state {
        LaneState::Joining => RGBColor(170, 205, 240),
        LaneState::Active => RGBColor(190, 228, 180),
        LaneState::Paused => RGBColor(175, 150, 215),
        LaneState::DeclaredWhileUp => RGBColor(240, 110, 95),
        LaneState::DownUndeclared => RGBColor(165, 165, 165),
        LaneState::Down => RGBColor(85, 85, 85),
    }
}

/// Where things sit in a lane, as shares of its height from the bottom.
const LAG_Y: (f64, f64) = (0.04, 0.18);
const BAND_Y: (f64, f64) = (0.22, 0.74);
const SUSPECT_Y: (f64, f64) = (0.78, 0.97);

fn lane_height(lanes: usize) -> u32 {
    if lanes <= ROOMY_LANES {
        LANE
    } else {
        COMPACT_LANE
    }
}

/// The node faults in rows, none overlapping another in its row (at most
/// [`MAX_FAULT_ROWS`]): `(row, fault index)`.
fn fault_rows(t: &ClusterTimeline) -> (usize, Vec<(usize, usize)>) {
    let mut order: Vec<usize> = (0..t.faults.len())
        .filter(|&i| !FaultKind::is_table(t.faults[i].kind))
        .collect();
    order.sort_by_key(|&i| (t.faults[i].window.start, i));
    let mut ends: Vec<Nanos> = Vec::new();
    let mut placed = Vec::with_capacity(order.len());
    for i in order {
        let w = t.faults[i].window;
        let row = match ends.iter().position(|&e| e <= w.start) {
            Some(r) => r,
            None if ends.len() < MAX_FAULT_ROWS => {
                ends.push(Nanos::ZERO);
                ends.len() - 1
            }
            None => (0..ends.len()).min_by_key(|&r| ends[r]).unwrap_or(0),
        };
        ends[row] = ends[row].max(w.end);
        placed.push((row, i));
    }
    (ends.len().max(1), placed)
}

/// The timeline as SVG text, tagged `data-chart="timeline"`.
pub fn cluster_timeline_svg(t: &ClusterTimeline) -> io::Result<String> {
    let (rows, placed) = fault_rows(t);
    let strip = (rows as u32 + 1) * STRIP_ROW + 10;
    let lane_h = lane_height(t.lanes.len());
    let lanes = lane_h * t.lanes.len().max(1) as u32 + 8 + TIME_AXIS;
    let header = TITLE_ROW + 3 * KEY_ROW + 6;
    let end = t.duration.as_secs_f64().max(1e-9);
    let mut svg = String::new();
    {
        let root =
            SVGBackend::with_string(&mut svg, (WIDTH, header + strip + lanes)).into_drawing_area();
        root.fill(&WHITE).map_err(chart_error)?;
        let (top, rest) = root.split_vertically(header);
        draw_header(&top, t)?;
        let (strip_area, lane_area) = rest.split_vertically(strip);
        draw_strip(&strip_area, t, rows, &placed, end)?;
        draw_lanes(&lane_area, t, lane_h, end)?;
        root.present().map_err(chart_error)?;
    }
    Ok(finish_svg(svg, TIMELINE, &t.scenario, &t.title()))
}

fn text_style(size: f64, colour: &'static RGBColor, h: HPos, v: VPos) -> TextStyle<'static> {
    TextStyle::from((FONT, size))
        .color(colour)
        .pos(Pos::new(h, v))
}

/// A glyph of the key.
enum Glyph {
    Fill(RGBColor),
    Stripe(RGBColor),
    Triangle(bool),
    Cross,
    FalseDot,
    Tick,
    Outline,
}

fn draw_glyph(
    area: &DrawingArea<SVGBackend<'_>, Shift>,
    x: i32,
    y: i32,
    g: &Glyph,
) -> io::Result<()> {
    let e = chart_error;
    match g {
        Glyph::Fill(c) => area.draw(&Rectangle::new([(x, y - 7), (x + 22, y + 7)], c.filled())),
        Glyph::Stripe(c) => area.draw(&Rectangle::new([(x, y - 3), (x + 22, y + 3)], c.filled())),
        Glyph::Triangle(filled) => {
            let points = vec![(x + 5, y - 5), (x + 17, y - 5), (x + 11, y + 5)];
            if *filled {
                area.draw(&Polygon::new(points, VOTE.filled()))
            } else {
                let mut closed = points.clone();
                closed.push(points[0]);
                area.draw(&PathElement::new(closed, VOTE.stroke_width(2)))
            }
        }
        Glyph::Cross => area.draw(&Cross::new((x + 11, y), 5, INK.stroke_width(2))),
        Glyph::FalseDot => {
            area.draw(&Circle::new((x + 11, y), 6, FALSE_DEAD.filled()))
                .map_err(e)?;
            area.draw(&Circle::new((x + 11, y), 6, INK.stroke_width(1)))
        }
        Glyph::Tick => area.draw(&PathElement::new(
            vec![(x + 11, y - 8), (x + 11, y + 8)],
            INK.stroke_width(2),
        )),
        Glyph::Outline => area.draw(&Rectangle::new(
            [(x, y - 7), (x + 22, y + 7)],
            INK.stroke_width(1),
        )),
    }
    .map_err(e)
}

/// Title, then three rows of keys: the states, the marks, the shadings.
fn draw_header(area: &DrawingArea<SVGBackend<'_>, Shift>, t: &ClusterTimeline) -> io::Result<()> {
    let (w, _) = area.dim_in_pixel();
    area.draw(&Text::new(
        t.title(),
        (w as i32 / 2, 8),
        text_style(TITLE_SIZE, &INK, HPos::Center, VPos::Top),
    ))
    .map_err(chart_error)?;
    let states: Vec<(String, Glyph)> = LaneState::ALL
        .iter()
        .map(|&s| (s.label().to_string(), Glyph::Fill(state_colour(s))))
        .collect();
    let marks = vec![
        ("suspected".to_string(), Glyph::Stripe(SUSPECTED)),
        ("vote".to_string(), Glyph::Triangle(true)),
        ("vote withheld".to_string(), Glyph::Triangle(false)),
        ("declared Dead".to_string(), Glyph::Cross),
        ("false declaration".to_string(), Glyph::FalseDot),
        ("new generation".to_string(), Glyph::Tick),
    ];
    let shades = vec![
        (
            "view behind the table (darker: more versions)".to_string(),
            Glyph::Stripe(LAG),
        ),
        (
            "table unreachable".to_string(),
            Glyph::Fill(TABLE_OUT_SHADE),
        ),
        ("fault on the node".to_string(), Glyph::Outline),
    ];
    for (row, keys) in [states, marks, shades].iter().enumerate() {
        let y = (TITLE_ROW + KEY_ROW * row as u32 + KEY_ROW / 2) as i32;
        let mut x = Y_AREA as i32;
        for (label, glyph) in keys {
            draw_glyph(area, x, y, glyph)?;
            area.draw(&Text::new(
                label.clone(),
                (x + 28, y),
                text_style(LEGEND_SIZE, &INK, HPos::Left, VPos::Center),
            ))
            .map_err(chart_error)?;
            x += 28 + (label.chars().count() as f64 * 6.6) as i32 + 26;
        }
    }
    Ok(())
}

/// Names left of a chart's axis line, in pixels, at lane or row `y`s.
fn row_names<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    names: impl Iterator<Item = (String, i32)>,
    size: f64,
) -> io::Result<()> {
    let top = area.get_base_pixel().1;
    for (name, y) in names {
        area.draw(&Text::new(
            name,
            (Y_AREA as i32 - NAME_GAP, y - top),
            text_style(size, &INK, HPos::Right, VPos::Center),
        ))
        .map_err(|e| io::Error::other(format!("drawing a chart: {e:?}")))?;
    }
    Ok(())
}

/// The strip: fault rows, then the table's row.
fn draw_strip(
    area: &DrawingArea<SVGBackend<'_>, Shift>,
    t: &ClusterTimeline,
    rows: usize,
    placed: &[(usize, usize)],
    end: f64,
) -> io::Result<()> {
    let total = rows as f64 + 1.0;
    let mut chart = ChartBuilder::on(area)
        .margin_left(0)
        .margin_right(MARGIN_RIGHT)
        .margin_top(6)
        .margin_bottom(4)
        .y_label_area_size(Y_AREA)
        .build_cartesian_2d(0.0..end, 0.0..total)
        .map_err(chart_error)?;
    chart
        .configure_mesh()
        .disable_mesh()
        .disable_x_axis()
        .y_labels(0)
        .draw()
        .map_err(chart_error)?;
    let y_of = |row: f64| total - row - 1.0;
    let names = [
        ("faults".to_string(), 0.0),
        ("table".to_string(), rows as f64),
    ]
    .into_iter()
    .map(|(name, row)| (name, chart.backend_coord(&(0.0, y_of(row) + 0.5)).1));
    row_names(area, names, LEGEND_SIZE)?;
    let plot_px = f64::from(WIDTH - Y_AREA - MARGIN_RIGHT);
    let mut bars = Vec::new();
    for &(row, i) in placed {
        bars.push((y_of(row as f64), &t.faults[i]));
    }
    for f in t.faults.iter().filter(|f| FaultKind::is_table(f.kind)) {
        bars.push((y_of(rows as f64), f));
    }
    for (y, f) in bars {
        let (s, e) = (
            f.window.start.as_secs_f64(),
            f.window.end.as_secs_f64().min(end),
        );
        let fill = match f.kind {
            FaultKind::TableOutage => TABLE_OUT,
            FaultKind::SlowTable => TABLE_SLOW,
            FaultKind::Crash => CRASH_FILL,
            _ => FAULT_FILL,
        };
        chart
            .draw_series(std::iter::once(Rectangle::new(
                [(s, y + 0.1), (e.max(s + end / 1_000.0), y + 0.9)],
                fill.filled(),
            )))
            .map_err(chart_error)?;
        // In the table's row, what happened to it is enough.
        let label = match f.kind {
            FaultKind::TableOutage => "unreachable",
            FaultKind::SlowTable => "slow",
            _ => f.label.as_str(),
        };
        let px = (e - s) / end * plot_px;
        if px > label.chars().count() as f64 * 6.5 + 6.0 {
            chart
                .draw_series(std::iter::once(Text::new(
                    label.to_string(),
                    ((s + e) / 2.0, y + 0.5),
                    text_style(TICK_SIZE * 0.85, &WHITE, HPos::Center, VPos::Center),
                )))
                .map_err(chart_error)?;
        }
    }
    Ok(())
}

/// Opacity of a lag of `versions`.
fn lag_opacity(versions: u64) -> f64 {
    match versions {
        0 | 1 => 0.35,
        2 => 0.6,
        _ => 0.9,
    }
}

fn draw_lanes(
    area: &DrawingArea<SVGBackend<'_>, Shift>,
    t: &ClusterTimeline,
    lane_h: u32,
    end: f64,
) -> io::Result<()> {
    let n = t.lanes.len().max(1) as f64;
    let mut chart = ChartBuilder::on(area)
        .margin_left(0)
        .margin_right(MARGIN_RIGHT)
        .margin_top(4)
        .margin_bottom(4)
        .x_label_area_size(TIME_AXIS)
        .y_label_area_size(Y_AREA)
        .build_cartesian_2d(0.0..end, 0.0..n)
        .map_err(chart_error)?;
    let time = TimeAxis {
        low: 0.0,
        high: end,
        log: false,
    };
    let time_label = |v: &f64| time.label(*v);
    chart
        .configure_mesh()
        .disable_y_mesh()
        .y_labels(0)
        .x_labels(12)
        .x_desc(time.name("time"))
        .axis_desc_style((FONT, AXIS_NAME_SIZE))
        .label_style((FONT, TICK_SIZE))
        .x_label_formatter(&time_label)
        .light_line_style(TRANSPARENT)
        .bold_line_style(GRID)
        .draw()
        .map_err(chart_error)?;
    let base = |i: usize| n - 1.0 - i as f64;
    let name_size = if lane_h == LANE {
        LEGEND_SIZE
    } else {
        TICK_SIZE * 0.8
    };
    let names: Vec<(String, i32)> = t
        .lanes
        .iter()
        .enumerate()
        .map(|(i, l)| {
            (
                l.name.clone(),
                chart.backend_coord(&(0.0, base(i) + 0.48)).1,
            )
        })
        .collect();
    row_names(area, names.into_iter(), name_size)?;
    let (plot_w, plot_h) = chart.plotting_area().dim_in_pixel();
    let px_x = end / f64::from(plot_w.max(1));
    let px_y = n / f64::from(plot_h.max(1));
    // The table unreachable: through every lane, behind everything.
    for f in t.faults.iter().filter(|f| f.kind == FaultKind::TableOutage) {
        let (s, e) = (
            f.window.start.as_secs_f64(),
            f.window.end.as_secs_f64().min(end),
        );
        chart
            .draw_series(std::iter::once(Rectangle::new(
                [(s, 0.0), (e, n)],
                TABLE_OUT_SHADE.filled(),
            )))
            .map_err(chart_error)?;
    }
    for (i, lane) in t.lanes.iter().enumerate() {
        draw_lane(
            &mut chart,
            lane,
            base(i),
            (px_x, px_y),
            lane_h,
            t.duration,
            plot_w,
        )?;
    }
    Ok(())
}

type LaneChart<'a, 'b> = ChartContext<
    'a,
    SVGBackend<'b>,
    Cartesian2d<plotters::coord::types::RangedCoordf64, plotters::coord::types::RangedCoordf64>,
>;

fn draw_lane(
    chart: &mut LaneChart<'_, '_>,
    lane: &Lane,
    y: f64,
    (px_x, px_y): (f64, f64),
    lane_h: u32,
    duration: Nanos,
    plot_w: u32,
) -> io::Result<()> {
    let end = duration.as_secs_f64().max(1e-9);
    let secs = |t: Nanos| t.as_secs_f64().min(end);
    let span = |w: &Window, (lo, hi): (f64, f64), style: ShapeStyle| {
        Rectangle::new([(secs(w.start), y + lo), (secs(w.end), y + hi)], style)
    };
    chart
        .draw_series(
            lane.bands
                .iter()
                .map(|b| span(&b.window, BAND_Y, state_colour(b.state).filled())),
        )
        .map_err(chart_error)?;
    let outline = (BAND_Y.0 - 0.03, BAND_Y.1 + 0.03);
    chart
        .draw_series(
            lane.faults
                .iter()
                .map(|w| span(w, outline, INK.stroke_width(1))),
        )
        .map_err(chart_error)?;
    let suspected: Vec<(f64, f64)> = lane
        .suspected
        .iter()
        .map(|w| (secs(w.start), secs(w.end)))
        .collect();
    chart
        .draw_series(
            widen(&suspected, MIN_MARK_PX * px_x)
                .into_iter()
                .map(|(s, e)| {
                    Rectangle::new(
                        [(s, y + SUSPECT_Y.0), (e.min(end), y + SUSPECT_Y.1)],
                        SUSPECTED.filled(),
                    )
                }),
        )
        .map_err(chart_error)?;
    for (s, e, lag) in lag_columns(&lane.lag, duration, plot_w) {
        chart
            .draw_series(std::iter::once(Rectangle::new(
                [(s, y + LAG_Y.0), (e, y + LAG_Y.1)],
                LAG.mix(lag_opacity(lag)).filled(),
            )))
            .map_err(chart_error)?;
    }
    let mark = if lane_h == LANE { 5.0 } else { 3.5 };
    let small = if lane_h == LANE {
        TICK_SIZE * 0.8
    } else {
        TICK_SIZE * 0.65
    };
    for &(at, generation) in &lane.generations {
        let x = secs(at);
        chart
            .draw_series(std::iter::once(PathElement::new(
                vec![(x, y + 0.12), (x, y + 0.84)],
                INK.stroke_width(2),
            )))
            .map_err(chart_error)?;
        chart
            .draw_series(std::iter::once(Text::new(
                format!("#{generation}"),
                (x + 3.0 * px_x, y + 0.48),
                text_style(small, &INK, HPos::Left, VPos::Center),
            )))
            .map_err(chart_error)?;
    }
    let vote_y = y + (SUSPECT_Y.0 + SUSPECT_Y.1) / 2.0;
    let triangle = |at: Nanos| {
        let x = secs(at);
        vec![
            (x - mark * px_x, vote_y + mark * 0.8 * px_y),
            (x + mark * px_x, vote_y + mark * 0.8 * px_y),
            (x, vote_y - mark * 1.2 * px_y),
        ]
    };
    chart
        .draw_series(
            lane.votes
                .iter()
                .map(|&at| Polygon::new(triangle(at), VOTE.filled())),
        )
        .map_err(chart_error)?;
    chart
        .draw_series(lane.withheld.iter().map(|&at| {
            let mut p = triangle(at);
            p.push(p[0]);
            PathElement::new(p, VOTE.stroke_width(2))
        }))
        .map_err(chart_error)?;
    let mid = y + (BAND_Y.0 + BAND_Y.1) / 2.0;
    for &(at, false_positive) in &lane.declarations {
        let x = secs(at);
        if false_positive {
            let r = (mark + 1.5) as i32;
            chart
                .draw_series([
                    Circle::new((x, mid), r, FALSE_DEAD.filled()),
                    Circle::new((x, mid), r, INK.stroke_width(1)),
                ])
                .map_err(chart_error)?;
        } else {
            chart
                .draw_series(std::iter::once(Cross::new(
                    (x, mid),
                    mark as i32,
                    INK.stroke_width(2),
                )))
                .map_err(chart_error)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::fixture::synthetic;
    use super::*;

    #[test]
    fn the_timeline_is_deterministic_and_keyed() {
        let (o, log) = synthetic(20, 1, "classic", 0);
        let t = ClusterTimeline::of(&o, &log);
        let svg = cluster_timeline_svg(&t).unwrap();
        assert!(svg.starts_with("<svg data-chart=\"timeline\""));
        for key in [
            "declared Dead, still running",
            "false declaration",
            "table unreachable",
        ] {
            assert!(svg.contains(key), "{key}");
        }
        // Lanes are named, generations labelled, the table row is there.
        assert!(svg.contains(">\nn12\n</text>") && svg.contains(">\n#1\n</text>"));
        assert!(svg.contains(">\nunreachable\n</text>"));
        assert_eq!(svg, cluster_timeline_svg(&t).unwrap());
    }
}
