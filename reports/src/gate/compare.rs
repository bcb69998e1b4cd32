//! The comparison of a run with its baseline: every figure that moved, and
//! which of them regress beyond the tolerances.

use super::*;

/// How one metric of one scenario × detector moved.
#[derive(Clone, Debug, PartialEq)]
pub struct Change {
    pub scenario: String,
    pub detector: String,
    pub metric: &'static str,
    pub before: String,
    pub after: String,
    /// Relative or absolute change, for people.
    pub change: String,
    pub regression: bool,
}

/// The comparison of a run against a baseline.
#[derive(Clone, Debug, PartialEq)]
pub struct Comparison {
    /// Every metric that differs, in suite order; regressions and
    /// improvements alike.
    pub changes: Vec<Change>,
    /// Scenario × detector results compared.
    pub compared: usize,
    /// In the run, not in the baseline (fail: nothing gates them until
    /// `--update` adds them).
    pub new: Vec<(String, String)>,
    /// In the baseline, not in the run (fail: coverage was lost).
    pub missing: Vec<(String, String)>,
}

impl Comparison {
    /// Metrics that got worse than the tolerances allow, and baseline
    /// entries the run lost.
    pub fn regressions(&self) -> usize {
        self.changes.iter().filter(|c| c.regression).count() + self.missing.len()
    }

    /// Whether the baseline covers none of the run's results. A gate that
    /// compares nothing must not pass: an empty or foreign baseline would
    /// let anything through.
    pub fn compares_nothing(&self) -> bool {
        self.compared == 0
    }

    /// Everything that fails the gate: regressions, and the run's results
    /// that no baseline entry gates. A result with no entry is not a pass:
    /// a new scenario or detector would otherwise never be checked.
    pub fn failures(&self) -> usize {
        self.regressions() + self.new.len()
    }

    pub fn passed(&self) -> bool {
        self.failures() == 0 && !self.compares_nothing()
    }

    /// Figures that changed within the tolerances. Runs are deterministic, so
    /// every one of them comes from a change of code or of the suite: they
    /// are shown as changed (⚠), and `--strict` fails on them.
    pub fn tolerated(&self) -> usize {
        self.changes.iter().filter(|c| !c.regression).count()
    }

    /// Whether the gate passes: under `strict`, only with no change at all.
    pub fn passes(&self, strict: bool) -> bool {
        self.passed() && !(strict && self.tolerated() > 0)
    }
}

fn fmt_ms(v: Option<f64>) -> String {
    match v {
        Some(v) => format!("{v:.3} ms"),
        None => "none".into(),
    }
}

fn fmt_rate(v: Option<f64>) -> String {
    match v {
        Some(v) => format!("{v:.4}/pair-h"),
        None => "none".into(),
    }
}

/// Compares `run` (in suite order) against `baseline`.
pub fn compare(baseline: &Baseline, run: &[Entry]) -> Comparison {
    let tol = baseline.tolerance;
    let mut out = Comparison {
        changes: Vec::new(),
        compared: 0,
        new: Vec::new(),
        missing: Vec::new(),
    };
    for after in run {
        let Some(before) = baseline.entries.iter().find(|b| b.key() == after.key()) else {
            out.new
                .push((after.scenario.clone(), after.detector.clone()));
            continue;
        };
        out.compared += 1;
        let mut push = |metric, before_s: String, after_s: String, change: String, regression| {
            out.changes.push(Change {
                scenario: after.scenario.clone(),
                detector: after.detector.clone(),
                metric,
                before: before_s,
                after: after_s,
                change,
                regression,
            })
        };
        if before.runs != after.runs {
            push(
                "runs",
                before.runs.to_string(),
                after.runs.to_string(),
                "the suite changed: run `fdlab check --update`".into(),
                true,
            );
        }
        let (p50, p99, missed) = if after.membership {
            (
                "p50 time to Dead",
                "p99 time to Dead",
                "crashes never declared",
            )
        } else {
            (
                "p50 detection time",
                "p99 detection time",
                "missed detections",
            )
        };
        for (metric, b, a) in [
            (p50, before.p50_ms, after.p50_ms),
            (p99, before.p99_ms, after.p99_ms),
        ] {
            if b == a {
                continue;
            }
            let (change, regression) = match (b, a) {
                (Some(b), Some(a)) => {
                    let rel = if b > 0.0 { (a - b) / b } else { f64::INFINITY };
                    let change = if b > 0.0 {
                        format!("{:+.2}%", rel * 100.0)
                    } else {
                        format!("{:+.3} ms", a - b)
                    };
                    (change, a > b * (1.0 + tol.detection_time))
                }
                (Some(_), None) => ("nothing detected any more".into(), true),
                (None, Some(_)) => ("now detects".into(), false),
                (None, None) => unreachable!("equal"),
            };
            push(metric, fmt_ms(b), fmt_ms(a), change, regression);
        }
        if before.missed != after.missed {
            let diff = after.missed as i64 - before.missed as i64;
            push(
                missed,
                before.missed.to_string(),
                after.missed.to_string(),
                format!("{diff:+}"),
                after.missed > before.missed.saturating_add(tol.missed),
            );
        }
        for (metric, b, a, tolerance) in [
            (
                "false Failed per pair-hour",
                before.false_failed_per_pair_hour,
                after.false_failed_per_pair_hour,
                tol.false_failed_per_pair_hour,
            ),
            (
                "suspicions per pair-hour",
                before.suspicions_per_pair_hour,
                after.suspicions_per_pair_hour,
                tol.suspicions_per_pair_hour,
            ),
        ] {
            if b == a {
                continue;
            }
            let (change, regression) = match (b, a) {
                (Some(b), Some(a)) => (format!("{:+.4}/pair-h", a - b), a > b + tolerance),
                (None, Some(a)) => (format!("{a:+.4}/pair-h"), a > tolerance),
                (_, None) => ("no must-not-detect time".into(), false),
            };
            push(metric, fmt_rate(b), fmt_rate(a), change, regression);
        }
        let (b, a) = (
            before.false_declarations_per_node_hour,
            after.false_declarations_per_node_hour,
        );
        if b != a {
            let tolerance = tol.false_declarations_per_node_hour;
            let node_h = |v: Option<f64>| v.map_or("none".into(), |v| format!("{v:.4}/node-h"));
            let (change, regression) = match (b, a) {
                (Some(b), Some(a)) => (format!("{:+.4}/node-h", a - b), a > b + tolerance),
                (None, Some(a)) => (format!("{a:+.4}/node-h"), a > tolerance),
                (_, None) => ("no silo time".into(), false),
            };
            push(
                "false declarations per node-hour",
                node_h(b),
                node_h(a),
                change,
                regression,
            );
        }
    }
    for before in &baseline.entries {
        if !run.iter().any(|a| a.key() == before.key()) {
            out.missing
                .push((before.scenario.clone(), before.detector.clone()));
        }
    }
    out
}
