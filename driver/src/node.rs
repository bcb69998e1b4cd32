//! The node driver: one async loop per node that hosts sans-IO detectors.
//!
//! The loop waits for whichever comes first, "a datagram arrived" or "the
//! earliest instant any detector's `poll_timeout` (or this node's next
//! heartbeat) names", calls the detectors' `handle_*` with the local time, and
//! sends what they ask to send. It is the simulator's host logic
//! (`sim/src/engine.rs`) written against two small traits, [`Transport`] and
//! [`Clock`], so that the same code runs in madsim's simulated network
//! (`crate::madsim_io`) and, later, over real UDP sockets with tokio.
//!
//! The receive future is kept alive across iterations (only the sleep is
//! recreated), so the loop does not rely on the transport's `recv` being
//! cancel-safe.

use std::future::Future;
use std::io;
use std::pin::pin;
use std::task::Poll;

use fdlab_protocol::{
    ConfigError, Detector, DetectorConfig, FailureDetector, Nanos, ProbeId, Verdict,
};

use crate::wire::Msg;

/// Where datagrams come from and go to: a UDP-like, unreliable, unordered
/// channel. Both methods take `&self` so that a pending receive can live
/// while the loop sends.
///
/// `async fn` in a public trait cannot promise `Send` futures; the driver runs
/// one node per task on a single thread (madsim does; a tokio host uses a
/// current-thread runtime or a `LocalSet`), so it does not need them.
#[allow(async_fn_in_trait)]
pub trait Transport {
    /// A peer's address (a `SocketAddr` for madsim and UDP).
    type Addr: Clone + PartialEq;
    /// The next datagram and its sender. An error ends the node's loop.
    async fn recv(&self) -> io::Result<(Vec<u8>, Self::Addr)>;
    /// Sends one datagram; it may be lost. Errors are treated as losses.
    async fn send(&self, to: &Self::Addr, bytes: &[u8]) -> io::Result<()>;
}

/// The node's local clock, in nanoseconds since an epoch of the host's choice.
#[allow(async_fn_in_trait)]
pub trait Clock {
    fn now(&self) -> Nanos;
    /// Returns at or after local time `t` (at once if it has passed).
    async fn sleep_until(&self, t: Nanos);
}

/// A wake-up later than asked by more than this is a stall of the process.
/// Virtual-time hosts (madsim) never see one.
const STALL: Nanos = Nanos::from_millis(50);
/// After a stall, timers wait this long for the datagrams that queued up.
const STALL_GRACE: Nanos = Nanos::from_millis(2);

/// Most (prober, watch) reply counters a node keeps: far more than a run's
/// monitored pairs, and a bound on what garbage probes can make it allocate.
const MAX_REPLY_COUNTERS: usize = 4096;

/// One detector watching one peer.
#[derive(Debug)]
pub struct Watch<A> {
    pub peer: A,
    pub name: String,
    pub detector: Detector,
    /// The heartbeat stream it listens to (by interval), if any.
    heartbeat_interval: Option<Nanos>,
    /// Whether it watches the data stream from its peer (frames).
    data_stream: bool,
    verdict: Verdict,
    /// Verdict changes in local time; Alive before the first.
    pub timeline: Vec<(Nanos, Verdict)>,
}

/// A heartbeat stream this node sends to a peer.
#[derive(Debug)]
struct Beat<A> {
    peer: A,
    interval: Nanos,
    next: Nanos,
}

/// Called with (watch index, local time, new verdict) on every verdict change,
/// as it happens (a live host streams them out: a killed process keeps none).
pub type Observer = Box<dyn FnMut(usize, Nanos, Verdict) + Send>;

/// The liveness datagrams a node has sent since it started, by what they
/// serve: the overhead of each detector is the heartbeats of the stream it
/// listens to, or its probes and their replies. Counted when the driver
/// sends, before any network fault can drop them (as the simulator counts).
#[derive(Clone, Debug, PartialEq)]
pub struct Sent<A> {
    /// Per heartbeat stream, in `send_heartbeats` order: (monitor, interval,
    /// heartbeats sent).
    pub heartbeats: Vec<(A, Nanos, u64)>,
    /// Per watch, in `watch` order: probes sent.
    pub probes: Vec<u64>,
    /// Per (prober, the prober's watch number): probe replies sent.
    pub replies: Vec<(A, u32, u64)>,
}

