//! The settings `fdlab tune` searches on a membership scenario, per judge:
//! the keys that decide how soon a judge has its silo vote.
//!
//! | judge | varied | everything else |
//! |---|---|---|
//! | `classic` | `membership.orleans.probe_timeout` 1 s to 10 s, `membership.orleans.num_missed_probes_limit` 2 to 5 | as in the scenario |
//! | a `phi-accrual` judge | its `threshold` 1 to 16 | its other keys, and the Orleans keys, as in the scenario |
//! | a `fixed-timeout` judge | its `timeout`, 1.5 to 8 of its `interval` | the same |
//! | an `adaptive-probe` judge | its `missed_probes_limit`, 1 to 5 | the same |
//! | a `two-stage` judge | its `confirm` stage's key of the above | the same |
//!
//! A detector judge hears one probe reply per `probe_timeout` and is set up
//! for that period (its `interval`), so its grid keeps the scenario's
//! Orleans keys; `classic` has no keys of its own, so its grid is Orleans'.
//! Each is a separate cluster run per setting and seed.

use fdlab_protocol::{DetectorConfig, Nanos};
use fdlab_sim::scenario::{Scenario, CLASSIC_JUDGE};
use toml::Value;

use crate::cluster_keys::Target;
use crate::search_space::{round_duration, End, PHI_THRESHOLDS, PROBE_MISSED_LIMITS};

/// Orleans' probe period tried for `classic`, in milliseconds.
pub const PROBE_TIMEOUTS_MS: [u64; 6] = [1_000, 2_000, 3_000, 5_000, 8_000, 10_000];
/// Orleans' missed-probe limit tried for `classic`.
pub const MISSED_PROBES_LIMITS: [i64; 4] = [2, 3, 4, 5];
/// A `fixed-timeout` judge's timeout, in its heartbeat intervals (probe
/// periods).
pub const FIXED_TIMEOUT_PERIODS: [f64; 6] = [1.5, 2.0, 3.0, 4.0, 6.0, 8.0];

/// One varied key and its values, low to high.
#[derive(Clone, Debug, PartialEq)]
pub struct ClusterAxis {
    pub target: Target,
    pub values: Vec<Value>,
}

/// The grid of one judge.
#[derive(Clone, Debug, PartialEq)]
pub struct JudgeGrid {
    pub judge: String,
    pub axes: Vec<ClusterAxis>,
}

/// The key of a judge's table to tune and its values, for detector
/// `config` (`prefix` names a stage: `confirm.`).
fn detector_axis(config: &DetectorConfig, prefix: &str) -> Option<(String, Vec<Value>)> {
    let key = |k: &str| format!("{prefix}{k}");
    match config {
        DetectorConfig::PhiAccrual(_) => Some((
            key("threshold"),
            PHI_THRESHOLDS.iter().map(|&t| Value::Float(t)).collect(),
        )),
        DetectorConfig::FixedTimeout(c) => {
            let interval = round_duration(c.interval);
            Some((
                key("timeout"),
                FIXED_TIMEOUT_PERIODS
                    .iter()
                    .map(|&m| {
                        let t = round_duration(Nanos::from_nanos_f64(interval.as_nanos_f64() * m));
                        Value::String(t.to_string())
                    })
                    .collect(),
            ))
        }
        DetectorConfig::AdaptiveProbe(_) => Some((
            key("missed_probes_limit"),
            PROBE_MISSED_LIMITS
                .iter()
                .map(|&n| Value::Integer(n))
                .collect(),
        )),
        DetectorConfig::TwoStage(c) => detector_axis(&c.confirm, &key("confirm.")),
        DetectorConfig::DataflowDecay(_) => None,
    }
}

