//! `--vary KEY=SPEC`: one dimension of a sweep.
//!
//! `KEY` is `DETECTOR.PARAM`, where `DETECTOR` is a detector name of the
//! scenario or a detector kind, and `PARAM` a key of that detector (dotted for
//! the stages of a `two-stage` detector: `two-stage.fast.decay`). `SPEC` is
//! - a list: `1,2,4,8` or `100ms,1s,3s`;
//! - a linear range with a step, both ends included: `0.80..0.99:0.01`,
//!   `1s..5s:500ms`;
//! - a geometric range with a factor: `100ms..10s:x2`;
//! - a log range of N points, both ends included: `0.5..16:log11`.
//!
//! Values keep the exactness of their notation: durations are integer
//! nanoseconds, and numbers of a linear range are printed with the decimals
//! of its notation (`0.8 + 3 × 0.01` is `0.83`, not `0.8300000000000001`).

use crate::detector_spec::parse_arg_value;
use crate::excerpt::{bounded, excerpt, excerpt_to, KEY_CHARS};
use fdlab_protocol::Nanos;
use toml::Value;

/// Most values one `--vary` may expand to.
pub const MAX_VALUES: usize = 100_000;

/// One parameter and the values it takes.
#[derive(Clone, Debug, PartialEq)]
pub struct Dimension {
    /// The `--vary` argument as given, for error messages and the plan file.
    pub arg: String,
    /// The detector part of the key (a name or a kind).
    pub detector: String,
    /// The parameter, dotted for nested keys.
    pub param: String,
    /// The values as text (how the sweep's outputs show them).
    pub labels: Vec<String>,
    /// The same values as the detector table takes them.
    pub values: Vec<Value>,
}

/// Parses one `--vary KEY=SPEC`.
pub fn parse_vary(arg: &str) -> Result<Dimension, String> {
    let shown = excerpt_to(arg, KEY_CHARS);
    let err = |problem: String| format!("--vary {shown}: {problem}");
    let (key, spec) = arg
        .split_once('=')
        .ok_or_else(|| err("expected KEY=SPEC, e.g. phi-accrual.threshold=4,8,12".into()))?;
    let (detector, param) = key.trim().split_once('.').ok_or_else(|| {
        err(format!(
            "`{}` is not DETECTOR.PARAM (e.g. phi-accrual.threshold)",
            excerpt(key)
        ))
    })?;
    if detector.is_empty() || param.is_empty() || param.ends_with('.') {
        return Err(err(format!("`{}` is not DETECTOR.PARAM", excerpt(key))));
    }
    if param == "kind" || param == "name" || param.ends_with(".kind") {
        return Err(err(format!(
            "`{}` can not be swept; sweep a detector's parameters",
            excerpt(param)
        )));
    }
    let labels = expand(spec.trim()).map_err(err)?;
    if labels.is_empty() {
        return Err(err("the range is empty".into()));
    }
    if labels.len() > MAX_VALUES {
        return Err(err(format!(
            "{} values; at most {MAX_VALUES}",
            labels.len()
        )));
    }
    let values = labels
        .iter()
        .map(|l| parse_arg_value(param, l).map_err(|e| err(e.to_string())))
        .collect::<Result<_, _>>()?;
    Ok(Dimension {
        arg: arg.to_string(),
        detector: detector.to_string(),
        param: param.to_string(),
        labels,
        values,
    })
}

/// A range's end or step: a duration, or a plain number.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Quantity {
    Duration(Nanos),
    Number(f64),
}

fn quantity(text: &str) -> Result<Quantity, String> {
    let t = text.trim();
    if let Ok(x) = t.parse::<f64>() {
        if !x.is_finite() {
            return Err(format!("`{}` is not a finite number", excerpt(t)));
        }
        return Ok(Quantity::Number(x));
    }
    t.parse::<Nanos>().map(Quantity::Duration).map_err(|e| {
        bounded(&format!(
            "`{}` is neither a number nor a duration ({e})",
            excerpt(t)
        ))
    })
}

/// Decimals written after the point in `text` (`0.010` has 3).
fn decimals(text: &str) -> usize {
    text.trim().split_once('.').map_or(0, |(_, frac)| {
        frac.chars().take_while(char::is_ascii_digit).count()
    })
}

