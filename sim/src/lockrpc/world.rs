//! The event loop of one lock-RPC run: the queue, the servers' workers,
//! service and leases, and the bookkeeping of dead-peer windows. A
//! server's HTTP/2 layer is in `h2.rs`, the clients' side in `client.rs`
//! and `node.rs`.

use std::collections::{BTreeMap, BTreeSet};

use fdlab_protocol::lockrpc::{ChannelConfig, ChannelCounters, UnlockRetry};
use fdlab_protocol::lockrpc::{ConnState, DsyncHolder, DsyncUnlock};
use fdlab_protocol::Nanos;
use rand_chacha::ChaCha8Rng;

use super::ids::IdWindow;
use super::network::Draw;
use super::node::Node;
use super::outcome::{LockOutcome, PeerSplit};
use super::release::LateRelease;
use super::server::{Held, Job, Server};
use super::setup::Setup;
use crate::faults::{Action, LinkFault, Partition, Schedule};
use crate::queue::EventQueue;
use crate::rng::Streams;
use crate::scenario::Scenario;

/// One simulated happening.
#[derive(Clone, Copy, Debug)]
pub(super) enum Ev {
    /// Client `client` starts an acquisition.
    Arrive {
        client: u32,
    },
    /// An RPC reaches its server.
    AtServer {
        server: u32,
        job: Job,
    },
    /// A dial made for request `job` reaches its server (`probe`: the
    /// request is the breaker's probe).
    Handshake {
        server: u32,
        job: Job,
        probe: bool,
    },
    /// The client heard its dial accepted: the request `job` leaves now,
    /// unless it was cancelled or failed meanwhile.
    DialOk {
        server: u32,
        job: Job,
        probe: bool,
    },
    /// A background re-dial (MinIO grid) starts, reaches the server, is
    /// refused back at the node, or connects.
    BackgroundDial {
        node: u32,
        server: u32,
    },
    DialAtServer {
        node: u32,
        server: u32,
        started: Nanos,
    },
    DialRefused {
        node: u32,
        server: u32,
        started: Nanos,
    },
    DialConnected {
        node: u32,
        server: u32,
    },
    /// A `RST_STREAM` for RPC `rpc` on node `node`'s `connection` reaches
    /// the server.
    Cancel {
        server: u32,
        node: u32,
        connection: u64,
        rpc: u64,
    },
    /// The server's GOAWAY closing `connection` reaches node `node`.
    GoAway {
        node: u32,
        server: u32,
        connection: u64,
    },
    /// A worker finished `job`.
    Done {
        server: u32,
        job: Job,
        lock_lane: bool,
        epoch: u32,
    },
    /// An answer reaches the client (`ok`: granted, unlocked, refreshed).
    AtClient {
        client: u32,
        server: u32,
        rpc: u64,
        ok: bool,
    },
    /// Connection `connection` of node `node` failed (refused, reset,
    /// connect timeout).
    Refused {
        node: u32,
        server: u32,
        connection: u64,
    },
    ChannelTimer {
        node: u32,
        server: u32,
    },
    /// A late release of RPC `rpc`'s grant is due again.
    LateReleaseRetry {
        rpc: u64,
    },
    HoldEnd {
        acquisition: u64,
    },
    /// dsync: an acquisition attempt's wait for a quorum ends.
    AcquireWait {
        acquisition: u64,
    },
    /// dsync: client `client` tries again for lock `key`, wanted since
    /// `started`; attempt number `attempt`.
    Retry {
        client: u32,
        key: u32,
        started: Nanos,
        attempt: u32,
    },
    UnlockTimer {
        acquisition: u64,
        server: u32,
    },
    DsyncTimer {
        acquisition: u64,
    },
    /// dsync: the next release round of an acquisition may be due.
    GroupUnlockTimer {
        acquisition: u64,
    },
    /// A server's earliest lease may have ended.
    Lease {
        server: u32,
    },
    Fault(Action),
}

/// What an RPC is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum What {
    Lock,
    Unlock,
    /// A dsync release round's call.
    GroupUnlock,
    /// Releasing a grant that came after its caller gave up (or may have
    /// come: a late error), for the late release of Lock RPC `release`.
    LateUnlock {
        release: u64,
    },
    Refresh {
        round: u64,
    },
}

