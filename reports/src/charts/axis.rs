//! Time axes of the charts: which unit an axis is in, its ticks, and how a
//! time is written. An axis has one unit, named in its title, and its ticks
//! are bare numbers in it, so that a title never says seconds over ticks in
//! milliseconds; and no tick short of zero ever reads 0.

use plotters::coord::combinators::{BindKeyPoints, WithKeyPoints};
use plotters::prelude::*;

/// `v` with `decimals` decimals, trailing zeros (and a trailing point) cut.
fn trimmed(v: f64, decimals: usize) -> String {
    let text = format!("{v:.decimals$}");
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        text
    }
}

/// A time in seconds for a legend or a label, with its unit: few digits, in
/// the unit that reads best (`40 ns`, `12.5 µs`, `250 ms`, `1.5 s`, `2 min`),
/// so that no duration short of zero reads `0`.
pub fn fmt_seconds(s: f64) -> String {
    if !s.is_finite() {
        return "-".into();
    }
    if s == 0.0 {
        return "0".into();
    }
    // (unit, its length in s, decimals, the value from which the next unit
    // is used), smallest first. A value that would round up to that limit
    // is written in the next unit too (`1 s`, not `1000 ms`).
    const UNITS: [(&str, f64, usize, f64); 5] = [
        ("ns", 1e-9, 0, 1_000.0),
        ("µs", 1e-6, 1, 1_000.0),
        ("ms", 1e-3, 1, 1_000.0),
        ("s", 1.0, 2, 600.0),
        ("min", 60.0, 1, f64::INFINITY),
    ];
    let a = s.abs();
    for (unit, length, decimals, limit) in UNITS {
        let text = trimmed(s / length, decimals);
        if a / length < limit && text.trim_start_matches('-').parse::<f64>() != Ok(limit) {
            return format!("{text} {unit}");
        }
    }
    format!("{} min", trimmed(s / 60.0, 1))
}

/// A unit of time for a chart's axis: the axis title names it and every
/// tick is a bare number in it, so the two never disagree.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimeUnit {
    Ns,
    Us,
    Ms,
    S,
}

impl TimeUnit {
    /// Largest first.
    pub const ALL: [TimeUnit; 4] = [TimeUnit::S, TimeUnit::Ms, TimeUnit::Us, TimeUnit::Ns];

    pub fn symbol(self) -> &'static str {
        match self {
            TimeUnit::Ns => "ns",
            TimeUnit::Us => "µs",
            TimeUnit::Ms => "ms",
            TimeUnit::S => "s",
        }
    }

    /// Length of the unit, s.
    pub fn seconds(self) -> f64 {
        match self {
            TimeUnit::Ns => 1e-9,
            TimeUnit::Us => 1e-6,
            TimeUnit::Ms => 1e-3,
            TimeUnit::S => 1.0,
        }
    }

    /// `seconds` as a tick label in this unit.
    pub fn label(self, seconds: f64) -> String {
        fmt_number(seconds / self.seconds())
    }
}

/// Significant digits of a tick label: ticks are round numbers, this only
/// hides the binary noise of scaling them (`0.1 / 1e-3`).
const TICK_DIGITS: i32 = 3;

/// A number for a tick label: up to [`TICK_DIGITS`] significant digits,
/// never in exponent form, no trailing zeros (`0.00001`, `2.5`, `1000`).
pub fn fmt_number(v: f64) -> String {
    if v == 0.0 || !v.is_finite() {
        return if v.is_nan() {
            "-".into()
        } else {
            format!("{v}")
        };
    }
    let magnitude = v.abs().log10().floor() as i32;
    let decimals = (TICK_DIGITS - 1 - magnitude).clamp(0, 20) as usize;
    trimmed(v, decimals)
}

/// A time axis: linear from zero, or logarithmic where the values span more
/// than [`LOG_SPAN`] (one slow detector would otherwise squash the others
/// into the first pixels).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TimeAxis {
    pub low: f64,
    pub high: f64,
    pub log: bool,
}

/// Ratio of largest to smallest positive value above which a time axis is
/// logarithmic.
pub const LOG_SPAN: f64 = 8.0;

/// Ticks of a log axis over `[low, high]`: 1, 2, 5 × 10^k, or powers of ten
/// alone when that would be more than [`MAX_LOG_TICKS`], or even powers of
/// ten when those would be more than [`MAX_DECADE_TICKS`] (a dozen decades,
/// nanoseconds to seconds, would have labels touching). (plotters' own log
/// ticks start at the first power of ten and crowd near the next one.)
pub fn log_ticks(low: f64, high: f64) -> Vec<f64> {
    if !(low > 0.0 && high > low && high.is_finite()) {
        return Vec::new();
    }
    let ticks = |mantissas: &[f64]| -> Vec<f64> {
        let (first, last) = (low.log10().floor() as i32, high.log10().ceil() as i32);
        let mut out = Vec::new();
        for k in first..=last {
            for m in mantissas {
                // `m / 10^-k` for negative k keeps 0.5, 0.2 exact.
                let v = if k < 0 {
                    m / 10f64.powi(-k)
                } else {
                    m * 10f64.powi(k)
                };
                if v >= low && v <= high {
                    out.push(v);
                }
            }
        }
        out
    };
    let fine = ticks(&[1.0, 2.0, 5.0]);
    if fine.len() <= MAX_LOG_TICKS {
        return fine;
    }
    let decades = ticks(&[1.0]);
    if decades.len() <= MAX_DECADE_TICKS {
        return decades;
    }
    decades
        .into_iter()
        .filter(|v| (v.log10().round() as i64) % 2 == 0)
        .collect()
}

