//! Tests of [`super`]: the `adaptive-probe` detector's timeout, probing schedule and sans-IO contract.

use super::*;
use crate::config::DetectorConfig;
use crate::detector::Detector;
use proptest::prelude::*;

fn ms(v: u64) -> Nanos {
    Nanos::from_millis(v)
}

fn detector(config: AdaptiveProbeConfig) -> AdaptiveProbe {
    AdaptiveProbe::new(config, Nanos::ZERO).unwrap()
}

fn answered(d: &mut AdaptiveProbe, rtt: Nanos, count: usize) {
    for _ in 0..count {
        d.handle_probe_outcome(Nanos::ZERO, ProbeOutcome::Answered { rtt });
    }
}

/// Starts probing at 0 with no jitter and sends the first probe.
fn probing_from_zero(config: AdaptiveProbeConfig) -> AdaptiveProbe {
    let mut d = detector(config);
    d.handle_start_probing(Nanos::ZERO, 0.0);
    d.handle_timeout(Nanos::ZERO);
    assert_eq!(d.poll_transmit(), Some(Transmit { probe: ProbeId(1) }));
    d
}

#[test]
fn four_zero_samples_give_half_the_initial_timeout() {
    let mut d = detector(AdaptiveProbeConfig::default());
    answered(&mut d, Nanos::ZERO, 4);
    // mean 0 + k * (5 s / 2k) = 2.5 s, which is also the default lower clamp.
    assert_eq!(d.sample_count(), 4);
    assert_eq!(d.learned_timeout(), ms(2500));
    assert_eq!(d.timeout(), ms(2500));
    assert_eq!(d.score(Nanos::ZERO), 2500.0);
}

#[test]
fn fewer_than_four_samples_use_the_initial_timeout() {
    let mut d = detector(AdaptiveProbeConfig::default());
    assert_eq!(d.timeout(), ms(5000));
    answered(&mut d, ms(10), 3);
    assert_eq!(d.learned_timeout(), ms(5000));
    assert_eq!(d.timeout(), ms(5000));
    answered(&mut d, ms(10), 1);
    assert_eq!(d.learned_timeout(), ms(2510));
}

#[test]
fn k_is_where_the_logistic_phi_reaches_8() {
    let k = threshold_std_devs();
    assert!((k - 5.226).abs() < 1e-3, "{k}");
    assert!(phi_logistic(k, 0.0, 1.0) >= PHI_AT_TIMEOUT);
    assert!((phi_logistic(k, 0.0, 1.0) - PHI_AT_TIMEOUT).abs() < 1e-9);
    assert_eq!(
        detector(AdaptiveProbeConfig::default()).threshold_std_devs(),
        k
    );
}

#[test]
fn timeout_is_multiplied_by_local_health_then_clamped() {
    // Lower side: learned 2.5 s, clamped up to a 4 s minimum.
    let mut d = detector(AdaptiveProbeConfig {
        min_timeout: Some(ms(4000)),
        ..Default::default()
    });
    answered(&mut d, Nanos::ZERO, 4);
    assert_eq!(d.learned_timeout(), ms(2500));
    assert_eq!(d.timeout(), ms(4000));
    // Health 1 doubles the learned 2.5 s to 5 s (clamping first would give 8 s).
    d.handle_local_health(Nanos::ZERO, 1);
    assert_eq!(d.timeout(), ms(5000));
    d.handle_local_health(Nanos::ZERO, 0);
    assert_eq!(d.timeout(), ms(4000));

    // Upper side: 30 s RTTs learn 32.5 s, clamped down to 4 x 5 s.
    let mut d = detector(AdaptiveProbeConfig::default());
    answered(&mut d, ms(30_000), 4);
    assert_eq!(d.learned_timeout(), ms(32_500));
    assert_eq!(d.timeout(), ms(20_000));
    // 65 s is clamped to 20 s (clamping first would give 40 s).
    d.handle_local_health(Nanos::ZERO, 1);
    assert_eq!(d.timeout(), ms(20_000));
    // A huge score saturates at the clamp, without overflow.
    d.handle_local_health(Nanos::ZERO, u32::MAX);
    assert_eq!(d.timeout(), ms(20_000));
}

