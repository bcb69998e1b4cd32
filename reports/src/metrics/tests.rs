//! Fixtures shared by the metrics' tests and the tables', charts' and
//! reports' tests (a hand-built run of two seeds), and the tests of the
//! aggregates.

use super::*;
use fdlab_protocol::{Nanos, Verdict};
use fdlab_sim::outcome::{DetectorTimeline, FaultRecord, MustDetect, PairOutcome, Window};
use fdlab_sim::scenario::{Expect, FaultKind};

pub(crate) fn ms(v: u64) -> Nanos {
    Nanos::from_millis(v)
}

pub(crate) fn win(start_ms: u64, end_ms: u64) -> Window {
    Window {
        start: ms(start_ms),
        end: ms(end_ms),
    }
}

pub(crate) fn timeline(changes: &[(u64, Verdict)]) -> DetectorTimeline {
    DetectorTimeline {
        changes: changes.iter().map(|&(t, v)| (ms(t), v)).collect(),
        messages: 0,
        bytes: 0,
    }
}

pub(crate) fn pair(detect: &[(u64, u64)], unjudged: &[(u64, u64)]) -> PairOutcome {
    PairOutcome {
        monitor: 0,
        target: 1,
        must_detect: detect
            .iter()
            .map(|&(s, e)| MustDetect {
                window: win(s, e),
                fault: 0,
            })
            .collect(),
        unjudged: unjudged.iter().map(|&(s, e)| win(s, e)).collect(),
        detectors: Vec::new(),
    }
}

use Verdict::{Alive, Failed, Suspect};

pub(crate) const RUN: Nanos = Nanos(60_000_000_000);

#[test]
fn nearest_rank_percentiles() {
    let sorted: Vec<Nanos> = [15, 20, 35, 40, 50].iter().map(|&v| Nanos(v)).collect();
    assert_eq!(nearest_rank(&sorted, 5), Some(Nanos(15)));
    assert_eq!(nearest_rank(&sorted, 30), Some(Nanos(20)));
    assert_eq!(nearest_rank(&sorted, 40), Some(Nanos(20)));
    assert_eq!(nearest_rank(&sorted, 50), Some(Nanos(35)));
    assert_eq!(nearest_rank(&sorted, 100), Some(Nanos(50)));
    assert_eq!(nearest_rank(&sorted, 0), Some(Nanos(15)));
    assert_eq!(nearest_rank(&[], 50), None);
    let hundred: Vec<Nanos> = (1..=100).map(Nanos).collect();
    assert_eq!(nearest_rank(&hundred, 50), Some(Nanos(50)));
    assert_eq!(nearest_rank(&hundred, 90), Some(Nanos(90)));
    assert_eq!(nearest_rank(&hundred, 99), Some(Nanos(99)));
    let s = DurationStats::from_samples([Nanos(3), Nanos(1), Nanos(2), Nanos(4)]).unwrap();
    assert_eq!(
        (s.n, s.mean, s.p50, s.p90, s.p99, s.max),
        (4, Nanos(3), Nanos(2), Nanos(4), Nanos(4), Nanos(4))
    );
    assert_eq!(DurationStats::from_samples([]), None);
}

pub(crate) fn run(seed: u64, pairs: Vec<PairOutcome>) -> RunOutcome {
    RunOutcome {
        scenario: "crash".into(),
        seed,
        duration: RUN,
        detectors: vec!["fixed".into(), "phi".into()],
        nodes: vec!["n0".into(), "n1".into(), "n2".into()],
        layers: Vec::new(),
        faults: vec![FaultRecord {
            kind: FaultKind::Crash,
            target: "n1".into(),
            node: Some(1),
            held: vec![1],
            window: win(10_000, 40_000),
            expect: Expect::Detect,
        }],
        pairs,
        events: 1000,
    }
}

