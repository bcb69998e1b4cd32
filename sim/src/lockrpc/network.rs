//! How a lock-RPC message travels: over a TCP connection, so a lost or cut
//! segment is sent again until it gets through. The scenario's latency,
//! slow links, loss (the scenario's own and loss faults) and partitions
//! apply to lock traffic as to any other (SPEC §10).
//!
//! Sources: Linux TCP (`Documentation/networking/ip-sysctl.rst`:
//! `TCP_RTO_MIN` 200 ms doubling up to `TCP_RTO_MAX` 120 s, `tcp_retries2`
//! = 15 retransmissions, about 924.6 s, before a connection gives up;
//! `tcp_syn_retries` = 6 SYNs, 1 s (`TCP_TIMEOUT_INIT`) doubling, 127 s,
//! for a connect). Deviations: one segment per message, no congestion
//! window; a connection that gives up on a segment is not torn down (the
//! RPC's deadline and the detached RPC's expiry end what waits on it).
//!
//! Draws: the latency of a message from the stream of whoever sends or
//! hears it (a client, or a node's shared channel), and its loss, only
//! when some loss applies, from the stream of the node whose connection
//! carries it, so a scenario without loss draws nothing for it.

use fdlab_protocol::Nanos;
use rand::RngExt;

use super::world::World;

/// Linux's first retransmission timeout of a data segment (`TCP_RTO_MIN`).
const TCP_RTO_MIN: Nanos = Nanos::from_millis(200);
/// Linux's largest retransmission timeout (`TCP_RTO_MAX`).
const TCP_RTO_MAX: Nanos = Nanos::from_secs(120);
/// Retransmissions of a data segment before the connection gives up
/// (`tcp_retries2`).
const TCP_RETRIES: u32 = 15;
/// The first SYN retransmission timeout (`TCP_TIMEOUT_INIT`), doubling.
const TCP_SYN_RTO: Nanos = Nanos::from_secs(1);
/// SYN retransmissions before a connect fails on its own (`tcp_syn_retries`).
const TCP_SYN_RETRIES: u32 = 6;

/// Whose stream a message's latency is drawn from.
#[derive(Clone, Copy, Debug)]
pub(super) enum Draw {
    /// A client's: its requests and the replies to them.
    Client(u32),
    /// A node's shared channels': resets, dials, refusals, GOAWAYs.
    Node(u32),
}

impl World<'_> {
    /// When one transmission `from -> to` sent at `at` arrives, or none if
    /// lost or cut; a partition in `hold` mode delivers at its heal.
    fn transmission(&mut self, who: Draw, from: u32, to: u32, at: Nanos) -> Option<Nanos> {
        let mut loss = self.setup.loss;
        let mut extra = Nanos::ZERO;
        for f in self.link_faults.iter().filter(|f| f.applies(from, to, at)) {
            extra = extra + f.extra_latency;
            loss = 1.0 - (1.0 - loss) * (1.0 - f.loss_at(at));
        }
        let (rng, node) = match who {
            Draw::Client(c) => {
                let c = &mut self.clients[c as usize];
                (&mut c.rng, c.node)
            }
            Draw::Node(n) => (&mut self.nodes[n as usize].rng, n),
        };
        let latency = self.setup.latency.sample(rng) + extra;
        if loss > 0.0 && self.nodes[node as usize].loss.random::<f64>() < loss {
            return None;
        }
        let mut arrive = at + latency;
        for p in self.partitions.iter().filter(|p| p.cuts(from, to, at)) {
            if !p.hold {
                return None;
            }
            arrive = arrive.max(p.window.end + latency);
        }
        Some(arrive)
    }

    /// When a message `from -> to` sent now on a connection arrives: each
    /// lost transmission is sent again after the retransmission timeout
    /// (200 ms, doubling to 120 s), at most [`TCP_RETRIES`] times (then
    /// none).
    pub(super) fn transit(&mut self, who: Draw, from: u32, to: u32) -> Option<Nanos> {
        let mut delay = Nanos::ZERO;
        let mut rto = TCP_RTO_MIN;
        for _ in 0..=TCP_RETRIES {
            if let Some(arrive) = self.transmission(who, from, to, self.now + delay) {
                return Some(arrive);
            }
            delay = delay + rto;
            rto = (rto + rto).min(TCP_RTO_MAX);
        }
        None
    }

    /// When a dial's SYN `from -> to` sent now reaches its server, if it
    /// does within `connect_timeout` (and the kernel's own SYN retries):
    /// SYNs are sent again after 1 s, doubling.
    pub(super) fn syn_transit(
        &mut self,
        who: Draw,
        from: u32,
        to: u32,
        connect_timeout: Nanos,
    ) -> Option<Nanos> {
        let mut delay = Nanos::ZERO;
        let mut rto = TCP_SYN_RTO;
        for _ in 0..=TCP_SYN_RETRIES {
            if delay >= connect_timeout {
                return None;
            }
            if let Some(arrive) = self.transmission(who, from, to, self.now + delay) {
                return Some(arrive);
            }
            delay = delay + rto;
            rto = rto + rto;
        }
        None
    }
}
