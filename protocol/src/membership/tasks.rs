//! The agent's work on the membership table: joining (old generations
//! declared Dead, its row inserted, the connectivity check, itself written
//! Active), IAmAlive, view refreshes and the suspect-or-kill loop, run one
//! task at a time with Orleans' back-offs (see the deviations in
//! [`super::agent`]).
//!
//! Source: dotnet/orleans `MembershipAgent` (joining, IAmAlive) and
//! `MembershipTableManager` (`InnerTryToSuspectOrKill`, the back-offs,
//! gossip after a write); SPEC §8.1.

use std::sync::Arc;

use crate::time::Nanos;

use super::agent::OrleansAgent;
use super::messages::{AgentEvent, Message};
use super::table::{OpId, Row, SiloId, SiloStatus, TableOp, TableRequest};
use super::votes::{cast, is_stale, quorum};

/// Work on the table, run one at a time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Task {
    Join,
    IAmAlive,
    Refresh,
    Suspect { target: SiloId, via: Option<SiloId> },
}

impl Task {
    pub(super) fn same(&self, other: &Task) -> bool {
        match (self, other) {
            (Task::Suspect { target: a, .. }, Task::Suspect { target: b, .. }) => a == b,
            _ => self == other,
        }
    }
}

/// What a table operation in flight was for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Write {
    Read,
    InsertSelf,
    DeclareOld,
    Activate,
    Vote { target: SiloId, declared: bool },
    IAmAlive,
}

#[derive(Clone, Debug, PartialEq)]
pub(super) enum Step {
    Op(OpId, Write),
    Backoff(Nanos),
    /// The join's connectivity check: probes still unanswered, and its end.
    Connectivity {
        pending: Vec<(SiloId, u64)>,
        deadline: Nanos,
    },
}

#[derive(Clone, Debug)]
pub(super) struct Running {
    pub(super) task: Task,
    pub(super) step: Step,
    /// The last back-off waited in this task (zero: none yet).
    pub(super) backoff: Nanos,
}

impl OrleansAgent {
    pub(super) fn enqueue(&mut self, task: Task) {
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

    pub(super) fn issue(&mut self, op: TableOp, write: Write) {
        let id = OpId(self.next_op);
        self.next_op += 1;
        self.requests.push_back(TableRequest { id, op });
        if let Some(r) = &mut self.running {
            r.step = Step::Op(id, write);
        }
    }

    /// (Re)starts the running task from its first operation.
    pub(super) fn begin(&mut self, now: Nanos) {
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

    pub(super) fn finish(&mut self) {
        self.running = None;
    }

    pub(super) fn back_off(&mut self, now: Nanos, min: Nanos, max: Nanos) {
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

    /// The running task continues after a read.
    pub(super) fn continue_task(&mut self, now: Nanos) {
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
    pub(super) fn join_step(&mut self, now: Nanos) {
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
    pub(super) fn connectivity_answer(&mut self, from: SiloId, probe: u64) -> bool {
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
    pub(super) fn activate(&mut self) {
        let view = Arc::clone(&self.view);
        match view.row(self.me) {
            Some(row) => {
                let op = update(row, SiloStatus::Active, row.votes.clone(), view.version);
                self.issue(op, Write::Activate);
            }
            None => self.issue(TableOp::ReadAll, Write::Read),
        }
    }

    pub(super) fn activated(&mut self, now: Nanos) {
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
    pub(super) fn suspect_step(&mut self, now: Nanos, target: SiloId, via: Option<SiloId>) {
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
    pub(super) fn written(&mut self, now: Nanos, write: Write) {
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
    pub(super) fn gossip(&mut self) {
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
