//! The agent's work on the membership table, as the concurrent loops
//! Orleans runs: joining (status writes and the connectivity check), the
//! IAmAlive loop, the refresh loop and the suspect-or-kill loop. Each lane
//! has at most one table operation in flight and its own back-off; the
//! lanes run side by side, as Orleans' tasks do (10.2 and main alike).
//!
//! Sources (line numbers at v10.2.2; main's are within a few lines):
//! - joining: `MembershipTableManager.UpdateStatus` with
//!   `MembershipExecuteWithRetries` (lines 316-385: a conflicting write
//!   waits the contention back-off, an error the error back-off, both
//!   [`super::backoff::exponential`]), `TryUpdateMyStatusGlobalOnce`
//!   (393-436: read, then insert or update its own row), the declaration of
//!   an older generation of itself at start (`CleanupMyTableEntries`), and
//!   `MembershipAgent.ValidateInitialConnectivity` (`MembershipAgent.cs`
//!   122-245: ping every Active silo; if any fails, wait `ProbeTimeout`,
//!   refresh, try again);
//! - IAmAlive: `MembershipAgent.UpdateIAmAlive` (64-104): a first tick at a
//!   random instant within the period, then every period; a failure waits
//!   [`super::backoff::computed`];
//! - refresh: `PeriodicallyRefreshMembershipTable` (245-281), the same way;
//! - suspect-or-kill: `TryToSuspectOrKill` queues a request in a channel of
//!   100 that drops its oldest (lines 47, 820-824) and returns at once, so
//!   probing never waits for a vote; `ProcessSuspectOrKillLists` (708-765)
//!   takes them one at a time; an error (the table unreachable) queues the
//!   request again and waits `ExponentialBackoff(1 s, 1 min, 2 s)
//!   .Next(failures)` before the next; a write that loses its
//!   compare-and-swap is not retried (line 902: "we will retry later", by
//!   the next failed probe). `InnerTryToSuspectOrKill` is [`super::suspect`].
//!
//! Deviation: after a successful status write Orleans publishes the table
//! it read with its own row changed and gossips that; fdlab reads the table
//! again and gossips what it read, as Orleans does after a vote (one more
//! read, a table round trip later).

use std::collections::VecDeque;

use crate::time::Nanos;

use super::agent::OrleansAgent;
use super::backoff::{computed, exponential, STEP};
use super::messages::{AgentEvent, Message};
use super::table::{OpId, Row, SiloId, SiloStatus, TableOp, TableRequest, TableResult};

/// `_trySuspectOrKillChannel`'s capacity (`MembershipTableManager.cs:47`).
pub(super) const SUSPECT_CHANNEL: usize = 100;

/// The loops, by index.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum LaneId {
    Status = 0,
    IAmAlive = 1,
    Refresh = 2,
    Suspect = 3,
}

pub(super) const LANES: [LaneId; 4] = [
    LaneId::Status,
    LaneId::IAmAlive,
    LaneId::Refresh,
    LaneId::Suspect,
];

/// A request of the suspect-or-kill channel: vote against `target`, with
/// the intermediary `via` of a failed indirect probe voting too.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Suspicion {
    pub(super) target: SiloId,
    pub(super) via: Option<SiloId>,
}

/// What a table operation in flight is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Step {
    /// Status lane: a read, then the next step of joining.
    JoinRead,
    /// An older generation of this node written Dead.
    DeclareOld,
    /// Its own row inserted (Joining) or updated (Active).
    Insert,
    Activate,
    /// The read after a status write, whose result is gossiped.
    StatusReread {
        activated: bool,
    },
    IAmAlive,
    Refresh,
    SuspectRead(Suspicion),
    SuspectWrite(Suspicion, bool),
    SuspectReread(Suspicion),
}

/// One loop's state.
#[derive(Clone, Debug, Default)]
pub(super) struct Lane {
    pub(super) op: Option<(OpId, Step)>,
    /// When the lane next starts an operation (a tick or a back-off end).
    pub(super) wake: Option<Nanos>,
    /// Consecutive failures (the back-off's attempt count).
    pub(super) failures: u32,
    /// When the periodic loop last ticked (`AsyncTimer.lastFired`).
    pub(super) fired: Nanos,
}

