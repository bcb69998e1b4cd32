//! Probing the monitored silos: direct and indirect probes, the
//! health-scaled wait, missed-probe counting, and the intermediary's side
//! of an indirect probe.
//!
//! Source: dotnet/orleans `SiloHealthMonitor` (`ProbeDirectly`,
//! `ProbeIndirectly`, the wait `probe_timeout x (1 + local health score)`
//! when `ExtendProbeTimeoutDuringDegradation`, one period more for an
//! indirect probe) and `ClusterHealthMonitor`; SPEC §8.1. Probes to a peer
//! are sequential: the next one goes a `probe_timeout` after the last one
//! was sent, or when it resolved if that is later.

use crate::time::Nanos;

use super::agent::OrleansAgent;
use super::judge::Judge;
use super::messages::{AgentEvent, IndirectOutcome, Message};
use super::ring::ring_position;
use super::table::{SiloId, SiloStatus};
use super::votes::is_stale;

/// A probe in flight.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Probe {
    id: u64,
    sent: Nanos,
    deadline: Nanos,
    /// The intermediary of an indirect probe.
    via: Option<SiloId>,
}

/// One monitored silo.
#[derive(Clone, Debug)]
pub(crate) struct Peer {
    pub(crate) silo: SiloId,
    pub(crate) judge: Judge,
    missed: u32,
    probe: Option<Probe>,
    next_probe: Nanos,
    suspecting: bool,
}

impl Peer {
    /// The next instant this peer needs the agent.
    pub(crate) fn due(&self) -> Nanos {
        self.probe.map_or(self.next_probe, |p| p.deadline)
    }
}

/// An indirect probe this silo carries out for another.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Relay {
    /// This silo's own probe of the target.
    id: u64,
    requester: SiloId,
    /// The requester's probe id.
    probe: u64,
    pub(crate) deadline: Nanos,
}

impl OrleansAgent {
    /// Makes the monitored set exactly `wanted` (sorted): peers kept keep
    /// their state, new ones are probed at once.
    pub(super) fn set_peers(&mut self, now: Nanos, wanted: &[SiloId]) {
        let mut old = std::mem::take(&mut self.peers).into_iter().peekable();
        let mut peers = Vec::with_capacity(wanted.len());
        for &silo in wanted {
            while old.peek().is_some_and(|p| p.silo < silo) {
                let gone = old.next().expect("peeked");
                self.dropped(gone);
            }
            match old.peek() {
                Some(p) if p.silo == silo => peers.push(old.next().expect("peeked")),
                _ => peers.push(Peer {
                    silo,
                    judge: Judge::start(&self.judge, now),
                    missed: 0,
                    probe: None,
                    next_probe: now,
                    suspecting: false,
                }),
            }
        }
        for gone in old {
            self.dropped(gone);
        }
        self.peers = peers;
    }

    fn dropped(&mut self, peer: Peer) {
        if peer.suspecting {
            self.events
                .push_back(AgentEvent::SuspicionEnded { target: peer.silo });
        }
    }

    /// The next instant this agent must look at its peers.
    pub(super) fn peers_due(&self) -> Option<Nanos> {
        self.peers
            .iter()
            .filter(|p| p.probe.is_some() || !self.suspect_pending(p.silo))
            .map(Peer::due)
            .chain(self.peers.iter().filter_map(|p| p.judge.poll_timeout()))
            .min()
    }

    /// Probe deadlines, due probes and judge timers.
    pub(super) fn peers_timeout(&mut self, now: Nanos) {
        for i in 0..self.peers.len() {
            if let Some(p) = self.peers[i].probe.filter(|p| p.deadline <= now) {
                self.peers[i].probe = None;
                self.peers[i].next_probe = (p.sent + self.config.probe_timeout).max(now);
                self.missed(i, now, None, false);
            }
            if self.peers[i].judge.poll_timeout().is_some_and(|t| t <= now) {
                self.peers[i].judge.handle_timeout(now);
                self.judge_check(i, None, false);
            }
            // As in `SiloHealthMonitor`, whose probe loop awaits the vote a
            // failed probe starts: no probe while one is pending.
            let peer = &self.peers[i];
            if peer.probe.is_none() && peer.next_probe <= now && !self.suspect_pending(peer.silo) {
                self.send_probe(i, now);
            }
        }
    }

    fn send_probe(&mut self, i: usize, now: Nanos) {
        let c = &self.config;
        let probe_timeout = c.probe_timeout;
        let extend = c.extend_probe_timeout_during_degradation;
        let target = self.peers[i].silo;
        let indirect = c.enable_indirect_probes
            && c.num_missed_probes_limit >= 2
            && self.peers[i].missed + 1 >= c.num_missed_probes_limit;
        let via = if indirect {
            self.intermediary(target, now)
        } else {
            None
        };
        let health = if extend {
            u64::from(self.health_at(now))
        } else {
            0
        };
        let periods = 1 + health + u64::from(via.is_some());
        let deadline = now + Nanos(probe_timeout.as_nanos() * periods);
        let id = self.next_probe_id;
        self.next_probe_id += 1;
        self.peers[i].probe = Some(Probe {
            id,
            sent: now,
            deadline,
            via,
        });
        match via {
            Some(v) => self.send(v, Message::IndirectPing { probe: id, target }),
            None => self.send(target, Message::Ping { probe: id }),
        }
    }

