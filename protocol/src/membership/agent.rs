//! The Orleans membership agent of one silo, as a sans-IO state machine.
//!
//! Source: dotnet/orleans `MembershipTableManager` (views,
//! self-termination), with joining, IAmAlive and the suspect-or-kill loop
//! (`MembershipAgent`, `InnerTryToSuspectOrKill`) in [`super::tasks`],
//! probing (`ClusterHealthMonitor`, `SiloHealthMonitor`) in
//! [`super::probing`] and the health score (`LocalSiloHealthMonitor`) in
//! [`super::health`]; the rules are SPEC §8.1.
//!
//! Driving contract (as for detectors, quinn-proto style): the host calls
//! `handle_*` with the silo's local clock, then drains `poll_transmit`
//! (messages to other silos), `poll_table` (operations for the table
//! service) and `poll_event` (what happened), and calls `handle_timeout` at
//! `poll_timeout`. Local time may step backwards (a clock fault); the
//! agent's timers run on the latest time it was given, votes and IAmAlive
//! carry it too.
//!
//! Deviations from Orleans, each for a reason the simulation needs:
//! - Table operations of one silo run one at a time, queued in order
//!   (Orleans runs IAmAlive, refresh and suspicions as concurrent tasks);
//!   the order is what makes a run reproducible, and none of them waits
//!   long unless the table is down, when all of them would.
//! - An intermediary for an indirect probe is chosen round-robin over the
//!   eligible silos from a hashed starting point, not at random: a state
//!   machine draws no random numbers.
//! - Only Active silos probe and vote; a joining silo only probes for its
//!   connectivity check, and checks the Active silos that are not stale
//!   (a crashed silo not yet declared would otherwise block every join).

use std::collections::VecDeque;
use std::sync::Arc;

use crate::time::Nanos;

use super::config::{OrleansConfig, MAX_HEALTH_SCORE};
use super::health::Health;
use super::judge::JudgeSpec;
use super::messages::{AgentEvent, Message, Transmit};
use super::probing::{Peer, Relay};
use super::ring::Rings;
use super::table::{SiloId, SiloStatus, TableReply, TableRequest, TableResult, TableView};
use super::tasks::{Running, Step, Task};
use super::votes::is_stale;

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
    /// Active silos of the view, sorted, and the ring choice made from them.
    pub(super) active: Vec<SiloId>,
    pub(super) rings: Rings,
    pub(super) peers: Vec<Peer>,
    pub(super) relays: Vec<Relay>,
    /// By node: the generation last heard from and when.
    pub(super) heard: Vec<Option<(u32, Nanos)>>,
    pub(super) next_probe_id: u64,
    pub(super) next_op: u64,
    pub(super) tasks: VecDeque<Task>,
    pub(super) running: Option<Running>,
    pub(super) join_started: Nanos,
    pub(super) next_i_am_alive: Option<Nanos>,
    pub(super) next_refresh: Option<Nanos>,
    pub(super) health: Health,
    pub(super) intermediary_cursor: u64,
    pub(super) transmits: VecDeque<Transmit>,
    pub(super) requests: VecDeque<TableRequest>,
    pub(super) events: VecDeque<AgentEvent>,
}

impl OrleansAgent {
    /// A silo that starts at local time `now` and joins the cluster. The
    /// configuration must have passed [`OrleansConfig::validate`].
    pub fn new(config: OrleansConfig, judge: JudgeSpec, me: SiloId, now: Nanos) -> OrleansAgent {
        debug_assert!(config.validate().is_ok());
        let rings = Rings::new(me, config.num_probed_silos);
        let mut agent = OrleansAgent {
            config,
            judge,
            me,
            status: SiloStatus::Joining,
            now,
            view: Arc::new(TableView::default()),
            active: Vec::new(),
            rings,
            peers: Vec::new(),
            relays: Vec::new(),
            heard: Vec::new(),
            next_probe_id: 0,
            next_op: 0,
            tasks: VecDeque::new(),
            running: None,
            join_started: now,
            next_i_am_alive: None,
            next_refresh: None,
            health: Health::new(now),
            intermediary_cursor: 0,
            transmits: VecDeque::new(),
            requests: VecDeque::new(),
            events: VecDeque::new(),
        };
        agent.enqueue(Task::Join);
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

    /// The table as this silo last read it.
    pub fn view(&self) -> &Arc<TableView> {
        &self.view
    }

    /// The silos this silo probes, sorted.
    pub fn monitored(&self) -> impl Iterator<Item = SiloId> + '_ {
        self.peers.iter().map(|p| p.silo)
    }

