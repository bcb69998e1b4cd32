//! `dataflow-decay`: a health score carried by the data stream itself.
//!
//! The monitor is a downstream stage watching the frames its upstream sends on
//! the data channel: business frames, stream-heartbeat frames when the upstream
//! was idle, backpressure frames when it is throttled, and maintenance frames
//! announcing a planned pause. No separate liveness traffic is needed while data
//! flows, and a stalled stream is noticed within a few expected intervals.
//!
//! The algorithm is defined with a periodic tick (1 ms by default): on every
//! tick at which the next frame is overdue, `score *= decay`, and the verdict
//! worsens when the score falls below `suspect_below` / `fail_below`. Ticks lie
//! on the grid `start + k * tick` (k >= 1); a tick and an input at the same
//! instant are ordered tick first.
//!
//! Sans-IO and event-driven: the host is never asked to tick. Between inputs the
//! score only follows the deterministic decay, so the detector counts the decay
//! steps due at any instant in O(1), applies them lazily, and computes from its
//! state the exact tick of its next verdict change for `poll_timeout`. The decay
//! steps are applied by repeated multiplication, exactly as a ticked
//! implementation would, so the verdict sequence is identical to one ticked every
//! millisecond (a property test compares both), and simulated cost does not grow
//! with tick resolution.
//!
//! Choices where the definition is silent, each made so the score keeps
//! describing the stream:
//! - a backpressure frame also pushes `expected_next` one expected interval out
//!   (the upstream just proved it is alive, only throttled);
//! - the interval that spans an announced maintenance pause is not fed to the
//!   EWMA (as Akka keeps post-suspicion gaps out of phi's history).
//!
//! `ewma_samples = "skip-backlog"` (an option; the default `"every-interval"`
//! is §3.4 to the letter) keeps a drained backlog out of the estimate. When a
//! frozen or cut upstream resumes, or a frozen monitor handles what queued
//! while it stood still, the frames that waited arrive back to back (about one
//! per millisecond in the built-in pipelines, all at one instant for a
//! monitor's own queue). Their intervals measure how fast a queue empties, not
//! how often the upstream produces; fed to the EWMA they pull the estimate
//! towards its 1 ms floor, and the stream's normal intervals that follow are
//! then many "expected intervals" long: Failed again, several times, after
//! the fault is over. The rule, which changes nothing before a stream's first
//! Failed verdict:
//! - a stream frame that arrives while the verdict is Failed ends a gap long
//!   enough for the detector to have given the stream up. That interval is
//!   held back until the next stream frame;
//! - if the next interval is shorter than [`BACKLOG_INTERVAL_SHARE`] of the
//!   estimate, a backlog follows the gap: the gap was a stall and the frames
//!   are its queue, so neither is fed (as Akka keeps the first interval after
//!   a failure out of phi's history, "since a long pause will skew the
//!   stats"), and a *drain window* as long as the gap opens at the frame that
//!   ended it. Otherwise no backlog follows: the gap was the stream's own
//!   pace (a stream that slowed down), and it is fed, one frame late, then
//!   the new interval as usual;
//! - in a drain window, an interval shorter than [`BACKLOG_INTERVAL_SHARE`] of
//!   the estimate is a backlog frame's and is not fed (the frame still counts
//!   as a sign of life: score recovery, next expected frame); a longer one is
//!   fed, and one of at least the whole estimate (the upstream had nothing
//!   queued for a whole interval: the backlog is gone) also closes the window.
//!
//! This is Karn's algorithm transposed (Karn and Partridge, "Improving
//! Round-Trip Time Estimates in Reliable Transport Protocols", SIGCOMM 1987;
//! RFC 6298 §3): TCP takes no RTT sample from a retransmitted segment, whose
//! sample is ambiguous, and keeps its estimate until an unambiguous one comes;
//! here the ambiguous samples are a stall and its backlog. Why the window
//! lasts as long as the gap: the upstream produced about `gap / estimate`
//! frames during the gap, and a queue whose frames come at least twice as
//! fast as the stream's pace (intervals below half the estimate) drains them,
//! while new ones keep coming, within the gap's length again; a slower
//! drain's intervals are not below half the estimate and are fed anyway. The
//! window bounds how long a stream that truly got faster after a failure
//! keeps its old, slower estimate. The gap is held back rather than dropped
//! because dropping every gap that ends a Failed verdict is Akka's ratchet
//! (see [`crate::phi`]): on a stream that slowed down for good (the
//! `backpressure-cascade` sink at 2% capacity) the estimate could never grow,
//! and that scenario's Failed mistakes more than tripled in a first version
//! that dropped them. A stall too short to reach Failed is not treated, and
//! the gap is measured from the last frame of any kind, as every interval is.

