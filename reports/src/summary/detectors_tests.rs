use super::*;
use crate::metrics::{scenario_metrics, ScenarioResult};
use crate::summary::Cell;
use fdlab_protocol::Verdict as Seen;
use fdlab_sim::outcome::{
    DetectorTimeline, FaultRecord, MustDetect, PairOutcome, RunOutcome, Window,
};
use fdlab_sim::scenario::{Expect, FaultKind};

fn s(secs: u64) -> Nanos {
    Nanos::from_secs(secs)
}
fn ms(millis: u64) -> Nanos {
    Nanos::from_millis(millis)
}

fn fault(kind: FaultKind, node: u32, start: Nanos, end: Nanos, expect: Expect) -> FaultRecord {
    FaultRecord {
        kind,
        target: format!("n{node}"),
        node: Some(node),
        held: vec![node],
        window: Window { start, end },
        expect,
    }
}

/// Three detectors watch n0 -> n1 for 100 s: n1 pauses for 2 s at 10 s
/// (tolerate) and crashes at 60 s (detect). `fast` detects in 0.5 s but
/// sends ten times the messages and declares the paused n1 Failed;
/// `cheap` detects in 2.5 s; `lazy` in 8 s at the same cost as `cheap`.
fn outcome() -> RunOutcome {
    let timeline = |changes: Vec<(Nanos, Seen)>, messages: u64| DetectorTimeline {
        changes,
        messages,
        bytes: 0,
    };
    RunOutcome {
        scenario: "t".into(),
        seed: 1,
        duration: s(100),
        detectors: vec!["fast".into(), "cheap".into(), "lazy".into()],
        nodes: vec!["n0".into(), "n1".into()],
        layers: Vec::new(),
        faults: vec![
            fault(FaultKind::Pause, 1, s(10), s(12), Expect::Tolerate),
            fault(FaultKind::Crash, 1, s(60), s(100), Expect::Detect),
        ],
        pairs: vec![PairOutcome {
            monitor: 0,
            target: 1,
            must_detect: vec![MustDetect {
                window: Window {
                    start: s(60),
                    end: s(100),
                },
                fault: 1,
            }],
            unjudged: Vec::new(),
            detectors: vec![
                timeline(
                    vec![
                        (s(10) + ms(500), Seen::Failed),
                        (s(12), Seen::Alive),
                        (s(60) + ms(500), Seen::Failed),
                    ],
                    1_000,
                ),
                timeline(vec![(s(62) + ms(500), Seen::Failed)], 100),
                timeline(vec![(s(68), Seen::Failed)], 100),
            ],
        }],
        events: 0,
    }
}

fn part() -> Part {
    let m = scenario_metrics(&ScenarioResult {
        scenario: "t".into(),
        runs: vec![outcome()],
    });
    detectors_part(&[m])
}

#[test]
fn the_fastest_detector_loses_to_one_ten_times_cheaper_that_tolerates_the_pause() {
    let part = part();
    let g = &part.groups[0];
    assert_eq!(g.pick.as_deref(), Some("cheap"), "{:#?}", g.sentences);
    let text = g.sentences.join("\n");
    assert!(
        text.contains("`cheap` is 5.0× slower to detect than `fast` (2.5 s against 500 ms) at 1/10 of its messages"),
        "{text}"
    );
    assert!(text.contains("`fast` makes false Failed under pauses of 2.0 s and makes 60 false Failed per pair-hour against none"), "{text}");
    assert!(text.starts_with("pick `cheap`: detects every crash fault (median 2.5 s); tolerates every pause (to 2.0 s)"), "{text}");
}

#[test]
fn cells_say_which_classes_each_detector_passes() {
    let part = part();
    let g = &part.groups[0];
    let titles: Vec<&str> = g.columns.iter().map(|c| c.title.as_str()).collect();
    assert_eq!(
        titles[..2],
        ["detects crash", "tolerates pause"],
        "{titles:?}"
    );
    let fast = &g.rows[0];
    assert!(matches!(&fast.cells[0], Cell::Pass { .. }));
    assert_eq!(
        fast.cells[1],
        Cell::Fail {
            text: "no, 2.0 s".into()
        }
    );
    assert_eq!(
        g.rows[1].cells[1],
        Cell::Pass {
            text: "yes, to 2.0 s".into()
        }
    );
    // Messages per pair-second: 1,000 over 100 s.
    assert_eq!(fast.cells.last().unwrap().text(), "10.00");
}

#[test]
fn a_detector_that_misses_a_crash_is_never_picked() {
    let mut run = outcome();
    // `cheap` and `lazy` never reach Failed; `fast` is the only one left.
    run.pairs[0].detectors[1].changes.clear();
    run.pairs[0].detectors[2].changes.clear();
    let m = scenario_metrics(&ScenarioResult {
        scenario: "t".into(),
        runs: vec![run],
    });
    let part = detectors_part(&[m]);
    assert_eq!(part.groups[0].pick.as_deref(), Some("fast"));
    assert_eq!(
        part.groups[0].rows[1].cells[0],
        Cell::Fail {
            text: "missed 1/1".into()
        }
    );
}

#[test]
fn scenarios_with_other_detectors_form_their_own_group() {
    let m = |name: &str, detectors: &[&str]| {
        let mut run = outcome();
        run.scenario = name.into();
        run.detectors = detectors.iter().map(|d| d.to_string()).collect();
        run.pairs[0].detectors.truncate(detectors.len());
        scenario_metrics(&ScenarioResult {
            scenario: name.into(),
            runs: vec![run],
        })
    };
    let part = detectors_part(&[
        m("a", &["fast", "cheap", "lazy"]),
        m("b", &["fast", "cheap"]),
        m("c", &["fast", "cheap", "lazy"]),
    ]);
    let scenarios: Vec<&Vec<String>> = part.groups.iter().map(|g| &g.scenarios).collect();
    assert_eq!(
        scenarios,
        [&vec!["a".to_string(), "c".into()], &vec!["b".to_string()]]
    );
}