    /// The local health score at `now` (0 healthy, 8 worst).
    pub fn health_score(&self, now: Nanos) -> u32 {
        self.health_at(now.max(self.now))
    }

    pub(super) fn health_at(&self, now: Nanos) -> u32 {
        if self.status != SiloStatus::Active {
            return MAX_HEALTH_SCORE;
        }
        if !self.config.local_health_degradation_monitoring {
            return 0;
        }
        let votes_against_me = self.view.row(self.me).map_or(0, |r| {
            super::votes::fresh_votes(r, now, self.config.death_vote_expiration).count() as u32
        });
        self.health.score(
            now,
            &self.config,
            votes_against_me,
            !self.peers.is_empty(),
            self.active.len(),
        )
    }

    // ----- inputs -----

    /// A message from `from` arrived.
    pub fn handle_message(&mut self, now: Nanos, from: SiloId, message: Message) {
        let now = self.advance(now);
        if self.status == SiloStatus::Dead {
            return;
        }
        self.hear(from, now);
        match message {
            Message::Ping { probe } => {
                self.health.probe_request(now);
                self.send(from, Message::Pong { probe });
            }
            Message::Pong { probe } => {
                if !self.connectivity_answer(from, probe) {
                    self.handle_pong(now, from, probe);
                }
            }
            Message::IndirectPing { probe, target } => {
                self.handle_indirect_ping(now, from, probe, target)
            }
            Message::IndirectReply { probe, outcome } => {
                self.handle_indirect_reply(now, from, probe, outcome)
            }
            Message::Gossip { version } => {
                if version > self.view.version {
                    self.enqueue(Task::Refresh);
                }
            }
        }
        self.after(now);
    }

    /// The table service answered an operation.
    pub fn handle_table_reply(&mut self, now: Nanos, reply: TableReply) {
        let now = self.advance(now);
        if self.status == SiloStatus::Dead {
            return;
        }
        let Some(running) = &self.running else {
            return;
        };
        let Step::Op(id, write) = running.step else {
            return;
        };
        if id != reply.id {
            return;
        }
        match reply.result {
            TableResult::Unavailable => self.back_off(
                now,
                self.config.error_backoff_min,
                self.config.error_backoff_max,
            ),
            TableResult::Conflict => self.back_off(
                now,
                self.config.status_backoff_min,
                self.config.status_backoff_max,
            ),
            TableResult::Read(view) => {
                self.process_view(now, view);
                if self.status != SiloStatus::Dead {
                    self.continue_task(now);
                }
            }
            TableResult::Written => self.written(now, write),
        }
        self.after(now);
    }

    /// The silo was stalled (a pause, CPU starvation) for `stall`, ending
    /// at `now`; Orleans' health monitor sees it as processing delay.
    pub fn handle_stall(&mut self, now: Nanos, stall: Nanos) {
        let now = self.advance(now);
        self.health.stall(now, stall, self.config.health_window());
    }

