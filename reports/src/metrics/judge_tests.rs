//! Tests of the judging of one pair ([`super::pair_metrics`]).

use super::tests::{ms, pair, timeline, RUN};
use super::*;
use fdlab_protocol::{Nanos, Verdict};
use Verdict::{Alive, Failed, Suspect};

#[test]
fn failed_after_onset_that_lasts_is_a_detection() {
    let p = pair(&[(10_000, 40_000)], &[]);
    let m = pair_metrics(RUN, &p, &timeline(&[(12_500, Failed)]));
    assert_eq!(m.detections.len(), 1);
    assert_eq!(m.detections[0].failed_delay(), Some(ms(2_500)));
    assert_eq!(m.detections[0].suspect_delay(), Some(ms(2_500)));
    assert!(m.mistakes.is_empty());
    // 60 s minus the 30 s fault, all Alive (the Failed ends with the run,
    // but the fault ends first: after it the verdict is wrong but no
    // transition happened then, so P_A drops and no mistake is counted).
    assert_eq!(m.must_not_detect, ms(30_000));
    assert_eq!(m.alive_must_not_detect, ms(10_000));
}

#[test]
fn suspect_flap_before_fault_then_failed_is_one_mistake_and_one_detection() {
    let p = pair(&[(10_000, 40_000)], &[]);
    let t = timeline(&[
        (5_000, Suspect),
        (5_300, Alive),
        (11_000, Suspect),
        (12_000, Failed),
        (40_100, Alive),
    ]);
    let m = pair_metrics(RUN, &p, &t);
    assert_eq!(m.mistakes.len(), 1);
    let x = m.mistakes[0];
    assert_eq!((x.start, x.end), (ms(5_000), ms(5_300)));
    assert_eq!(x.worst, Suspect);
    assert_eq!(x.ended_by, MistakeEnd::Alive);
    assert_eq!(m.detections.len(), 1);
    assert_eq!(m.detections[0].failed_delay(), Some(ms(2_000)));
    assert_eq!(m.detections[0].suspect_delay(), Some(ms(1_000)));
    // 30 s of must-not-detect time, 300 ms + 100 ms of it not Alive.
    assert_eq!(m.must_not_detect, ms(30_000));
    assert_eq!(m.alive_must_not_detect, ms(29_600));
}

#[test]
fn failed_during_tolerated_fault_is_a_mistake_until_alive() {
    // A tolerated pause: no must-detect window at all.
    let p = pair(&[], &[]);
    let t = timeline(&[(20_000, Suspect), (20_000, Failed), (23_250, Alive)]);
    let m = pair_metrics(RUN, &p, &t);
    assert!(m.detections.is_empty());
    assert_eq!(m.mistakes.len(), 1);
    let x = m.mistakes[0];
    assert_eq!(x.duration(), ms(3_250));
    assert_eq!(x.worst, Failed);
    assert_eq!(x.ended_by, MistakeEnd::Alive);
    assert_eq!(m.alive_must_not_detect, ms(60_000 - 3_250));
}

#[test]
fn mistake_ends_at_next_must_detect_window_or_run_end() {
    let p = pair(&[(30_000, 35_000)], &[]);
    let t = timeline(&[(28_000, Suspect), (36_000, Alive), (50_000, Failed)]);
    let m = pair_metrics(RUN, &p, &t);
    assert_eq!(m.mistakes.len(), 2);
    assert_eq!(m.mistakes[0].end, ms(30_000));
    assert_eq!(m.mistakes[0].ended_by, MistakeEnd::MustDetect);
    // Suspect already at the onset and lasting: detected to Suspect at 0;
    // never Failed during the fault: missed to Failed.
    assert_eq!(m.detections[0].suspect_delay(), Some(Nanos::ZERO));
    assert_eq!(m.detections[0].failed_at, None);
    // The Suspect from 35 s (fault over) to 36 s lowers P_A but is no
    // new mistake: no transition from Alive happened then.
    assert_eq!(m.alive_must_not_detect, ms(55_000 - 2_000 - 1_000 - 10_000));
    assert_eq!(m.mistakes[1].start, ms(50_000));
    assert_eq!(m.mistakes[1].ended_by, MistakeEnd::RunEnd);
}

#[test]
fn flapping_failed_counts_from_the_later_lasting_failed() {
    let p = pair(&[(10_000, 40_000)], &[]);
    let t = timeline(&[(13_000, Failed), (14_000, Alive), (16_000, Failed)]);
    let m = pair_metrics(RUN, &p, &t);
    assert_eq!(m.detections[0].failed_delay(), Some(ms(6_000)));
    assert_eq!(m.detections[0].suspect_delay(), Some(ms(6_000)));
    // Flaps inside must-detect time are not mistakes.
    assert!(m.mistakes.is_empty());
}