#[derive(Clone, Copy, Debug)]
pub(super) struct RpcInfo {
    pub acquisition: u64,
    pub server: u32,
    pub what: What,
    /// Its deadline passed (its caller was told; it may run detached).
    pub timed_out: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum AcqState {
    Pending,
    Held,
    Released,
    Failed,
}

/// One acquisition of one client.
#[derive(Debug)]
pub(super) struct Acq {
    pub client: u32,
    pub key: u32,
    /// When the client first asked for the lock (retries keep it).
    pub started: Nanos,
    /// dsync's attempt number (from 1); 1 under the other policies.
    pub attempt: u32,
    pub state: AcqState,
    /// Servers that granted (bit i: server i), and that said no or failed.
    pub grants: u64,
    pub failures: u32,
    /// Its RPCs still tracked (in flight or detached).
    pub outstanding: u32,
    pub unlocks: BTreeMap<u32, UnlockRetry>,
    /// Late releases of its grants under way.
    pub releasing: u32,
    /// dsync: its release rounds (boxed: most acquisitions have none).
    pub group: Option<Box<DsyncUnlock>>,
    /// Boxed: most acquisitions have none, and acquisitions move in a map.
    pub holder: Option<Box<DsyncHolder>>,
}

/// One client: a task of its node's process, with its own arrivals.
pub(super) struct Client {
    pub node: u32,
    pub arrivals: ChaCha8Rng,
    pub rng: ChaCha8Rng,
}

/// A crashed server's window being measured.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct DeadWindow {
    pub start: Nanos,
    /// The last RPC sent, and the last RPC or dial for a request (breaker
    /// probes aside).
    pub last_rpc: Option<Nanos>,
    pub last_use: Option<Nanos>,
    pub rpcs: u64,
    pub probes: u64,
    pub dials: u64,
    pub background_dials: u64,
}

pub(super) struct World<'a> {
    pub setup: &'a Setup,
    pub config: ChannelConfig,
    pub now: Nanos,
    pub queue: EventQueue<Ev>,
    pub servers: Vec<Server>,
    pub server_rngs: Vec<ChaCha8Rng>,
    pub clients: Vec<Client>,
    pub nodes: Vec<Node>,
    /// Requests queued behind a dial under way: they leave when it
    /// connects; cancelled before that, they never leave (no reset).
    pub waiting_dial: BTreeSet<u64>,
    /// Late releases between retries: by the released RPC's id, the
    /// acquisition, server and attempt number.
    pub late_releases: BTreeMap<u64, LateRelease>,
    pub acqs: IdWindow<Acq>,
    pub rpcs: IdWindow<RpcInfo>,
    /// By acquisition: when its client stopped wanting the lock (gave up,
    /// or gave up unlocking); `u64::MAX` while wanted or released cleanly.
    pub wanted_until: Vec<u64>,
    pub next_rpc: u64,
    pub link_faults: Vec<LinkFault>,
    pub partitions: Vec<Partition>,
    pub windows: Vec<Option<DeadWindow>>,
    /// A detached RPC that just ended, for the `Release` that follows it.
    pub last_late: Option<(u64, RpcInfo)>,
    pub out: LockOutcome,
}

