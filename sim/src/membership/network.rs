//! How a message between silos travels in a membership run: the scenario's
//! control-channel latency and loss, slow links, loss faults and partitions,
//! exactly as the detector simulator applies them (`crate::faults`), drawn
//! from the sender's own stream (one per node, in send order) so that
//! nothing one node sends changes another node's draws.

use fdlab_protocol::Nanos;
use rand::RngExt;
use rand_chacha::ChaCha8Rng;

use crate::dist::Sampler;
use crate::faults::Schedule;

/// The first retransmission timeout of a lost TCP segment (Linux's
/// `TCP_RTO_MIN`), doubling at each retry.
const TCP_RTO: Nanos = Nanos::from_millis(200);
/// A stream message still lost after this long is given up: memberlist's
/// `TCPTimeout` (10 s, `config.go:282` at v0.2.2).
const TCP_GIVE_UP: Nanos = Nanos::from_secs(10);

/// The network of one membership run.
#[derive(Debug)]
pub(crate) struct Network {
    latency: Sampler,
    loss: f64,
    /// By sender node.
    streams: Vec<ChaCha8Rng>,
}

impl Network {
    pub(crate) fn new(latency: Sampler, loss: f64, streams: Vec<ChaCha8Rng>) -> Network {
        Network {
            latency,
            loss,
            streams,
        }
    }

    /// When a message `from -> to` sent at `at` arrives, or none if it is
    /// lost or cut. A partition in `hold` mode delivers at its heal.
    #[inline]
    pub(crate) fn arrival(
        &mut self,
        schedule: &Schedule,
        from: u32,
        to: u32,
        at: Nanos,
    ) -> Option<Nanos> {
        let rng = &mut self.streams[from as usize];
        let mut loss = self.loss;
        let mut extra = Nanos::ZERO;
        for f in schedule
            .link_faults
            .iter()
            .filter(|f| f.applies(from, to, at))
        {
            extra = extra + f.extra_latency;
            loss = 1.0 - (1.0 - loss) * (1.0 - f.loss_at(at));
        }
        // Every message draws its loss first (when there can be any), then
        // its latency: the stream's order does not depend on the outcome.
        let lost = loss > 0.0 && rng.random::<f64>() < loss;
        let latency = self.latency.sample(rng) + extra;
        if lost {
            return None;
        }
        let mut arrive = at + latency;
        for p in schedule.partitions.iter().filter(|p| p.cuts(from, to, at)) {
            if !p.hold {
                return None;
            }
            arrive = arrive.max(p.window.end + latency);
        }
        Some(arrive)
    }

    /// When a message on a TCP stream `from -> to` sent at `at` arrives:
    /// each lost transmission is sent again after a retransmission timeout
    /// (200 ms, doubling), until it gets through or [`TCP_GIVE_UP`] has
    /// passed (then none). Deviation: no congestion window, one segment per
    /// message, the handshake not simulated.
    pub(crate) fn stream_arrival(
        &mut self,
        schedule: &Schedule,
        from: u32,
        to: u32,
        at: Nanos,
    ) -> Option<Nanos> {
        let mut delay = Nanos::ZERO;
        let mut rto = TCP_RTO;
        loop {
            if let Some(arrive) = self.arrival(schedule, from, to, at + delay) {
                return Some(arrive);
            }
            delay = delay + rto;
            rto = rto + rto;
            if delay > TCP_GIVE_UP {
                return None;
            }
        }
    }
}
