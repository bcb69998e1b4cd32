//! The ground truth of a membership run and its bookkeeping: which silos
//! really crashed, every declaration and whether it was false, when views
//! agreed, suspicions, counts, and the replay log. It sees what the
//! simulator does (processes starting and stopping, table writes, agent
//! events) and never steers it.
//!
//! Ground truth as SPEC §4 and §8.3: a silo whose process crashed (a crash
//! fault, or a restart fault that replaced it) must be declared Dead; a
//! silo whose process is running (however paused, slow, partitioned or
//! skewed) must not, and declaring it is a false declaration.

use std::collections::BTreeMap;

use fdlab_protocol::membership::swim::{MemberId, SwimEvent};
use fdlab_protocol::membership::{AgentEvent, SiloId, SiloStatus, TableView};
use fdlab_protocol::Nanos;

use super::outcome::{
    ClusterCounts, ClusterLogRecord, CrashOutcome, Declaration, NodeChange, Suspicion, ViewChange,
};
use super::table::Applied;
use crate::outcome::Window;

/// The shortest single event that makes a member unresponsive in the
/// books: a starved member busy this long with one event answers nobody
/// (SWIM's probe round is 1 s).
pub const UNRESPONSIVE_EVENT: Nanos = Nanos::from_secs(1);

/// A declaration whose views have not all agreed yet: the live Active
/// silos that still see the target otherwise.
#[derive(Debug)]
struct Pending {
    declaration: usize,
    target: SiloId,
    waiting: Vec<SiloId>,
}

#[derive(Debug, Default)]
pub(crate) struct Ledger {
    /// By node: the generation whose process runs, and since when.
    running: Vec<Option<(u32, Nanos)>>,
    /// By node: its latest generation.
    generations: Vec<u32>,
    /// By node: paused or starved now.
    impaired: Vec<bool>,
    /// SWIM runs: the members the cluster holds Dead now (declared and not
    /// revived).
    dead_now: BTreeMap<SiloId, usize>,
    /// Silos that wrote themselves Active and still run.
    active: BTreeMap<SiloId, ()>,
    pub(crate) crashes: Vec<CrashOutcome>,
    pub(crate) declarations: Vec<Declaration>,
    /// By declaration: its cost is settled (the target came back, as a new
    /// generation or revived). Apart from `destroyed`, which may be 0 s: a
    /// starved member can declare and revive at one instant.
    settled: Vec<bool>,
    /// Declared silo -> its declaration.
    declared: BTreeMap<SiloId, usize>,
    pending: Vec<Pending>,
    /// Open suspicions by (monitor, target), into `suspicions`.
    open: BTreeMap<(SiloId, SiloId), usize>,
    /// Each monitor's latest suspicion of each target, open or not.
    latest: BTreeMap<(SiloId, SiloId), usize>,
    pub(crate) suspicions: Vec<Suspicion>,
    pub(crate) counts: ClusterCounts,
    pub(crate) node_time: Nanos,
    pub(crate) log: Option<Vec<ClusterLogRecord>>,
    /// By node: since when its process has been down, after its first start.
    down_since: Vec<Option<Nanos>>,
    /// By node: since when it has been paused, and the windows in which it
    /// could not answer (paused, or busy with one event for at least
    /// [`UNRESPONSIVE_EVENT`]), in time order.
    paused_since: Vec<Option<Nanos>>,
    unresponsive: Vec<Vec<Window>>,
    pub(crate) stopped: Vec<(u32, Window)>,
    /// A placement scenario's servers (nodes below it), whose status in
    /// the clients' views is recorded.
    servers: Option<u32>,
    /// By client (node less `servers`), then server: its view holds it Dead.
    client_views: Vec<Vec<bool>>,
    pub(crate) views: Vec<ViewChange>,
}

