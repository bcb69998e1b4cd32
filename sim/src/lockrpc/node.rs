//! A lock-RPC node's process, client side: one `PeerChannel` per lock
//! server, shared by every client task of the node, and what carrying out
//! its events takes.
//!
//! Sources (facts, not code): rustfs/rustfs
//! `crates/ecstore/src/cluster/rpc/remote_locker.rs` keeps one peer-health
//! record (cooldown, detach budget, breaker) per process and peer address,
//! and the internode connection is cached per address, so every lock
//! client of a process shares them; MinIO's grid holds one connection per
//! pair of nodes (`internal/grid/manager.go`). Dials are therefore counted
//! per node, not per client.

use fdlab_protocol::lockrpc::{ChannelConfig, ChannelEvent, PeerChannel};
use fdlab_protocol::Nanos;
use rand_chacha::ChaCha8Rng;

use super::network::Draw;
use super::outcome::PeerClass;
use super::world::{Ev, RpcInfo, What, World};
use crate::rng::Streams;

/// One node's shared channels.
pub(super) struct Node {
    pub channels: Vec<PeerChannel>,
    /// Per server: the channel timer scheduled.
    pub timer_at: Vec<Option<Nanos>>,
    /// Latency of what the channels send or hear on their own.
    pub rng: ChaCha8Rng,
    /// Loss of every message on the node's connections.
    pub loss: ChaCha8Rng,
    /// The jitter of background re-dials.
    pub reconnect: ChaCha8Rng,
    /// Per server: a background re-dial loop runs.
    pub redialing: Vec<bool>,
    /// Per server: the connection whose dial for a request is under way;
    /// requests made meanwhile wait for it, as on a connecting channel.
    pub pending_dial: Vec<Option<u64>>,
    /// Per server: late releases under way (RustFS admits at most
    /// `LATE_RELEASE_IN_FLIGHT_LIMIT` per peer).
    pub late_in_flight: Vec<u32>,
}

impl Node {
    pub(super) fn new(config: &ChannelConfig, servers: u32, streams: &Streams, node: u32) -> Node {
        Node {
            channels: (0..servers)
                .map(|_| PeerChannel::new(config.clone()))
                .collect(),
            timer_at: vec![None; servers as usize],
            rng: streams.lock_node_latency(node),
            loss: streams.lock_loss(node),
            reconnect: streams.lock_reconnect(node),
            redialing: vec![false; servers as usize],
            pending_dial: vec![None; servers as usize],
            late_in_flight: vec![0; servers as usize],
        }
    }
}

impl World<'_> {
    /// Carries out what node `node`'s channel to `server` asks, then arms
    /// its timer.
    pub(super) fn after_channel(&mut self, node: u32, server: u32) {
        // Classed only when an event counts: most calls carry none.
        while let Some(ev) = self.nodes[node as usize].channels[server as usize].poll_event() {
            match ev {
                ChannelEvent::Redial { .. } => self.out.redials.add(self.class(node, server)),
                ChannelEvent::Offline => self.start_redialing(node, server),
                ChannelEvent::TimedOut { rpc } => {
                    self.out.timeouts.add(self.class(node, server));
                    if let Some(info) = self.rpcs.get_mut(&rpc) {
                        info.timed_out = true;
                        let info = *info;
                        self.result(info, false, true);
                    }
                }
                ChannelEvent::Detached { .. } | ChannelEvent::Suppressed { .. } => {}
                ChannelEvent::Reset { rpc, connection } => {
                    self.ended(rpc);
                    // A request still waiting for its dial never left: it
                    // is dropped, and no reset goes out.
                    if self.waiting_dial.remove(&rpc) {
                        self.out.unsent_cancels += 1;
                        continue;
                    }
                    self.out.resets.add(self.class(node, server));
                    if let Some(at) = self.transit(Draw::Node(node), node, server) {
                        self.push(
                            at,
                            Ev::Cancel {
                                server,
                                node,
                                connection,
                                rpc,
                            },
                        );
                    }
                }
                ChannelEvent::TearDown { .. } => {
                    self.out.teardowns.add(self.class(node, server));
                }
                ChannelEvent::Failed { rpc } => {
                    self.waiting_dial.remove(&rpc);
                    if let Some(info) = self.ended(rpc) {
                        if !info.timed_out {
                            self.result(info, false, true);
                        }
                    }
                }
                ChannelEvent::Evicted { .. } => {
                    let class = self.class(node, server);
                    self.out.evictions.add(class);
                    if class == PeerClass::Healthy && self.out.first_healthy_eviction.is_none() {
                        self.out.first_healthy_eviction = Some((self.now, node, server));
                    }
                }
                ChannelEvent::LateCompletion { rpc, .. } => {
                    self.waiting_dial.remove(&rpc);
                    self.ended(rpc);
                }
                ChannelEvent::Release { rpc } => {
                    let info = match self.last_late {
                        Some((r, i)) if r == rpc => Some(i),
                        _ => self.rpcs.get(&rpc).copied(),
                    };
                    if let Some(info) = info.filter(|i| i.what == What::Lock) {
                        self.start_late_release(rpc, info.acquisition, server);
                    }
                }
            }
        }
        if let Some((_, info)) = self.last_late.take() {
            self.maybe_forget(info.acquisition);
        }
        let n = &mut self.nodes[node as usize];
        let next = n.channels[server as usize].poll_timeout();
        // Armed only when sooner than the timer already set: deadlines
        // only move later as RPCs end, and a timer that fires early finds
        // nothing due and re-arms.
        if let Some(at) = next {
            if n.timer_at[server as usize].is_none_or(|t| at < t) {
                n.timer_at[server as usize] = Some(at);
                self.push(at, Ev::ChannelTimer { node, server });
            }
        }
    }

    /// Stops tracking RPC `rpc`, keeping what it was for the `Release`
    /// that may follow it in the same batch of channel events.
    fn ended(&mut self, rpc: u64) -> Option<RpcInfo> {
        if let Some((_, old)) = self.last_late.take() {
            self.maybe_forget(old.acquisition);
        }
        let info = self.take_rpc(rpc)?;
        self.last_late = Some((rpc, info));
        Some(info)
    }
}
