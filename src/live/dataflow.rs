//! The data plane of a live dataflow stage: data frames over TCP on loopback
//! between the processes of adjacent layers (each connection a
//! `super::data_link`), as the simulator's stages produce, serve and forward
//! them (`sim/src/engine.rs`, "data plane").
//!
//! - A source stage (layer 0) emits data frames on each of its links at the
//!   workload's intervals, drawn from the simulator's own `Purpose::Workload`
//!   stream of that link in the same order (on/off bursts included), so a
//!   live source sends at the instants its simulated twin does (to the
//!   timer's millisecond). A frame that finds its link's send buffer
//!   (`network.send_buffer` frames) full is dropped, as the simulator's
//!   source drops it.
//! - Every other stage takes the data frames it receives in arrival order,
//!   spends a service time on each (the simulator's `Purpose::Service` stream
//!   of the stage), and forwards it to its downstream links round-robin
//!   (a sink forwards nothing), waiting while that link's send buffer is full.
//! - The frames a stage receives reach the driver's detectors as messages from
//!   the upstream's UDP address ([`StageTransport`]), so a `dataflow-decay`
//!   detector watches the stream unchanged.
//!
//! Not modelled live: maintenance frames (refused), the scenario's data
//! latency (loopback's is what it is), and the real TCP stack's own buffers
//! beyond the window. A crashed stage's sockets close, so its peers' frames to
//! it are lost, as in the simulator. Timers are tokio's: a service time under
//! a millisecond takes about a millisecond live.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::pin::pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::task::Poll;

use fdlab_driver::tokio_io::TokioClock;
use fdlab_driver::{Clock, Transport};
use fdlab_protocol::{Frame, Nanos};
use fdlab_sim::dist::Sampler;
use fdlab_sim::plan::RunPlan;
use fdlab_sim::topology::{DataLink, Layout};
use rand_chacha::ChaCha8Rng;
use tokio::net::TcpListener;
use tokio::sync::mpsc;

use super::data_link::{accept, write_link, Delivery, LinkFaults, LinkOut, LinkParams};
use super::traffic::Counter;

/// A timer that fires later than this was stalled (the process was stopped):
/// a source then restarts its period from now, as the simulator's source
/// does after a pause, instead of catching up with a burst.
const STALL: Nanos = Nanos::from_millis(50);

/// The stage's links and how much it sent.
pub struct Stage {
    me: u32,
    /// Upstream node indices (in layout order).
    upstreams: Vec<u32>,
    /// Downstream node indices (in layout order, the round-robin order).
    downstreams: Vec<u32>,
    source: bool,
    /// Stream-heartbeat frames sent per downstream, for the traffic report.
    pub stream_heartbeats: StreamHeartbeats,
}

impl Stage {
    pub fn new(layout: &Layout, me: u32) -> Stage {
        let upstreams = layout
            .links
            .iter()
            .filter(|l| l.to == me)
            .map(|l| l.from)
            .collect();
        let downstreams: Vec<u32> = layout
            .links
            .iter()
            .filter(|l| l.from == me)
            .map(|l| l.to)
            .collect();
        Stage {
            me,
            upstreams,
            stream_heartbeats: downstreams
                .iter()
                .map(|&d| (d, Arc::new(AtomicU64::new(0))))
                .collect(),
            downstreams,
            source: layout.layer[me as usize] == 0,
        }
    }

    /// Starts the stage's tasks on the current runtime, at the run's time
    /// zero (`clock`'s epoch). `udp` are the nodes' UDP addresses (the
    /// detectors' names for them), `tcp` their data-plane listeners; frames
    /// for the detectors go to `deliver`.
    #[allow(clippy::too_many_arguments)]
    pub fn start(
        &self,
        plan: &RunPlan<'_>,
        clock: TokioClock,
        listener: TcpListener,
        udp: &[SocketAddr],
        tcp: &[SocketAddr],
        deliver: mpsc::UnboundedSender<Delivery>,
    ) {
        let (scenario, schedule) = (plan.scenario(), plan.schedule());
        let workload = &scenario.workload;
        let link = LinkParams {
            idle: workload.idle_frame_interval,
            window: scenario.network.receive_queue.max(1),
        };
        let buffer = scenario.network.send_buffer.max(1) as usize;
        let nodes: Vec<u32> = (0..udp.len() as u32).collect();
        let faults = super::links::link_plan(schedule, 0.0, self.me, &nodes);
        let mut outputs = Vec::new();
        for (k, &to) in self.downstreams.iter().enumerate() {
            let (data_tx, data_rx) = mpsc::channel(buffer);
            let (control_tx, control_rx) = mpsc::unbounded_channel();
            let sent = Arc::clone(&self.stream_heartbeats[k].1);
            let wire = (data_rx, control_rx);
            tokio::spawn(write_link(
                self.me,
                tcp[to as usize],
                wire,
                clock,
                (link, LinkFaults::new(&faults.windows, to)),
                sent,
            ));
            let out = LinkOut {
                data: data_tx,
                control: control_tx,
                capacity: buffer,
            };
            if self.source {
                let rng = plan.workload_stream(DataLink { from: self.me, to });
                let source = Source {
                    interval: Sampler::new(&workload.interval),
                    on: workload.on.as_ref().map(Sampler::new),
                    off: workload.off.as_ref().map(Sampler::new),
                    rng,
                };
                tokio::spawn(source.run(out.clone(), clock));
            }
            outputs.push(out);
        }
        if !self.upstreams.is_empty() {
            let (service_tx, service_rx) = mpsc::unbounded_channel();
            let rng = plan.service_stream(self.me);
            let sampler = Sampler::new(&workload.service_time);
            tokio::spawn(serve(service_rx, outputs, sampler, rng, clock));
            let udp = udp.to_vec();
            let expected = self.upstreams.clone();
            tokio::spawn(accept(listener, expected, udp, deliver, service_tx));
        }
    }
}

