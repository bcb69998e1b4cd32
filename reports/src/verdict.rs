//! A verdict, not only tables: per scenario, which detector to pick and why,
//! what no detector managed, and what to run next. Shown at the top of
//! `index.html` and at the end of the console output.
//!
//! The pick: among the detectors that detected every must-detect window and
//! made no *false Failed* (a Failed verdict about a peer that must not be
//! detected at that moment; a Suspect that ended without Failed is flicker,
//! counted apart), the one with the lowest p99 detection time, and the
//! runner-up. On a scenario with nothing to detect, the one with no false
//! Failed and the fewest suspicions. The figures are the report's own; the
//! rule only orders them. A suspicion is a Suspect that ended without
//! Failed (flicker): it costs a cluster nothing unless something acts on
//! Suspect, so it does not disqualify a detector, and the verdict shows it.

use fdlab_protocol::{Nanos, Verdict as Seen};
use fdlab_sim::outcome::FaultRecord;
use fdlab_sim::scenario::Expect;

use crate::metrics::ScenarioMetrics;

/// One detector's figures, as the verdict weighs them.
#[derive(Clone, Debug, PartialEq)]
pub struct Standing {
    pub detector: String,
    /// Must-detect windows, and those missed.
    pub windows: usize,
    pub missed: usize,
    /// p99 detection time to Failed, if anything was detected.
    pub p99: Option<Nanos>,
    /// Mistakes whose worst verdict was Failed, and the other (Suspect-only)
    /// ones.
    pub false_failed: usize,
    pub suspicions: usize,
    /// The first seed with a false Failed, for a replay.
    pub false_failed_seed: Option<u64>,
}

/// The verdict on one scenario.
#[derive(Clone, Debug, PartialEq)]
pub struct ScenarioVerdict {
    pub scenario: String,
    pub standings: Vec<Standing>,
    /// The pick and the runner-up (indices into `standings`).
    pub best: Option<usize>,
    pub runner_up: Option<usize>,
    /// What no detector managed, in words.
    pub unmet: Vec<String>,
    /// A seed worth replaying, and why.
    pub replay: Option<(u64, String)>,
}

/// The standings of every detector of `m`: the summary's own figures, and
/// the first seed with a false Failed (from the runs' mistakes).
pub fn standings(m: &ScenarioMetrics) -> Vec<Standing> {
    m.summary
        .iter()
        .map(|s| {
            let seed = m.runs.iter().find_map(|run| {
                run.detectors
                    .iter()
                    .filter(|d| d.detector == s.detector)
                    .any(|d| d.mistakes.iter().any(|x| x.worst == Seen::Failed))
                    .then_some(run.seed)
            });
            debug_assert!(s.false_failed <= s.mistakes);
            Standing {
                detector: s.detector.clone(),
                windows: s.detect_windows,
                missed: s.failed_missed,
                p99: s.failed.as_ref().map(|f| f.p99),
                false_failed: s.false_failed,
                suspicions: s.mistakes - s.false_failed,
                false_failed_seed: seed,
            }
        })
        .collect()
}

/// The verdict on `m`.
pub fn verdict(m: &ScenarioMetrics) -> ScenarioVerdict {
    let standings = standings(m);
    let detect = standings.iter().any(|s| s.windows > 0);
    let mut order: Vec<usize> = (0..standings.len())
        .filter(|&i| {
            let s = &standings[i];
            s.false_failed == 0 && (!detect || s.missed == 0)
        })
        .collect();
    order.sort_by_key(|&i| {
        let s = &standings[i];
        if detect {
            (s.p99.unwrap_or(Nanos::MAX), 0, i)
        } else {
            (Nanos::ZERO, s.suspicions, i)
        }
    });
    let mut unmet = Vec::new();
    if detect && standings.iter().all(|s| s.missed > 0) {
        unmet.push("no detector detected every fault it had to detect".to_string());
    }
    if standings.iter().all(|s| s.false_failed > 0) {
        unmet.push(format!(
            "no detector tolerates {} here: every one declared a healthy peer Failed",
            tolerated_faults(m)
        ));
    }
    if order.is_empty() && unmet.is_empty() {
        unmet.push("no detector both detected every fault and made no false Failed".to_string());
    }
    let replay = standings
        .iter()
        .find_map(|s| {
            s.false_failed_seed
                .map(|seed| (seed, format!("`{}`'s first false Failed", s.detector)))
        })
        .or_else(|| {
            m.runs
                .first()
                .map(|r| (r.seed, "the first seed".to_string()))
        });
    ScenarioVerdict {
        scenario: m.scenario.clone(),
        best: order.first().copied(),
        runner_up: order.get(1).copied(),
        standings,
        unmet,
        replay,
    }
}

