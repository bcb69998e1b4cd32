//! `phi-accrual`: the accrual failure detector of Hayashibara, Défago, Yared and
//! Katayama ("The φ Accrual Failure Detector", SRDS 2004), with the exact
//! semantics of Akka's `akka.remote.PhiAccrualFailureDetector` by default.
//!
//! What Akka does, and this module reproduces:
//! - the inter-arrival history is a FIFO window of `max_sample_size` intervals;
//! - the first heartbeat seeds it with `first_heartbeat_estimate ± estimate/4`
//!   (two samples), since one heartbeat gives no interval;
//! - an interval enters the history only if the peer was *available*
//!   (`phi < threshold`) when that heartbeat arrived: the gap that follows a
//!   suspicion never pollutes the statistics (`history = "akka"`, the default:
//!   Akka's `heartbeat()` appends an interval only `if (isAvailable(timestamp))`,
//!   "since a long pause will skew the stats");
//! - phi uses `mean + acceptable_heartbeat_pause` and
//!   `max(population std dev, min_std_deviation)`, and the logistic
//!   approximation of the normal CDF (Bowling et al. 2009) with its two
//!   numerically stable branches;
//! - phi is 0 before the first heartbeat.
//!
//! `history = "every-interval"` is the paper's rule instead: Hayashibara et
//! al. store the arrival of every heartbeat in a sampling window of fixed size
//! and estimate the mean and variance from it, with no admission rule, so the
//! gap that ended a suspicion enters the statistics too. Only the admission
//! rule changes; Akka's other additions (the seeding, `acceptable_heartbeat_pause`,
//! `min_std_deviation`, the logistic approximation) stay, and a user who wants
//! the paper alone sets the pause to 0, a small `min_std_deviation` and
//! `distribution = "normal-exact"`.
//! The two rules agree until a heartbeat arrives after phi reached the
//! threshold, and differ most at low thresholds: under Akka's rule an interval
//! is admitted only if it is shorter than the silence at which phi reaches the
//! threshold. With the threshold at phi(mean) (`log10 2`, about 0.3, for the
//! logistic normal and no pause), only intervals shorter than the mean are
//! admitted: every one pulls the mean down and mistakes compound, while under
//! the paper's rule the long intervals come in and the mean follows the stream.
//!
//! `distribution = "normal-exact"` replaces the logistic approximation by the
//! exact normal tail, and `"exponential"` is Cassandra's `FailureDetector`
//! (`phi = dt / (mean * ln 10)`, exponential inter-arrivals, no pause allowance).
//!
//! Transcendental functions come from the pure-Rust `libm` crate rather than
//! the platform's C library, whose last bits differ between systems: a verdict
//! flips at the same nanosecond on every machine, as byte-identical replays need.
//!
//! Sans-IO: because phi is non-decreasing in the time since the last heartbeat,
//! the instants at which it reaches the suspect and failure thresholds are
//! computed when a heartbeat arrives (closed form, then checked against the phi
//! function itself to the nanosecond) and reported by `poll_timeout`.

use serde::{Deserialize, Serialize};

use crate::config::{ensure, ensure_bounded, ensure_positive, ConfigError};
use crate::crossing::Crossing;
use crate::detector::FailureDetector;
use crate::time::Nanos;
use crate::verdict::Verdict;
use crate::window::SampleWindow;

/// Which inter-arrival distribution phi assumes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PhiDistribution {
    /// Normal, through Akka's logistic approximation of its CDF.
    #[default]
    Normal,
    /// Normal, with the exact tail `-log10(Q(y))`.
    NormalExact,
    /// Exponential, as Cassandra's failure detector.
    Exponential,
}

/// Which inter-arrival intervals enter the history.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PhiHistory {
    /// Akka's rule: only an interval that ended while the peer was available
    /// (phi below `threshold` at the heartbeat's arrival).
    #[default]
    Akka,
    /// The paper's rule (Hayashibara et al. 2004): every interval.
    EveryInterval,
}