impl Ledger {
    pub(crate) fn new(nodes: usize, log: bool) -> Ledger {
        Ledger {
            running: vec![None; nodes],
            generations: vec![0; nodes],
            impaired: vec![false; nodes],
            log: log.then(Vec::new),
            down_since: vec![None; nodes],
            paused_since: vec![None; nodes],
            unresponsive: vec![Vec::new(); nodes],
            ..Ledger::default()
        }
    }

    /// Records the clients' views of the first `servers` nodes from now on
    /// (a placement scenario's servers; every other node is a client).
    pub(crate) fn watch_servers(&mut self, servers: u32) {
        let clients = self.running.len() - servers as usize;
        self.servers = Some(servers);
        self.client_views = vec![vec![false; servers as usize]; clients];
    }

    /// Client `client`'s view now holds `server` Dead (`dead`) or not.
    fn client_sees(&mut self, at: Nanos, client: u32, server: u32, dead: bool) {
        let Some(servers) = self.servers else {
            return;
        };
        if client < servers || server >= servers {
            return;
        }
        let held = &mut self.client_views[(client - servers) as usize][server as usize];
        if *held != dead {
            *held = dead;
            self.views.push(ViewChange {
                at,
                client,
                server,
                dead,
            });
        }
    }

    fn record(&mut self, record: impl FnOnce() -> ClusterLogRecord) {
        if let Some(log) = &mut self.log {
            log.push(record());
        }
    }

    /// A silo started; a SWIM member takes part at once (it has no join).
    pub(crate) fn started(&mut self, at: Nanos, silo: SiloId, restart: bool, swim: bool) {
        if let Some(since) = self.down_since[silo.node as usize].take() {
            self.stopped.push((
                silo.node,
                Window {
                    start: since,
                    end: at,
                },
            ));
        }
        // A client that starts again places keys from its own server list
        // until its new view says otherwise.
        for server in 0..self.servers.unwrap_or(0) {
            self.client_sees(at, silo.node, server, false);
        }
        self.running[silo.node as usize] = Some((silo.generation, at));
        self.generations[silo.node as usize] = silo.generation;
        if swim {
            self.active.insert(silo, ());
        }
        if restart {
            self.counts.restarts += 1;
        }
        self.record(|| ClusterLogRecord::Node {
            at,
            silo,
            change: NodeChange::Started,
        });
    }

    /// A silo's process stopped at `at`; `crash` when a fault killed it
    /// (`fault`: its record), otherwise it stopped itself.
    pub(crate) fn stopped(
        &mut self,
        at: Nanos,
        silo: SiloId,
        change: NodeChange,
        fault: Option<usize>,
    ) {
        if let Some((generation, since)) = self.running[silo.node as usize].take() {
            debug_assert_eq!(generation, silo.generation);
            self.node_time = self.node_time + (at - since);
            self.down_since[silo.node as usize] = Some(at);
        }
        // A crash ends a pause.
        self.end_pause(silo.node, at);
        let was_active = self.active.remove(&silo).is_some();
        match change {
            NodeChange::Terminated | NodeChange::KilledItself => self.counts.self_terminations += 1,
            NodeChange::GaveUp => self.counts.join_give_ups += 1,
            _ => {}
        }
        if let (NodeChange::Crashed, Some(fault), true) = (change, fault, was_active) {
            if !self.declared.contains_key(&silo) {
                self.crashes.push(CrashOutcome {
                    silo,
                    at,
                    declared: None,
                    agreed: None,
                    fault,
                });
            }
        }
        // It no longer holds a view anyone waits for.
        for p in &mut self.pending {
            p.waiting.retain(|&s| s != silo);
        }
        self.settle(at);
        // Its open suspicions end here.
        let mine: Vec<(SiloId, SiloId)> = self
            .open
            .range(
                (
                    silo,
                    SiloId {
                        node: 0,
                        generation: 0,
                    },
                )..,
            )
            .take_while(|((m, _), _)| *m == silo)
            .map(|(k, _)| *k)
            .collect();
        for key in mine {
            if let Some(i) = self.open.remove(&key) {
                self.suspicions[i].end = Some(at);
            }
        }
        self.record(|| ClusterLogRecord::Node { at, silo, change });
    }

