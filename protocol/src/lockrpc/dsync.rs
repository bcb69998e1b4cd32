//! A dsync-like lock holder: a lock granted by a quorum of N lock servers,
//! refreshed on all of them periodically, lost only when too many say they
//! no longer hold it.
//!
//! Source (facts, not code): minio/minio `internal/dsync/drwmutex.go`
//! (`drwMutexRefreshInterval` = 10 s, timer re-armed when it fires;
//! `drwMutexRefreshCallTimeout` = 5 s; `refreshLock`: a server that fails
//! to answer is *offline* and counts for neither side; the round ends early
//! once `refreshed >= quorum` or `not_found > N - quorum`; the lock is lost
//! iff `not_found > N - quorum`, after which MinIO force-unlocks everywhere
//! and calls the loss callback).

use std::collections::BTreeMap;

use super::config::DsyncConfig;
use crate::time::Nanos;

/// One server's answer to a refresh.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RefreshReply {
    /// It still holds the lock for us.
    Refreshed,
    /// It does not (lease expired, restarted).
    NotFound,
    /// Error or no answer: counts for neither side.
    Offline,
}

/// An output of the holder.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DsyncEvent {
    /// Send refresh round `round` to every server.
    Refresh { round: u64 },
    /// The round ended with the lock kept.
    Kept { round: u64 },
    /// Too many servers lost it: force-unlock everywhere; the lock is gone.
    Lost { round: u64 },
}

#[derive(Clone, Debug)]
struct Round {
    id: u64,
    deadline: Nanos,
    replies: BTreeMap<u32, RefreshReply>,
}

#[derive(Clone, Debug)]
pub struct DsyncHolder {
    config: DsyncConfig,
    servers: u32,
    quorum: u32,
    next_refresh: Option<Nanos>,
    round: Option<Round>,
    rounds: u64,
    lost: bool,
    events: std::collections::VecDeque<DsyncEvent>,
}

impl DsyncHolder {
    /// A lock granted at `now` by at least `quorum` of `servers`.
    pub fn granted(now: Nanos, config: DsyncConfig, servers: u32, quorum: u32) -> DsyncHolder {
        debug_assert!(servers >= 1 && (1..=servers).contains(&quorum));
        DsyncHolder {
            next_refresh: Some(now + config.refresh_interval),
            config,
            servers,
            quorum,
            round: None,
            rounds: 0,
            lost: false,
            events: std::collections::VecDeque::new(),
        }
    }

    /// Server `server` answered round `round` at `now`; stale or duplicate
    /// answers are ignored.
    pub fn handle_refresh_reply(
        &mut self,
        now: Nanos,
        round: u64,
        server: u32,
        reply: RefreshReply,
    ) {
        let Some(r) = self.round.as_mut() else {
            return;
        };
        if r.id != round || server >= self.servers {
            return;
        }
        r.replies.entry(server).or_insert(reply);
        self.settle(now, false);
    }

    pub fn handle_timeout(&mut self, now: Nanos) {
        if self.round.as_ref().is_some_and(|r| r.deadline <= now) {
            self.settle(now, true);
        }
        if let Some(at) = self.next_refresh.filter(|&at| at <= now) {
            // MinIO re-arms the timer when it fires, whatever the round takes.
            self.next_refresh = Some(at + self.config.refresh_interval);
            self.rounds += 1;
            if self.round.is_some() {
                // The previous round is still out (cannot happen with a call
                // deadline no longer than the interval): settle it first.
                self.settle(now, true);
            }
            if !self.lost {
                self.round = Some(Round {
                    id: self.rounds,
                    deadline: now + self.config.refresh_call_deadline,
                    replies: BTreeMap::new(),
                });
                self.events
                    .push_back(DsyncEvent::Refresh { round: self.rounds });
            }
        }
    }

    /// The holder released the lock: no more refreshes.
    pub fn release(&mut self) {
        self.next_refresh = None;
        self.round = None;
    }

    fn settle(&mut self, _now: Nanos, deadline_passed: bool) {
        let Some(r) = self.round.as_ref() else {
            return;
        };
        let refreshed = r
            .replies
            .values()
            .filter(|&&x| x == RefreshReply::Refreshed)
            .count() as u32;
        let not_found = r
            .replies
            .values()
            .filter(|&&x| x == RefreshReply::NotFound)
            .count() as u32;
        let tolerance = self.servers - self.quorum;
        let all_in = r.replies.len() as u32 == self.servers;
        let decided = refreshed >= self.quorum || not_found > tolerance;
        if !(decided || all_in || deadline_passed) {
            return;
        }
        let id = r.id;
        self.round = None;
        if not_found > tolerance {
            self.lost = true;
            self.next_refresh = None;
            self.events.push_back(DsyncEvent::Lost { round: id });
        } else {
            self.events.push_back(DsyncEvent::Kept { round: id });
        }
    }

