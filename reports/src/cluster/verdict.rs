//! The verdict of a membership scenario, in sentences for the console: which
//! judge cost the cluster least in false declarations, which declared real
//! crashes fastest, and anything that must never happen.
//!
//! Only what the runs showed: a judge is named best only on a figure where
//! it differs from the others, and every sentence carries its figure.
//! With exactly two judges, one sentence says how many times one's false
//! declarations of healthy members are the other's, with its 95% interval
//! ([`super::compare`]; Fieller 1954, "Some problems in interval
//! estimation", J. R. Stat. Soc. B 16(2)), as a claim such as Lifeguard's
//! "fewer false positives than SWIM" is stated.

use super::compare::JudgeComparison;
use super::metrics::{ClusterMetrics, JudgeSummary};
use crate::metrics::RatioCi;

/// Seconds with one decimal.
fn secs(n: fdlab_protocol::Nanos) -> String {
    format!("{:.1} s", n.as_secs_f64())
}

/// The sentences of one membership scenario's verdict.
pub fn cluster_verdict(m: &ClusterMetrics) -> Vec<String> {
    let mut lines = Vec::new();
    let judges = &m.summary;
    if judges.is_empty() {
        return vec!["no run".into()];
    }
    for j in judges.iter().filter(|j| j.two_active_generations > 0) {
        lines.push(format!(
            "SAFETY: `{}` left a node with two generations Active in the table {} times",
            j.judge, j.two_active_generations
        ));
    }
    lines.push(best_line(judges));
    let falsely: Vec<&JudgeSummary> = judges.iter().filter(|j| j.false_declarations > 0).collect();
    if falsely.is_empty() {
        lines.push(format!(
            "no judge declared a live silo Dead ({} runs each)",
            judges[0].runs
        ));
    } else {
        for j in &falsely {
            let destroyed = j.mean_destroyed().map_or(String::new(), |d| {
                format!(", each costing {} of silo time", secs(d))
            });
            lines.push(format!(
                "`{}` declared a live silo Dead {} times in {} runs ({:.3} per node-hour{destroyed})",
                j.judge,
                j.false_declarations,
                j.runs,
                j.false_rate().unwrap_or(0.0),
            ));
        }
        let clean: Vec<&str> = judges
            .iter()
            .filter(|j| j.false_declarations == 0)
            .map(|j| j.judge.as_str())
            .collect();
        if !clean.is_empty() {
            lines.push(format!("no false declaration: `{}`", clean.join("`, `")));
        }
    }
    if let ([comparison], 2) = (m.comparisons.as_slice(), judges.len()) {
        lines.extend(healthy_ratio_line(comparison));
    }
    let crashes = judges.iter().map(|j| j.crashes).max().unwrap_or(0);
    if crashes > 0 {
        let mut timed: Vec<(&str, fdlab_protocol::Nanos)> = judges
            .iter()
            .filter_map(|j| j.declare.map(|d| (j.judge.as_str(), d.p50)))
            .collect();
        timed.sort_by_key(|&(name, p50)| (p50, name));
        if let (Some(first), Some(last)) = (timed.first(), timed.last()) {
            if timed.len() > 1 && first.1 != last.1 {
                lines.push(format!(
                    "crashes declared fastest by `{}` (median {} after the crash), slowest by `{}` ({})",
                    first.0,
                    secs(first.1),
                    last.0,
                    secs(last.1)
                ));
            } else {
                lines.push(format!(
                    "crashes declared a median {} after the crash",
                    secs(first.1)
                ));
            }
        }
        for j in judges.iter().filter(|j| j.never_declared() > 0) {
            lines.push(format!(
                "`{}` never declared {} of {} crashes before the run ended",
                j.judge,
                j.never_declared(),
                j.crashes
            ));
        }
    }
    lines
}

/// A ratio as `3.7×`: two significant digits (`12×`, `0.61×`).
fn times(ratio: f64) -> String {
    if ratio >= 9.95 {
        format!("{ratio:.0}×")
    } else if ratio >= 0.995 {
        format!("{ratio:.1}×")
    } else {
        format!("{ratio:.2}×")
    }
}

/// `20 seeds`, `1 seed`.
fn seeds_phrase(seeds: usize) -> String {
    format!("{seeds} seed{}", if seeds == 1 { "" } else { "s" })
}