use serde::{Deserialize, Serialize};

use crate::config::{ensure, ensure_open_range, ensure_positive, ConfigError};
use crate::detector::{FailureDetector, Frame};
use crate::time::{Nanos, NANOS_PER_MILLI};
use crate::verdict::Verdict;

/// When decay starts once a frame is overdue.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Grace {
    /// As soon as the expected frame is late.
    #[default]
    None,
    /// Only after a whole further estimated interval with no frame.
    OneInterval,
}

/// What one decay step stands for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum DecayPer {
    /// One step per tick while overdue.
    #[default]
    Tick,
    /// One step per missed expected frame (checked on the ticks).
    MissedFrame,
}

/// Which inter-frame intervals feed the EWMA of the expected interval.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum EwmaSamples {
    /// Every interval between stream frames (spec §3.4), except the one that
    /// spans an announced maintenance pause.
    #[default]
    EveryInterval,
    /// Also not the gap that ended a Failed verdict, nor the backlog that
    /// follows it (see the module documentation).
    SkipBacklog,
}

/// Keys of a `kind = "dataflow-decay"` detector.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct DataflowDecayConfig {
    /// The upstream sends a stream-heartbeat frame after this long without a frame.
    pub idle_frame_interval: Nanos,
    /// Initial estimate of the inter-frame interval.
    pub initial_interval: Nanos,
    /// Weight of a new interval in the estimate (EWMA).
    pub ewma_alpha: f64,
    /// The next frame is expected within `estimate * margin`.
    pub margin: f64,
    /// Score regained per data frame.
    pub recovery: f64,
    /// A backpressure frame lifts the score to at least this.
    pub backpressure_floor: f64,
    /// Decay period.
    pub tick: Nanos,
    /// Factor applied per decay step.
    pub decay: f64,
    /// Failed below this score.
    pub fail_below: f64,
    /// Suspect below this score.
    pub suspect_below: f64,
    pub grace: Grace,
    pub decay_per: DecayPer,
    /// Which intervals feed the estimate.
    pub ewma_samples: EwmaSamples,
}

impl Default for DataflowDecayConfig {
    fn default() -> Self {
        DataflowDecayConfig {
            idle_frame_interval: Nanos::from_millis(100),
            initial_interval: Nanos::from_millis(10),
            ewma_alpha: 0.1,
            margin: 1.2,
            recovery: 0.2,
            backpressure_floor: 0.7,
            tick: Nanos::from_millis(1),
            decay: 0.9,
            fail_below: 0.2,
            suspect_below: 0.5,
            grace: Grace::None,
            decay_per: DecayPer::Tick,
            ewma_samples: EwmaSamples::EveryInterval,
        }
    }
}

/// Smallest interval fed to the EWMA, so a burst of back-to-back frames cannot
/// shrink the expected interval to nothing.
pub const MIN_INTERVAL: Nanos = Nanos(NANOS_PER_MILLI);

/// `ewma_samples = "skip-backlog"`: right after a gap that ended a Failed
/// verdict, and in a drain window, an interval shorter than this share of the
/// estimate (a fraction, no unit) is taken as a backlog frame's. Half: a queue
/// that drains at least twice as fast as the stream produces empties within
/// the gap that built it (see the module documentation).
pub const BACKLOG_INTERVAL_SHARE: f64 = 0.5;

impl DataflowDecayConfig {
    pub fn validate(&self) -> Result<(), ConfigError> {
        ensure_positive(self.idle_frame_interval, "idle_frame_interval")?;
        ensure_positive(self.initial_interval, "initial_interval")?;
        ensure(
            self.ewma_alpha.is_finite() && self.ewma_alpha > 0.0 && self.ewma_alpha <= 1.0,
            "ewma_alpha",
            "must be in (0, 1]",
        )?;
        ensure(
            self.margin.is_finite() && self.margin > 0.0 && self.margin <= 1e6,
            "margin",
            "must be a positive number",
        )?;
        ensure(
            (0.0..=1.0).contains(&self.recovery),
            "recovery",
            "must be in [0, 1]",
        )?;
        ensure(
            (0.0..=1.0).contains(&self.backpressure_floor),
            "backpressure_floor",
            "must be in [0, 1]",
        )?;
        ensure_positive(self.tick, "tick")?;
        ensure_open_range(self.decay, 0.0, 1.0, "decay")?;
        ensure_open_range(self.fail_below, 0.0, 1.0, "fail_below")?;
        ensure(
            self.suspect_below.is_finite()
                && self.suspect_below >= self.fail_below
                && self.suspect_below <= 1.0,
            "suspect_below",
            "must be in [fail_below, 1]",
        )?;
        Ok(())
    }
}