#[test]
fn first_probe_starts_after_the_jitter() {
    let mut d = AdaptiveProbe::new(AdaptiveProbeConfig::default(), ms(1000)).unwrap();
    assert_eq!(d.poll_timeout(), None, "no timer before probing starts");
    d.handle_timeout(ms(50_000));
    assert_eq!(d.poll_transmit(), None);

    let mut d = AdaptiveProbe::new(AdaptiveProbeConfig::default(), ms(1000)).unwrap();
    d.handle_start_probing(ms(1000), 0.25);
    assert_eq!(d.poll_timeout(), Some(ms(2250)));
    d.handle_timeout(ms(2000));
    assert_eq!(d.poll_transmit(), None, "early call: nothing due");
    assert_eq!(d.poll_timeout(), Some(ms(2250)));
    d.handle_timeout(ms(2250));
    assert_eq!(d.poll_transmit(), Some(Transmit { probe: ProbeId(1) }));
    assert_eq!(d.poll_transmit(), None);
    assert_eq!(d.in_flight(), Some(ProbeId(1)));
    assert_eq!(d.poll_timeout(), Some(ms(7250)), "deadline: sent + 5 s");

    // Out-of-range jitter is forced into [0, 1).
    for (jitter, lo, hi) in [
        (f64::NAN, ms(0), ms(0)),
        (-3.0, ms(0), ms(0)),
        (1.0, ms(4999), ms(5000) - Nanos(1)),
        (f64::INFINITY, ms(4999), ms(5000) - Nanos(1)),
    ] {
        let mut d = detector(AdaptiveProbeConfig::default());
        d.handle_start_probing(Nanos::ZERO, jitter);
        let at = d.poll_timeout().unwrap();
        assert!((lo..=hi).contains(&at), "{jitter} -> {at:?}");
    }
}

#[test]
fn quick_answer_waits_the_remainder_and_timed_out_probe_is_followed_at_once() {
    let mut d = probing_from_zero(AdaptiveProbeConfig::default());
    assert_eq!(d.poll_timeout(), Some(ms(5000)));
    // Answered after 1 s: the next probe waits the remaining 4 s of the period.
    d.handle_probe_reply(ms(1000), ProbeId(1));
    assert_eq!(d.sample_count(), 1);
    assert_eq!(d.in_flight(), None);
    assert_eq!(d.poll_timeout(), Some(ms(5000)));
    d.handle_timeout(ms(4999));
    assert_eq!(d.poll_transmit(), None);
    d.handle_timeout(ms(5000));
    assert_eq!(d.poll_transmit(), Some(Transmit { probe: ProbeId(2) }));
    assert_eq!(d.poll_timeout(), Some(ms(10_000)));
    // Timed out at 10 s: the next probe leaves in the same call.
    d.handle_timeout(ms(10_000));
    assert_eq!(d.missed_probes(), 1);
    assert_eq!(d.poll_transmit(), Some(Transmit { probe: ProbeId(3) }));
    assert_eq!(d.in_flight(), Some(ProbeId(3)));
    assert_eq!(d.poll_timeout(), Some(ms(15_000)));
    // A late call completes the probe and starts the next one at its own time.
    d.handle_timeout(ms(17_000));
    assert_eq!(d.missed_probes(), 2);
    assert_eq!(d.poll_transmit(), Some(Transmit { probe: ProbeId(4) }));
    assert_eq!(d.poll_timeout(), Some(ms(22_000)));
    assert_eq!(
        d.sample_count(),
        1,
        "timed-out probes never enter the window"
    );
}

#[test]
fn suspect_after_one_miss_failed_after_the_limit_and_success_resets() {
    let mut d = probing_from_zero(AdaptiveProbeConfig::default());
    let expected = [Verdict::Suspect, Verdict::Suspect, Verdict::Failed];
    for (i, verdict) in expected.into_iter().enumerate() {
        let deadline = d.poll_timeout().unwrap();
        assert_eq!(deadline, ms(5000 * (i as u64 + 1)));
        d.handle_timeout(deadline);
        assert_eq!(d.verdict(), verdict, "after miss {}", i + 1);
        assert_eq!(d.missed_probes(), i as u32 + 1);
    }
    assert_eq!(d.poll_transmit(), Some(Transmit { probe: ProbeId(4) }));
    d.handle_probe_reply(ms(15_100), ProbeId(4));
    assert_eq!(d.verdict(), Verdict::Alive);
    assert_eq!(d.missed_probes(), 0);
    assert_eq!(d.sample_count(), 1);
}