/// The two judges' false declarations of healthy members, the judge with
/// the higher rate first: the ratio of their mean rates per node-hour over
/// the seeds both ran, the counts, and the 95% interval. `None` when no
/// seed was paired, or when neither judge declared any live silo (the
/// verdict has said so).
fn healthy_ratio_line(c: &JudgeComparison) -> Option<String> {
    if c.seeds == 0 {
        return None;
    }
    let h = c.false_healthy;
    let seeds = seeds_phrase(c.seeds);
    let (a, b) = (c.judge_a.as_str(), c.judge_b.as_str());
    match (h.a_count, h.b_count) {
        (0, 0) => {
            let f = c.false_declarations;
            (f.a_count + f.b_count > 0).then(|| {
                format!("neither `{a}` nor `{b}` declared a healthy member Dead ({seeds})")
            })
        }
        (n, 0) => Some(none_of_one(a, n, b, &seeds)),
        (0, n) => Some(none_of_one(b, n, a, &seeds)),
        (a_count, b_count) => {
            // Both made some, on paired seeds with node-time: both mean
            // rates are above zero.
            let ratio = h.ratio?;
            debug_assert!(ratio > 0.0);
            let (more, fewer, counts, ratio, ci) = if ratio >= 1.0 {
                (a, b, (a_count, b_count), ratio, h.ci)
            } else {
                (
                    b,
                    a,
                    (b_count, a_count),
                    1.0 / ratio,
                    h.ci.and_then(|ci| ci.reciprocal()),
                )
            };
            Some(format!(
                "`{more}` made {} as many false declarations of healthy members per node-hour as `{fewer}` ({} against {}; {})",
                times(ratio),
                counts.0,
                counts.1,
                interval_phrase(ci, &seeds)
            ))
        }
    }
}

/// `more` declared a healthy member Dead `n` times, `none` never.
fn none_of_one(more: &str, n: u64, none: &str, seeds: &str) -> String {
    let times = if n == 1 {
        "once".to_string()
    } else {
        format!("{n} times")
    };
    format!("`{more}` declared a healthy member Dead {times} and `{none}` never (the same {seeds})")
}

/// The 95% interval of a ratio of at least 1, in words.
fn interval_phrase(ci: Option<RatioCi>, seeds: &str) -> String {
    let Some(ci) = ci else {
        return "one seed: no interval".to_string();
    };
    let unclear = ci.low <= 1.0;
    match ci.high {
        Some(high) if unclear => format!(
            "95% interval over {seeds}: {} to {}, so not clearly more",
            times(ci.low),
            times(high)
        ),
        Some(high) => format!(
            "95% interval over {seeds}: {} to {}",
            times(ci.low),
            times(high)
        ),
        None if ci.low == 0.0 => {
            format!("these {seeds} are too few to bound the ratio")
        }
        None if unclear => format!(
            "95% interval over {seeds}: at least {}, with no upper bound, so not clearly more",
            times(ci.low)
        ),
        None => format!(
            "95% interval over {seeds}: at least {}; the interval has no upper bound with these seeds",
            times(ci.low)
        ),
    }
}

