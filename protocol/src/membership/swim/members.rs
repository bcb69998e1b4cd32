//! The member list of one agent: each member's incarnation and state, the
//! running suspicions, and the probe order.
//!
//! Source: hashicorp/memberlist `state.go` (`nodeState`, `probe`,
//! `resetNodes`), `util.go` (`moveDeadNodes`, `shuffleNodes`). The probe
//! order visits every member in a shuffled order, skipping this member and
//! the dead; at the end of a pass the members dead for longer than
//! `gossip_to_the_dead_time` are dropped ("reaped") and the rest
//! reshuffled. N, the cluster size that scales suspicion timeouts and
//! retransmissions, is the length of that order (this member included,
//! dead members until reaped), as memberlist's `estNumNodes`.
//!
//! A reaped member is forgotten, as memberlist deletes it from its node
//! map (`resetNodes`, state.go:541-562 at v0.2.2): it leaves the probe
//! order and N, Suspect and Dead about it are ignored, and an Alive with
//! an incarnation above 0 takes it back at a random place in the probe
//! order (`aliveNode`'s new node). The list itself never grows: it is the
//! one the host gave, a forgotten member keeping its slot.

use std::sync::Arc;

use crate::time::Nanos;

use super::messages::{PushNodeState, PushState};
use super::suspicion::Suspicion;
use crate::membership::entropy::Entropy;

/// memberlist's `kRandomNodes` gives up after 3 x N draws ("with small n
/// we want search to be exhaustive").
const KRANDOM_TRIES_PER_MEMBER: usize = 3;

/// A member: the host's node index.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct MemberId(pub u32);

impl std::fmt::Display for MemberId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "n{}", self.0)
    }
}

/// What one member believes of another.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MemberState {
    Alive,
    Suspect,
    Dead,
}

/// One member as this agent sees it. Every member holds one of these per
/// member of the cluster, so it is kept small (24 bytes): the running
/// suspicions, which are few, live beside the list.
#[derive(Clone, Debug)]
pub(crate) struct Member {
    pub(crate) id: MemberId,
    pub(crate) incarnation: u32,
    /// When `state` last changed (local time).
    pub(crate) state_change: Nanos,
    pub(crate) state: MemberState,
    /// Dropped from the probe order (dead for long).
    pub(crate) reaped: bool,
}

/// The member list (see the module documentation).
#[derive(Clone, Debug)]
pub(crate) struct Members {
    /// Sorted by id.
    list: Vec<Member>,
    me: usize,
    /// Indices into `list` of the members not reaped, in probe order
    /// (`u32`: the list of a host's members is indexed by a `u32` id).
    order: Vec<u32>,
    probe_index: usize,
    /// The running suspicions, by member index, in the order they
    /// started: one exactly for each member whose state is Suspect.
    suspects: Vec<(usize, Suspicion)>,
    /// The list as a push/pull sends it, built at the first exchange after
    /// the list last changed: most exchanges find it unchanged, and
    /// building it walks the whole list.
    push_state: Option<Arc<PushState>>,
}

impl Members {
    /// Every member of `ids` (and `me`) Alive at incarnation 0, in the
    /// order `rng` shuffles them to.
    pub(crate) fn new(me: MemberId, ids: &[MemberId], now: Nanos, rng: &mut Entropy) -> Members {
        let mut all: Vec<MemberId> = ids.iter().copied().chain([me]).collect();
        all.sort_unstable();
        all.dedup();
        let list: Vec<Member> = all
            .iter()
            .map(|&id| Member {
                id,
                incarnation: 0,
                state: MemberState::Alive,
                state_change: now,
                reaped: false,
            })
            .collect();
        let me = all.binary_search(&me).expect("me is in the list");
        debug_assert!(u32::try_from(list.len()).is_ok());
        let mut order: Vec<u32> = (0..list.len() as u32).collect();
        rng.shuffle(&mut order);
        Members {
            list,
            me,
            order,
            probe_index: 0,
            suspects: Vec::new(),
            push_state: None,
        }
    }

    pub(crate) fn index(&self, id: MemberId) -> Option<usize> {
        self.list.binary_search_by_key(&id, |m| m.id).ok()
    }

    pub(crate) fn me(&self) -> usize {
        self.me
    }

    pub(crate) fn get(&self, i: usize) -> &Member {
        &self.list[i]
    }

    pub(crate) fn get_mut(&mut self, i: usize) -> &mut Member {
        self.push_state = None;
        &mut self.list[i]
    }

