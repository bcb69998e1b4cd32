//! How the summary's sentences say figures and ratios.

use fdlab_protocol::Nanos;

/// A duration for a sentence, two significant figures at most past the
/// point: `2.5 s`, `580 ms`, `31 ms`.
pub fn duration(d: Nanos) -> String {
    let secs = d.as_secs_f64();
    if secs >= 10.0 {
        format!("{secs:.0} s")
    } else if secs >= 1.0 {
        format!("{secs:.1} s")
    } else {
        format!("{:.0} ms", secs * 1e3)
    }
}

/// Two durations for one sentence, as [`duration`] says them unless that
/// would make them look equal: then both to the millisecond.
pub fn durations(a: Nanos, b: Nanos) -> (String, String) {
    let (ta, tb) = (duration(a), duration(b));
    if ta == tb && a != b {
        let precise = |d: Nanos| format!("{:.3} s", d.as_secs_f64());
        (precise(a), precise(b))
    } else {
        (ta, tb)
    }
}

/// A rate for a sentence, two significant figures below 10: `0`, `0.42`,
/// `0.0043`, `5.3`, `192`.
pub fn figure(v: f64) -> String {
    if v == 0.0 {
        "0".into()
    } else if v >= 10.0 {
        format!("{v:.0}")
    } else if v >= 1.0 {
        format!("{v:.1}")
    } else {
        // Two significant figures: 0.42, 0.042, 0.0042.
        let decimals = (1.0 - v.log10().floor()).clamp(2.0, 9.0) as usize;
        format!("{v:.decimals$}")
    }
}

/// How many times `a` is `b`, as a multiplier: `4.8×`, `12×`.
pub fn times(a: f64, b: f64) -> String {
    debug_assert!(a > 0.0 && b > 0.0);
    let r = a / b;
    if r >= 9.95 {
        format!("{r:.0}×")
    } else {
        format!("{r:.1}×")
    }
}

/// `a` as a share of `b` when `a` is the smaller: `1/10 of`, `0.62× of`
/// ("at 1/10 of its messages").
pub fn fraction(a: f64, b: f64) -> String {
    debug_assert!(a > 0.0 && b > 0.0 && a <= b);
    let r = a / b;
    if r <= 0.5 {
        format!("1/{:.0} of", 1.0 / r)
    } else {
        format!("{r:.2}× of")
    }
}

/// Names as the summary quotes them: `` `a` ``, `` `a` and `b` ``,
/// `` `a`, `b` and `c` ``.
pub fn names<S: AsRef<str>>(names: &[S]) -> String {
    let quoted: Vec<String> = names.iter().map(|n| format!("`{}`", n.as_ref())).collect();
    match quoted.as_slice() {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn figures_and_ratios_read_well() {
        assert_eq!(duration(Nanos::from_millis(2_497)), "2.5 s");
        assert_eq!(duration(Nanos::from_millis(576)), "576 ms");
        assert_eq!(duration(Nanos::from_secs(13)), "13 s");
        assert_eq!(times(2.5, 0.52), "4.8×");
        assert_eq!(times(9.0, 0.5), "18×");
        assert_eq!(fraction(0.89, 8.94), "1/10 of");
        assert_eq!(fraction(0.7, 0.9), "0.78× of");
        assert_eq!(names(&["a", "b", "c"]), "`a`, `b` and `c`");
        assert_eq!(figure(192.4), "192");
        assert_eq!(figure(5.34), "5.3");
        assert_eq!(figure(0.0043), "0.0043");
        assert_eq!(figure(0.42), "0.42");
        let (a, b) = durations(Nanos::from_millis(12_900), Nanos::from_millis(13_100));
        assert_eq!((a.as_str(), b.as_str()), ("12.900 s", "13.100 s"));
    }
}