/// Two seeds, two pairs each, two detectors.
pub(crate) fn two_seeds() -> ScenarioResult {
    let mut runs = Vec::new();
    for (seed, fixed_delay, phi_flap) in [(1, 2_000, false), (2, 3_000, true)] {
        let mut a = pair(&[(10_000, 40_000)], &[]);
        a.detectors = vec![
            DetectorTimeline {
                changes: vec![(ms(10_000 + fixed_delay), Failed), (ms(40_500), Alive)],
                messages: 60,
                bytes: 6_000,
            },
            DetectorTimeline {
                changes: if phi_flap {
                    vec![
                        (ms(5_000), Suspect),
                        (ms(5_500), Alive),
                        (ms(11_000), Failed),
                        (ms(40_000), Alive),
                    ]
                } else {
                    vec![(ms(11_000), Failed), (ms(40_000), Alive)]
                },
                messages: 600,
                bytes: 60_000,
            },
        ];
        let mut b = pair(&[], &[]);
        b.monitor = 2;
        b.target = 0;
        b.detectors = vec![
            DetectorTimeline {
                changes: vec![],
                messages: 60,
                bytes: 6_000,
            },
            DetectorTimeline {
                changes: vec![],
                messages: 600,
                bytes: 60_000,
            },
        ];
        runs.push(run(seed, vec![a, b]));
    }
    ScenarioResult {
        scenario: "crash".into(),
        runs,
    }
}

#[test]
fn aggregate_over_two_seeds() {
    let m = scenario_metrics(&two_seeds());
    assert_eq!(m.runs.len(), 2);
    assert_eq!(m.summary.len(), 2);
    let fixed = &m.summary[0];
    assert_eq!(fixed.detector, "fixed");
    assert_eq!(
        (fixed.runs, fixed.pair_runs, fixed.detect_windows),
        (2, 4, 2)
    );
    let f = fixed.failed.unwrap();
    assert_eq!(
        (f.n, f.mean, f.p50, f.p99, f.max),
        (2, ms(2_500), ms(2_000), ms(3_000), ms(3_000))
    );
    let ci = fixed.failed_ci.unwrap();
    assert_eq!(ci.runs, 2);
    assert_eq!(ci.mean, 2.5e9);
    // s = 0.5 s·√2, t(1) = 12.7062: half-width 12.7062 · 0.5 s.
    assert!((ci.high - (2.5e9 + 12.7062 * 0.5e9)).abs() < 1.0);
    assert_eq!(fixed.failed_missed, 0);
    assert_eq!(fixed.mistakes, 0);
    // Must-not-detect: pair a 30 s, pair b 60 s, per seed.
    assert_eq!(fixed.must_not_detect, 2 * 90 * 1_000_000_000u128);
    // 500 ms of Failed after the fault ended, per seed.
    assert_eq!(fixed.alive_must_not_detect, 2 * 89_500 * 1_000_000u128);
    assert_eq!(fixed.mistake_rate(), Some(0.0));
    assert_eq!(fixed.mistake_rate_ci.unwrap().high, 0.0);
    assert_eq!(fixed.share_runs_with_mistake(), Some(0.0));
    // 120 messages per run over 2 pairs × 60 s.
    assert_eq!(fixed.messages_per_pair_second(), Some(1.0));
    assert_eq!(fixed.bytes_per_pair_second(), Some(100.0));

    let phi = &m.summary[1];
    assert_eq!(phi.failed.unwrap().mean, ms(1_000));
    assert_eq!(phi.mistakes, 1);
    assert_eq!(phi.mean_mistake(), Some(ms(500)));
    assert_eq!(phi.runs_with_mistake, 1);
    assert_eq!(phi.share_runs_with_mistake(), Some(0.5));
    // One mistake in 180 pair-seconds = 0.05 pair-hours.
    let rate = phi.mistake_rate().unwrap();
    assert!((rate - 20.0).abs() < 1e-9, "{rate}");
    let ci = phi.mistake_rate_ci.unwrap();
    assert_eq!(ci.runs, 2);
    assert!((ci.mean - 20.0).abs() < 1e-9);
    assert_eq!(ci.low, 0.0);
    assert!(ci.high > 20.0);
    // The flap: 500 ms of Suspect out of 180 s.
    assert_eq!(phi.alive_must_not_detect, 180_000_000_000 - 500_000_000);
    assert_eq!(phi.messages_per_pair_second(), Some(10.0));
}

