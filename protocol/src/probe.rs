//! `adaptive-probe`: probe/response with a learned per-peer timeout.
//!
//! The monitor sends a probe, the peer answers when it processes it, and the
//! probe's timeout is learned from the round-trip times of earlier answers. This
//! is the direct probing of Orleans' membership service, in dotnet/orleans
//! `src/Orleans.Runtime/MembershipService/`:
//! - `SiloHealthMonitor.cs` (`Run`, `ProbeDirectly`, `CalculateProbeTimeout`,
//!   `CalculateNextProbeDelay`): one probe in flight at a time, a first probe
//!   after a random delay in `[0, ProbeTimeout)`, consecutive missed probes
//!   counted until the next success, the probe timeout extended by the local
//!   health degradation score, a timed-out probe during which the local silo
//!   stalled for at least a quarter of the timeout reported as `Unknown`, and
//!   the next probe started one probe period after the previous one *started*;
//! - `PhiAccrualFailureDetector.cs` (internal to the membership service): a
//!   window of the last 100 successful round-trip times; the `ProbeTimeout`
//!   until 4 samples exist, then `mean + k * max(std_dev, ProbeTimeout / (2k))`
//!   with `k` the z at which Akka's logistic phi reaches 8; `GetTimeout(min, max,
//!   extensionFactor)` multiplies by the extension factor *before* clamping.
//!
//! What this module does not model, and why:
//! - indirect probes (Orleans probes through an intermediary silo once
//!   `NumMissedProbesLimit - 1` direct probes are missed, when
//!   `EnableIndirectProbes` is set): they need a third node, which a detector
//!   watching one peer does not have; only direct probes exist here, so only
//!   their round-trip times are ever sampled;
//! - votes in the membership table: the verdict is Suspect after one miss and
//!   Failed after `missed_probes_limit` consecutive misses (spec §3.3).
//!
//! Choices where the sources and the spec differ or are silent:
//! - a stall of *exactly* 25% of the timeout makes the miss Unknown: Orleans
//!   tests `stallDurationDuring >= probeTimeout.Multiply(0.25)`, the spec says
//!   "more than"; we follow the implementation (the two differ by one
//!   nanosecond of stall);
//! - the stall charged to a probe is every stall the host reported between the
//!   probe's start and its deadline being handled (a running total, sampled when
//!   the probe starts): a paused node sends nothing, so a stall reported while a
//!   probe is in flight began after that probe was sent;
//! - Orleans truncates the timeout to 100 ns ticks; here it is rounded to the
//!   nearest nanosecond.
//!
//! Sans-IO: the host calls [`FailureDetector::handle_start_probing`] with a
//! jitter it drew; from then on `poll_timeout` reports either the deadline of
//! the probe in flight or the start of the next probe, `handle_timeout` starts
//! probes (drained with `poll_transmit`) and times them out, and
//! `handle_probe_reply` matches answers by id. A host replaying a recorded trace
//! never starts probing and feeds [`FailureDetector::handle_probe_outcome`]
//! instead: the detector then has no timers at all. Nothing is allocated after
//! construction (the window reserves its 100 slots up front, the pending
//! transmit is one `Option`).

use serde::{Deserialize, Serialize};

use crate::config::{ensure, ensure_bounded, ensure_positive, ConfigError};
use crate::detector::{FailureDetector, ProbeId, ProbeOutcome, Transmit};
use crate::phi::phi_logistic;
use crate::time::Nanos;
use crate::verdict::Verdict;
use crate::window::SampleWindow;

/// Keys of a `kind = "adaptive-probe"` detector; defaults are Orleans'
/// (`ClusterMembershipOptions`: `ProbeTimeout` 5 s, `NumMissedProbesLimit` 3;
/// the clamps follow spec §3.3).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct AdaptiveProbeConfig {
    /// Timeout used until 4 RTT samples exist (Orleans' `ProbeTimeout`); also
    /// the span of the first probe's jitter and, through `initial_timeout /
    /// (2k)`, the floor of the learned standard deviation.
    pub initial_timeout: Nanos,
    /// Lower clamp of the effective timeout (default `initial_timeout / 2`,
    /// Orleans' `MinProbeTimeout`).
    pub min_timeout: Option<Nanos>,
    /// Upper clamp of the effective timeout (default `4 * initial_timeout`,
    /// Orleans' `MaxProbeTimeout`).
    pub max_timeout: Option<Nanos>,
    /// Consecutive missed probes after which the peer is Failed.
    pub missed_probes_limit: u32,
}

