//! The retry schedule of an unlock that failed (SPEC §10).
//!
//! Sources (facts, not code): rustfs/rustfs `crates/lock/src/distributed_lock.rs`
//! (`UNLOCK_RETRY_ATTEMPTS` = 3 attempts, `UNLOCK_RETRY_BACKOFF` = 100 ms
//! times the attempt number: two quick retries, 100 and 200 ms), SPEC §10
//! and RustFS's runbook (`docs/operations/lock-rpc-storm-protection.md`;
//! its code is not public in a tagged release) for the slow tail (1, 2, 4,
//! 8, 16 s) and the server lease (1 min) that reclaims an unreleased lock.
//!
//! The first attempt goes out at start; after the k-th failure (k from 1)
//! the next attempt waits `k x quick_retry_step` for the first
//! `quick_retries` failures, then `backoff_first x backoff_factor^j`
//! (j from 0) for `backoff_steps` more; after that the retrier gives up and
//! the lease reclaims the lock `server_lease` after the grant was last
//! refreshed (the host knows when that was).

use super::config::UnlockConfig;
use crate::time::Nanos;

/// An output of the retrier.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnlockEvent {
    /// Send unlock attempt number `attempt` (from 1) now.
    Attempt { attempt: u32 },
    /// An attempt succeeded.
    Released,
    /// Every attempt failed: the server's lease will reclaim the lock.
    GaveUp,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    /// Attempt `attempts` is out.
    Waiting,
    /// Next attempt at this instant.
    Backoff(Nanos),
    Done,
}

#[derive(Clone, Debug)]
pub struct UnlockRetry {
    config: UnlockConfig,
    attempts: u32,
    phase: Phase,
    pending: Option<UnlockEvent>,
}

impl UnlockRetry {
    /// Starts an unlock: the first attempt is due at once.
    pub fn start(config: UnlockConfig) -> UnlockRetry {
        UnlockRetry {
            config,
            attempts: 1,
            phase: Phase::Waiting,
            pending: Some(UnlockEvent::Attempt { attempt: 1 }),
        }
    }

    /// Attempts allowed in all: one, the quick retries, the slow ones.
    pub fn max_attempts(&self) -> u32 {
        1 + self.config.quick_retries + self.config.backoff_steps
    }

    /// The out attempt succeeded.
    pub fn handle_success(&mut self, _now: Nanos) {
        if self.phase == Phase::Waiting {
            self.phase = Phase::Done;
            self.pending = Some(UnlockEvent::Released);
        }
    }

    /// The out attempt failed (error or deadline) at `now`.
    pub fn handle_failure(&mut self, now: Nanos) {
        if self.phase != Phase::Waiting {
            return;
        }
        let failures = self.attempts;
        if failures >= self.max_attempts() {
            self.phase = Phase::Done;
            self.pending = Some(UnlockEvent::GaveUp);
            return;
        }
        let wait = if failures <= self.config.quick_retries {
            Nanos(self.config.quick_retry_step.as_nanos() * u64::from(failures))
        } else {
            let j = failures - self.config.quick_retries - 1;
            let factor = u64::from(self.config.backoff_factor).pow(j);
            Nanos(self.config.backoff_first.as_nanos() * factor)
        };
        self.phase = Phase::Backoff(now + wait);
        self.handle_timeout(now);
    }

    pub fn handle_timeout(&mut self, now: Nanos) {
        if let Phase::Backoff(at) = self.phase {
            if at <= now {
                self.attempts += 1;
                self.phase = Phase::Waiting;
                self.pending = Some(UnlockEvent::Attempt {
                    attempt: self.attempts,
                });
            }
        }
    }

    pub fn poll_timeout(&self) -> Option<Nanos> {
        match self.phase {
            Phase::Backoff(at) => Some(at),
            Phase::Waiting | Phase::Done => None,
        }
    }

    pub fn poll_event(&mut self) -> Option<UnlockEvent> {
        self.pending.take()
    }

    /// Attempts sent so far.
    pub fn attempts(&self) -> u32 {
        self.attempts
    }

    pub fn is_done(&self) -> bool {
        self.phase == Phase::Done
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn three_quick_attempts_then_1_2_4_8_16_s_then_give_up() {
        let mut u = UnlockRetry::start(UnlockConfig::default());
        assert_eq!(u.poll_event(), Some(UnlockEvent::Attempt { attempt: 1 }));
        let mut now = Nanos::ZERO;
        let mut waits = Vec::new();
        loop {
            u.handle_failure(now);
            match u.poll_timeout() {
                Some(at) => {
                    waits.push((at - now).as_millis_f64() as u64);
                    assert_eq!(u.poll_event(), None);
                    now = at;
                    u.handle_timeout(now);
                    assert!(matches!(u.poll_event(), Some(UnlockEvent::Attempt { .. })));
                }
                None => break,
            }
        }
        // RustFS: three attempts 100 ms and 200 ms apart, then the tail.
        assert_eq!(waits, [100, 200, 1_000, 2_000, 4_000, 8_000, 16_000]);
        assert_eq!(u.attempts(), 8);
        assert_eq!(u.poll_event(), Some(UnlockEvent::GaveUp));
        assert!(u.is_done());
        // 31.3 s of retries: well inside the 1 min lease.
        assert_eq!(now, Nanos::from_millis(31_300));
    }

    #[test]
    fn success_ends_it() {
        let mut u = UnlockRetry::start(UnlockConfig::default());
        u.poll_event();
        u.handle_failure(Nanos::ZERO);
        u.handle_timeout(Nanos::from_millis(100));
        assert_eq!(u.poll_event(), Some(UnlockEvent::Attempt { attempt: 2 }));
        u.handle_success(Nanos::from_millis(150));
        assert_eq!(u.poll_event(), Some(UnlockEvent::Released));
        u.handle_failure(Nanos::from_millis(200));
        assert_eq!((u.poll_event(), u.poll_timeout()), (None, None));
    }

    #[test]
    fn zero_quick_step_retries_at_once() {
        let config = UnlockConfig {
            quick_retry_step: Nanos::ZERO,
            ..UnlockConfig::default()
        };
        let mut u = UnlockRetry::start(config);
        u.poll_event();
        u.handle_failure(Nanos::from_secs(1));
        assert_eq!(u.poll_event(), Some(UnlockEvent::Attempt { attempt: 2 }));
        assert_eq!(u.poll_timeout(), None);
    }
}
