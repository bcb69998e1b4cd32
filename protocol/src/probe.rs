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
mod tests;
