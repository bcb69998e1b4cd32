//! The CI regression gate of `fdlab check`: a committed baseline of the CI
//! suite's figures, the comparison of a fresh run against it, and the
//! verdicts a build can fail on.
//!
//! Runs are deterministic, so an unchanged tree reproduces the baseline
//! exactly: every tolerance may be zero, and any difference is caused by a
//! change to the code, the detectors' defaults or the suite. Tolerances exist
//! for teams that accept small drifts (a detection time 5% slower, say)
//! without touching the baseline.

use std::fmt::Write as _;
use std::path::Path;

use fdlab_protocol::Nanos;
use fdlab_scenarios::excerpt::{bounded, excerpt, key as excerpt_key};
use serde::{Deserialize, Serialize};

use crate::cluster::{ClusterMetrics, JudgeSummary};
use crate::metrics::{DetectorSummary, ScenarioMetrics};

/// The baseline file format this version reads and writes.
pub const BASELINE_VERSION: u32 = 1;

/// Allowed worsening per metric before `fdlab check` fails.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Tolerance {
    /// Relative increase allowed of the p50 and p99 detection times
    /// (0.05 = 5% slower).
    pub detection_time: f64,
    /// Additional missed detections allowed.
    pub missed: u64,
    /// Absolute increase allowed of the false Failed per monitored-pair-hour.
    pub false_failed_per_pair_hour: f64,
    /// Absolute increase allowed of the Suspect-only mistakes per
    /// monitored-pair-hour.
    pub suspicions_per_pair_hour: f64,
    /// Membership scenarios: absolute increase allowed of the false
    /// declarations (a live silo written Dead) per node-hour.
    pub false_declarations_per_node_hour: f64,
}

impl Default for Tolerance {
    fn default() -> Self {
        Tolerance {
            detection_time: 0.05,
            missed: 0,
            false_failed_per_pair_hour: 0.0,
            suspicions_per_pair_hour: 0.0,
            false_declarations_per_node_hour: 0.0,
        }
    }
}

/// The figures of one scenario × detector, as the gate compares them; of a
/// membership scenario, one scenario × judge (`membership = true`): its
/// detection times are from a crash to the crashed silo's Dead declaration,
/// `missed` counts crashes never declared, and its mistakes are false
/// declarations per node-hour.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Entry {
    pub scenario: String,
    /// The detector, or a membership scenario's judge.
    pub detector: String,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub membership: bool,
    /// Runs behind the figures.
    pub runs: u64,
    /// Detection time to Failed, milliseconds (absent: nothing was detected).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p50_ms: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p99_ms: Option<f64>,
    pub missed: u64,
    /// Mistakes that reached Failed (false Failed) per monitored-pair-hour
    /// (absent: no must-not-detect time). Gated apart from the Suspect-only
    /// ones: a team may accept more flicker, never more false failovers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub false_failed_per_pair_hour: Option<f64>,
    /// Suspect-only mistakes (suspicions) per monitored-pair-hour.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suspicions_per_pair_hour: Option<f64>,
    /// Membership: live silos declared Dead per node-hour up.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub false_declarations_per_node_hour: Option<f64>,
}

impl Entry {
    /// The gate's view of one row of a run's summary.
    pub fn from_summary(scenario: &str, s: &DetectorSummary) -> Entry {
        let ms = |t: Nanos| t.as_millis_f64();
        Entry {
            scenario: scenario.to_string(),
            detector: s.detector.clone(),
            runs: s.runs as u64,
            p50_ms: s.failed.map(|f| ms(f.p50)),
            p99_ms: s.failed.map(|f| ms(f.p99)),
            missed: s.failed_missed as u64,
            false_failed_per_pair_hour: s.false_failed_rate(),
            suspicions_per_pair_hour: s.suspicion_rate(),
            membership: false,
            false_declarations_per_node_hour: None,
        }
    }

    /// The gate's view of one judge of a membership scenario.
    pub fn from_judge(scenario: &str, j: &JudgeSummary) -> Entry {
        let ms = |t: Nanos| t.as_millis_f64();
        Entry {
            scenario: scenario.to_string(),
            detector: j.judge.clone(),
            runs: j.runs as u64,
            p50_ms: j.declare.map(|d| ms(d.p50)),
            p99_ms: j.declare.map(|d| ms(d.p99)),
            missed: j.never_declared() as u64,
            false_failed_per_pair_hour: None,
            suspicions_per_pair_hour: None,
            membership: true,
            false_declarations_per_node_hour: j.false_rate(),
        }
    }

    fn key(&self) -> (&str, &str) {
        (&self.scenario, &self.detector)
    }
}

/// A baseline file: tolerances and the expected figures.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Baseline {
    pub version: u32,
    #[serde(default)]
    pub tolerance: Tolerance,
    #[serde(default, rename = "entry")]
    pub entries: Vec<Entry>,
}