impl<'a> World<'a> {
    pub(super) fn new(
        scenario: &Scenario,
        setup: &'a Setup,
        seed: u64,
        policy: usize,
    ) -> World<'a> {
        let streams = Streams::new(seed);
        let names = scenario.topology.node_names();
        let schedule = Schedule::resolve(scenario, &names, &streams);
        let config = setup.configs[policy].clone();
        let mut queue = EventQueue::new();
        for &(at, action) in &schedule.actions {
            queue.push(at.as_nanos(), Ev::Fault(action));
        }
        let clients = (0..setup.clients)
            .map(|c| Client {
                node: setup.node_of(c),
                arrivals: streams.lock_arrivals(c),
                rng: streams.lock_latency(c),
            })
            .collect();
        let nodes = (0..setup.servers)
            .map(|n| Node::new(&config, setup.servers, &streams, n))
            .collect();
        let servers = (0..setup.servers)
            .map(|_| Server {
                floor: vec![0; setup.servers as usize],
                ..Server::default()
            })
            .collect();
        let mut world = World {
            setup,
            now: Nanos::ZERO,
            queue,
            servers,
            server_rngs: (0..setup.servers).map(|s| streams.lock_server(s)).collect(),
            clients,
            nodes,
            waiting_dial: BTreeSet::new(),
            late_releases: BTreeMap::new(),
            acqs: IdWindow::default(),
            rpcs: IdWindow::default(),
            wanted_until: Vec::new(),
            next_rpc: 0,
            link_faults: schedule.link_faults.clone(),
            partitions: schedule.partitions.clone(),
            windows: vec![None; setup.servers as usize],
            last_late: None,
            out: LockOutcome {
                scenario: scenario.name.clone(),
                seed,
                policy: config.policy,
                duration: scenario.duration,
                servers: setup.servers,
                clients: setup.clients,
                events: 0,
                counters: ChannelCounters::default(),
                evictions: PeerSplit::default(),
                redials: PeerSplit::default(),
                resets: PeerSplit::default(),
                unsent_cancels: 0,
                teardowns: PeerSplit::default(),
                timeouts: PeerSplit::default(),
                acquisitions: 0,
                acquired: 0,
                retried_attempts: 0,
                failed_acquisitions: 0,
                latencies_us: Vec::new(),
                orphaned: Nanos::ZERO,
                unlock_retries: 0,
                unlock_give_ups: 0,
                lease_expiries: 0,
                locks_lost: 0,
                live_server_time: Nanos::ZERO,
                dead_peers: Vec::new(),
                first_healthy_eviction: None,
                faults: schedule.records.clone(),
            },
            config,
        };
        for c in 0..setup.clients {
            world.schedule_arrival(c);
        }
        world
    }

    /// Runs to the end of the scenario.
    pub(super) fn run(mut self) -> LockOutcome {
        let end = self.setup.duration;
        let mut down_since: Vec<Option<Nanos>> = vec![None; self.servers.len()];
        while let Some((at, ev)) = self.queue.pop() {
            let at = Nanos(at);
            if at > end {
                break;
            }
            self.now = at;
            self.out.events += 1;
            if let Ev::Fault(Action::Crash { node }) = ev {
                down_since[node as usize].get_or_insert(at);
            }
            if let Ev::Fault(Action::Restart { node }) = ev {
                if let Some(since) = down_since[node as usize].take() {
                    self.out.live_server_time = self.out.live_server_time + (at - since);
                }
            }
            self.handle(ev);
        }
        self.now = end;
        let mut downtime = Nanos::ZERO;
        for since in down_since.into_iter().flatten() {
            downtime = downtime + (end - since);
        }
        let total = Nanos(end.as_nanos() * u64::from(self.setup.servers));
        // live_server_time held the finished downtimes so far.
        self.out.live_server_time = total - (self.out.live_server_time + downtime);
        for s in 0..self.servers.len() {
            self.close_window(s as u32);
        }
        let mut counters = ChannelCounters::default();
        for n in &self.nodes {
            for ch in &n.channels {
                counters.add(ch.counters());
            }
        }
        self.out.counters = counters;
        self.out
    }

    fn handle(&mut self, ev: Ev) {
        match ev {
            Ev::Arrive { client } => self.arrive(client),
            Ev::AtServer { server, job } => self.at_server(server, job),
            Ev::Handshake { server, job, probe } => self.handshake(server, job, probe),
            Ev::DialOk { server, job, probe } => self.dial_ok(server, job, probe),
            Ev::BackgroundDial { node, server } => self.background_dial(node, server),
            Ev::DialAtServer {
                node,
                server,
                started,
            } => self.dial_at_server(node, server, started),
            Ev::DialRefused {
                node,
                server,
                started,
            } => self.dial_refused(node, server, started),
            Ev::DialConnected { node, server } => self.dial_connected(node, server),
            Ev::Cancel {
                server,
                node,
                connection,
                rpc,
            } => self.cancel_at_server(server, node, connection, rpc),
            Ev::GoAway {
                node,
                server,
                connection,
            } => {
                self.nodes[node as usize].channels[server as usize]
                    .handle_goaway(self.now, connection);
                self.after_channel(node, server);
            }
            Ev::LateReleaseRetry { rpc } => self.late_release_retry(rpc),
            Ev::Done {
                server,
                job,
                lock_lane,
                epoch,
            } => {
                let s = &mut self.servers[server as usize];
                if s.epoch != epoch {
                    return;
                }
                if s.paused {
                    s.finished_while_paused.push((job, lock_lane));
                    return;
                }
                self.finish(server, job, lock_lane);
                self.try_start(server);
            }
            Ev::AtClient {
                client,
                server,
                rpc,
                ok,
            } => self.at_client(client, server, rpc, ok),
            Ev::Refused {
                node,
                server,
                connection,
            } => {
                let n = &mut self.nodes[node as usize];
                if n.pending_dial[server as usize] == Some(connection) {
                    n.pending_dial[server as usize] = None;
                }
                let ch = &mut n.channels[server as usize];
                // Once per failed connection: a dial's waiting requests
                // are refused with it.
                if ch.connection() == connection && ch.state() == ConnState::Connected {
                    ch.handle_transport_error(self.now);
                    self.after_channel(node, server);
                }
            }
            Ev::ChannelTimer { node, server } => {
                let n = &mut self.nodes[node as usize];
                if n.timer_at[server as usize] == Some(self.now) {
                    n.timer_at[server as usize] = None;
                    n.channels[server as usize].handle_timeout(self.now);
                    self.after_channel(node, server);
                }
            }
            Ev::HoldEnd { acquisition } => self.hold_end(acquisition),
            Ev::AcquireWait { acquisition } => self.acquire_wait(acquisition),
            Ev::Retry {
                client,
                key,
                started,
                attempt,
            } => self.attempt(client, key, started, attempt),
            Ev::UnlockTimer {
                acquisition,
                server,
            } => {
                if let Some(u) = self
                    .acqs
                    .get_mut(&acquisition)
                    .and_then(|a| a.unlocks.get_mut(&server))
                {
                    u.handle_timeout(self.now);
                    self.drive_unlock(acquisition, server);
                }
            }
            Ev::DsyncTimer { acquisition } => self.dsync_timer(acquisition),
            Ev::GroupUnlockTimer { acquisition } => self.group_unlock_timer(acquisition),
            Ev::Lease { server } => self.lease(server),
            Ev::Fault(action) => self.fault(action),
        }
    }

    pub(super) fn push(&mut self, at: Nanos, ev: Ev) {
        self.queue.push(at.as_nanos(), ev);
    }

    pub(super) fn try_start(&mut self, server: u32) {
        let workers = self.setup.workers;
        loop {
            let s = &mut self.servers[server as usize];
            if s.down || s.paused {
                return;
            }
            let lane = if s.busy < workers && !s.queue.is_empty() {
                false
            } else if !s.lock_busy && !s.lock_queue.is_empty() {
                true
            } else {
                return;
            };
            let Some(job) = s.next_job(lane) else {
                continue;
            };
            if lane {
                s.lock_busy = true;
            } else {
                s.busy += 1;
            }
            let (slowdown, epoch) = (s.slowdown, s.epoch);
            let service = self
                .setup
                .service
                .sample(&mut self.server_rngs[server as usize]);
            self.push(
                self.now + service + slowdown,
                Ev::Done {
                    server,
                    job,
                    lock_lane: lane,
                    epoch,
                },
            );
        }
    }

    pub(super) fn finish(&mut self, server: u32, job: Job, lock_lane: bool) {
        let lease = self.config.unlock.server_lease;
        let s = &mut self.servers[server as usize];
        if lock_lane {
            s.lock_busy = false;
        } else {
            debug_assert!(s.busy > 0);
            s.busy -= 1;
        }
        if !s.live(&job) {
            s.cancelled.remove(&job.rpc);
            return;
        }
        let (ok, released) = s.apply(self.now, &job, lease);
        if let Some(h) = released {
            self.count_orphan(h);
        }
        self.arm_lease(server);
        if let Some(at) = self.transit(Draw::Client(job.client), server, job.node) {
            self.push(
                at,
                Ev::AtClient {
                    client: job.client,
                    server,
                    rpc: job.rpc,
                    ok,
                },
            );
        }
    }

    /// A released lock's time while its client no longer wanted it.
    fn count_orphan(&mut self, h: Held) {
        let until = self
            .wanted_until
            .get(h.acquisition as usize)
            .copied()
            .unwrap_or(u64::MAX);
        if until == u64::MAX {
            return;
        }
        let from = h.granted_at.as_nanos().max(until);
        if self.now.as_nanos() > from {
            self.out.orphaned = self.out.orphaned + Nanos(self.now.as_nanos() - from);
        }
    }

    /// Schedules `server`'s lease timer at its earliest lease, unless one
    /// is due sooner.
    fn arm_lease(&mut self, server: u32) {
        let s = &mut self.servers[server as usize];
        if let Some(&(at, _)) = s.leases.first() {
            if s.lease_timer.is_none_or(|t| at < t) {
                s.lease_timer = Some(at);
                self.push(at, Ev::Lease { server });
            }
        }
    }

    fn lease(&mut self, server: u32) {
        let s = &mut self.servers[server as usize];
        if s.lease_timer != Some(self.now) {
            return;
        }
        s.lease_timer = None;
        for h in s.expire(self.now) {
            self.out.lease_expiries += 1;
            self.count_orphan(h);
        }
        self.arm_lease(server);
    }
}