/// A gap that ended a Failed verdict, not yet fed to the EWMA.
#[derive(Clone, Copy, Debug, PartialEq)]
struct PendingGap {
    /// The interval itself.
    gap: Nanos,
    /// End of the drain window it opens if a backlog follows: as long again
    /// as the gap, from the frame that ended it.
    drain_until: Nanos,
}

/// The dataflow-decay detector state machine.
#[derive(Clone, Debug)]
pub struct DataflowDecay {
    config: DataflowDecayConfig,
    /// Origin of the tick grid.
    start: Nanos,
    /// Score as of tick `applied_tick`.
    score: f64,
    /// `Alive` stands for the Active state.
    verdict: Verdict,
    /// Estimated inter-frame interval, in nanoseconds.
    est_interval: f64,
    expected_next: Nanos,
    last_frame: Nanos,
    no_decay_until: Nanos,
    /// The next data frame's interval spans a maintenance pause: keep it out of the EWMA.
    skip_next_interval: bool,
    /// `ewma_samples = "skip-backlog"`: end of the open drain window, if any
    /// (a backlog's short intervals stay out of the EWMA until then).
    drain_until: Option<Nanos>,
    /// `ewma_samples = "skip-backlog"`: the gap that ended a Failed verdict,
    /// held back until the next stream frame tells whether a backlog follows.
    pending_gap: Option<PendingGap>,
    /// Ticks decay only after this instant (overdue frame, grace, maintenance).
    onset: Nanos,
    /// `first_tick_after(onset)`, kept with `onset` (it costs a division).
    onset_tick: u64,
    /// Index of the last tick whose decay has been applied.
    applied_tick: u64,
    /// `decay_per = "missed-frame"`: missed frames already decayed for since `onset`.
    missed_applied: u64,
    /// Decay steps from a full score (1.0, Active) to the next verdict change:
    /// the usual starting point, so it is computed once.
    steps_from_full: u64,
}

impl DataflowDecay {
    /// Starts monitoring at `now`: the tick grid starts here and the first frame
    /// is expected within `initial_interval * margin`.
    pub fn new(config: DataflowDecayConfig, now: Nanos) -> Result<DataflowDecay, ConfigError> {
        config.validate()?;
        Ok(DataflowDecay::build(config, now))
    }

    /// [`DataflowDecay::new`] of a configuration already validated.
    pub(crate) fn build(config: DataflowDecayConfig, now: Nanos) -> DataflowDecay {
        debug_assert!(config.validate().is_ok());
        let est_interval = config.initial_interval.as_nanos_f64();
        let mut detector = DataflowDecay {
            start: now,
            score: 1.0,
            verdict: Verdict::Alive,
            est_interval,
            expected_next: now,
            last_frame: now,
            no_decay_until: Nanos::ZERO,
            skip_next_interval: false,
            drain_until: None,
            pending_gap: None,
            onset: now,
            onset_tick: 1,
            applied_tick: 0,
            missed_applied: 0,
            steps_from_full: 0,
            config,
        };
        detector.steps_from_full = detector.steps_to_change(1.0, Verdict::Alive);
        detector.expect_next_from(now);
        detector
    }

    pub fn config(&self) -> &DataflowDecayConfig {
        &self.config
    }

    /// Current estimate of the inter-frame interval.
    pub fn est_interval(&self) -> Nanos {
        Nanos::from_nanos_f64(self.est_interval)
    }

    /// When the next frame is expected.
    pub fn expected_next(&self) -> Nanos {
        self.expected_next
    }

    fn tick_ns(&self) -> u64 {
        self.config.tick.as_nanos()
    }

    /// Index of the last tick at or before `at` (0 = the grid origin, no tick).
    fn tick_index_at(&self, at: Nanos) -> u64 {
        (at - self.start).as_nanos() / self.tick_ns()
    }