impl Default for AdaptiveProbeConfig {
    fn default() -> Self {
        AdaptiveProbeConfig {
            initial_timeout: Nanos::from_secs(5),
            min_timeout: None,
            max_timeout: None,
            missed_probes_limit: 3,
        }
    }
}

impl AdaptiveProbeConfig {
    /// The lower clamp, defaulted.
    pub fn min_timeout(&self) -> Nanos {
        self.min_timeout
            .unwrap_or(Nanos(self.initial_timeout.as_nanos() / 2))
    }

    /// The upper clamp, defaulted.
    pub fn max_timeout(&self) -> Nanos {
        self.max_timeout
            .unwrap_or(Nanos(self.initial_timeout.as_nanos().saturating_mul(4)))
    }

    pub fn validate(&self) -> Result<(), ConfigError> {
        ensure_positive(self.initial_timeout, "initial_timeout")?;
        if let Some(min) = self.min_timeout {
            ensure_positive(min, "min_timeout")?;
        }
        ensure_positive(self.min_timeout(), "initial_timeout")?;
        // The default upper clamp is four times `initial_timeout`.
        let max_key = if self.max_timeout.is_some() {
            "max_timeout"
        } else {
            "initial_timeout"
        };
        ensure_bounded(self.max_timeout(), max_key)?;
        ensure(
            self.max_timeout() >= self.min_timeout(),
            "max_timeout",
            "must not be shorter than `min_timeout`",
        )?;
        ensure(
            self.missed_probes_limit >= 1,
            "missed_probes_limit",
            "must be at least 1",
        )?;
        Ok(())
    }
}

/// Successful round-trip times kept (Orleans' `MaxSampleSize`).
pub const RTT_WINDOW: usize = 100;

/// Below this many samples the learned timeout is `initial_timeout`: a mean
/// and a deviation of fewer samples say little (Orleans' `MinimumSampleCount`).
pub const MIN_RTT_SAMPLES: usize = 4;

/// The phi at which Orleans sets the learned timeout: the timeout is the
/// elapsed time at which Akka's logistic phi, fed the RTT distribution, would
/// reach 8 (Orleans' `Threshold`, also Akka's default failure threshold).
pub const PHI_AT_TIMEOUT: f64 = 8.0;

/// Bisection bracket and step count for `k`, as Orleans'
/// `CalculateThresholdStandardDeviations` (64 halvings of [0, 10] reach the
/// resolution of `f64`).
const K_SEARCH_UPPER: f64 = 10.0;
const K_SEARCH_ITERATIONS: u32 = 64;

/// A timed-out probe during which the local node stalled for at least this
/// share of the probe's timeout is Unknown, neither success nor miss: the
/// answer may have arrived and waited for the stalled monitor (Orleans'
/// `ProbeDirectly`, `stallDurationDuring >= probeTimeout.Multiply(0.25)`).
pub const STALL_SHARE_FOR_UNKNOWN: f64 = 0.25;

/// Consecutive misses after which the peer is Suspect (spec §3.3).
pub const MISSES_FOR_SUSPECT: u32 = 1;

/// Largest jitter accepted: the largest `f64` below 1, so that the first probe
/// starts strictly within `[0, initial_timeout)` as the host's jitter is
/// specified to be in `[0, 1)`.
const MAX_JITTER: f64 = 1.0 - f64::EPSILON / 2.0;

