//! `fixed-timeout`: the classic heartbeat deadline.
//!
//! The monitored node sends a heartbeat every `interval`; the monitor declares it
//! Failed once `now - last_heartbeat > timeout` (strictly), and Suspect once
//! `now - last_heartbeat > suspect_after`. Before the first heartbeat the deadline
//! counts from the start of monitoring. With `check_interval > 0` the verdict is
//! only re-evaluated by a periodic checker, on the grid `start + k * check_interval`,
//! as in implementations that scan their peers from a reaper thread (Hadoop's
//! `HeartbeatManager`, ZooKeeper's session expiry buckets): every verdict change,
//! recovery included, happens on a check.

use serde::{Deserialize, Serialize};

use crate::config::{ensure, ensure_bounded, ensure_positive, ConfigError};
use crate::detector::FailureDetector;
use crate::time::Nanos;
use crate::verdict::Verdict;

/// Keys of a `kind = "fixed-timeout"` detector.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct FixedTimeoutConfig {
    /// Heartbeat period of the monitored node.
    pub interval: Nanos,
    /// Silence after which the peer is Failed.
    pub timeout: Nanos,
    /// Silence after which the peer is Suspect (none by default).
    pub suspect_after: Option<Nanos>,
    /// Period of the checker that re-evaluates the verdict; zero = continuous.
    pub check_interval: Nanos,
}

impl Default for FixedTimeoutConfig {
    fn default() -> Self {
        FixedTimeoutConfig {
            interval: Nanos::from_secs(1),
            timeout: Nanos::from_secs(3),
            suspect_after: None,
            check_interval: Nanos::ZERO,
        }
    }
}

impl FixedTimeoutConfig {
    pub fn validate(&self) -> Result<(), ConfigError> {
        ensure_positive(self.interval, "interval")?;
        ensure_positive(self.timeout, "timeout")?;
        ensure_bounded(self.check_interval, "check_interval")?;
        if let Some(suspect) = self.suspect_after {
            ensure(
                suspect < self.timeout,
                "suspect_after",
                "must be shorter than `timeout`",
            )?;
        }
        Ok(())
    }
}

/// The fixed-timeout detector state machine.
#[derive(Clone, Debug)]
pub struct FixedTimeout {
    config: FixedTimeoutConfig,
    /// Start of monitoring: the origin of the checker grid.
    start: Nanos,
    /// Last heartbeat, or the start of monitoring before the first one.
    last: Nanos,
    /// The latest time handed in by the host.
    now: Nanos,
    verdict: Verdict,
}

impl FixedTimeout {
    /// Starts monitoring at `now`.
    pub fn new(config: FixedTimeoutConfig, now: Nanos) -> Result<FixedTimeout, ConfigError> {
        config.validate()?;
        Ok(FixedTimeout::build(config, now))
    }

    /// [`FixedTimeout::new`] of a configuration already validated.
    pub(crate) fn build(config: FixedTimeoutConfig, now: Nanos) -> FixedTimeout {
        debug_assert!(config.validate().is_ok());
        FixedTimeout {
            config,
            start: now,
            last: now,
            now,
            verdict: Verdict::Alive,
        }
    }

    pub fn config(&self) -> &FixedTimeoutConfig {
        &self.config
    }

    /// The verdict the deadline gives at `at` (ignoring the checker grid).
    fn classify(&self, at: Nanos) -> Verdict {
        let silence = at - self.last;
        if silence > self.config.timeout {
            Verdict::Failed
        } else if self.config.suspect_after.is_some_and(|s| silence > s) {
            Verdict::Suspect
        } else {
            Verdict::Alive
        }
    }

    /// First instant at which the deadline gives a verdict worse than `than`.
    fn next_crossing(&self, than: Verdict) -> Option<Nanos> {
        // "silence > limit" first holds one nanosecond after last + limit.
        let after = |limit: Nanos| self.last + limit + Nanos(1);
        match than {
            Verdict::Alive => Some(after(
                self.config.suspect_after.unwrap_or(self.config.timeout),
            )),
            Verdict::Suspect => Some(after(self.config.timeout)),
            Verdict::Failed => None,
        }
    }