    pub fn poll_timeout(&self) -> Option<Nanos> {
        let deadline = self.round.as_ref().map(|r| r.deadline);
        match (deadline, self.next_refresh) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    pub fn poll_event(&mut self) -> Option<DsyncEvent> {
        self.events.pop_front()
    }

    pub fn is_lost(&self) -> bool {
        self.lost
    }
    pub fn quorum(&self) -> u32 {
        self.quorum
    }
    pub fn rounds(&self) -> u64 {
        self.rounds
    }
}

/// The wait before acquisition attempt `attempt` + 1 (from 1) after attempt
/// `attempt` failed: `jitter` (in [0, 1), drawn by the host) of the way
/// down from MinIO's `backoffWait` cap, so uniform in (0, cap]
/// (`internal/dsync/utils.go:25-39`: `sleep -= rand x sleep`).
pub fn retry_wait(config: &DsyncConfig, attempt: u32, jitter: f64) -> Nanos {
    debug_assert!((0.0..1.0).contains(&jitter), "jitter {jitter}");
    let step = Nanos(
        config
            .retry_step
            .as_nanos()
            .saturating_mul(u64::from(attempt)),
    );
    let cap = (config.retry_min + step).min(config.retry_max);
    Nanos(cap.as_nanos() - (cap.as_nanos() as f64 * jitter) as u64)
}

#[cfg(test)]
mod tests {
    use super::super::config::write_quorum;
    use super::*;

    fn s(n: u64) -> Nanos {
        Nanos::from_secs(n)
    }

    /// A holder on 4 servers (write quorum 3, tolerance 1) at its first round.
    fn at_first_round() -> DsyncHolder {
        let mut h = DsyncHolder::granted(s(0), DsyncConfig::default(), 4, write_quorum(4));
        assert_eq!(h.poll_timeout(), Some(s(10)));
        h.handle_timeout(s(10));
        assert_eq!(h.poll_event(), Some(DsyncEvent::Refresh { round: 1 }));
        h
    }

    #[test]
    fn kept_with_quorum_early() {
        let mut h = at_first_round();
        for server in 0..3 {
            h.handle_refresh_reply(s(11), 1, server, RefreshReply::Refreshed);
        }
        assert_eq!(h.poll_event(), Some(DsyncEvent::Kept { round: 1 }));
        assert_eq!(h.poll_timeout(), Some(s(20)));
    }

    #[test]
    fn lost_only_past_n_minus_quorum_not_found() {
        let mut h = at_first_round();
        h.handle_refresh_reply(s(11), 1, 0, RefreshReply::NotFound);
        assert_eq!(h.poll_event(), None);
        h.handle_refresh_reply(s(11), 1, 0, RefreshReply::NotFound); // duplicate
        assert_eq!(h.poll_event(), None);
        h.handle_refresh_reply(s(11), 1, 1, RefreshReply::NotFound);
        assert_eq!(h.poll_event(), Some(DsyncEvent::Lost { round: 1 }));
        assert!(h.is_lost());
        assert_eq!(h.poll_timeout(), None);
    }

    #[test]
    fn offline_servers_never_lose_the_lock() {
        // Slow is not dead: three servers silent, one not found.
        let mut h = at_first_round();
        h.handle_refresh_reply(s(11), 1, 0, RefreshReply::NotFound);
        assert_eq!(h.poll_timeout(), Some(s(15)));
        h.handle_timeout(s(15));
        assert_eq!(h.poll_event(), Some(DsyncEvent::Kept { round: 1 }));
        assert!(!h.is_lost());
        // Rounds keep the 10 s rhythm.
        h.handle_timeout(s(20));
        assert_eq!(h.poll_event(), Some(DsyncEvent::Refresh { round: 2 }));
    }

    #[test]
    fn stale_round_answers_are_ignored_and_release_stops() {
        let mut h = at_first_round();
        h.handle_refresh_reply(s(11), 7, 0, RefreshReply::NotFound);
        h.handle_refresh_reply(s(11), 1, 9, RefreshReply::NotFound);
        assert_eq!(h.poll_event(), None);
        h.release();
        assert_eq!(h.poll_timeout(), None);
        h.handle_timeout(s(100));
        assert_eq!(h.poll_event(), None);
    }

    #[test]
    fn retry_waits_grow_by_100_ms_to_5_s_and_are_drawn_below_the_cap() {
        let c = DsyncConfig::default();
        let cap = |attempt| retry_wait(&c, attempt, 0.0);
        assert_eq!(cap(1), Nanos::from_millis(350));
        assert_eq!(cap(10), Nanos::from_millis(1_250));
        assert_eq!(cap(100), Nanos::from_secs(5));
        assert_eq!(retry_wait(&c, 1, 0.5), Nanos::from_millis(175));
        assert!(retry_wait(&c, 1, 0.999_999) > Nanos::ZERO);
    }
}
