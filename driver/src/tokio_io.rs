//! [`Transport`] and [`Clock`] over tokio: real UDP sockets and the monotonic
//! clock, for running the driver between real processes (`fdlab live`).
//!
//! `Node::run` keeps one `recv` future alive across iterations, so it never
//! relies on cancel safety; tokio's `UdpSocket::recv_from` is cancel-safe
//! anyway. Run each `Node` in its own task on a current-thread runtime (or a
//! `LocalSet`): the trait's futures are not promised `Send`.

use std::io;
use std::net::SocketAddr;
use std::time::Duration;

use fdlab_protocol::Nanos;
use tokio::net::UdpSocket;
use tokio::time::Instant;

use crate::node::{Clock, Transport};
use crate::wire;

/// Local time as nanoseconds since `epoch`.
#[derive(Clone, Copy, Debug)]
pub struct TokioClock {
    pub epoch: Instant,
}

impl TokioClock {
    pub fn start() -> TokioClock {
        TokioClock {
            epoch: Instant::now(),
        }
    }
}

impl Clock for TokioClock {
    fn now(&self) -> Nanos {
        let ns = self.epoch.elapsed().as_nanos();
        Nanos(u64::try_from(ns).unwrap_or(u64::MAX))
    }

    async fn sleep_until(&self, t: Nanos) {
        match self.epoch.checked_add(Duration::from_nanos(t.as_nanos())) {
            Some(deadline) => tokio::time::sleep_until(deadline).await,
            None => std::future::pending().await,
        }
    }
}

/// A UDP socket.
#[derive(Debug)]
pub struct TokioTransport {
    pub socket: UdpSocket,
}

impl TokioTransport {
    pub async fn bind(addr: SocketAddr) -> io::Result<TokioTransport> {
        Ok(TokioTransport {
            socket: UdpSocket::bind(addr).await?,
        })
    }
}

impl Transport for TokioTransport {
    type Addr = SocketAddr;

    async fn recv(&self) -> io::Result<(Vec<u8>, SocketAddr)> {
        // One byte more than a message: an oversized datagram stays oversized
        // and the decoder drops it.
        let mut buf = [0u8; wire::LEN + 1];
        loop {
            match self.socket.recv_from(&mut buf).await {
                Ok((n, from)) => return Ok((buf[..n].to_vec(), from)),
                // An ICMP "port unreachable" for an earlier send surfaces here
                // on some systems (the peer is down): not our socket's failure.
                Err(e) if e.kind() == io::ErrorKind::ConnectionRefused => continue,
                Err(e) => return Err(e),
            }
        }
    }

    async fn send(&self, to: &SocketAddr, bytes: &[u8]) -> io::Result<()> {
        self.socket.send_to(bytes, to).await.map(|_| ())
    }
}
