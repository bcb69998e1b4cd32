//! Time as the host hands it in: integer nanoseconds.
//!
//! A detector never reads a clock; every input carries the host's local time as a
//! [`Nanos`]. The same type measures spans (intervals, timeouts). Arithmetic
//! saturates instead of wrapping or panicking: a host whose clock steps backwards
//! gives an elapsed time of zero, never a huge one.

use std::fmt;
use std::ops::{Add, Sub};
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// An instant on a host's local clock, or a span, in nanoseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Nanos(pub u64);

/// Nanoseconds in one microsecond.
pub const NANOS_PER_MICRO: u64 = 1_000;
/// Nanoseconds in one millisecond.
pub const NANOS_PER_MILLI: u64 = 1_000_000;
/// Nanoseconds in one second.
pub const NANOS_PER_SEC: u64 = 1_000_000_000;
/// Nanoseconds in one minute.
pub const NANOS_PER_MINUTE: u64 = 60 * NANOS_PER_SEC;
/// Nanoseconds in one hour.
pub const NANOS_PER_HOUR: u64 = 60 * NANOS_PER_MINUTE;
/// The longest duration or instant any input may name: 2^62 ns, about 146
/// years. Two of them add up without overflowing a `u64` of nanoseconds, so
/// no deadline computed from inputs can wrap or saturate; beyond, a typo
/// (`18446744073709551615ns`) would re-arm timers at the end of time.
pub const MAX_DURATION: Nanos = Nanos(1 << 62);

/// 2^63: the doubles below it convert to `i64` without saturating.
const I64_RANGE_END: f64 = 9_223_372_036_854_775_808.0;

impl Nanos {
    /// The origin of a clock, and the empty span.
    pub const ZERO: Nanos = Nanos(0);
    /// The largest representable instant (about 584 years).
    pub const MAX: Nanos = Nanos(u64::MAX);

    pub const fn from_nanos(n: u64) -> Nanos {
        Nanos(n)
    }
    pub const fn from_micros(us: u64) -> Nanos {
        Nanos(us.saturating_mul(NANOS_PER_MICRO))
    }
    pub const fn from_millis(ms: u64) -> Nanos {
        Nanos(ms.saturating_mul(NANOS_PER_MILLI))
    }
    pub const fn from_secs(s: u64) -> Nanos {
        Nanos(s.saturating_mul(NANOS_PER_SEC))
    }
    /// Converts a (non-negative) floating number of nanoseconds, rounding to the
    /// nearest integer (halves up); NaN and negative values give zero, huge ones
    /// saturate.
    #[inline]
    pub fn from_nanos_f64(ns: f64) -> Nanos {
        // `as` truncates, saturates and maps NaN to 0; adding a half first rounds
        // in one instruction where `f64::round` is a library call on x86-64.
        let half_up = ns + 0.5;
        if half_up < I64_RANGE_END {
            // The signed conversion is one instruction on x86-64 (the
            // unsigned one a dozen), and every simulated delay takes this
            // path; the result is the same.
            Nanos((half_up as i64).max(0) as u64)
        } else {
            Nanos(half_up as u64)
        }
    }
    pub const fn as_nanos(self) -> u64 {
        self.0
    }
    pub fn as_nanos_f64(self) -> f64 {
        self.0 as f64
    }
    pub fn as_millis_f64(self) -> f64 {
        self.0 as f64 / NANOS_PER_MILLI as f64
    }
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / NANOS_PER_SEC as f64
    }
    pub const fn saturating_add(self, rhs: Nanos) -> Nanos {
        Nanos(self.0.saturating_add(rhs.0))
    }
    pub const fn saturating_sub(self, rhs: Nanos) -> Nanos {
        Nanos(self.0.saturating_sub(rhs.0))
    }
    pub const fn is_zero(self) -> bool {
        self.0 == 0
    }

    /// Parses a decimal number of milliseconds (`"1234"`, `"1234.5"`) exactly into
    /// nanoseconds; digits finer than a nanosecond are dropped. This is the time
    /// format of recorded event files.
    pub fn parse_millis(s: &str) -> Result<Nanos, ParseDurationError> {
        parse_decimal(s.trim(), NANOS_PER_MILLI).map(Nanos)
    }

    /// Writes the instant as decimal milliseconds with no trailing zeros
    /// (`1500000` ns -> `"1.5"`), the inverse of [`Nanos::parse_millis`].
    pub fn fmt_millis(self, out: &mut String) {
        use std::fmt::Write;
        let whole = self.0 / NANOS_PER_MILLI;
        let frac = self.0 % NANOS_PER_MILLI;
        let _ = write!(out, "{whole}");
        if frac != 0 {
            let digits = format!("{frac:06}");
            out.push('.');
            out.push_str(digits.trim_end_matches('0'));
        }
    }
}

