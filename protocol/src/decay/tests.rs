//! Tests of [`super`]: the `dataflow-decay` detector against a ticked reference, its modes and config keys.

use super::*;
use proptest::prelude::*;

fn ms(v: u64) -> Nanos {
    Nanos::from_millis(v)
}

/// The definition, executed literally: a timer every `tick`, and every input
/// handled after the ticks at or before its instant. The event-driven
/// detector must produce exactly its verdicts and scores.
struct Ticked {
    c: DataflowDecayConfig,
    next_tick: Nanos,
    score: f64,
    verdict: Verdict,
    est: f64,
    expected_next: Nanos,
    last_frame: Nanos,
    no_decay_until: Nanos,
    skip_next: bool,
    onset: Nanos,
    missed: u64,
    /// skip-backlog: the held-back gap and the drain window it would open.
    pending: Option<(Nanos, Nanos)>,
    drain_until: Option<Nanos>,
}

impl Ticked {
    fn new(c: DataflowDecayConfig, start: Nanos) -> Ticked {
        let est = c.initial_interval.as_nanos_f64();
        let mut t = Ticked {
            next_tick: start + c.tick,
            score: 1.0,
            verdict: Verdict::Alive,
            est,
            expected_next: start,
            last_frame: start,
            no_decay_until: Nanos::ZERO,
            skip_next: false,
            onset: start,
            missed: 0,
            pending: None,
            drain_until: None,
            c,
        };
        t.expect_from(start);
        t
    }

    fn expect_from(&mut self, now: Nanos) {
        self.expected_next = now + Nanos::from_nanos_f64(self.est * self.c.margin);
        self.missed = 0;
        self.recompute_onset();
    }

    fn recompute_onset(&mut self) {
        let grace = match self.c.grace {
            Grace::None => Nanos::ZERO,
            Grace::OneInterval => Nanos::from_nanos_f64(self.est),
        };
        let onset = (self.expected_next + grace).max(self.no_decay_until);
        if onset != self.onset {
            self.onset = onset;
            self.missed = 0;
        }
    }

    fn step(&mut self) {
        self.score *= self.c.decay;
        if self.score < self.c.fail_below {
            self.verdict = Verdict::Failed;
        } else if self.verdict == Verdict::Alive && self.score < self.c.suspect_below {
            self.verdict = Verdict::Suspect;
        }
    }

    /// Runs every tick at or before `now`, logging verdict changes.
    fn tick_until(&mut self, now: Nanos, log: &mut Vec<(Nanos, Verdict)>) {
        while self.next_tick <= now {
            let t = self.next_tick;
            if self.verdict != Verdict::Failed && t > self.onset {
                let before = self.verdict;
                match self.c.decay_per {
                    DecayPer::Tick => self.step(),
                    DecayPer::MissedFrame => {
                        let period = (self.est.round() as u64).max(1);
                        let m = (t - self.onset).as_nanos().div_ceil(period);
                        for _ in self.missed..m {
                            if self.verdict != Verdict::Failed {
                                self.step();
                            }
                        }
                        self.missed = self.missed.max(m);
                    }
                }
                if self.verdict != before {
                    log.push((t, self.verdict));
                }
            }
            self.next_tick = self.next_tick + self.c.tick;
        }
    }

    fn feed(&mut self, gap: Nanos) {
        let interval = gap.max(MIN_INTERVAL).as_nanos_f64();
        self.est = (1.0 - self.c.ewma_alpha) * self.est + self.c.ewma_alpha * interval;
    }

    /// The rule of the module documentation, spelled out.
    fn feed_skipping_backlog(&mut self, now: Nanos, gap: Nanos) {
        let short = gap.as_nanos_f64() < 0.5 * self.est;
        if let Some((held, until)) = self.pending.take() {
            if short {
                self.drain_until = Some(until);
                return;
            }
            self.feed(held);
        }
        if self.verdict == Verdict::Failed {
            self.pending = Some((gap, now + gap));
        } else if self.drain_until.is_some_and(|until| now <= until) {
            if !short {
                if gap.as_nanos_f64() >= self.est {
                    self.drain_until = None;
                }
                self.feed(gap);
            }
        } else {
            self.drain_until = None;
            self.feed(gap);
        }
    }

    fn frame(&mut self, now: Nanos, frame: Frame) {
        match frame {
            Frame::Data | Frame::StreamHeartbeat => {
                let gap = now - self.last_frame;
                if self.skip_next {
                    self.skip_next = false;
                } else if self.c.ewma_samples == EwmaSamples::EveryInterval {
                    self.feed(gap);
                } else {
                    self.feed_skipping_backlog(now, gap);
                }
                self.score = (self.score + self.c.recovery).min(1.0);
                self.verdict = Verdict::Alive;
                self.last_frame = now;
                self.expect_from(now);
            }
            Frame::Backpressure => {
                self.score = self.score.max(self.c.backpressure_floor);
                self.last_frame = now;
                self.expect_from(now);
            }
            Frame::Maintenance { pause } => {
                self.no_decay_until = self.no_decay_until.max(now + pause);
                self.skip_next = true;
                self.last_frame = now;
                self.recompute_onset();
            }
        }
    }
}