#[test]
fn degenerate_inputs_do_not_panic() {
    let empty = ScenarioResult {
        scenario: "empty".into(),
        runs: Vec::new(),
    };
    let m = scenario_metrics(&empty);
    assert!(m.summary.is_empty());

    // Zero duration, no pairs, a pair missing timelines, a bad window.
    let mut r = run(1, Vec::new());
    r.duration = Nanos::ZERO;
    let m = scenario_metrics(&ScenarioResult {
        scenario: "x".into(),
        runs: vec![r.clone()],
    });
    let s = &m.summary[0];
    assert_eq!(s.pair_runs, 0);
    assert_eq!(s.failed, None);
    assert_eq!(s.mistake_rate(), None);
    assert_eq!(s.query_accuracy(), None);
    assert_eq!(s.messages_per_pair_second(), None);

    let mut p = pair(&[(30_000, 10_000)], &[(50_000, 40_000)]);
    p.detectors = vec![timeline(&[(u64::MAX / 1_000_000, Failed)])];
    p.monitor = 99;
    p.must_detect[0].fault = 42;
    r.pairs = vec![p.clone()];
    r.duration = Nanos::ZERO;
    let _ = scenario_metrics(&ScenarioResult {
        scenario: "x".into(),
        runs: vec![r.clone()],
    });
    r.duration = RUN;
    let m = scenario_metrics(&ScenarioResult {
        scenario: "x".into(),
        runs: vec![r],
    });
    assert_eq!(m.summary[0].pair_runs, 1);
    assert_eq!(m.summary[1].pair_runs, 0);
    assert_eq!(m.summary[0].detect_windows, 0);
    assert_eq!(m.runs[0].node_name(99), "99");
}

#[test]
fn recovery_lag_and_query_accuracy_over_healthy_time() {
    let m = scenario_metrics(&two_seeds());
    let fixed = &m.summary[0];
    // Alive again 500 ms after the crashed node came back, in both seeds.
    let r = fixed.recovery.unwrap();
    assert_eq!((r.n, r.p50, r.p99, r.max), (2, ms(500), ms(500), ms(500)));
    assert_eq!(fixed.recovery_unfinished, 0);
    // No mistake: P_A over healthy time is whole, though the share of all
    // must-not-detect time with an Alive verdict is not.
    assert_eq!(fixed.healthy, 2 * 89_500 * 1_000_000u128);
    assert_eq!(fixed.query_accuracy(), Some(1.0));
    let share = fixed.alive_share_must_not_detect().unwrap();
    assert!((share - 89.5 / 90.0).abs() < 1e-12, "{share}");
    let phi = &m.summary[1];
    // Alive at the very instant the fault ended: zero lag, no window.
    let r = phi.recovery.unwrap();
    assert_eq!((r.n, r.p50, r.p99), (2, Nanos::ZERO, Nanos::ZERO));
    assert_eq!(phi.healthy, 180_000_000_000);
    // Its one mistake, a suspicion of 500 ms, is all it loses.
    assert_eq!(phi.alive_healthy, 180_000_000_000 - 500_000_000);
    assert_eq!((phi.false_failed, phi.suspicions()), (0, 1));
    assert_eq!(phi.mean_suspicion(), Some(ms(500)));
    assert_eq!(phi.mean_false_failed(), None);
    assert_eq!(phi.false_failed_rate(), Some(0.0));
    assert_eq!(phi.false_failed_rate_ci.unwrap().high, 0.0);
    assert!((phi.suspicion_rate().unwrap() - 20.0).abs() < 1e-9);
}

