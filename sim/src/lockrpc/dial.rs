//! Dials: the handshake a request waits for after its channel was evicted
//! or broke (tonic re-dials on the next request), and MinIO grid's
//! background re-dial loop for an offline channel (`disconnect =
//! "offline"`).
//!
//! Sources (facts, not code): minio/minio `internal/grid/connection.go`
//! (`connect`: dial at once, and after a failure again `defaultDialTimeout`
//! (2 s) plus up to 2 s of jitter, halved, after the previous dial started;
//! `Request` returns `ErrDisconnected` while not connected). A refused dial
//! takes one round trip; the request it was for is never sent, so a
//! refused dial is counted as a dial, not as an RPC to the dead peer. A
//! dial whose SYNs get no answer (a partition, loss) fails after the
//! channel's `connect_timeout`; requests waiting for it never left, so
//! cancelling them sends no reset.

use fdlab_protocol::lockrpc::ConnState;
use fdlab_protocol::Nanos;
use rand::RngExt;

use super::network::Draw;
use super::server::Job;
use super::world::{Ev, World};

impl World<'_> {
    /// Request `job` waits for a dial of its connection: the SYN goes now.
    pub(super) fn dial(&mut self, server: u32, job: Job, probe: bool) {
        self.waiting_dial.insert(job.rpc);
        let timeout = self.config.connect_timeout;
        match self.syn_transit(Draw::Client(job.client), job.node, server, timeout) {
            Some(at) => self.push(at, Ev::Handshake { server, job, probe }),
            None => self.push(
                self.now + timeout,
                Ev::Refused {
                    node: job.node,
                    server,
                    connection: job.connection,
                },
            ),
        }
    }

    /// A request's dial reached `server`: refused by a crashed server (the
    /// node hears it one latency later), or accepted.
    pub(super) fn handshake(&mut self, server: u32, job: Job, probe: bool) {
        if self.servers[server as usize].down {
            self.refuse(server, job.node, job.connection);
            return;
        }
        if let Some(at) = self.transit(Draw::Client(job.client), server, job.node) {
            self.push(at, Ev::DialOk { server, job, probe });
        }
    }

    /// The client heard its dial accepted: the request leaves, unless it
    /// was cancelled or failed while it waited.
    pub(super) fn dial_ok(&mut self, server: u32, job: Job, probe: bool) {
        let pending = &mut self.nodes[job.node as usize].pending_dial[server as usize];
        if *pending == Some(job.connection) {
            *pending = None;
        }
        if !self.waiting_dial.remove(&job.rpc) {
            return;
        }
        self.note_send(server, probe);
        if let Some(at) = self.transit(Draw::Client(job.client), job.node, server) {
            self.push(at, Ev::AtServer { server, job });
        }
    }

    /// Node `node`'s channel to `server` went offline: grid dials at once,
    /// unless its loop already runs.
    pub(super) fn start_redialing(&mut self, node: u32, server: u32) {
        let n = &mut self.nodes[node as usize];
        if !n.redialing[server as usize] {
            n.redialing[server as usize] = true;
            self.push(self.now, Ev::BackgroundDial { node, server });
        }
    }

    pub(super) fn background_dial(&mut self, node: u32, server: u32) {
        let n = &mut self.nodes[node as usize];
        if n.channels[server as usize].state() != ConnState::Offline {
            n.redialing[server as usize] = false;
            return;
        }
        let class = self.class(node, server);
        self.out.redials.add(class);
        self.note_dial(server, false, true);
        let started = self.now;
        let timeout = self.config.connect_timeout;
        let ev = match self.syn_transit(Draw::Node(node), node, server, timeout) {
            Some(at) => (
                at,
                Ev::DialAtServer {
                    node,
                    server,
                    started,
                },
            ),
            None => (
                self.now + timeout,
                Ev::DialRefused {
                    node,
                    server,
                    started,
                },
            ),
        };
        self.push(ev.0, ev.1);
    }

    pub(super) fn dial_at_server(&mut self, node: u32, server: u32, started: Nanos) {
        let Some(at) = self.transit(Draw::Node(node), server, node) else {
            let timeout = self.config.connect_timeout;
            self.push(
                (started + timeout).max(self.now),
                Ev::DialRefused {
                    node,
                    server,
                    started,
                },
            );
            return;
        };
        let ev = if self.servers[server as usize].down {
            Ev::DialRefused {
                node,
                server,
                started,
            }
        } else {
            Ev::DialConnected { node, server }
        };
        self.push(at, ev);
    }

    /// The next dial: a uniform draw of the reconnect wait after the
    /// failed one started (at once if that is already past).
    pub(super) fn dial_refused(&mut self, node: u32, server: u32, started: Nanos) {
        let (min, max) = (self.config.reconnect_min, self.config.reconnect_max);
        let n = &mut self.nodes[node as usize];
        let wait = Nanos(n.reconnect.random_range(min.as_nanos()..=max.as_nanos()));
        let at = (started + wait).max(self.now);
        self.push(at, Ev::BackgroundDial { node, server });
    }

    pub(super) fn dial_connected(&mut self, node: u32, server: u32) {
        let n = &mut self.nodes[node as usize];
        n.redialing[server as usize] = false;
        let ch = &mut n.channels[server as usize];
        if ch.state() == ConnState::Offline {
            ch.handle_reconnected(self.now);
        }
        self.after_channel(node, server);
    }
}