/// A source's emissions on one link.
struct Source {
    interval: Sampler,
    on: Option<Sampler>,
    off: Option<Sampler>,
    rng: ChaCha8Rng,
}

impl Source {
    /// The simulator's `start_link` and `source_emit`, in real time.
    async fn run(mut self, link: LinkOut, clock: TokioClock) {
        let mut next = self.interval.sample(&mut self.rng);
        let mut on_until: Option<Nanos> = None;
        loop {
            clock.sleep_until(next).await;
            let now = clock.now();
            let at = if now.saturating_sub(next) > STALL {
                now
            } else {
                next
            };
            if let (Some(on), Some(off)) = (&self.on, &self.off) {
                match on_until {
                    None => on_until = Some(at + on.sample(&mut self.rng)),
                    Some(until) if at >= until => {
                        let resume = at + off.sample(&mut self.rng);
                        on_until = Some(resume + on.sample(&mut self.rng));
                        next = resume;
                        continue;
                    }
                    Some(_) => {}
                }
            }
            link.announce_backpressure();
            match link.data.try_send(Frame::Data) {
                // A full send buffer drops the frame, as the simulator's source.
                Ok(()) | Err(mpsc::error::TrySendError::Full(_)) => {}
                Err(mpsc::error::TrySendError::Closed(_)) => return,
            }
            next = at + self.interval.sample(&mut self.rng).max(Nanos(1));
        }
    }
}

/// A stage's service: takes the received data frames in order, returns the
/// link's credit as the frame leaves the queue, spends its service time, then
/// offers the frame to the next downstream link in turn, waiting while that
/// link's buffer is full (the simulator's `blocked_on`). A sink only serves.
async fn serve(
    mut input: mpsc::UnboundedReceiver<mpsc::UnboundedSender<()>>,
    outputs: Vec<LinkOut>,
    service: Sampler,
    mut rng: ChaCha8Rng,
    clock: TokioClock,
) {
    let mut next_output = 0usize;
    while let Some(credit) = input.recv().await {
        let _ = credit.send(());
        let done = clock.now().saturating_add(service.sample(&mut rng));
        clock.sleep_until(done).await;
        if outputs.is_empty() {
            continue;
        }
        let link = &outputs[next_output % outputs.len()];
        next_output += 1;
        link.announce_backpressure();
        // A closed link (its downstream crashed) loses the frame.
        let _ = link.data.send(Frame::Data).await;
    }
}

/// A [`Transport`] whose `recv` also yields the frames the data plane
/// received, as messages from the upstream's UDP address.
pub struct StageTransport<T> {
    pub inner: T,
    frames: RefCell<mpsc::UnboundedReceiver<Delivery>>,
}

impl<T> StageTransport<T> {
    pub fn new(inner: T, frames: mpsc::UnboundedReceiver<Delivery>) -> Self {
        StageTransport {
            inner,
            frames: RefCell::new(frames),
        }
    }
}

impl<T: Transport<Addr = SocketAddr>> Transport for StageTransport<T> {
    type Addr = SocketAddr;

    async fn recv(&self) -> io::Result<(Vec<u8>, SocketAddr)> {
        let mut datagram = pin!(self.inner.recv());
        std::future::poll_fn(|cx| {
            if let Poll::Ready(r) = datagram.as_mut().poll(cx) {
                return Poll::Ready(r);
            }
            match self.frames.borrow_mut().poll_recv(cx) {
                Poll::Ready(Some(frame)) => Poll::Ready(Ok(frame)),
                // No data plane (any more): datagrams only.
                Poll::Ready(None) | Poll::Pending => Poll::Pending,
            }
        })
        .await
    }

    async fn send(&self, to: &SocketAddr, bytes: &[u8]) -> io::Result<()> {
        self.inner.send(to, bytes).await
    }
}

/// Stream-heartbeat frames sent per downstream node.
pub type StreamHeartbeats = Vec<(u32, Arc<AtomicU64>)>;

/// The stream-heartbeat counts that changed since the last call (the node
/// reports them as `shb` lines, `super::wire`).
pub fn changed_stream_heartbeats(
    counts: &StreamHeartbeats,
    last: &mut BTreeMap<u32, u64>,
) -> Vec<(Counter, u64)> {
    let mut out = Vec::new();
    for (to, count) in counts {
        let n = count.load(Ordering::Relaxed);
        if last.insert(*to, n) != Some(n) {
            out.push((Counter::StreamHeartbeats { downstream: *to }, n));
        }
    }
    out
}
