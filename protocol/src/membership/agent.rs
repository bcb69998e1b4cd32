//! The Orleans membership agent of one silo, as a sans-IO state machine.
//!
//! Source: dotnet/orleans `MembershipAgent` (joining, IAmAlive),
//! `MembershipTableManager` (views, the suspect-or-kill loop, back-offs,
//! self-termination), `ClusterHealthMonitor` and `SiloHealthMonitor`
//! (probing, in [`super::probing`]) and `LocalSiloHealthMonitor` (the
//! health score, in [`super::health`]); the rules are SPEC §8.1.
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
use super::table::{
    OpId, Row, SiloId, SiloStatus, TableOp, TableReply, TableRequest, TableResult, TableView,
};
use super::votes::{cast, is_stale, quorum};

/// Work on the table, run one at a time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Task {
    Join,
    IAmAlive,
    Refresh,
    Suspect { target: SiloId, via: Option<SiloId> },
}

impl Task {
    fn same(&self, other: &Task) -> bool {
        match (self, other) {
            (Task::Suspect { target: a, .. }, Task::Suspect { target: b, .. }) => a == b,
            _ => self == other,
        }
    }
}

/// What a table operation in flight was for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Write {
    Read,
    InsertSelf,
    DeclareOld,
    Activate,
    Vote { target: SiloId, declared: bool },
    IAmAlive,
}

#[derive(Clone, Debug, PartialEq)]
enum Step {
    Op(OpId, Write),
    Backoff(Nanos),
    /// The join's connectivity check: probes still unanswered, and its end.
    Connectivity {
        pending: Vec<(SiloId, u64)>,
        deadline: Nanos,
    },
}

