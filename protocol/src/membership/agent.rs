//! The Orleans membership agent of one silo, as a sans-IO state machine,
//! following Orleans 10.2 or main as its configuration's `version` says.
//!
//! Source: dotnet/orleans at v10.2.2 and at main e558829b:
//! `MembershipTableManager` (views, self-termination), with the table work
//! (joining, IAmAlive, refresh, the suspect-or-kill loop) in
//! [`super::lanes`] and [`super::suspect`], probing (`ClusterHealthMonitor`,
//! `SiloHealthMonitor`) in [`super::probing`], the health score
//! (`LocalSiloHealthMonitor`) in [`super::health`], the votes in
//! [`super::votes`]; the rules are SPEC §8.1 and docs/membership.md lists
//! each with its Orleans file and line in both versions.
//!
//! Driving contract (as for detectors, quinn-proto style): the host calls
//! `handle_*` with the silo's local clock, then drains `poll_transmit`
//! (messages to other silos), `poll_table` (operations for the table
//! service) and `poll_event` (what happened), and calls `handle_timeout` at
//! `poll_timeout`. The host hands in 64 bits of entropy at construction and
//! with every `handle_timeout`, from which the agent makes Orleans' random
//! choices ([`super::entropy`]). A message the host cannot deliver because
//! no process of that silo runs (crashed, or replaced by a newer
//! generation) comes back as [`OrleansAgent::handle_unreachable`], as a
//! refused or reset connection does; a paused silo keeps its connections.
//! Local time may step backwards (a clock fault); the agent's timers run
//! on the latest time it was given, votes and IAmAlive carry it too.
//!
//! Deviations from Orleans:
//! - The ring hash is fdlab's ([`super::ring`]).
//! - After a status write the agent reads the table again before it
//!   gossips ([`super::lanes`]).
//! - `EvictStaleStateSilos` (a silo Joining for longer than
//!   `MaxJoinAttemptTime` is suspected by the others) is not modelled: a
//!   joining silo that cannot join gives up and stops by itself after that
//!   time, and one that crashed while joining stops its IAmAlive, goes
//!   stale and is probed and voted out like any stale silo.

use std::collections::VecDeque;
use std::sync::Arc;

use crate::probe::threshold_std_devs;
use crate::time::Nanos;

use super::config::{OrleansConfig, OrleansVersion, MAX_HEALTH_SCORE};
use super::entropy::Entropy;
use super::health::{Health, Inputs};
use super::judge::JudgeSpec;
use super::lanes::{Connectivity, Lane, LaneId, Suspicion};
use super::messages::{AgentEvent, Message, Transmit};
use super::probing::{Peer, Relay};
use super::ring::Rings;
use super::table::{Row, SiloId, SiloStatus, TableReply, TableRequest, TableView};
use super::votes::{fresh_votes, is_stale};

/// One silo's membership agent (see the module documentation).
#[derive(Clone, Debug)]
pub struct OrleansAgent {
    pub(super) config: OrleansConfig,
    pub(super) judge: JudgeSpec,
    pub(super) me: SiloId,
    pub(super) status: SiloStatus,
    /// The latest local time handed in.
    pub(super) now: Nanos,
    pub(super) view: Arc<TableView>,
    /// The index of this silo's own row in `view`, if it has one: read
    /// before every probe (a binary search of a large view is a cache miss
    /// per step).
    pub(super) my_row: Option<usize>,
    /// Active silos in the view (`ActiveNodeCount`).
    pub(super) active_silos: usize,
    pub(super) rings: Rings,
    /// The version of the view `rings` last chose from. Candidates follow
    /// from the rows' silos and statuses, which only `InsertRow` and
    /// `UpdateRow` change, and each of those bumps the table version
    /// (Orleans 10.2.2
    /// `src/Orleans.Runtime/MembershipService/MembershipTableManager.cs`
    /// lines 416-423, 903 and 932 write with `table.Version.Next()`;
    /// `UpdateIAmAlive`, lines 207-215, takes no version; main at
    /// e558829: lines 418, 919, 948 and 211): a view of the
    /// same version has the same candidates, so the rings need no look at
    /// them again (at 1,000 silos comparing them was a sixth of a run).
    pub(super) rings_version: Option<u64>,
    pub(super) peers: Vec<Peer>,
    pub(super) relays: Vec<Relay>,
    /// By node: the generation whose connection is open, and when a message
    /// last arrived on it.
    pub(super) connections: Vec<Option<(u32, Nanos)>>,
    pub(super) next_probe_id: u64,
    pub(super) next_op: u64,
    pub(super) lanes: [Lane; 4],
    /// The suspect-or-kill channel.
    pub(super) suspicions: VecDeque<Suspicion>,
    pub(super) connectivity: Option<Connectivity>,
    /// The join's connectivity check passed: the next status write is Active.
    pub(super) joined_check_passed: bool,
    pub(super) join_started: Nanos,
    pub(super) health: Health,
    pub(super) rng: Entropy,
    /// The z at which the logistic phi is 8 (main's learned timeouts).
    pub(super) k: f64,
    pub(super) transmits: VecDeque<Transmit>,
    pub(super) requests: VecDeque<TableRequest>,
    pub(super) events: VecDeque<AgentEvent>,
}

