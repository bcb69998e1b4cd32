//! Membership updates: what an agent does with Alive, Suspect and Dead,
//! whether it heard them or concluded them itself, and how it refutes a
//! suspicion of itself.
//!
//! Source: hashicorp/memberlist `state.go` (`aliveNode`, `suspectNode`,
//! `deadNode`, `refute`, the suspicion timer's callback); SWIM's
//! incarnation numbers (Das et al. 2002, §4.2); SPEC §8.2. The rules:
//! - Alive about another member counts only with an incarnation strictly
//!   higher than the one known: it clears a suspicion (or a death), is
//!   re-gossiped, and the member is Alive. So an Alive at the same or an
//!   older incarnation does not clear a Suspect.
//! - Suspect counts with an incarnation not older than the one known. If
//!   the member is already suspected, it is a confirmation (re-gossiped if
//!   it was new and counted); else, if the member is Alive, it becomes
//!   Suspect, its suspicion timer starts, and the Suspect is re-gossiped.
//! - Dead counts with an incarnation not older than the one known, unless
//!   the member is already Dead: it ends any suspicion and is re-gossiped.
//! - About this member, Suspect or Dead (or an Alive newer than its own)
//!   is refuted: its incarnation becomes one more than the higher of its
//!   own and the accusation's, an Alive at it is gossiped, and with
//!   Lifeguard the health score rises by one.
//! - A suspicion timer that runs out declares the member Dead at the
//!   incarnation it was suspected at, as a Dead from this member.
//!
//! A member forgotten after its death (reaped, [`super::members`]) is
//! unknown: Suspect and Dead about it are ignored, and an Alive with any
//! incarnation above 0 adds it back, as a new node is in memberlist.
//!
//! Deviation: memberlist marks a member that announced its own death
//! (graceful leave) Left; fdlab has no leave, so every Dead is a death.

use crate::time::Nanos;

use super::agent::SwimAgent;
use super::members::{MemberId, MemberState};
use super::messages::{Message, SwimEvent};
use super::suspicion::{suspicion_bounds, Suspicion};

impl SwimAgent {
    pub(super) fn alive_node(&mut self, now: Nanos, incarnation: u32, member: MemberId) {
        let Some(i) = self.members.index(member) else {
            return;
        };
        if i == self.members.me() {
            // memberlist refutes an Alive about itself that differs from
            // its own; here only a higher incarnation can differ.
            if incarnation > self.incarnation() {
                self.refute(incarnation);
            }
            return;
        }
        let m = self.members.get(i);
        // A forgotten member is a new node to memberlist, which stores it
        // Dead at incarnation 0 before this check (`aliveNode`, state.go
        // 972-1052 at v0.2.2).
        let known = if m.reaped { 0 } else { m.incarnation };
        if incarnation <= known {
            return;
        }
        let old = m.state;
        self.members.set_suspicion(i, None);
        self.queue.push(Message::Alive {
            incarnation,
            member,
        });
        let m = self.members.get_mut(i);
        m.incarnation = incarnation;
        if old != MemberState::Alive {
            m.state = MemberState::Alive;
            m.state_change = now;
        }
        match old {
            MemberState::Alive => {}
            MemberState::Suspect => self
                .events
                .push_back(SwimEvent::SuspicionEnded { target: member }),
            MemberState::Dead => {
                self.members.unreap(i, &mut self.rng);
                self.events.push_back(SwimEvent::Revived {
                    target: member,
                    incarnation,
                });
            }
        }
    }

    pub(super) fn suspect_node(
        &mut self,
        now: Nanos,
        incarnation: u32,
        member: MemberId,
        from: MemberId,
    ) {
        let Some(i) = self.members.index(member) else {
            return;
        };
        let m = self.members.get(i);
        if m.reaped || incarnation < m.incarnation {
            return;
        }
        let state = m.state;
        if let Some(running) = self.members.suspicion_mut(i) {
            let confirmed = running.confirm(from);
            if confirmed {
                self.queue.push(Message::Suspect {
                    incarnation,
                    member,
                    from,
                });
            }
            return;
        }
        if state != MemberState::Alive {
            return;
        }
        if i == self.members.me() {
            self.refute(incarnation);
            return;
        }
        self.queue.push(Message::Suspect {
            incarnation,
            member,
            from,
        });
        let m = self.members.get_mut(i);
        m.incarnation = incarnation;
        m.state = MemberState::Suspect;
        m.state_change = now;
        let (k, min, max) = suspicion_bounds(&self.config, self.members.num_nodes());
        let suspicion = Suspicion::new(from, now, k, min, max);
        self.members.set_suspicion(i, Some(suspicion));
        self.events
            .push_back(SwimEvent::SuspicionStarted { target: member });
    }

    /// A Dead about `member`: heard (`declared` false) or concluded by this
    /// member's own suspicion timer.
    pub(super) fn dead_node(
        &mut self,
        now: Nanos,
        incarnation: u32,
        member: MemberId,
        from: MemberId,
        declared: bool,
    ) {
        let Some(i) = self.members.index(member) else {
            return;
        };
        let m = self.members.get(i);
        if m.reaped || incarnation < m.incarnation {
            return;
        }
        self.members.set_suspicion(i, None);
        if self.members.get(i).state == MemberState::Dead {
            return;
        }
        if i == self.members.me() {
            self.refute(incarnation);
            return;
        }
        self.queue.push(Message::Dead {
            incarnation,
            member,
            from,
        });
        let m = self.members.get_mut(i);
        m.incarnation = incarnation;
        m.state = MemberState::Dead;
        m.state_change = now;
        self.events.push_back(if declared {
            SwimEvent::Declared {
                target: member,
                incarnation,
            }
        } else {
            SwimEvent::LearnedDead { target: member }
        });
    }

    /// Answers an accusation at `accused`: a higher incarnation, gossiped.
    pub(super) fn refute(&mut self, accused: u32) {
        let me = self.members.me();
        let own = self.members.get(me).incarnation;
        let incarnation = own.max(accused).saturating_add(1);
        // (Saturated at u32::MAX, an accusation can no longer be beaten.)
        debug_assert!(own.max(accused) == u32::MAX || incarnation > own.max(accused));
        self.members.get_mut(me).incarnation = incarnation;
        if self.config.local_health_multiplier {
            self.awareness.apply_delta(1);
        }
        self.queue.push(Message::Alive {
            incarnation,
            member: self.me,
        });
        self.events.push_back(SwimEvent::Refuted { incarnation });
    }

    /// Declares Dead every suspect whose timer ran out by `now`.
    pub(super) fn expire_suspicions(&mut self, now: Nanos) {
        loop {
            let Some(i) = self.members.first_expired(now) else {
                return;
            };
            let m = self.members.get(i);
            debug_assert_eq!(m.state, MemberState::Suspect);
            let (incarnation, member) = (m.incarnation, m.id);
            self.dead_node(now, incarnation, member, self.me, true);
        }
    }
}