#[derive(Clone, Debug)]
struct Running {
    task: Task,
    step: Step,
    /// The last back-off waited in this task (zero: none yet).
    backoff: Nanos,
}

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
    active: Vec<SiloId>,
    rings: Rings,
    pub(super) peers: Vec<Peer>,
    pub(super) relays: Vec<Relay>,
    /// By node: the generation last heard from and when.
    heard: Vec<Option<(u32, Nanos)>>,
    pub(super) next_probe_id: u64,
    next_op: u64,
    tasks: VecDeque<Task>,
    running: Option<Running>,
    join_started: Nanos,
    next_i_am_alive: Option<Nanos>,
    next_refresh: Option<Nanos>,
    pub(super) health: Health,
    pub(super) intermediary_cursor: u64,
    pub(super) transmits: VecDeque<Transmit>,
    requests: VecDeque<TableRequest>,
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

    fn advance(&mut self, now: Nanos) -> Nanos {
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
    fn heard_recently(&self, silo: SiloId, now: Nanos) -> bool {
        match self.heard.get(silo.node as usize).copied().flatten() {
            Some((generation, at)) => {
                generation == silo.generation && now - at < self.config.liveness_window()
            }
            None => false,
        }
    }

    /// Starts the next queued task if none runs, and tells the judges
    /// the health score when it changed.
    fn after(&mut self, now: Nanos) {
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

    fn enqueue(&mut self, task: Task) {
        let busy = self.running.as_ref().is_some_and(|r| r.task.same(&task))
            || self.tasks.iter().any(|t| t.same(&task));
        if !busy {
            self.tasks.push_back(task);
        }
    }

    /// Whether a vote against `target` is queued or running.
    pub(super) fn suspect_pending(&self, target: SiloId) -> bool {
        let task = Task::Suspect { target, via: None };
        self.running.as_ref().is_some_and(|r| r.task.same(&task))
            || self.tasks.iter().any(|t| t.same(&task))
    }

    pub(super) fn enqueue_suspect(&mut self, target: SiloId, via: Option<SiloId>) {
        self.enqueue(Task::Suspect { target, via });
    }

    fn issue(&mut self, op: TableOp, write: Write) {
        let id = OpId(self.next_op);
        self.next_op += 1;
        self.requests.push_back(TableRequest { id, op });
        if let Some(r) = &mut self.running {
            r.step = Step::Op(id, write);
        }
    }

    /// (Re)starts the running task from its first operation.
    fn begin(&mut self, now: Nanos) {
        let Some(running) = &self.running else {
            return;
        };
        match running.task {
            Task::IAmAlive => self.issue(
                TableOp::IAmAlive {
                    silo: self.me,
                    time: now,
                },
                Write::IAmAlive,
            ),
            _ => self.issue(TableOp::ReadAll, Write::Read),
        }
    }

    fn finish(&mut self) {
        self.running = None;
    }

    fn back_off(&mut self, now: Nanos, min: Nanos, max: Nanos) {
        if let Some(r) = &mut self.running {
            let wait = if r.backoff.is_zero() {
                min
            } else {
                Nanos(r.backoff.as_nanos().saturating_mul(2)).min(max)
            };
            r.backoff = wait;
            r.step = Step::Backoff(now + wait);
        }
    }

    /// A read came back: takes it as the view if it is not older.
    fn process_view(&mut self, now: Nanos, view: Arc<TableView>) {
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
    fn update_monitoring(&mut self, now: Nanos) {
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

    /// The running task continues after a read.
    fn continue_task(&mut self, now: Nanos) {
        let Some(task) = self.running.as_ref().map(|r| r.task) else {
            return;
        };
        match task {
            Task::Refresh | Task::IAmAlive => self.finish(),
            Task::Join => self.join_step(now),
            Task::Suspect { target, via } => self.suspect_step(now, target, via),
        }
    }

    /// One step of joining, from the view just read.
    fn join_step(&mut self, now: Nanos) {
        let view = Arc::clone(&self.view);
        if let Some(old) = view.rows.iter().find(|r| {
            r.silo.node == self.me.node
                && r.silo.generation < self.me.generation
                && r.status != SiloStatus::Dead
        }) {
            let op = update(old, SiloStatus::Dead, old.votes.clone(), view.version);
            self.issue(op, Write::DeclareOld);
            return;
        }
        match view.row(self.me) {
            None => {
                let row = Row {
                    silo: self.me,
                    status: SiloStatus::Joining,
                    votes: Vec::new(),
                    i_am_alive: now,
                    etag: 0,
                };
                self.issue(
                    TableOp::Insert {
                        row,
                        version: view.version,
                    },
                    Write::InsertSelf,
                );
            }
            Some(row) if row.status == SiloStatus::Active => self.activated(now),
            Some(_) => {
                let stale = self.config.stale_after();
                let targets: Vec<SiloId> = view
                    .rows
                    .iter()
                    .filter(|r| {
                        r.silo != self.me
                            && r.status == SiloStatus::Active
                            && !is_stale(r, now, stale)
                    })
                    .map(|r| r.silo)
                    .collect();
                let mut pending = Vec::with_capacity(targets.len());
                for to in targets {
                    let probe = self.next_probe_id;
                    self.next_probe_id += 1;
                    self.send(to, Message::Ping { probe });
                    pending.push((to, probe));
                }
                if pending.is_empty() {
                    self.activate();
                } else if let Some(r) = &mut self.running {
                    r.step = Step::Connectivity {
                        pending,
                        deadline: now + self.config.probe_timeout,
                    };
                }
            }
        }
    }

    /// A Pong that answers the join's connectivity check.
    fn connectivity_answer(&mut self, from: SiloId, probe: u64) -> bool {
        let Some(Running {
            step: Step::Connectivity { pending, .. },
            ..
        }) = &mut self.running
        else {
            return false;
        };
        let Some(i) = pending.iter().position(|&p| p == (from, probe)) else {
            return false;
        };
        pending.swap_remove(i);
        if pending.is_empty() {
            self.activate();
        }
        true
    }

    /// Writes this silo Active (the view is the one the check started from).
    fn activate(&mut self) {
        let view = Arc::clone(&self.view);
        match view.row(self.me) {
            Some(row) => {
                let op = update(row, SiloStatus::Active, row.votes.clone(), view.version);
                self.issue(op, Write::Activate);
            }
            None => self.issue(TableOp::ReadAll, Write::Read),
        }
    }

    fn activated(&mut self, now: Nanos) {
        self.finish();
        self.status = SiloStatus::Active;
        self.health.activated(now);
        self.events.push_back(AgentEvent::Joined);
        self.next_i_am_alive = Some(now + self.config.i_am_alive_period);
        self.next_refresh = Some(now + self.config.table_refresh_period);
        self.enqueue(Task::IAmAlive);
        self.enqueue(Task::Refresh);
    }

    /// `InnerTryToSuspectOrKill`, from the view just read.
    fn suspect_step(&mut self, now: Nanos, target: SiloId, via: Option<SiloId>) {
        let view = Arc::clone(&self.view);
        let Some(row) = view.row(target) else {
            return self.finish();
        };
        if row.status == SiloStatus::Dead || self.status != SiloStatus::Active {
            return self.finish();
        }
        if self.config.connection_liveness_check && self.heard_recently(target, now) {
            self.events.push_back(AgentEvent::VoteWithheld { target });
            return self.finish();
        }
        let mut voters = vec![self.me];
        if let Some(v) = via.filter(|&v| v != self.me && v != target) {
            voters.push(v);
        }
        let c = &self.config;
        let votes = cast(
            row,
            &voters,
            now,
            c.death_vote_expiration,
            c.num_votes_for_death_declaration,
        );
        let needed = quorum(
            &view,
            now,
            c.num_votes_for_death_declaration,
            c.stale_after(),
        );
        let declared = votes.len() >= needed;
        let status = if declared {
            SiloStatus::Dead
        } else {
            row.status
        };
        let op = update(row, status, votes, view.version);
        self.issue(op, Write::Vote { target, declared });
    }

    /// A write succeeded.
    fn written(&mut self, now: Nanos, write: Write) {
        match write {
            Write::Read => {}
            Write::IAmAlive => self.finish(),
            Write::InsertSelf | Write::DeclareOld => {
                self.gossip();
                self.begin(now);
            }
            Write::Activate => {
                self.gossip();
                self.activated(now);
            }
            Write::Vote { target, declared } => {
                self.events
                    .push_back(AgentEvent::Voted { target, declared });
                self.gossip();
                self.finish();
                self.enqueue(Task::Refresh);
            }
        }
    }

    /// Tells every Active silo of the view that the table moved past it.
    fn gossip(&mut self) {
        let version = self.view.version + 1;
        let to: Vec<SiloId> = self
            .view
            .rows
            .iter()
            .filter(|r| r.status == SiloStatus::Active && r.silo != self.me)
            .map(|r| r.silo)
            .collect();
        for silo in to {
            self.send(silo, Message::Gossip { version });
        }
    }

    /// Stops the agent: it read itself Dead, or gave up joining.
    fn stop(&mut self, event: AgentEvent) {
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

/// The compare-and-swap write of `row` with a new status and votes.
fn update(row: &Row, status: SiloStatus, votes: Vec<super::table::Vote>, version: u64) -> TableOp {
    TableOp::Update {
        silo: row.silo,
        status,
        votes,
        etag: row.etag,
        version,
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
