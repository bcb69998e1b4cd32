//! MinIO dsync's unlock, as a sans-IO state machine: a release round to
//! every server, repeated until a quorum of them released, or given up.
//!
//! Source (facts, not code): minio/minio `internal/dsync/drwmutex.go` at
//! 7aac2a2: `Unlock` (:611-653) calls `releaseAll` until it succeeds,
//! sleeping a random fraction of `lockRetryMinInterval` (250 ms) between
//! rounds, and returns once more than `drwMutexUnlockCallTimeout` (30 s)
//! has passed since it began; `releaseAll` (:588-606) sends `sendRelease`
//! to every locker in parallel and waits for all of them; it succeeds when
//! the failed releases are within the tolerance (`checkFailedUnlocks`,
//! :549-573: at most N − quorum). `lock()`'s failure path calls
//! `releaseAll` once (:522-529): `give_up_after` zero.
//!
//! The host sends round `r`'s release to every server on
//! [`DsyncUnlockEvent::Round`], reports each outcome with
//! [`DsyncUnlock::handle_reply`], draws the pause between rounds on
//! [`DsyncUnlockEvent::Wait`] (uniform in [0, `round_pause`)) and hands it
//! back with [`DsyncUnlock::handle_wait`], and calls
//! [`DsyncUnlock::handle_timeout`] at [`DsyncUnlock::poll_timeout`].

use std::collections::{BTreeMap, VecDeque};

use crate::time::Nanos;

/// MinIO's pause between release rounds is drawn below this
/// (`lockRetryMinInterval`).
pub const DSYNC_UNLOCK_ROUND_PAUSE: Nanos = Nanos::from_millis(250);

/// An output of the unlock.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DsyncUnlockEvent {
    /// Send release round `round` to every server now.
    Round { round: u64 },
    /// The round failed: draw the pause before the next one and call
    /// [`DsyncUnlock::handle_wait`].
    Wait,
    /// A quorum released.
    Released,
    /// Time is up: the servers' leases reclaim what is left.
    GaveUp,
}

#[derive(Clone, Debug)]
pub struct DsyncUnlock {
    servers: u32,
    tolerance: u32,
    started: Nanos,
    give_up_after: Nanos,
    round: u64,
    /// This round's outcomes by server: released or not.
    replies: BTreeMap<u32, bool>,
    next_round: Option<Nanos>,
    done: bool,
    events: VecDeque<DsyncUnlockEvent>,
}

impl DsyncUnlock {
    /// An unlock begun at `now` of a lock on `servers` servers whose
    /// write quorum is `quorum`; round 1 is due at once.
    pub fn start(now: Nanos, servers: u32, quorum: u32, give_up_after: Nanos) -> DsyncUnlock {
        debug_assert!(servers >= 1 && (1..=servers).contains(&quorum));
        DsyncUnlock {
            servers,
            tolerance: servers - quorum,
            started: now,
            give_up_after,
            round: 1,
            replies: BTreeMap::new(),
            next_round: None,
            done: false,
            events: VecDeque::from([DsyncUnlockEvent::Round { round: 1 }]),
        }
    }

    /// Server `server` answered this round's release (`released`: it
    /// answered; otherwise the call failed or timed out). Repeats and
    /// servers out of range are ignored.
    pub fn handle_reply(&mut self, _now: Nanos, server: u32, released: bool) {
        if self.done || self.next_round.is_some() || server >= self.servers {
            return;
        }
        self.replies.entry(server).or_insert(released);
        if self.replies.len() as u32 == self.servers {
            let failed = self.replies.values().filter(|&&ok| !ok).count() as u32;
            if failed <= self.tolerance {
                self.finish(DsyncUnlockEvent::Released);
            } else {
                self.events.push_back(DsyncUnlockEvent::Wait);
            }
        }
    }

    /// The host drew the pause before the next round.
    pub fn handle_wait(&mut self, now: Nanos, pause: Nanos) {
        debug_assert!(pause < DSYNC_UNLOCK_ROUND_PAUSE, "pause {pause}");
        if !self.done {
            self.next_round = Some(now + pause);
        }
    }

    pub fn handle_timeout(&mut self, now: Nanos) {
        let Some(at) = self.next_round.filter(|&at| at <= now) else {
            return;
        };
        debug_assert!(at <= now);
        self.next_round = None;
        if now - self.started > self.give_up_after {
            self.finish(DsyncUnlockEvent::GaveUp);
            return;
        }
        self.round += 1;
        self.replies.clear();
        self.events
            .push_back(DsyncUnlockEvent::Round { round: self.round });
    }

    fn finish(&mut self, event: DsyncUnlockEvent) {
        self.done = true;
        self.next_round = None;
        self.events.push_back(event);
    }

    pub fn poll_timeout(&self) -> Option<Nanos> {
        self.next_round
    }

    pub fn poll_event(&mut self) -> Option<DsyncUnlockEvent> {
        self.events.pop_front()
    }

    pub fn is_done(&self) -> bool {
        self.done
    }

    /// Rounds begun.
    pub fn rounds(&self) -> u64 {
        self.round
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(x: u64) -> Nanos {
        Nanos::from_secs(x)
    }

    #[test]
    fn a_quorum_of_releases_ends_it_in_one_round() {
        let mut u = DsyncUnlock::start(s(0), 4, 3, s(30));
        assert_eq!(u.poll_event(), Some(DsyncUnlockEvent::Round { round: 1 }));
        for server in 0..3 {
            u.handle_reply(s(0), server, true);
        }
        assert_eq!(u.poll_event(), None);
        // One server down: within the tolerance of 1.
        u.handle_reply(s(0), 3, false);
        assert_eq!(u.poll_event(), Some(DsyncUnlockEvent::Released));
        assert!(u.is_done());
    }

    #[test]
    fn rounds_repeat_until_30_s_have_passed() {
        let mut u = DsyncUnlock::start(s(0), 4, 3, s(30));
        let mut now = s(0);
        let mut rounds = 0;
        loop {
            match u.poll_event() {
                Some(DsyncUnlockEvent::Round { .. }) => {
                    rounds += 1;
                    // Two servers unreachable: every round fails; each
                    // round's calls take 5 s to fail.
                    now = now + s(5);
                    for server in 0..4 {
                        u.handle_reply(now, server, server < 2);
                    }
                }
                Some(DsyncUnlockEvent::Wait) => u.handle_wait(now, Nanos::from_millis(100)),
                Some(DsyncUnlockEvent::GaveUp) => break,
                Some(e) => panic!("{e:?}"),
                None => {
                    now = u.poll_timeout().expect("a next round");
                    u.handle_timeout(now);
                }
            }
        }
        // Rounds end at 5, 10.1, ... 30.5 s: the seventh is not begun.
        assert_eq!(rounds, 6);
        assert!(u.is_done());
    }

    #[test]
    fn give_up_after_zero_is_one_round() {
        let mut u = DsyncUnlock::start(s(0), 2, 2, Nanos::ZERO);
        u.poll_event();
        u.handle_reply(s(1), 0, false);
        u.handle_reply(s(1), 1, true);
        assert_eq!(u.poll_event(), Some(DsyncUnlockEvent::Wait));
        u.handle_wait(s(1), Nanos::from_millis(10));
        u.handle_timeout(s(1) + Nanos::from_millis(10));
        assert_eq!(u.poll_event(), Some(DsyncUnlockEvent::GaveUp));
    }
}