/// The join's connectivity check in progress.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Connectivity {
    /// Pings not yet answered.
    pub(super) pending: Vec<(SiloId, u64)>,
    /// Whether a ping failed (refused).
    pub(super) failed: bool,
    pub(super) deadline: Nanos,
}

impl OrleansAgent {
    pub(super) fn lane(&mut self, id: LaneId) -> &mut Lane {
        &mut self.lanes[id as usize]
    }

    /// Queues a suspect-or-kill request (`TryToSuspectOrKill`).
    pub(super) fn suspect(&mut self, target: SiloId, via: Option<SiloId>) {
        if self.suspicions.len() == SUSPECT_CHANNEL {
            self.suspicions.pop_front();
        }
        self.suspicions.push_back(Suspicion { target, via });
    }

    pub(super) fn issue(&mut self, lane: LaneId, op: TableOp, step: Step) {
        let id = OpId(self.next_op);
        self.next_op += 1;
        self.requests.push_back(TableRequest { id, op });
        self.lane(lane).op = Some((id, step));
    }

    /// Starts every lane that is due and idle.
    pub(super) fn drive_lanes(&mut self, now: Nanos) {
        for id in LANES {
            let lane = &self.lanes[id as usize];
            if lane.op.is_some() || lane.wake.is_some_and(|w| w > now) {
                continue;
            }
            match id {
                LaneId::Suspect => {
                    let Some(s) = self.suspicions.pop_front() else {
                        continue;
                    };
                    self.lane(id).wake = None;
                    self.issue(id, TableOp::ReadAll, Step::SuspectRead(s));
                }
                _ if lane.wake.is_none() => {}
                LaneId::Status => {
                    self.lane(id).wake = None;
                    if self.connectivity.is_none() {
                        self.issue(id, TableOp::ReadAll, Step::JoinRead);
                    }
                }
                LaneId::IAmAlive => {
                    let lane = self.lane(id);
                    lane.wake = None;
                    lane.fired = now;
                    let op = TableOp::IAmAlive {
                        silo: self.me,
                        time: now,
                    };
                    self.issue(id, op, Step::IAmAlive);
                }
                LaneId::Refresh => {
                    let lane = self.lane(id);
                    lane.wake = None;
                    lane.fired = now;
                    self.issue(id, TableOp::ReadAll, Step::Refresh);
                }
            }
        }
    }

    /// The earliest lane wake-up, for `poll_timeout`.
    pub(super) fn lanes_due(&self) -> Option<Nanos> {
        let mut due = self
            .lanes
            .iter()
            .filter(|l| l.op.is_none())
            .filter_map(|l| l.wake)
            .min();
        // A queued suspicion with no back-off pending starts at once.
        let suspect = &self.lanes[LaneId::Suspect as usize];
        if suspect.op.is_none() && suspect.wake.is_none() && !self.suspicions.is_empty() {
            due = Some(due.map_or(self.now, |d| d.min(self.now)));
        }
        if let Some(c) = &self.connectivity {
            due = Some(due.map_or(c.deadline, |d| d.min(c.deadline)));
        }
        due
    }

    /// A table reply for the lane whose operation is `id`, if any.
    pub(super) fn lane_reply(&mut self, now: Nanos, id: OpId, result: TableResult) {
        let Some(lane) = LANES
            .into_iter()
            .find(|&l| self.lanes[l as usize].op.is_some_and(|(op, _)| op == id))
        else {
            return;
        };
        let (_, step) = self.lane(lane).op.take().expect("matched");
        let view = match result {
            TableResult::Unavailable | TableResult::Conflict => {
                return self.lane_failed(now, lane, step, result == TableResult::Conflict)
            }
            TableResult::Written => {
                return self.lane_written(now, lane, step);
            }
            TableResult::Read(view) => view,
        };
        self.process_view(now, view);
        if self.status == SiloStatus::Dead {
            return;
        }
        match step {
            Step::JoinRead => self.join_step(now),
            Step::StatusReread { activated } => {
                self.gossip(now);
                if activated {
                    self.activated(now);
                } else {
                    self.start_connectivity(now);
                }
            }
            Step::Refresh => {
                let period = self.config.table_refresh_period;
                self.periodic_done(now, LaneId::Refresh, period);
            }
            Step::SuspectRead(s) => self.suspect_step(now, s),
            Step::SuspectReread(_) => {
                self.gossip(now);
                self.lane(LaneId::Suspect).failures = 0;
            }
            Step::DeclareOld
            | Step::Insert
            | Step::Activate
            | Step::IAmAlive
            | Step::SuspectWrite(..) => debug_assert!(false, "a write answered with a read"),
        }
    }