/// Keys of a `kind = "phi-accrual"` detector; defaults are Akka cluster's.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PhiAccrualConfig {
    /// Heartbeat period of the monitored node (`heartbeat-interval`).
    pub interval: Nanos,
    /// Failed when phi reaches this.
    pub threshold: f64,
    /// Suspect when phi reaches this (none by default).
    pub suspect_threshold: Option<f64>,
    /// Size of the inter-arrival window.
    pub max_sample_size: usize,
    /// Floor of the standard deviation.
    pub min_std_deviation: Nanos,
    /// Added to the mean: pauses this long are tolerated.
    pub acceptable_heartbeat_pause: Nanos,
    /// Seeds the history at the first heartbeat.
    pub first_heartbeat_estimate: Nanos,
    pub distribution: PhiDistribution,
    /// Which intervals enter the history (Akka's rule by default).
    pub history: PhiHistory,
}

impl Default for PhiAccrualConfig {
    fn default() -> Self {
        PhiAccrualConfig {
            interval: Nanos::from_secs(1),
            threshold: 8.0,
            suspect_threshold: None,
            max_sample_size: 1000,
            min_std_deviation: Nanos::from_millis(100),
            acceptable_heartbeat_pause: Nanos::from_secs(3),
            first_heartbeat_estimate: Nanos::from_secs(1),
            distribution: PhiDistribution::Normal,
            history: PhiHistory::Akka,
        }
    }
}

/// Largest window accepted: far beyond any practical use, small enough that a
/// typo cannot ask for gigabytes.
pub const MAX_SAMPLE_SIZE_LIMIT: usize = 1_000_000;

impl PhiAccrualConfig {
    pub fn validate(&self) -> Result<(), ConfigError> {
        ensure_positive(self.interval, "interval")?;
        ensure_bounded(
            self.acceptable_heartbeat_pause,
            "acceptable_heartbeat_pause",
        )?;
        ensure(
            self.threshold.is_finite() && self.threshold > 0.0,
            "threshold",
            "must be a positive number",
        )?;
        if let Some(s) = self.suspect_threshold {
            ensure(
                s.is_finite() && s > 0.0 && s < self.threshold,
                "suspect_threshold",
                "must be positive and below `threshold`",
            )?;
        }
        ensure(
            (1..=MAX_SAMPLE_SIZE_LIMIT).contains(&self.max_sample_size),
            "max_sample_size",
            "must be between 1 and 1000000",
        )?;
        ensure_positive(self.min_std_deviation, "min_std_deviation")?;
        ensure_positive(self.first_heartbeat_estimate, "first_heartbeat_estimate")?;
        Ok(())
    }
}

/// Akka's phi: the logistic approximation of the normal CDF, in its two
/// branches (the second avoids cancellation when `dt <= mean`).
/// Units of `dt`, `mean` and `std_dev` only need to agree.
pub fn phi_logistic(dt: f64, mean: f64, std_dev: f64) -> f64 {
    phi_logistic_y((dt - mean) / std_dev)
}

/// [`phi_logistic`] of the standardized delay `y = (dt - mean) / std_dev`
/// (`y > 0` exactly when `dt > mean`, the branch Akka tests).
pub fn phi_logistic_y(y: f64) -> f64 {
    let e = libm::exp(-y * (LOGISTIC_A + LOGISTIC_B * y * y));
    if y > 0.0 {
        -libm::log10(e / (1.0 + e))
    } else {
        -libm::log10(1.0 - 1.0 / (1.0 + e))
    }
}

/// Coefficients of the logistic approximation `1 / (1 + exp(-y (a + b y^2)))`.
const LOGISTIC_A: f64 = 1.5976;
const LOGISTIC_B: f64 = 0.070566;

/// Phi from the exact normal tail: `-log10(1 - Φ(y))`.
pub fn phi_normal_exact(dt: f64, mean: f64, std_dev: f64) -> f64 {
    phi_normal_exact_y((dt - mean) / std_dev)
}

/// [`phi_normal_exact`] of the standardized delay.
pub fn phi_normal_exact_y(y: f64) -> f64 {
    -libm::log10(0.5 * libm::erfc(y / std::f64::consts::SQRT_2))
}

