//! The words and tables of a tuning result, shared by every `fdlab tune` mode:
//! the evidence for a setting, the runner-ups against the winner, and the full
//! table of points as CSV. Plain strings, so that the output is byte-identical
//! for the same input and testable without a terminal.

use fdlab_protocol::time::{NANOS_PER_MILLI, NANOS_PER_SEC};
use fdlab_protocol::Nanos;
use fdlab_scenarios::search_space::Point;
use toml::Value;

use super::rank::{Candidate, Objective, Ranking};

/// Runner-ups shown after the recommended setting.
pub const RUNNER_UPS: usize = 4;

/// A duration for people: `16.0 ms` below a second, `2.913 s` above.
pub fn duration(n: Nanos) -> String {
    if n == Nanos::MAX {
        "never".to_string()
    } else if n.as_nanos() < NANOS_PER_SEC {
        format!("{:.1} ms", n.as_nanos() as f64 / NANOS_PER_MILLI as f64)
    } else {
        format!("{:.3} s", n.as_secs_f64())
    }
}

/// A signed difference of durations: `+40.0 ms`, `-1.250 s`, `+0.0 ms`.
fn difference(a: Nanos, b: Nanos) -> String {
    if a == Nanos::MAX || b == Nanos::MAX {
        return "n/a".to_string();
    }
    if a >= b {
        format!("+{}", duration(a - b))
    } else {
        format!("-{}", duration(b - a))
    }
}

/// The evidence for one setting, two lines: detection time, then mistakes.
/// `crashes` names what the detection times were measured on, in the
/// singular (`cut`, `pause fault window`).
pub fn evidence(c: &Candidate, crashes: &str) -> [String; 2] {
    let over = format!(
        "{} {crashes}{}",
        c.crashes,
        if c.crashes == 1 { "" } else { "s" }
    );
    let detection = match &c.detection {
        _ if c.crashes == 0 => "detection time: nothing to detect in this scenario".to_string(),
        Some(s) => format!(
            "detection time over {over}: mean {}, p50 {}, p90 {}, p99 {}, max {}; missed {}",
            duration(s.mean),
            duration(s.p50),
            duration(s.p90),
            duration(s.p99),
            duration(s.max),
            c.missed
        ),
        None => format!(
            "detection time over {over}: none detected (missed {})",
            c.missed
        ),
    };
    let mistakes = format!(
        "mistakes: {} ({:.2} per hour): false Failed {} ({:.2} per hour), suspicions {} ({:.2} per hour); mean duration {}, query accuracy {:.4}%",
        c.mistakes,
        c.mistakes_per_hour,
        c.false_failed,
        c.false_failed_per_hour,
        c.suspicions(),
        c.suspicions_per_hour,
        c.mean_mistake.map_or("-".to_string(), duration),
        c.query_accuracy * 100.0
    );
    [detection, mistakes]
}

/// One line per runner-up (the `count` points ranked after the winner among
/// those that meet the constraint), with its distance from the winner.
pub fn runner_ups(
    points: &[Point],
    candidates: &[Candidate],
    ranking: &Ranking,
    objective: Objective,
    count: usize,
) -> Vec<String> {
    let Some(best) = ranking.best() else {
        return Vec::new();
    };
    let best_value = candidates[best].objective(objective);
    ranking.order[1..ranking.feasible]
        .iter()
        .take(count)
        .enumerate()
        .map(|(k, &i)| {
            let c = &candidates[i];
            let value = c.objective(objective);
            let relative =
                if best_value == Nanos::MAX || value == Nanos::MAX || best_value.is_zero() {
                    String::new()
                } else {
                    format!(
                        ", {:+.1}%",
                        (value.as_nanos_f64() / best_value.as_nanos_f64() - 1.0) * 100.0
                    )
                };
            format!(
                "{}. {}: {} {} ({}{relative}), missed {}, false Failed {} ({:.2} per hour), suspicions {} ({:.2} per hour)",
                k + 2,
                points[i].describe(),
                objective.name(),
                duration(value),
                difference(value, best_value),
                c.missed,
                c.false_failed,
                c.false_failed_per_hour,
                c.suspicions(),
                c.suspicions_per_hour
            )
        })
        .collect()
}

