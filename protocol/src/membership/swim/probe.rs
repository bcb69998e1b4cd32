//! The probe loop: one member per tick, a direct ping, then ping-reqs
//! through `indirect_checks` members and a TCP ping, then a suspicion; and
//! the other side of a ping-req, with Lifeguard's nacks.
//!
//! Source: hashicorp/memberlist v0.2.2 `state.go` (`probe` 207-256,
//! `probeNode` 283-497), `net.go` (`handleIndirectPing`, `handleAck`,
//! `handleNack`, `sendPingAndWaitForAck` 1214-1258); Lifeguard (Dadgar et
//! al. 2018: LHA-Probe, §IV-A; the buddy system, §IV-C); SPEC §8.2.
//!
//! A probe that starts at t with health score s (`D = probe_interval x
//! (s + 1)`, `probeNode` line 289; `s` is 0 in plain SWIM):
//! 1. ping the next member of the probe order (lines 325-359), remembering
//!    the incarnation it has for it now (the copy `probe` takes, line 239);
//!    with the buddy system, a ping to a Suspect member is a compound of the
//!    ping and the suspicion (memberlist sends it without other piggybacked
//!    updates);
//! 2. no ack by t + `probe_timeout`, which the score does not scale (line
//!    384 and its comment): ping-req `indirect_checks` random Alive members
//!    (not this one, not the target), asking for a nack with Lifeguard
//!    (lines 396-426), and ping the target over TCP (lines 438-454, unless
//!    `disable_tcp_pings`);
//! 3. an ack, direct or relayed, before t + D: the probe succeeded, the
//!    score drops by one (line 366);
//! 4. none by t + D: if the TCP ping got its ack, the probe still counts as
//!    a success (lines 467-475: no suspicion, the score drops by one); else
//!    the probe failed: the score moves by the missing nacks (+1 if no
//!    ping-req asked for one, lines 484-491), and the target is suspected
//!    at the incarnation of step 1 (line 495).
//!
//! memberlist runs probes from a ticker of period `probe_interval`
//! (`schedule`, line 129): a probe that outlasts it blocks the ticker,
//! whose channel keeps one tick, so the next probe starts as soon as the
//! long one ends, and ticks that fall meanwhile are lost; after a short
//! probe the next starts at the next tick. A ping-req's relay pings the
//! target and forwards its ack; with no ack within `probe_timeout`
//! (unscaled) it sends the nack if one was asked for.
//!
//! A consequence kept from memberlist: at health score 0 with the LAN
//! defaults, the ping-reqs leave at t + 500 ms and the relays nack 500 ms
//! after receiving them, at or after the probe's end at t + 1 s. So those
//! nacks never count, and a probe of a member that really is down costs
//! `indirect_checks` points; from score 1 on, the probe is long enough.
//! (Known in other SWIM implementations: apple/swift-cluster-membership
//! issue #6 shortened the relay's wait for this reason.)

use crate::time::Nanos;

use super::agent::SwimAgent;
use super::awareness::Awareness;
use super::members::{MemberId, MemberState};
use super::messages::{Message, Stream};

/// This member's probe in flight.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Probe {
    pub(crate) seq: u32,
    /// Index of the target in the member list.
    pub(crate) target: usize,
    pub(crate) start: Nanos,
    /// End of the direct phase (t + T).
    pub(crate) direct_deadline: Nanos,
    /// End of the probe (t + I).
    pub(crate) end: Nanos,
    /// The ping-reqs went out.
    pub(crate) indirect: bool,
    /// Nacks asked for, and received.
    pub(crate) expected_nacks: u32,
    pub(crate) nacks: u32,
    /// The target's incarnation when the probe began.
    pub(crate) incarnation: u32,
    /// The TCP ping got its ack before `end`.
    pub(crate) tcp_contact: bool,
}

impl Probe {
    /// The next instant this probe needs the agent.
    pub(crate) fn due(&self) -> Nanos {
        if self.indirect {
            self.end
        } else {
            self.direct_deadline
        }
    }
}

/// An indirect probe this member carries out for `requester`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Relay {
    /// This member's own ping of the target.
    pub(crate) local_seq: u32,
    pub(crate) requester: MemberId,
    /// The requester's sequence number.
    pub(crate) seq: u32,
    pub(crate) deadline: Nanos,
    pub(crate) nack: bool,
}

impl SwimAgent {
    /// Starts a round: the next member of the probe order, if any.
    pub(super) fn start_probe(&mut self, now: Nanos) {
        debug_assert!(self.probe.is_none());
        let c = &self.config;
        let (dead_time, timeout) = (c.gossip_to_the_dead_time, c.probe_timeout);
        let Some(target) = self
            .members
            .next_probe_target(now, dead_time, &mut self.rng)
        else {
            // Nobody to probe: memberlist's `probe` returns until the next tick.
            self.next_probe = self.tick_after(now);
            return;
        };
        let round = self.awareness.scale(self.config.probe_interval);
        debug_assert!(timeout < round);
        let seq = self.next_seq();
        let member = self.members.get(target);
        let (id, incarnation) = (member.id, member.incarnation);
        self.probe = Some(Probe {
            seq,
            target,
            start: now,
            direct_deadline: now + timeout,
            end: now + round,
            indirect: false,
            expected_nacks: 0,
            nacks: 0,
            incarnation,
            tcp_contact: false,
        });
        let ping = Message::Ping { seq, target: id };
        if self.config.buddy_system && member.state == MemberState::Suspect {
            let suspect = Message::Suspect {
                incarnation,
                member: id,
                from: self.me,
            };
            self.send_raw(id, vec![ping, suspect]);
        } else {
            self.send(id, ping);
        }
    }

