//! Probing the monitored silos (`SiloHealthMonitor`, one loop per peer),
//! what a probe result leads to (`ClusterHealthMonitor.OnProbeResultInternal`)
//! and the intermediary's side of an indirect probe
//! (`MembershipSystemTarget.ProbeIndirectly`). Line numbers are of
//! `src/Orleans.Runtime/MembershipService/SiloHealthMonitor.cs`, v10.2.2 /
//! main e558829b, unless another file is named.
//!
//! | rule | 10.2 | main |
//! |---|---|---|
//! | first probe | random in `[0, probe_timeout)` (169) | the same (181) |
//! | direct or indirect | indirect once `failed >= limit - 1` and another Active, non-stale silo exists (192) | the same (206) |
//! | wait | `probe_timeout x (1 + score + indirect)` (232-257) | learned, `x (1 + score + indirect)`, clamped to [min, max] (275-297, [`super::probe_timeout`]) |
//! | score | 10.2's full score at the probe (239) | the Local score over the last period (260-272) |
//! | next probe | a period after this one began, or at once (`AsyncTimer.NextTick`) | `period - elapsed`, the period recomputed after the probe (246-257, 299-308) |
//! | intermediary | random among the eligible (204) | the same (220) |
//! | its wait | the whole timeout (209): a silent target makes the requester give up first, an "unknown" | the timeout less `timeout / (2 + score)` (225, 310-318) |
//! | failure reported by an unwell intermediary | unknown; recused until the view changes; next probe in 250 ms (211-218) | unknown; recused until the view changes (228-234) |
//! | indirect request that fails or times out | unknown (367-372) | the same (427-432) |
//! | vote | direct: `failed >= limit`; indirect: a failure, with the intermediary's vote (`ClusterHealthMonitor.cs` 316-335) | the same, unless a message arrived on an open connection from the target within `max_probe_timeout x limit` (`ClusterHealthMonitor.cs` 329-357, 365-382) |
//!
//! The probe loop does not wait for a vote: `TryToSuspectOrKill` only
//! queues it ([`super::lanes`]). A probe whose connection is refused or
//! reset fails at once ([`OrleansAgent::unreachable_probes`]): a killed
//! process refuses connections (`MessageCenter` rejects the message).

use crate::time::Nanos;

use super::agent::OrleansAgent;
use super::config::OrleansVersion;
use super::judge::Judge;
use super::messages::{AgentEvent, Message};
use super::probe_timeout::{intermediary_wait, LearnedTimeout};
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
    /// The local health score the probe's wait was scaled by.
    score: u32,
}

/// How a probe ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Outcome {
    /// Answered (directly, or the intermediary's probe was).
    Answered,
    /// A direct probe got no answer in time, or was refused.
    Missed,
    /// The intermediary's probe failed and the intermediary is healthy.
    IndirectFailed,
    /// The intermediary's probe failed but the intermediary is unwell.
    Unwell,
    /// The indirect request itself failed or timed out.
    Unknown,
}

/// One monitored silo and its probe loop.
#[derive(Clone, Debug)]
pub(crate) struct Peer {
    pub(crate) silo: SiloId,
    pub(crate) judge: Judge,
    /// Consecutive failed probes (`_failedProbes`).
    failed: u32,
    probe: Option<Probe>,
    next_probe: Nanos,
    suspecting: bool,
    /// main: the learned timeout.
    learned: Option<Box<LearnedTimeout>>,
    /// main: the period after the last probe (`previousProbePeriod`).
    period: Nanos,
    /// Intermediaries recused since the view at `recused_version`.
    recused: Vec<SiloId>,
    recused_version: u64,
    /// The last response (direct, or any indirect reply), or when the
    /// monitor started (`ElapsedSinceLastResponse`).
    pub(crate) last_response: Nanos,
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
    target: SiloId,
    requester: SiloId,
    /// The requester's probe id.
    probe: u64,
    pub(crate) deadline: Nanos,
    arrived: Nanos,
    /// 10.2: the score read when the request arrived.
    health: u32,
}