/// Most ticks on a log axis.
pub const MAX_LOG_TICKS: usize = 10;
/// Most ticks on a log axis of powers of ten.
pub const MAX_DECADE_TICKS: usize = 8;

/// A log coordinate over `axis` with [`log_ticks`].
pub(crate) fn log_coord(axis: &TimeAxis) -> WithKeyPoints<LogCoord<f64>> {
    let coord: LogCoord<f64> = (axis.low..axis.high).log_scale().into();
    coord.with_key_points(log_ticks(axis.low, axis.high))
}

impl TimeAxis {
    /// An axis covering `values` (seconds; non-finite ones ignored).
    pub fn covering(values: impl IntoIterator<Item = f64>) -> TimeAxis {
        let mut min_positive = f64::INFINITY;
        let mut max = 0.0f64;
        for v in values.into_iter().filter(|v| v.is_finite()) {
            max = max.max(v);
            if v > 0.0 {
                min_positive = min_positive.min(v);
            }
        }
        if max <= 0.0 || !min_positive.is_finite() {
            return TimeAxis {
                low: 0.0,
                high: 1.0,
                log: false,
            };
        }
        if max / min_positive > LOG_SPAN {
            TimeAxis {
                low: min_positive / 1.5,
                high: max * 1.5,
                log: true,
            }
        } else {
            TimeAxis {
                low: 0.0,
                high: max * 1.08,
                log: false,
            }
        }
    }

    /// `v` moved inside the axis (a zero on a log axis goes to its low end).
    pub fn clamp(&self, v: f64) -> f64 {
        v.clamp(self.low, self.high)
    }

    /// The unit of the axis. Linear: the largest in which the axis end is
    /// at least 1 (`0 … 300` ms, not `0 … 0.3` s). Log: the one whose
    /// longest tick label is shortest (10 µs to 3 s reads `0.01 … 1000` ms);
    /// on a tie, the larger.
    pub fn unit(&self) -> TimeUnit {
        if !self.log {
            return TimeUnit::ALL
                .into_iter()
                .find(|u| self.high >= u.seconds())
                .unwrap_or(TimeUnit::Ns);
        }
        let ticks = log_ticks(self.low, self.high);
        let longest = |u: TimeUnit| {
            ticks
                .iter()
                .map(|&t| u.label(t).chars().count())
                .max()
                .unwrap_or(0)
        };
        TimeUnit::ALL
            .into_iter()
            .min_by_key(|&u| longest(u))
            .unwrap_or(TimeUnit::S)
    }

    /// The tick label of `seconds`: a bare number in [`TimeAxis::unit`].
    pub fn label(&self, seconds: f64) -> String {
        self.unit().label(seconds)
    }

    /// The axis name with its unit and scale: `"… (ms)"` or
    /// `"… (ms, log scale)"`.
    pub fn name(&self, what: &str) -> String {
        let unit = self.unit().symbol();
        if self.log {
            format!("{what} ({unit}, log scale)")
        } else {
            format!("{what} ({unit})")
        }
    }
}

