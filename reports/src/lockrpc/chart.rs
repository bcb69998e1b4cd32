//! Per lock-RPC scenario: the time to stop using a dead peer (x) against
//! evictions of live peers per hour (y), one point per policy: down and
//! to the left is better. With no dead peer the x axis is the lock
//! latency p99 instead. Drawn as plain SVG: a linear x axis, a log y
//! axis (log10(1 + y): policies differ by orders of magnitude), a legend.

use std::fmt::Write as _;

use super::metrics::{LockrpcMetrics, LockrpcSummary};
use crate::charts::labels::{place, Label};
use crate::charts::{xml_escape, Chart, Palette};

/// The chart's kind, as tagged in the SVG (`data-chart="lockrpc"`).
pub const LOCKRPC: &str = "lockrpc";
/// Canvas size, pixels.
const WIDTH: f64 = 720.0;
const HEIGHT: f64 = 440.0;
/// Plot margins, pixels.
const LEFT: f64 = 80.0;
const RIGHT: f64 = 170.0;
const TOP: f64 = 50.0;
const BOTTOM: f64 = 60.0;
const TICKS: usize = 5;
/// Font size of a point's name, px.
const NAME_SIZE: f64 = 11.0;

/// What stands in for the chart when no policy ran.
pub const NOTHING: &str = "No policy ran: nothing to chart.";

fn y_of(s: &LockrpcSummary) -> f64 {
    s.live_evictions_per_hour()
}

/// A round step near `span / TICKS` (x axis).
fn step(span: f64) -> f64 {
    let raw = (span / TICKS as f64).max(f64::MIN_POSITIVE);
    let p = 10f64.powf(raw.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * p)
        .find(|&s| s >= raw)
        .unwrap_or(10.0 * p)
}

/// The chart of one lock-RPC scenario, or the line that stands in for it.
pub fn lockrpc_chart_svg(m: &LockrpcMetrics, palette: &Palette) -> Chart {
    if m.summary.is_empty() {
        return Chart::Nothing(NOTHING.to_string());
    }
    let dead = m.summary.iter().any(|s| s.stop_mean.is_some());
    let (x_name, title, x_of): (&str, &str, fn(&LockrpcSummary) -> f64) = if dead {
        (
            "time to stop using a dead peer (s)",
            "dead-peer traffic against live-peer evictions",
            |s| s.stop_mean.map_or(0.0, |t| t.as_secs_f64()),
        )
    } else {
        (
            "lock latency p99 (ms); no peer was dead",
            "lock latency p99 against live-peer evictions",
            |s| s.latency_p99.map_or(0.0, |t| t.as_millis_f64()),
        )
    };
    let xs: Vec<f64> = m.summary.iter().map(x_of).collect();
    let ys: Vec<f64> = m.summary.iter().map(y_of).collect();
    // Headroom of a tenth past the largest x, then a round top.
    let x_max = xs.iter().cloned().fold(0.0, f64::max).max(1e-9) * 1.1;
    let x_step = step(x_max);
    let x_top = x_step * ((x_max / x_step).floor() + 1.0);
    // y on a log scale (log10(1 + y)): policies differ by orders of magnitude.
    let decades = ys
        .iter()
        .map(|&y| (1.0 + y).log10())
        .fold(1.0, f64::max)
        .ceil();
    let (pw, ph) = (WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM);
    let px = |x: f64| LEFT + pw * x / x_top;
    let py = |y: f64| TOP + ph * (1.0 - (1.0 + y).log10() / decades);
    let mut svg = String::new();
    let _ = writeln!(
        svg,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{WIDTH}\" height=\"{HEIGHT}\" viewBox=\"0 0 {WIDTH} {HEIGHT}\" data-chart=\"{LOCKRPC}\" font-family=\"sans-serif\">"
    );
    let _ = writeln!(svg, "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>");
    let _ = writeln!(
        svg,
        "<text x=\"{}\" y=\"24\" font-size=\"15\" text-anchor=\"middle\">{}: {}</text>",
        WIDTH / 2.0,
        xml_escape(&m.scenario),
        title
    );
    // Grid and ticks.
    let mut i = 0.0;
    while i <= x_top + 1e-9 {
        let x = px(i);
        let _ = writeln!(svg, "<line x1=\"{x:.1}\" y1=\"{TOP}\" x2=\"{x:.1}\" y2=\"{:.1}\" stroke=\"#ddd\"/><text x=\"{x:.1}\" y=\"{:.1}\" font-size=\"12\" text-anchor=\"middle\">{}</text>", TOP + ph, TOP + ph + 16.0, fmt(i));
        i += x_step;
    }
    // Powers of ten only: a log axis has no 0 (a policy with no eviction
    // lies on the bottom edge, as the axis name says).
    let ticks = (0..=decades as i32).map(|k| 10f64.powi(k));
    for j in ticks.filter(|&v| (1.0 + v).log10() <= decades + 1e-9) {
        let y = py(j);
        let _ = writeln!(svg, "<line x1=\"{LEFT}\" y1=\"{y:.1}\" x2=\"{:.1}\" y2=\"{y:.1}\" stroke=\"#ddd\"/><text x=\"{:.1}\" y=\"{:.1}\" font-size=\"12\" text-anchor=\"end\">{}</text>", LEFT + pw, LEFT - 6.0, y + 4.0, fmt(j));
    }
    let _ = writeln!(svg, "<rect x=\"{LEFT}\" y=\"{TOP}\" width=\"{pw}\" height=\"{ph}\" fill=\"none\" stroke=\"#333\"/>");
    let _ = writeln!(
        svg,
        "<text x=\"{:.1}\" y=\"{:.1}\" font-size=\"13\" text-anchor=\"middle\">{}</text>",
        LEFT + pw / 2.0,
        HEIGHT - 18.0,
        xml_escape(x_name)
    );
    let _ = writeln!(
        svg,
        "<text transform=\"translate(20 {:.1}) rotate(-90)\" font-size=\"13\" text-anchor=\"middle\">evictions of live peers per hour (log scale; none: bottom edge)</text>",
        TOP + ph / 2.0
    );
    let mut names: Vec<Label> = Vec::with_capacity(m.summary.len());
    for (k, s) in m.summary.iter().enumerate() {
        let c = palette.colour(&s.policy);
        let (x, y) = (px(xs[k]), py(ys[k]));
        let _ = writeln!(
            svg,
            "<circle cx=\"{x:.1}\" cy=\"{y:.1}\" r=\"6\" fill=\"rgb({},{},{})\"><title>{}: x {:.3}, y {:.1}</title></circle>",
            c.0, c.1, c.2,
            xml_escape(&s.policy),
            xs[k],
            ys[k]
        );
        // Names of points in the right half go to their left.
        let right = x > LEFT + pw / 2.0;
        names.push(Label {
            x: if right { x - 9.0 } else { x + 9.0 },
            y: y - 8.0,
            chars: s.policy.chars().count(),
            size: NAME_SIZE,
            ends_at_x: right,
        });
        let ly = TOP + 16.0 + 20.0 * k as f64;
        let _ = writeln!(
            svg,
            "<circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"6\" fill=\"rgb({},{},{})\"/><text x=\"{:.1}\" y=\"{:.1}\" font-size=\"12\">{}</text>",
            LEFT + pw + 20.0,
            ly - 4.0,
            c.0, c.1, c.2,
            LEFT + pw + 32.0,
            ly,
            xml_escape(&s.policy)
        );
    }
    // The names, nudged apart where points are close.
    for ((name, s), y) in names.iter().zip(&m.summary).zip(place(&names)) {
        let anchor = if name.ends_at_x { "end" } else { "start" };
        let _ = writeln!(
            svg,
            "<text x=\"{:.1}\" y=\"{y:.1}\" font-size=\"{NAME_SIZE}\" fill=\"#333\" text-anchor=\"{anchor}\">{}</text>",
            name.x,
            xml_escape(&s.policy)
        );
    }
    svg.push_str("</svg>\n");
    Chart::Svg(svg)
}