impl OrleansAgent {
    /// Makes the monitored set exactly `wanted` (sorted): peers kept keep
    /// their state; a new one probes first after a random delay.
    pub(super) fn set_peers(&mut self, now: Nanos, wanted: &[SiloId]) {
        let mut old = std::mem::take(&mut self.peers).into_iter().peekable();
        let mut peers = Vec::with_capacity(wanted.len());
        let main = self.config.version == OrleansVersion::Main;
        for &silo in wanted {
            while old.peek().is_some_and(|p| p.silo < silo) {
                let gone = old.next().expect("peeked");
                self.dropped(gone);
            }
            match old.peek() {
                Some(p) if p.silo == silo => peers.push(old.next().expect("peeked")),
                _ => {
                    let delay = self.rng.between(Nanos::ZERO, self.config.probe_timeout);
                    peers.push(Peer {
                        silo,
                        judge: Judge::start(&self.judge, now),
                        failed: 0,
                        probe: None,
                        next_probe: now + delay,
                        suspecting: false,
                        learned: main.then(|| Box::new(LearnedTimeout::new())),
                        period: self.config.probe_timeout,
                        recused: Vec::new(),
                        recused_version: 0,
                        last_response: now,
                    })
                }
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
        // One pass over the peers (read after every input: docs/perf-history.md).
        let mut due: Option<Nanos> = None;
        for p in &self.peers {
            let mut t = p.due();
            if let Some(judge) = p.judge.poll_timeout() {
                t = t.min(judge);
            }
            due = Some(due.map_or(t, |d| d.min(t)));
        }
        due
    }

    /// Probe deadlines, due probes and judge timers.
    pub(super) fn peers_timeout(&mut self, now: Nanos) {
        for i in 0..self.peers.len() {
            if let Some(p) = self.peers[i].probe.filter(|p| p.deadline <= now) {
                let outcome = if p.via.is_some() {
                    Outcome::Unknown
                } else {
                    Outcome::Missed
                };
                self.resolve(i, now, outcome);
            }
            if self.peers[i].judge.poll_timeout().is_some_and(|t| t <= now) {
                self.peers[i].judge.handle_timeout(now);
                self.judge_verdict(i, now);
            }
            let peer = &self.peers[i];
            if peer.probe.is_none() && peer.next_probe <= now {
                self.start_probe(i, now);
            }
        }
    }

    /// The wait of a probe scaled by `factor`, and for main the period.
    fn wait(&self, i: usize, factor: u32) -> Nanos {
        let c = &self.config;
        match &self.peers[i].learned {
            Some(learned) => learned.bounded(
                c.probe_timeout,
                self.k,
                c.min_probe_timeout(),
                c.max_probe_timeout(),
                factor,
            ),
            None => Nanos(c.probe_timeout.as_nanos() * u64::from(factor)),
        }
    }

    fn start_probe(&mut self, i: usize, now: Nanos) {
        let c = &self.config;
        let target = self.peers[i].silo;
        // Only a probe that may go indirect needs the eligible
        // intermediaries: a scan of the view, which a direct probe of a
        // healthy peer (nearly every probe) skips.
        let may_go_indirect =
            c.enable_indirect_probes && self.peers[i].failed + 1 >= c.num_missed_probes_limit;
        let others = if may_go_indirect {
            self.intermediaries(i, now)
        } else {
            Vec::new()
        };
        let direct = others.is_empty();
        let c = &self.config;
        let score = if c.extend_probe_timeout_during_degradation {
            let lookback = self.peers[i].period;
            self.local_score(now, lookback)
        } else {
            0
        };
        let factor = 1 + score + u32::from(!direct);
        let timeout = self.wait(i, factor);
        let id = self.next_probe_id;
        self.next_probe_id += 1;
        let via = if direct {
            self.send(target, Message::Ping { probe: id });
            None
        } else {
            let via = others[self.rng.below(others.len() as u64) as usize];
            let wait = match self.config.version {
                OrleansVersion::V10_2 => timeout,
                OrleansVersion::Main => intermediary_wait(timeout, score),
            };
            let message = Message::IndirectPing {
                probe: id,
                target,
                wait,
            };
            self.send(via, message);
            Some(via)
        };
        self.peers[i].probe = Some(Probe {
            id,
            sent: now,
            deadline: now + timeout,
            via,
            score,
        });
    }

    /// The silos an indirect probe of peer `i` may go through: Active, not
    /// stale, neither this silo nor the target, nor recused since the view
    /// last changed.
    fn intermediaries(&mut self, i: usize, now: Nanos) -> Vec<SiloId> {
        if self.peers[i].recused_version != self.view.version {
            self.peers[i].recused.clear();
            self.peers[i].recused_version = self.view.version;
        }
        let stale = self.config.stale_after();
        let (target, recused) = (self.peers[i].silo, &self.peers[i].recused);
        self.view
            .rows
            .iter()
            .filter(|r| {
                r.status == SiloStatus::Active
                    && r.silo != self.me
                    && r.silo != target
                    && !is_stale(r, now, stale)
                    && !recused.contains(&r.silo)
            })
            .map(|r| r.silo)
            .collect()
    }

    /// Ends peer `i`'s probe with `outcome`, acts on it, and schedules the
    /// next probe.
    fn resolve(&mut self, i: usize, now: Nanos, outcome: Outcome) {
        let Some(probe) = self.peers[i].probe.take() else {
            return;
        };
        let peer = &mut self.peers[i];
        // A direct answer, or any reply of an intermediary, is a response
        // (10.2 lines 298 and 337, main 357 and 397).
        if matches!(
            outcome,
            Outcome::Answered | Outcome::IndirectFailed | Outcome::Unwell
        ) {
            peer.last_response = now;
        }
        let mut retry = None;
        match outcome {
            Outcome::Answered => {
                peer.failed = 0;
                if probe.via.is_none() {
                    if let Some(learned) = &mut peer.learned {
                        learned.record(now - probe.sent);
                    }
                }
                peer.judge.handle_reply(now, probe.sent);
            }
            Outcome::Missed | Outcome::IndirectFailed => {
                peer.failed += 1;
                peer.judge.handle_miss(now);
            }
            Outcome::Unwell => {
                let via = probe.via.expect("an indirect probe");
                peer.recused.push(via);
                if self.config.version == OrleansVersion::V10_2 {
                    retry = Some(now + self.config.indirect_probe_retry());
                }
            }
            Outcome::Unknown => {}
        }
        self.on_probe_result(i, now, outcome, probe.via);
        let next = match (retry, self.config.version) {
            (Some(at), _) => at,
            (None, OrleansVersion::V10_2) => (probe.sent + self.config.probe_timeout).max(now),
            (None, OrleansVersion::Main) => {
                let factor = 1 + probe.score + u32::from(probe.via.is_some());
                let period = self.wait(i, factor);
                self.peers[i].period = period;
                (probe.sent + period).max(now)
            }
        };
        self.peers[i].next_probe = next;
    }

    /// What a probe result leads to (`ClusterHealthMonitor.OnProbeResultInternal`;
    /// with a detector judge, the judge decides instead of the count).
    fn on_probe_result(&mut self, i: usize, now: Nanos, outcome: Outcome, via: Option<SiloId>) {
        let limit = self.config.num_missed_probes_limit;
        let peer = &self.peers[i];
        let target = peer.silo;
        let vote = match &peer.judge {
            Judge::Classic => match outcome {
                Outcome::Missed => (peer.failed >= limit).then_some(None),
                Outcome::IndirectFailed => Some(via),
                _ => None,
            },
            Judge::Detector(_) => peer.judge.failed(peer.failed, limit).then_some(None),
        };
        if outcome == Outcome::Answered && peer.suspecting {
            self.peers[i].suspecting = false;
            self.events.push_back(AgentEvent::SuspicionEnded { target });
        }
        if let Some(via) = vote {
            self.vote(i, now, via);
        }
    }

    /// A detector judge's verdict changed on a timer.
    fn judge_verdict(&mut self, i: usize, now: Nanos) {
        let peer = &self.peers[i];
        if peer
            .judge
            .failed(peer.failed, self.config.num_missed_probes_limit)
        {
            self.vote(i, now, None);
        }
    }

    /// Starts a suspicion and asks for a vote, unless main's
    /// connection-liveness check holds it.
    fn vote(&mut self, i: usize, now: Nanos, via: Option<SiloId>) {
        let target = self.peers[i].silo;
        if !self.peers[i].suspecting {
            self.peers[i].suspecting = true;
            self.events
                .push_back(AgentEvent::SuspicionStarted { target });
        }
        if self.config.connection_liveness_check() && self.connection_alive(target, now) {
            self.events.push_back(AgentEvent::VoteWithheld { target });
            return;
        }
        self.suspect(target, via);
    }

    /// A Pong for one of this silo's probes: a monitored peer's, or a relay's.
    pub(super) fn handle_pong(&mut self, now: Nanos, from: SiloId, probe: u64) {
        if let Some(k) = self.relays.iter().position(|r| r.id == probe) {
            let relay = self.relays.swap_remove(k);
            self.relay_reply(now, relay, true);
            return;
        }
        if let Some(i) = self.peers.iter().position(|p| {
            p.silo == from && p.probe.is_some_and(|q| q.id == probe && q.via.is_none())
        }) {
            self.resolve(i, now, Outcome::Answered);
        }
    }

    /// Another silo asks this one to probe `target` within `wait`.
    pub(super) fn handle_indirect_ping(
        &mut self,
        now: Nanos,
        from: SiloId,
        probe: u64,
        target: SiloId,
        wait: Nanos,
    ) {
        // 10.2 reads its score before probing (`MembershipSystemTarget.cs:82`).
        let health = self.local_score_10_2(now);
        let id = self.next_probe_id;
        self.next_probe_id += 1;
        self.relays.push(Relay {
            id,
            target,
            requester: from,
            probe,
            deadline: now + wait,
            arrived: now,
            health,
        });
        self.send(target, Message::Ping { probe: id });
    }

    /// Answers the requester of `relay`, with this silo's health score:
    /// 10.2's as it was when the request came, main's Local score over the
    /// probe (`MembershipSystemTarget.ProbeIndirectly`, main lines 82-118).
    fn relay_reply(&mut self, now: Nanos, relay: Relay, answered: bool) {
        let health = match self.config.version {
            OrleansVersion::V10_2 => relay.health,
            OrleansVersion::Main => self.local_score(now, now - relay.arrived),
        };
        let message = Message::IndirectReply {
            probe: relay.probe,
            answered,
            health,
        };
        self.send(relay.requester, message);
    }

    pub(super) fn handle_indirect_reply(
        &mut self,
        now: Nanos,
        from: SiloId,
        probe: u64,
        answered: bool,
        health: u32,
    ) {
        let Some(i) = self.peers.iter().position(|p| {
            p.probe
                .is_some_and(|q| q.id == probe && q.via == Some(from))
        }) else {
            return;
        };
        let outcome = match (answered, health) {
            (true, _) => Outcome::Answered,
            (false, 0) => Outcome::IndirectFailed,
            (false, _) => Outcome::Unwell,
        };
        self.resolve(i, now, outcome);
    }

    /// Relays whose target did not answer in time.
    pub(super) fn relays_timeout(&mut self, now: Nanos) {
        let mut k = 0;
        while k < self.relays.len() {
            if self.relays[k].deadline <= now {
                let relay = self.relays.swap_remove(k);
                self.relay_reply(now, relay, false);
            } else {
                k += 1;
            }
        }
    }

    /// The connection to `silo` was refused or reset: a direct probe of it
    /// fails now, an indirect probe through it ends unknown, and a probe
    /// this silo makes of it for another fails now.
    pub(super) fn unreachable_probes(&mut self, now: Nanos, silo: SiloId) {
        for i in 0..self.peers.len() {
            let outcome = match self.peers[i].probe {
                Some(p) if p.via == Some(silo) => Outcome::Unknown,
                Some(p) if p.via.is_none() && self.peers[i].silo == silo => Outcome::Missed,
                _ => continue,
            };
            self.resolve(i, now, outcome);
        }
        let mut k = 0;
        while k < self.relays.len() {
            if self.relays[k].target == silo {
                let relay = self.relays.swap_remove(k);
                self.relay_reply(now, relay, false);
            } else {
                k += 1;
            }
        }
    }
}
