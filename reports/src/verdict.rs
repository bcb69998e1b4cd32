//! A verdict, not only tables: per scenario, which detector to pick and why,
//! and what to run next. Shown in `index.html`'s Verdict list and at the
//! end of the console output (`-v`, or a run of one scenario).
//!
//! The pick is the decision summary's ([`crate::summary::weigh`]), made on
//! the scenario alone: every must-detect fault detected, then the fewest
//! tolerated fault classes failed, the longest pause tolerated, the fewest
//! false Failed and the fewest messages per detection, then the fastest;
//! the sentences say what the pick gives up against the fastest detector
//! and the cheapest, and what none managed. The summary weighs the same
//! way over groups of scenarios, so a scenario's pick and its group's
//! differ only where the other scenarios of the group weigh otherwise.
//! The replay it suggests is the first seed with a false Failed (a Failed
//! verdict about a peer that must not be detected at that moment), else
//! the first seed.

use fdlab_protocol::Verdict as Seen;

use crate::metrics::ScenarioMetrics;
use crate::summary::detectors::detectors_part;

/// The verdict on one scenario.
#[derive(Clone, Debug, PartialEq)]
pub struct ScenarioVerdict {
    pub scenario: String,
    /// The detector to pick, if the rule found one.
    pub pick: Option<String>,
    /// The pick and its trade in sentences (the pick's first), and what
    /// no detector managed.
    pub sentences: Vec<String>,
    /// A seed worth replaying, and why.
    pub replay: Option<(u64, String)>,
}

/// The verdict on `m`.
pub fn verdict(m: &ScenarioMetrics) -> ScenarioVerdict {
    // One scenario is one group of the summary's detectors part.
    let group = detectors_part(std::slice::from_ref(m))
        .groups
        .into_iter()
        .next();
    let (pick, sentences) = group.map_or((None, Vec::new()), |g| (g.pick, g.sentences));
    let false_failed_seed = |detector: &str| {
        m.runs.iter().find_map(|run| {
            run.detectors
                .iter()
                .filter(|d| d.detector == detector)
                .any(|d| d.mistakes.iter().any(|x| x.worst == Seen::Failed))
                .then_some(run.seed)
        })
    };
    let replay = m
        .summary
        .iter()
        .find_map(|s| {
            false_failed_seed(&s.detector)
                .map(|seed| (seed, format!("`{}`'s first false Failed", s.detector)))
        })
        .or_else(|| {
            m.runs
                .first()
                .map(|r| (r.seed, "the first seed".to_string()))
        });
    ScenarioVerdict {
        scenario: m.scenario.clone(),
        pick,
        sentences,
        replay,
    }
}

impl ScenarioVerdict {
    /// The verdict in sentences, for the console and the page.
    pub fn sentences(&self) -> Vec<String> {
        self.sentences.clone()
    }

    /// The picked detector's name, if any.
    pub fn best_name(&self) -> Option<&str> {
        self.pick.as_deref()
    }

    /// Three next steps: replay a seed, tune (the kind `kind`, the pick's
    /// when known), check. `scenario` is how a command line names the
    /// scenario (its file as given, or a built-in's name), quoted for a
    /// shell where it must be.
    pub fn next_steps(&self, scenario: &str, kind: Option<&str>) -> [String; 3] {
        let scenario = shell_word(scenario);
        let replay = match &self.replay {
            Some((seed, why)) => format!(
                "fdlab replay {scenario} --seed {seed}    # {why}: every verdict, and a timeline"
            ),
            None => format!("fdlab replay {scenario} --seed 1"),
        };
        [
            replay,
            format!(
                "fdlab tune {scenario} --detector {} --max-false-failed-per-hour 0    # the fastest setting with no false Failed, and its evidence",
                kind.unwrap_or("phi-accrual")
            ),
            "fdlab check --baseline scenarios/ci-baseline.toml    # gate detection time in CI".into(),
        ]
    }
}

/// `word` as one word of a POSIX shell command: as it is when it holds only
/// characters no shell treats specially, else in single quotes.
pub fn shell_word(word: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "_-./:=,+@%".contains(c);
    if !word.is_empty() && word.chars().all(plain) {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::{scenario_metrics, ScenarioResult};
    use fdlab_protocol::Nanos;
    use fdlab_sim::outcome::{DetectorTimeline, MustDetect, PairOutcome, RunOutcome, Window};

    fn s(secs: u64) -> Nanos {
        Nanos::from_secs(secs)
    }

    /// Two detectors on one pair that must detect a fault over [10 s, 60 s):
    /// `quick` fails at 12 s, `slow` at 20 s; `jumpy` also fails for a
    /// second at 5 s, when nothing is wrong.
    fn outcome() -> RunOutcome {
        let timeline = |changes: Vec<(Nanos, Seen)>| DetectorTimeline {
            changes,
            messages: 0,
            bytes: 0,
        };
        RunOutcome {
            scenario: "t".into(),
            seed: 4,
            duration: s(60),
            detectors: vec!["slow".into(), "quick".into(), "jumpy".into()],
            nodes: vec!["n0".into(), "n1".into()],
            layers: Vec::new(),
            faults: Vec::new(),
            pairs: vec![PairOutcome {
                monitor: 0,
                target: 1,
                must_detect: vec![MustDetect {
                    window: Window {
                        start: s(10),
                        end: s(60),
                    },
                    fault: 0,
                }],
                unjudged: Vec::new(),
                detectors: vec![
                    timeline(vec![(s(20), Seen::Failed)]),
                    timeline(vec![(s(12), Seen::Failed)]),
                    timeline(vec![
                        (s(5), Seen::Failed),
                        (s(6), Seen::Alive),
                        (s(11), Seen::Failed),
                    ]),
                ],
            }],
            events: 0,
        }
    }

    #[test]
    fn the_pick_is_the_summary_s_on_the_scenario_alone() {
        let m = scenario_metrics(&ScenarioResult {
            scenario: "t".into(),
            runs: vec![outcome()],
        });
        let v = verdict(&m);
        // jumpy detects fastest but made a false Failed: quick, then slow.
        assert_eq!(v.best_name(), Some("quick"));
        let summary = detectors_part(std::slice::from_ref(&m));
        assert_eq!(v.sentences(), summary.groups[0].sentences);
        assert!(
            v.sentences[0].starts_with("pick `quick`"),
            "{:?}",
            v.sentences
        );
        assert!(
            v.sentences[1].starts_with("runner-up `slow`"),
            "{:?}",
            v.sentences
        );
        assert!(v
            .sentences
            .iter()
            .any(|l| l.contains("slower to detect than `jumpy`")));
        // The replay: jumpy's first false Failed.
        assert_eq!(v.replay.as_ref().unwrap().0, 4);
        assert!(v.next_steps("t", None)[0].starts_with("fdlab replay t --seed 4"));
        assert!(v.next_steps("t", Some("fixed-timeout"))[1].contains("--detector fixed-timeout"));
        let steps = v.next_steps("my dir/it's.toml", None);
        assert!(
            steps[0].starts_with("fdlab replay 'my dir/it'\\''s.toml' --seed 4"),
            "{}",
            steps[0]
        );
        assert_eq!(shell_word("scenarios/x.toml"), "scenarios/x.toml");
    }
}