    /// The first checker tick at or after `at`.
    fn tick_at_or_after(&self, at: Nanos) -> Nanos {
        let period = self.config.check_interval.as_nanos();
        let since = (at - self.start).as_nanos();
        let ticks = since.div_ceil(period).max(1);
        self.start + Nanos(ticks.saturating_mul(period))
    }

    fn continuous(&self) -> bool {
        self.config.check_interval.is_zero()
    }

    /// Re-evaluates the verdict if a check (or, when continuous, any instant)
    /// falls in `(self.now, now]`.
    fn evaluate(&mut self, now: Nanos) {
        if self.continuous() {
            self.now = self.now.max(now);
            self.verdict = self.classify(self.now);
            return;
        }
        let due = self.due_check();
        self.now = self.now.max(now);
        if due.is_some_and(|due| due <= self.now) {
            // Several checks may have passed since the last call; the latest one
            // decides (the deadline only worsens between heartbeats).
            let period = self.config.check_interval.as_nanos();
            let since = (self.now - self.start).as_nanos();
            let latest = self.start + Nanos(since / period * period);
            self.verdict = self.classify(latest);
        }
    }

    /// The first check after `self.now` at which the verdict would change.
    fn due_check(&self) -> Option<Nanos> {
        let period = self.config.check_interval.as_nanos();
        let next_index = (self.now - self.start).as_nanos() / period + 1;
        let next = self.start + Nanos(next_index.saturating_mul(period));
        if self.classify(next) != self.verdict {
            return Some(next);
        }
        let crossing = self.next_crossing(self.verdict)?;
        Some(self.tick_at_or_after(crossing.max(next)))
    }
}

impl FailureDetector for FixedTimeout {
    fn handle_heartbeat(&mut self, now: Nanos) {
        if self.continuous() {
            // `evaluate`'s verdict would be replaced at once: classified
            // once, after the heartbeat.
            self.now = self.now.max(now);
            self.last = self.last.max(now);
            self.verdict = self.classify(self.now);
            return;
        }
        self.evaluate(now);
        self.last = self.last.max(now);
    }

    fn handle_timeout(&mut self, now: Nanos) {
        self.evaluate(now);
    }

    fn poll_timeout(&self) -> Option<Nanos> {
        if self.continuous() {
            self.next_crossing(self.verdict)
        } else {
            self.due_check()
        }
    }

    #[inline]
    fn verdict(&self) -> Verdict {
        self.verdict
    }

