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
    let worst = m
        .summary
        .iter()
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
    lines
}