impl<A> Default for Sent<A> {
    fn default() -> Self {
        Sent {
            heartbeats: Vec::new(),
            probes: Vec::new(),
            replies: Vec::new(),
        }
    }
}

/// Called with (local time, the counts so far) at most once per reporting
/// period while the counts change, and once at the end of `run`: a live host
/// streams them out, so a killed process has reported all but its last period.
pub type SentObserver<A> = Box<dyn FnMut(Nanos, &Sent<A>) + Send>;

/// How and when to report [`Sent`].
struct SentReports<A> {
    every: Nanos,
    /// The earliest instant of the next report.
    next: Nanos,
    /// Counts changed since the last report.
    dirty: bool,
    observer: SentObserver<A>,
}

/// A node: the detectors it runs as a monitor and the heartbeats it sends as a
/// target. It answers every probe it receives.
pub struct Node<A> {
    watches: Vec<Watch<A>>,
    beats: Vec<Beat<A>>,
    observer: Option<Observer>,
    sent: Sent<A>,
    sent_reports: Option<SentReports<A>>,
}

impl<A: std::fmt::Debug> std::fmt::Debug for Node<A> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Node")
            .field("watches", &self.watches)
            .field("beats", &self.beats)
            .field("observer", &self.observer.is_some())
            .field("sent", &self.sent)
            .field("sent_reports", &self.sent_reports.is_some())
            .finish()
    }
}

impl<A> Default for Node<A> {
    fn default() -> Self {
        Node {
            watches: Vec::new(),
            beats: Vec::new(),
            observer: None,
            sent: Sent::default(),
            sent_reports: None,
        }
    }
}

impl<A: Clone + PartialEq> Node<A> {
    pub fn new() -> Self {
        Self::default()
    }

    /// Starts watching `peer` with a detector built from `config` at local
    /// time `now`. A probing detector starts probing after `jitter` (in
    /// `[0, 1)`) of its initial timeout; the host draws it (sans-IO: detectors
    /// draw no random numbers).
    pub fn watch(
        &mut self,
        peer: A,
        name: &str,
        config: DetectorConfig,
        now: Nanos,
        jitter: f64,
    ) -> Result<(), ConfigError> {
        let heartbeat_interval = config.heartbeat_interval();
        let data_stream = config.uses_data_stream();
        let probes = config.uses_probes();
        let mut detector = Detector::new(config, now)?;
        if probes {
            detector.handle_start_probing(now, jitter);
        }
        self.sent.probes.push(0);
        self.watches.push(Watch {
            peer,
            name: name.to_owned(),
            detector,
            heartbeat_interval,
            data_stream,
            verdict: Verdict::Alive,
            timeline: Vec::new(),
        });
        Ok(())
    }

    /// Sends `peer` a heartbeat every `interval` (a fixed-delay timer, like the
    /// simulator's: after a stall it fires once, late, then keeps its period),
    /// the first at local time `first`.
    pub fn send_heartbeats(&mut self, peer: A, interval: Nanos, first: Nanos) {
        let interval = interval.max(Nanos(1));
        self.sent.heartbeats.push((peer.clone(), interval, 0));
        self.beats.push(Beat {
            peer,
            interval,
            next: first,
        });
    }

    /// Calls `observer` on every verdict change from now on.
    pub fn set_observer(&mut self, observer: Observer) {
        self.observer = Some(observer);
    }

    /// Calls `observer` with the counts of sent datagrams, at most once per
    /// `every` of local time while they change, and at the end of `run`.
    pub fn set_sent_observer(&mut self, every: Nanos, observer: SentObserver<A>) {
        self.sent_reports = Some(SentReports {
            every: every.max(Nanos(1)),
            next: Nanos::ZERO,
            dirty: false,
            observer,
        });
    }

