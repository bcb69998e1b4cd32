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
//! so, in `target/madsim`); a normal build prints how to run it. The
//! figures are wall times of one run each, printed, never checked.

#[cfg(not(madsim))]
fn main() {
    println!("the madsim comparison needs `--cfg madsim`: run `cargo simbench`");
}

/// Each row runs in a child process of its own (this binary, with the
/// row's name as its argument), one after another: a madsim runtime leaves
/// the process slower than it found it (measured: the heap loop took twice
/// as long after it), so rows sharing a process would not be comparable.
#[cfg(madsim)]
fn main() {
    let row = std::env::args().nth(1).filter(|a| !a.starts_with('-'));
    match row.as_deref() {
        Some(row) => rows::run(row),
        None => rows::all(),
    }
}

#[cfg(madsim)]
mod rows {
    use std::process::Command;
    use std::time::Instant;

    /// The rows, in the order they run.
    const ROWS: [&str; 4] = ["madsim", "fdlab-1", "fdlab-2", "heap"];
    /// Pending events of the workload for the heap loop: a tick per stream
    /// and the datagrams in flight (5.5 ms of a 10 ms period on average).
    const HEAP_PENDING: usize = 90 + 50;

    /// Runs every row in its own process and prints the ratios.
    pub fn all() {
        let me = std::env::current_exe().expect("this benchmark's path");
        let mut walls = Vec::new();
        for row in ROWS {
            let out = Command::new(&me).arg(row).output().expect("a row runs");
            let text = String::from_utf8_lossy(&out.stdout);
            for line in text.lines().filter(|l| !l.starts_with("wall_s=")) {
                println!("{line}");
            }
            let wall: f64 = text
                .lines()
                .find_map(|l| l.strip_prefix("wall_s="))
                .and_then(|w| w.trim().parse().ok())
                .unwrap_or_else(|| panic!("row {row} printed no wall_s: {text}"));
            walls.push(wall);
        }
        let (madsim, one, two, heap) = (walls[0], walls[1], walls[2], walls[3]);
        println!(
            "fdlab against madsim: {:.1}x on one thread, {:.1}x on two (target: 30x); fdlab's events/s on one thread: {:.2}x the bare heap loop's",
            madsim / one,
            madsim / two,
            heap / one
        );
    }

    /// fdlab's run of the workload with its metrics, on `threads` threads;
    /// returns its events.
    fn fdlab(threads: usize) -> u64 {
        let scenario = fdlab_sim::valid::ValidScenario::new(fdlab_sim::baseline::madsim_workload())
            .expect("a valid scenario");
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .expect("a thread pool");
        pool.install(|| {
            let (outcome, _) = fdlab_sim::engine::run(&scenario, 1, false);
            let events = outcome.events;
            let result = fdlab_reports::metrics::ScenarioResult {
                scenario: scenario.name.clone(),
                runs: vec![outcome],
            };
            std::hint::black_box(fdlab_reports::metrics::scenario_metrics(&result));
            events
        })
    }

    /// Runs one row and prints its figures, the last line `wall_s=`.
    pub fn run(row: &str) {
        let start = Instant::now();
        let line = match row {
            "madsim" => {
                let delivered = super::madsim_side::run();
                format!("madsim 0.2.34, Endpoint send/recv, no detector: {delivered} datagrams delivered")
            }
            "fdlab-1" | "fdlab-2" => {
                let threads = if row == "fdlab-1" { 1 } else { 2 };
                let events = fdlab(threads);
                format!("fdlab, fixed timeout on every pair, with its metrics, {threads} thread(s): {events} events")
            }
            "heap" => {
                // As many events as fdlab's run (a cheap run tells how many).
                let events = fdlab(2);
                let start = Instant::now();
                std::hint::black_box(fdlab_sim::baseline::heap_loop(events, HEAP_PENDING));
                let wall = start.elapsed().as_secs_f64();
                println!("bare binary-heap event loop, {HEAP_PENDING} pending, no work: {events} events in {wall:.2} s");
                println!("wall_s={wall}");
                return;
            }
            other => panic!("no row {other}: rows are {ROWS:?}"),
        };
        let wall = start.elapsed().as_secs_f64();
        println!("{line} in {wall:.2} s");
        println!("wall_s={wall}");
    }
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