/// The judge that cost the cluster least: the fewest false declarations,
/// then the fewest crashes never declared, then the fastest median
/// declaration (judge order breaks a tie).
fn best_line(judges: &[JudgeSummary]) -> String {
    let key = |j: &JudgeSummary| {
        (
            j.false_declarations,
            j.never_declared(),
            j.declare.map_or(fdlab_protocol::Nanos::MAX, |d| d.p50),
        )
    };
    let best = judges
        .iter()
        .enumerate()
        .min_by_key(|(i, j)| (key(j), *i))
        .map(|(_, j)| j)
        .expect("judges");
    let crashes = match best.declare {
        Some(d) => format!(
            ", {}/{} crashes declared a median {} after the crash",
            best.declared,
            best.crashes,
            secs(d.p50)
        ),
        None if best.crashes > 0 => format!(", none of {} crashes declared", best.crashes),
        None => String::new(),
    };
    let tied = judges.iter().filter(|j| key(j) == key(best)).count();
    let tie = if tied > 1 {
        format!(" (tied with {} other judges on these figures)", tied - 1)
    } else {
        String::new()
    };
    format!(
        "least costly judge: `{}` ({} false declarations{crashes}){tie}",
        best.judge, best.false_declarations
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::fixture;

    use crate::cluster::compare::PairedRatio;
    use crate::metrics::ratio_ci95;

    /// `a` against `b` with these per-seed counts of false declarations of
    /// healthy members (as rates: one node-hour per run), and one more
    /// false declaration each of an impaired silo.
    fn compared(a: (&str, &[f64]), b: (&str, &[f64])) -> JudgeComparison {
        let ci = ratio_ci95(a.1, b.1);
        let count = |xs: &[f64]| xs.iter().sum::<f64>() as u64;
        let ratio = ci.and_then(|c| c.ratio);
        let healthy = PairedRatio {
            a_count: count(a.1),
            b_count: count(b.1),
            ratio,
            ci,
        };
        JudgeComparison {
            judge_a: a.0.into(),
            judge_b: b.0.into(),
            seeds: a.1.len(),
            false_healthy: healthy,
            false_declarations: PairedRatio {
                a_count: healthy.a_count + 1,
                b_count: healthy.b_count + 1,
                ..healthy
            },
            ..JudgeComparison::default()
        }
    }

    fn line(a: (&str, &[f64]), b: (&str, &[f64])) -> Option<String> {
        healthy_ratio_line(&compared(a, b))
    }

    #[test]
    fn two_judges_get_the_ratio_of_their_false_declarations_of_healthy_members() {
        // The report fixture: swim 6, 4, 8 against lifeguard 2, 1, 2 on the
        // same node-time: 3.6× in [1.7738, 8.8510] (worked in
        // report_tests).
        let m = super::super::report_tests::compared().metrics;
        let said = "`swim` made 3.6× as many false declarations of healthy members per node-hour as `lifeguard` (18 against 5; 95% interval over 3 seeds: 1.8× to 8.9×)";
        let text = cluster_verdict(&m);
        assert_eq!(
            text.iter().filter(|l| l.as_str() == said).count(),
            1,
            "{text:?}"
        );
        // Given the other way round, the same sentence: the judge with more
        // first, through the reciprocal interval.
        let (swim, lifeguard): (&[f64], &[f64]) = (&[6.0, 4.0, 8.0], &[2.0, 1.0, 2.0]);
        assert_eq!(
            line(("lifeguard", lifeguard), ("swim", swim)).unwrap(),
            said
        );
        assert_eq!(
            line(("swim", swim), ("lifeguard", lifeguard)).unwrap(),
            said
        );
        // A third judge: no such sentence.
        let mut three = m.clone();
        three.summary.push(three.summary[0].clone());
        assert!(cluster_verdict(&three).iter().all(|l| l != said));
    }

    #[test]
    fn the_ratio_sentence_says_what_the_interval_cannot() {
        // 12× with no upper bound: the ratio_ci95 hand case, at least
        // 4.8701.
        assert_eq!(
            line(("swim", &[10.0, 12.0, 14.0]), ("lifeguard", &[0.0, 1.0, 2.0])).unwrap(),
            "`swim` made 12× as many false declarations of healthy members per node-hour as `lifeguard` (36 against 3; 95% interval over 3 seeds: at least 4.9×; the interval has no upper bound with these seeds)"
        );
        // The same counts: 1.0×, and nothing bounded.
        assert_eq!(
            line(("a", &[0.0, 1.0, 2.0]), ("b", &[0.0, 1.0, 2.0])).unwrap(),
            "`a` made 1.0× as many false declarations of healthy members per node-hour as `b` (3 against 3; these 3 seeds are too few to bound the ratio)"
        );
        // An interval that includes 1×.
        let text = line(("a", &[3.0, 5.0, 4.0]), ("b", &[4.0, 3.0, 3.0])).unwrap();
        assert!(text.ends_with(", so not clearly more)"), "{text}");
        // One seed.
        assert!(
            line(("a", &[4.0]), ("b", &[2.0])).is_none(),
            "no ratio_ci95 of one seed"
        );
        let mut one = compared(("a", &[4.0]), ("b", &[2.0]));
        one.false_healthy.ratio = Some(2.0);
        assert!(healthy_ratio_line(&one)
            .unwrap()
            .ends_with("(4 against 2; one seed: no interval)"));
    }

    #[test]
    fn none_on_one_side_or_both() {
        assert_eq!(
            line(("swim", &[3.0, 4.0]), ("lifeguard", &[0.0, 0.0])).unwrap(),
            "`swim` declared a healthy member Dead 7 times and `lifeguard` never (the same 2 seeds)"
        );
        assert_eq!(
            line(("lifeguard", &[0.0, 0.0]), ("swim", &[3.0, 4.0])).unwrap(),
            "`swim` declared a healthy member Dead 7 times and `lifeguard` never (the same 2 seeds)"
        );
        assert_eq!(
            line(("a", &[0.0, 0.0]), ("b", &[1.0, 0.0])).unwrap(),
            "`b` declared a healthy member Dead once and `a` never (the same 2 seeds)"
        );
        assert_eq!(
            line(("a", &[0.0, 0.0]), ("b", &[0.0, 0.0])).unwrap(),
            "neither `a` nor `b` declared a healthy member Dead (2 seeds)"
        );
        // No false declaration at all: the verdict has said so already.
        let mut clean = compared(("a", &[0.0, 0.0]), ("b", &[0.0, 0.0]));
        clean.false_declarations.a_count = 0;
        clean.false_declarations.b_count = 0;
        assert_eq!(healthy_ratio_line(&clean), None);
        clean.seeds = 0;
        assert_eq!(healthy_ratio_line(&clean), None);
    }

    #[test]
    fn ratios_have_two_significant_digits() {
        assert_eq!(times(3.66), "3.7×");
        assert_eq!(times(12.4), "12×");
        assert_eq!(times(9.96), "10×");
        assert_eq!(times(0.613), "0.61×");
        assert_eq!(times(1.0), "1.0×");
    }

    #[test]
    fn names_false_declarations_and_the_fastest_judge() {
        let runs: Vec<_> = ["classic", "phi"]
            .iter()
            .map(|judge| fixture::synthetic(20, 1, judge, 0).0)
            .collect();
        let metrics = crate::cluster::cluster_metrics("s", &runs);
        let text = cluster_verdict(&metrics).join("\n");
        assert!(metrics.summary.iter().all(|j| j.false_declarations > 0));
        for j in &metrics.summary {
            let said = format!("`{}` declared a live silo Dead", j.judge);
            assert!(text.contains(&said), "{text}");
        }
        assert!(text.contains("crashes declared"), "{text}");
        assert!(text.starts_with("least costly judge: `"), "{text}");
        assert!(!text.contains("SAFETY"), "{text}");
    }
}
