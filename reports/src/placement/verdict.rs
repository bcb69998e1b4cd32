//! The verdict on one placement scenario: the cheapest detector ×
//! distribution, what a declaration moves under each distribution, and
//! which detector's false declarations cost the most cache.

use super::metrics::{PlacementMetrics, PlacementSummary};
use super::tables::{amount, percent};

/// Sentences, most useful first.
pub fn placement_verdict(m: &PlacementMetrics) -> Vec<String> {
    let mut lines = Vec::new();
    let lost = |s: &PlacementSummary| s.keys_lost_per_healthy_server_hour().unwrap_or(0.0);
    let bad =
        |s: &PlacementSummary| s.miss_share().unwrap_or(0.0) + s.failed_share().unwrap_or(0.0);
    let best = m.summary.iter().min_by(|a, b| {
        lost(a)
            .total_cmp(&lost(b))
            .then(bad(a).total_cmp(&bad(b)))
            .then(a.detect_p50.cmp(&b.detect_p50))
    });
    if let Some(b) = best {
        lines.push(format!(
            "least costly: `{}` with `{}` ({} keys lost per healthy server-hour, {} of requests missed and {} failed, detection p50 {})",
            b.detector,
            b.distribution,
            amount(Some(lost(b))),
            percent(b.miss_share()),
            percent(b.failed_share()),
            b.detect_p50
                .map_or_else(|| "-".into(), |t| format!("{:.2} s", t.as_secs_f64())),
        ));
    }
    // Per distribution, over every detector: keys moved per declaration.
    let mut moved: Vec<(String, u64, u64)> = Vec::new();
    for s in &m.summary {
        let d = s.true_declarations + s.false_declarations;
        let k = s.moved_true + s.moved_false;
        match moved.iter_mut().find(|x| x.0 == s.distribution) {
            Some(x) => {
                x.1 += k;
                x.2 += d;
            }
            None => moved.push((s.distribution.clone(), k, d)),
        }
    }
    let parts: Vec<String> = moved
        .iter()
        .filter(|x| x.2 > 0)
        .map(|(name, k, d)| {
            let share = *k as f64 / (*d as f64 * f64::from(m.keys.max(1)));
            format!("`{name}` {}", percent(Some(share)))
        })
        .collect();
    if !parts.is_empty() {
        lines.push(format!(
            "a declaration moves this share of the declaring client's keys: {}",
            parts.join(", ")
        ));
    }
    // The first of equals (`max_by` keeps the last, so from the end).
    let worst = m
        .summary
        .iter()
        .rev()
        .filter(|s| s.false_declarations > 0)
        .max_by(|a, b| lost(a).total_cmp(&lost(b)));
    match worst {
        Some(w) => lines.push(format!(
            "most costly false declarations: `{}` under `{}` ({} false declarations, {} keys lost per healthy server-hour)",
            w.detector,
            w.distribution,
            w.false_declarations,
            amount(Some(lost(w)))
        )),
        None => lines.push("no detector declared a reachable server dead".into()),
    }
    let split = |s: &PlacementSummary| s.disagreement_per_hour().unwrap_or(0.0);
    let most = m
        .summary
        .iter()
        .rev()
        .max_by(|a, b| split(a).total_cmp(&split(b)));
    let least = m
        .summary
        .iter()
        .min_by(|a, b| split(a).total_cmp(&split(b)));
    if let (Some(most), Some(least)) = (most, least) {
        if split(most) > 0.0 {
            lines.push(format!(
                "clients disagree on a key's server most under `{}` with `{}` ({} key-seconds per hour), least under `{}` with `{}` ({})",
                most.detector,
                most.distribution,
                amount(Some(split(most))),
                least.detector,
                least.distribution,
                amount(Some(split(least)))
            ));
        }
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    fn summary(
        detector: &str,
        distribution: &str,
        moved_false: u64,
        disagreement: u128,
    ) -> PlacementSummary {
        PlacementSummary {
            detector: detector.into(),
            distribution: distribution.into(),
            runs: 1,
            keys: 100,
            true_declarations: 1,
            false_declarations: u64::from(moved_false > 0),
            moved_true: 10,
            moved_false,
            requests: 1_000,
            misses: 10,
            disagreement,
            run_time: 3_600_000_000_000,
            healthy_server_time: 3_600_000_000_000,
            ..PlacementSummary::default()
        }
    }

    #[test]
    fn the_verdict_names_the_cheapest_the_share_moved_and_the_costliest() {
        let m = PlacementMetrics {
            scenario: "s".into(),
            servers: 10,
            clients: 2,
            keys: 100,
            seeds: 1,
            by_view: false,
            summary: vec![
                summary("a", "ketama", 10, 0),
                summary("a", "modulo-eject", 90, 7_200_000_000_000),
                summary("b", "ketama", 0, 0),
                summary("b", "modulo-eject", 90, 0),
            ],
        };
        let v = placement_verdict(&m);
        assert!(v[0].starts_with("least costly: `b` with `ketama`"), "{v:?}");
        // ketama: 10 + 10 + 10 keys over 3 declarations of 100 keys;
        // modulo-eject: 10 + 90 + 10 + 90 over 4.
        assert!(
            v[1].contains("`ketama` 10.0%") && v[1].contains("`modulo-eject` 50.0%"),
            "{v:?}"
        );
        // `a` and `b` lose as much under modulo-eject: the first is named.
        assert!(v[2].contains("`a` under `modulo-eject`"), "{v:?}");
        // 7,200 key-seconds in one hour.
        assert!(
            v[3].contains("most under `a` with `modulo-eject` (7200 key-seconds"),
            "{v:?}"
        );
    }
}