/// The entries of a run, in suite order: the detector scenarios', then the
/// membership scenarios'.
pub fn entries(metrics: &[ScenarioMetrics], clusters: &[ClusterMetrics]) -> Vec<Entry> {
    let pairs = metrics.iter().flat_map(|m| {
        m.summary
            .iter()
            .map(move |s| Entry::from_summary(&m.scenario, s))
    });
    let judges = clusters.iter().flat_map(|m| {
        m.summary
            .iter()
            .map(move |j| Entry::from_judge(&m.scenario, j))
    });
    pairs.chain(judges).collect()
}

impl Baseline {
    /// Parses a baseline file's text; errors name the file, and the line and
    /// key where TOML can tell.
    pub fn parse(file: &Path, text: &str) -> Result<Baseline, String> {
        let baseline: Baseline = toml::from_str(text).map_err(|e| toml_error(file, text, &e))?;
        if baseline.version != BASELINE_VERSION {
            return Err(format!(
                "{}: `version`: {} is not a baseline version this fdlab reads ({BASELINE_VERSION})",
                file.display(),
                baseline.version
            ));
        }
        crate::baseline_file::check_figures(file, text, &baseline)?;
        for (i, e) in baseline.entries.iter().enumerate() {
            if baseline.entries[..i].iter().any(|x| x.key() == e.key()) {
                return Err(format!(
                    "{}: entry {} (`{}` / `{}`) appears twice",
                    file.display(),
                    i + 1,
                    excerpt(&e.scenario),
                    excerpt(&e.detector)
                ));
            }
        }
        Ok(baseline)
    }

    /// Refuses a baseline with no entries for a comparison (`--update` may
    /// fill one): a gate that compares nothing would pass anything.
    pub fn require_entries(&self, file: &Path) -> Result<(), String> {
        if self.entries.is_empty() {
            return Err(format!(
                "{}: no `[[entry]]` tables: a baseline that compares nothing cannot pass a gate; fill it with `fdlab check --update --baseline {}`",
                file.display(),
                file.display()
            ));
        }
        Ok(())
    }

    /// The file's text: tolerances kept, entries from `entries`.
    pub fn render(tolerance: Tolerance, entries: Vec<Entry>) -> Result<String, String> {
        let baseline = Baseline {
            version: BASELINE_VERSION,
            tolerance,
            entries,
        };
        let body = toml::to_string(&baseline).map_err(|e| e.to_string())?;
        Ok(format!(
            "# fdlab check baseline: the CI suite's figures, rewritten by\n\
             # `fdlab check --update`. Tolerances may be edited by hand:\n\
             # detection_time is a share (0.05 = p50/p99 may be 5% slower),\n\
             # missed a count, false_failed_per_pair_hour,\n\
             # suspicions_per_pair_hour and (membership scenarios)\n\
             # false_declarations_per_node_hour absolute increases.\n\n{body}"
        ))
    }
}

/// `file:line: `key`: problem` from a TOML error, on one line, quoting the
/// file only in short excerpts.
fn toml_error(file: &Path, text: &str, e: &toml::de::Error) -> String {
    let message = bounded(&e.message().trim().replace('\n', " "));
    let Some(span) = e.span() else {
        return format!("{}: {message}", file.display());
    };
    let start = span.start.min(text.len());
    let line = text[..start].matches('\n').count() + 1;
    let line_text = text.lines().nth(line - 1).unwrap_or("");
    match line_text.split_once('=') {
        Some((key, _)) if !key.trim().is_empty() && !key.trim().starts_with('[') => {
            format!(
                "{}:{line}: `{}`: {message}",
                file.display(),
                excerpt_key(key.trim())
            )
        }
        _ => format!("{}:{line}: {message}", file.display()),
    }
}

mod compare;
mod render;