    pub(crate) fn node_change(&mut self, at: Nanos, silo: SiloId, change: NodeChange) {
        match change {
            NodeChange::Paused => self.paused_since[silo.node as usize] = Some(at),
            NodeChange::Resumed => self.end_pause(silo.node, at),
            _ => {}
        }
        self.record(|| ClusterLogRecord::Node { at, silo, change });
    }

    fn end_pause(&mut self, node: u32, at: Nanos) {
        if let Some(start) = self.paused_since[node as usize].take() {
            self.unresponsive[node as usize].push(Window { start, end: at });
        }
    }

    /// Node `node` is busy with one event for `window`: recorded as time it
    /// could not answer when that is at least [`UNRESPONSIVE_EVENT`].
    pub(crate) fn busy(&mut self, node: u32, window: Window) {
        if window.end - window.start >= UNRESPONSIVE_EVENT {
            self.unresponsive[node as usize].push(window);
        }
    }

    pub(crate) fn is_running(&self, silo: SiloId) -> bool {
        self.running[silo.node as usize].is_some_and(|(g, _)| g == silo.generation)
    }

    /// Node `node` is paused or starved (`true`), or no longer.
    pub(crate) fn impaired(&mut self, node: u32, impaired: bool) {
        self.impaired[node as usize] = impaired;
    }

    /// A table write was applied at `at` by `by`.
    pub(crate) fn applied(&mut self, at: Nanos, by: SiloId, applied: &Applied) {
        let row = &applied.row;
        if applied.two_active {
            self.counts.two_active_generations += 1;
        }
        if row.status == SiloStatus::Active && applied.before != Some(SiloStatus::Active) {
            if self.is_running(row.silo) {
                self.active.insert(row.silo, ());
            }
            // A node back as a new generation ends the node-time its false
            // declaration destroyed.
            for (d, settled) in self.declarations.iter_mut().zip(&mut self.settled) {
                if d.false_positive
                    && d.target.node == row.silo.node
                    && d.target.generation < row.silo.generation
                    && !*settled
                {
                    d.destroyed = at - d.at;
                    *settled = true;
                }
            }
        }
        if row.status == SiloStatus::Dead && applied.before != Some(SiloStatus::Dead) {
            self.declare(at, row.silo, by);
        }
        self.record(|| ClusterLogRecord::Row {
            at,
            version: applied.version,
            silo: row.silo,
            status: row.status,
            votes: row.votes.clone(),
            by,
        });
    }

    fn declare(&mut self, at: Nanos, target: SiloId, by: SiloId) {
        let false_positive = self.is_running(target);
        let i = self.declarations.len();
        self.settled.push(false);
        self.declarations.push(Declaration {
            at,
            target,
            by,
            false_positive,
            impaired: self.impaired[target.node as usize],
            destroyed: Nanos::ZERO,
            unresponsive: Nanos::ZERO,
            agreed: None,
        });
        self.declared.insert(target, i);
        for c in self.crashes.iter_mut().filter(|c| c.silo == target) {
            c.declared.get_or_insert(at);
        }
        let waiting = self
            .active
            .keys()
            .copied()
            .filter(|&s| s != target)
            .collect();
        self.pending.push(Pending {
            declaration: i,
            target,
            waiting,
        });
        // Each monitor's latest suspicion of it led to the declaration,
        // even one that ended first: its vote was on its way (a probe that
        // got through meanwhile does not recall a vote).
        for (&(_, t), &s) in &self.latest {
            if t == target {
                self.suspicions[s].declared = true;
            }
        }
        self.settle(at);
    }

