//! The driver under a scripted, single-threaded virtual-time host: no runtime
//! at all, so this runs in the normal `cargo test`. Datagrams arrive at
//! scripted instants; `sleep_until` jumps the clock to the earlier of its
//! deadline and the next arrival.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::future::Future;
use std::io;
use std::pin::pin;
use std::rc::Rc;
use std::task::{Context, Poll, Waker};

use fdlab_driver::wire::Msg;
use fdlab_driver::{Clock, Node, Transport};
use fdlab_protocol::fixed::FixedTimeoutConfig;
use fdlab_protocol::probe::AdaptiveProbeConfig;
use fdlab_protocol::{DetectorConfig, Nanos, Verdict};

fn ms(v: u64) -> Nanos {
    Nanos::from_millis(v)
}

#[derive(Default)]
struct World {
    now: Nanos,
    /// (arrival time, sender, bytes), in time order.
    inbox: VecDeque<(Nanos, u32, Vec<u8>)>,
    /// (send time, to, bytes).
    sent: Vec<(Nanos, u32, Vec<u8>)>,
    /// Answer probes after this delay, while `now` is before `answer_until`.
    answer_after: Nanos,
    answer_until: Nanos,
}

#[derive(Clone, Default)]
struct Host(Rc<RefCell<World>>);

impl Clock for Host {
    fn now(&self) -> Nanos {
        self.0.borrow().now
    }
    async fn sleep_until(&self, t: Nanos) {
        let mut w = self.0.borrow_mut();
        let next = w.inbox.front().map_or(Nanos::MAX, |m| m.0);
        let to = t.min(next);
        if to > w.now {
            w.now = to;
        }
    }
}

impl Transport for Host {
    type Addr = u32;
    async fn recv(&self) -> io::Result<(Vec<u8>, u32)> {
        std::future::poll_fn(|_| {
            let mut w = self.0.borrow_mut();
            match w.inbox.front() {
                Some(m) if m.0 <= w.now => {
                    let (_, from, bytes) = w.inbox.pop_front().unwrap_or_default();
                    Poll::Ready(Ok((bytes, from)))
                }
                _ => Poll::Pending,
            }
        })
        .await
    }
    async fn send(&self, to: &u32, bytes: &[u8]) -> io::Result<()> {
        let mut w = self.0.borrow_mut();
        let now = w.now;
        w.sent.push((now, *to, bytes.to_vec()));
        if let Some(Msg::Probe { watch, id }) = Msg::decode(bytes) {
            if now < w.answer_until {
                let at = now + w.answer_after;
                let reply = Msg::ProbeReply { watch, id }.encode().to_vec();
                let pos = w.inbox.partition_point(|m| m.0 <= at);
                w.inbox.insert(pos, (at, *to, reply));
            }
        }
        Ok(())
    }
}

/// Polls `f` to completion; every poll of the driver makes progress in this
/// host (the clock jumps), so a bound on polls catches a stuck loop.
fn block_on<F: Future>(f: F) -> F::Output {
    let mut f = pin!(f);
    let mut cx = Context::from_waker(Waker::noop());
    for _ in 0..10_000_000 {
        if let Poll::Ready(v) = f.as_mut().poll(&mut cx) {
            return v;
        }
    }
    panic!("the driver made no progress");
}

fn heartbeat(interval: Nanos) -> Vec<u8> {
    Msg::Heartbeat { interval }.encode().to_vec()
}

#[test]
fn a_fixed_timeout_fails_3s_after_the_last_heartbeat_and_ignores_the_rest() {
    let host = Host::default();
    {
        let mut w = host.0.borrow_mut();
        for k in 0..=10u64 {
            let at = ms(500 + 1000 * k);
            w.inbox.push_back((at, 7, heartbeat(ms(1000))));
            // Noise that must change nothing: another stream's interval,
            // another sender, garbage.
            w.inbox.push_back((at + ms(1), 7, heartbeat(ms(100))));
            w.inbox.push_back((at + ms(2), 8, heartbeat(ms(1000))));
            w.inbox.push_back((at + ms(3), 7, vec![0xff; 5]));
        }
        // Heartbeats from 8 after 7 went quiet do not help 7.
        w.inbox.push_back((ms(12_000), 8, heartbeat(ms(1000))));
    }
    let mut node = Node::new();
    let config = DetectorConfig::FixedTimeout(FixedTimeoutConfig {
        interval: ms(1000),
        timeout: ms(3000),
        ..Default::default()
    });
    node.watch(7, "fixed", config, Nanos::ZERO, 0.0).unwrap();
    block_on(node.run(&host, &host, ms(20_000))).unwrap();
    let timeline = &node.watches()[0].timeline;
    assert_eq!(timeline.len(), 1, "{timeline:?}");
    let (at, verdict) = timeline[0];
    assert_eq!(verdict, Verdict::Failed);
    assert!(at > ms(13_500) && at <= ms(13_501), "{at:?}");
    assert!(host.0.borrow().now >= ms(20_000));
    assert!(
        host.0.borrow().sent.is_empty(),
        "a monitor of heartbeats sends nothing"
    );
}

#[test]
fn heartbeats_leave_at_their_period_from_the_first() {
    let host = Host::default();
    let mut node: Node<u32> = Node::new();
    node.send_heartbeats(3, ms(100), ms(50));
    block_on(node.run(&host, &host, ms(1000))).unwrap();
    let sent = &host.0.borrow().sent;
    let times: Vec<Nanos> = sent.iter().map(|s| s.0).collect();
    let want: Vec<Nanos> = (0..10).map(|k| ms(50 + 100 * k)).collect();
    assert_eq!(times, want);
    assert!(sent
        .iter()
        .all(|s| s.1 == 3 && Msg::decode(&s.2) == Some(Msg::Heartbeat { interval: ms(100) })));
}

