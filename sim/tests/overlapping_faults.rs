//! Overlapping faults of one node: a node is paused while any pause holds
//! it, crashes of one node merge into one outage, and the ground truth
//! follows what the node really went through.

mod common;

use common::{fault, fixed, mesh, timeline, valid};
use fdlab_protocol::{Nanos, Verdict};
use fdlab_sim::engine::run;
use fdlab_sim::outcome::RunOutcome;
use fdlab_sim::scenario::{Expect, Fault, FaultKind};

const SEEDS: u64 = 5;

/// Every must-detect window of the pair `n0 -> n1` with a Failed verdict of
/// detector 0 inside it, and how many windows there were.
fn detected(out: &RunOutcome) -> (usize, usize) {
    let pair = out
        .pairs
        .iter()
        .find(|p| p.monitor == 0 && p.target == 1)
        .unwrap();
    let changes = timeline(out, 0, 1, 0);
    let hit = pair
        .must_detect
        .iter()
        .filter(|m| {
            changes
                .iter()
                .any(|&(t, v)| v == Verdict::Failed && t >= m.window.start && t < m.window.end)
        })
        .count();
    (hit, pair.must_detect.len())
}

fn expect(mut f: Fault, e: Expect) -> Fault {
    f.expect = Some(e);
    f
}

#[test]
fn a_long_pause_is_detected_though_a_short_one_starts_a_second_earlier() {
    let long = expect(
        fault(FaultKind::Pause, "n1", 21_000, Some(9_000)),
        Expect::Detect,
    );
    let short = fault(FaultKind::Pause, "n1", 20_000, Some(2_000));
    for faults in [
        vec![long.clone()],
        vec![long.clone(), short.clone()],
        vec![short, long],
    ] {
        let scenario = mesh(2, vec![fixed("fixed-3s", 1_000, 3_000)], faults.clone());
        for seed in 1..=SEEDS {
            let (out, _) = run(&valid(&scenario), seed, false);
            assert_eq!(
                detected(&out),
                (1, 1),
                "seed {seed}, {} faults",
                faults.len()
            );
        }
    }
}

#[test]
fn a_crash_of_a_crashed_node_opens_no_second_detection_window() {
    let first = fault(FaultKind::Crash, "n1", 20_000, None);
    let again = fault(FaultKind::Crash, "n1", 25_000, None);
    let scenario = mesh(2, vec![fixed("fixed-3s", 1_000, 3_000)], vec![first, again]);
    for seed in 1..=SEEDS {
        let (out, _) = run(&valid(&scenario), seed, false);
        assert_eq!(detected(&out), (1, 1), "seed {seed}");
        let pair = &out
            .pairs
            .iter()
            .find(|p| p.monitor == 0 && p.target == 1)
            .unwrap();
        let window = pair.must_detect[0].window;
        assert_eq!(window.start, Nanos::from_millis(20_000));
        assert_eq!(
            pair.must_detect[0].fault, 0,
            "attributed to the first crash"
        );
    }
}

#[test]
fn a_short_and_a_long_crash_at_once_keep_the_node_down_for_the_long_one() {
    let short = fault(FaultKind::Crash, "n1", 20_000, Some(1_000));
    let long = fault(FaultKind::Crash, "n1", 20_000, Some(10_000));
    let scenario = mesh(2, vec![fixed("fixed-3s", 1_000, 3_000)], vec![short, long]);
    for seed in 1..=SEEDS {
        let (out, _) = run(&valid(&scenario), seed, false);
        assert_eq!(detected(&out), (1, 1), "seed {seed}");
        let changes = timeline(&out, 0, 1, 0);
        // Failed within the timeout after the crash, Alive only after the
        // long crash ends.
        let failed = changes.iter().find(|c| c.1 == Verdict::Failed).unwrap().0;
        assert!(failed <= Nanos::from_millis(23_010), "{failed}");
        let back = changes
            .iter()
            .find(|c| c.0 > failed && c.1 == Verdict::Alive);
        assert!(
            back.is_some_and(|c| c.0 >= Nanos::from_millis(30_000)),
            "{back:?}"
        );
    }
}

#[test]
fn a_crash_ends_a_pause_and_the_restarted_node_runs() {
    let pause = expect(
        fault(FaultKind::Pause, "n1", 10_000, Some(30_000)),
        Expect::Detect,
    );
    let crash = fault(FaultKind::Crash, "n1", 20_000, Some(5_000));
    let scenario = mesh(2, vec![fixed("fixed-3s", 1_000, 3_000)], vec![pause, crash]);
    for seed in 1..=SEEDS {
        let (out, _) = run(&valid(&scenario), seed, false);
        let pair = out
            .pairs
            .iter()
            .find(|p| p.monitor == 0 && p.target == 1)
            .unwrap();
        // One window: paused from 10 s, down from 20 s, back at 25 s.
        assert_eq!(pair.must_detect.len(), 1);
        let w = pair.must_detect[0].window;
        assert_eq!(
            (w.start, w.end),
            (Nanos::from_millis(10_000), Nanos::from_millis(25_000))
        );
        assert_eq!(detected(&out), (1, 1));
        // Heard from again soon after the restart, not only after the pause's end.
        let changes = timeline(&out, 0, 1, 0);
        let back = changes
            .iter()
            .find(|c| c.0 > Nanos::from_millis(25_000) && c.1 == Verdict::Alive)
            .unwrap();
        assert!(back.0 < Nanos::from_millis(27_000), "{back:?}");
    }
}

#[test]
fn an_earlier_outage_of_no_length_leaves_a_later_crash_to_detect() {
    // A crash and a restart at the same instant (an outage of no length),
    // then a crash for good: the second crash must be detected.
    let blip = fault(FaultKind::Crash, "n1", 2_000, None);
    let restart = fault(FaultKind::Restart, "n1", 2_000, None);
    let crash = fault(FaultKind::Crash, "n1", 7_000, None);
    let scenario = mesh(
        2,
        vec![fixed("fixed-3s", 1_000, 3_000)],
        vec![blip, restart, crash],
    );
    let (out, _) = run(&valid(&scenario), 1, false);
    let pair = out
        .pairs
        .iter()
        .find(|p| p.monitor == 0 && p.target == 1)
        .unwrap();
    let windows: Vec<_> = pair
        .must_detect
        .iter()
        .map(|m| (m.window.start, m.window.end))
        .collect();
    assert_eq!(
        windows,
        [(Nanos::from_millis(7_000), Nanos::from_millis(60_000))]
    );
    assert_eq!(detected(&out), (1, 1));
}