    /// Declarations every live Active silo now sees.
    fn settle(&mut self, at: Nanos) {
        let declarations = &mut self.declarations;
        let crashes = &mut self.crashes;
        self.pending.retain(|p| {
            if !p.waiting.is_empty() {
                return true;
            }
            declarations[p.declaration].agreed = Some(at);
            for c in crashes.iter_mut().filter(|c| c.silo == p.target) {
                c.agreed.get_or_insert(at);
            }
            false
        });
    }

    /// `silo`'s view moved forward to `view`.
    pub(crate) fn view(&mut self, at: Nanos, silo: SiloId, view: &TableView) {
        // A server is Dead in a view when its latest generation's row is
        // (rows are in (node, generation) order); one not in the view yet
        // is on the client's own list.
        for server in 0..self.servers.unwrap_or(0) {
            let after = view.rows.partition_point(|r| r.silo.node <= server);
            let dead = after > 0
                && view.rows[after - 1].silo.node == server
                && view.rows[after - 1].status == SiloStatus::Dead;
            self.client_sees(at, silo.node, server, dead);
        }
        let mut seen = Vec::new();
        for p in &mut self.pending {
            if view
                .row(p.target)
                .is_some_and(|r| r.status == SiloStatus::Dead)
            {
                let before = p.waiting.len();
                p.waiting.retain(|&s| s != silo);
                if p.waiting.len() < before {
                    seen.push(p.target);
                }
            }
        }
        for target in seen {
            self.observer_event(silo, target);
        }
        self.settle(at);
        self.record(|| {
            let count = |status| view.rows.iter().filter(|r| r.status == status).count() as u32;
            ClusterLogRecord::View {
                at,
                silo,
                version: view.version,
                active: count(SiloStatus::Active),
                dead: count(SiloStatus::Dead),
            }
        });
    }

    /// The silo a SWIM member stands for: its node's latest generation.
    fn member(&self, member: MemberId) -> SiloId {
        SiloId {
            node: member.0,
            generation: self.generations[member.0 as usize],
        }
    }

    /// A SWIM member `silo`'s event at `at`. The cluster declares a member
    /// Dead when the first member's suspicion of it times out, and takes it
    /// back when it refutes (a false declaration's cost is that time); the
    /// views agree when every live member holds it Dead.
    pub(crate) fn swim_event(&mut self, at: Nanos, silo: SiloId, event: SwimEvent) {
        match event {
            SwimEvent::SuspicionStarted { target } => {
                let target = self.member(target);
                self.event(at, silo, AgentEvent::SuspicionStarted { target });
            }
            SwimEvent::SuspicionEnded { target } => {
                let target = self.member(target);
                self.event(at, silo, AgentEvent::SuspicionEnded { target });
            }
            SwimEvent::Declared { target, .. } => {
                self.client_sees(at, silo.node, target.0, true);
                let target = self.member(target);
                self.counts.votes += 1;
                self.observer_event(silo, target);
                if let std::collections::btree_map::Entry::Vacant(e) = self.dead_now.entry(target) {
                    e.insert(self.declarations.len());
                    self.declare(at, target, silo);
                }
                self.sees_dead(at, silo, target);
            }
            SwimEvent::LearnedDead { target } => {
                self.client_sees(at, silo.node, target.0, true);
                let target = self.member(target);
                self.observer_event(silo, target);
                // A suspicion ends when the member learns the death.
                if let Some(i) = self.open.remove(&(silo, target)) {
                    self.suspicions[i].end = Some(at);
                }
                self.sees_dead(at, silo, target);
            }
            SwimEvent::Revived { target, .. } => {
                self.client_sees(at, silo.node, target.0, false);
                let target = self.member(target);
                if let Some(i) = self.dead_now.remove(&target) {
                    let d = &mut self.declarations[i];
                    if d.false_positive && !self.settled[i] {
                        d.destroyed = at - d.at;
                        self.settled[i] = true;
                    }
                    self.pending.retain(|p| p.declaration != i);
                }
            }
            SwimEvent::Refuted { .. } => self.counts.refutations += 1,
        }
    }

