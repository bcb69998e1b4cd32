//! Push/pull: the periodic full state exchange with one random live member
//! over TCP, which heals what gossip missed (a member held Dead by one
//! member alone, on a stale incarnation, is taken back at the next
//! exchange that brings it a newer one).
//!
//! Source: hashicorp/memberlist v0.2.2 `state.go` (`pushPullTrigger`
//! 186-209, `pushPull` 622-641, `pushPullNode` 644-657, `mergeState`
//! 1283-1309), `net.go` (`handleConn`: the receiver reads the initiator's
//! state, sends its own, then merges; `sendAndReceiveState`), `util.go`
//! (`pushPullScale` 89-97: past 32 members the interval is multiplied by
//! `ceil(log2(N) - log2(32)) + 1`).
//!
//! The merge rules (`mergeState`): an Alive entry is handled as an Alive
//! message; a Suspect entry, and a Dead one ("we prefer to suspect that
//! node instead of declaring it dead instantly"), as a Suspect message
//! *from this member*; memberlist's Left (a graceful leave) does not occur
//! in fdlab.

use std::sync::Arc;

use crate::time::Nanos;

use super::agent::SwimAgent;
use super::members::{MemberId, MemberState};
use super::messages::{PushNodeState, PushState, Stream};

/// `pushPullScaleThreshold` (`util.go:25`).
const PUSH_PULL_SCALE_THRESHOLD: usize = 32;

/// `pushPullScale(interval, n)`.
pub fn push_pull_scale(interval: Nanos, n: usize) -> Nanos {
    if n <= PUSH_PULL_SCALE_THRESHOLD {
        return interval;
    }
    let multiplier =
        ((n as f64).log2() - (PUSH_PULL_SCALE_THRESHOLD as f64).log2()).ceil() as u64 + 1;
    Nanos(interval.as_nanos().saturating_mul(multiplier))
}

impl SwimAgent {
    /// This member's list as a push/pull sends it (see [`PushState`]).
    pub(super) fn local_state(&mut self) -> Arc<PushState> {
        self.members.push_state()
    }

    /// The push/pull tick: an exchange with one random Alive member, and
    /// the next tick a scaled interval later.
    pub(super) fn push_pull(&mut self, now: Nanos) {
        let interval = self.config.push_pull_interval;
        self.next_push_pull = Some(now + push_pull_scale(interval, self.members.num_nodes()));
        let me = self.members.me();
        let mut pick = std::mem::take(&mut self.scratch);
        self.members.sample(
            1,
            &mut self.rng,
            |i, m| i != me && m.state == MemberState::Alive,
            &mut pick,
        );
        if let Some(&i) = pick.first() {
            let to = self.members.get(i).id;
            let state = self.local_state();
            self.send_stream(
                to,
                Stream::PushPull {
                    state,
                    reply: false,
                },
            );
        }
        self.scratch = pick;
    }

    /// A push/pull from `from`: answered with this member's state as it
    /// was (`handleConn` sends before it merges), then merged; a reply is
    /// merged.
    pub(super) fn handle_push_pull(
        &mut self,
        now: Nanos,
        from: MemberId,
        remote: &PushState,
        reply: bool,
    ) {
        if !reply {
            let state = self.local_state();
            self.send_stream(from, Stream::PushPull { state, reply: true });
        }
        self.merge_state(now, &remote.changed);
    }

    /// `mergeState`, over the entries that can change anything.
    fn merge_state(&mut self, now: Nanos, remote: &[PushNodeState]) {
        let me = self.me;
        for r in remote {
            match r.state {
                MemberState::Alive => self.alive_node(now, r.incarnation, r.member),
                MemberState::Suspect | MemberState::Dead => {
                    self.suspect_node(now, r.incarnation, r.member, me)
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_interval_scales_past_32_members() {
        let i = Nanos::from_secs(30);
        assert_eq!(push_pull_scale(i, 10), i);
        assert_eq!(push_pull_scale(i, 32), i);
        // log2(33) - 5 = 0.04 -> 1, + 1.
        assert_eq!(push_pull_scale(i, 33), Nanos::from_secs(60));
        // 100 members: log2(100) = 6.64, - 5 -> 2, + 1 = 3.
        assert_eq!(push_pull_scale(i, 100), Nanos::from_secs(90));
        // 10,000: 13.29 - 5 -> 9, + 1 = 10.
        assert_eq!(push_pull_scale(i, 10_000), Nanos::from_secs(300));
    }
}