#[test]
fn an_adaptive_prober_sends_probes_learns_from_replies_and_fails_when_they_stop() {
    let host = Host::default();
    {
        let mut w = host.0.borrow_mut();
        w.answer_after = ms(2);
        w.answer_until = ms(60_000);
    }
    let mut node = Node::new();
    let config = DetectorConfig::AdaptiveProbe(AdaptiveProbeConfig {
        initial_timeout: ms(1000),
        ..Default::default()
    });
    node.watch(5, "probe", config, Nanos::ZERO, 0.5).unwrap();
    block_on(node.run(&host, &host, ms(90_000))).unwrap();
    let w = host.0.borrow();
    let probes_before = w.sent.iter().filter(|s| s.0 < ms(60_000)).count();
    assert!(
        probes_before >= 50,
        "about one probe per timeout: {probes_before}"
    );
    let timeline = &node.watches()[0].timeline;
    let failed = timeline.iter().find(|c| c.1 == Verdict::Failed);
    let Some(&(at, _)) = failed else {
        panic!("never failed: {timeline:?}")
    };
    assert!(at > ms(60_000) && at < ms(70_000), "{timeline:?}");
    assert!(
        timeline.iter().all(|c| c.0 > ms(60_000)),
        "no mistake while it answered: {timeline:?}"
    );
}

#[test]
fn sent_datagrams_are_counted_per_stream_watch_and_prober_and_reported_per_period() {
    use std::sync::{Arc, Mutex};

    let host = Host::default();
    {
        let mut w = host.0.borrow_mut();
        w.answer_after = ms(2);
        w.answer_until = ms(5_000);
        // Node 9 probes us three times for its watch 2, once for its watch 4.
        for (k, watch) in [(0u64, 2u32), (1, 2), (2, 2), (3, 4)] {
            let probe = Msg::Probe { watch, id: k }.encode().to_vec();
            w.inbox.push_back((ms(300 + 1000 * k), 9, probe));
        }
    }
    let mut node = Node::new();
    node.send_heartbeats(3, ms(100), ms(50));
    let config = DetectorConfig::AdaptiveProbe(AdaptiveProbeConfig {
        initial_timeout: ms(1000),
        ..Default::default()
    });
    node.watch(5, "probe", config, Nanos::ZERO, 0.5).unwrap();
    type Reports = Vec<(Nanos, fdlab_driver::Sent<u32>)>;
    let reports: Arc<Mutex<Reports>> = Arc::default();
    let log = Arc::clone(&reports);
    node.set_sent_observer(
        ms(1000),
        Box::new(move |now, sent| log.lock().unwrap().push((now, sent.clone()))),
    );
    block_on(node.run(&host, &host, ms(5_000))).unwrap();

    let w = host.0.borrow();
    let count = |pred: &dyn Fn(&Msg) -> bool| {
        w.sent
            .iter()
            .filter(|s| Msg::decode(&s.2).is_some_and(|m| pred(&m)))
            .count() as u64
    };
    let sent = node.sent();
    // Heartbeats at 50, 150, ..., 4950 ms.
    assert_eq!(sent.heartbeats, [(3, ms(100), 50)]);
    assert_eq!(
        sent.heartbeats[0].2,
        count(&|m| matches!(m, Msg::Heartbeat { .. }))
    );
    assert_eq!(sent.probes, [count(&|m| matches!(m, Msg::Probe { .. }))]);
    assert!(sent.probes[0] >= 4, "{sent:?}");
    assert_eq!(sent.replies, [(9, 2, 3), (9, 4, 1)]);

    let reports = reports.lock().unwrap();
    // Once per second at most while the counts change, and the last report
    // (at the end of the run) holds the final counts.
    assert!(
        reports.len() >= 5 && reports.len() <= 6,
        "{}",
        reports.len()
    );
    let periodic = &reports[..reports.len() - 1];
    for pair in periodic.windows(2) {
        assert!(
            pair[1].0 >= pair[0].0 + ms(1000),
            "{:?}",
            (pair[0].0, pair[1].0)
        );
    }
    assert_eq!(&reports.last().unwrap().1, sent);
    assert!(reports.last().unwrap().0 >= ms(5_000));
}

#[test]
fn data_frames_from_the_watched_peer_drive_a_stream_detector() {
    use fdlab_protocol::decay::DataflowDecayConfig;
    use fdlab_protocol::Frame;

    let host = Host::default();
    {
        let mut w = host.0.borrow_mut();
        let data = Msg::Frame(Frame::Data).encode().to_vec();
        for k in 1..=100u64 {
            w.inbox.push_back((ms(10 * k), 7, data.clone()));
            // Another upstream's frames keep flowing; they must not help 7.
            w.inbox.push_back((ms(10 * k + 3), 8, data.clone()));
        }
        for k in 101..=200u64 {
            w.inbox.push_back((ms(10 * k + 3), 8, data.clone()));
        }
    }
    let mut node = Node::new();
    let config = DetectorConfig::DataflowDecay(DataflowDecayConfig::default());
    node.watch(7, "decay", config, Nanos::ZERO, 0.0).unwrap();
    block_on(node.run(&host, &host, ms(3_000))).unwrap();
    let timeline = &node.watches()[0].timeline;
    let failed = timeline.iter().find(|c| c.1 == Verdict::Failed);
    // The last frame from 7 is at 1 s; 1.2 intervals later the score decays
    // by 0.9 a millisecond: under 0.2 about 16 ms after that.
    assert!(
        failed.is_some_and(|&(at, _)| at > ms(1_010) && at < ms(1_060)),
        "{timeline:?}"
    );
    assert!(timeline.iter().all(|c| c.0 > ms(1_000)), "{timeline:?}");
}