    /// The list as a push/pull sends it: every member not forgotten, this
    /// one included (see [`PushState`] for the entries it leaves out).
    pub(crate) fn push_state(&mut self) -> Arc<PushState> {
        let list = &self.list;
        self.push_state
            .get_or_insert_with(|| {
                let mut members = 0;
                let mut changed = Vec::new();
                for m in list.iter().filter(|m| !m.reaped) {
                    members += 1;
                    if m.state != MemberState::Alive || m.incarnation != 0 {
                        changed.push(PushNodeState {
                            member: m.id,
                            incarnation: m.incarnation,
                            state: m.state,
                        });
                    }
                }
                Arc::new(PushState { members, changed })
            })
            .clone()
    }

    pub(crate) fn all(&self) -> &[Member] {
        &self.list
    }

    /// N: the members in the probe order (this one and the dead not yet
    /// reaped included).
    pub(crate) fn num_nodes(&self) -> usize {
        self.order.len()
    }

    /// Up to `k` distinct members, not reaped, for which `eligible` holds,
    /// chosen at random into `out` (cleared first): memberlist's
    /// `kRandomNodes` (`util.go`), which draws a member uniformly from the
    /// list up to 3 x N times, skipping the ineligible and those already
    /// chosen. Its cost is bounded by k draws when most members are
    /// eligible, whatever N; it may return fewer than k when few are.
    pub(crate) fn sample(
        &self,
        k: usize,
        rng: &mut Entropy,
        mut eligible: impl FnMut(usize, &Member) -> bool,
        out: &mut Vec<usize>,
    ) {
        out.clear();
        let n = self.order.len();
        let tries = n.saturating_mul(KRANDOM_TRIES_PER_MEMBER);
        for _ in 0..tries {
            if out.len() >= k {
                break;
            }
            let i = self.order[rng.below(n as u64) as usize] as usize;
            if eligible(i, &self.list[i]) && !out.contains(&i) {
                out.push(i);
            }
        }
    }

    /// The next member to probe, round robin over the order, reaping and
    /// reshuffling at the end of a pass (memberlist's `probe`); none if
    /// every member is this one or dead. It looks through the rest of the
    /// pass and at most one whole new pass. (memberlist caps the members it
    /// looks at by the list's length, skipped ones before the wrap
    /// included, so it may probe nobody in a round where the pass ends on
    /// skipped members and reaping shortens the list.)
    pub(crate) fn next_probe_target(
        &mut self,
        now: Nanos,
        dead_time: Nanos,
        rng: &mut Entropy,
    ) -> Option<usize> {
        let mut wrapped = false;
        loop {
            if self.probe_index >= self.order.len() {
                if wrapped {
                    return None;
                }
                self.reset(now, dead_time, rng);
                self.probe_index = 0;
                wrapped = true;
                continue;
            }
            let i = self.order[self.probe_index] as usize;
            self.probe_index += 1;
            if i != self.me && self.list[i].state != MemberState::Dead {
                return Some(i);
            }
        }
    }

    /// The end of a pass: reaps the long dead, reshuffles the rest.
    fn reset(&mut self, now: Nanos, dead_time: Nanos, rng: &mut Entropy) {
        self.push_state = None;
        let list = &mut self.list;
        self.order.retain(|&i| {
            let m = &mut list[i as usize];
            let reap = m.state == MemberState::Dead && now - m.state_change > dead_time;
            m.reaped = reap;
            !reap
        });
        rng.shuffle(&mut self.order);
    }

    /// Takes a reaped member back into the probe order, at a random place.
    pub(crate) fn unreap(&mut self, i: usize, rng: &mut Entropy) {
        if !self.list[i].reaped {
            return;
        }
        self.list[i].reaped = false;
        self.push_state = None;
        let n = self.order.len();
        let offset = rng.below(n as u64) as usize;
        self.order.push(i as u32);
        self.order.swap(offset, n);
    }

    /// Member `i`'s running suspicion.
    pub(crate) fn suspicion(&self, i: usize) -> Option<&Suspicion> {
        self.suspects.iter().find(|(k, _)| *k == i).map(|(_, s)| s)
    }

    pub(crate) fn suspicion_mut(&mut self, i: usize) -> Option<&mut Suspicion> {
        self.suspects
            .iter_mut()
            .find(|(k, _)| *k == i)
            .map(|(_, s)| s)
    }

    /// Sets or clears member `i`'s suspicion.
    pub(crate) fn set_suspicion(&mut self, i: usize, suspicion: Option<Suspicion>) {
        match (self.suspicion_mut(i), suspicion) {
            (Some(running), Some(s)) => *running = s,
            (None, Some(s)) => self.suspects.push((i, s)),
            (Some(_), None) => self.suspects.retain(|(k, _)| *k != i),
            (None, None) => {}
        }
    }