    /// Index of the first tick strictly after `at`.
    fn first_tick_after(&self, at: Nanos) -> u64 {
        if at < self.start {
            1
        } else {
            self.tick_index_at(at) + 1
        }
    }

    fn tick_time(&self, index: u64) -> Nanos {
        self.start + Nanos(index.saturating_mul(self.tick_ns()))
    }

    /// The missed-frame period, in whole nanoseconds.
    fn frame_period(&self) -> u64 {
        (self.est_interval.round() as u64).max(1)
    }

    /// Expected frames missed by tick time `at`: those due at
    /// `onset + j * period`, j >= 0, strictly before `at`.
    fn missed_by(&self, at: Nanos) -> u64 {
        if at <= self.onset {
            0
        } else {
            (at - self.onset).as_nanos().div_ceil(self.frame_period())
        }
    }

    /// Decay steps that ticks in `(applied_tick, tick_index_at(now)]` owe, and
    /// the missed-frame count after them.
    fn pending_steps(&self, now: Nanos) -> (u64, u64, u64) {
        let last = self.tick_index_at(now);
        if last <= self.applied_tick || self.verdict == Verdict::Failed {
            return (0, last.max(self.applied_tick), self.missed_applied);
        }
        let first = (self.applied_tick + 1).max(self.onset_tick);
        if first > last {
            return (0, last, self.missed_applied);
        }
        match self.config.decay_per {
            DecayPer::Tick => (last - first + 1, last, self.missed_applied),
            DecayPer::MissedFrame => {
                let missed = self.missed_by(self.tick_time(last));
                (missed - self.missed_applied.min(missed), last, missed)
            }
        }
    }

    /// Applies up to `steps` decay steps to `(score, verdict)` and returns the
    /// result; stops at Failed (a Failed peer does not decay further). Each step
    /// is one multiplication, as in a ticked implementation.
    fn run_steps(&self, mut score: f64, mut verdict: Verdict, steps: u64) -> (f64, Verdict) {
        let c = &self.config;
        for _ in 0..steps {
            if verdict == Verdict::Failed {
                break;
            }
            score *= c.decay;
            if score < c.fail_below {
                verdict = Verdict::Failed;
            } else if verdict == Verdict::Alive && score < c.suspect_below {
                verdict = Verdict::Suspect;
            }
        }
        (score, verdict)
    }

    /// Decay steps from `(score, verdict)` until the verdict changes. Finite:
    /// the score falls geometrically and `fail_below > 0`.
    fn steps_to_change(&self, score: f64, verdict: Verdict) -> u64 {
        if verdict == Verdict::Failed {
            return u64::MAX;
        }
        if score == 1.0 && verdict == Verdict::Alive && self.steps_from_full > 0 {
            return self.steps_from_full;
        }
        let c = &self.config;
        let mut s = score;
        let mut steps = 0u64;
        loop {
            steps += 1;
            s *= c.decay;
            if s < c.fail_below || (verdict == Verdict::Alive && s < c.suspect_below) {
                return steps;
            }
        }
    }

    /// Brings the score up to date with every tick at or before `now`.
    #[inline]
    fn advance(&mut self, now: Nanos) {
        // No tick at or before `onset` decays: while the next frame is not
        // overdue there is nothing to apply (and `applied_tick` may lag).
        // That is the usual case on a busy stream, so it is checked inline.
        if now > self.onset {
            self.apply_ticks(now);
        }
    }

    /// Applies the decay of the ticks after `onset` up to `now`.
    #[inline(never)]
    fn apply_ticks(&mut self, now: Nanos) {
        let (steps, last, missed) = self.pending_steps(now);
        if steps > 0 {
            let (score, verdict) = self.run_steps(self.score, self.verdict, steps);
            self.score = score;
            self.verdict = verdict;
        }
        self.applied_tick = last;
        self.missed_applied = missed;
    }

    /// A frame at `now` proves liveness: expect the next one in time.
    fn expect_next_from(&mut self, now: Nanos) {
        let allowance = Nanos::from_nanos_f64(self.est_interval * self.config.margin);
        self.expected_next = now + allowance;
        self.missed_applied = 0;
        self.update_onset();
    }

    fn update_onset(&mut self) {
        let grace = match self.config.grace {
            Grace::None => Nanos::ZERO,
            Grace::OneInterval => Nanos::from_nanos_f64(self.est_interval),
        };
        let onset = (self.expected_next + grace).max(self.no_decay_until);
        if onset != self.onset {
            self.onset = onset;
            self.onset_tick = self.first_tick_after(onset);
            self.missed_applied = 0;
        }
    }