/// The z (in standard deviations) at which Akka's logistic phi equals
/// [`PHI_AT_TIMEOUT`] (≈ 5.226), found exactly as Orleans'
/// `CalculateThresholdStandardDeviations` does: 64 bisection steps on [0, 10],
/// keeping the upper bound. Only `phi_logistic` and the arithmetic of one
/// platform's `f64` enter, so every run finds the same bits.
pub fn threshold_std_devs() -> f64 {
    let mut lower = 0.0;
    let mut upper = K_SEARCH_UPPER;
    for _ in 0..K_SEARCH_ITERATIONS {
        let mid = (lower + upper) / 2.0;
        if phi_logistic(mid, 0.0, 1.0) < PHI_AT_TIMEOUT {
            lower = mid;
        } else {
            upper = mid;
        }
    }
    upper
}

/// The probe in flight (at most one, as in Orleans' `SiloHealthMonitor.Run`).
#[derive(Clone, Copy, Debug)]
struct InFlight {
    id: ProbeId,
    sent_at: Nanos,
    /// This probe's timeout: the effective timeout when it started.
    timeout: Nanos,
    /// `sent_at + timeout`: a reply after this instant is late.
    deadline: Nanos,
    /// The running stall total when the probe started.
    stall_at_start: Nanos,
}

/// The adaptive-probe detector state machine (see the module documentation).
#[derive(Clone, Debug)]
pub struct AdaptiveProbe {
    config: AdaptiveProbeConfig,
    /// [`threshold_std_devs`], computed once.
    k: f64,
    /// Floor of the standard deviation, `initial_timeout / (2k)`, in ns: with
    /// steady RTTs the learned timeout never falls below `mean + initial / 2`.
    min_std_dev: f64,
    /// Round-trip times of successful direct probes (and recorded answers), ns.
    rtts: SampleWindow,
    /// Latest local health degradation score (0 = healthy).
    local_health: u32,
    /// Sum of every local stall reported so far.
    stall_total: Nanos,
    /// Consecutive missed probes since the last success.
    missed: u32,
    verdict: Verdict,
    /// The host carries out active probing (`handle_start_probing` was called).
    probing: bool,
    /// When the next probe starts, while probing and none is in flight.
    next_probe_at: Option<Nanos>,
    in_flight: Option<InFlight>,
    /// Id of the last probe started (0 before the first).
    last_id: u64,
    /// The probe the host has yet to send.
    transmit: Option<Transmit>,
    /// The latest time handed in: a smaller `now` counts as no time passed.
    now: Nanos,
}

impl AdaptiveProbe {
    /// Validates `config`; monitoring starts at `now`, but probing only once the
    /// host calls `handle_start_probing`.
    pub fn new(config: AdaptiveProbeConfig, now: Nanos) -> Result<AdaptiveProbe, ConfigError> {
        config.validate()?;
        Ok(AdaptiveProbe::build(config, now))
    }

    /// [`AdaptiveProbe::new`] of a configuration already validated.
    pub(crate) fn build(config: AdaptiveProbeConfig, now: Nanos) -> AdaptiveProbe {
        debug_assert!(config.validate().is_ok());
        let k = threshold_std_devs();
        let min_std_dev = config.initial_timeout.as_nanos_f64() / (2.0 * k);
        AdaptiveProbe {
            config,
            k,
            min_std_dev,
            rtts: SampleWindow::new(RTT_WINDOW),
            local_health: 0,
            stall_total: Nanos::ZERO,
            missed: 0,
            verdict: Verdict::Alive,
            probing: false,
            next_probe_at: None,
            in_flight: None,
            last_id: 0,
            transmit: None,
            now,
        }
    }

    pub fn config(&self) -> &AdaptiveProbeConfig {
        &self.config
    }

    /// Number of round-trip samples in the window.
    pub fn sample_count(&self) -> usize {
        self.rtts.len()
    }

    /// Consecutive missed probes since the last success.
    pub fn missed_probes(&self) -> u32 {
        self.missed
    }

    /// The `k` of the learned timeout (see [`threshold_std_devs`]).
    pub fn threshold_std_devs(&self) -> f64 {
        self.k
    }

    /// The probe in flight, if any.
    pub fn in_flight(&self) -> Option<ProbeId> {
        self.in_flight.map(|p| p.id)
    }

    /// The learned timeout before the local-health extension and the clamps:
    /// `initial_timeout` below [`MIN_RTT_SAMPLES`] samples, else
    /// `mean + k * max(std_dev, initial_timeout / (2k))`.
    pub fn learned_timeout(&self) -> Nanos {
        Nanos::from_nanos_f64(self.learned_ns())
    }

