//! The per-peer request breaker of RustFS (rustfs/rustfs PR #7970, issue
//! #7962), as a state machine.
//!
//! Source (facts, not code): rustfs/rustfs
//! `crates/ecstore/src/cluster/rpc/remote_locker.rs`, `admit_lock_request`,
//! `record_request_timeout`, `record_rpc_success`, `release_lock_request`.
//!
//! - Closed: every request passes. Each lock-RPC timeout (or transport
//!   failure) adds one to a run of consecutive timeouts; a success ends it.
//! - From the `threshold`-th consecutive timeout on, every further one opens
//!   the breaker for a window: the first `first_window` (RustFS: deadline/2),
//!   then each `window_factor` times the previous, capped at `max_window`,
//!   counted from that timeout.
//! - Open: requests are skipped until the window ends.
//! - Half-open (window over): `probes` requests pass as probes, the rest
//!   are skipped while a probe is out. A probe's success closes the breaker
//!   and resets window and run; its timeout opens a doubled window.
//! - A success of a request admitted before the breaker opened does not
//!   close it (RustFS resets only when no window is set, or on a probe).

use super::config::BreakerConfig;
use crate::time::Nanos;

/// Shortest window, as RustFS's `max(deadline / 2, 1 ms)`.
const MIN_WINDOW: Nanos = Nanos::from_millis(1);

/// How a request was let through.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Admission {
    /// The breaker is closed.
    Pass,
    /// The window is over: this request tests the peer.
    Probe,
    /// Open (or a probe is out): do not send.
    Skip,
}

/// The breaker's state, as a getter reports it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BreakerState {
    Closed,
    /// Skipping requests until this instant.
    Open {
        until: Nanos,
    },
    /// Window over; `probes` probes are out.
    HalfOpen {
        probes: u32,
    },
}

#[derive(Clone, Debug)]
pub struct Breaker {
    config: BreakerConfig,
    consecutive_timeouts: u32,
    /// The last window opened; zero while closed.
    window: Nanos,
    /// End of the current window; `None` while closed.
    open_until: Option<Nanos>,
    probes_out: u32,
    /// Requests skipped, for reports.
    skipped: u64,
}

impl Breaker {
    pub fn new(config: BreakerConfig) -> Breaker {
        Breaker {
            config,
            consecutive_timeouts: 0,
            window: Nanos::ZERO,
            open_until: None,
            probes_out: 0,
            skipped: 0,
        }
    }

    /// Decides whether a request at `now` may be sent; a `Probe` takes a
    /// probe slot the host returns through `handle_success`,
    /// `handle_timeout` or `handle_probe_ended` with `probe = true`.
    pub fn admit(&mut self, now: Nanos) -> Admission {
        if !self.config.enabled {
            return Admission::Pass;
        }
        let Some(until) = self.open_until else {
            return Admission::Pass;
        };
        if now < until || self.probes_out >= self.config.probes {
            self.skipped += 1;
            return Admission::Skip;
        }
        self.probes_out += 1;
        Admission::Probe
    }

    /// Whether a request at `now` would be let through (no state change).
    pub fn allow(&self, now: Nanos) -> bool {
        match self.open_until {
            Some(until) if self.config.enabled => {
                now >= until && self.probes_out < self.config.probes
            }
            _ => true,
        }
    }

    /// A lock RPC completed at `now` (`probe`: it was admitted as a probe).
    pub fn handle_success(&mut self, _now: Nanos, probe: bool) {
        if self.open_until.is_none() || probe {
            self.consecutive_timeouts = 0;
            self.window = Nanos::ZERO;
            self.open_until = None;
        }
        if probe {
            self.release_probe();
        }
    }

    /// A lock RPC timed out (or failed in transport) at `now`.
    pub fn handle_timeout(&mut self, now: Nanos, probe: bool) {
        if probe {
            self.release_probe();
        }
        self.consecutive_timeouts += 1;
        if !self.config.enabled || self.consecutive_timeouts < self.config.threshold {
            return;
        }
        let next = if self.window.is_zero() {
            self.config.first_window.max(MIN_WINDOW)
        } else {
            Nanos(self.window.as_nanos() * u64::from(self.config.window_factor))
        };
        self.window = next.min(self.config.max_window);
        self.open_until = Some(now + self.window);
    }

    /// A request ended otherwise (an application status, a cancel).
    pub fn handle_probe_ended(&mut self, probe: bool) {
        if probe {
            self.release_probe();
        }
    }

    fn release_probe(&mut self) {
        debug_assert!(self.probes_out > 0, "a probe ended that was never admitted");
        self.probes_out = self.probes_out.saturating_sub(1);
    }