    /// Observer `silo` moved `target` to Dead: a false-positive event if
    /// `target` runs, by the observer's health (the Lifeguard paper's
    /// count).
    fn observer_event(&mut self, silo: SiloId, target: SiloId) {
        if !self.is_running(target) {
            return;
        }
        if self.impaired[silo.node as usize] {
            self.counts.observer_false_starved += 1;
        } else {
            self.counts.observer_false_healthy += 1;
        }
    }

    /// `silo` holds `target` Dead.
    fn sees_dead(&mut self, at: Nanos, silo: SiloId, target: SiloId) {
        for p in self.pending.iter_mut().filter(|p| p.target == target) {
            p.waiting.retain(|&s| s != silo);
        }
        self.settle(at);
    }

    /// An agent event of `silo` at `at`.
    pub(crate) fn event(&mut self, at: Nanos, silo: SiloId, event: AgentEvent) {
        match event {
            AgentEvent::SuspicionStarted { target } => {
                let declared = false;
                let i = self.suspicions.len();
                self.suspicions.push(Suspicion {
                    start: at,
                    end: None,
                    monitor: silo,
                    target,
                    declared,
                });
                self.open.insert((silo, target), i);
                self.latest.insert((silo, target), i);
                self.record(|| ClusterLogRecord::Suspicion {
                    at,
                    monitor: silo,
                    target,
                    started: true,
                });
            }
            AgentEvent::SuspicionEnded { target } => {
                if let Some(i) = self.open.remove(&(silo, target)) {
                    self.suspicions[i].end = Some(at);
                }
                self.record(|| ClusterLogRecord::Suspicion {
                    at,
                    monitor: silo,
                    target,
                    started: false,
                });
            }
            AgentEvent::Voted { .. } => self.counts.votes += 1,
            AgentEvent::VoteWithheld { target } => {
                self.counts.votes_withheld += 1;
                self.record(|| ClusterLogRecord::Withheld {
                    at,
                    monitor: silo,
                    target,
                });
            }
            AgentEvent::Joined => self.record(|| ClusterLogRecord::Node {
                at,
                silo,
                change: NodeChange::Joined,
            }),
            AgentEvent::Terminated
            | AgentEvent::KilledItself { .. }
            | AgentEvent::JoinGaveUp
            | AgentEvent::ViewChanged { .. } => {}
        }
    }

    pub(crate) fn message(&mut self, bytes: u64) {
        self.counts.messages += 1;
        self.counts.bytes += bytes;
    }

    /// Closes the books at the end of the run.
    pub(crate) fn finish(&mut self, end: Nanos) {
        for slot in &mut self.running {
            if let Some((_, since)) = slot.take() {
                self.node_time = self.node_time + (end - since);
            }
        }
        for (node, since) in self.down_since.iter_mut().enumerate() {
            if let Some(start) = since.take() {
                self.stopped.push((node as u32, Window { start, end }));
            }
        }
        self.stopped.sort_by_key(|&(node, w)| (w.start, node));
        for node in 0..self.paused_since.len() {
            self.end_pause(node as u32, end);
        }
        // A pause may fall in a long event: count the time once.
        for windows in &mut self.unresponsive {
            *windows = Window::union(std::mem::take(windows));
        }
        for (d, settled) in self.declarations.iter_mut().zip(&self.settled) {
            if d.false_positive && !settled {
                d.destroyed = end - d.at;
            }
            if d.false_positive {
                let in_force = Window {
                    start: d.at,
                    end: d.at + d.destroyed,
                };
                d.unresponsive = self.unresponsive[d.target.node as usize]
                    .iter()
                    .map(|w| w.overlap(in_force))
                    .fold(Nanos::ZERO, |a, b| a + b);
            }
        }
    }
}

#[cfg(test)]
mod tests;