    /// The timeout a probe started now would get: the learned timeout times
    /// `1 + local_health_score`, then clamped to `[min_timeout, max_timeout]`.
    pub fn timeout(&self) -> Nanos {
        let min = self.config.min_timeout();
        let max = self.config.max_timeout();
        // Clamp again in integers: `f64` cannot hold every bound exactly.
        Nanos::from_nanos_f64(self.effective_ns()).max(min).min(max)
    }

    fn learned_ns(&self) -> f64 {
        if self.rtts.len() < MIN_RTT_SAMPLES {
            return self.config.initial_timeout.as_nanos_f64();
        }
        self.rtts.mean() + self.k * self.rtts.std_dev_at_least(self.min_std_dev)
    }

    /// Orleans' `GetTimeout(min, max, extensionFactor)`: multiply, then clamp.
    /// `max(min).min(max)` rather than `clamp`, which would panic on bounds that
    /// validation already excludes.
    fn effective_ns(&self) -> f64 {
        let extension = 1.0 + f64::from(self.local_health);
        (self.learned_ns() * extension)
            .max(self.config.min_timeout().as_nanos_f64())
            .min(self.config.max_timeout().as_nanos_f64())
    }

    /// Takes `now` into account and returns the time to act at: never earlier
    /// than a time already handed in.
    fn advance(&mut self, now: Nanos) -> Nanos {
        self.now = self.now.max(now);
        self.now
    }

    fn verdict_for(&self, missed: u32) -> Verdict {
        if missed >= self.config.missed_probes_limit {
            Verdict::Failed
        } else if missed >= MISSES_FOR_SUSPECT {
            Verdict::Suspect
        } else {
            Verdict::Alive
        }
    }

    /// A successful probe: its RTT is a sample and the miss count restarts.
    fn record_success(&mut self, rtt: Nanos) {
        self.rtts.push(rtt.as_nanos());
        self.missed = 0;
        self.verdict = Verdict::Alive;
    }

    fn record_miss(&mut self) {
        self.missed = self.missed.saturating_add(1);
        self.verdict = self.verdict_for(self.missed);
    }

    /// Ends the probe in flight at `done` and schedules the next one, as
    /// Orleans' `CalculateNextProbeDelay(period, elapsed)`: the period is the
    /// timeout recomputed after the result, and the next probe starts
    /// `max(0, period - (done - sent_at))` after `done`, that is at
    /// `max(sent_at + period, done)`.
    fn finish(&mut self, probe: InFlight, done: Nanos) {
        self.in_flight = None;
        if self.transmit.is_some_and(|t| t.probe == probe.id) {
            // The host never sent it; a reply could only be ignored now.
            self.transmit = None;
        }
        let period = self.timeout();
        self.next_probe_at = Some((probe.sent_at + period).max(done));
    }

    /// Starts a probe at `now` with the current effective timeout.
    fn start_probe(&mut self, now: Nanos) {
        let timeout = self.timeout();
        let Some(deadline) = now.as_nanos().checked_add(timeout.as_nanos()) else {
            // The deadline lies past the end of representable time: probing
            // stops rather than spinning on a deadline stuck at `Nanos::MAX`.
            self.next_probe_at = None;
            return;
        };
        self.last_id = self.last_id.saturating_add(1);
        let id = ProbeId(self.last_id);
        self.in_flight = Some(InFlight {
            id,
            sent_at: now,
            timeout,
            deadline: Nanos(deadline),
            stall_at_start: self.stall_total,
        });
        self.next_probe_at = None;
        self.transmit = Some(Transmit { probe: id });
    }
}