/// Room right of a chart's plot, px: half the widest tick label, so that
/// the last label on the time axis is never cut at the chart's edge.
pub const RIGHT_ROOM: u32 = 30;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_axis_goes_log_only_for_wide_spans() {
        let a = TimeAxis::covering([0.5, 1.0, 3.9]);
        assert!(!a.log);
        assert_eq!(a.low, 0.0);
        let a = TimeAxis::covering([0.0, 0.05, 3.0]);
        assert!(a.log);
        assert!(a.low < 0.05 && a.high > 3.0);
        assert_eq!(a.clamp(0.0), a.low);
        let a = TimeAxis::covering([0.0, f64::NAN]);
        assert_eq!((a.low, a.high, a.log), (0.0, 1.0, false));
        assert_eq!(a.name("T_D"), "T_D (s)");
    }

    #[test]
    fn a_linear_axis_is_in_the_largest_unit_its_end_reaches() {
        let a = TimeAxis::covering([0.1, 0.29]);
        assert_eq!((a.unit(), a.name("x").as_str()), (TimeUnit::Ms, "x (ms)"));
        assert_eq!(a.label(0.05), "50");
        assert_eq!(a.label(0.0), "0");
        let a = TimeAxis::covering([1.0, 2.0]);
        assert_eq!((a.unit(), a.label(0.2)), (TimeUnit::S, "0.2".to_string()));
        let a = TimeAxis::covering([400e-9, 800e-9]);
        assert_eq!(
            (a.unit(), a.label(200e-9)),
            (TimeUnit::Ns, "200".to_string())
        );
    }

    #[test]
    fn tick_numbers_lose_the_noise_of_scaling() {
        assert_eq!(fmt_number(1e-5 / 1e-3), "0.01");
        assert_eq!(fmt_number(0.1 / 1e-3), "100");
        assert_eq!(fmt_number(1e-8 / 1e-3), "0.00001");
        assert_eq!(fmt_number(2.5), "2.5");
        assert_eq!(fmt_number(10_000.0), "10000");
        assert_eq!(fmt_number(0.0), "0");
    }

    #[test]
    fn log_ticks_are_round_and_few() {
        assert_eq!(log_ticks(0.38, 15.0), vec![0.5, 1.0, 2.0, 5.0, 10.0]);
        assert_eq!(log_ticks(0.004, 0.03), vec![0.005, 0.01, 0.02]);
        assert_eq!(
            log_ticks(1e-4, 1e3),
            vec![1e-4, 1e-3, 1e-2, 1e-1, 1.0, 10.0, 100.0, 1000.0]
        );
        assert_eq!(log_ticks(1e-8, 30.0), vec![1e-8, 1e-6, 1e-4, 1e-2, 1.0]);
        assert!(log_ticks(0.0, 1.0).is_empty());
    }

    /// The axis title and the tick labels of `axis`, as the charts draw them.
    fn drawn(axis: &TimeAxis) -> (String, Vec<(f64, String)>) {
        let ticks = log_ticks(axis.low, axis.high);
        let labels = ticks.iter().map(|&v| (v, axis.label(v))).collect();
        (axis.name("T"), labels)
    }

    /// Checks that every label is a bare number which, in the unit named by
    /// the title, is its tick; returns the unit.
    fn labels_in_title_unit(axis: &TimeAxis) -> String {
        let (title, labels) = drawn(axis);
        let unit = title
            .split_once('(')
            .and_then(|(_, rest)| rest.split([',', ')']).next())
            .unwrap_or_default()
            .to_string();
        let seconds_per_unit = match unit.as_str() {
            "ns" => 1e-9,
            "µs" => 1e-6,
            "ms" => 1e-3,
            "s" => 1.0,
            "min" => 60.0,
            other => panic!("{title}: no time unit ({other:?})"),
        };
        assert!(!labels.is_empty(), "{title}");
        for (tick, label) in &labels {
            let value: f64 = label
                .parse()
                .unwrap_or_else(|_| panic!("{title}: tick {tick} s labelled {label:?}"));
            assert_ne!(value, 0.0, "{title}: tick {tick} s labelled 0");
            let error = (value * seconds_per_unit - tick).abs() / tick;
            assert!(error < 1e-9, "{title}: tick {tick} s labelled {label}");
        }
        unit
    }

    #[test]
    fn a_log_axis_from_10_us_to_3_s_has_no_zero_tick_and_labels_in_its_unit() {
        let axis = TimeAxis {
            low: 10e-6,
            high: 3.0,
            log: true,
        };
        assert_eq!(labels_in_title_unit(&axis), "ms");
        // Down to 10 ns: still no tick reads 0.
        let axis = TimeAxis {
            low: 10e-9,
            high: 30.0,
            log: true,
        };
        labels_in_title_unit(&axis);
        // Around a second: seconds.
        let axis = TimeAxis {
            low: 0.4,
            high: 12.0,
            log: true,
        };
        assert_eq!(labels_in_title_unit(&axis), "s");
    }

    #[test]
    fn seconds_read_well() {
        assert_eq!(fmt_seconds(0.0), "0");
        assert_eq!(fmt_seconds(0.25), "250 ms");
        assert_eq!(fmt_seconds(0.0005), "500 µs");
        // Nothing short of zero reads 0, and rounding never gives 1000 of a unit.
        assert_eq!(fmt_seconds(4e-8), "40 ns");
        assert_eq!(fmt_seconds(2.5e-7), "250 ns");
        assert_eq!(fmt_seconds(0.99999), "1 s");
        assert_eq!(fmt_seconds(0.00099999), "1 ms");
        assert_eq!(fmt_seconds(0.0009999), "999.9 µs");
        assert_eq!(fmt_seconds(1.5), "1.5 s");
        assert_eq!(fmt_seconds(3.0), "3 s");
        assert_eq!(fmt_seconds(150.0), "150 s");
        assert_eq!(fmt_seconds(900.0), "15 min");
        assert_eq!(fmt_seconds(f64::INFINITY), "-");
    }
}