    /// When the breaker next lets a probe through, if it is open.
    pub fn poll_timeout(&self) -> Option<Nanos> {
        if !self.config.enabled || self.probes_out >= self.config.probes {
            return None;
        }
        self.open_until
    }

    pub fn state(&self, now: Nanos) -> BreakerState {
        match self.open_until {
            Some(until) if self.config.enabled && now < until => BreakerState::Open { until },
            Some(_) if self.config.enabled => BreakerState::HalfOpen {
                probes: self.probes_out,
            },
            _ => BreakerState::Closed,
        }
    }

    pub fn consecutive_timeouts(&self) -> u32 {
        self.consecutive_timeouts
    }

    /// The current (last opened) window; zero while closed.
    pub fn window(&self) -> Nanos {
        self.window
    }

    pub fn skipped(&self) -> u64 {
        self.skipped
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Nanos {
        Nanos::from_millis(n)
    }

    fn on() -> Breaker {
        Breaker::new(BreakerConfig {
            enabled: true,
            ..BreakerConfig::default()
        })
    }

    #[test]
    fn opens_after_threshold_with_half_the_deadline() {
        let mut b = on();
        b.handle_timeout(ms(3_000), false);
        b.handle_timeout(ms(3_010), false);
        assert_eq!(b.admit(ms(3_020)), Admission::Pass);
        b.handle_timeout(ms(3_020), false);
        assert_eq!(b.state(ms(3_020)), BreakerState::Open { until: ms(4_520) });
        assert_eq!(b.poll_timeout(), Some(ms(4_520)));
        assert_eq!(b.admit(ms(4_519)), Admission::Skip);
        assert!(!b.allow(ms(4_519)));
        assert!(b.allow(ms(4_520)));
        assert_eq!(b.admit(ms(4_520)), Admission::Probe);
        // One probe only.
        assert_eq!(b.admit(ms(4_521)), Admission::Skip);
        assert_eq!(b.poll_timeout(), None);
        assert_eq!(b.skipped(), 2);
    }

    #[test]
    fn windows_double_to_the_cap() {
        let mut b = on();
        let mut now = Nanos::ZERO;
        let mut windows = Vec::new();
        for _ in 0..10 {
            b.handle_timeout(now, false);
            windows.push(b.window().as_millis_f64() as u64);
            now = now + Nanos::from_secs(1);
        }
        assert_eq!(
            windows,
            [0, 0, 1_500, 3_000, 6_000, 12_000, 24_000, 30_000, 30_000, 30_000]
        );
    }

    #[test]
    fn probe_timeout_doubles_probe_success_closes() {
        let mut b = on();
        for _ in 0..3 {
            b.handle_timeout(ms(0), false);
        }
        assert_eq!(b.admit(ms(1_500)), Admission::Probe);
        b.handle_timeout(ms(4_500), true);
        assert_eq!(b.state(ms(4_500)), BreakerState::Open { until: ms(7_500) });
        assert_eq!(b.admit(ms(7_500)), Admission::Probe);
        b.handle_success(ms(7_600), true);
        assert_eq!(b.state(ms(7_600)), BreakerState::Closed);
        assert_eq!(b.window(), Nanos::ZERO);
        assert_eq!(b.consecutive_timeouts(), 0);
        // Re-opening starts from the first window again.
        for _ in 0..3 {
            b.handle_timeout(ms(8_000), false);
        }
        assert_eq!(b.window(), ms(1_500));
    }

    #[test]
    fn non_probe_success_while_open_keeps_it_open() {
        let mut b = on();
        for _ in 0..3 {
            b.handle_timeout(ms(0), false);
        }
        b.handle_success(ms(100), false);
        assert_eq!(b.state(ms(100)), BreakerState::Open { until: ms(1_500) });
        // Closed: a success ends the run of timeouts.
        let mut c = on();
        c.handle_timeout(ms(0), false);
        c.handle_timeout(ms(0), false);
        c.handle_success(ms(1), false);
        c.handle_timeout(ms(2), false);
        assert_eq!(c.state(ms(2)), BreakerState::Closed);
    }

    #[test]
    fn a_probe_ending_in_a_status_frees_the_slot() {
        let mut b = on();
        for _ in 0..3 {
            b.handle_timeout(ms(0), false);
        }
        assert_eq!(b.admit(ms(2_000)), Admission::Probe);
        b.handle_probe_ended(true);
        assert_eq!(b.admit(ms(2_001)), Admission::Probe);
    }

    #[test]
    fn disabled_always_passes() {
        let mut b = Breaker::new(BreakerConfig::default());
        for _ in 0..10 {
            b.handle_timeout(ms(0), false);
        }
        assert_eq!(b.admit(ms(1)), Admission::Pass);
        assert_eq!(b.state(ms(1)), BreakerState::Closed);
        assert_eq!(b.poll_timeout(), None);
    }
}