#[test]
fn false_failed_and_suspicions_partition_the_mistakes() {
    let mut result = two_seeds();
    // Seed 2: phi declares the healthy n0 Failed for 1.5 s (2 s in all).
    result.runs[1].pairs[1].detectors[1].changes = vec![
        (ms(20_000), Suspect),
        (ms(20_500), Failed),
        (ms(22_000), Alive),
    ];
    let phi = &scenario_metrics(&result).summary[1];
    assert_eq!(
        (phi.mistakes, phi.false_failed, phi.suspicions()),
        (2, 1, 1)
    );
    assert_eq!(phi.mean_false_failed(), Some(ms(2_000)));
    assert_eq!(phi.mean_suspicion(), Some(ms(500)));
    assert_eq!(phi.mean_mistake(), Some(ms(1_250)));
    // 0.05 pair-hours of must-not-detect time: 20 of each per pair-hour, and
    // per run 0 then 40 of each (0.025 pair-hours a run).
    for (rate, ci) in [
        (phi.false_failed_rate(), phi.false_failed_rate_ci),
        (phi.suspicion_rate(), phi.suspicion_rate_ci),
    ] {
        assert!((rate.unwrap() - 20.0).abs() < 1e-9);
        let ci = ci.unwrap();
        assert_eq!(ci.runs, 2);
        assert!((ci.mean - 20.0).abs() < 1e-9);
    }
    assert!((phi.mistake_rate().unwrap() - 40.0).abs() < 1e-9);
    assert_eq!(phi.runs_with_mistake, 1);
}

#[test]
fn link_classes_add_up_to_the_blend() {
    // A mesh: one class, the blend itself.
    let m = scenario_metrics(&two_seeds());
    assert_eq!(m.classes.len(), 2);
    for (c, s) in m.classes.iter().zip(&m.summary) {
        assert_eq!(c.class, LinkClass::Mesh);
        assert_eq!(&c.summary, s);
    }
    // The same pairs as a dataflow: n0 a source, n1 and n2 deeper stages, so
    // pair a (n0 watches n1) is a forwarded link, b (n2 watches n0) a source
    // link; b gets a false Failed and a suspicion in seed 2.
    let mut result = two_seeds();
    for run in &mut result.runs {
        run.layers = vec![0, 1, 2];
    }
    result.runs[1].pairs[1].detectors[1].changes = vec![
        (ms(20_000), Suspect),
        (ms(20_500), Failed),
        (ms(22_000), Alive),
        (ms(30_000), Suspect),
        (ms(30_100), Alive),
    ];
    let m = scenario_metrics(&result);
    let names: Vec<(&str, LinkClass)> = m
        .classes
        .iter()
        .map(|c| (c.summary.detector.as_str(), c.class))
        .collect();
    assert_eq!(
        names,
        [
            ("fixed", LinkClass::Source),
            ("fixed", LinkClass::Forwarded),
            ("phi", LinkClass::Source),
            ("phi", LinkClass::Forwarded),
        ]
    );
    for s in &m.summary {
        let parts: Vec<&DetectorSummary> = m
            .classes
            .iter()
            .filter(|c| c.summary.detector == s.detector)
            .map(|c| &c.summary)
            .collect();
        let sum = |f: fn(&DetectorSummary) -> u128| parts.iter().map(|p| f(p)).sum::<u128>();
        assert_eq!(sum(|p| u128::from(p.pair_runs)), u128::from(s.pair_runs));
        assert_eq!(sum(|p| p.detect_windows as u128), s.detect_windows as u128);
        assert_eq!(sum(|p| p.failed.map_or(0, |f| f.n) as u128), 2);
        assert_eq!(sum(|p| p.mistakes as u128), s.mistakes as u128);
        assert_eq!(sum(|p| p.false_failed as u128), s.false_failed as u128);
        assert_eq!(sum(|p| p.mistake_time), s.mistake_time);
        assert_eq!(sum(|p| p.must_not_detect), s.must_not_detect);
        assert_eq!(sum(|p| p.healthy), s.healthy);
        assert_eq!(sum(|p| p.alive_healthy), s.alive_healthy);
        assert_eq!(sum(|p| p.messages), s.messages);
        let recoveries =
            |p: &DetectorSummary| p.recovery.map_or(0, |r| r.n) + p.recovery_unfinished;
        assert_eq!(
            parts.iter().map(|p| recoveries(p)).sum::<usize>(),
            recoveries(s)
        );
    }
    let phi_source = &m.classes[2].summary;
    assert_eq!((phi_source.false_failed, phi_source.suspicions()), (1, 1));
    // 1 false Failed in 120 pair-seconds of the source links.
    assert!((phi_source.false_failed_rate().unwrap() - 30.0).abs() < 1e-9);
    let phi_forwarded = &m.classes[3].summary;
    assert_eq!(
        (phi_forwarded.false_failed, phi_forwarded.suspicions()),
        (0, 1)
    );
}