    /// An Active, non-stale silo other than this one and `target`, taken
    /// round-robin from a point hashed from the pair (module deviation note
    /// in [`super::agent`]).
    fn intermediary(&mut self, target: SiloId, now: Nanos) -> Option<SiloId> {
        let stale = self.config.stale_after();
        let eligible: Vec<SiloId> = self
            .view
            .rows
            .iter()
            .filter(|r| {
                r.status == SiloStatus::Active
                    && r.silo != self.me
                    && r.silo != target
                    && !is_stale(r, now, stale)
            })
            .map(|r| r.silo)
            .collect();
        if eligible.is_empty() {
            return None;
        }
        let start = ring_position(self.me, target.node);
        let k = start.wrapping_add(self.intermediary_cursor) % eligible.len() as u64;
        self.intermediary_cursor += 1;
        Some(eligible[k as usize])
    }

    /// A Pong for one of this silo's probes: a monitored peer's, or a relay's.
    pub(super) fn handle_pong(&mut self, now: Nanos, from: SiloId, probe: u64) {
        if let Some(k) = self.relays.iter().position(|r| r.id == probe) {
            let relay = self.relays.swap_remove(k);
            self.send(
                relay.requester,
                Message::IndirectReply {
                    probe: relay.probe,
                    outcome: IndirectOutcome::Answered,
                },
            );
            return;
        }
        let Some(i) = self.peers.iter().position(|p| {
            p.silo == from && p.probe.is_some_and(|q| q.id == probe && q.via.is_none())
        }) else {
            return;
        };
        self.answered(i, now);
    }

    pub(super) fn handle_indirect_ping(
        &mut self,
        now: Nanos,
        from: SiloId,
        probe: u64,
        target: SiloId,
    ) {
        if self.status != SiloStatus::Active || self.health_at(now) > 0 {
            let outcome = IndirectOutcome::Unknown;
            self.send(from, Message::IndirectReply { probe, outcome });
            return;
        }
        let id = self.next_probe_id;
        self.next_probe_id += 1;
        self.relays.push(Relay {
            id,
            requester: from,
            probe,
            deadline: now + self.config.probe_timeout,
        });
        self.send(target, Message::Ping { probe: id });
    }

    pub(super) fn handle_indirect_reply(
        &mut self,
        now: Nanos,
        from: SiloId,
        probe: u64,
        outcome: IndirectOutcome,
    ) {
        let Some(i) = self.peers.iter().position(|p| {
            p.probe
                .is_some_and(|q| q.id == probe && q.via == Some(from))
        }) else {
            return;
        };
        match outcome {
            IndirectOutcome::Answered => self.answered(i, now),
            IndirectOutcome::Failed => {
                let sent = self.peers[i].probe.map_or(now, |p| p.sent);
                self.peers[i].probe = None;
                self.peers[i].next_probe = (sent + self.config.probe_timeout).max(now);
                self.missed(i, now, Some(from), true);
            }
            IndirectOutcome::Unknown => {
                self.peers[i].probe = None;
                self.peers[i].next_probe = now + self.config.indirect_probe_retry;
            }
        }
    }

    /// Relays whose target did not answer in time.
    pub(super) fn relays_timeout(&mut self, now: Nanos) {
        let mut k = 0;
        while k < self.relays.len() {
            if self.relays[k].deadline <= now {
                let relay = self.relays.swap_remove(k);
                let outcome = IndirectOutcome::Failed;
                self.send(
                    relay.requester,
                    Message::IndirectReply {
                        probe: relay.probe,
                        outcome,
                    },
                );
            } else {
                k += 1;
            }
        }
    }

    fn answered(&mut self, i: usize, now: Nanos) {
        let peer = &mut self.peers[i];
        let sent = peer.probe.map_or(now, |p| p.sent);
        peer.probe = None;
        peer.missed = 0;
        peer.next_probe = (sent + self.config.probe_timeout).max(now);
        peer.judge.handle_reply(now, sent);
        self.health.probe_answered(now);
        self.judge_check(i, None, false);
    }

    /// A probe failed; `via` is the intermediary of a failed indirect probe
    /// (`indirect_failed`), whose vote the suspicion carries.
    fn missed(&mut self, i: usize, now: Nanos, via: Option<SiloId>, indirect_failed: bool) {
        self.peers[i].missed += 1;
        self.peers[i].judge.handle_miss(now);
        self.judge_check(i, via, indirect_failed);
    }

    /// Starts or ends a suspicion from the judge's decision; a suspicion
    /// (re)tries to vote. The classic judge suspects at once on a failed
    /// indirect probe; a detector judge decides alone.
    fn judge_check(&mut self, i: usize, via: Option<SiloId>, indirect_failed: bool) {
        let limit = self.config.num_missed_probes_limit;
        let peer = &mut self.peers[i];
        let classic = matches!(peer.judge, Judge::Classic);
        let failed = peer.judge.failed(peer.missed, limit) || (classic && indirect_failed);
        let target = peer.silo;
        if failed {
            if !peer.suspecting {
                peer.suspecting = true;
                self.events
                    .push_back(AgentEvent::SuspicionStarted { target });
            }
            let via = if classic { via } else { None };
            self.enqueue_suspect(target, via);
        } else if peer.suspecting && peer.missed == 0 {
            peer.suspecting = false;
            self.events.push_back(AgentEvent::SuspicionEnded { target });
        }
    }
}