/// The values of a SPEC, as text.
fn expand(spec: &str) -> Result<Vec<String>, String> {
    let Some((ends, how)) = spec
        .split_once("..")
        .and_then(|(a, rest)| rest.split_once(':').map(|(b, how)| ((a, b), how)))
    else {
        if spec.contains("..") {
            return Err(format!(
                "`{}`: a range needs a step: A..B:STEP, A..B:xFACTOR or A..B:logN",
                excerpt(spec)
            ));
        }
        let items: Vec<String> = spec.split(',').map(|s| s.trim().to_string()).collect();
        if items.iter().any(String::is_empty) {
            return Err(format!("`{}` has an empty item", excerpt(spec)));
        }
        return Ok(items);
    };
    let (a_text, b_text) = ends;
    let (a, b) = (quantity(a_text)?, quantity(b_text)?);
    let how = how.trim();
    let shown = excerpt(how);
    if let Some(n) = how.strip_prefix("log") {
        let n: usize = n
            .parse()
            .map_err(|_| format!("`{shown}`: expected logN with N a whole number of points"))?;
        if n < 2 {
            return Err(format!("`{shown}`: a log range needs at least 2 points"));
        }
        if n > MAX_VALUES {
            return Err(format!("`{shown}`: at most {MAX_VALUES} points"));
        }
        return log_range(a, b, n);
    }
    if let Some(f) = how.strip_prefix('x') {
        let factor: f64 = f
            .parse()
            .map_err(|_| format!("`{shown}`: expected xFACTOR with a number"))?;
        if !(factor.is_finite() && factor > 1.0) {
            return Err(format!("`{shown}`: the factor must be greater than 1"));
        }
        return geometric(a, b, factor);
    }
    let step = quantity(how)?;
    linear(a, b, step, (a_text, b_text, how))
}

fn check_order(a: f64, b: f64) -> Result<(), String> {
    if a > b {
        return Err(format!(
            "the range is empty: its start is after its end ({a} > {b})"
        ));
    }
    Ok(())
}

fn linear(
    a: Quantity,
    b: Quantity,
    step: Quantity,
    texts: (&str, &str, &str),
) -> Result<Vec<String>, String> {
    match (a, b, step) {
        (Quantity::Duration(a), Quantity::Duration(b), Quantity::Duration(step)) => {
            check_order(a.as_nanos() as f64, b.as_nanos() as f64)?;
            if step.is_zero() {
                return Err("the step must be positive".into());
            }
            let count = (b.as_nanos() - a.as_nanos()) / step.as_nanos() + 1;
            if count > MAX_VALUES as u64 {
                return Err(format!("{count} values; at most {MAX_VALUES}"));
            }
            Ok((0..count)
                .map(|k| Nanos(a.as_nanos() + k * step.as_nanos()).to_string())
                .collect())
        }
        (Quantity::Number(a), Quantity::Number(b), Quantity::Number(step)) => {
            check_order(a, b)?;
            if step.is_nan() || step <= 0.0 {
                return Err("the step must be positive".into());
            }
            // Whole steps that fit, allowing for the step's rounding in binary.
            let count = ((b - a) / step * (1.0 + 1e-9)).floor() + 1.0;
            if count > MAX_VALUES as f64 {
                return Err(format!("{count} values; at most {MAX_VALUES}"));
            }
            let places = decimals(texts.0)
                .max(decimals(texts.1))
                .max(decimals(texts.2));
            Ok((0..count as u64)
                .map(|k| format!("{:.*}", places, a + k as f64 * step))
                .collect())
        }
        _ => Err("the ends and the step must all be durations or all be numbers".into()),
    }
}

/// Six significant digits: enough for a parameter, short to read.
fn significant(x: f64) -> String {
    let text = format!("{:.6e}", x);
    let value: f64 = text.parse().unwrap_or(x);
    let mut s = format!("{value}");
    if !s.contains('.') && !s.contains('e') {
        s.push_str(".0");
    }
    s
}

