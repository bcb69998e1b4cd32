//! The detectors' part of the summary: per group of scenarios that ran the
//! same detectors, one row per detector with the fault classes it passes
//! and fails, its median detection time and its costs, then the pick
//! ([`super::weigh`]).
//!
//! **Fault classes.** *Detects K*: every must-detect window of a fault of
//! kind K reached Failed before the window (clipped to the run) ended.
//! *Tolerates K*: no false Failed was put down to a fault of kind K
//! ([`super::blame`]); for pauses, up to which length every pause was
//! tolerated. The figures are pooled over the group's runs: the median of
//! every detection time to Failed, false Failed and suspicions (Suspect-only
//! mistakes) per pair-hour of must-not-detect time, liveness messages per
//! pair-second.

use fdlab_protocol::Nanos;
use fdlab_sim::stats::DurationStats;

use super::blame::{blame, Mistake, Tolerance};
use super::weigh::{group, Standing, Words};
use super::{by_lineup, Part};
use crate::metrics::ScenarioMetrics;

/// Nanoseconds in an hour and in a second.
const NANOS_PER_HOUR: f64 = 3.6e12;
const NANOS_PER_SECOND: f64 = 1e9;

/// How the detectors' part names its figures.
pub const WORDS: Words = Words {
    mistakes: "false Failed",
    exposure: "pair-hour",
    message_per: "pair-second",
    detect: "detect",
    detects: "detects",
    speed: "median",
    speed_title: "T_D p50",
};

/// One detector's standing over a group's scenarios.
fn standing(detector: &str, scenarios: &[&ScenarioMetrics]) -> Standing {
    let mut detect: Vec<(fdlab_sim::scenario::FaultKind, usize, usize)> = Vec::new();
    let mut delays: Vec<Nanos> = Vec::new();
    let mut tolerance = Tolerance::default();
    let (mut false_failed, mut suspicions) = (0usize, 0usize);
    let (mut exposure, mut messages, mut pair_time) = (0u128, 0u128, 0u128);
    for m in scenarios {
        for run in &m.runs {
            for d in run.detectors.iter().filter(|d| d.detector == detector) {
                for w in &d.detections {
                    delays.extend(w.failed_delay());
                    // Every window names its fault; a hand-made outcome
                    // without fault records has no class.
                    let Some(kind) = run.faults.get(w.fault).map(|f| f.kind) else {
                        continue;
                    };
                    let missed = usize::from(w.failed_at.is_none());
                    match detect.iter_mut().find(|(k, ..)| *k == kind) {
                        Some(entry) => {
                            entry.1 += 1;
                            entry.2 += missed;
                        }
                        None => detect.push((kind, 1, missed)),
                    }
                }
                let mistakes: Vec<Mistake> = d
                    .mistakes
                    .iter()
                    .filter(|x| x.is_false_failed())
                    .map(|x| Mistake {
                        at: x.start,
                        observer: x.monitor,
                        target: x.target,
                    })
                    .collect();
                tolerance
                    .faults
                    .extend(blame(&run.faults, run.duration, &mistakes));
                false_failed += d.false_failed();
                suspicions += d.suspicions();
                exposure += d.must_not_detect;
                messages += u128::from(d.messages);
                pair_time += d.pair_time;
            }
        }
    }
    let per_hour = |n: usize| (exposure > 0).then(|| n as f64 / (exposure as f64 / NANOS_PER_HOUR));
    Standing {
        name: detector.to_string(),
        detect,
        tolerance,
        speed: DurationStats::from_samples(delays).map(|s| s.p50),
        false_rate: per_hour(false_failed),
        suspicion_rate: per_hour(suspicions),
        message_rate: (pair_time > 0)
            .then(|| messages as f64 / (pair_time as f64 / NANOS_PER_SECOND)),
    }
}

/// The part for the run's detector scenarios, in the order given.
pub fn detectors_part(metrics: &[ScenarioMetrics]) -> Part {
    let lineups: Vec<Vec<String>> = metrics
        .iter()
        .map(|m| m.summary.iter().map(|s| s.detector.clone()).collect())
        .collect();
    let groups = by_lineup(&lineups)
        .into_iter()
        .map(|(lineup, members)| {
            let scenarios: Vec<&ScenarioMetrics> = members.iter().map(|&i| &metrics[i]).collect();
            let standings: Vec<Standing> = lineup.iter().map(|c| standing(c, &scenarios)).collect();
            let names = scenarios.iter().map(|m| m.scenario.clone()).collect();
            group(names, &standings, &WORDS)
        })
        .collect();
    Part {
        id: "detectors".into(),
        title: "Detectors".into(),
        candidate: "detector".into(),
        groups,
    }
}

#[cfg(test)]
#[path = "detectors_tests.rs"]
mod tests;
