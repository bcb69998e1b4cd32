//! RustFS's eviction verdict: may a failed lock RPC evict the shared channel
//! to its peer?
//!
//! Source (facts, not code): rustfs/rustfs
//! `crates/ecstore/src/cluster/rpc/remote_locker.rs`, `eviction_verdict`,
//! `EvictionVerdict`, `EvictionTrigger`, `is_transport_failure` (issues
//! rustfs/rustfs#7363, #4567). The rules, in RustFS's order:
//!
//! 1. a deadline on a peer whose last completed RPC is less than the
//!    recently-served window old: `peer_recently_served`, keep (slow, not gone);
//! 2. any channel failure less than the cooldown after the last eviction:
//!    `cooling_down`, keep;
//! 3. otherwise `evict`. A transport failure (refused, reset, GOAWAY) skips
//!    rule 1, so it evicts even a recently serving peer outside the cooldown.
//!
//! An application status from a healthy server (unauthenticated, not ready)
//! is not a channel failure at all: no verdict, no eviction, no metric.
//! Both windows are half-open (`elapsed < window`), as RustFS's; a clock
//! that stepped back counts as zero elapsed.

use crate::time::Nanos;

/// How an RPC failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Failure {
    /// The caller's deadline passed with the stream still open.
    Deadline,
    /// The transport failed: connection refused or reset, GOAWAY.
    Transport,
    /// The server answered with an application status on a healthy channel.
    Status,
}

/// What set off an eviction (RustFS's `trigger` label).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Trigger {
    Timeout,
    Transport,
}

impl Trigger {
    /// RustFS's metric label.
    pub fn name(self) -> &'static str {
        match self {
            Trigger::Timeout => "timeout",
            Trigger::Transport => "transport",
        }
    }
}

impl Failure {
    /// The eviction trigger of a channel failure; `None` for a status.
    pub fn trigger(self) -> Option<Trigger> {
        match self {
            Failure::Deadline => Some(Trigger::Timeout),
            Failure::Transport => Some(Trigger::Transport),
            Failure::Status => None,
        }
    }
}

/// The decision on a channel failure (RustFS's `verdict` label).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Verdict {
    /// Keep: the peer completed an RPC within the recently-served window.
    PeerRecentlyServed,
    /// Keep: the channel was evicted less than the cooldown ago.
    CoolingDown,
    /// Tear the channel down; re-dial on the next request.
    Evict,
}

impl Verdict {
    /// RustFS's metric label.
    pub fn name(self) -> &'static str {
        match self {
            Verdict::PeerRecentlyServed => "peer_recently_served",
            Verdict::CoolingDown => "cooling_down",
            Verdict::Evict => "evict",
        }
    }
}

/// What the verdict remembers of one peer's channel.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ChannelHealth {
    /// When the peer last completed an RPC (late completions included).
    pub last_success: Option<Nanos>,
    /// When the channel was last evicted.
    pub last_eviction: Option<Nanos>,
}

/// True when `at` is less than `window` before `now`.
fn within(now: Nanos, at: Option<Nanos>, window: Nanos) -> bool {
    at.is_some_and(|at| now.saturating_sub(at) < window)
}

/// The verdict on a failure at `now`; `None` when the failure is an
/// application status, which never touches the channel.
pub fn eviction_verdict(
    failure: Failure,
    now: Nanos,
    health: &ChannelHealth,
    recently_served_window: Nanos,
    eviction_cooldown: Nanos,
) -> Option<Verdict> {
    let trigger = failure.trigger()?;
    if trigger == Trigger::Timeout && within(now, health.last_success, recently_served_window) {
        return Some(Verdict::PeerRecentlyServed);
    }
    if within(now, health.last_eviction, eviction_cooldown) {
        return Some(Verdict::CoolingDown);
    }
    Some(Verdict::Evict)
}

#[cfg(test)]
mod tests {
    use super::*;

    const WINDOW: Nanos = Nanos::from_secs(6); // 2 x 3 s deadline
    const COOLDOWN: Nanos = Nanos::from_secs(5);

    fn s(secs: u64) -> Nanos {
        Nanos::from_secs(secs)
    }

