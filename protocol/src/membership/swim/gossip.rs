//! The broadcast queue: membership updates waiting to be gossiped or
//! piggybacked, each sent a limited number of times.
//!
//! Source: hashicorp/memberlist `queue.go` (`TransmitLimitedQueue`,
//! `GetBroadcasts`), `broadcast.go` (a new update about a member
//! invalidates the queued ones about it) and `util.go`
//! (`retransmitLimit`). Each update goes out at most
//! `retransmit_mult x ceil(log10(N + 1))` times. A packet takes updates
//! while they fit in its byte budget, fewest transmissions first, then the
//! largest, then the newest; an update goes at most once per packet.

use super::members::MemberId;
use super::messages::Message;

/// How many times an update is sent: `retransmit_mult x ceil(log10(n + 1))`.
pub fn retransmit_limit(retransmit_mult: u32, n: usize) -> u32 {
    let scale = libm::ceil(libm::log10(n as f64 + 1.0)) as u32;
    retransmit_mult.saturating_mul(scale)
}

#[derive(Clone, Debug)]
struct Broadcast {
    message: Message,
    member: MemberId,
    transmits: u32,
    /// Larger is newer.
    id: u64,
    /// The `take` call that last picked it.
    picked_by: u64,
}

/// The queue (see the module documentation). It holds at most one update
/// per member.
#[derive(Clone, Debug, Default)]
pub(crate) struct BroadcastQueue {
    items: Vec<Broadcast>,
    next_id: u64,
    calls: u64,
}

impl BroadcastQueue {
    /// Queues an update (Alive, Suspect or Dead), replacing any queued
    /// update about the same member.
    pub(crate) fn push(&mut self, message: Message) {
        let Some(member) = message.subject() else {
            debug_assert!(false, "only membership updates are broadcast");
            return;
        };
        self.items.retain(|b| b.member != member);
        self.next_id += 1;
        self.items.push(Broadcast {
            message,
            member,
            transmits: 0,
            id: self.next_id,
            picked_by: 0,
        });
    }

    pub(crate) fn len(&self) -> usize {
        self.items.len()
    }

    /// Appends to `out` the updates that fit in `budget` bytes, counting
    /// `overhead` bytes per update beside its own size (memberlist's
    /// `GetBroadcasts(overhead, limit)`); each is then counted as sent once
    /// more, and dropped once sent `limit` times.
    pub(crate) fn take(&mut self, overhead: u64, budget: u64, limit: u32, out: &mut Vec<Message>) {
        self.calls += 1;
        let call = self.calls;
        let mut used = 0u64;
        let mut picked = 0;
        while let Some(free) = budget.checked_sub(used + overhead).filter(|&f| f > 0) {
            let best = self
                .items
                .iter_mut()
                .filter(|b| b.picked_by != call && b.message.bytes() <= free)
                .min_by_key(|b| {
                    (
                        b.transmits,
                        std::cmp::Reverse(b.message.bytes()),
                        std::cmp::Reverse(b.id),
                    )
                });
            let Some(b) = best else {
                break;
            };
            b.picked_by = call;
            used += overhead + b.message.bytes();
            out.push(b.message);
            picked += 1;
        }
        if picked == 0 {
            return;
        }
        for b in &mut self.items {
            if b.picked_by == call {
                b.transmits += 1;
            }
        }
        self.items.retain(|b| b.transmits < limit);
        debug_assert!(used <= budget);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::membership::swim::messages::{ALIVE_BYTES, SUSPECT_BYTES};

    fn suspect(member: u32) -> Message {
        Message::Suspect {
            incarnation: 0,
            member: MemberId(member),
            from: MemberId(0),
        }
    }

    #[test]
    fn retransmit_limits() {
        // 4 x ceil(log10 2) = 4; 4 x ceil(log10 11) = 8; 4 x ceil(log10 101) = 12.
        assert_eq!(retransmit_limit(4, 1), 4);
        assert_eq!(retransmit_limit(4, 9), 4);
        assert_eq!(retransmit_limit(4, 10), 8);
        assert_eq!(retransmit_limit(4, 100), 12);
    }

    #[test]
    fn each_update_is_sent_limit_times_then_dropped() {
        let mut q = BroadcastQueue::default();
        q.push(suspect(1));
        for _ in 0..4 {
            let mut out = Vec::new();
            q.take(2, 1_400, 4, &mut out);
            assert_eq!(out, [suspect(1)]);
        }
        let mut out = Vec::new();
        q.take(2, 1_400, 4, &mut out);
        assert!(out.is_empty());
        assert_eq!(q.len(), 0);
    }

    #[test]
    fn a_newer_update_replaces_the_queued_one_about_the_same_member() {
        let mut q = BroadcastQueue::default();
        q.push(suspect(1));
        let alive = Message::Alive {
            incarnation: 1,
            member: MemberId(1),
        };
        q.push(alive);
        assert_eq!(q.len(), 1);
        let mut out = Vec::new();
        q.take(2, 1_400, 4, &mut out);
        assert_eq!(out, [alive]);
    }

    #[test]
    fn the_budget_bounds_a_packet_and_fresh_updates_go_first() {
        let mut q = BroadcastQueue::default();
        for m in 1..=30 {
            q.push(suspect(m));
        }
        // 1,400 bytes hold 21 updates of 63 + 2 bytes (1,365).
        let mut out = Vec::new();
        q.take(2, 1_400, 4, &mut out);
        assert_eq!(out.len(), 21);
        // The newest first.
        assert_eq!(out[0], suspect(30));
        // The next packet starts with the 9 never sent.
        let mut next = Vec::new();
        q.take(2, 1_400, 4, &mut next);
        assert_eq!(next[..9], (1..=9).rev().map(suspect).collect::<Vec<_>>());
        // A small budget takes a smaller update when a larger one does not fit.
        let mut small = BroadcastQueue::default();
        small.push(Message::Alive {
            incarnation: 1,
            member: MemberId(1),
        });
        small.push(suspect(2));
        let mut out = Vec::new();
        small.take(2, SUSPECT_BYTES + 2 + 1, 4, &mut out);
        assert_eq!(out, [suspect(2)]);
        let mut out = Vec::new();
        small.take(2, 1_400, 4, &mut out);
        // The alive (never sent, larger) before the suspect (sent once).
        assert_eq!(out.len(), 2);
        assert_eq!(out[0].bytes(), ALIVE_BYTES);
    }
}
