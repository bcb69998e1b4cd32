//! The driver over real UDP on loopback with tokio: a target sends 20 ms
//! heartbeats for 300 ms and stops; the monitor's 100 ms fixed timeout must
//! declare it Failed about 100 ms later (loose bounds: real time on a shared
//! machine), and not before.
#![cfg(not(madsim))]

use fdlab_driver::tokio_io::{TokioClock, TokioTransport};
use fdlab_driver::Node;
use fdlab_protocol::fixed::FixedTimeoutConfig;
use fdlab_protocol::{DetectorConfig, Nanos, Verdict};

fn ms(v: u64) -> Nanos {
    Nanos::from_millis(v)
}

#[tokio::test(flavor = "current_thread")]
async fn a_silent_udp_peer_is_declared_failed_after_its_timeout() {
    let clock = TokioClock::start();
    let monitor_net = TokioTransport::bind("127.0.0.1:0".parse().unwrap())
        .await
        .unwrap();
    let target_net = TokioTransport::bind("127.0.0.1:0".parse().unwrap())
        .await
        .unwrap();
    let monitor_addr = monitor_net.socket.local_addr().unwrap();
    let target_addr = target_net.socket.local_addr().unwrap();

    let mut monitor = Node::new();
    let config = DetectorConfig::FixedTimeout(FixedTimeoutConfig {
        interval: ms(20),
        timeout: ms(100),
        ..Default::default()
    });
    monitor
        .watch(target_addr, "fixed", config, ms(0), 0.0)
        .unwrap();
    let mut target = Node::new();
    target.send_heartbeats(monitor_addr, ms(20), ms(0));

    let (m, t) = tokio::join!(
        monitor.run(&clock, &monitor_net, ms(700)),
        target.run(&clock, &target_net, ms(300)),
    );
    m.unwrap();
    t.unwrap();
    let timeline = &monitor.watches()[0].timeline;
    let Some(&(at, Verdict::Failed)) = timeline.first() else {
        panic!("never failed: {timeline:?}");
    };
    assert!(
        at > ms(300) && at < ms(650),
        "Failed at {at:?}, expected about 400 ms: {timeline:?}"
    );
}