#[test]
fn local_stall_of_a_quarter_of_the_timeout_makes_a_miss_unknown() {
    let mut d = probing_from_zero(AdaptiveProbeConfig::default());
    // Exactly 25% of the 5 s timeout (Orleans: `>=`): Unknown.
    d.handle_local_stall(ms(3000), ms(1250));
    d.handle_timeout(ms(5000));
    assert_eq!(d.missed_probes(), 0);
    assert_eq!(d.verdict(), Verdict::Alive);
    assert_eq!(d.sample_count(), 0, "Unknown is no success either");
    // The next probe still follows at once.
    assert_eq!(d.poll_transmit(), Some(Transmit { probe: ProbeId(2) }));
    // One nanosecond less, in two reports: a miss.
    d.handle_local_stall(ms(6000), ms(1000));
    d.handle_local_stall(ms(7000), ms(250) - Nanos(1));
    d.handle_timeout(ms(10_000));
    assert_eq!(d.missed_probes(), 1);
    assert_eq!(d.verdict(), Verdict::Suspect);
    // A stall during probe 3 makes it Unknown, which keeps the count and
    // the verdict; it does not count again for probe 4.
    assert_eq!(d.poll_transmit(), Some(Transmit { probe: ProbeId(3) }));
    d.handle_local_stall(ms(14_000), ms(4000));
    d.handle_timeout(ms(15_000));
    assert_eq!(d.missed_probes(), 1);
    assert_eq!(d.verdict(), Verdict::Suspect);
    d.handle_timeout(ms(20_000));
    assert_eq!(d.missed_probes(), 2);
}

#[test]
fn late_and_foreign_replies_are_ignored() {
    let mut d = probing_from_zero(AdaptiveProbeConfig::default());
    d.handle_probe_reply(ms(1000), ProbeId(99));
    d.handle_probe_reply(ms(1000), ProbeId(0));
    assert_eq!(d.in_flight(), Some(ProbeId(1)));
    assert_eq!(d.sample_count(), 0);
    // One nanosecond past the deadline is late.
    d.handle_probe_reply(ms(5000) + Nanos(1), ProbeId(1));
    assert_eq!(d.sample_count(), 0);
    assert_eq!(d.in_flight(), Some(ProbeId(1)));
    d.handle_timeout(ms(5000) + Nanos(1));
    assert_eq!(d.verdict(), Verdict::Suspect);
    assert_eq!(d.in_flight(), Some(ProbeId(2)));
    // The old probe's reply does not count for the new one.
    d.handle_probe_reply(ms(5500), ProbeId(1));
    assert_eq!(d.verdict(), Verdict::Suspect);
    assert_eq!(d.sample_count(), 0);
    // A reply exactly at the deadline is in time.
    d.handle_probe_reply(ms(10_000) + Nanos(1), ProbeId(2));
    assert_eq!(d.verdict(), Verdict::Alive);
    assert_eq!(d.sample_count(), 1);
    // A duplicate of that reply changes nothing.
    d.handle_probe_reply(ms(10_500), ProbeId(2));
    assert_eq!(d.sample_count(), 1);
}

#[test]
fn recorded_outcomes_need_no_timers() {
    let mut d = detector(AdaptiveProbeConfig::default());
    d.handle_probe_outcome(ms(1000), ProbeOutcome::Missed);
    assert_eq!(d.verdict(), Verdict::Suspect);
    d.handle_probe_outcome(ms(2000), ProbeOutcome::Missed);
    d.handle_probe_outcome(ms(3000), ProbeOutcome::Missed);
    assert_eq!(d.verdict(), Verdict::Failed);
    d.handle_probe_outcome(ms(4000), ProbeOutcome::Answered { rtt: ms(3) });
    assert_eq!(d.verdict(), Verdict::Alive);
    assert_eq!(d.sample_count(), 1);
    assert_eq!(d.poll_timeout(), None);
    assert_eq!(d.poll_transmit(), None);
}

