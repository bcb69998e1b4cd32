//! The fault filter in front of real UDP on loopback: a target sends 20 ms
//! heartbeats through a `FaultyTransport`; a partition window must make the
//! monitor's 100 ms timeout fire and a heal must bring it back, and a
//! slow-link window must delay (not lose) what the pending `recv` of the
//! sender has to send later. Loose bounds: real time on a shared machine.
#![cfg(not(madsim))]

use std::net::SocketAddr;

use fdlab_driver::faulty::{Effect, FaultyTransport, LinkPlan, LinkWindow, Loss};
use fdlab_driver::tokio_io::{TokioClock, TokioTransport};
use fdlab_driver::Node;
use fdlab_protocol::fixed::FixedTimeoutConfig;
use fdlab_protocol::{DetectorConfig, Nanos, Verdict};

fn ms(v: u64) -> Nanos {
    Nanos::from_millis(v)
}

async fn bind() -> (TokioTransport, SocketAddr) {
    let net = TokioTransport::bind("127.0.0.1:0".parse().unwrap())
        .await
        .unwrap();
    let addr = net.socket.local_addr().unwrap();
    (net, addr)
}

fn keep_all(_: &SocketAddr, _: &[u8], _: f64) -> bool {
    true
}

/// Runs a monitor (100 ms timeout on 20 ms heartbeats) and a target whose
/// sends pass `plan` (built from the monitor's address) for 800 ms, and
/// returns the monitor's timeline.
async fn run(plan: impl FnOnce(SocketAddr) -> LinkPlan<SocketAddr>) -> Vec<(Nanos, Verdict)> {
    let clock = TokioClock::start();
    let (monitor_net, monitor_addr) = bind().await;
    let (target_udp, target_addr) = bind().await;
    let target_net = FaultyTransport::new(target_udp, clock, plan(monitor_addr), keep_all);
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
        monitor.run(&clock, &monitor_net, ms(800)),
        target.run(&clock, &target_net, ms(800)),
    );
    m.unwrap();
    t.unwrap();
    monitor.watches()[0].timeline.clone()
}

#[tokio::test(flavor = "current_thread")]
async fn a_partition_window_is_detected_and_its_heal_trusted_again() {
    let timeline = run(|monitor| LinkPlan {
        base_loss: 0.0,
        windows: vec![LinkWindow {
            peer: monitor,
            start: ms(200),
            end: ms(500),
            effect: Effect::Cut { hold: false },
        }],
    })
    .await;
    let failed = timeline
        .iter()
        .find(|(_, v)| *v == Verdict::Failed)
        .map(|&(t, _)| t);
    let back = timeline
        .iter()
        .find(|(_, v)| *v == Verdict::Alive)
        .map(|&(t, _)| t);
    // Last heartbeat before 200 ms, Failed about 100 ms later; back at the
    // first heartbeat from 500 ms.
    assert!(
        failed.is_some_and(|t| t > ms(280) && t < ms(450)),
        "{timeline:?}"
    );
    assert!(
        back.is_some_and(|t| t >= ms(500) && t < ms(620)),
        "{timeline:?}"
    );
}

#[tokio::test(flavor = "current_thread")]
async fn a_slow_link_delays_heartbeats_without_losing_them() {
    // 60 ms extra is under the 100 ms timeout: no verdict may change. The
    // target's `recv` must wake to send each delayed heartbeat on time,
    // although nothing ever arrives at the target.
    let timeline = run(|monitor| LinkPlan {
        base_loss: 0.0,
        windows: vec![LinkWindow {
            peer: monitor,
            start: ms(0),
            end: ms(800),
            effect: Effect::Degrade {
                extra_latency: ms(60),
                loss: Loss::None,
            },
        }],
    })
    .await;
    assert!(timeline.is_empty(), "{timeline:?}");
    // 150 ms extra is over it: Failed once, before the first delayed
    // heartbeat arrives at about 150 ms, then Alive again.
    let timeline = run(|monitor| LinkPlan {
        base_loss: 0.0,
        windows: vec![LinkWindow {
            peer: monitor,
            start: ms(0),
            end: ms(800),
            effect: Effect::Degrade {
                extra_latency: ms(150),
                loss: Loss::None,
            },
        }],
    })
    .await;
    assert!(
        matches!(
            timeline[..],
            [(f, Verdict::Failed), (a, Verdict::Alive)] if f >= ms(100) && a > f && a < ms(300)
        ),
        "{timeline:?}"
    );
}