/// Cassandra's phi for exponential inter-arrival times, `dt / (mean ln 10)`.
pub fn phi_exponential(dt: f64, mean: f64) -> f64 {
    phi_exponential_y(dt / mean)
}

/// [`phi_exponential`] of `y = dt / mean`.
pub fn phi_exponential_y(y: f64) -> f64 {
    y / std::f64::consts::LN_10
}

impl PhiDistribution {
    /// phi as a function of the standardized delay `y`.
    pub fn phi_of_y(self, y: f64) -> f64 {
        match self {
            PhiDistribution::Normal => phi_logistic_y(y),
            PhiDistribution::NormalExact => phi_normal_exact_y(y),
            PhiDistribution::Exponential => phi_exponential_y(y),
        }
    }

    /// The smallest `f64` y at which `phi_of_y(y) >= threshold`, to the last
    /// bit (bisection until the bracket holds two adjacent floats). phi is
    /// non-decreasing in y, so "phi >= threshold" is exactly "y >= this": the
    /// detector compares standardized delays, with no exp or log per heartbeat,
    /// and still flips its verdict where evaluating phi would.
    pub fn y_at_phi(self, threshold: f64) -> f64 {
        // phi(lo) < threshold <= phi(hi) for any positive finite threshold:
        // the logistic and exact tails are 0 at y = -64 and infinite at 64.
        let (mut lo, mut hi) = match self {
            PhiDistribution::Exponential => (0.0, threshold * std::f64::consts::LN_10 * 2.0 + 1.0),
            PhiDistribution::Normal | PhiDistribution::NormalExact => (-64.0, 64.0),
        };
        loop {
            let mid = lo + (hi - lo) / 2.0;
            if mid <= lo || mid >= hi {
                return hi;
            }
            if self.phi_of_y(mid) >= threshold {
                hi = mid;
            } else {
                lo = mid;
            }
        }
    }
}

/// The phi accrual detector state machine.
#[derive(Clone, Debug)]
pub struct PhiAccrual {
    config: PhiAccrualConfig,
    history: SampleWindow,
    /// Arrival of the last heartbeat, none before the first.
    last: Option<Nanos>,
    /// `last + the smallest elapsed time at which phi >= suspect_threshold`.
    suspect_at: Option<Nanos>,
    /// `last + the smallest elapsed time at which phi >= threshold`.
    failed_at: Option<Nanos>,
    /// Parameters of phi as of the last heartbeat (history changes only then).
    mean: f64,
    std_dev: f64,
    /// Standardized delays at which phi reaches the thresholds.
    failed_y: f64,
    suspect_y: Option<f64>,
    verdict: Verdict,
}

impl PhiAccrual {
    /// Starts monitoring at `now` (phi accrual has nothing to do before the
    /// first heartbeat, so `now` is unused).
    pub fn new(config: PhiAccrualConfig, now: Nanos) -> Result<PhiAccrual, ConfigError> {
        config.validate()?;
        Ok(PhiAccrual::build(config, now))
    }

    /// [`PhiAccrual::new`] of a configuration already validated.
    pub(crate) fn build(config: PhiAccrualConfig, now: Nanos) -> PhiAccrual {
        let _ = now;
        debug_assert!(config.validate().is_ok());
        let history = SampleWindow::new(config.max_sample_size);
        let failed_y = config.distribution.y_at_phi(config.threshold);
        let suspect_y = config
            .suspect_threshold
            .map(|t| config.distribution.y_at_phi(t));
        PhiAccrual {
            failed_y,
            suspect_y,
            config,
            history,
            last: None,
            suspect_at: None,
            failed_at: None,
            mean: 0.0,
            std_dev: 0.0,
            verdict: Verdict::Alive,
        }
    }

    pub fn config(&self) -> &PhiAccrualConfig {
        &self.config
    }

    /// Number of intervals in the history.
    pub fn sample_count(&self) -> usize {
        self.history.len()
    }

    /// phi after `elapsed` nanoseconds of silence, with the current history.
    pub fn phi_after(&self, elapsed: Nanos) -> f64 {
        if self.last.is_none() {
            return 0.0;
        }
        let y = self.standardized(elapsed.as_nanos_f64());
        self.config.distribution.phi_of_y(y)
    }

