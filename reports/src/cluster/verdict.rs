//! The verdict of a membership scenario, in sentences for the console: which
//! judge cost the cluster least in false declarations, which declared real
//! crashes fastest, and anything that must never happen.
//!
//! Only what the runs showed: a judge is named best only on a figure where
//! it differs from the others, and every sentence carries its figure.

use super::metrics::{ClusterMetrics, JudgeSummary};

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::fixture;

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
        assert!(!text.contains("SAFETY"), "{text}");
    }
}