/// The grid of judge `judge` of membership scenario `scenario`.
pub fn judge_grid(scenario: &Scenario, judge: &str) -> Result<JudgeGrid, String> {
    if !scenario.is_membership() {
        return Err(format!("`{}` is not a membership scenario", scenario.name));
    }
    let axes = if judge == CLASSIC_JUDGE {
        vec![
            ClusterAxis {
                target: Target::Orleans("probe_timeout".into()),
                values: PROBE_TIMEOUTS_MS
                    .iter()
                    .map(|&ms| Value::String(Nanos::from_millis(ms).to_string()))
                    .collect(),
            },
            ClusterAxis {
                target: Target::Orleans("num_missed_probes_limit".into()),
                values: MISSED_PROBES_LIMITS
                    .iter()
                    .map(|&n| Value::Integer(n))
                    .collect(),
            },
        ]
    } else {
        let d = scenario
            .detectors
            .iter()
            .find(|d| d.name == judge)
            .ok_or_else(|| format!("`{judge}` is not a judge of `{}`", scenario.name))?;
        let (param, values) = detector_axis(&d.config, "")
            .ok_or_else(|| format!("judge `{judge}` ({}) has no key to tune", d.config.kind()))?;
        vec![ClusterAxis {
            target: Target::Judge {
                judge: judge.to_string(),
                param,
            },
            values,
        }]
    };
    Ok(JudgeGrid {
        judge: judge.to_string(),
        axes,
    })
}

impl JudgeGrid {
    /// Stops varying `target` (held with `--set`).
    pub fn pin(&mut self, target: &Target) {
        self.axes.retain(|a| a.target != *target);
    }

    /// Every point (its settings, in axis order), the first axis varying
    /// slowest. A grid with no axis left has one point: no setting.
    pub fn points(&self) -> Vec<Vec<(Target, Value)>> {
        let mut points = vec![Vec::new()];
        for axis in &self.axes {
            points = points
                .into_iter()
                .flat_map(|prefix: Vec<(Target, Value)>| {
                    axis.values.iter().map(move |v| {
                        let mut next = prefix.clone();
                        next.push((axis.target.clone(), v.clone()));
                        next
                    })
                })
                .collect();
        }
        points
    }

    /// The settings of `point` at an end of their axis (of three values or
    /// more), where a better setting may lie just outside the grid.
    pub fn edges(&self, point: &[(Target, Value)]) -> Vec<(Target, Value, End)> {
        self.axes
            .iter()
            .filter(|a| a.values.len() >= 3)
            .filter_map(|a| {
                let (_, value) = point.iter().find(|(t, _)| *t == a.target)?;
                let end = if Some(value) == a.values.first() {
                    End::First
                } else if Some(value) == a.values.last() {
                    End::Last
                } else {
                    return None;
                };
                Some((a.target.clone(), value.clone(), end))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster_keys::{apply, keep_judges};
    use fdlab_sim::valid::ValidScenario;

    #[test]
    fn every_judge_of_the_builtins_has_a_valid_grid() {
        let s = crate::builtin_scenario("orleans-crash")
            .unwrap()
            .unwrap()
            .into_inner();
        let mut sizes = Vec::new();
        for judge in s.orleans_judge_names() {
            let grid = judge_grid(&s, &judge).unwrap();
            let points = grid.points();
            sizes.push(points.len());
            let base = keep_judges(&s, std::slice::from_ref(&judge));
            for p in &points {
                let settings: Vec<(&Target, &Value)> = p.iter().map(|(t, v)| (t, v)).collect();
                ValidScenario::new(apply(&base, &settings).unwrap())
                    .unwrap_or_else(|e| panic!("{judge} {p:?}: {e}"));
            }
        }
        assert_eq!(sizes, [24, 10, 5]);
        let mut classic = judge_grid(&s, "classic").unwrap();
        let points = classic.points();
        assert_eq!(points[0][0].1, Value::from("1s"));
        assert_eq!(points[1][1].1, Value::Integer(3));
        let edges = classic.edges(&points[1]);
        assert_eq!(edges.len(), 1, "{edges:?}");
        assert_eq!(edges[0].2, End::First);
        classic.pin(&Target::Orleans("probe_timeout".into()));
        assert_eq!(classic.points().len(), 4);
        assert!(judge_grid(&s, "nobody").is_err());
    }
}