pub use compare::{compare, Change, Comparison};
pub use render::{junit, markdown};

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(detector: &str, p50: Option<f64>, p99: Option<f64>, missed: u64, rate: f64) -> Entry {
        Entry {
            scenario: "s".into(),
            detector: detector.into(),
            runs: 10,
            p50_ms: p50,
            p99_ms: p99,
            missed,
            false_failed_per_pair_hour: Some(rate),
            suspicions_per_pair_hour: Some(0.0),
            membership: false,
            false_declarations_per_node_hour: None,
        }
    }

    fn judge(name: &str, p50: Option<f64>, never: u64, rate: f64) -> Entry {
        Entry {
            scenario: "cluster".into(),
            detector: name.into(),
            runs: 5,
            p50_ms: p50,
            p99_ms: p50,
            missed: never,
            false_failed_per_pair_hour: None,
            suspicions_per_pair_hour: None,
            membership: true,
            false_declarations_per_node_hour: Some(rate),
        }
    }

    #[test]
    fn membership_entries_gate_false_declarations_and_time_to_dead() {
        let before = baseline(vec![judge("classic", Some(55_000.0), 0, 0.0)]);
        // One false declaration per ten node-hours more: a regression under
        // the default zero tolerance, named as what it is.
        let run = vec![judge("classic", Some(55_000.0), 0, 0.1)];
        let c = compare(&before, &run);
        assert_eq!(c.regressions(), 1, "{c:?}");
        assert_eq!(c.changes[0].metric, "false declarations per node-hour");
        assert_eq!(c.changes[0].change, "+0.1000/node-h");
        // Declaring crashes 10% later, and a crash never declared.
        let run = vec![judge("classic", Some(60_500.0), 1, 0.0)];
        let c = compare(&before, &run);
        assert_eq!(c.regressions(), 3, "{c:?}");
        let metrics: Vec<&str> = c.changes.iter().map(|x| x.metric).collect();
        assert_eq!(
            metrics,
            [
                "p50 time to Dead",
                "p99 time to Dead",
                "crashes never declared"
            ]
        );
        // Within a tolerance it passes; the file keeps the new key.
        let mut tolerant = before.clone();
        tolerant.tolerance.false_declarations_per_node_hour = 0.5;
        let run = vec![judge("classic", Some(55_000.0), 0, 0.1)];
        assert!(compare(&tolerant, &run).passed());
        let text = Baseline::render(tolerant.tolerance, run.clone()).unwrap();
        assert!(text.contains("membership = true"), "{text}");
        assert_eq!(
            Baseline::parse(Path::new("b.toml"), &text).unwrap().entries,
            run
        );
    }

    fn baseline(entries: Vec<Entry>) -> Baseline {
        Baseline {
            version: BASELINE_VERSION,
            tolerance: Tolerance::default(),
            entries,
        }
    }

    #[test]
    fn identical_figures_pass_with_no_change() {
        let run = vec![entry("a", Some(2000.0), Some(2900.0), 0, 0.5)];
        let c = compare(&baseline(run.clone()), &run);
        assert!(c.passed());
        assert!(c.changes.is_empty());
        assert_eq!(c.compared, 1);
        assert!(markdown(&c, Path::new("b.toml"), false).contains("identical"));
    }

    #[test]
    fn tolerances_decide_what_regresses() {
        let before = baseline(vec![entry("a", Some(2000.0), Some(3000.0), 1, 0.5)]);
        // 4% slower at p50 is within 5%; 6% slower at p99 is not.
        let run = vec![entry("a", Some(2080.0), Some(3180.0), 1, 0.5)];
        let c = compare(&before, &run);
        assert_eq!(c.changes.len(), 2);
        assert!(!c.changes[0].regression);
        assert!(c.changes[1].regression);
        assert_eq!(c.changes[1].change, "+6.00%");
        // One more miss, and more mistakes, with zero tolerance: regressions.
        let run = vec![entry("a", Some(2000.0), Some(3000.0), 2, 0.51)];
        let c = compare(&before, &run);
        assert_eq!(c.regressions(), 2);
        // Faster and fewer: improvements pass.
        let run = vec![entry("a", Some(1000.0), Some(1500.0), 0, 0.0)];
        let c = compare(&before, &run);
        assert!(c.passed());
        assert_eq!(c.changes.len(), 4);
    }

    #[test]
    fn a_change_within_tolerance_is_shown_and_fails_under_strict() {
        let before = baseline(vec![entry("a", Some(2000.0), Some(3000.0), 0, 0.5)]);
        let run = vec![entry("a", Some(2080.0), Some(3000.0), 0, 0.5)];
        let c = compare(&before, &run);
        assert_eq!((c.regressions(), c.tolerated()), (0, 1));
        assert!(c.passes(false));
        assert!(!c.passes(true));
        let md = markdown(&c, Path::new("b.toml"), false);
        assert!(md.contains("passed, with changed figures"), "{md}");
        assert!(
            md.contains(
                "| ⚠ changed | s | a | p50 detection time | 2000.000 ms | 2080.000 ms | +4.00% |"
            ),
            "{md}"
        );
        let strict = markdown(&c, Path::new("b.toml"), true);
        assert!(
            strict.contains("FAILED") && strict.contains("❌ changed"),
            "{strict}"
        );
        assert!(junit(&c, &run, true).contains("failures=\"1\""));
        assert!(junit(&c, &run, false).contains("failures=\"0\""));
        // No change at all: the same under both.
        let same = compare(&before, &before.entries);
        assert!(
            same.passes(true) && markdown(&same, Path::new("b.toml"), true).contains("identical")
        );
    }

    #[test]
    fn false_failed_and_suspicions_have_their_own_tolerances() {
        let mut before = baseline(vec![entry("a", Some(2000.0), Some(3000.0), 0, 0.0)]);
        before.entries[0].suspicions_per_pair_hour = Some(3_000.0);
        before.tolerance.suspicions_per_pair_hour = 500.0;
        // 400 more suspicions per pair-hour are within the tolerance.
        let mut run = before.entries.clone();
        run[0].suspicions_per_pair_hour = Some(3_400.0);
        let c = compare(&before, &run);
        assert!(c.passes(false), "{c:?}");
        assert_eq!(c.changes.len(), 1);
        assert_eq!(c.changes[0].metric, "suspicions per pair-hour");
        assert_eq!(c.changes[0].change, "+400.0000/pair-h");
        // One false Failed per ten pair-hours is not: its tolerance is zero.
        run[0].false_failed_per_pair_hour = Some(0.1);
        let c = compare(&before, &run);
        assert_eq!(c.regressions(), 1);
        let x = c.changes.iter().find(|x| x.regression).unwrap();
        assert_eq!(x.metric, "false Failed per pair-hour");
        // 600 more suspicions are beyond it.
        run[0].false_failed_per_pair_hour = Some(0.0);
        run[0].suspicions_per_pair_hour = Some(3_600.0);
        assert_eq!(compare(&before, &run).regressions(), 1);
    }

    #[test]
    fn lost_detections_lost_entries_and_new_ones_fail() {
        let before = baseline(vec![
            entry("a", Some(2000.0), Some(3000.0), 0, 0.0),
            entry("b", Some(2000.0), Some(3000.0), 0, 0.0),
        ]);
        let run = vec![
            entry("a", None, None, 0, 0.0),
            entry("c", Some(1.0), Some(1.0), 0, 0.0),
        ];
        let c = compare(&before, &run);
        assert_eq!(c.regressions(), 3, "{c:?}");
        assert_eq!(c.missing, vec![("s".to_string(), "b".to_string())]);
        assert_eq!(c.new, vec![("s".to_string(), "c".to_string())]);
        assert_eq!(c.failures(), 4);
        assert!(!c.passed());
        let junit = junit(&c, &run, false);
        assert!(junit.contains("tests=\"3\" failures=\"3\""), "{junit}");
        assert!(junit.contains("not in the baseline"), "{junit}");
        // A result with no entry fails on its own, however good it is.
        let run = vec![
            entry("a", Some(2000.0), Some(3000.0), 0, 0.0),
            entry("b", Some(2000.0), Some(3000.0), 0, 0.0),
            entry("c", Some(1.0), Some(1.0), 0, 0.0),
        ];
        let c = compare(&before, &run);
        assert_eq!((c.regressions(), c.failures()), (0, 1));
        assert!(!c.passed());
        let md = markdown(&c, Path::new("b.toml"), false);
        assert!(
            md.contains("FAILED") && md.contains("`c` is not in the baseline"),
            "{md}"
        );
    }

    #[test]
    fn a_baseline_that_covers_nothing_fails() {
        let run = vec![entry("a", Some(2000.0), Some(3000.0), 0, 0.0)];
        let c = compare(&baseline(Vec::new()), &run);
        assert!(c.compares_nothing());
        assert!(!c.passed());
        let md = markdown(&c, Path::new("b.toml"), false);
        assert!(md.contains("covers none of the suite's 1"), "{md}");
        assert!(!md.contains("identical"), "{md}");
    }

    #[test]
    fn a_rendered_baseline_parses_back_exactly() {
        let entries = vec![
            entry("a", Some(2345.678901), Some(2999.999999), 3, 0.123_456_789),
            entry("b", None, None, 0, 0.0),
        ];
        let text = Baseline::render(Tolerance::default(), entries.clone()).unwrap();
        let back = Baseline::parse(Path::new("b.toml"), &text).unwrap();
        assert_eq!(back.entries, entries);
        assert_eq!(back.tolerance, Tolerance::default());
    }

    #[test]
    fn malformed_baselines_are_named_errors() {
        let p = Path::new("base.toml");
        let err = Baseline::parse(p, "version = 1\nbogus = 3\n").unwrap_err();
        assert!(err.starts_with("base.toml:2: `bogus`"), "{err}");
        let err = Baseline::parse(p, "version = 9\n").unwrap_err();
        assert!(err.contains("`version`"), "{err}");
        let err =
            Baseline::parse(p, "version = 1\n[tolerance]\ndetection_time = -1.0\n").unwrap_err();
        assert!(err.contains("tolerance.detection_time"), "{err}");
        let err = Baseline::parse(p, "version = 1\n[[entry]]\nscenario = \"s\"\n").unwrap_err();
        assert!(err.contains("detector") || err.contains("missing"), "{err}");
        assert!(!err.contains('\n'));
    }
}