    /// The first member (in the order their suspicions started) whose
    /// suspicion runs out by `now`.
    pub(crate) fn first_expired(&self, now: Nanos) -> Option<usize> {
        self.suspects
            .iter()
            .find(|(_, s)| s.deadline() <= now)
            .map(|&(i, _)| i)
    }

    /// The earliest suspicion deadline.
    pub(crate) fn next_suspicion_deadline(&self) -> Option<Nanos> {
        self.suspects.iter().map(|(_, s)| s.deadline()).min()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(n: u32) -> Vec<MemberId> {
        (0..n).map(MemberId).collect()
    }

    #[test]
    fn a_pass_visits_every_other_live_member_once() {
        let mut rng = Entropy::new(3);
        let mut m = Members::new(MemberId(2), &ids(6), Nanos::ZERO, &mut rng);
        m.get_mut(4).state = MemberState::Dead;
        // Five passes, each a new shuffle, each visiting every member once.
        let mut orders = Vec::new();
        for _ in 0..5 {
            let pass: Vec<usize> = (0..4)
                .map(|_| {
                    m.next_probe_target(Nanos::ZERO, Nanos::from_secs(30), &mut rng)
                        .unwrap()
                })
                .collect();
            let mut seen = pass.clone();
            seen.sort_unstable();
            assert_eq!(seen, [0, 1, 3, 5]);
            orders.push(pass);
        }
        orders.dedup();
        assert!(orders.len() > 1, "reshuffled");
        assert_eq!(m.num_nodes(), 6);
    }

    #[test]
    fn the_long_dead_are_reaped_at_the_end_of_a_pass() {
        let mut rng = Entropy::new(3);
        let mut m = Members::new(MemberId(0), &ids(4), Nanos::ZERO, &mut rng);
        m.get_mut(1).state = MemberState::Dead;
        let dead_time = Nanos::from_secs(30);
        let late = Nanos::from_secs(31);
        // A pass: members 2 and 3.
        for _ in 0..2 {
            m.next_probe_target(late, dead_time, &mut rng).unwrap();
        }
        assert_eq!(m.num_nodes(), 4);
        // The next call wraps the pass: member 1 is reaped (and someone is
        // probed all the same).
        m.next_probe_target(late, dead_time, &mut rng).unwrap();
        assert_eq!(m.num_nodes(), 3);
        assert!(m.get(1).reaped);
        m.unreap(1, &mut rng);
        assert_eq!(m.num_nodes(), 4);
        assert!(!m.get(1).reaped);
    }

    #[test]
    fn a_sample_is_distinct_eligible_members_up_to_k() {
        let mut rng = Entropy::new(5);
        let m = Members::new(MemberId(0), &ids(1_000), Nanos::ZERO, &mut rng);
        let mut out = Vec::new();
        let mut seen = std::collections::BTreeSet::new();
        for _ in 0..200 {
            m.sample(3, &mut rng, |i, _| i % 2 == 1, &mut out);
            assert_eq!(out.len(), 3);
            let mut distinct = out.clone();
            distinct.sort_unstable();
            distinct.dedup();
            assert_eq!(distinct.len(), 3, "{out:?}");
            assert!(out.iter().all(|i| i % 2 == 1), "{out:?}");
            seen.extend(out.iter().copied());
        }
        // Spread over the eligible half, not stuck on a few.
        assert!(seen.len() > 300, "{}", seen.len());
        // Fewer eligible than k: all of them (3 x N tries find both here),
        // and none when nobody is.
        m.sample(3, &mut rng, |i, _| i == 10 || i == 20, &mut out);
        out.sort_unstable();
        assert_eq!(out, [10, 20]);
        m.sample(3, &mut rng, |_, _| false, &mut out);
        assert!(out.is_empty());
    }

    #[test]
    fn nobody_to_probe() {
        let mut rng = Entropy::new(3);
        let mut alone = Members::new(MemberId(0), &[], Nanos::ZERO, &mut rng);
        assert_eq!(
            alone.next_probe_target(Nanos::ZERO, Nanos::ZERO, &mut rng),
            None
        );
        let mut m = Members::new(MemberId(0), &ids(2), Nanos::ZERO, &mut rng);
        m.get_mut(1).state = MemberState::Dead;
        assert_eq!(
            m.next_probe_target(Nanos::ZERO, Nanos::from_secs(1), &mut rng),
            None
        );
    }
}