    /// A timer from [`OrleansAgent::poll_timeout`] expired (early or late
    /// calls are harmless).
    pub fn handle_timeout(&mut self, now: Nanos) {
        let now = self.advance(now);
        if self.status == SiloStatus::Dead {
            return;
        }
        if self.status == SiloStatus::Joining
            && now - self.join_started >= self.config.max_join_attempt_time
        {
            self.stop(AgentEvent::JoinGaveUp);
            return;
        }
        match self.running.as_ref().map(|r| &r.step) {
            Some(Step::Backoff(until)) if *until <= now => self.begin(now),
            Some(Step::Connectivity { deadline, .. }) if *deadline <= now => self.back_off(
                now,
                self.config.status_backoff_min,
                self.config.status_backoff_max,
            ),
            _ => {}
        }
        if self.next_i_am_alive.is_some_and(|t| t <= now) {
            self.next_i_am_alive = Some(next_on_grid(
                self.next_i_am_alive,
                now,
                self.config.i_am_alive_period,
            ));
            self.enqueue(Task::IAmAlive);
        }
        if self.next_refresh.is_some_and(|t| t <= now) {
            self.next_refresh = Some(next_on_grid(
                self.next_refresh,
                now,
                self.config.table_refresh_period,
            ));
            self.enqueue(Task::Refresh);
        }
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
        match self.running.as_ref().map(|r| &r.step) {
            Some(Step::Backoff(until)) => at(*until),
            Some(Step::Connectivity { deadline, .. }) => at(*deadline),
            _ => {}
        }
        if let Some(t) = self.next_i_am_alive {
            at(t);
        }
        if let Some(t) = self.next_refresh {
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

    /// The id the next table operation will get (tests match replies).
    #[cfg(test)]
    pub(super) fn next_op_for_tests(&self) -> u64 {
        self.next_op
    }

    // ----- internals -----

    pub(super) fn advance(&mut self, now: Nanos) -> Nanos {
        self.now = self.now.max(now);
        self.now
    }

    pub(super) fn send(&mut self, to: SiloId, message: Message) {
        self.transmits.push_back(Transmit { to, message });
    }

    fn hear(&mut self, from: SiloId, now: Nanos) {
        let i = from.node as usize;
        if self.heard.len() <= i {
            self.heard.resize(i + 1, None);
        }
        self.heard[i] = Some((from.generation, now));
    }

    /// Whether `silo` was heard from within the connection-liveness window.
    pub(super) fn heard_recently(&self, silo: SiloId, now: Nanos) -> bool {
        match self.heard.get(silo.node as usize).copied().flatten() {
            Some((generation, at)) => {
                generation == silo.generation && now - at < self.config.liveness_window()
            }
            None => false,
        }
    }

    /// Starts the next queued task if none runs, and tells the judges
    /// the health score when it changed.
    pub(super) fn after(&mut self, now: Nanos) {
        if self.status == SiloStatus::Dead {
            return;
        }
        if self.running.is_none() {
            if let Some(task) = self.tasks.pop_front() {
                self.running = Some(Running {
                    task,
                    step: Step::Backoff(now),
                    backoff: Nanos::ZERO,
                });
                self.begin(now);
            }
        }
        let score = self.health_at(now);
        if score != self.health.reported {
            self.health.reported = score;
            for p in &mut self.peers {
                p.judge.handle_health(now, score);
            }
        }
    }

    /// A read came back: takes it as the view if it is not older.
    pub(super) fn process_view(&mut self, now: Nanos, view: Arc<TableView>) {
        if view.version < self.view.version {
            return;
        }
        let advanced = view.version > self.view.version;
        self.view = view;
        if self
            .view
            .row(self.me)
            .is_some_and(|r| r.status == SiloStatus::Dead)
        {
            self.stop(AgentEvent::Terminated);
            return;
        }
        if advanced {
            self.events.push_back(AgentEvent::ViewChanged {
                version: self.view.version,
            });
        }
        self.update_monitoring(now);
    }

    /// Chooses the monitored silos from the view: the ring successors among
    /// Active silos, plus every silo with fresh votes against it or a stale
    /// IAmAlive.
    pub(super) fn update_monitoring(&mut self, now: Nanos) {
        if self.status != SiloStatus::Active {
            return;
        }
        let active: Vec<SiloId> = self
            .view
            .rows
            .iter()
            .filter(|r| r.status == SiloStatus::Active)
            .map(|r| r.silo)
            .collect();
        if active != self.active {
            self.rings.update(&active);
            self.active = active;
        }
        let c = &self.config;
        let mut wanted = self.rings.chosen().to_vec();
        for r in &self.view.rows {
            let watched = r.silo != self.me
                && matches!(r.status, SiloStatus::Joining | SiloStatus::Active)
                && (super::votes::fresh_votes(r, now, c.death_vote_expiration)
                    .next()
                    .is_some()
                    || is_stale(r, now, c.stale_after()));
            if watched && !wanted.contains(&r.silo) {
                wanted.push(r.silo);
            }
        }
        wanted.sort_unstable();
        self.set_peers(now, &wanted);
    }

    /// Stops the agent: it read itself Dead, or gave up joining.
    pub(super) fn stop(&mut self, event: AgentEvent) {
        self.status = SiloStatus::Dead;
        self.peers.clear();
        self.relays.clear();
        self.tasks.clear();
        self.running = None;
        self.next_i_am_alive = None;
        self.next_refresh = None;
        self.transmits.clear();
        self.requests.clear();
        self.events.push_back(event);
    }
}

/// The next instant of a periodic timer after `now` (skipping missed ticks,
/// as a periodic timer that was blocked fires once).
fn next_on_grid(due: Option<Nanos>, now: Nanos, period: Nanos) -> Nanos {
    let due = due.unwrap_or(now);
    if due > now {
        return due;
    }
    let missed = (now - due).as_nanos() / period.as_nanos() + 1;
    due + Nanos(missed * period.as_nanos())
}