impl FailureDetector for AdaptiveProbe {
    /// The first probe starts `jitter * initial_timeout` after `now` (Orleans:
    /// `RandomTimeSpan.Next(ProbeTimeout)`). The jitter is forced into `[0, 1)`
    /// (NaN counts as 0). Later calls change nothing: probing has started.
    fn handle_start_probing(&mut self, now: Nanos, jitter: f64) {
        let now = self.advance(now);
        if self.probing {
            return;
        }
        self.probing = true;
        let jitter = if jitter.is_nan() {
            0.0
        } else {
            jitter.clamp(0.0, MAX_JITTER)
        };
        let initial = self.config.initial_timeout;
        // Floor, and at most `initial - 1 ns`: the delay stays below the
        // initial timeout even where `f64` rounds the product up.
        let delay = Nanos((jitter * initial.as_nanos_f64()).floor() as u64).min(initial - Nanos(1));
        self.next_probe_at = Some(now + delay);
    }

    /// A reply to the probe in flight, by its deadline, is a success. Replies
    /// after the deadline (the probe is, or is about to be, counted as missed)
    /// and replies to any other id are ignored.
    fn handle_probe_reply(&mut self, now: Nanos, probe: ProbeId) {
        let now = self.advance(now);
        let Some(in_flight) = self.in_flight else {
            return;
        };
        if in_flight.id != probe || now > in_flight.deadline {
            return;
        }
        self.record_success(now - in_flight.sent_at);
        self.finish(in_flight, now);
    }

    /// A recorded outcome: an answer is a sample and a success, a miss is a
    /// miss (the stall rule was applied, if at all, where it was recorded). The
    /// probing timers are not touched.
    fn handle_probe_outcome(&mut self, now: Nanos, outcome: ProbeOutcome) {
        self.advance(now);
        match outcome {
            ProbeOutcome::Answered { rtt } => self.record_success(rtt),
            ProbeOutcome::Missed => self.record_miss(),
        }
    }

    /// Adds `stall` to the running total; a probe that times out compares the
    /// stall reported since it started with its timeout. Due timers are left
    /// for `handle_timeout`, so that a host reporting a stall before handling
    /// its backlog (as the contract asks) has it counted.
    fn handle_local_stall(&mut self, now: Nanos, stall: Nanos) {
        self.advance(now);
        self.stall_total = self.stall_total + stall;
    }

    /// The score extends the timeout of probes started from now on (Orleans
    /// reads it just before each probe, when `ExtendProbeTimeoutDuringDegradation`).
    fn handle_local_health(&mut self, now: Nanos, score: u32) {
        self.advance(now);
        self.local_health = score;
    }

    /// Acts on whatever is due at `now`, in order: first the deadline of the
    /// probe in flight (a miss, or Unknown after a local stall), then the start
    /// of the next probe, which may be due in the same call (a timed-out probe
    /// is followed at once). A started probe's deadline lies after `now`, so a
    /// call never leaves work due at `now` behind: no loop is needed, and the
    /// next `poll_timeout` is later than `now` (or none).
    fn handle_timeout(&mut self, now: Nanos) {
        let now = self.advance(now);
        if let Some(probe) = self.in_flight {
            if now >= probe.deadline {
                let stalled = self.stall_total - probe.stall_at_start;
                let unknown = stalled.as_nanos_f64()
                    >= STALL_SHARE_FOR_UNKNOWN * probe.timeout.as_nanos_f64();
                if !unknown {
                    self.record_miss();
                }
                self.finish(probe, now);
            }
        }
        if self.in_flight.is_none() && self.next_probe_at.is_some_and(|at| now >= at) {
            self.start_probe(now);
        }
    }

    /// The deadline of the probe in flight, else the start of the next probe;
    /// none before probing starts (and never when replaying a trace). An
    /// overdue instant is reported as the latest time handed in.
    fn poll_timeout(&self) -> Option<Nanos> {
        let due = match self.in_flight {
            Some(probe) => Some(probe.deadline),
            None => self.next_probe_at,
        };
        due.map(|at| at.max(self.now))
    }

    fn poll_transmit(&mut self) -> Option<Transmit> {
        self.transmit.take()
    }

    #[inline]
    fn verdict(&self) -> Verdict {
        self.verdict
    }

    /// The current effective timeout in milliseconds (it does not depend on the
    /// time elapsed, only on the samples and the local health).
    fn score(&self, _now: Nanos) -> f64 {
        self.timeout().as_millis_f64()
    }
}

#[cfg(test)]
mod tests {
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
}