    /// The standardized delay of `dt` ns of silence: `(dt - mean') / sigma`
    /// for the normal variants, `dt / mean` for the exponential one (the mean
    /// floored at 1 ns, so simultaneous heartbeats cannot divide by zero).
    fn standardized(&self, dt: f64) -> f64 {
        match self.config.distribution {
            PhiDistribution::Exponential => dt / self.mean.max(1.0),
            PhiDistribution::Normal | PhiDistribution::NormalExact => {
                (dt - self.mean) / self.std_dev
            }
        }
    }

    /// Refreshes the phi parameters from the history. The normal variants use
    /// `mean + acceptable_heartbeat_pause` and the std-dev floor; the
    /// exponential one the plain mean, as Cassandra does.
    fn refresh(&mut self) {
        let mean = self.history.mean();
        match self.config.distribution {
            PhiDistribution::Exponential => {
                self.mean = mean;
                self.std_dev = 0.0;
            }
            PhiDistribution::Normal | PhiDistribution::NormalExact => {
                self.mean = mean + self.config.acceptable_heartbeat_pause.as_nanos_f64();
                self.std_dev = self
                    .history
                    .std_dev_at_least(self.config.min_std_deviation.as_nanos_f64());
            }
        }
        let last = self.last.unwrap_or(Nanos::ZERO);
        self.failed_at = self.crossing(self.failed_y).map(|dt| last + dt);
        self.suspect_at = self
            .suspect_y
            .and_then(|y| self.crossing(y))
            .map(|dt| last + dt);
    }

    /// The smallest elapsed time (integer ns) whose standardized delay reaches
    /// `y_hi`, that is at which phi reaches the threshold `y_hi` stands for:
    /// the closed form, corrected to the nanosecond with the same float
    /// expression `phi_after` evaluates.
    fn crossing(&self, y_hi: f64) -> Option<Nanos> {
        let (shift, den) = match self.config.distribution {
            PhiDistribution::Exponential => (0.0, self.mean.max(1.0)),
            PhiDistribution::Normal | PhiDistribution::NormalExact => (self.mean, self.std_dev),
        };
        Crossing::new(shift, den, y_hi).first().map(Nanos)
    }

    fn classify(&self, now: Nanos) -> Verdict {
        if self.failed_at.is_some_and(|t| now >= t) {
            Verdict::Failed
        } else if self.suspect_at.is_some_and(|t| now >= t) {
            Verdict::Suspect
        } else {
            Verdict::Alive
        }
    }
}

impl FailureDetector for PhiAccrual {
    fn handle_heartbeat(&mut self, now: Nanos) {
        match self.last {
            None => {
                // Akka's `firstHeartbeat`: two samples around the estimate.
                let estimate = self.config.first_heartbeat_estimate.as_nanos();
                let spread = estimate / 4;
                self.history.push(estimate - spread);
                self.history.push(estimate + spread);
            }
            Some(last) => {
                let admitted = match self.config.history {
                    // Only intervals that ended while the peer was available.
                    PhiHistory::Akka => now < self.failed_at.unwrap_or(Nanos::MAX),
                    PhiHistory::EveryInterval => true,
                };
                if admitted {
                    self.history.push((now - last).as_nanos());
                }
            }
        }
        self.last = Some(self.last.map_or(now, |last| last.max(now)));
        self.refresh();
        self.verdict = self.classify(now);
    }

    fn handle_timeout(&mut self, now: Nanos) {
        self.verdict = self.verdict.max(self.classify(now));
    }

    fn poll_timeout(&self) -> Option<Nanos> {
        match self.verdict {
            Verdict::Alive => self.suspect_at.or(self.failed_at),
            Verdict::Suspect => self.failed_at,
            Verdict::Failed => None,
        }
    }

    #[inline]
    fn verdict(&self) -> Verdict {
        self.verdict
    }

    /// phi at `now`.
    fn score(&self, now: Nanos) -> f64 {
        match self.last {
            Some(last) => self.phi_after(now - last),
            None => 0.0,
        }
    }
}

#[cfg(test)]
mod tests;
