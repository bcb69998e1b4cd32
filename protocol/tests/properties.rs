//! Invariants every detector kind must keep, whatever it is fed.
//!
//! - No panic on any valid configuration and any input sequence, including
//!   clocks that do not advance and inputs out of context (a probe reply to a
//!   heartbeat detector, a frame to a probe detector).
//! - Verdict monotonicity: with no input, time alone only makes a verdict worse
//!   (Alive -> Suspect -> Failed), never better. Detectors with a periodic
//!   checker (`fixed-timeout` with `check_interval`) are exempt by design: they
//!   apply an input's effect, recovery included, at their next check; their
//!   unit tests pin that behaviour.
//! - Progress: after `handle_timeout(t)` at the instant `poll_timeout` gave, the
//!   next timer is later than `t` or something changed; a host never spins.

use fdlab_protocol::decay::{DataflowDecayConfig, DecayPer, EwmaSamples, Grace};
use fdlab_protocol::fixed::FixedTimeoutConfig;
use fdlab_protocol::phi::{PhiAccrualConfig, PhiDistribution, PhiHistory};
use fdlab_protocol::probe::AdaptiveProbeConfig;
use fdlab_protocol::two_stage::TwoStageConfig;
use fdlab_protocol::{
    Detector, DetectorConfig, FailureDetector, Frame, Nanos, ProbeId, ProbeOutcome,
};
use proptest::prelude::*;

fn ms(v: u64) -> Nanos {
    Nanos::from_millis(v)
}

fn leaf_config() -> impl Strategy<Value = DetectorConfig> {
    prop_oneof![
        (
            1u64..3000,
            1u64..5000,
            proptest::option::of(1u64..100),
            0u64..3
        )
            .prop_map(|(interval, timeout, suspect_pct, check)| {
                DetectorConfig::FixedTimeout(FixedTimeoutConfig {
                    interval: ms(interval),
                    timeout: ms(timeout),
                    suspect_after: suspect_pct.map(|p| Nanos(ms(timeout).as_nanos() * p / 100)),
                    check_interval: ms(check * 250),
                })
            }),
        (
            0.5f64..16.0,
            proptest::option::of(0.01f64..0.99),
            1usize..1200,
            (1u64..500, 0u64..5000, 1u64..3000),
            (
                prop_oneof![
                    Just(PhiDistribution::Normal),
                    Just(PhiDistribution::NormalExact),
                    Just(PhiDistribution::Exponential)
                ],
                prop_oneof![Just(PhiHistory::Akka), Just(PhiHistory::EveryInterval)],
            ),
        )
            .prop_map(
                |(threshold, suspect, window, (min_std, pause, first), (distribution, history))| {
                    DetectorConfig::PhiAccrual(PhiAccrualConfig {
                        threshold,
                        suspect_threshold: suspect.map(|s| s * threshold),
                        max_sample_size: window,
                        min_std_deviation: ms(min_std),
                        acceptable_heartbeat_pause: ms(pause),
                        first_heartbeat_estimate: ms(first),
                        distribution,
                        history,
                        ..Default::default()
                    })
                }
            ),
        (1u64..10_000, 1u32..5).prop_map(|(initial, limit)| {
            DetectorConfig::AdaptiveProbe(AdaptiveProbeConfig {
                initial_timeout: ms(initial),
                missed_probes_limit: limit,
                ..Default::default()
            })
        }),
        (
            0.3f64..0.99,
            0.01f64..0.5,
            prop_oneof![Just(Grace::None), Just(Grace::OneInterval)],
            prop_oneof![Just(DecayPer::Tick), Just(DecayPer::MissedFrame)],
            1u64..5,
            prop_oneof![
                Just(EwmaSamples::EveryInterval),
                Just(EwmaSamples::SkipBacklog)
            ],
        )
            .prop_map(
                |(decay, fail_below, grace, decay_per, tick, ewma_samples)| {
                    DetectorConfig::DataflowDecay(DataflowDecayConfig {
                        decay,
                        fail_below,
                        suspect_below: (fail_below * 2.0).min(1.0),
                        grace,
                        decay_per,
                        tick: ms(tick),
                        ewma_samples,
                        ..Default::default()
                    })
                }
            ),
    ]
}

fn any_config() -> impl Strategy<Value = DetectorConfig> {
    leaf_config().prop_recursive(1, 3, 2, |inner| {
        (inner.clone(), inner).prop_filter_map("at most one probing stage", |(fast, confirm)| {
            let config = DetectorConfig::TwoStage(TwoStageConfig {
                fast: Box::new(fast),
                confirm: Box::new(confirm),
            });
            config.validate().is_ok().then_some(config)
        })
    })
}