/// The faults a scenario's detectors must tolerate, in words ("the pause
/// faults (up to 30 s)"), from its first run's records.
fn tolerated_faults(m: &ScenarioMetrics) -> String {
    let Some(run) = m.runs.first() else {
        return "this scenario".into();
    };
    let tolerated: Vec<&FaultRecord> = run
        .faults
        .iter()
        .filter(|f| f.expect == Expect::Tolerate)
        .collect();
    let mut kinds: Vec<&str> = tolerated.iter().map(|f| f.kind.name()).collect();
    kinds.dedup();
    kinds.sort_unstable();
    kinds.dedup();
    let longest = tolerated
        .iter()
        .map(|f| f.window.end - f.window.start)
        .max();
    match (kinds.as_slice(), longest) {
        ([], _) => "this scenario's traffic".into(),
        (kinds, Some(len)) => format!("the {} faults (up to {})", kinds.join(" and "), short(len)),
        (kinds, None) => format!("the {} faults", kinds.join(" and ")),
    }
}

/// A duration for a sentence: `30 s`, `500 ms`, `12.5 ms`.
fn short(d: Nanos) -> String {
    let ms = d.as_nanos_f64() / 1e6;
    if ms >= 1_000.0 {
        format!("{} s", trim(ms / 1e3))
    } else if ms >= 1.0 {
        format!("{} ms", trim(ms))
    } else {
        format!("{} µs", trim(ms * 1e3))
    }
}

/// At most three significant decimals, no trailing zeros.
fn trim(v: f64) -> String {
    let text = format!("{v:.3}");
    text.trim_end_matches('0').trim_end_matches('.').to_string()
}

impl ScenarioVerdict {
    /// The verdict in sentences, for the console and the page.
    pub fn sentences(&self) -> Vec<String> {
        let mut out = Vec::new();
        let detect = self.standings.iter().any(|s| s.windows > 0);
        let describe = |s: &Standing| {
            if detect {
                format!(
                    "`{}` (p99 detection {}, {} suspicion{})",
                    s.detector,
                    s.p99.map_or("-".into(), short),
                    s.suspicions,
                    if s.suspicions == 1 { "" } else { "s" }
                )
            } else {
                format!(
                    "`{}` ({} suspicion{})",
                    s.detector,
                    s.suspicions,
                    if s.suspicions == 1 { "" } else { "s" }
                )
            }
        };
        if let Some(b) = self.best {
            let what = if detect {
                "fastest to detect, with no false Failed and nothing missed"
            } else {
                "fewest suspicions, with no false Failed"
            };
            out.push(format!("{what}: {}", describe(&self.standings[b])));
            if let Some(r) = self.runner_up {
                out.push(format!("runner-up: {}", describe(&self.standings[r])));
            }
        }
        out.extend(self.unmet.iter().cloned());
        out
    }

    /// The picked detector's name, if any.
    pub fn best_name(&self) -> Option<&str> {
        self.best.map(|b| self.standings[b].detector.as_str())
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
    fn the_pick_is_the_fastest_without_a_false_failed() {
        let m = scenario_metrics(&ScenarioResult {
            scenario: "t".into(),
            runs: vec![outcome()],
        });
        let v = verdict(&m);
        let names: Vec<&str> = [v.best, v.runner_up]
            .iter()
            .map(|i| v.standings[i.unwrap()].detector.as_str())
            .collect();
        // jumpy detects fastest but made a false Failed.
        assert_eq!(names, ["quick", "slow"]);
        let jumpy = &v.standings[2];
        assert_eq!((jumpy.false_failed, jumpy.false_failed_seed), (1, Some(4)));
        assert_eq!(v.replay.as_ref().unwrap().0, 4);
        let text = v.sentences().join("\n");
        assert!(text.contains("fastest to detect, with no false Failed and nothing missed: `quick` (p99 detection 2 s"), "{text}");
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

    #[test]
    fn short_durations_read_well() {
        assert_eq!(short(s(30)), "30 s");
        assert_eq!(short(Nanos::from_micros(12_500)), "12.5 ms");
        assert_eq!(short(Nanos::from_micros(250)), "250 µs");
    }
}