    /// The liveness datagrams sent so far.
    pub fn sent(&self) -> &Sent<A> {
        &self.sent
    }

    pub fn watches(&self) -> &[Watch<A>] {
        &self.watches
    }

    /// Consumes the node, giving its watches (with their timelines).
    pub fn into_watches(self) -> Vec<Watch<A>> {
        self.watches
    }

    /// Runs the loop until local time `until`. Returns early only if the
    /// transport's `recv` fails.
    pub async fn run<C, T>(&mut self, clock: &C, net: &T, until: Nanos) -> io::Result<()>
    where
        C: Clock,
        T: Transport<Addr = A>,
    {
        let now = clock.now();
        for i in 0..self.watches.len() {
            self.settle(net, i, now).await;
        }
        let mut recv = pin!(net.recv());
        // The instant the last sleep asked to wake at, and the end of a hold.
        let mut asked: Option<Nanos> = None;
        let mut hold_until = Nanos::ZERO;
        loop {
            let now = clock.now();
            if now >= until {
                self.report_sent(now, true);
                return Ok(());
            }
            // Woke much later than asked: the process was stalled (stopped,
            // starved). Hold the overdue timers back a moment so that the
            // datagrams queued in the socket meanwhile reach the detectors
            // first, as the simulator replays a paused node's backlog in
            // order; otherwise every timer fires before the first read.
            if asked.is_some_and(|w| now > w.saturating_add(STALL)) {
                hold_until = now.saturating_add(STALL_GRACE);
            }
            // Heartbeats go out even during a hold: it only delays judging.
            self.send_beats(net, now).await;
            let wake = if now < hold_until {
                self.next_beat().min(hold_until)
            } else {
                self.fire_due(net, now).await;
                self.next_wake()
            };
            self.report_sent(now, false);
            // Everything due at `now` was handled; a detector that still asks
            // for `now` must not make the loop spin without time passing.
            let wake = wake
                .min(self.next_sent_report())
                .max(now + Nanos(1))
                .min(until);
            asked = Some(wake);
            let arrived = {
                let mut sleep = pin!(clock.sleep_until(wake));
                std::future::poll_fn(|cx| {
                    if let Poll::Ready(r) = recv.as_mut().poll(cx) {
                        return Poll::Ready(Some(r));
                    }
                    sleep.as_mut().poll(cx).map(|()| None)
                })
                .await
            };
            if let Some(result) = arrived {
                recv.set(net.recv());
                let (bytes, from) = result?;
                let now = clock.now();
                self.on_datagram(net, now, &bytes, from).await;
            }
        }
    }

    /// Reports the sent counts if they changed and the period has passed
    /// (or at the end, `last`).
    fn report_sent(&mut self, now: Nanos, last: bool) {
        let Some(r) = &mut self.sent_reports else {
            return;
        };
        if r.dirty && (last || now >= r.next) {
            (r.observer)(now, &self.sent);
            r.dirty = false;
            r.next = now.saturating_add(r.every);
        }
    }

    /// When the next report of sent counts is due (never if nothing changed).
    fn next_sent_report(&self) -> Nanos {
        match &self.sent_reports {
            Some(r) if r.dirty => r.next,
            _ => Nanos::MAX,
        }
    }

    fn count_sent(&mut self) {
        if let Some(r) = &mut self.sent_reports {
            r.dirty = true;
        }
    }

    /// The earliest local instant at which a timer or heartbeat is due.
    fn next_wake(&self) -> Nanos {
        let timers = self
            .watches
            .iter()
            .filter_map(|w| w.detector.poll_timeout());
        let beats = self.beats.iter().map(|b| b.next);
        timers.chain(beats).min().unwrap_or(Nanos::MAX)
    }

    fn next_beat(&self) -> Nanos {
        self.beats
            .iter()
            .map(|b| b.next)
            .min()
            .unwrap_or(Nanos::MAX)
    }

