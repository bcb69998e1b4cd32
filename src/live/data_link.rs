//! One data link of a live dataflow: a TCP connection on loopback from a
//! stage to a stage of the next layer, carrying frames as the simulator's
//! data links carry them (`sim/src/engine.rs`, "data plane").
//!
//! - The sender opens the connection and says which node it is (its index,
//!   four bytes little-endian); the receiver ([`accept`]) takes only its
//!   expected upstreams, each once.
//! - Frames are `fdlab_driver::wire` messages of [`LEN`] bytes.
//! - Flow control as the simulator's: a link has at most
//!   `network.receive_queue` data frames in flight or queued at the receiver;
//!   the receiver returns a credit (one byte on the same TCP connection) when
//!   a frame leaves its queue for service. A full window keeps frames in the
//!   send buffer; an offer to a buffer at least 80 % full also sends a
//!   backpressure frame. Stream-heartbeat and backpressure frames bypass the
//!   buffer and the window.
//! - A link that carried nothing for `workload.idle_frame_interval` carries a
//!   stream-heartbeat frame.
//! - Partitions and slow links act on a data link as in the simulator: while
//!   a partition cuts it, data frames stay in the send buffer (the window is
//!   not used, so backpressure builds upstream) and control frames are
//!   dropped; a slow link delays every frame by its extra latency, in order
//!   ([`LinkFaults`], from the same schedule as the datagrams' filter).
//!
//! What the stages at either end do with the frames is `super::dataflow`.

use std::collections::VecDeque;
use std::future::Future;
use std::net::SocketAddr;
use std::pin::pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::task::Poll;

use fdlab_driver::faulty::{Effect, LinkWindow};
use fdlab_driver::tokio_io::TokioClock;
use fdlab_driver::wire::{Msg, LEN};
use fdlab_driver::Clock;
use fdlab_protocol::{Frame, Nanos};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;

/// A frame received from an upstream, for the node's detectors: the encoded
/// message and the upstream's UDP address.
pub type Delivery = (Vec<u8>, SocketAddr);

/// What every link of a run shares.
#[derive(Clone, Copy, Debug)]
pub struct LinkParams {
    /// A link idle this long carries a stream heartbeat.
    pub idle: Nanos,
    /// Data frames in flight or queued at the receiver, at most.
    pub window: u32,
}

/// The partitions and slow links of one data link, in the run's time.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LinkFaults {
    /// Partition windows `[start, end)` that cut the link.
    cuts: Vec<(Nanos, Nanos)>,
    /// Slow-link windows and their extra latency.
    slow: Vec<(Nanos, Nanos, Nanos)>,
}

impl LinkFaults {
    /// The windows of the link to `peer` among a node's `windows` (the plan
    /// its datagram filter uses; loss is left out: in the simulator it hits
    /// control datagrams only).
    pub fn new(windows: &[LinkWindow<u32>], peer: u32) -> LinkFaults {
        let mut faults = LinkFaults::default();
        for w in windows.iter().filter(|w| w.peer == peer) {
            match w.effect {
                Effect::Cut { .. } => faults.cuts.push((w.start, w.end)),
                Effect::Degrade { extra_latency, .. } if !extra_latency.is_zero() => {
                    faults.slow.push((w.start, w.end, extra_latency));
                }
                Effect::Degrade { .. } => {}
            }
        }
        faults
    }

    /// When the partition that cuts the link at `now` ends, if one does.
    pub fn cut_until(&self, now: Nanos) -> Option<Nanos> {
        self.cuts
            .iter()
            .filter(|&&(start, end)| start <= now && now < end)
            .map(|&(_, end)| end)
            .max()
    }

    /// The extra latency of a frame put on the wire at `now`.
    pub fn extra_at(&self, now: Nanos) -> Nanos {
        self.slow
            .iter()
            .filter(|&&(start, end, _)| start <= now && now < end)
            .fold(Nanos::ZERO, |sum, &(_, _, extra)| sum + extra)
    }
}

/// The sending stage's handle on one of its links.
#[derive(Clone)]
pub struct LinkOut {
    /// The send buffer.
    pub data: mpsc::Sender<Frame>,
    /// Control frames: past the buffer and the window.
    pub control: mpsc::UnboundedSender<Frame>,
    pub capacity: usize,
}

/// A send buffer at least this full makes each offer send a backpressure
/// frame (the simulator's `BACKPRESSURE_SHARE`).
const BACKPRESSURE_SHARE: f64 = fdlab_sim::engine::BACKPRESSURE_SHARE;