impl Add for Nanos {
    type Output = Nanos;
    /// Saturating: an instant past the end of time stays at [`Nanos::MAX`].
    fn add(self, rhs: Nanos) -> Nanos {
        self.saturating_add(rhs)
    }
}

impl Sub for Nanos {
    type Output = Nanos;
    /// Saturating: a span can not be negative (a clock stepped back gives zero).
    fn sub(self, rhs: Nanos) -> Nanos {
        self.saturating_sub(rhs)
    }
}

/// Why a duration did not parse.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseDurationError(pub String);

impl fmt::Display for ParseDurationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ParseDurationError {}

/// Units accepted in durations (the whole suffix must match one of them).
const UNITS: [(&str, u64); 8] = [
    ("ns", 1),
    ("us", NANOS_PER_MICRO),
    ("µs", NANOS_PER_MICRO),
    ("ms", NANOS_PER_MILLI),
    ("s", NANOS_PER_SEC),
    ("m", NANOS_PER_MINUTE),
    ("min", NANOS_PER_MINUTE),
    ("h", NANOS_PER_HOUR),
];

impl FromStr for Nanos {
    type Err = ParseDurationError;

    /// Parses `500ms`, `1.5s`, `2m`, `250us`, `10ns`, `1h`; a bare `0` is zero.
    fn from_str(text: &str) -> Result<Nanos, ParseDurationError> {
        let s = text.trim();
        if s == "0" {
            return Ok(Nanos::ZERO);
        }
        let split = s
            .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '-' || c == '+'))
            .ok_or_else(|| {
                ParseDurationError(format!(
                    "`{text}` has no unit; write a duration like 500ms, 1.5s or 2m"
                ))
            })?;
        let (number, unit) = s.split_at(split);
        let unit = unit.trim();
        let scale = UNITS
            .iter()
            .find(|(name, _)| *name == unit)
            .map(|&(_, scale)| scale)
            .ok_or_else(|| {
                ParseDurationError(format!(
                    "`{text}` has an unknown unit `{unit}`; use ns, us, ms, s, m or h"
                ))
            })?;
        parse_decimal(number, scale)
            .map(Nanos)
            .map_err(|e| ParseDurationError(format!("`{text}`: {e}")))
    }
}

/// Parses a non-negative decimal `number` times `scale` exactly, in integers, so
/// that `1.1s` is 1_100_000_000 ns and not a float rounding of it.
fn parse_decimal(number: &str, scale: u64) -> Result<u64, ParseDurationError> {
    if number.starts_with('-') {
        return Err(ParseDurationError("must not be negative".into()));
    }
    let number = number.strip_prefix('+').unwrap_or(number);
    let (whole, frac) = number.split_once('.').unwrap_or((number, ""));
    let digits_ok = |d: &str| d.bytes().all(|b| b.is_ascii_digit());
    if (whole.is_empty() && frac.is_empty()) || !digits_ok(whole) || !digits_ok(frac) {
        return Err(ParseDurationError(format!("`{number}` is not a number")));
    }
    let too_big = || ParseDurationError(format!("`{number}` is too large"));
    let whole: u64 = if whole.is_empty() {
        0
    } else {
        whole.parse().map_err(|_| too_big())?
    };
    let mut value = whole.checked_mul(scale).ok_or_else(too_big)?;
    // Each fractional digit is worth scale / 10^position; stop once below 1 ns.
    let mut place = scale;
    for digit in frac.bytes() {
        place /= 10;
        if place == 0 {
            break;
        }
        value = value
            .checked_add(u64::from(digit - b'0') * place)
            .ok_or_else(too_big)?;
    }
    Ok(value)
}

impl fmt::Display for Nanos {
    /// The coarsest unit that shows the value exactly: `3s`, `1500ms`, `250us`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = self.0;
        if n == 0 {
            f.write_str("0s")
        } else if n.is_multiple_of(NANOS_PER_SEC) {
            write!(f, "{}s", n / NANOS_PER_SEC)
        } else if n.is_multiple_of(NANOS_PER_MILLI) {
            write!(f, "{}ms", n / NANOS_PER_MILLI)
        } else if n.is_multiple_of(NANOS_PER_MICRO) {
            write!(f, "{}us", n / NANOS_PER_MICRO)
        } else {
            write!(f, "{n}ns")
        }
    }
}

