//! What a sweep's front does not say by itself: that its fastest point sits
//! at the end of a swept range (a faster setting may lie beyond it), or that
//! the front is flat (no point made a false Failed, so the sweep shows no
//! trade-off and only detection time decides).

use fdlab_protocol::Nanos;
use fdlab_scenarios::sweep_plan::PlanFile;

use super::output::PointResult;

/// A swept value as a number, to order a parameter's values: a number, or
/// a duration in nanoseconds. `None` for anything else (a name).
fn magnitude(text: &str) -> Option<f64> {
    let text = text.trim().trim_matches('"');
    text.parse::<f64>()
        .ok()
        .or_else(|| text.parse::<Nanos>().ok().map(|d| d.as_nanos_f64()))
}

/// The notes on the front `front` (point indices, fastest first) of
/// `results`, for `plan`'s `detector`.
pub fn notes(plan: &PlanFile, results: &[PointResult], front: &[usize]) -> Vec<String> {
    let mut notes = Vec::new();
    let Some(&fastest) = front.first() else {
        return notes;
    };
    for (j, param) in plan.params.iter().enumerate() {
        let values: Vec<f64> = plan
            .points
            .iter()
            .filter_map(|p| p.values.get(j).and_then(|v| magnitude(v)))
            .collect();
        if values.len() != plan.points.len() {
            continue;
        }
        let (low, high) = values
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), &v| {
                (l.min(v), h.max(v))
            });
        if low == high {
            continue;
        }
        let text = &plan.points[fastest].values[j];
        let end = match values[fastest] {
            // Zero is the floor of every swept number and duration: there
            // is nothing below it to try.
            v if v == low && v <= 0.0 => continue,
            v if v == low => "lowest",
            v if v == high => "highest",
            _ => continue,
        };
        let beyond = if end == "lowest" { "below" } else { "above" };
        notes.push(format!(
            "note: the fastest point ({}) has {param} = {text}, the {end} swept: widen {}.{param} {beyond} {text}",
            plan.points[fastest].name, plan.detector
        ));
    }
    let clean = results.iter().filter(|r| r.rate() == 0.0).count();
    if front.iter().all(|&i| results[i].rate() == 0.0) {
        notes.push(format!(
            "note: the front is flat ({clean} of {} points made no false Failed): no trade-off here; the fastest wins",
            results.len()
        ));
    }
    notes
}

#[cfg(test)]
mod tests {
    use super::*;
    use fdlab_reports::metrics::DetectorSummary;
    use fdlab_scenarios::sweep_plan::PointFile;

    fn plan(values: &[&str]) -> PlanFile {
        PlanFile {
            scenario: "s".into(),
            scenario_sha256: String::new(),
            detector: "phi-accrual".into(),
            vary: Vec::new(),
            sample: 0,
            sample_seed: 0,
            first_seed: 1,
            seeds: 1,
            params: vec!["threshold".into()],
            points: values
                .iter()
                .enumerate()
                .map(|(i, v)| PointFile {
                    name: format!("p{i}"),
                    values: vec![v.to_string()],
                })
                .collect(),
        }
    }

    #[test]
    fn an_edge_and_a_flat_front_are_said_and_an_inner_point_is_not() {
        let results = |n: usize| -> Vec<PointResult> {
            (0..n)
                .map(|_| PointResult {
                    summary: DetectorSummary::default(),
                    strict_p99: Some(Nanos::from_secs(1)),
                    pareto: true,
                })
                .collect()
        };
        let p = plan(&["0.5", "2.0", "8.0"]);
        let r = results(3);
        let n = notes(&p, &r, &[0]);
        assert_eq!(n.len(), 2, "{n:?}");
        assert!(
            n[0].contains("threshold = 0.5, the lowest swept"),
            "{}",
            n[0]
        );
        assert!(
            n[0].contains("widen phi-accrual.threshold below 0.5"),
            "{}",
            n[0]
        );
        assert!(
            n[1].contains("the front is flat (3 of 3 points"),
            "{}",
            n[1]
        );
        assert!(n.iter().all(|l| l.len() <= 120), "{n:?}");
        // Durations order as durations; the middle one is no edge.
        let p = plan(&["\"500ms\"", "\"2s\"", "\"10s\""]);
        let n = notes(&p, &r, &[1]);
        assert!(n.iter().all(|n| !n.contains("swept")), "{n:?}");
        let n = notes(&p, &r, &[2]);
        assert!(n[0].contains("the highest swept"), "{n:?}");
        // Nothing lies below zero.
        let p = plan(&["\"0s\"", "\"1s\"", "\"2s\""]);
        let n = notes(&p, &r, &[0]);
        assert!(n.iter().all(|n| !n.contains("swept")), "{n:?}");
    }
}