    /// Feeds one interval to the EWMA (floored at [`MIN_INTERVAL`]).
    fn feed(&mut self, interval: Nanos) {
        let c = &self.config;
        let interval = interval.max(MIN_INTERVAL).as_nanos_f64();
        self.est_interval = (1.0 - c.ewma_alpha) * self.est_interval + c.ewma_alpha * interval;
    }

    /// `ewma_samples = "skip-backlog"`: the samples of the interval `gap` that
    /// a stream frame ends at `now`, with the verdict as of just before it (see
    /// the module documentation).
    fn feed_skipping_backlog(&mut self, now: Nanos, gap: Nanos) {
        let short = gap.as_nanos_f64() < BACKLOG_INTERVAL_SHARE * self.est_interval;
        if let Some(stall) = self.pending_gap.take() {
            if short {
                // A backlog follows the stall: neither measures the stream's pace.
                self.drain_until = Some(stall.drain_until);
                return;
            }
            // No backlog: the gap was the stream's own pace after all.
            self.feed(stall.gap);
        }
        if self.verdict == Verdict::Failed {
            self.pending_gap = Some(PendingGap {
                gap,
                drain_until: now + gap,
            });
            return;
        }
        match self.drain_until {
            Some(until) if now <= until => {
                if short {
                    return;
                }
                if gap.as_nanos_f64() >= self.est_interval {
                    self.drain_until = None;
                }
            }
            _ => self.drain_until = None,
        }
        self.feed(gap);
    }

    fn handle_stream_frame(&mut self, now: Nanos) {
        let gap = now - self.last_frame;
        if self.skip_next_interval {
            self.skip_next_interval = false;
        } else {
            match self.config.ewma_samples {
                EwmaSamples::EveryInterval => self.feed(gap),
                EwmaSamples::SkipBacklog => self.feed_skipping_backlog(now, gap),
            }
        }
        debug_assert!(
            (self.drain_until.is_none() && self.pending_gap.is_none())
                || self.config.ewma_samples == EwmaSamples::SkipBacklog
        );
        debug_assert!(self.est_interval.is_finite() && self.est_interval > 0.0);
        let c = &self.config;
        self.score = (self.score + c.recovery).min(1.0);
        self.verdict = Verdict::Alive;
        self.last_frame = now;
        self.expect_next_from(now);
    }
}

impl FailureDetector for DataflowDecay {
    /// A heartbeat is taken as a stream-heartbeat frame.
    fn handle_heartbeat(&mut self, now: Nanos) {
        self.handle_frame(now, Frame::StreamHeartbeat);
    }

    fn handle_frame(&mut self, now: Nanos, frame: Frame) {
        self.advance(now);
        match frame {
            Frame::Data | Frame::StreamHeartbeat => self.handle_stream_frame(now),
            Frame::Backpressure => {
                self.score = self.score.max(self.config.backpressure_floor);
                self.last_frame = now;
                self.expect_next_from(now);
            }
            Frame::Maintenance { pause } => {
                self.no_decay_until = self.no_decay_until.max(now + pause);
                self.skip_next_interval = true;
                self.last_frame = now;
                self.update_onset();
            }
        }
    }

    fn handle_timeout(&mut self, now: Nanos) {
        self.advance(now);
    }

    fn poll_timeout(&self) -> Option<Nanos> {
        if self.verdict == Verdict::Failed {
            return None;
        }
        let steps = self.steps_to_change(self.score, self.verdict);
        let first = (self.applied_tick + 1).max(self.onset_tick);
        let index = match self.config.decay_per {
            DecayPer::Tick => first.saturating_add(steps - 1),
            DecayPer::MissedFrame => {
                // First tick by which missed_applied + steps frames are missed:
                // strictly after onset + (missed_applied + steps - 1) * period.
                let frames = self.missed_applied.saturating_add(steps - 1);
                let due = self.onset + Nanos(frames.saturating_mul(self.frame_period()));
                first.max(self.first_tick_after(due))
            }
        };
        Some(self.tick_time(index))
    }

    #[inline]
    fn verdict(&self) -> Verdict {
        self.verdict
    }

    /// The health score at `now`, in [0, 1].
    fn score(&self, now: Nanos) -> f64 {
        let (steps, _, _) = self.pending_steps(now);
        self.run_steps(self.score, self.verdict, steps).0
    }
}

#[cfg(test)]
mod tests;
