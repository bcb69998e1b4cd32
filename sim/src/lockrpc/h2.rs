//! A lock server's HTTP/2 layer: streams arrive and are accepted (at once
//! by a running process; a frozen one accepts nothing until it runs
//! again), resets (`RST_STREAM`) drop streams not yet served, and too many
//! resets of streams still waiting to be accepted close the connection
//! (`GOAWAY`); a crashed server refuses.
//!
//! Source (facts, not code): hyperium/h2 v0.4.18
//! `src/proto/streams/recv.rs` `recv_reset` (:897-929: only a stream
//! pending accept is counted, past `DEFAULT_REMOTE_RESET_STREAM_MAX` = 20,
//! `src/proto/mod.rs:34`, the connection errors with `ENHANCE_YOUR_CALM`
//! "too_many_resets"), `src/proto/streams/streams.rs:144-147` (the count
//! drops as the application accepts such a stream); hyper v1.11.0 and
//! tonic v0.14.6 keep h2's default.

use super::network::Draw;
use super::server::Job;
use super::world::{Ev, World};

impl World<'_> {
    pub(super) fn at_server(&mut self, server: u32, job: Job) {
        let s = &mut self.servers[server as usize];
        let dead = s.down || job.connection < s.floor[job.node as usize];
        if dead {
            // Connection refused (or reset by a restarted server).
            self.refuse(server, job.node, job.connection);
            return;
        }
        if !s.live(&job) {
            s.cancelled.remove(&job.rpc);
            return;
        }
        if s.paused {
            // A frozen process accepts nothing: the stream waits in h2's
            // accept queue until the server runs again.
            s.pending_accept.push(job);
            return;
        }
        self.accept(server, job);
    }

    /// The server's h2 layer hands the stream to the lock service.
    fn accept(&mut self, server: u32, job: Job) {
        let s = &mut self.servers[server as usize];
        if self.setup.convoy && job.op == super::server::Op::Lock {
            s.lock_queue.push_back(job);
        } else {
            s.queue.push_back(job);
        }
        self.try_start(server);
    }

    /// A `RST_STREAM` reached `server`. h2 drops a stream the service has
    /// not served; a reset of a stream still waiting to be accepted counts
    /// against `max_pending_accept_reset_streams`, past which the server
    /// closes the connection with `GOAWAY` (`ENHANCE_YOUR_CALM`); a reset
    /// of a stream already accepted never does (hyperium/h2
    /// `src/proto/streams/recv.rs`, `recv_reset`).
    pub(super) fn cancel_at_server(&mut self, server: u32, node: u32, connection: u64, rpc: u64) {
        let limit = self.config.reset_limit;
        let s = &mut self.servers[server as usize];
        if s.down || s.closed.contains(&(node, connection)) {
            return;
        }
        let pending = s.pending_accept.iter().any(|j| j.rpc == rpc);
        s.cancelled.insert(rpc);
        if pending && s.reset_pending(node, connection) > limit {
            // Sent once the process runs again (it is frozen now).
            s.goaway.insert((node, connection));
        }
    }

    /// A paused server runs again: its h2 layer reads what arrived, closes
    /// the connections that passed the reset limit, and accepts the rest.
    pub(super) fn resume_accepting(&mut self, server: u32) {
        let s = &mut self.servers[server as usize];
        let goaway = std::mem::take(&mut s.goaway);
        s.clear_reset_counts();
        let pending = std::mem::take(&mut s.pending_accept);
        for &(node, connection) in &goaway {
            self.servers[server as usize].close(node, connection);
            if let Some(at) = self.transit(Draw::Node(node), server, node) {
                self.push(
                    at,
                    Ev::GoAway {
                        node,
                        server,
                        connection,
                    },
                );
            }
        }
        for job in pending {
            let s = &mut self.servers[server as usize];
            if s.live(&job) {
                self.accept(server, job);
            } else {
                s.cancelled.remove(&job.rpc);
            }
        }
    }

    /// `server` refuses node `node`'s `connection`: the node hears it one
    /// latency later.
    pub(super) fn refuse(&mut self, server: u32, node: u32, connection: u64) {
        if let Some(at) = self.transit(Draw::Node(node), server, node) {
            self.push(
                at,
                Ev::Refused {
                    node,
                    server,
                    connection,
                },
            );
        }
    }
}