impl OrleansAgent {
    /// A silo that starts at local time `now` and joins the cluster, with
    /// the host's `entropy`. The configuration must have passed
    /// [`OrleansConfig::validate`].
    pub fn new(
        config: OrleansConfig,
        judge: JudgeSpec,
        me: SiloId,
        now: Nanos,
        entropy: u64,
    ) -> OrleansAgent {
        debug_assert!(config.validate().is_ok());
        let rings = Rings::new(me, config.num_probed_silos);
        let mut agent = OrleansAgent {
            config,
            judge,
            me,
            status: SiloStatus::Joining,
            now,
            view: Arc::new(TableView::default()),
            my_row: None,
            active_silos: 0,
            rings,
            rings_version: None,
            peers: Vec::new(),
            relays: Vec::new(),
            connections: Vec::new(),
            next_probe_id: 0,
            next_op: 0,
            lanes: Default::default(),
            suspicions: VecDeque::new(),
            connectivity: None,
            joined_check_passed: false,
            join_started: now,
            health: Health::new(now),
            rng: Entropy::new(entropy),
            k: threshold_std_devs(),
            transmits: VecDeque::new(),
            requests: VecDeque::new(),
            events: VecDeque::new(),
        };
        agent.lane(LaneId::Status).wake = Some(now);
        agent.after(now);
        agent
    }

    // ----- getters -----

    pub fn me(&self) -> SiloId {
        self.me
    }

    pub fn status(&self) -> SiloStatus {
        self.status
    }

    pub fn version(&self) -> OrleansVersion {
        self.config.version
    }

    /// The table as this silo last read it.
    pub fn view(&self) -> &Arc<TableView> {
        &self.view
    }