impl LinkOut {
    /// The simulator's `offer`, backpressure part: a buffer at least 80 %
    /// full announces it with a control frame.
    pub fn announce_backpressure(&self) {
        let queued = self.capacity - self.data.capacity();
        if queued as f64 >= BACKPRESSURE_SHARE * self.capacity as f64 {
            let _ = self.control.send(Frame::Backpressure);
        }
    }
}

/// One connection's send side: data frames while the window allows, control
/// frames at once, a stream heartbeat after `idle` of silence.
pub type Wire = (mpsc::Receiver<Frame>, mpsc::UnboundedReceiver<Frame>);

/// What the send side of a link does next.
enum Next {
    Write(Frame),
    Credit,
    /// A timer: the link's idle interval, the end of a cut, or the next
    /// delayed frame.
    Wake,
    Closed,
}

/// The send side of one link: connects, says who it is, then writes frames
/// (see [`Wire`]) and reads the receiver's credits. Ends (its frames lost)
/// when the downstream is gone. A frame goes on the wire at once, or after a
/// slow link's extra latency (a delay line keeps the order); while a
/// partition cuts the link, data frames wait in the buffer and control
/// frames, stream heartbeats included, are dropped, as the simulator's
/// `try_transmit` and `send_control` do.
pub async fn write_link(
    me: u32,
    to: SocketAddr,
    (mut data, mut control): Wire,
    clock: TokioClock,
    (link, faults): (LinkParams, LinkFaults),
    heartbeats: Arc<AtomicU64>,
) {
    let Ok(stream) = TcpStream::connect(to).await else {
        return;
    };
    let _ = stream.set_nodelay(true);
    let (mut credits_in, mut out) = stream.into_split();
    if out.write_all(&me.to_le_bytes()).await.is_err() {
        return;
    }
    // Credits arrive as single bytes on the same connection.
    let (credit_tx, mut credit_rx) = mpsc::unbounded_channel::<()>();
    tokio::spawn(async move {
        let mut byte = [0u8; 1];
        while credits_in.read_exact(&mut byte).await.is_ok() {
            if credit_tx.send(()).is_err() {
                return;
            }
        }
    });
    let mut window = link.window;
    let mut last_sent = Nanos::ZERO;
    // Frames put on the wire and when they may be written (a slow link).
    let mut delayed: VecDeque<(Nanos, Frame)> = VecDeque::new();
    loop {
        let now = clock.now();
        while let Some(&(due, frame)) = delayed.front() {
            if due > now {
                break;
            }
            delayed.pop_front();
            if out.write_all(&Msg::Frame(frame).encode()).await.is_err() {
                return;
            }
        }
        let cut_until = faults.cut_until(now);
        let idle_due = last_sent.saturating_add(link.idle);
        let wake = [
            Some(idle_due),
            cut_until,
            delayed.front().map(|&(due, _)| due),
        ]
        .into_iter()
        .flatten()
        .min()
        .unwrap_or(idle_due);
        let next = {
            let mut sleep = pin!(clock.sleep_until(wake));
            std::future::poll_fn(|cx| {
                match control.poll_recv(cx) {
                    Poll::Ready(Some(frame)) => return Poll::Ready(Next::Write(frame)),
                    Poll::Ready(None) => return Poll::Ready(Next::Closed),
                    Poll::Pending => {}
                }
                if let Poll::Ready(Some(())) = credit_rx.poll_recv(cx) {
                    return Poll::Ready(Next::Credit);
                }
                if window > 0 && cut_until.is_none() {
                    match data.poll_recv(cx) {
                        Poll::Ready(Some(frame)) => return Poll::Ready(Next::Write(frame)),
                        Poll::Ready(None) => return Poll::Ready(Next::Closed),
                        Poll::Pending => {}
                    }
                }
                sleep.as_mut().poll(cx).map(|()| Next::Wake)
            })
            .await
        };
        let now = clock.now();
        let cut = faults.cut_until(now).is_some();
        let frame = match next {
            // The stage is finishing.
            Next::Closed => return,
            Next::Credit => {
                window = window.saturating_add(1).min(link.window);
                continue;
            }
            Next::Write(Frame::Data) => {
                window -= 1;
                Frame::Data
            }
            // A control frame on a cut link is lost.
            Next::Write(_) if cut => continue,
            Next::Write(frame) => frame,
            Next::Wake if now < idle_due => continue,
            // Idle: the stream heartbeat of a cut link is lost; the link
            // counts as idle again an interval later.
            Next::Wake if cut => {
                last_sent = now;
                continue;
            }
            Next::Wake => {
                heartbeats.fetch_add(1, Ordering::Relaxed);
                Frame::StreamHeartbeat
            }
        };
        let due = now + faults.extra_at(now);
        let due = delayed.back().map_or(due, |&(last, _)| due.max(last));
        delayed.push_back((due, frame));
        last_sent = now;
    }
}