impl Serialize for Nanos {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Nanos {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Nanos, D::Error> {
        struct Visitor;
        impl serde::de::Visitor<'_> for Visitor {
            type Value = Nanos;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a duration like \"500ms\", \"1.5s\" or \"2m\"")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Nanos, E> {
                v.parse().map_err(E::custom)
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Nanos, E> {
                if v == 0 {
                    Ok(Nanos::ZERO)
                } else {
                    Err(E::custom(format!(
                        "`{v}` has no unit; write a duration like \"500ms\", \"1.5s\" or \"2m\""
                    )))
                }
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Nanos, E> {
                self.visit_i64(i64::try_from(v).unwrap_or(i64::MAX))
            }
            fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<Nanos, E> {
                Err(E::custom(format!(
                    "`{v}` has no unit; write a duration like \"500ms\", \"1.5s\" or \"2m\""
                )))
            }
        }
        deserializer.deserialize_any(Visitor)
    }
}

/// `x as f64`, the same value, through `i64` where it fits: one instruction
/// on x86-64 where a `u64` takes several (both conversions round correctly).
#[inline(always)]
pub(crate) fn u64_to_f64(x: u64) -> f64 {
    match i64::try_from(x) {
        Ok(signed) => signed as f64,
        Err(_) => x as f64,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// The conversion through `i64` is `as f64`, bit for bit.
        #[test]
        fn u64_to_f64_is_as(x in any::<u64>(), shift in 0u32..64) {
            for v in [x, x >> shift, u64::MAX, 1 << 63, (1 << 63) - 1, 0] {
                prop_assert_eq!(u64_to_f64(v).to_bits(), (v as f64).to_bits(), "{}", v);
            }
        }
    }

    #[test]
    fn parses_the_spec_examples_exactly() {
        assert_eq!("500ms".parse::<Nanos>().unwrap(), Nanos::from_millis(500));
        assert_eq!("1.5s".parse::<Nanos>().unwrap(), Nanos::from_millis(1500));
        assert_eq!("2m".parse::<Nanos>().unwrap(), Nanos::from_secs(120));
        assert_eq!("1.1s".parse::<Nanos>().unwrap(), Nanos(1_100_000_000));
        assert_eq!("250us".parse::<Nanos>().unwrap(), Nanos::from_micros(250));
        assert_eq!("7ns".parse::<Nanos>().unwrap(), Nanos(7));
        assert_eq!("1h".parse::<Nanos>().unwrap(), Nanos::from_secs(3600));
        assert_eq!("0".parse::<Nanos>().unwrap(), Nanos::ZERO);
        assert_eq!(".5s".parse::<Nanos>().unwrap(), Nanos::from_millis(500));
    }

    #[test]
    fn rejects_bad_durations_with_a_reason() {
        for bad in [
            "-1s",
            "5",
            "5 parsecs",
            "1.2.3s",
            "s",
            "",
            "99999999999999h",
        ] {
            let err = bad.parse::<Nanos>().unwrap_err();
            assert!(!err.0.is_empty(), "{bad}");
        }
        assert!("-1s".parse::<Nanos>().unwrap_err().0.contains("negative"));
        assert!("5".parse::<Nanos>().unwrap_err().0.contains("unit"));
    }

    #[test]
    fn millis_round_trip() {
        for text in ["0", "1", "1.5", "1234.000001", "17.25"] {
            let n = Nanos::parse_millis(text).unwrap();
            let mut out = String::new();
            n.fmt_millis(&mut out);
            assert_eq!(out, text);
        }
        assert_eq!(Nanos::parse_millis("1.0").unwrap(), Nanos::from_millis(1));
        assert!(Nanos::parse_millis("1e3").is_err());
        assert!(Nanos::parse_millis("-4").is_err());
    }

    #[test]
    fn display_round_trips_through_parse() {
        for n in [0, 1, 1_000, 1_500_000, 3 * NANOS_PER_SEC, 123_456_789] {
            let text = Nanos(n).to_string();
            assert_eq!(text.parse::<Nanos>().unwrap(), Nanos(n), "{text}");
        }
    }

    #[test]
    fn float_nanos_round_halves_up_and_saturate() {
        let cases = [
            (0.0, 0),
            (0.49, 0),
            (0.5, 1),
            (1_499.5, 1_500),
            (-3.0, 0),
            (f64::NAN, 0),
            (f64::NEG_INFINITY, 0),
            (9.223_372_036_854_775e18, 9_223_372_036_854_774_784),
            (1.0e19, 10_000_000_000_000_000_000),
            (f64::INFINITY, u64::MAX),
            (1.0e30, u64::MAX),
        ];
        for (ns, want) in cases {
            assert_eq!(Nanos::from_nanos_f64(ns), Nanos(want), "{ns}");
            // The same as the plain unsigned conversion.
            assert_eq!(Nanos::from_nanos_f64(ns), Nanos((ns + 0.5) as u64), "{ns}");
        }
    }

    #[test]
    fn arithmetic_saturates() {
        assert_eq!(Nanos(3) - Nanos(5), Nanos::ZERO);
        assert_eq!(Nanos::MAX + Nanos(1), Nanos::MAX);
    }
}