#[derive(Clone, Debug)]
enum Input {
    Heartbeat,
    Frame(Frame),
    StartProbing(f64),
    Reply(u64),
    LastReply,
    Outcome(ProbeOutcome),
    Stall(Nanos),
    Health(u32),
}

fn input() -> impl Strategy<Value = Input> {
    prop_oneof![
        6 => Just(Input::Heartbeat),
        4 => Just(Input::Frame(Frame::Data)),
        1 => Just(Input::Frame(Frame::StreamHeartbeat)),
        1 => Just(Input::Frame(Frame::Backpressure)),
        1 => (0u64..3000).prop_map(|p| Input::Frame(Frame::Maintenance { pause: ms(p) })),
        1 => (0.0f64..1.0).prop_map(Input::StartProbing),
        1 => (0u64..10).prop_map(Input::Reply),
        3 => Just(Input::LastReply),
        2 => (0u64..50).prop_map(|r| Input::Outcome(ProbeOutcome::Answered { rtt: ms(r) })),
        1 => Just(Input::Outcome(ProbeOutcome::Missed)),
        1 => (0u64..5000).prop_map(|s| Input::Stall(ms(s))),
        1 => (0u32..9).prop_map(Input::Health),
    ]
}

/// Whether any stage re-evaluates only on a periodic check.
fn has_checker(config: &DetectorConfig) -> bool {
    match config {
        DetectorConfig::FixedTimeout(c) => !c.check_interval.is_zero(),
        DetectorConfig::TwoStage(c) => has_checker(&c.fast) || has_checker(&c.confirm),
        _ => false,
    }
}

/// Most timer fires at one instant before the timers count as stuck (a
/// detector may ask for the same instant a few times while its stages catch
/// up, never without end).
const MAX_FIRES_AT_ONE_INSTANT: u32 = 1_000;

/// Fires due timers up to `until`, checking progress, and monotonicity unless
/// `checker`. Progress means time moves on: a 1 ms probe timeout legitimately
/// fires 100,000 times in 100 s, but never indefinitely at one instant.
fn run_timers(d: &mut Detector, until: Nanos, checker: bool) -> Result<(), TestCaseError> {
    let mut last = None;
    let mut at_last = 0u32;
    while let Some(due) = d.poll_timeout() {
        if due > until {
            break;
        }
        let before = d.verdict();
        d.handle_timeout(due);
        prop_assert!(
            d.verdict() >= before || checker,
            "verdict improved from {before} to {} with no input at {due:?}",
            d.verdict()
        );
        prop_assert!(
            last.is_none_or(|l| due >= l),
            "a timer went back from {last:?} to {due:?}"
        );
        at_last = if last == Some(due) { at_last + 1 } else { 0 };
        last = Some(due);
        prop_assert!(
            at_last < MAX_FIRES_AT_ONE_INSTANT,
            "timers do not progress at {due:?}"
        );
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn every_detector_is_monotone_between_inputs_and_never_panics(
        config in any_config(),
        start in 0u64..10_000,
        steps in proptest::collection::vec((0u64..4000, input()), 0..80),
    ) {
        let checker = has_checker(&config);
        let mut d = Detector::new(config, ms(start)).unwrap();
        let mut now = ms(start);
        let mut last_probe = None;
        for (gap, input) in steps {
            now = now + Nanos(gap * 1_000_000 / 3);
            run_timers(&mut d, now, checker)?;
            let _ = (d.score(now), d.verdict());
            match input {
                Input::Heartbeat => d.handle_heartbeat(now),
                Input::Frame(f) => d.handle_frame(now, f),
                Input::StartProbing(j) => d.handle_start_probing(now, j),
                Input::Reply(id) => d.handle_probe_reply(now, ProbeId(id)),
                Input::LastReply => {
                    if let Some(id) = last_probe {
                        d.handle_probe_reply(now, id);
                    }
                }
                Input::Outcome(o) => d.handle_probe_outcome(now, o),
                Input::Stall(s) => d.handle_local_stall(now, s),
                Input::Health(h) => d.handle_local_health(now, h),
            }
            while let Some(t) = d.poll_transmit() {
                last_probe = Some(t.probe);
            }
            let score = d.score(now);
            prop_assert!(!score.is_nan(), "score is NaN");
        }
        run_timers(&mut d, now + Nanos::from_secs(120), checker)?;
    }
}