    /// The silence so far in milliseconds: the time since the last heartbeat
    /// (since the start of monitoring before the first one). Between
    /// heartbeats it rises as a sawtooth, and the verdict is Failed once it
    /// exceeds `timeout` (Suspect past `suspect_after`): set against those
    /// lines it shows how near each gap came to a verdict, where the timeout
    /// itself would be a flat line that says nothing about the peer. With a
    /// periodic checker the verdict still changes only on its ticks.
    fn score(&self, now: Nanos) -> f64 {
        (now - self.last).as_millis_f64()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(v: u64) -> Nanos {
        Nanos::from_millis(v)
    }

    fn detector(config: FixedTimeoutConfig) -> FixedTimeout {
        FixedTimeout::new(config, Nanos::ZERO).unwrap()
    }

    #[test]
    fn fails_strictly_after_the_timeout() {
        let mut d = detector(FixedTimeoutConfig::default());
        d.handle_heartbeat(ms(1000));
        assert_eq!(d.poll_timeout(), Some(ms(4000) + Nanos(1)));
        d.handle_timeout(ms(4000));
        assert_eq!(
            d.verdict(),
            Verdict::Alive,
            "exactly the timeout is not more"
        );
        d.handle_timeout(ms(4000) + Nanos(1));
        assert_eq!(d.verdict(), Verdict::Failed);
        assert_eq!(d.poll_timeout(), None);
        d.handle_heartbeat(ms(5000));
        assert_eq!(d.verdict(), Verdict::Alive);
    }

    #[test]
    fn timeout_counts_from_start_before_the_first_heartbeat() {
        let mut d = FixedTimeout::new(FixedTimeoutConfig::default(), ms(500)).unwrap();
        assert_eq!(d.verdict(), Verdict::Alive);
        assert_eq!(d.poll_timeout(), Some(ms(3500) + Nanos(1)));
        d.handle_timeout(ms(3501));
        assert_eq!(d.verdict(), Verdict::Failed);
    }

    #[test]
    fn suspect_comes_before_failed() {
        let mut d = detector(FixedTimeoutConfig {
            suspect_after: Some(ms(1500)),
            ..Default::default()
        });
        assert_eq!(d.poll_timeout(), Some(ms(1500) + Nanos(1)));
        d.handle_timeout(ms(2000));
        assert_eq!(d.verdict(), Verdict::Suspect);
        assert_eq!(d.poll_timeout(), Some(ms(3000) + Nanos(1)));
    }

    #[test]
    fn periodic_checker_only_changes_the_verdict_on_its_ticks() {
        let mut d = detector(FixedTimeoutConfig {
            check_interval: ms(1000),
            ..Default::default()
        });
        // Silence from 0: past 3 s at 3 s + 1 ns, first check after that is at 4 s.
        assert_eq!(d.poll_timeout(), Some(ms(4000)));
        d.handle_timeout(ms(3500));
        assert_eq!(d.verdict(), Verdict::Alive);
        d.handle_timeout(ms(4000));
        assert_eq!(d.verdict(), Verdict::Failed);
        // A heartbeat at 4.2 s: recovery waits for the check at 5 s.
        d.handle_heartbeat(ms(4200));
        assert_eq!(d.verdict(), Verdict::Failed);
        assert_eq!(d.poll_timeout(), Some(ms(5000)));
        d.handle_timeout(ms(5000));
        assert_eq!(d.verdict(), Verdict::Alive);
        // Next failure: silence > 3 s after 4.2 s is 7.2 s + 1 ns, checked at 8 s.
        assert_eq!(d.poll_timeout(), Some(ms(8000)));
    }

    #[test]
    fn score_is_the_silence_since_the_last_heartbeat() {
        let mut d = detector(FixedTimeoutConfig::default());
        // Before the first heartbeat the silence counts from the start.
        assert_eq!(d.score(Nanos::ZERO), 0.0);
        assert_eq!(d.score(ms(700)), 700.0);
        d.handle_heartbeat(ms(1000));
        // A sawtooth: up by 1 ms per ms, back to 0 at each heartbeat.
        assert_eq!(d.score(ms(1000)), 0.0);
        assert_eq!(d.score(ms(1250)), 250.0);
        assert_eq!(d.score(ms(1999)), 999.0);
        d.handle_heartbeat(ms(2000));
        assert_eq!(d.score(ms(2000)), 0.0);
        assert_eq!(d.score(ms(2000) + Nanos(500)), 0.0005);
        // Past the timeout it keeps growing while the verdict is Failed.
        d.handle_timeout(ms(5500));
        assert_eq!(d.verdict(), Verdict::Failed);
        assert_eq!(d.score(ms(5500)), 3500.0);
        // A time before the last heartbeat (a clock stepped back) is no silence.
        assert_eq!(d.score(ms(1500)), 0.0);
    }

    #[test]
    fn rejects_suspect_after_longer_than_timeout() {
        let err = FixedTimeout::new(
            FixedTimeoutConfig {
                suspect_after: Some(ms(5000)),
                ..Default::default()
            },
            Nanos::ZERO,
        )
        .unwrap_err();
        assert_eq!(err.key, "suspect_after");
    }
}