#[test]
fn extreme_inputs_do_not_panic() {
    // The longest timeout accepted (its default upper clamp, four
    // times it, at the limit), starting near the end of time.
    let config = AdaptiveProbeConfig {
        initial_timeout: Nanos(crate::time::MAX_DURATION.as_nanos() / 4),
        ..Default::default()
    };
    let too_long = AdaptiveProbeConfig {
        initial_timeout: Nanos(u64::MAX / 2),
        ..Default::default()
    };
    assert_eq!(too_long.validate().unwrap_err().key, "initial_timeout");
    let mut d = AdaptiveProbe::new(config, Nanos(u64::MAX - 10)).unwrap();
    answered(&mut d, Nanos::MAX, RTT_WINDOW + 5);
    assert_eq!(d.sample_count(), RTT_WINDOW);
    d.handle_local_health(Nanos::MAX, u32::MAX);
    assert_eq!(d.timeout(), d.config().max_timeout());
    d.handle_local_stall(Nanos::MAX, Nanos::MAX);
    d.handle_local_stall(Nanos::MAX, Nanos::MAX);
    d.handle_start_probing(Nanos(u64::MAX - 10), 0.0);
    // The deadline would pass the end of time: probing stops, no spinning.
    d.handle_timeout(Nanos::MAX);
    assert_eq!(d.poll_timeout(), None);
    assert!(d.score(Nanos::MAX).is_finite());
}

#[test]
fn drives_through_the_detector_enum() {
    let config = DetectorConfig::AdaptiveProbe(AdaptiveProbeConfig::default());
    let mut d = Detector::new(config, Nanos::ZERO).unwrap();
    d.handle_start_probing(Nanos::ZERO, 0.5);
    assert_eq!(d.poll_timeout(), Some(ms(2500)));
    d.handle_timeout(ms(2500));
    assert_eq!(d.poll_transmit(), Some(Transmit { probe: ProbeId(1) }));
    d.handle_probe_reply(ms(2600), ProbeId(1));
    assert_eq!(d.score(ms(2600)), 5000.0);
}

#[test]
fn rejects_bad_configs_by_key() {
    let bad =
        |config: AdaptiveProbeConfig| AdaptiveProbe::new(config, Nanos::ZERO).unwrap_err().key;
    assert_eq!(
        bad(AdaptiveProbeConfig {
            missed_probes_limit: 0,
            ..Default::default()
        }),
        "missed_probes_limit"
    );
    assert_eq!(
        bad(AdaptiveProbeConfig {
            max_timeout: Some(ms(1000)),
            ..Default::default()
        }),
        "max_timeout"
    );
}

/// One host action in the property test.
#[derive(Clone, Debug)]
enum Op {
    StartProbing(f64),
    /// The host clock moves on with no call.
    Wait(u64),
    /// A reply to the last probe sent (`true`) or to an arbitrary id.
    Reply(bool, u64),
    Stall(u64),
    Health(u32),
    /// `handle_timeout` at the instant `poll_timeout` asked for.
    TimeoutAtPoll,
    /// `handle_timeout` at a random later time (early or late).
    TimeoutAfter(u64),
    Answered(u64),
    Missed,
}

fn span() -> impl Strategy<Value = u64> {
    prop_oneof![
        8 => 0u64..12_000_000_000,
        1 => Just(u64::MAX),
        1 => any::<u64>(),
    ]
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        1 => prop_oneof![0.0f64..1.0, any::<f64>()].prop_map(Op::StartProbing),
        3 => span().prop_map(Op::Wait),
        4 => (any::<bool>(), 0u64..8).prop_map(|(right, id)| Op::Reply(right, id)),
        2 => span().prop_map(Op::Stall),
        1 => prop_oneof![0u32..4, any::<u32>()].prop_map(Op::Health),
        8 => Just(Op::TimeoutAtPoll),
        3 => span().prop_map(Op::TimeoutAfter),
        2 => span().prop_map(Op::Answered),
        1 => Just(Op::Missed),
    ]
}

