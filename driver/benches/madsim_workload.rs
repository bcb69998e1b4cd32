//! `cargo simbench`: issue 9/9's comparison with madsim, in one run, so that
//! the ratios hold on any machine.
//!
//! The workload: 10 nodes, each sending every other a heartbeat every
//! 10 ms over madsim's default links (uniform 1-10 ms), for 1,000
//! simulated seconds. Three rows:
//! - madsim 0.2.34, sending through each node's `net::Endpoint` from one
//!   task per stream, then from one task per node (the faster of the two
//!   is the reference), one receiving task per node that only counts; no
//!   detector at all;
//! - fdlab: the same workload as a scenario
//!   (`fdlab_sim::baseline::madsim_workload`), a fixed timeout on every
//!   pair, simulated and its report's metrics computed;
//! - a bare binary-heap event loop doing no work, as many events as
//!   fdlab's run;
//! - the user's command, end to end: the `fdlab` binary (built here with
//!   `cargo build --release` first) running
//!   `scenarios/bench/madsim-workload.toml` with `--jobs 1`, timed from
//!   its start to its exit, its report written (issue 37's target: at
//!   least 30 times madsim's faster way).
//!
//! The rows run in rounds, one of each per round, and each row's median
//! over the rounds is printed: a row alone swings by a third on a shared
//! machine.
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
    use std::path::{Path, PathBuf};
    use std::process::Command;
    use std::time::Instant;

    use super::madsim_side::Senders;

    /// The rows, in the order they run: madsim with either way of sending
    /// (the faster is the reference), fdlab on one and on two threads, the
    /// bare heap loop, `fdlab run` end to end.
    const ROWS: [&str; 6] = [
        "madsim",
        "madsim-node",
        "fdlab-1",
        "fdlab-2",
        "heap",
        "fdlab-run",
    ];
    /// Rounds of all the rows; each row's median is taken.
    const ROUNDS: usize = 3;
    /// Pending events of the workload for the heap loop: a tick per stream
    /// and the datagrams in flight (5.5 ms of a 10 ms period on average).
    const HEAP_PENDING: usize = 90 + 50;

    /// Runs every row in its own process, `ROUNDS` times, and prints each
    /// row's median and the ratios.
    pub fn all() {
        build_fdlab();
        let me = std::env::current_exe().expect("this benchmark's path");
        let mut walls = vec![Vec::new(); ROWS.len()];
        for round in 1..=ROUNDS {
            println!("round {round} of {ROUNDS}:");
            for (i, row) in ROWS.iter().enumerate() {
                let out = Command::new(&me).arg(row).output().expect("a row runs");
                let text = String::from_utf8_lossy(&out.stdout);
                for line in text.lines().filter(|l| !l.starts_with("wall_s=")) {
                    println!("  {line}");
                }
                let wall: f64 = text
                    .lines()
                    .find_map(|l| l.strip_prefix("wall_s="))
                    .and_then(|w| w.trim().parse().ok())
                    .unwrap_or_else(|| panic!("row {row} printed no wall_s: {text}"));
                walls[i].push(wall);
            }
        }
        let median = |i: usize| {
            let mut w = walls[i].clone();
            w.sort_by(f64::total_cmp);
            w[w.len() / 2]
        };
        println!("medians of {ROUNDS} rounds:");
        for (i, row) in ROWS.iter().enumerate() {
            println!("  {row:<12} {:.3} s", median(i));
        }
        let madsim = median(0).min(median(1));
        let (one, two, heap, run) = (median(2), median(3), median(4), median(5));
        println!(
            "`fdlab run` end to end against madsim's faster way: {:.1}x on one thread (target: 30x)",
            madsim / run
        );
        println!(
            "fdlab's run in process against madsim's faster way: {:.1}x on one thread, {:.1}x on two; fdlab's events/s on one thread: {:.2}x the bare heap loop's",
            madsim / one,
            madsim / two,
            heap / one
        );
    }

    /// The workspace's root (this package's parent).
    fn workspace() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .parent()
            .expect("the driver package sits in the workspace")
            .to_path_buf()
    }

    /// The release `fdlab` binary the end-to-end row runs.
    fn fdlab_binary() -> PathBuf {
        let target = std::env::var_os("CARGO_TARGET_DIR")
            .map(PathBuf::from)
            .unwrap_or_else(|| workspace().join("target"));
        target.join("release").join("fdlab")
    }

    /// Builds the release `fdlab` as a user does (`cargo build --release`:
    /// the normal build, without `--cfg madsim`), unless it is up to date.
    fn build_fdlab() {
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        println!("building the release fdlab for the end-to-end row (cargo build --release)");
        let status = Command::new(cargo)
            .args(["build", "--release", "--quiet", "--bin", "fdlab"])
            .current_dir(workspace())
            .status()
            .expect("cargo runs");
        assert!(status.success(), "cargo build --release failed");
    }

    /// `fdlab run` of the workload's file on one thread, start to exit.
    fn fdlab_run() -> f64 {
        let out = std::env::temp_dir().join(format!("fdlab-simbench-{}", std::process::id()));
        let file = workspace().join("scenarios/bench/madsim-workload.toml");
        let start = Instant::now();
        let status = Command::new(fdlab_binary())
            .arg("run")
            .arg(&file)
            .args(["--jobs", "1", "-q", "--out"])
            .arg(&out)
            .status()
            .expect("fdlab runs");
        let wall = start.elapsed().as_secs_f64();
        let _ = std::fs::remove_dir_all(&out);
        assert!(status.success(), "fdlab run {} failed", file.display());
        wall
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
            "madsim" | "madsim-node" => {
                let (senders, how) = if row == "madsim" {
                    (Senders::PerStream, "a task per stream")
                } else {
                    (Senders::PerNode, "a task per node")
                };
                let delivered = super::madsim_side::run(senders);
                format!("madsim 0.2.34, Endpoint send/recv, {how}, no detector: {delivered} datagrams delivered")
            }
            "fdlab-1" | "fdlab-2" => {
                let threads = if row == "fdlab-1" { 1 } else { 2 };
                let events = fdlab(threads);
                format!("fdlab, fixed timeout on every pair, with its metrics, {threads} thread(s): {events} events")
            }
            "fdlab-run" => {
                let wall = fdlab_run();
                println!("`fdlab run scenarios/bench/madsim-workload.toml --jobs 1`, end to end, its report written: {wall:.2} s");
                println!("wall_s={wall}");
                return;
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
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::sync::Arc;
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

    /// How the heartbeats are sent.
    #[derive(Clone, Copy)]
    pub enum Senders {
        /// One task per stream, each with its own phase, sleeping to its
        /// next send (the shape of fdlab's streams).
        PerStream,
        /// One task per node, sending to every peer each period (one timer
        /// per node instead of one per stream).
        PerNode,
    }

    fn addr(node: u32) -> SocketAddr {
        SocketAddr::from(([10, 0, 0, node as u8 + 1], PORT))
    }

    /// Runs the workload; returns the datagrams delivered by its end.
    /// Receivers only count (no timer per receive: an earlier version
    /// wrapped every receive in a `timeout`, a timer per datagram that the
    /// workload does not ask for); the main task sleeps to the end and reads
    /// the count, and the runtime drops the tasks still running.
    pub fn run(senders: Senders) -> u64 {
        Runtime::with_seed_and_config(SEED, madsim::Config::default()).block_on(async {
            let handle = Handle::current();
            let epoch = Instant::now();
            let end = epoch + Duration::from_nanos(MADSIM_DURATION.as_nanos());
            let period = Duration::from_nanos(MADSIM_HEARTBEAT.as_nanos());
            let delivered = Arc::new(AtomicU64::new(0));
            for me in 0..MADSIM_NODES {
                let node = handle
                    .create_node()
                    .name(format!("n{me}"))
                    .ip(addr(me).ip())
                    .build();
                let ready = node
                    .spawn(async move { Arc::new(Endpoint::bind(addr(me)).await.expect("bind")) });
                let ep = ready.await.expect("bound");
                let peers: Vec<u32> = (0..MADSIM_NODES).filter(|&p| p != me).collect();
                let send_from = move |ep: Arc<Endpoint>, to: Vec<u32>| async move {
                    let phase = thread_rng().gen_range(0..MADSIM_HEARTBEAT.as_nanos());
                    let mut next = epoch + Duration::from_nanos(phase);
                    while next < end {
                        madsim::time::sleep_until(next).await;
                        for &peer in &to {
                            ep.send_to(addr(peer), TAG, &[0u8; BYTES])
                                .await
                                .expect("send");
                        }
                        next += period;
                    }
                };
                match senders {
                    Senders::PerStream => {
                        for &peer in &peers {
                            node.spawn(send_from(ep.clone(), vec![peer]));
                        }
                    }
                    Senders::PerNode => {
                        node.spawn(send_from(ep.clone(), peers));
                    }
                }
                let count = delivered.clone();
                node.spawn(async move {
                    let mut buf = [0u8; BYTES];
                    while ep.recv_from(TAG, &mut buf).await.is_ok() {
                        count.fetch_add(1, Ordering::Relaxed);
                    }
                });
            }
            madsim::time::sleep_until(end).await;
            delivered.load(Ordering::Relaxed)
        })
    }
}