    fn lane_written(&mut self, now: Nanos, lane: LaneId, step: Step) {
        match step {
            Step::DeclareOld => self.issue(lane, TableOp::ReadAll, Step::JoinRead),
            Step::Insert | Step::Activate => {
                self.lane(lane).failures = 0;
                let activated = step == Step::Activate;
                self.issue(lane, TableOp::ReadAll, Step::StatusReread { activated });
            }
            Step::IAmAlive => {
                let period = self.config.i_am_alive_period;
                self.periodic_done(now, lane, period);
            }
            Step::SuspectWrite(s, declared) => {
                self.events.push_back(AgentEvent::Voted {
                    target: s.target,
                    declared,
                });
                self.issue(lane, TableOp::ReadAll, Step::SuspectReread(s));
            }
            Step::JoinRead
            | Step::StatusReread { .. }
            | Step::Refresh
            | Step::SuspectRead(_)
            | Step::SuspectReread(_) => debug_assert!(false, "a read answered with a write"),
        }
    }

    /// An operation failed: the table was unreachable, or (`conflict`) a
    /// compare-and-swap lost.
    fn lane_failed(&mut self, now: Nanos, lane: LaneId, step: Step, conflict: bool) {
        let c = &self.config;
        let (status_min, status_max) = (c.status_backoff_min, c.status_backoff_max);
        let (error_min, error_max) = (c.error_backoff_min, c.error_backoff_max);
        let attempt = self.lanes[lane as usize].failures;
        match lane {
            LaneId::Status => {
                let wait = if conflict {
                    exponential(attempt, status_min, status_max, STEP, &mut self.rng)
                } else {
                    exponential(attempt, error_min, error_max, STEP, &mut self.rng)
                };
                let l = self.lane(lane);
                l.failures += 1;
                l.wake = Some(now + wait);
            }
            LaneId::IAmAlive | LaneId::Refresh => {
                let failures = attempt + 1;
                let base_max = status_min + STEP;
                let wait = computed(failures, status_min, base_max, status_max, &mut self.rng);
                let l = self.lane(lane);
                l.failures = failures;
                l.wake = Some(now + wait);
            }
            LaneId::Suspect => {
                if conflict {
                    // The compare-and-swap lost: not retried (10.2.2 line 902).
                    self.lane(lane).failures = 0;
                    return;
                }
                let failures = attempt + 1;
                if let Step::SuspectRead(s) | Step::SuspectWrite(s, _) | Step::SuspectReread(s) =
                    step
                {
                    self.suspect(s.target, s.via);
                }
                let wait = exponential(failures, error_min, error_max, STEP, &mut self.rng);
                let l = self.lane(lane);
                l.failures = failures;
                l.wake = Some(now + wait);
            }
        }
    }

    /// A periodic loop's tick succeeded: the next one a period after this
    /// one fired, or at once if that has passed (`AsyncTimer.NextTick`).
    fn periodic_done(&mut self, now: Nanos, lane: LaneId, period: Nanos) {
        let l = self.lane(lane);
        l.failures = 0;
        l.wake = Some((l.fired + period).max(now));
    }