    /// The probe's deadlines: the ping-reqs after the direct wait, the
    /// failure at the end of the round.
    pub(super) fn probe_timeout(&mut self, now: Nanos) {
        let Some(p) = self.probe else {
            return;
        };
        if !p.indirect && p.direct_deadline <= now {
            self.send_ping_reqs();
        }
        if p.end <= now {
            self.probe_failed(now);
        }
    }

    /// Asks `indirect_checks` random Alive members to probe the target.
    fn send_ping_reqs(&mut self) {
        let Some(p) = self.probe else {
            return;
        };
        let me = self.members.me();
        let mut helpers = std::mem::take(&mut self.scratch);
        self.members.sample(
            self.config.indirect_checks as usize,
            &mut self.rng,
            |i, m| i != me && i != p.target && m.state == MemberState::Alive,
            &mut helpers,
        );
        let k = helpers.len();
        let nack = self.config.local_health_multiplier;
        let target = self.members.get(p.target).id;
        for &i in &helpers {
            let peer = self.members.get(i).id;
            let req = Message::PingReq {
                seq: p.seq,
                target,
                nack,
            };
            self.send(peer, req);
        }
        self.scratch = helpers;
        if !self.config.disable_tcp_pings {
            let ping = Stream::Ping { seq: p.seq, target };
            self.send_stream(target, ping);
        }
        if let Some(p) = &mut self.probe {
            p.indirect = true;
            p.expected_nacks = if nack { k as u32 } else { 0 };
        }
    }

    /// No ack by the end of the probe: a TCP contact saves it; else
    /// health, then suspicion at the incarnation known when it began.
    fn probe_failed(&mut self, now: Nanos) {
        let Some(p) = self.probe.take() else {
            return;
        };
        self.next_probe = self.after_probe(p.start, now);
        if p.tcp_contact {
            if self.config.local_health_multiplier {
                self.awareness.apply_delta(-1);
            }
            return;
        }
        if self.config.local_health_multiplier {
            self.awareness
                .apply_delta(Awareness::failed_probe_delta(p.expected_nacks, p.nacks));
        }
        let member = self.members.get(p.target).id;
        self.suspect_node(now, p.incarnation, member, self.me);
    }

    /// When the probe ticker next lets a probe start, after one that began
    /// at `start` ended at `end`: at once if a tick fell meanwhile (the
    /// channel kept it), else at the next tick.
    pub(super) fn after_probe(&self, start: Nanos, end: Nanos) -> Nanos {
        let tick = self.tick_after(start);
        if tick <= end {
            end
        } else {
            tick
        }
    }

    /// The first tick of the probe ticker strictly after `t`.
    pub(super) fn tick_after(&self, t: Nanos) -> Nanos {
        let period = self.config.probe_interval.as_nanos();
        if t < self.tick0 {
            return self.tick0;
        }
        let k = (t - self.tick0).as_nanos() / period + 1;
        self.tick0 + Nanos(k.saturating_mul(period))
    }

    pub(super) fn handle_ack(&mut self, now: Nanos, seq: u32) {
        if let Some(p) = self.probe.filter(|p| p.seq == seq && now < p.end) {
            debug_assert!(now >= p.start);
            self.probe = None;
            self.next_probe = self.after_probe(p.start, now);
            if self.config.local_health_multiplier {
                self.awareness.apply_delta(-1);
            }
            return;
        }
        if let Some(k) = self
            .relays
            .iter()
            .position(|r| r.local_seq == seq && now < r.deadline)
        {
            let relay = self.relays.swap_remove(k);
            self.send(relay.requester, Message::Ack { seq: relay.seq });
        }
    }

    pub(super) fn handle_nack(&mut self, now: Nanos, seq: u32) {
        if let Some(p) = &mut self.probe {
            if p.seq == seq && p.indirect && now < p.end {
                p.nacks = (p.nacks + 1).min(p.expected_nacks);
            }
        }
    }

    /// A ping-req from `requester`: ping `target` for it.
    pub(super) fn handle_ping_req(
        &mut self,
        now: Nanos,
        requester: MemberId,
        seq: u32,
        target: MemberId,
        nack: bool,
    ) {
        if target == self.me {
            // Asked to probe ourselves: we are the answer.
            self.send(requester, Message::Ack { seq });
            return;
        }
        let local_seq = self.next_seq();
        self.relays.push(Relay {
            local_seq,
            requester,
            seq,
            deadline: now + self.config.probe_timeout,
            nack,
        });
        self.send(
            target,
            Message::Ping {
                seq: local_seq,
                target,
            },
        );
    }

    /// Relays whose target did not ack in time: the nack, if asked for.
    pub(super) fn relays_timeout(&mut self, now: Nanos) {
        let mut k = 0;
        while k < self.relays.len() {
            if self.relays[k].deadline <= now {
                let relay = self.relays.swap_remove(k);
                if relay.nack {
                    self.send(relay.requester, Message::Nack { seq: relay.seq });
                }
            } else {
                k += 1;
            }
        }
    }
}