    /// The silos this silo probes, sorted.
    pub fn monitored(&self) -> impl Iterator<Item = SiloId> + '_ {
        self.peers.iter().map(|p| p.silo)
    }

    /// The local health score at `now` that a probe starting then would be
    /// scaled by (0 healthy, 8 worst).
    pub fn health_score(&self, now: Nanos) -> u32 {
        self.local_score(now.max(self.now), self.config.probe_timeout)
    }

    // ----- inputs -----

    /// A message from `from` arrived.
    pub fn handle_message(&mut self, now: Nanos, from: SiloId, message: Message) {
        let now = self.advance(now);
        if self.status == SiloStatus::Dead {
            return;
        }
        self.heard(from, now);
        match message {
            Message::Ping { probe } => {
                self.health.probe_request(now);
                self.send(from, Message::Pong { probe });
            }
            Message::Pong { probe } => {
                if !self.connectivity_answer(now, from, true) {
                    self.handle_pong(now, from, probe);
                }
            }
            Message::IndirectPing {
                probe,
                target,
                wait,
            } => self.handle_indirect_ping(now, from, probe, target, wait),
            Message::IndirectReply {
                probe,
                answered,
                health,
            } => self.handle_indirect_reply(now, from, probe, answered, health),
            // `RefreshFromSnapshot`: taken if newer, no table read.
            Message::Gossip { view } => self.process_view(now, view),
        }
        self.after(now);
    }

    /// The table service answered an operation.
    pub fn handle_table_reply(&mut self, now: Nanos, reply: TableReply) {
        let now = self.advance(now);
        if self.status == SiloStatus::Dead {
            return;
        }
        self.lane_reply(now, reply.id, reply.result);
        self.after(now);
    }

    /// The event the silo handles at `now` came `stall` late (a pause, CPU
    /// starvation): Orleans sees it as thread-pool queue delay.
    pub fn handle_stall(&mut self, now: Nanos, stall: Nanos) {
        let now = self.advance(now);
        self.health.stall(now, stall);
    }

    /// The connection to `silo` was refused or reset (its process is gone):
    /// what was waiting on it fails now, and it no longer counts as open.
    pub fn handle_unreachable(&mut self, now: Nanos, silo: SiloId) {
        let now = self.advance(now);
        if self.status == SiloStatus::Dead {
            return;
        }
        if let Some(slot) = self.connections.get_mut(silo.node as usize) {
            if slot.is_some_and(|(g, _)| g == silo.generation) {
                *slot = None;
            }
        }
        self.connectivity_answer(now, silo, false);
        self.unreachable_probes(now, silo);
        self.after(now);
    }

    /// A timer from [`OrleansAgent::poll_timeout`] expired (early or late
    /// calls are harmless), with fresh `entropy` from the host.
    pub fn handle_timeout(&mut self, now: Nanos, entropy: u64) {
        let now = self.advance(now);
        if self.status == SiloStatus::Dead {
            return;
        }
        self.rng.absorb(entropy);
        if self.status == SiloStatus::Joining
            && now - self.join_started >= self.config.max_join_attempt_time
        {
            self.stop(AgentEvent::JoinGaveUp);
            return;
        }
        self.check_connectivity(now);
        self.relays_timeout(now);
        self.peers_timeout(now);
        self.after(now);
    }

    // ----- outputs -----

    /// The next local instant at which something is due, if any.
    pub fn poll_timeout(&self) -> Option<Nanos> {
        if self.status == SiloStatus::Dead {
            return None;
        }
        let mut next: Option<Nanos> = None;
        let mut at = |t: Nanos| next = Some(next.map_or(t, |n: Nanos| n.min(t)));
        if self.status == SiloStatus::Joining {
            at(self.join_started + self.config.max_join_attempt_time);
        }
        if let Some(t) = self.lanes_due() {
            at(t);
        }
        for r in &self.relays {
            at(r.deadline);
        }
        if let Some(t) = self.peers_due() {
            at(t);
        }
        next
    }

    /// The next message to send.
    pub fn poll_transmit(&mut self) -> Option<Transmit> {
        self.transmits.pop_front()
    }

    /// The next operation for the table service.
    pub fn poll_table(&mut self) -> Option<TableRequest> {
        self.requests.pop_front()
    }

    /// The next thing that happened.
    pub fn poll_event(&mut self) -> Option<AgentEvent> {
        self.events.pop_front()
    }

    // ----- internals -----

    pub(super) fn advance(&mut self, now: Nanos) -> Nanos {
        self.now = self.now.max(now);
        self.now
    }

    pub(super) fn send(&mut self, to: SiloId, message: Message) {
        self.transmits.push_back(Transmit { to, message });
    }

    /// A message from `from` arrived on its (now open) connection.
    fn heard(&mut self, from: SiloId, now: Nanos) {
        let i = from.node as usize;
        if self.connections.len() <= i {
            self.connections.resize(i + 1, None);
        }
        self.connections[i] = Some((from.generation, now));
    }

    /// main's `IsConnectionActiveWithinMonitoringWindow`
    /// (`ClusterHealthMonitor.cs:365-382`): a connection to `silo` is open
    /// and a message arrived on it within the failure-detection window.
    /// Once its connections are gone (`ConnectionManager.
    /// GetElapsedSinceLastMessageReceived` returns null) the vote goes
    /// through.
    pub(super) fn connection_alive(&self, silo: SiloId, now: Nanos) -> bool {
        match self.connections.get(silo.node as usize).copied().flatten() {
            Some((generation, at)) => {
                generation == silo.generation && now - at <= self.config.failure_detection_window()
            }
            None => false,
        }
    }

    /// The local health score a probe or an intermediary's answer uses:
    /// 10.2's whole score, or main's Local score over `lookback`.
    pub(super) fn local_score(&self, now: Nanos, lookback: Nanos) -> u32 {
        if !self.config.local_health_degradation_monitoring {
            return 0;
        }
        match self.config.version {
            OrleansVersion::V10_2 => self.local_score_10_2(now),
            OrleansVersion::Main => self.health.score_main(now, lookback),
        }
    }

    /// 10.2's `GetLocalHealthDegradationScore(now)`.
    pub(super) fn local_score_10_2(&self, now: Nanos) -> u32 {
        if !self.config.local_health_degradation_monitoring {
            return 0;
        }
        let mine = self.my_row();
        let votes_against_me = mine.map_or(0, |r| {
            fresh_votes(r, now, self.config.death_vote_expiration)
                .filter(|v| {
                    self.view
                        .row(v.voter)
                        .is_some_and(|s| s.status == SiloStatus::Active)
                })
                .count() as u32
        });
        let inputs = Inputs {
            active: mine.is_some_and(|r| r.status == SiloStatus::Active),
            votes_against_me,
            active_silos: self.active_silos,
            monitors: self.peers.len(),
            last_response: self.peers.iter().map(|p| p.last_response).max(),
        };
        self.health.score_10_2(now, &self.config, &inputs)
    }

    /// This silo's own row in its view.
    #[inline]
    pub(super) fn my_row(&self) -> Option<&Row> {
        self.my_row.map(|i| &self.view.rows[i])
    }

    /// Starts what the lanes have due, and tells detector judges the health
    /// score when it changed (an adaptive-probe judge scales its timeout
    /// by it).
    pub(super) fn after(&mut self, now: Nanos) {
        if self.status == SiloStatus::Dead {
            return;
        }
        self.drive_lanes(now);
        if matches!(self.judge, JudgeSpec::Classic) {
            return;
        }
        let score = if self.status == SiloStatus::Active {
            self.local_score(now, self.config.probe_timeout)
        } else {
            MAX_HEALTH_SCORE
        };
        if score != self.health.reported {
            self.health.reported = score;
            for p in &mut self.peers {
                p.judge.handle_health(now, score);
            }
        }
    }

    /// A read or a gossiped snapshot: taken as the view if it is not older
    /// (`ProcessTableUpdate`; views only move forward).
    pub(super) fn process_view(&mut self, now: Nanos, view: Arc<TableView>) {
        if view.version < self.view.version {
            return;
        }
        let advanced = view.version > self.view.version;
        self.view = view;
        self.my_row = self
            .view
            .rows
            .binary_search_by_key(&self.me, |r| r.silo)
            .ok();
        if self.my_row().is_some_and(|r| r.status == SiloStatus::Dead) {
            self.stop(AgentEvent::Terminated);
            return;
        }
        if advanced {
            self.events.push_back(AgentEvent::ViewChanged {
                version: self.view.version,
            });
        }
        self.active_silos = self.view.derived().active;
        self.update_monitoring(now);
    }

    /// `ClusterHealthMonitor.UpdateMonitoredSilos` (10.2.2 lines 156-281,
    /// the same in main): a silo whose own row is Joining or Active probes
    /// every Joining, Active or ShuttingDown silo with fresh votes against
    /// it or a stale IAmAlive and, once Active, the successors on
    /// `num_probed_silos` hash rings of those silos. The view's candidates,
    /// voted rows and IAmAlive order are computed once for every silo that
    /// shares it ([`TableView::derived`]).
    pub(super) fn update_monitoring(&mut self, now: Nanos) {
        let own = self.my_row().map(|r| r.status);
        if !matches!(own, Some(SiloStatus::Joining | SiloStatus::Active)) {
            if !self.peers.is_empty() {
                self.set_peers(now, &[]);
            }
            self.rings_version = None;
            return;
        }
        let view = Arc::clone(&self.view);
        let derived = view.derived();
        let mut wanted = if own == Some(SiloStatus::Active) {
            if self.rings_version == Some(view.version) {
                debug_assert!(
                    !self.rings.update(&derived.candidates),
                    "a view of version {} with other candidates",
                    view.version
                );
            } else {
                self.rings.update(&derived.candidates);
                self.rings_version = Some(view.version);
            }
            self.rings.chosen().to_vec()
        } else {
            Vec::new()
        };
        let c = &self.config;
        let suspected = derived.voted.iter().map(|&i| &view.rows[i]).filter(|r| {
            fresh_votes(r, now, c.death_vote_expiration)
                .next()
                .is_some()
        });
        let stale = derived
            .by_alive
            .iter()
            .map(|&(_, i)| &view.rows[i])
            .take_while(|r| is_stale(r, now, c.stale_after()));
        for r in suspected.chain(stale) {
            if r.silo.node != self.me.node && !wanted.contains(&r.silo) {
                wanted.push(r.silo);
            }
        }
        wanted.sort_unstable();
        self.set_peers(now, &wanted);
    }

    /// Stops the agent: it read itself Dead, killed itself, or gave up
    /// joining.
    pub(super) fn stop(&mut self, event: AgentEvent) {
        self.status = SiloStatus::Dead;
        self.peers.clear();
        self.relays.clear();
        self.clear_lanes();
        self.transmits.clear();
        self.requests.clear();
        self.events.push_back(event);
    }
}