    fn health(success: Option<u64>, eviction: Option<u64>) -> ChannelHealth {
        ChannelHealth {
            last_success: success.map(s),
            last_eviction: eviction.map(s),
        }
    }

    fn verdict(failure: Failure, now: u64, h: ChannelHealth) -> Option<Verdict> {
        eviction_verdict(failure, s(now), &h, WINDOW, COOLDOWN)
    }

    #[test]
    fn deadline_on_recently_serving_peer_keeps() {
        // Served at 100 s; deadline at 105 s: 5 s < 6 s.
        assert_eq!(
            verdict(Failure::Deadline, 105, health(Some(100), None)),
            Some(Verdict::PeerRecentlyServed)
        );
        // Even inside a cooldown, rule 1 names the reason first.
        assert_eq!(
            verdict(Failure::Deadline, 105, health(Some(100), Some(104))),
            Some(Verdict::PeerRecentlyServed)
        );
    }

    #[test]
    fn deadline_on_quiet_peer_evicts_at_the_window_edge() {
        // Exactly 6 s after the last success: the window is half-open.
        assert_eq!(
            verdict(Failure::Deadline, 106, health(Some(100), None)),
            Some(Verdict::Evict)
        );
        // One nanosecond earlier it still served recently.
        let h = health(Some(100), None);
        let just_before = Nanos(s(106).as_nanos() - 1);
        assert_eq!(
            eviction_verdict(Failure::Deadline, just_before, &h, WINDOW, COOLDOWN),
            Some(Verdict::PeerRecentlyServed)
        );
        // Never served: evict.
        assert_eq!(
            verdict(Failure::Deadline, 3, health(None, None)),
            Some(Verdict::Evict)
        );
    }

    #[test]
    fn any_failure_within_cooldown_keeps() {
        // Evicted at 200 s; quiet peer; deadline at 204 s: 4 s < 5 s.
        assert_eq!(
            verdict(Failure::Deadline, 204, health(Some(100), Some(200))),
            Some(Verdict::CoolingDown)
        );
        assert_eq!(
            verdict(Failure::Transport, 204, health(None, Some(200))),
            Some(Verdict::CoolingDown)
        );
        // At 205 s the cooldown is over.
        assert_eq!(
            verdict(Failure::Transport, 205, health(None, Some(200))),
            Some(Verdict::Evict)
        );
    }

    #[test]
    fn transport_failure_evicts_a_recently_serving_peer() {
        assert_eq!(
            verdict(Failure::Transport, 101, health(Some(100), None)),
            Some(Verdict::Evict)
        );
        assert_eq!(
            verdict(Failure::Transport, 101, health(Some(100), Some(90))),
            Some(Verdict::Evict)
        );
    }

    #[test]
    fn application_status_never_evicts() {
        for h in [
            health(None, None),
            health(Some(1), None),
            health(None, Some(1)),
            health(Some(1_000), Some(1_000)),
        ] {
            assert_eq!(verdict(Failure::Status, 10_000, h), None);
        }
    }

    #[test]
    fn zero_windows_evict_every_time() {
        // evict-on-timeout: window 0 and cooldown 0.
        let h = health(Some(100), Some(100));
        for failure in [Failure::Deadline, Failure::Transport] {
            assert_eq!(
                eviction_verdict(failure, s(100), &h, Nanos::ZERO, Nanos::ZERO),
                Some(Verdict::Evict)
            );
        }
    }

    #[test]
    fn clock_stepping_back_counts_as_no_time() {
        assert_eq!(
            verdict(Failure::Deadline, 50, health(Some(100), None)),
            Some(Verdict::PeerRecentlyServed)
        );
    }

    #[test]
    fn labels_are_rustfs_s() {
        assert_eq!(Verdict::PeerRecentlyServed.name(), "peer_recently_served");
        assert_eq!(Verdict::CoolingDown.name(), "cooling_down");
        assert_eq!(Verdict::Evict.name(), "evict");
        assert_eq!(Trigger::Timeout.name(), "timeout");
        assert_eq!(Trigger::Transport.name(), "transport");
    }
}
