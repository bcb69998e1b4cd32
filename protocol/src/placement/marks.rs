//! A client's dead marks: which servers it believes dead, driven by its
//! detectors' verdicts (sans-IO; time is an input).
//!
//! The rule is python-memcached's `_Host` (memcache.py 1.59: `mark_dead`
//! sets `deaduntil = time.time() + dead_retry`, and `_check_dead` refuses
//! the server until then), with fdlab's detector in place of the failed
//! connection: a server is marked dead when its detector says Failed, and the
//! mark lifts once the detector no longer says Failed *and* at least
//! `dead_retry` has passed since the mark. twemproxy's `server_retry_timeout`
//! (src/nc_server.c `server_failure`: `next_retry = now +
//! server_retry_timeout`) is the same hold. A Failed verdict for a server
//! already marked does not extend its mark: python would not even try the
//! server before `deaduntil`, so it could not see a new failure.
//!
//! Deviation: python and twemproxy lift the mark at `deaduntil` whatever the
//! server's state and find out by trying it; fdlab keeps it while the
//! detector says Failed (the next try would fail and mark it again at once).

use std::collections::BTreeSet;

use crate::time::Nanos;

/// The dead marks of one client over its server list.
#[derive(Clone, Debug)]
pub struct DeadMarks {
    dead_retry: Nanos,
    /// `live[i]`: server i is not marked dead.
    live: Vec<bool>,
    /// The earliest instant server i's mark may lift (marked + dead_retry);
    /// meaningful while it is marked.
    lift_at: Vec<Nanos>,
    /// The detector of server i says Failed.
    failed: Vec<bool>,
    /// Marked servers whose detector no longer says Failed, by the instant
    /// their mark lifts.
    pending: BTreeSet<(Nanos, usize)>,
}

impl DeadMarks {
    /// `servers` servers, all live; a mark holds at least `dead_retry`.
    pub fn new(servers: usize, dead_retry: Nanos) -> DeadMarks {
        DeadMarks {
            dead_retry,
            live: vec![true; servers],
            lift_at: vec![Nanos::ZERO; servers],
            failed: vec![false; servers],
            pending: BTreeSet::new(),
        }
    }

    /// The detector on `server` says Failed (`failed`) or no longer, at
    /// `now`. Panics if `server` is not below the number of servers.
    pub fn handle_verdict(&mut self, now: Nanos, server: usize, failed: bool) {
        self.failed[server] = failed;
        if failed {
            if self.live[server] {
                self.live[server] = false;
                self.lift_at[server] = now + self.dead_retry;
            } else {
                self.pending.remove(&(self.lift_at[server], server));
            }
        } else if !self.live[server] {
            if now >= self.lift_at[server] {
                self.lift(server);
            } else {
                self.pending.insert((self.lift_at[server], server));
            }
        }
        self.debug_check();
    }

    /// Lifts the marks due at `now`.
    pub fn handle_timeout(&mut self, now: Nanos) {
        while let Some(&(at, server)) = self.pending.first() {
            if at > now {
                break;
            }
            self.pending.pop_first();
            self.lift(server);
        }
        self.debug_check();
    }

    /// The next instant a mark may lift with no further verdict: the
    /// earliest `dead_retry` end of a marked server whose detector no longer
    /// says Failed.
    pub fn poll_timeout(&self) -> Option<Nanos> {
        self.pending.first().map(|&(at, _)| at)
    }

    /// `live[i]`: server i is not marked dead.
    pub fn live(&self) -> &[bool] {
        &self.live
    }

    /// How long a mark holds at least.
    pub fn dead_retry(&self) -> Nanos {
        self.dead_retry
    }

    fn lift(&mut self, server: usize) {
        debug_assert!(!self.failed[server]);
        self.live[server] = true;
    }

    /// Invariants: a pending server is marked, its detector clear, and
    /// listed at its own lift instant.
    fn debug_check(&self) {
        debug_assert!(self
            .pending
            .iter()
            .all(|&(at, s)| !self.live[s] && !self.failed[s] && self.lift_at[s] == at));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const RETRY: Nanos = Nanos::from_secs(30);

    fn secs(s: u64) -> Nanos {
        Nanos::from_secs(s)
    }

    #[test]
    fn a_mark_holds_dead_retry_after_the_detector_clears_early() {
        let mut m = DeadMarks::new(3, RETRY);
        m.handle_verdict(secs(10), 1, true);
        assert_eq!(m.live(), [true, false, true]);
        assert_eq!(m.poll_timeout(), None, "cannot lift while Failed");
        m.handle_verdict(secs(15), 1, false);
        assert_eq!(m.poll_timeout(), Some(secs(40)));
        m.handle_timeout(secs(39));
        assert!(!m.live()[1]);
        m.handle_timeout(secs(40));
        assert!(m.live()[1]);
        assert_eq!(m.poll_timeout(), None);
    }

    #[test]
    fn a_mark_lifts_when_a_late_detector_clears() {
        let mut m = DeadMarks::new(2, RETRY);
        m.handle_verdict(secs(0), 0, true);
        m.handle_timeout(secs(100));
        assert!(!m.live()[0], "still Failed");
        m.handle_verdict(secs(100), 0, false);
        assert!(m.live()[0]);
        assert_eq!(m.poll_timeout(), None);
    }

    #[test]
    fn failing_again_before_the_lift_keeps_the_first_mark() {
        let mut m = DeadMarks::new(1, RETRY);
        m.handle_verdict(secs(0), 0, true);
        m.handle_verdict(secs(5), 0, false);
        m.handle_verdict(secs(20), 0, true);
        assert_eq!(m.poll_timeout(), None);
        m.handle_verdict(secs(25), 0, false);
        assert_eq!(m.poll_timeout(), Some(secs(30)));
    }

    #[test]
    fn zero_dead_retry_follows_the_detector() {
        let mut m = DeadMarks::new(1, Nanos::ZERO);
        m.handle_verdict(secs(1), 0, true);
        assert!(!m.live()[0]);
        m.handle_verdict(secs(2), 0, false);
        assert!(m.live()[0]);
    }
}