fn log_range(a: Quantity, b: Quantity, n: usize) -> Result<Vec<String>, String> {
    let (lo, hi, duration) = ends_f64(a, b)?;
    if lo <= 0.0 {
        return Err("a log range needs a start above zero".into());
    }
    let ratio = hi / lo;
    Ok((0..n)
        .map(|k| {
            let x = if k + 1 == n {
                hi
            } else {
                lo * libm::pow(ratio, k as f64 / (n - 1) as f64)
            };
            show(x, duration)
        })
        .collect())
}

fn geometric(a: Quantity, b: Quantity, factor: f64) -> Result<Vec<String>, String> {
    let (lo, hi, duration) = ends_f64(a, b)?;
    if lo <= 0.0 {
        return Err("a geometric range needs a start above zero".into());
    }
    let mut out = Vec::new();
    let mut x = lo;
    while x <= hi * (1.0 + 1e-9) {
        if out.len() >= MAX_VALUES {
            return Err(format!("more than {MAX_VALUES} values"));
        }
        out.push(show(x, duration));
        x *= factor;
    }
    Ok(out)
}

fn ends_f64(a: Quantity, b: Quantity) -> Result<(f64, f64, bool), String> {
    let (lo, hi, duration) = match (a, b) {
        (Quantity::Duration(a), Quantity::Duration(b)) => {
            (a.as_nanos() as f64, b.as_nanos() as f64, true)
        }
        (Quantity::Number(a), Quantity::Number(b)) => (a, b, false),
        _ => return Err("both ends must be durations or both numbers".into()),
    };
    check_order(lo, hi)?;
    Ok((lo, hi, duration))
}

fn show(x: f64, duration: bool) -> String {
    if duration {
        Nanos::from_nanos_f64(x).to_string()
    } else {
        significant(x)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(spec: &str) -> Vec<String> {
        parse_vary(&format!("phi-accrual.threshold={spec}"))
            .unwrap()
            .labels
    }

    #[test]
    fn lists_and_ranges_expand_exactly() {
        assert_eq!(labels("1,2, 4,8"), ["1", "2", "4", "8"]);
        assert_eq!(
            labels("0.80..0.84:0.01"),
            ["0.80", "0.81", "0.82", "0.83", "0.84"]
        );
        assert_eq!(labels("0.80..0.99:0.01").len(), 20);
        assert_eq!(
            labels("1s..3s:500ms"),
            ["1s", "1500ms", "2s", "2500ms", "3s"]
        );
        assert_eq!(labels("100ms..1s:x2"), ["100ms", "200ms", "400ms", "800ms"]);
        assert_eq!(labels("1..16:log5"), ["1.0", "2.0", "4.0", "8.0", "16.0"]);
        assert_eq!(labels("8..8:1"), ["8"]);
        let d = parse_vary("two-stage.fast.decay=0.9,0.95").unwrap();
        assert_eq!(
            (d.detector.as_str(), d.param.as_str()),
            ("two-stage", "fast.decay")
        );
        assert_eq!(d.values, [Value::Float(0.9), Value::Float(0.95)]);
        let d = parse_vary("fixed.timeout=1s,2s").unwrap();
        assert_eq!(d.values[0], Value::String("1s".into()));
    }

    #[test]
    fn bad_specs_name_the_argument_and_the_problem() {
        for (arg, needle) in [
            ("threshold=8", "DETECTOR.PARAM"),
            ("phi-accrual.threshold", "KEY=SPEC"),
            ("phi-accrual.threshold=8..1:1", "empty"),
            ("phi-accrual.threshold=1..8:0", "positive"),
            ("phi-accrual.threshold=1..8", "needs a step"),
            ("phi-accrual.threshold=1s..8:1", "durations"),
            ("phi-accrual.threshold=0..8:log4", "above zero"),
            ("phi-accrual.threshold=1..8:log1", "at least 2"),
            ("phi-accrual.threshold=1..8:x1", "greater than 1"),
            ("phi-accrual.threshold=1,,2", "empty item"),
            ("phi-accrual.threshold=1..1000000000:1", "at most"),
            ("phi-accrual.kind=x", "can not be swept"),
            (
                "phi-accrual.threshold=abc..def:1",
                "neither a number nor a duration",
            ),
        ] {
            let e = parse_vary(arg).unwrap_err();
            assert!(e.starts_with(&format!("--vary {arg}: ")), "{e}");
            assert!(e.contains(needle), "{arg}: {e}");
        }
    }
}