fn config() -> impl Strategy<Value = AdaptiveProbeConfig> {
    (
        2u64..20_000_000_000,
        proptest::option::of(1u64..=1000),
        proptest::option::of(1u64..=1000),
        1u32..6,
    )
        .prop_map(|(initial, min_permille, max_factor, limit)| {
            let min = min_permille.map(|p| Nanos((initial / 1000).saturating_mul(p).max(1)));
            let mut config = AdaptiveProbeConfig {
                initial_timeout: Nanos(initial),
                min_timeout: min,
                max_timeout: None,
                missed_probes_limit: limit,
            };
            config.max_timeout =
                max_factor.map(|f| Nanos(config.min_timeout().as_nanos().saturating_mul(f)));
            config
        })
}

/// What a `handle_timeout` call may change.
fn state(d: &AdaptiveProbe) -> (Verdict, u32, u64, Option<ProbeId>, usize) {
    (
        d.verdict,
        d.missed,
        d.last_id,
        d.in_flight(),
        d.sample_count(),
    )
}

proptest! {
    /// Any sequence of host inputs: no panic, timers never in the past,
    /// every due `handle_timeout` makes progress, and only replies and
    /// recorded outcomes can improve the verdict.
    #[test]
    fn random_inputs_keep_the_sans_io_contract(
        config in config(),
        start in prop_oneof![0u64..1_000_000_000_000, (u64::MAX - 100_000_000_000)..=u64::MAX],
        ops in proptest::collection::vec(op(), 1..120),
    ) {
        let mut d = AdaptiveProbe::new(config.clone(), Nanos(start)).unwrap();
        // The host's clock, and the latest time handed to the detector.
        let mut now = Nanos(start);
        let mut handed = now;
        let mut last_sent: Option<ProbeId> = None;
        for op in ops {
            let before = d.verdict();
            let mut may_improve = false;
            match op {
                Op::StartProbing(jitter) => d.handle_start_probing(now, jitter),
                Op::Wait(dt) => now = now + Nanos(dt),
                Op::Reply(right, other) => {
                    may_improve = true;
                    let id = match last_sent {
                        Some(id) if right => id,
                        _ => ProbeId(other),
                    };
                    d.handle_probe_reply(now, id);
                }
                Op::Stall(stall) => d.handle_local_stall(now, Nanos(stall)),
                Op::Health(score) => d.handle_local_health(now, score),
                Op::TimeoutAtPoll => {
                    if let Some(at) = d.poll_timeout() {
                        let previous = state(&d);
                        d.handle_timeout(at);
                        handed = handed.max(at);
                        now = now.max(at);
                        let after = d.poll_timeout();
                        prop_assert!(
                            after.is_none_or(|t| t > at) || state(&d) != previous,
                            "no progress at {:?}: still due at {:?}", at, after
                        );
                    }
                }
                Op::TimeoutAfter(dt) => {
                    now = now + Nanos(dt);
                    d.handle_timeout(now);
                }
                Op::Answered(rtt) => {
                    may_improve = true;
                    d.handle_probe_outcome(now, ProbeOutcome::Answered { rtt: Nanos(rtt) });
                }
                Op::Missed => {
                    may_improve = true;
                    d.handle_probe_outcome(now, ProbeOutcome::Missed);
                }
            }
            if !matches!(op, Op::Wait(_) | Op::TimeoutAtPoll) {
                handed = handed.max(now);
            }
            if !may_improve {
                prop_assert!(d.verdict() >= before, "{:?} improved to {:?}", before, d.verdict());
            }
            if let Some(at) = d.poll_timeout() {
                prop_assert!(at >= handed, "timer {:?} before {:?}", at, handed);
            }
            if let Some(t) = d.poll_transmit() {
                prop_assert!(last_sent.is_none_or(|last| t.probe > last), "ids must increase");
                prop_assert_eq!(d.in_flight(), Some(t.probe));
                last_sent = Some(t.probe);
            }
            prop_assert_eq!(d.verdict(), d.verdict_for(d.missed_probes()));
            let timeout = d.timeout();
            prop_assert!(timeout >= config.min_timeout() && timeout <= config.max_timeout());
            prop_assert!(d.score(now).is_finite());
        }
    }
}