/// Accepts the upstreams' connections; each says which node it is.
pub async fn accept(
    listener: TcpListener,
    expected: Vec<u32>,
    udp: Vec<SocketAddr>,
    deliver: mpsc::UnboundedSender<Delivery>,
    service: mpsc::UnboundedSender<mpsc::UnboundedSender<()>>,
) {
    let mut waiting = expected;
    while !waiting.is_empty() {
        let Ok((mut stream, _)) = listener.accept().await else {
            return;
        };
        let mut hello = [0u8; 4];
        if stream.read_exact(&mut hello).await.is_err() {
            continue;
        }
        let from = u32::from_le_bytes(hello);
        // Only the expected upstreams, each once: anything else is dropped.
        let Some(i) = waiting.iter().position(|&u| u == from) else {
            continue;
        };
        waiting.swap_remove(i);
        let Some(&addr) = udp.get(from as usize) else {
            continue;
        };
        tokio::spawn(read_link(stream, addr, deliver.clone(), service.clone()));
    }
}

/// The receive side of one link: every frame to the detectors, every data
/// frame to the stage's service queue with the means to return its credit.
async fn read_link(
    stream: TcpStream,
    from: SocketAddr,
    deliver: mpsc::UnboundedSender<Delivery>,
    service: mpsc::UnboundedSender<mpsc::UnboundedSender<()>>,
) {
    let (mut frames, mut credits_out) = stream.into_split();
    let (credit_tx, mut credit_rx) = mpsc::unbounded_channel::<()>();
    tokio::spawn(async move {
        while credit_rx.recv().await.is_some() {
            if credits_out.write_all(&[1]).await.is_err() {
                return;
            }
        }
    });
    let mut buf = [0u8; LEN];
    while frames.read_exact(&mut buf).await.is_ok() {
        let Some(Msg::Frame(frame)) = Msg::decode(&buf) else {
            continue;
        };
        if deliver.send((buf.to_vec(), from)).is_err() {
            return;
        }
        if frame == Frame::Data && service.send(credit_tx.clone()).is_err() {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use fdlab_driver::faulty::Loss;

    use super::*;

    fn ms(v: u64) -> Nanos {
        Nanos::from_millis(v)
    }

    #[test]
    fn a_data_link_takes_its_own_cuts_and_slow_windows() {
        let window = |peer, start, end, effect| LinkWindow {
            peer,
            start: ms(start),
            end: ms(end),
            effect,
        };
        let slow = |extra| Effect::Degrade {
            extra_latency: ms(extra),
            loss: Loss::None,
        };
        let windows = [
            window(2, 100, 200, Effect::Cut { hold: false }),
            window(2, 150, 300, Effect::Cut { hold: true }),
            window(3, 0, 1000, Effect::Cut { hold: false }),
            window(2, 400, 500, slow(40)),
            window(2, 450, 600, slow(10)),
            // Loss alone: the simulator's data links do not lose frames.
            window(
                2,
                0,
                1000,
                Effect::Degrade {
                    extra_latency: Nanos::ZERO,
                    loss: Loss::Independent(0.5),
                },
            ),
        ];
        let faults = LinkFaults::new(&windows, 2);
        assert_eq!(faults.cut_until(ms(99)), None);
        assert_eq!(faults.cut_until(ms(100)), Some(ms(200)));
        // Overlapping cuts: cut until the later end.
        assert_eq!(faults.cut_until(ms(160)), Some(ms(300)));
        assert_eq!(faults.cut_until(ms(300)), None);
        assert_eq!(faults.extra_at(ms(399)), Nanos::ZERO);
        assert_eq!(faults.extra_at(ms(400)), ms(40));
        assert_eq!(faults.extra_at(ms(460)), ms(50));
        assert_eq!(faults.extra_at(ms(550)), ms(10));
        assert_eq!(faults.slow.len(), 2);
        assert_eq!(LinkFaults::new(&windows, 4), LinkFaults::default());
    }
}
