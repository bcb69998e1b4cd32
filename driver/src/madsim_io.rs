//! [`Transport`] and [`Clock`] over madsim 0.2.34 (only under `--cfg madsim`).
//!
//! madsim's `net::Endpoint` is a tagged datagram socket: `send_to` sleeps a
//! random 0–5 µs, which madsim's `sleep` floors at 1 ms; then the packet is
//! dropped with `Config.net.packet_loss_rate` or if either end is clogged,
//! else delivered after a latency drawn uniformly from
//! `Config.net.send_latency` (default 1–10 ms); `recv_from` sleeps 1 ms again
//! after taking a datagram from the mailbox. See `madsim/src/sim/net/mod.rs`
//! (`rand_delay`, `send`), `network.rs` (`test_link`), `endpoint.rs`
//! (`recv_from_raw`) and `time/mod.rs` (`sleep_until`). A receive dropped
//! during that last sleep loses its datagram: `Node::run` never drops one.
//! Time is virtual: `std::time::Instant` reads madsim's clock.

use std::io;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use fdlab_protocol::Nanos;
use madsim::net::Endpoint;

use crate::node::{Clock, Transport};
use crate::wire;

/// The one tag our datagrams use on an endpoint.
const TAG: u64 = 0xfd1a;

/// Local time as nanoseconds since `epoch` (madsim's virtual clock).
#[derive(Clone, Copy, Debug)]
pub struct MadsimClock {
    pub epoch: Instant,
}

impl Clock for MadsimClock {
    fn now(&self) -> Nanos {
        let ns = self.epoch.elapsed().as_nanos();
        Nanos(u64::try_from(ns).unwrap_or(u64::MAX))
    }

    async fn sleep_until(&self, t: Nanos) {
        let deadline = self.epoch.checked_add(Duration::from_nanos(t.as_nanos()));
        match deadline {
            Some(d) => madsim::time::sleep_until(d).await,
            // Beyond what Instant can hold: never.
            None => std::future::pending().await,
        }
    }
}

/// A madsim datagram endpoint.
pub struct MadsimTransport {
    pub endpoint: Endpoint,
}

impl MadsimTransport {
    pub async fn bind(addr: SocketAddr) -> io::Result<MadsimTransport> {
        Ok(MadsimTransport {
            endpoint: Endpoint::bind(addr).await?,
        })
    }
}

impl Transport for MadsimTransport {
    type Addr = SocketAddr;

    async fn recv(&self) -> io::Result<(Vec<u8>, SocketAddr)> {
        // One byte more than a message, so an oversized datagram stays
        // oversized (and is dropped by the decoder) instead of being cut.
        let mut buf = [0u8; wire::LEN + 1];
        let (n, from) = self.endpoint.recv_from(TAG, &mut buf).await?;
        Ok((buf[..n].to_vec(), from))
    }

    async fn send(&self, to: &SocketAddr, bytes: &[u8]) -> io::Result<()> {
        self.endpoint.send_to(*to, TAG, bytes).await
    }
}
