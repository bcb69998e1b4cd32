//! Tests of recovery lag and healthy time ([`super::recovery`]), on one pair
//! judged by [`super::pair_metrics`].

use super::tests::{ms, pair, timeline, RUN};
use super::*;
use fdlab_protocol::{Nanos, Verdict};
use fdlab_sim::outcome::MustDetect;
use Verdict::{Alive, Failed, Suspect};

#[test]
fn lag_after_a_restart_is_what_the_timeline_says() {
    // The target is down 10..40 s (a crash, restarted at 40 s); the detector
    // suspects at 12 s, declares it Failed at 12.5 s and trusts it again at
    // 41.5 s, when the first heartbeat of the new incarnation arrives.
    let p = pair(&[(10_000, 40_000)], &[]);
    let t = timeline(&[(12_000, Suspect), (12_500, Failed), (41_500, Alive)]);
    let m = pair_metrics(RUN, &p, &t);
    assert_eq!(m.recoveries.len(), 1);
    let r = m.recoveries[0];
    assert_eq!((r.monitor, r.target, r.fault), (0, 1, 0));
    assert_eq!(
        (r.from, r.alive_at, r.until),
        (ms(40_000), Some(ms(41_500)), ms(41_500))
    );
    assert_eq!(r.lag(), Some(ms(1_500)));
    assert!(m.mistakes.is_empty());
    // Must-not-detect time is 30 s, 1.5 s of it in recovery: the old share
    // of Alive counts the lag against the detector, P_A over healthy time
    // does not.
    assert_eq!(m.must_not_detect, ms(30_000));
    assert_eq!(m.alive_must_not_detect, ms(28_500));
    assert_eq!((m.healthy, m.alive_healthy), (ms(28_500), ms(28_500)));
}

#[test]
fn no_recovery_without_a_suspicion_at_the_fault_end() {
    // Failed, then back to Alive before the fault ended (a missed detection):
    // nothing to recover from when it ends.
    let p = pair(&[(10_000, 40_000)], &[]);
    let m = pair_metrics(RUN, &p, &timeline(&[(12_000, Failed), (39_000, Alive)]));
    assert!(m.recoveries.is_empty());
    assert_eq!((m.healthy, m.alive_healthy), (ms(30_000), ms(30_000)));
    // Alive at the very instant the fault ends: a recovery of zero lag.
    let m = pair_metrics(RUN, &p, &timeline(&[(12_000, Failed), (40_000, Alive)]));
    assert_eq!(m.recoveries.len(), 1);
    assert_eq!(m.recoveries[0].lag(), Some(Nanos::ZERO));
    assert_eq!(m.healthy, ms(30_000));
}

#[test]
fn a_suspect_at_the_fault_end_recovers_too_and_escalating_is_no_mistake() {
    let p = pair(&[(10_000, 40_000)], &[]);
    let t = timeline(&[(30_000, Suspect), (41_000, Failed), (42_000, Alive)]);
    let m = pair_metrics(RUN, &p, &t);
    assert_eq!(m.recoveries[0].lag(), Some(ms(2_000)));
    assert!(m.mistakes.is_empty());
    assert_eq!(m.alive_healthy, m.healthy);
}

#[test]
fn unfinished_recoveries_end_with_must_not_detect_time() {
    // Two faults 10..20 s and 30..40 s; the verdict stays Failed from 12 s to
    // 35 s, then Failed again from 38 s to 45 s.
    let p = pair(&[(10_000, 20_000), (30_000, 40_000)], &[]);
    let t = timeline(&[
        (12_000, Failed),
        (35_000, Alive),
        (38_000, Failed),
        (45_000, Alive),
    ]);
    let m = pair_metrics(RUN, &p, &t);
    assert_eq!(m.recoveries.len(), 2);
    // Not Alive again before the next fault: unfinished, its window 20..30 s.
    let first = m.recoveries[0];
    assert_eq!(
        (first.from, first.alive_at, first.until),
        (ms(20_000), None, ms(30_000))
    );
    assert_eq!(first.lag(), None);
    assert_eq!(m.recoveries[1].lag(), Some(ms(5_000)));
    // Must-not-detect 10 + 10 + 20 s, minus 10 s and 5 s of recovery.
    assert_eq!((m.must_not_detect, m.healthy), (ms(40_000), ms(25_000)));
    assert_eq!(m.alive_healthy, ms(25_000));
    // The monitor goes down before the verdict is Alive again: unfinished.
    let p = pair(&[(10_000, 40_000)], &[(41_000, 50_000)]);
    let m = pair_metrics(RUN, &p, &timeline(&[(12_000, Failed), (45_000, Alive)]));
    assert_eq!(m.recoveries[0].until, ms(41_000));
    assert_eq!(m.recoveries[0].lag(), None);
    // Down when the fault ends, or the fault lasts until the run ends: no
    // must-not-detect time follows, no recovery.
    let p = pair(&[(10_000, 40_000)], &[(40_000, 50_000)]);
    assert!(pair_metrics(RUN, &p, &timeline(&[(12_000, Failed)]))
        .recoveries
        .is_empty());
    let p = pair(&[(10_000, 90_000)], &[]);
    assert!(pair_metrics(RUN, &p, &timeline(&[(12_000, Failed)]))
        .recoveries
        .is_empty());
}

#[test]
fn overlapping_faults_recover_once_from_the_later_end() {
    let mut p = pair(&[(10_000, 30_000), (20_000, 40_000)], &[]);
    p.must_detect[1] = MustDetect {
        fault: 1,
        ..p.must_detect[1]
    };
    let m = pair_metrics(RUN, &p, &timeline(&[(12_000, Failed), (43_000, Alive)]));
    assert_eq!(m.recoveries.len(), 1);
    assert_eq!(
        (m.recoveries[0].fault, m.recoveries[0].lag()),
        (1, Some(ms(3_000)))
    );
}

#[test]
fn mistakes_after_a_recovery_count_against_healthy_time() {
    let p = pair(&[(10_000, 40_000)], &[]);
    let t = timeline(&[
        (12_000, Failed),
        (41_000, Alive),
        (50_000, Suspect),
        (50_250, Alive),
        (55_000, Failed),
        (55_750, Alive),
    ]);
    let m = pair_metrics(RUN, &p, &t);
    assert_eq!(m.recoveries[0].lag(), Some(ms(1_000)));
    assert_eq!(m.mistakes.len(), 2);
    assert!(!m.mistakes[0].is_false_failed(), "a suspicion");
    assert!(m.mistakes[1].is_false_failed());
    assert_eq!(m.healthy, ms(29_000));
    assert_eq!(m.alive_healthy, ms(29_000 - 250 - 750));
}
