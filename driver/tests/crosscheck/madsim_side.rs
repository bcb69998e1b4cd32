//! The scenario in madsim 0.2.34: a monitor node and a target node per
//! heartbeat interval, each running `fdlab_driver::Node` over
//! `MadsimTransport`/`MadsimClock`, and the supervisor (the `block_on` task)
//! injecting the fault into every target at its instant.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use fdlab_driver::madsim_io::{MadsimClock, MadsimTransport};
use fdlab_driver::{Clock, Node};
use fdlab_protocol::Nanos;
use madsim::net::NetSim;
use madsim::rand::{thread_rng, Rng};
use madsim::runtime::{Handle, Runtime};

use super::{detectors, heartbeat_intervals, Fault, Spec, Timelines};

/// madsim's configuration for `spec`: the default 1–10 ms latency, and the
/// scenario's loss.
pub fn config(spec: &Spec) -> madsim::Config {
    let mut config = madsim::Config::default();
    config.net.packet_loss_rate = spec.loss();
    config
}

/// One run with madsim seed `seed`.
pub fn run(spec: &Spec, seed: u64) -> Timelines {
    let spec = *spec;
    Runtime::with_seed_and_config(seed, config(&spec)).block_on(scenario(spec))
}

/// The address of node `k` (1 = monitor, 2 = target) of stream group `g`.
fn addr(g: usize, k: u8) -> SocketAddr {
    SocketAddr::from(([10, 0, g as u8, k], 7000))
}

/// The body of one run, inside a madsim runtime.
///
/// Each heartbeat interval gets its own monitor and target node: madsim makes
/// every send and every receive wait at least 1 ms (see `super`), so two
/// streams through one endpoint would queue behind each other, a cost that
/// fdlab-sim's nodes do not have. The fault hits every target at once.
pub async fn scenario(spec: Spec) -> Timelines {
    let handle = Handle::current();
    let epoch = Instant::now();
    let clock = MadsimClock { epoch };
    let end = spec.duration;
    let all = detectors();
    let mut targets = Vec::new();
    let mut watching = Vec::new();
    for (g, interval) in heartbeat_intervals().into_iter().enumerate() {
        let (monitor_addr, target_addr) = (addr(g, 1), addr(g, 2));
        let monitor = handle
            .create_node()
            .name(format!("monitor-{g}"))
            .ip(monitor_addr.ip())
            .build();
        let target = handle
            .create_node()
            .name(format!("target-{g}"))
            .ip(target_addr.ip())
            .build();
        let mine: Vec<usize> = (0..all.len())
            .filter(|&d| all[d].1.heartbeat_interval() == Some(interval))
            .collect();
        let configs: Vec<_> = mine.iter().map(|&d| all[d].clone()).collect();
        let monitor_task = monitor.spawn(async move {
            let net = MadsimTransport::bind(monitor_addr).await.expect("bind");
            let mut node = Node::new();
            for (name, config) in configs {
                node.watch(target_addr, name, config, clock.now(), 0.0)
                    .expect("valid detector");
            }
            node.run(&clock, &net, end).await.expect("recv");
            let watches = node.into_watches();
            watches
                .into_iter()
                .map(|w| w.timeline)
                .collect::<Timelines>()
        });
        watching.push((mine, monitor_task));
        // The phase from madsim's seeded generator.
        let phase = Nanos(thread_rng().gen_range(0..interval.as_nanos()));
        target.spawn(async move {
            let net = MadsimTransport::bind(target_addr).await.expect("bind");
            let mut node = Node::new();
            node.send_heartbeats(monitor_addr, interval, phase);
            node.run(&clock, &net, end).await.expect("recv");
        });
        targets.push(target.id());
    }
    let at = |t: Nanos| epoch + Duration::from_nanos(t.as_nanos());
    match spec.fault {
        Fault::Crash { at: t } => {
            madsim::time::sleep_until(at(t)).await;
            targets.iter().for_each(|&t| handle.kill(t));
        }
        Fault::Pause { at: t, len } => {
            madsim::time::sleep_until(at(t)).await;
            targets.iter().for_each(|&t| handle.pause(t));
            madsim::time::sleep_until(at(t + len)).await;
            targets.iter().for_each(|&t| handle.resume(t));
        }
        Fault::Partition { at: t, len } => {
            madsim::time::sleep_until(at(t)).await;
            targets.iter().for_each(|&t| NetSim::current().clog_node(t));
            madsim::time::sleep_until(at(t + len)).await;
            targets
                .iter()
                .for_each(|&t| NetSim::current().unclog_node(t));
        }
        Fault::Loss { .. } => {}
    }
    let mut timelines: Timelines = vec![Vec::new(); all.len()];
    for (mine, task) in watching {
        let got = task.await.expect("the monitor runs to the end");
        for (d, timeline) in mine.into_iter().zip(got) {
            timelines[d] = timeline;
        }
    }
    timelines
}