fn fmt(v: f64) -> String {
    if v == 0.0 || v >= 10.0 {
        format!("{v:.0}")
    } else if v >= 1.0 {
        format!("{v:.1}").trim_end_matches(".0").to_string()
    } else {
        format!("{v:.2}")
    }
}

#[cfg(test)]
mod tests {
    use fdlab_protocol::Nanos;

    use super::*;
    use crate::lockrpc::metrics::LockrpcSummary;

    /// Three policies with no live-peer eviction and p99s within a
    /// millisecond of each other: the slow-peer scenario's crowd.
    fn crowd() -> LockrpcMetrics {
        let policy = |name: &str, p99_us: u64| LockrpcSummary {
            policy: name.into(),
            latency_p99: Some(Nanos(p99_us * 1_000)),
            run_time: Nanos(60_000_000_000),
            ..LockrpcSummary::default()
        };
        LockrpcMetrics {
            scenario: "crowd".into(),
            servers: 4,
            clients: 8,
            seeds: 1,
            summary: vec![
                policy("rustfs", 8_400),
                policy("rustfs-breaker", 8_300),
                policy("dsync", 9_000),
            ],
        }
    }

    /// The `(y, text)` of every tick label of the y axis.
    fn y_ticks(svg: &str) -> Vec<String> {
        svg.lines()
            .filter(|l| l.contains("text-anchor=\"end\">") && l.contains("<line"))
            .map(|l| {
                l.rsplit("\">")
                    .next()
                    .unwrap()
                    .trim_end_matches("</text>")
                    .to_string()
            })
            .collect()
    }

    #[test]
    fn the_log_axis_has_no_zero_and_close_names_do_not_overlap() {
        let chart = lockrpc_chart_svg(&crowd(), &Palette::default());
        let svg = chart.svg().unwrap();
        let ticks = y_ticks(svg);
        assert_eq!(ticks, ["1"], "{svg}");
        // The three names: one line apart, none on another.
        let names: Vec<f64> = ["rustfs", "rustfs-breaker", "dsync"]
            .iter()
            .map(|n| {
                let line = svg
                    .lines()
                    .find(|l| l.contains("fill=\"#333\"") && l.ends_with(&format!(">{n}</text>")))
                    .unwrap_or_else(|| panic!("{n} not named: {svg}"));
                let y = line
                    .split("y=\"")
                    .nth(1)
                    .unwrap()
                    .split('"')
                    .next()
                    .unwrap();
                y.parse().unwrap()
            })
            .collect();
        for (i, a) in names.iter().enumerate() {
            for b in &names[i + 1..] {
                assert!((a - b).abs() >= NAME_SIZE, "{names:?}");
            }
        }
    }
}