    /// Sends the heartbeats that are due.
    async fn send_beats<T: Transport<Addr = A>>(&mut self, net: &T, now: Nanos) {
        for b in 0..self.beats.len() {
            if self.beats[b].next <= now {
                let beat = &mut self.beats[b];
                // Fixed delay from when it was due, not from when the loop got
                // to it: a real clock wakes timers a little late (tokio rounds
                // up to the millisecond) and that lateness must not accumulate
                // into a phase drift. After a stall, fixed delay from now, as
                // the simulator's timer. (Virtual time: the two are equal.)
                let from = if now.saturating_sub(beat.next) > STALL {
                    now
                } else {
                    beat.next
                };
                beat.next = from.saturating_add(beat.interval);
                let msg = Msg::Heartbeat {
                    interval: beat.interval,
                };
                let peer = beat.peer.clone();
                self.sent.heartbeats[b].2 += 1;
                self.count_sent();
                let _ = net.send(&peer, &msg.encode()).await;
            }
        }
    }

    /// Fires the detector timers that are due.
    async fn fire_due<T: Transport<Addr = A>>(&mut self, net: &T, now: Nanos) {
        for i in 0..self.watches.len() {
            let due = self.watches[i].detector.poll_timeout();
            if due.is_some_and(|due| due <= now) {
                self.watches[i].detector.handle_timeout(now);
                self.settle(net, i, now).await;
            }
        }
    }

    async fn on_datagram<T: Transport<Addr = A>>(
        &mut self,
        net: &T,
        now: Nanos,
        bytes: &[u8],
        from: A,
    ) {
        match Msg::decode(bytes) {
            Some(Msg::Heartbeat { interval }) => {
                for i in 0..self.watches.len() {
                    let w = &mut self.watches[i];
                    if w.peer == from && w.heartbeat_interval == Some(interval) {
                        w.detector.handle_heartbeat(now);
                        self.settle(net, i, now).await;
                    }
                }
            }
            Some(Msg::Probe { watch, id }) => {
                let reply = Msg::ProbeReply { watch, id };
                let replies = &mut self.sent.replies;
                match replies
                    .iter()
                    .position(|(p, w, _)| *p == from && *w == watch)
                {
                    Some(i) => replies[i].2 += 1,
                    None if replies.len() < MAX_REPLY_COUNTERS => {
                        replies.push((from.clone(), watch, 1));
                    }
                    // Probes naming ever new watches are not a run's traffic.
                    None => {}
                }
                self.count_sent();
                let _ = net.send(&from, &reply.encode()).await;
            }
            Some(Msg::ProbeReply { watch, id }) => {
                let i = watch as usize;
                if self.watches.get(i).is_some_and(|w| w.peer == from) {
                    self.watches[i]
                        .detector
                        .handle_probe_reply(now, ProbeId(id));
                    self.settle(net, i, now).await;
                }
            }
            Some(Msg::Frame(frame)) => {
                for i in 0..self.watches.len() {
                    let w = &mut self.watches[i];
                    if w.peer == from && w.data_stream {
                        w.detector.handle_frame(now, frame);
                        self.settle(net, i, now).await;
                    }
                }
            }
            None => {}
        }
    }

    /// After any input to watch `i`: send its probes, record a verdict change.
    /// The change is stamped `now`, the time of the input, even if the sends
    /// that follow take time.
    async fn settle<T: Transport<Addr = A>>(&mut self, net: &T, i: usize, now: Nanos) {
        let w = &mut self.watches[i];
        let verdict = w.detector.verdict();
        if verdict != w.verdict {
            w.verdict = verdict;
            w.timeline.push((now, verdict));
            if let Some(observer) = &mut self.observer {
                observer(i, now, verdict);
            }
        }
        while let Some(tx) = self.watches[i].detector.poll_transmit() {
            let msg = Msg::Probe {
                watch: i as u32,
                id: tx.probe.0,
            };
            let peer = self.watches[i].peer.clone();
            self.sent.probes[i] += 1;
            self.count_sent();
            let _ = net.send(&peer, &msg.encode()).await;
        }
    }
}
