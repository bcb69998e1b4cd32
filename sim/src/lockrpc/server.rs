//! A lock server: a FIFO queue feeding `workers` workers (with `convoy`,
//! lock acquisitions get one lane of their own, served one at a time), a
//! table of held locks with leases, and its fault state.
//!
//! Sources: MinIO `cmd/lock-rest-server.go` (a lock is granted when free
//! and refused otherwise; an unrefreshed lock expires after its validity,
//! 1 min); RustFS's lock server behaves the same for one writer. Modelling
//! choices: a crashed server loses its queue and its locks; a paused one
//! keeps both and serves nothing until it resumes; a degraded one adds
//! the fault's `slowdown` to every RPC's service time.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use fdlab_protocol::Nanos;

/// What a client asks a server.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    Lock,
    Unlock,
    /// dsync's refresh: is the lock still mine? (extends its lease)
    Refresh,
}

/// One RPC waiting for, or in, service.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Job {
    pub rpc: u64,
    pub client: u32,
    /// The client's node: the connection is the node's.
    pub node: u32,
    pub connection: u64,
    pub op: Op,
    pub key: u32,
    pub acquisition: u64,
}

/// A granted lock.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Held {
    pub acquisition: u64,
    pub granted_at: Nanos,
    pub lease_until: Nanos,
}

#[derive(Debug, Default)]
pub struct Server {
    pub queue: VecDeque<Job>,
    /// Convoy: acquisitions, served one at a time.
    pub lock_queue: VecDeque<Job>,
    pub busy: u32,
    pub lock_busy: bool,
    pub held: BTreeMap<u32, Held>,
    /// Cancelled streams (`RST_STREAM` arrived): skipped at service.
    pub cancelled: BTreeSet<u64>,
    /// Connections closed (GOAWAY, or lost in a crash), by (node, id).
    pub closed: BTreeSet<(u32, u64)>,
    /// Streams that arrived while the process was frozen: h2 accepts them
    /// when it runs again.
    pub pending_accept: Vec<Job>,
    /// Per (node, connection): resets of streams still pending accept.
    pub reset_pending: BTreeMap<(u32, u64), u32>,
    /// Connections past the reset limit: GOAWAY once the process runs.
    pub goaway: BTreeSet<(u32, u64)>,
    pub down: bool,
    pub paused: bool,
    pub slowdown: Nanos,
    /// Jobs whose service ended while paused: they finish on resume.
    pub finished_while_paused: Vec<(Job, bool)>,
    /// By node: connections below this id died with a crash.
    pub floor: Vec<u64>,
    /// Held locks by lease expiry: (lease_until, key).
    pub leases: BTreeSet<(Nanos, u32)>,
    /// The lease timer scheduled, if any.
    pub lease_timer: Option<Nanos>,
    /// Bumped by a crash: service ends scheduled before it are void.
    pub epoch: u32,
}

impl Server {
    /// Whether `job` is still wanted (not cancelled, its connection open).
    pub fn live(&self, job: &Job) -> bool {
        !self.cancelled.contains(&job.rpc) && !self.closed.contains(&(job.node, job.connection))
    }

    /// Counts one more reset of a stream pending accept on `connection`;
    /// returns the count.
    pub fn reset_pending(&mut self, node: u32, connection: u64) -> u32 {
        let count = self.reset_pending.entry((node, connection)).or_insert(0);
        *count += 1;
        *count
    }

    /// The accept queue drained: every reset stream in it was released.
    pub fn clear_reset_counts(&mut self) {
        self.reset_pending.clear();
    }

    /// The server closes `connection`: what it holds of it is dropped.
    pub fn close(&mut self, node: u32, connection: u64) {
        self.closed.insert((node, connection));
        self.reset_pending.remove(&(node, connection));
    }

    /// The next job a free worker takes (`lock_lane`: the convoy's lane),
    /// skipping dead ones.
    pub fn next_job(&mut self, lock_lane: bool) -> Option<Job> {
        loop {
            let job = if lock_lane {
                self.lock_queue.pop_front()?
            } else {
                self.queue.pop_front()?
            };
            if self.live(&job) {
                return Some(job);
            }
            self.cancelled.remove(&job.rpc);
        }
    }

    fn grant(&mut self, now: Nanos, job: &Job, lease: Nanos) {
        let h = Held {
            acquisition: job.acquisition,
            granted_at: now,
            lease_until: now + lease,
        };
        self.held.insert(job.key, h);
        self.leases.insert((h.lease_until, job.key));
    }

    /// Removes and returns the locks whose lease ended at or before `now`.
    pub fn expire(&mut self, now: Nanos) -> Vec<Held> {
        let mut out = Vec::new();
        while let Some(&(at, key)) = self.leases.first() {
            if at > now {
                break;
            }
            self.leases.pop_first();
            if let Some(h) = self.held.remove(&key) {
                debug_assert_eq!(h.lease_until, at);
                out.push(h);
            }
        }
        debug_assert_eq!(self.leases.len(), self.held.len());
        out
    }

    /// A crash: queue, locks and connections gone.
    pub fn crash(&mut self) {
        self.queue.clear();
        self.lock_queue.clear();
        self.busy = 0;
        self.lock_busy = false;
        self.held.clear();
        self.leases.clear();
        self.cancelled.clear();
        self.finished_while_paused.clear();
        self.pending_accept.clear();
        self.reset_pending.clear();
        self.goaway.clear();
        self.down = true;
        self.paused = false;
        self.epoch += 1;
    }

    /// The answer to `job` at `now`: whether it succeeded (granted,
    /// unlocked, refreshed), applying it to the lock table. Returns the
    /// released lock's record when an unlock freed one.
    pub fn apply(&mut self, now: Nanos, job: &Job, lease: Nanos) -> (bool, Option<Held>) {
        match job.op {
            Op::Lock => match self.held.get(&job.key) {
                Some(h) if h.acquisition != job.acquisition => (false, None),
                Some(h) => {
                    // Granted again to the same acquisition: a new lease.
                    let h = *h;
                    self.leases.remove(&(h.lease_until, job.key));
                    self.grant(now, job, lease);
                    (true, None)
                }
                None => {
                    self.grant(now, job, lease);
                    (true, None)
                }
            },
            Op::Unlock => match self.held.get(&job.key) {
                Some(h) if h.acquisition == job.acquisition => {
                    let h = *h;
                    self.held.remove(&job.key);
                    self.leases.remove(&(h.lease_until, job.key));
                    (true, Some(h))
                }
                // Not held (expired, or lost in a crash): nothing to do.
                _ => (true, None),
            },
            Op::Refresh => match self.held.get_mut(&job.key) {
                Some(h) if h.acquisition == job.acquisition => {
                    self.leases.remove(&(h.lease_until, job.key));
                    h.lease_until = now + lease;
                    self.leases.insert((h.lease_until, job.key));
                    (true, None)
                }
                _ => (false, None),
            },
        }
    }
}
