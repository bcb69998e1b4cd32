//! `cargo simbench`: issue 9/9's comparison with madsim, in one run, so that
//! the ratios hold on any machine.
//!
//! The workload: 10 nodes, each sending every other a heartbeat every
//! 10 ms over madsim's default links (uniform 1-10 ms), for 1,000
//! simulated seconds. Three rows:
//! - madsim 0.2.34: one task per stream sending through its node's
//!   `net::Endpoint`, one receiving task per node; no detector at all;
//! - fdlab: the same workload as a scenario
//!   (`fdlab_sim::baseline::madsim_workload`), a fixed timeout on every
//!   pair, simulated and its report's metrics computed;
//! - a bare binary-heap event loop doing no work, as many events as
//!   fdlab's run.
//!
//! Only under `--cfg madsim` (the alias in `.cargo/config.toml` builds it
//! so, in `target/madsim`); a normal build prints how to run it.

#[cfg(not(madsim))]
fn main() {
    println!("the madsim comparison needs `--cfg madsim`: run `cargo simbench`");
}

#[cfg(madsim)]
fn main() {
    use std::time::Instant;

    let start = Instant::now();
    let delivered = madsim_side::run();
    let madsim_wall = start.elapsed().as_secs_f64();
    println!(
        "madsim 0.2.34, Endpoint send/recv, no detector: {delivered} datagrams delivered in {madsim_wall:.2} s"
    );

    let scenario = fdlab_sim::valid::ValidScenario::new(fdlab_sim::baseline::madsim_workload())
        .expect("a valid scenario");
    let start = Instant::now();
    let (outcome, _) = fdlab_sim::engine::run(&scenario, 1, false);
    let events = outcome.events;
    let result = fdlab_reports::metrics::ScenarioResult {
        scenario: scenario.name.clone(),
        runs: vec![outcome],
    };
    let metrics = fdlab_reports::metrics::scenario_metrics(&result);
    std::hint::black_box(&metrics);
    let fdlab_wall = start.elapsed().as_secs_f64();
    println!(
        "fdlab, fixed timeout on every pair, with its metrics: {events} events in {fdlab_wall:.2} s ({:.1} M events/s)",
        events as f64 / fdlab_wall / 1e6
    );

    // Pending events of the workload: a tick per stream and the datagrams
    // in flight (5.5 ms of a 10 ms period on average).
    let pending = 90 + 50;
    let start = Instant::now();
    std::hint::black_box(fdlab_sim::baseline::heap_loop(events, pending));
    let heap_wall = start.elapsed().as_secs_f64();
    println!(
        "bare binary-heap event loop, {pending} pending, no work: {events} events in {heap_wall:.2} s ({:.1} M events/s)",
        events as f64 / heap_wall / 1e6
    );
    println!(
        "fdlab is {:.1}x madsim (target: 30x); its events/s are {:.2}x the bare heap loop's",
        madsim_wall / fdlab_wall,
        heap_wall / fdlab_wall
    );
}

#[cfg(madsim)]
mod madsim_side {
    use std::net::SocketAddr;
    use std::time::{Duration, Instant};

    use fdlab_sim::baseline::{MADSIM_DURATION, MADSIM_HEARTBEAT, MADSIM_NODES};
    use madsim::net::Endpoint;
    use madsim::rand::{thread_rng, Rng};
    use madsim::runtime::{Handle, Runtime};

    const TAG: u64 = 1;
    const PORT: u16 = 7000;
    /// A heartbeat's payload.
    const BYTES: usize = 16;
    const SEED: u64 = 1;

    fn addr(node: u32) -> SocketAddr {
        SocketAddr::from(([10, 0, 0, node as u8 + 1], PORT))
    }

    /// Runs the workload; returns the datagrams delivered.
    pub fn run() -> u64 {
        Runtime::with_seed_and_config(SEED, madsim::Config::default()).block_on(async {
            let handle = Handle::current();
            let epoch = Instant::now();
            let end = epoch + Duration::from_nanos(MADSIM_DURATION.as_nanos());
            let period = Duration::from_nanos(MADSIM_HEARTBEAT.as_nanos());
            let mut receivers = Vec::new();
            for me in 0..MADSIM_NODES {
                let node = handle
                    .create_node()
                    .name(format!("n{me}"))
                    .ip(addr(me).ip())
                    .build();
                let ready = node.spawn(async move {
                    std::sync::Arc::new(Endpoint::bind(addr(me)).await.expect("bind"))
                });
                let ep = ready.await.expect("bound");
                for peer in (0..MADSIM_NODES).filter(|&p| p != me) {
                    let ep = ep.clone();
                    node.spawn(async move {
                        let phase = thread_rng().gen_range(0..MADSIM_HEARTBEAT.as_nanos());
                        let mut next = epoch + Duration::from_nanos(phase);
                        while next < end {
                            madsim::time::sleep_until(next).await;
                            ep.send_to(addr(peer), TAG, &[0u8; BYTES])
                                .await
                                .expect("send");
                            next += period;
                        }
                    });
                }
                receivers.push(node.spawn(async move {
                    let mut buf = [0u8; BYTES];
                    let mut got = 0u64;
                    loop {
                        let left = end.saturating_duration_since(Instant::now());
                        match madsim::time::timeout(left, ep.recv_from(TAG, &mut buf)).await {
                            Ok(Ok(_)) => got += 1,
                            _ => return got,
                        }
                    }
                }));
            }
            let mut delivered = 0;
            for r in receivers {
                delivered += r.await.expect("a receiver runs to the end");
            }
            delivered
        })
    }
}