/// Every point as a CSV table, in grid order: its rank (1 = recommended), whether
/// it meets the constraint, the varied keys, then its figures (times in ms).
pub fn points_csv(points: &[Point], candidates: &[Candidate], ranking: &Ranking) -> String {
    let mut rank_of = vec![0usize; candidates.len()];
    for (position, &i) in ranking.order.iter().enumerate() {
        rank_of[i] = position + 1;
    }
    let keys: Vec<&str> = points
        .first()
        .map(|p| p.varied.iter().map(|(k, _)| k.as_str()).collect())
        .unwrap_or_default();
    let mut out = String::from("rank,meets_constraint");
    for key in &keys {
        out.push(',');
        out.push_str(&csv_field(key));
    }
    out.push_str(
        ",crashes,detected,missed,td_mean_ms,td_p50_ms,td_p90_ms,td_p99_ms,td_max_ms,\
         mistakes,mistakes_per_hour,false_failed,false_failed_per_hour,suspicions,\
         suspicions_per_hour,mean_mistake_ms,query_accuracy_healthy\n",
    );
    let ms = |n: Nanos| {
        let mut s = String::new();
        n.fmt_millis(&mut s);
        s
    };
    for (i, (point, c)) in points.iter().zip(candidates).enumerate() {
        let meets = ranking.order[..ranking.feasible].contains(&i);
        out.push_str(&format!("{},{meets}", rank_of[i]));
        for (_, value) in &point.varied {
            out.push(',');
            out.push_str(&csv_field(&plain(value)));
        }
        let stats = c.detection.as_ref();
        let stat = |f: fn(&fdlab_sim::stats::DurationStats) -> Nanos| {
            stats.map_or(String::new(), |s| ms(f(s)))
        };
        out.push_str(&format!(
            ",{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n",
            c.crashes,
            stats.map_or(0, |s| s.n),
            c.missed,
            stat(|s| s.mean),
            stat(|s| s.p50),
            stat(|s| s.p90),
            stat(|s| s.p99),
            stat(|s| s.max),
            c.mistakes,
            c.mistakes_per_hour,
            c.false_failed,
            c.false_failed_per_hour,
            c.suspicions(),
            c.suspicions_per_hour,
            c.mean_mistake.map_or(String::new(), ms),
            c.query_accuracy
        ));
    }
    out
}

/// A TOML value as a table cell: strings without their quotes.
fn plain(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Quotes a CSV field when it needs it (RFC 4180).
fn csv_field(text: &str) -> String {
    if text.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tune::rank::rank;
    use fdlab_scenarios::search_space::search_space;
    use fdlab_sim::stats::DurationStats;

    fn cand(p99_ms: u64, mistakes: usize) -> Candidate {
        let ms = Nanos::from_millis;
        Candidate {
            crashes: 10,
            detection: DurationStats::from_samples([ms(p99_ms / 2), ms(p99_ms)]),
            missed: 0,
            mistakes,
            mistakes_per_hour: mistakes as f64 * 2.0,
            false_failed: mistakes / 2,
            false_failed_per_hour: (mistakes / 2) as f64 * 2.0,
            suspicions_per_hour: (mistakes - mistakes / 2) as f64 * 2.0,
            mean_mistake: (mistakes > 0).then(|| ms(250)),
            query_accuracy: 1.0,
        }
    }

    #[test]
    fn durations_read_well() {
        assert_eq!(duration(Nanos::from_millis(16)), "16.0 ms");
        assert_eq!(duration(Nanos(2_913_400_000)), "2.913 s");
        assert_eq!(duration(Nanos::MAX), "never");
        assert_eq!(
            difference(Nanos::from_millis(5), Nanos::from_millis(7)),
            "-2.0 ms"
        );
    }

    #[test]
    fn runner_ups_and_table() {
        let points = search_space("fixed-timeout", Nanos::from_secs(1))
            .unwrap()
            .points()[..4]
            .to_vec();
        let c = [
            cand(3_000, 0),
            cand(2_000, 0),
            cand(1_000, 1),
            cand(2_500, 0),
        ];
        let r = rank(
            &c,
            Objective::P99,
            &crate::tune::rank::Constraint::from_flags(None, None, None),
        );
        let lines = runner_ups(&points, &c, &r, Objective::P99, 4);
        assert_eq!(
            lines,
            [
                "2. timeout = \"2500ms\": p99 2.500 s (+500.0 ms, +25.0%), missed 0, false Failed 0 (0.00 per hour), suspicions 0 (0.00 per hour)",
                "3. timeout = \"1250ms\": p99 3.000 s (+1.000 s, +50.0%), missed 0, false Failed 0 (0.00 per hour), suspicions 0 (0.00 per hour)",
            ]
        );
        let [d, m] = evidence(&c[2], "cut");
        assert_eq!(d, "detection time over 10 cuts: mean 750.0 ms, p50 500.0 ms, p90 1.000 s, p99 1.000 s, max 1.000 s; missed 0");
        assert_eq!(
            m,
            "mistakes: 1 (2.00 per hour): false Failed 0 (0.00 per hour), suspicions 1 (2.00 per hour); mean duration 250.0 ms, query accuracy 100.0000%"
        );
        let table = points_csv(&points, &c, &r);
        let rows: Vec<&str> = table.lines().collect();
        assert_eq!(rows.len(), 5);
        assert!(
            rows[0].starts_with("rank,meets_constraint,timeout,crashes,"),
            "{}",
            rows[0]
        );
        assert_eq!(
            rows[2],
            "1,true,1500ms,10,2,0,1500,1000,2000,2000,2000,0,0,0,0,0,0,,1"
        );
        assert!(rows[3].starts_with("4,false,2s,"), "{}", rows[3]);
        assert_eq!(csv_field("a,b"), "\"a,b\"");
    }
}
