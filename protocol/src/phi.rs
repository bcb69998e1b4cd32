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
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn ms(v: u64) -> Nanos {
        Nanos::from_millis(v)
    }

    #[test]
    fn akka_logistic_phi_pinned_value() {
        // Elapsed 1400 ms against mean 1000 ms and std dev 100 ms.
        let phi = phi_logistic(1400.0, 1000.0, 100.0);
        assert!((phi - 4.7367).abs() < 1e-3, "{phi}");
        // Units cancel: the same in nanoseconds.
        let phi_ns = phi_logistic(1.4e9, 1.0e9, 1.0e8);
        assert!((phi - phi_ns).abs() < 1e-9);
    }

    #[test]
    fn exact_and_exponential_pinned_values() {
        // Two standard deviations: Q(2) = 0.02275, phi = 1.643.
        assert!((phi_normal_exact(1200.0, 1000.0, 100.0) - 1.6430).abs() < 1e-3);
        // Cassandra: dt = mean * ln 10 gives phi = 1.
        assert!((phi_exponential(1000.0 * std::f64::consts::LN_10, 1000.0) - 1.0).abs() < 1e-12);
    }

    #[test]
    fn first_heartbeat_seeds_750_and_1250() {
        let mut d = PhiAccrual::new(PhiAccrualConfig::default(), Nanos::ZERO).unwrap();
        assert_eq!(d.score(ms(10_000)), 0.0, "phi is 0 before any heartbeat");
        d.handle_heartbeat(ms(0));
        assert_eq!(d.sample_count(), 2);
        assert_eq!(d.history.mean(), 1e9);
        assert_eq!(d.history.std_dev(), 2.5e8);
    }

    #[test]
    fn failure_instant_matches_phi_to_the_nanosecond() {
        let mut d = PhiAccrual::new(PhiAccrualConfig::default(), Nanos::ZERO).unwrap();
        for t in 0..20 {
            d.handle_heartbeat(ms(1000 * t));
        }
        let at = d.poll_timeout().unwrap();
        let last = ms(19_000);
        assert!(d.score(at) >= 8.0);
        assert!(d.score(at - Nanos(1)) < 8.0);
        // With 1 s heartbeats, Akka's defaults fail the peer 4.52 s after the
        // last one: mean 1 s + pause 3 s + 5.226 sigma (the 100 ms floor).
        let after = (at - last).as_secs_f64();
        assert!((after - 4.5226).abs() < 0.001, "{after}");
        d.handle_timeout(at);
        assert_eq!(d.verdict(), Verdict::Failed);
    }

    #[test]
    fn interval_after_unavailability_is_not_recorded() {
        let mut d = PhiAccrual::new(PhiAccrualConfig::default(), Nanos::ZERO).unwrap();
        d.handle_heartbeat(ms(0));
        d.handle_heartbeat(ms(1000));
        assert_eq!(d.sample_count(), 3);
        // 60 s of silence: phi is far above 8 when the next heartbeat arrives.
        d.handle_heartbeat(ms(61_000));
        assert_eq!(
            d.sample_count(),
            3,
            "the 60 s gap must not enter the history"
        );
        assert_eq!(d.verdict(), Verdict::Alive);
        d.handle_heartbeat(ms(62_000));
        assert_eq!(d.sample_count(), 4);
    }

    /// Threshold `log10 2`: phi of the logistic normal at `y = 0`, a silence
    /// exactly as long as the mean (`-log10(1 - 1/(1 + e^0))`). With no pause
    /// allowance the peer is Failed exactly when the silence reaches the mean
    /// of the history, whatever the standard deviation, so every crossing
    /// instant below is `last heartbeat + mean`, computed by hand.
    fn phi_at_mean_config(history: PhiHistory) -> PhiAccrualConfig {
        PhiAccrualConfig {
            threshold: phi_logistic_y(0.0),
            acceptable_heartbeat_pause: Nanos::ZERO,
            min_std_deviation: ms(1),
            history,
            ..Default::default()
        }
    }

    /// Heartbeats at 0, 700, 4000 (a 3.3 s gap), 5000 and 5800 ms, under
    /// each rule, against a hand computation of the window, its mean and
    /// variance (population, ms^2), phi, and the failure instants.
    #[test]
    fn every_interval_matches_a_hand_computed_sequence() {
        // Precondition of the hand computation: the threshold's standardized
        // delay is 0 (to the float next to it), so phi >= threshold exactly
        // when dt >= mean' (for any dt an integer number of ns).
        let y = PhiDistribution::Normal.y_at_phi(phi_logistic_y(0.0));
        assert!(y <= 0.0 && y > -1e-12, "{y}");
        // Mean and variance in ms, as the window must hold them.
        let check = |d: &PhiAccrual, n: usize, mean_ms: f64, var_ms2: f64| {
            assert_eq!(d.sample_count(), n);
            assert_eq!(d.history.mean(), mean_ms * 1e6);
            assert_eq!(d.history.variance(), var_ms2 * 1e12);
        };
        let phi_at = |elapsed_ms: f64, mean_ms: f64, var_ms2: f64| {
            phi_logistic(elapsed_ms * 1e6, mean_ms * 1e6, (var_ms2 * 1e12).sqrt())
        };

        let mut akka = PhiAccrual::new(phi_at_mean_config(PhiHistory::Akka), Nanos::ZERO).unwrap();
        let mut paper =
            PhiAccrual::new(phi_at_mean_config(PhiHistory::EveryInterval), Nanos::ZERO).unwrap();
        for d in [&mut akka, &mut paper] {
            // Seeds 750 and 1250; then 700 (phi below the threshold: both rules
            // take it). Window [750, 1250, 700]: mean 900, squared deviations
            // 150^2 + 350^2 + 200^2 = 185000.
            d.handle_heartbeat(ms(0));
            assert_eq!(d.poll_timeout(), Some(ms(1000)));
            d.handle_heartbeat(ms(700));
            check(d, 3, 900.0, 185_000.0 / 3.0);
            assert_eq!(d.poll_timeout(), Some(ms(700 + 900)));
            d.handle_timeout(ms(1600) - Nanos(1));
            assert_eq!(d.verdict(), Verdict::Alive);
            d.handle_timeout(ms(1600));
            assert_eq!(d.verdict(), Verdict::Failed);
            // After 3.3 s of silence, phi with the window of three.
            assert_eq!(d.score(ms(4000)), phi_at(3300.0, 900.0, 185_000.0 / 3.0));
            d.handle_heartbeat(ms(4000));
            assert_eq!(d.verdict(), Verdict::Alive);
        }

        // The 3300 ms gap ended after phi had crossed the threshold (at 1600).
        // Akka: not taken; the window stays [750, 1250, 700], Failed at 4900.
        check(&akka, 3, 900.0, 185_000.0 / 3.0);
        assert_eq!(akka.poll_timeout(), Some(ms(4900)));
        // Paper: taken; [750, 1250, 700, 3300]: mean 1500, squared deviations
        // 750^2 + 250^2 + 800^2 + 1800^2 = 4505000. Failed at 5500.
        check(&paper, 4, 1500.0, 4_505_000.0 / 4.0);
        assert_eq!(paper.poll_timeout(), Some(ms(5500)));
        assert_eq!(akka.score(ms(4800)), phi_at(800.0, 900.0, 185_000.0 / 3.0));
        assert_eq!(
            paper.score(ms(4800)),
            phi_at(800.0, 1500.0, 4_505_000.0 / 4.0)
        );

        // Akka fails the peer again at 4900, a heartbeat comes at 5000.
        akka.handle_timeout(ms(4900));
        assert_eq!(akka.verdict(), Verdict::Failed);
        paper.handle_timeout(ms(4900));
        assert_eq!(paper.verdict(), Verdict::Alive);
        for d in [&mut akka, &mut paper] {
            d.handle_heartbeat(ms(5000));
        }
        // Akka: 1000 ms ended after the crossing, not taken: Failed at 5900.
        check(&akka, 3, 900.0, 185_000.0 / 3.0);
        assert_eq!(akka.poll_timeout(), Some(ms(5900)));
        // Paper: taken; mean 7000 / 5 = 1400, squared deviations
        // 650^2 + 150^2 + 700^2 + 1900^2 + 400^2 = 4705000. Failed at 6400.
        check(&paper, 5, 1400.0, 4_705_000.0 / 5.0);
        assert_eq!(paper.poll_timeout(), Some(ms(6400)));

        // 800 ms later: before both crossings, both take it.
        for d in [&mut akka, &mut paper] {
            d.handle_timeout(ms(5800));
            assert_eq!(d.verdict(), Verdict::Alive);
            d.handle_heartbeat(ms(5800));
        }
        // Akka: [750, 1250, 700, 800]: mean 875, squared deviations
        // 125^2 + 375^2 + 175^2 + 75^2 = 192500. Failed at 6675.
        check(&akka, 4, 875.0, 192_500.0 / 4.0);
        assert_eq!(akka.poll_timeout(), Some(ms(6675)));
        // Paper: mean 7800 / 6 = 1300, squared deviations
        // 550^2 + 50^2 + 600^2 + 2000^2 + 300^2 + 500^2 = 5005000. Failed at 7100.
        check(&paper, 6, 1300.0, 5_005_000.0 / 6.0);
        assert_eq!(paper.poll_timeout(), Some(ms(7100)));
        assert_eq!(akka.score(ms(6000)), phi_at(200.0, 875.0, 192_500.0 / 4.0));
        assert_eq!(
            paper.score(ms(6000)),
            phi_at(200.0, 1300.0, 5_005_000.0 / 6.0)
        );
    }

    /// Number of Failed verdicts over a stream of heartbeats `gaps_ms` apart,
    /// with the timers handled as a host does.
    fn failed_count(config: PhiAccrualConfig, gaps_ms: impl Iterator<Item = u64>) -> usize {
        let mut d = PhiAccrual::new(config, Nanos::ZERO).unwrap();
        let mut now = Nanos::ZERO;
        let mut failed = 0;
        d.handle_heartbeat(now);
        for gap in gaps_ms {
            now = now + ms(gap);
            while let Some(due) = d.poll_timeout().filter(|&due| due <= now) {
                d.handle_timeout(due);
                failed += usize::from(d.verdict() == Verdict::Failed);
            }
            d.handle_heartbeat(now);
        }
        failed
    }

    /// Intervals cycling through 800, 850, ..., 1200 ms (mean 1000 ms, std
    /// dev 129 ms), threshold 1 (standardized delay 1.30), no pause
    /// allowance. Both rules agree until the first 1200 ms interval, which
    /// phi reaches 1 before (at about 1.18 s): the first suspicion. From then
    /// on the paper's rule keeps the 1200 ms intervals in the window, phi
    /// reaches 1 at about 1000 + 1.30 x 129 = 1168 ms, and exactly the 1200 ms
    /// intervals are mistakes: 100 in 100 cycles. Akka's rule keeps them out,
    /// so the mean and std dev shrink, the crossing falls below 1150 ms, those
    /// intervals are kept out too, and so on: more than three times as many.
    #[test]
    fn rules_differ_after_a_suspicion() {
        let config = |history| PhiAccrualConfig {
            threshold: 1.0,
            acceptable_heartbeat_pause: Nanos::ZERO,
            min_std_deviation: ms(1),
            history,
            ..Default::default()
        };
        let cycles = |n: usize| (0..9u64).map(|i| 800 + 50 * i).cycle().take(9 * n);
        // One cycle: the only mistake is the first suspicion, the same under both.
        assert_eq!(
            failed_count(config(PhiHistory::EveryInterval), cycles(1)),
            1
        );
        assert_eq!(failed_count(config(PhiHistory::Akka), cycles(1)), 1);
        let paper = failed_count(config(PhiHistory::EveryInterval), cycles(100));
        let akka = failed_count(config(PhiHistory::Akka), cycles(100));
        assert_eq!(paper, 100);
        // Measured; the point is that it is several times the paper's figure.
        assert_eq!(akka, 363);
    }

    #[test]
    fn history_key_reads_kebab_case_and_defaults_to_akka() {
        let c: PhiAccrualConfig = toml::from_str("threshold = 8.0").unwrap();
        assert_eq!(c.history, PhiHistory::Akka);
        let c: PhiAccrualConfig = toml::from_str("history = 'every-interval'").unwrap();
        assert_eq!(c.history, PhiHistory::EveryInterval);
        assert!(toml::from_str::<PhiAccrualConfig>("history = 'paper'").is_err());
    }

    #[test]
    fn suspect_threshold_comes_first() {
        let config = PhiAccrualConfig {
            suspect_threshold: Some(3.0),
            ..Default::default()
        };
        let mut d = PhiAccrual::new(config, Nanos::ZERO).unwrap();
        d.handle_heartbeat(ms(0));
        let suspect = d.poll_timeout().unwrap();
        d.handle_timeout(suspect);
        assert_eq!(d.verdict(), Verdict::Suspect);
        let failed = d.poll_timeout().unwrap();
        assert!(failed > suspect);
        d.handle_timeout(failed);
        assert_eq!(d.verdict(), Verdict::Failed);
        assert_eq!(d.poll_timeout(), None);
    }

    #[test]
    fn crossings_exact_for_every_distribution() {
        for distribution in [
            PhiDistribution::Normal,
            PhiDistribution::NormalExact,
            PhiDistribution::Exponential,
        ] {
            let config = PhiAccrualConfig {
                distribution,
                ..Default::default()
            };
            let mut d = PhiAccrual::new(config, Nanos::ZERO).unwrap();
            for t in [0, 900, 2000, 2950, 4100] {
                d.handle_heartbeat(ms(t));
            }
            let at = d.poll_timeout().unwrap();
            assert!(d.score(at) >= 8.0, "{distribution:?}");
            assert!(d.score(at - Nanos(1)) < 8.0, "{distribution:?}");
        }
    }

    #[test]
    fn y_at_phi_is_the_exact_float_boundary() {
        for distribution in [
            PhiDistribution::Normal,
            PhiDistribution::NormalExact,
            PhiDistribution::Exponential,
        ] {
            for phi in [0.1, 0.5, 1.0, 3.0, 8.0, 16.0, 40.0, 250.0] {
                let y = distribution.y_at_phi(phi);
                let below = f64::from_bits(if y > 0.0 {
                    y.to_bits() - 1
                } else {
                    y.to_bits() + 1
                });
                assert!(distribution.phi_of_y(y) >= phi, "{distribution:?} {phi}");
                assert!(distribution.phi_of_y(below) < phi, "{distribution:?} {phi}");
            }
        }
        // The logistic boundary of phi = 8 is Orleans' k.
        assert!((PhiDistribution::Normal.y_at_phi(8.0) - 5.226).abs() < 1e-3);
    }

    proptest! {
        /// phi never decreases as the silence since the last heartbeat grows.
        #[test]
        fn phi_is_non_decreasing_in_elapsed_time(
            intervals in proptest::collection::vec(1u64..5_000, 1..50),
            distribution in prop_oneof![
                Just(PhiDistribution::Normal),
                Just(PhiDistribution::NormalExact),
                Just(PhiDistribution::Exponential),
            ],
            steps in proptest::collection::vec(0u64..200_000_000, 1..100),
        ) {
            let config = PhiAccrualConfig { distribution, ..Default::default() };
            let mut d = PhiAccrual::new(config, Nanos::ZERO).unwrap();
            let mut now = Nanos::ZERO;
            d.handle_heartbeat(now);
            for i in intervals {
                now = now + ms(i);
                d.handle_heartbeat(now);
            }
            let mut previous = d.score(now);
            let mut t = now;
            for step in steps {
                t = t + Nanos(step);
                let phi = d.score(t);
                prop_assert!(phi >= previous, "phi fell from {} to {} at {:?}", previous, phi, t);
                previous = phi;
            }
        }
    }
}
