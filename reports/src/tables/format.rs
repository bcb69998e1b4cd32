//! The number formats of the CSV files (see [`super`]): fixed, so that files
//! diff cleanly between versions and machines.

use fdlab_protocol::time::{NANOS_PER_MILLI, NANOS_PER_SEC};
use fdlab_protocol::Nanos;

/// Milliseconds with 3 decimals, rounded to the nearest microsecond in integers.
pub(crate) fn ms(t: Nanos) -> String {
    let us = (u128::from(t.0) + 500) / 1_000;
    format!("{}.{:03}", us / 1_000, us % 1_000)
}

pub(crate) fn opt_ms(t: Option<Nanos>) -> String {
    t.map_or_else(String::new, ms)
}

pub(crate) fn opt_ms_f64(ns: Option<f64>) -> String {
    ns.map_or_else(String::new, |v| {
        format!("{:.3}", v / NANOS_PER_MILLI as f64 + 0.0)
    })
}

/// A sum of nanoseconds as seconds with 3 decimals.
pub(crate) fn seconds(ns: u128) -> String {
    let ms = (ns + NANOS_PER_MILLI as u128 / 2) / NANOS_PER_MILLI as u128;
    format!("{}.{:03}", ms / 1_000, ms % 1_000)
}

/// A sum of nanoseconds as hours with 6 decimals.
pub(crate) fn hours(ns: u128) -> String {
    format!("{:.6}", ns as f64 / (3_600.0 * NANOS_PER_SEC as f64))
}

pub(crate) fn opt(v: Option<f64>, decimals: usize) -> String {
    // `+ 0.0` turns a -0.0 into 0.0.
    v.map_or_else(String::new, |v| format!("{:.*}", decimals, v + 0.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn number_formats() {
        assert_eq!(ms(Nanos(1_234_567_890)), "1234.568");
        assert_eq!(ms(Nanos(999_999_999_500)), "1000000.000");
        assert_eq!(ms(Nanos::ZERO), "0.000");
        assert_eq!(seconds(2_499_600_000), "2.500");
        assert_eq!(hours(1_800_000_000_000), "0.500000");
        assert_eq!(opt(Some(-0.0), 3), "0.000");
        assert_eq!(opt(None, 3), "");
    }
}
