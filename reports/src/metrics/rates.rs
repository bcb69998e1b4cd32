//! Ratios and rates of exact integer totals, as floats; `None` where the
//! exposure is zero (nothing to measure), never a division by zero.

use fdlab_protocol::time::{NANOS_PER_HOUR, NANOS_PER_SEC};
use fdlab_protocol::Nanos;

pub(crate) fn mean_f64(samples: &[Nanos]) -> Option<f64> {
    if samples.is_empty() {
        return None;
    }
    let sum: u128 = samples.iter().map(|t| u128::from(t.0)).sum();
    Some(sum as f64 / samples.len() as f64)
}

pub(crate) fn ratio(part: u128, whole: u128) -> Option<f64> {
    (whole > 0).then(|| part as f64 / whole as f64)
}

pub(crate) fn rate_per_hour(count: u128, exposure_ns: u128) -> Option<f64> {
    (exposure_ns > 0).then(|| count as f64 / (exposure_ns as f64 / NANOS_PER_HOUR as f64))
}

pub(crate) fn per_second(count: u128, exposure_ns: u128) -> Option<f64> {
    (exposure_ns > 0).then(|| count as f64 / (exposure_ns as f64 / NANOS_PER_SEC as f64))
}