    /// One step of joining, from the view just read.
    fn join_step(&mut self, now: Nanos) {
        let view = std::sync::Arc::clone(&self.view);
        if let Some(old) = view.rows.iter().find(|r| {
            r.silo.node == self.me.node
                && r.silo.generation < self.me.generation
                && r.status != SiloStatus::Dead
        }) {
            let mut votes = old.votes.clone();
            votes.push(super::table::Vote {
                voter: self.me,
                time: now,
            });
            let op = update(old, SiloStatus::Dead, votes, view.version);
            return self.issue(LaneId::Status, op, Step::DeclareOld);
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
                let op = TableOp::Insert {
                    row,
                    version: view.version,
                };
                self.issue(LaneId::Status, op, Step::Insert);
            }
            Some(row) if row.status == SiloStatus::Active => self.activated(now),
            Some(row) if self.joined_check_passed => {
                let op = update(row, SiloStatus::Active, row.votes.clone(), view.version);
                self.issue(LaneId::Status, op, Step::Activate);
            }
            Some(_) => self.start_connectivity(now),
        }
    }

    /// Pings every Active silo of the view but this node's
    /// (`ValidateInitialConnectivity`: `IsSameLogicalSilo` is the address
    /// without its generation), each for at most `probe_timeout`.
    fn start_connectivity(&mut self, now: Nanos) {
        let targets: Vec<SiloId> = self
            .view
            .rows
            .iter()
            .filter(|r| r.silo.node != self.me.node && r.status == SiloStatus::Active)
            .map(|r| r.silo)
            .collect();
        let mut pending = Vec::with_capacity(targets.len());
        for to in targets {
            let probe = self.next_probe_id;
            self.next_probe_id += 1;
            self.send(to, Message::Ping { probe });
            pending.push((to, probe));
        }
        self.connectivity = Some(Connectivity {
            pending,
            failed: false,
            deadline: now + self.config.probe_timeout,
        });
        self.check_connectivity(now);
    }

    /// Ends the connectivity check once every ping is answered, refused or
    /// late: all answered writes the silo Active; otherwise wait
    /// `probe_timeout` and start again from a fresh read.
    pub(super) fn check_connectivity(&mut self, now: Nanos) {
        let Some(c) = &self.connectivity else {
            return;
        };
        let late = c.deadline <= now;
        if !c.pending.is_empty() && !late {
            return;
        }
        let passed = c.pending.is_empty() && !c.failed;
        self.connectivity = None;
        if passed {
            self.joined_check_passed = true;
            self.issue(LaneId::Status, TableOp::ReadAll, Step::JoinRead);
        } else {
            self.lane(LaneId::Status).wake = Some(now + self.config.probe_timeout);
        }
    }

    /// A Pong, or a refusal, for one of the connectivity check's pings.
    pub(super) fn connectivity_answer(&mut self, now: Nanos, from: SiloId, answered: bool) -> bool {
        let Some(c) = &mut self.connectivity else {
            return false;
        };
        let before = c.pending.len();
        c.pending.retain(|&(to, _)| to != from);
        if c.pending.len() == before {
            return false;
        }
        c.failed |= !answered;
        self.check_connectivity(now);
        true
    }

    /// The silo is Active: its IAmAlive and refresh loops start, each at a
    /// random instant within its period (`RandomTimeSpan.Next(period)`).
    pub(super) fn activated(&mut self, now: Nanos) {
        self.status = SiloStatus::Active;
        self.health.activated(now);
        self.events.push_back(AgentEvent::Joined);
        let alive = self.rng.between(Nanos::ZERO, self.config.i_am_alive_period);
        let refresh = self
            .rng
            .between(Nanos::ZERO, self.config.table_refresh_period);
        self.lane(LaneId::IAmAlive).wake = Some(now + alive);
        self.lane(LaneId::Refresh).wake = Some(now + refresh);
        self.update_monitoring(now);
    }

    /// Sends the view to every silo that takes gossip
    /// (`GossipToOthers`: Joining, Active or ShuttingDown, not stale, not
    /// this node).
    pub(super) fn gossip(&mut self, now: Nanos) {
        let stale = self.config.stale_after();
        let to: Vec<SiloId> = self
            .view
            .rows
            .iter()
            .filter(|r| {
                r.silo.node != self.me.node
                    && matches!(
                        r.status,
                        SiloStatus::Joining | SiloStatus::Active | SiloStatus::ShuttingDown
                    )
                    && !super::votes::is_stale(r, now, stale)
            })
            .map(|r| r.silo)
            .collect();
        for silo in to {
            let view = std::sync::Arc::clone(&self.view);
            self.send(silo, Message::Gossip { view });
        }
    }

    /// Clears every lane (the silo stopped).
    pub(super) fn clear_lanes(&mut self) {
        self.lanes = Default::default();
        self.suspicions = VecDeque::new();
        self.connectivity = None;
    }
}

/// The compare-and-swap write of `row` with a new status and votes.
pub(super) fn update(
    row: &Row,
    status: SiloStatus,
    votes: Vec<super::table::Vote>,
    version: u64,
) -> TableOp {
    TableOp::Update {
        silo: row.silo,
        status,
        votes,
        etag: row.etag,
        version,
    }
}