/// Drives the event-driven detector as a host does: timers at their
/// `poll_timeout` instants, then the input.
fn drive(d: &mut DataflowDecay, now: Nanos, log: &mut Vec<(Nanos, Verdict)>) {
    while let Some(due) = d.poll_timeout() {
        if due > now {
            break;
        }
        let before = d.verdict();
        d.handle_timeout(due);
        assert_ne!(d.verdict(), before, "a timer at {due:?} changed nothing");
        log.push((due, d.verdict()));
    }
}

fn frame_strategy() -> impl Strategy<Value = (u64, Frame)> {
    let gap = prop_oneof![
        2 => 0u64..2_000_000,
        6 => 0u64..30_000_000,
        2 => 30_000_000u64..300_000_000,
        1 => 300_000_000u64..3_000_000_000,
    ];
    let frame = prop_oneof![
        10 => Just(Frame::Data),
        3 => Just(Frame::StreamHeartbeat),
        2 => Just(Frame::Backpressure),
        1 => (0u64..800).prop_map(|p| Frame::Maintenance { pause: ms(p) }),
    ];
    (gap, frame)
}

fn config_strategy() -> impl Strategy<Value = DataflowDecayConfig> {
    (
        prop_oneof![
            Just(1_000_000u64),
            Just(250_000),
            Just(3_000_000),
            Just(1_700_000)
        ],
        0.5f64..0.99,
        (0.05f64..0.4, 0.0f64..0.5),
        prop_oneof![Just(Grace::None), Just(Grace::OneInterval)],
        (
            prop_oneof![Just(DecayPer::Tick), Just(DecayPer::MissedFrame)],
            prop_oneof![
                Just(EwmaSamples::EveryInterval),
                Just(EwmaSamples::SkipBacklog)
            ],
        ),
        (1.0f64..2.0, 0.0f64..0.5, 0.3f64..1.0, 1u64..50),
    )
        .prop_map(
            |(
                tick,
                decay,
                (fail, gap),
                grace,
                (decay_per, ewma_samples),
                (margin, recovery, floor, init),
            )| {
                DataflowDecayConfig {
                    tick: Nanos(tick),
                    decay,
                    fail_below: fail,
                    suspect_below: (fail + gap).min(1.0),
                    grace,
                    decay_per,
                    ewma_samples,
                    margin,
                    recovery,
                    backpressure_floor: floor,
                    initial_interval: ms(init),
                    ..Default::default()
                }
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    /// The event-driven detector gives the same verdict changes, at the same
    /// instants, and the same scores as the detector ticked every tick.
    #[test]
    fn event_driven_decay_equals_ticked_reference(
        config in config_strategy(),
        start in 0u64..5_000_000,
        schedule in proptest::collection::vec(frame_strategy(), 1..120),
        tail in 0u64..2_000_000_000,
    ) {
        let start = Nanos(start);
        let mut fast = DataflowDecay::new(config.clone(), start).unwrap();
        let mut slow = Ticked::new(config, start);
        let (mut fast_log, mut slow_log) = (Vec::new(), Vec::new());
        let mut now = start;
        for (gap, frame) in schedule {
            now = now + Nanos(gap);
            drive(&mut fast, now, &mut fast_log);
            slow.tick_until(now, &mut slow_log);
            prop_assert_eq!(fast.score(now), slow.score, "score before frame at {:?}", now);
            prop_assert_eq!(fast.verdict(), slow.verdict);
            fast.handle_frame(now, frame);
            slow.frame(now, frame);
            prop_assert_eq!(fast.verdict(), slow.verdict);
            prop_assert_eq!(fast.score(now), slow.score);
        }
        now = now + Nanos(tail);
        drive(&mut fast, now, &mut fast_log);
        slow.tick_until(now, &mut slow_log);
        prop_assert_eq!(&fast_log, &slow_log);
        prop_assert_eq!(fast.score(now), slow.score);
    }
}

#[test]
fn silence_after_steady_stream_fails_within_a_few_intervals() {
    let mut d = DataflowDecay::new(DataflowDecayConfig::default(), Nanos::ZERO).unwrap();
    for t in 1..=100 {
        d.handle_frame(ms(10 * t), Frame::Data);
    }
    // est 10 ms, expected by 1012 ms; 0.9^7 < 0.5 (Suspect on the 7th tick
    // after), 0.9^16 < 0.2 (Failed on the 16th).
    assert_eq!(d.expected_next(), ms(1012));
    assert_eq!(d.poll_timeout(), Some(ms(1019)));
    d.handle_timeout(ms(1019));
    assert_eq!(d.verdict(), Verdict::Suspect);
    assert_eq!(d.poll_timeout(), Some(ms(1028)));
    d.handle_timeout(ms(1028));
    assert_eq!(d.verdict(), Verdict::Failed);
    assert_eq!(d.poll_timeout(), None);
    let failed_score = d.score(ms(1028));
    assert!(failed_score < 0.2 && failed_score > 0.18);
    assert_eq!(d.score(ms(5000)), failed_score, "no decay once Failed");
    d.handle_frame(ms(6000), Frame::Data);
    assert_eq!(d.verdict(), Verdict::Alive);
    assert!((d.score(ms(6000)) - (failed_score + 0.2)).abs() < 1e-12);
}

#[test]
fn backpressure_floors_the_score_without_recovery() {
    let mut d = DataflowDecay::new(DataflowDecayConfig::default(), Nanos::ZERO).unwrap();
    d.handle_timeout(ms(20));
    let low = d.score(ms(20));
    assert!(low < 0.7);
    d.handle_frame(ms(20), Frame::Backpressure);
    assert_eq!(d.score(ms(20)), 0.7);
    d.handle_frame(ms(21), Frame::Backpressure);
    assert_eq!(d.score(ms(21)), 0.7, "no recovery from backpressure frames");
}

#[test]
fn maintenance_pause_suspends_decay() {
    let mut d = DataflowDecay::new(DataflowDecayConfig::default(), Nanos::ZERO).unwrap();
    d.handle_frame(ms(5), Frame::Maintenance { pause: ms(30_000) });
    assert_eq!(d.score(ms(30_005)), 1.0);
    // Decay resumes on the first tick after the pause.
    assert_eq!(d.score(ms(30_006)), 0.9);
    assert_eq!(d.poll_timeout(), Some(ms(30_005 + 7)));
}

#[test]
fn grace_delays_decay_by_one_interval() {
    let config = DataflowDecayConfig {
        grace: Grace::OneInterval,
        ..Default::default()
    };
    let mut d = DataflowDecay::new(config, Nanos::ZERO).unwrap();
    // Expected by 12 ms, grace until 22 ms: first decay tick 23 ms.
    assert_eq!(d.score(ms(22)), 1.0);
    assert_eq!(d.score(ms(23)), 0.9);
    d.handle_timeout(ms(23));
    assert_eq!(d.poll_timeout(), Some(ms(29)));
}

#[test]
fn missed_frame_mode_decays_once_per_expected_frame() {
    let config = DataflowDecayConfig {
        decay_per: DecayPer::MissedFrame,
        ..Default::default()
    };
    let d = DataflowDecay::new(config, Nanos::ZERO).unwrap();
    // Frames expected at 12, 22, 32 ms...: one step at the tick after each.
    assert_eq!(d.score(ms(12)), 1.0);
    assert_eq!(d.score(ms(13)), 0.9);
    assert_eq!(d.score(ms(22)), 0.9);
    assert_eq!(d.score(ms(23)), 0.9 * 0.9);
    // 7 missed frames to Suspect: the 7th is due at 72 ms, seen at 73 ms.
    assert_eq!(d.poll_timeout(), Some(ms(73)));
}

fn with_samples(ewma_samples: EwmaSamples) -> DataflowDecay {
    let config = DataflowDecayConfig {
        ewma_samples,
        initial_interval: ms(20),
        ..Default::default()
    };
    DataflowDecay::new(config, Nanos::ZERO).unwrap()
}

/// Feeds data frames at `times`, handling the timers between them as a
/// host does; returns how many times the verdict became Failed.
fn frames_at(d: &mut DataflowDecay, times: impl IntoIterator<Item = Nanos>) -> usize {
    let mut log = Vec::new();
    for t in times {
        drive(d, t, &mut log);
        d.handle_frame(t, Frame::Data);
    }
    log.iter().filter(|(_, v)| *v == Verdict::Failed).count()
}

/// A stream of a frame every 20 ms stalls for 1 s (Failed), then its
/// backlog of 50 frames arrives 1 ms apart, then the stream goes on at
/// 20 ms. Every interval fed, the backlog pulls the estimate to a few ms
/// and the next 20 ms intervals are Failed again; skipping the backlog,
/// the estimate is the one from before the stall and nothing fails.
#[test]
fn skip_backlog_keeps_a_drained_backlog_out_of_the_estimate() {
    let steady = |from: u64, n: u64| (0..n).map(move |k| ms(from + 20 * k));
    let mut failed = Vec::new();
    for samples in [EwmaSamples::EveryInterval, EwmaSamples::SkipBacklog] {
        let mut d = with_samples(samples);
        assert_eq!(frames_at(&mut d, steady(20, 50)), 0);
        let before = d.est_interval();
        assert_eq!(before, ms(20));
        // The stall: Failed once, then the backlog.
        let stalled = frames_at(&mut d, (0..50).map(|k| ms(2000 + k)));
        assert_eq!(stalled, 1, "{samples:?}");
        if samples == EwmaSamples::SkipBacklog {
            assert_eq!(
                d.est_interval(),
                before,
                "neither the stall nor the backlog fed"
            );
        } else {
            assert!(d.est_interval() < ms(3), "{:?}", d.est_interval());
        }
        failed.push(frames_at(&mut d, steady(2069, 100)));
        if samples == EwmaSamples::SkipBacklog {
            // The first 20 ms interval is a whole estimate: the window closed.
            assert_eq!(d.drain_until, None);
            assert_eq!(d.est_interval(), ms(20));
        }
    }
    // Measured for every-interval; the point is that it is not 0.
    assert_eq!(failed, [8, 0]);
}

/// A stream that slows down for good (10 ms, then 60 ms intervals, which
/// end Failed until the estimate has grown): no backlog follows any gap,
/// so each gap that ended Failed is fed one frame late. The estimate
/// trails the every-interval one by one frame while the gaps end Failed,
/// and is the same from the first that does not (it then takes both).
#[test]
fn skip_backlog_feeds_a_gap_that_no_backlog_follows() {
    let times = (1..=20)
        .map(|k| ms(10 * k))
        .chain((1..=30).map(|k| ms(200 + 60 * k)));
    let mut every = with_samples(EwmaSamples::EveryInterval);
    let mut skip = with_samples(EwmaSamples::SkipBacklog);
    let (mut every_failed, mut skip_failed) = (0, 0);
    let mut estimates = Vec::new();
    for t in times {
        every_failed += frames_at(&mut every, [t]);
        skip_failed += frames_at(&mut skip, [t]);
        estimates.push((every.est_interval(), skip.est_interval()));
    }
    // Frames 0-19 at 10 ms, 20-49 at 60 ms; the gaps of frames 20-32
    // end Failed under skip-backlog, those of 20-31 under every-interval
    // (measured): one more, as the estimate trails by a frame.
    for (k, &(every_est, skip_est)) in estimates.iter().enumerate() {
        match k {
            0..=19 | 33.. => assert_eq!(skip_est, every_est, "frame {k}"),
            _ => assert_eq!(skip_est, estimates[k - 1].0, "frame {k}"),
        }
    }
    assert_eq!((every_failed, skip_failed), (12, 13));
    assert!(skip.est_interval() > ms(55), "{:?}", skip.est_interval());
    assert_eq!((skip.pending_gap, skip.drain_until), (None, None));
}

/// After a 200 ms stall the stream comes back 2 ms apart and stays so: the
/// short intervals stay out of the estimate for as long as the stall
/// lasted, then the estimate follows the faster stream.
#[test]
fn drain_window_lasts_as_long_as_the_gap() {
    let mut d = with_samples(EwmaSamples::SkipBacklog);
    frames_at(&mut d, (1..=50).map(|k| ms(20 * k)));
    assert_eq!(d.est_interval(), ms(20));
    // The stall: last frame at 1000 ms, next at 1200 ms (Failed before).
    let resumed = ms(1200);
    assert_eq!(frames_at(&mut d, [resumed]), 1);
    frames_at(&mut d, (1..=100).map(|k| resumed + ms(2 * k)));
    assert_eq!(d.drain_until, Some(resumed + ms(200)));
    assert_eq!(d.est_interval(), ms(20), "in the window: held");
    frames_at(&mut d, [resumed + ms(202)]);
    assert_eq!(d.drain_until, None);
    assert!(d.est_interval() < ms(20));
    frames_at(&mut d, (102..=300).map(|k| resumed + ms(2 * k)));
    assert!(d.est_interval() < ms(3), "{:?}", d.est_interval());
}

#[test]
fn rejects_out_of_range_keys() {
    let bad = DataflowDecayConfig {
        decay: 1.0,
        ..Default::default()
    };
    assert_eq!(
        DataflowDecay::new(bad, Nanos::ZERO).unwrap_err().key,
        "decay"
    );
    let bad = DataflowDecayConfig {
        suspect_below: 0.1,
        ..Default::default()
    };
    assert_eq!(
        DataflowDecay::new(bad, Nanos::ZERO).unwrap_err().key,
        "suspect_below"
    );
}