#[test]
fn suspect_lasting_while_failed_flaps_to_suspect() {
    let p = pair(&[(10_000, 40_000)], &[]);
    let t = timeline(&[
        (11_000, Suspect),
        (13_000, Failed),
        (14_000, Suspect),
        (16_000, Failed),
    ]);
    let m = pair_metrics(RUN, &p, &t);
    assert_eq!(m.detections[0].suspect_delay(), Some(ms(1_000)));
    assert_eq!(m.detections[0].failed_delay(), Some(ms(6_000)));
}

#[test]
fn no_failed_until_fault_ends_is_missed() {
    let p = pair(&[(10_000, 40_000)], &[]);
    // Failed only after the fault ended, and a Failed that did not last.
    let t = timeline(&[(20_000, Failed), (39_000, Alive), (41_000, Failed)]);
    let m = pair_metrics(RUN, &p, &t);
    assert_eq!(m.detections[0].failed_at, None);
    assert_eq!(m.detections[0].suspect_at, None);
    // The Failed at 41 s is in must-not-detect time: a mistake.
    assert_eq!(m.mistakes.len(), 1);
}

#[test]
fn failed_already_at_onset_is_zero() {
    let p = pair(&[(10_000, 40_000)], &[]);
    let t = timeline(&[(9_000, Failed)]);
    let m = pair_metrics(RUN, &p, &t);
    assert_eq!(m.detections[0].failed_delay(), Some(Nanos::ZERO));
    assert_eq!(m.mistakes.len(), 1);
    assert_eq!(m.mistakes[0].ended_by, MistakeEnd::MustDetect);
    assert_eq!(m.mistakes[0].duration(), ms(1_000));
}

#[test]
fn fault_until_the_end_of_the_run_is_clipped() {
    let p = pair(&[(50_000, u64::MAX / 1_000_000)], &[]);
    let t = timeline(&[(53_000, Failed)]);
    let m = pair_metrics(RUN, &p, &t);
    assert_eq!(m.detections[0].window.end, RUN);
    assert_eq!(m.detections[0].failed_delay(), Some(ms(3_000)));
    // Not yet Failed when the run ends: missed.
    let m = pair_metrics(RUN, &p, &timeline(&[(61_000, Failed)]));
    assert_eq!(m.detections[0].failed_at, None);
}

#[test]
fn unjudged_time_is_excluded() {
    // The monitor is down 20..30 s; the verdict there does not count.
    let p = pair(&[], &[(20_000, 30_000)]);
    let t = timeline(&[
        (22_000, Suspect),
        (29_000, Alive),
        (40_000, Suspect),
        (41_000, Alive),
    ]);
    let m = pair_metrics(RUN, &p, &t);
    assert_eq!(m.must_not_detect, ms(50_000));
    assert_eq!(m.alive_must_not_detect, ms(49_000));
    assert_eq!(m.mistakes.len(), 1);
    assert_eq!(m.mistakes[0].start, ms(40_000));
    // A mistake cut by the monitor going down.
    let t = timeline(&[(19_000, Suspect), (25_000, Alive)]);
    let m = pair_metrics(RUN, &p, &t);
    assert_eq!(m.mistakes[0].end, ms(20_000));
    assert_eq!(m.mistakes[0].ended_by, MistakeEnd::Unjudged);
    assert_eq!(m.alive_must_not_detect, ms(49_000));
}

#[test]
fn entirely_unjudged_window_is_skipped() {
    let p = pair(&[(20_000, 25_000)], &[(15_000, 30_000)]);
    let m = pair_metrics(RUN, &p, &timeline(&[]));
    assert!(m.detections.is_empty());
    assert_eq!(m.must_not_detect, ms(45_000));
}

#[test]
fn partly_unjudged_window_ignores_verdicts_while_down() {
    // Monitor down 15..20 s in a 10..40 s fault; Failed at 12 s, its
    // verdict while down is Alive (reset), Failed again right at restart.
    let p = pair(&[(10_000, 40_000)], &[(15_000, 20_000)]);
    let t = timeline(&[(12_000, Failed), (16_000, Alive), (20_000, Failed)]);
    let m = pair_metrics(RUN, &p, &t);
    assert_eq!(m.detections[0].failed_delay(), Some(ms(2_000)));
    let t = timeline(&[(12_000, Failed), (16_000, Alive), (21_000, Failed)]);
    let m = pair_metrics(RUN, &p, &t);
    assert_eq!(m.detections[0].failed_delay(), Some(ms(11_000)));
}

#[test]
fn last_change_at_an_instant_wins_and_order_is_stable() {
    let p = pair(&[], &[]);
    let t = timeline(&[(5_000, Suspect), (5_000, Alive), (7_000, Alive)]);
    let m = pair_metrics(RUN, &p, &t);
    assert!(m.mistakes.is_empty());
    assert_eq!(m.alive_must_not_detect, RUN);
    // Out of order input is sorted by time, keeping order within an instant.
    let t = timeline(&[(9_000, Alive), (8_000, Suspect), (8_000, Failed)]);
    let m = pair_metrics(RUN, &p, &t);
    assert_eq!(m.mistakes.len(), 1);
    assert_eq!(m.mistakes[0].worst, Failed);
    assert_eq!(m.mistakes[0].duration(), ms(1_000));
}
