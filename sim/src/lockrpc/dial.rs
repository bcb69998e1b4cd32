//! Dials: the handshake a request waits for after its channel was evicted
//! or broke (tonic re-dials on the next request), and MinIO grid's
//! background re-dial loop for an offline channel (`disconnect =
//! "offline"`).
//!
//! Source (facts, not code): minio/minio `internal/grid/connection.go`
//! (`connect`: dial at once, and after a failure again `defaultDialTimeout`
//! (2 s) plus up to 2 s of jitter, halved, after the previous dial started;
//! `Request` returns `ErrDisconnected` while not connected). A refused dial
//! takes one round trip; the request it was for is never sent, so a
//! refused dial is counted as a dial, not as an RPC to the dead peer.

use fdlab_protocol::lockrpc::ConnState;
use fdlab_protocol::Nanos;
use rand::RngExt;

use super::server::Job;
use super::world::{Ev, World};

impl World<'_> {
    /// A request's dial reached `server`: refused by a crashed server (the
    /// client hears it one latency later), or accepted, and the request
    /// goes once the client heard back.
    pub(super) fn handshake(&mut self, server: u32, job: Job, probe: bool) {
        if self.servers[server as usize].down {
            self.refuse(server, &job);
            return;
        }
        let node = self.clients[job.client as usize].node;
        let back = self.latency(job.client, server, node);
        let pending = &mut self.clients[job.client as usize].pending_dial[server as usize];
        if *pending == Some(job.connection) {
            *pending = None;
        }
        let forth = self.latency(job.client, node, server);
        self.note_send(server, probe);
        self.push(self.now + back + forth, Ev::AtServer { server, job });
    }

    /// Client `client`'s channel to `server` went offline: grid dials at
    /// once, unless its loop already runs.
    pub(super) fn start_redialing(&mut self, client: u32, server: u32) {
        let c = &mut self.clients[client as usize];
        if !c.redialing[server as usize] {
            c.redialing[server as usize] = true;
            self.push(self.now, Ev::BackgroundDial { client, server });
        }
    }

    pub(super) fn background_dial(&mut self, client: u32, server: u32) {
        let c = &mut self.clients[client as usize];
        if c.channels[server as usize].state() != ConnState::Offline {
            c.redialing[server as usize] = false;
            return;
        }
        let class = self.class(client, server);
        self.out.redials.add(class);
        self.note_dial(server, false, true);
        let node = self.clients[client as usize].node;
        let at = self.now + self.latency(client, node, server);
        self.push(
            at,
            Ev::DialAtServer {
                client,
                server,
                started: self.now,
            },
        );
    }

    pub(super) fn dial_at_server(&mut self, client: u32, server: u32, started: Nanos) {
        let node = self.clients[client as usize].node;
        let at = self.now + self.latency(client, server, node);
        let ev = if self.servers[server as usize].down {
            Ev::DialRefused {
                client,
                server,
                started,
            }
        } else {
            Ev::DialConnected { client, server }
        };
        self.push(at, ev);
    }

    /// The next dial: a uniform draw of the reconnect wait after the
    /// failed one started (at once if that is already past).
    pub(super) fn dial_refused(&mut self, client: u32, server: u32, started: Nanos) {
        let (min, max) = (self.config.reconnect_min, self.config.reconnect_max);
        let c = &mut self.clients[client as usize];
        let wait = Nanos(c.reconnect.random_range(min.as_nanos()..=max.as_nanos()));
        let at = (started + wait).max(self.now);
        self.push(at, Ev::BackgroundDial { client, server });
    }

    pub(super) fn dial_connected(&mut self, client: u32, server: u32) {
        let c = &mut self.clients[client as usize];
        c.redialing[server as usize] = false;
        let ch = &mut c.channels[server as usize];
        if ch.state() == ConnState::Offline {
            ch.handle_reconnected(self.now);
        }
        self.after_channel(client, server);
    }
}
