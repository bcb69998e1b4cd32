//! `fdlab live`: a small mesh or dataflow scenario with one real OS process
//! per node on the loopback interface, faults injected with real signals (and
//! network faults by each node's transport), and a calibration of the
//! simulator against what the processes measured.
//!
//! The parent (`fdlab live SCENARIO`) resolves the run's layout and fault
//! schedule exactly as the simulator does for the same seed, spawns one
//! `fdlab live-node` per node, hands every node the peers' UDP addresses and a
//! common start instant, sends `SIGSTOP`/`SIGCONT` (pauses) and `SIGKILL`
//! (crashes) at the scheduled instants, and collects the verdict changes the
//! nodes stream on their standard output. Every node is killed and waited for
//! when the run ends, fails, times out or is interrupted; a node also exits by
//! itself when its standard input closes (the parent is gone).
//!
//! A node (`fdlab live-node`) runs `fdlab-driver`'s loop over tokio UDP: the
//! detectors it owns as a monitor and the heartbeat streams it owes its
//! monitors, with the simulator's heartbeat phases and probe jitters for the
//! seed, so that a live run and the simulated run of the same seed differ only
//! by what the real machine adds (scheduling, loopback latency, signal
//! delivery). Partitions, loss and slow links are not signals: each node's
//! socket sits behind `fdlab_driver::faulty::FaultyTransport`, which applies
//! the schedule's windows to the datagrams the node sends
//! (`crate::live::links`). A dataflow stage also runs a data plane: data
//! frames over TCP between adjacent layers (`crate::live::dataflow`), which
//! reach its data-stream detectors through the same driver.

mod dataflow;
mod links;
mod traffic;

use std::collections::BTreeMap;
use std::io::{self, BufRead, BufReader, Write};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use clap::Args;
use fdlab_driver::faulty::FaultyTransport;
use fdlab_driver::tokio_io::{TokioClock, TokioTransport};
use fdlab_driver::Node;
use fdlab_protocol::{Nanos, Verdict};
use fdlab_reports::atomic::write_file;
use fdlab_reports::metrics::{run_metrics, scenario_metrics, ScenarioResult};
use fdlab_reports::report::{write_report, INDEX_HTML};
use fdlab_reports::tables::terminal_table;
use fdlab_scenarios::resolve;
use fdlab_sim::dist::Sampler;
use fdlab_sim::engine::{self, LIVENESS_MESSAGE_BYTES, STREAM_HEARTBEAT_BYTES};
use fdlab_sim::faults::{Action, Schedule};
use fdlab_sim::outcome::{DetectorTimeline, PairOutcome, RunOutcome};
use fdlab_sim::rng::{name_hash, Purpose, Streams};
use fdlab_sim::scenario::{Channel, Expect, FaultKind, Scenario, Topology};
use fdlab_sim::topology::Layout;
use rand::RngExt;

use dataflow::{stream_heartbeat_lines, Stage, StageTransport};
use links::{heartbeat_stream, link_plan, MirrorDice};
use traffic::{parse_line, Counter, SentLines, Traffic, REPORT_PERIOD};

/// Most nodes (processes) a live run may start.
pub const MAX_NODES: u32 = 16;
/// Longest live run (real time).
pub const MAX_DURATION: Nanos = Nanos::from_secs(300);
/// Calibration tolerance: a live detection-time median must lie within this
/// share of the simulated one...
pub const TOLERANCE_SHARE: f64 = 0.10;
/// ... or within this many milliseconds of it, whichever is wider.
pub const TOLERANCE_MS: f64 = 200.0;
/// Time between the nodes' start line and the run's time zero.
const LEAD: Duration = Duration::from_millis(500);
/// Extra time a node gets to report `done` after the run's end.
const GRACE: Duration = Duration::from_secs(5);

#[derive(Args)]
pub struct LiveArgs {
    /// A built-in scenario name or a scenario file (a mesh or a dataflow of at
    /// most 16 processes, with crash, pause, partition, slow-link and loss
    /// faults).
    #[arg(value_name = "SCENARIO")]
    scenario: String,
    /// The seed: heartbeat phases, fault times drawn from windows, monitor
    /// rings; the simulated run of this seed is the first prediction.
    #[arg(long, value_name = "S", default_value_t = 1)]
    seed: u64,
    /// Shortens (or lengthens) the scenario, e.g. `70s` for `crash-mesh`,
    /// whose crash is at 60 s. At most 5 minutes.
    #[arg(long, value_name = "DURATION")]
    duration: Option<Nanos>,
    /// Seeds of the simulated prediction (S, S+1, ...), besides seed S itself.
    #[arg(long, value_name = "N", default_value_t = 20)]
    sim_seeds: u32,
    /// Hard bound on the whole command, real time (default: the scenario's
    /// duration plus 30 s). Every node is killed when it expires.
    #[arg(long, value_name = "DURATION")]
    timeout: Option<Nanos>,
    /// Directory for the reports and `calibration.csv`.
    #[arg(long, value_name = "DIR", default_value = "reports-live")]
    out: PathBuf,
}

/// The hidden node process.
#[derive(Args)]
pub struct NodeArgs {
    #[arg(long)]
    scenario: String,
    #[arg(long)]
    seed: u64,
    /// The run's duration in nanoseconds (after the parent's override).
    #[arg(long)]
    duration_ns: u64,
    #[arg(long)]
    node: u32,
}

static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// Checks that `scenario` can run live; the error names `name` (the file as
/// given, or the built-in's name) and the field.
fn check_live(s: &Scenario, name: &str) -> Result<(), String> {
    let dataflow = match &s.topology {
        Topology::Mesh { nodes, .. } if *nodes <= MAX_NODES => false,
        Topology::Mesh { nodes, .. } => {
            return Err(format!(
                "{name}: topology.nodes = {nodes}: a live run starts one process per node, at most {MAX_NODES}"
            ))
        }
        Topology::Dataflow { layers } => {
            let stages: u32 = layers.iter().sum();
            if stages > MAX_NODES {
                return Err(format!(
                    "{name}: topology.layers: {stages} stages; a live run starts one process per stage, at most {MAX_NODES}"
                ));
            }
            true
        }
    };
    if s.duration > MAX_DURATION {
        return Err(format!(
            "{name}: duration = {} is longer than a live run may last ({MAX_DURATION}); shorten it with --duration",
            s.duration
        ));
    }
    for (i, f) in s.faults.iter().enumerate() {
        let kind = f.kind();
        if !supported_live(kind) {
            return Err(format!(
                "{name}: faults[{i}].kind = \"{}\" is not supported live (crash, pause, partition, slow-link and loss are)",
                kind.name()
            ));
        }
        if kind == FaultKind::Crash && f.duration.is_some() {
            return Err(format!(
                "{name}: faults[{i}].duration: a crash with a duration restarts its node, and restarts are not supported live; drop the duration"
            ));
        }
    }
    for (i, f) in s.random_faults.iter().enumerate() {
        if !supported_live(f.kind) || f.kind == FaultKind::Crash {
            return Err(format!(
                "{name}: random_faults[{i}].kind = \"{}\" is not supported live (random crashes restart their node; pause, partition, slow-link and loss are supported)",
                f.kind.name()
            ));
        }
    }
    if !s.clocks.is_empty() {
        return Err(format!(
            "{name}: clocks: per-node clock drift and offsets are not supported live (the processes share the machine's clock)"
        ));
    }
    if dataflow {
        check_live_dataflow(s, name)?;
    }
    Ok(())
}

/// What a live dataflow cannot do.
fn check_live_dataflow(s: &Scenario, name: &str) -> Result<(), String> {
    if s.network.heartbeat_channel == Channel::Data {
        return Err(format!(
            "{name}: network.heartbeat_channel = \"data\" is not supported live (heartbeats go as UDP datagrams); use \"control\""
        ));
    }
    if s.workload.maintenance_frames {
        return Err(format!(
            "{name}: workload.maintenance_frames = true is not supported live (stages send no maintenance frames)"
        ));
    }
    Ok(())
}

/// Fault kinds a live run injects: crashes and pauses by signals, the
/// network's by each node's transport filter (`crate::live::links`).
fn supported_live(kind: FaultKind) -> bool {
    matches!(
        kind,
        FaultKind::Crash
            | FaultKind::Pause
            | FaultKind::Partition
            | FaultKind::SlowLink
            | FaultKind::Loss
    )
}

/// The scenario as the live run uses it: resolved, `--duration` applied,
/// validated for the simulator and for live.
fn live_scenario(arg: &str, duration: Option<Nanos>) -> Result<Scenario, String> {
    let mut s = resolve(arg).map_err(|e| e.to_string())?;
    if let Some(d) = duration {
        if d == Nanos::ZERO {
            return Err("--duration: must be positive".into());
        }
        s.duration = d;
    }
    s.validate().map_err(|e| format!("{}: {e}", s.name))?;
    check_live(&s, arg)?;
    Ok(s)
}

// ---- the node process ------------------------------------------------------

fn write_line(out: &mut impl Write, line: &str) {
    // The parent is gone if this fails; the stdin watcher ends the process.
    let _ = out.write_all(line.as_bytes());
    let _ = out.write_all(b"\n");
    let _ = out.flush();
}

/// `fdlab live-node`: prints `port P`, reads `start UNIX_NS ADDR...`, runs
/// until the duration, streaming `v WATCH T_NS VERDICT` and its sent-message
/// counts (`crate::live::traffic`), then prints `done`.
pub fn node(args: &NodeArgs) -> Result<(), String> {
    let mut scenario = resolve(&args.scenario).map_err(|e| e.to_string())?;
    scenario.duration = Nanos(args.duration_ns);
    let streams = Streams::new(args.seed);
    let layout = Layout::build(&scenario.topology, &streams);
    let me = args.node;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("tokio runtime: {e}"))?;
    let net = runtime
        .block_on(TokioTransport::bind(SocketAddr::from(([127, 0, 0, 1], 0))))
        .map_err(|e| format!("bind 127.0.0.1:0: {e}"))?;
    let port = net
        .socket
        .local_addr()
        .map_err(|e| format!("local address: {e}"))?
        .port();
    // A dataflow stage also listens for its upstreams' data links.
    let dataflow = !layout.links.is_empty();
    let listener = if dataflow {
        let l = runtime
            .block_on(tokio::net::TcpListener::bind(SocketAddr::from((
                [127, 0, 0, 1],
                0,
            ))))
            .map_err(|e| format!("bind TCP 127.0.0.1:0: {e}"))?;
        let tcp_port = l
            .local_addr()
            .map_err(|e| format!("local address: {e}"))?
            .port();
        write_line(&mut io::stdout(), &format!("port {port} {tcp_port}"));
        Some(l)
    } else {
        write_line(&mut io::stdout(), &format!("port {port}"));
        None
    };

    let mut line = String::new();
    io::stdin()
        .read_line(&mut line)
        .map_err(|e| format!("stdin: {e}"))?;
    let mut words = line.split_whitespace();
    if words.next() != Some("start") {
        return Err(format!("expected a start line, got `{}`", line.trim()));
    }
    let start_ns: u128 = words
        .next()
        .and_then(|w| w.parse().ok())
        .ok_or("start line: no start instant")?;
    // `start NS UDP... [tcp TCP...]`: the nodes' UDP addresses, then, for a
    // dataflow, their data-plane listeners.
    let parse_addrs = |words: &[&str]| -> Result<Vec<SocketAddr>, String> {
        let addrs: Vec<SocketAddr> = words
            .iter()
            .map(|w| {
                w.parse()
                    .map_err(|_| format!("start line: bad address `{w}`"))
            })
            .collect::<Result<_, _>>()?;
        if addrs.len() != layout.nodes.len() {
            return Err(format!(
                "start line: {} addresses for {} nodes",
                addrs.len(),
                layout.nodes.len()
            ));
        }
        Ok(addrs)
    };
    let rest: Vec<&str> = words.collect();
    let (udp_words, tcp_words) = match rest.iter().position(|&w| w == "tcp") {
        Some(i) => (&rest[..i], Some(&rest[i + 1..])),
        None => (&rest[..], None),
    };
    let addrs = parse_addrs(udp_words)?;
    let tcp_addrs = tcp_words.map(parse_addrs).transpose()?;
    if dataflow && tcp_addrs.is_none() {
        return Err("start line: no data-plane (tcp) addresses for a dataflow stage".into());
    }
    // The parent's end: when our standard input closes, exit.
    std::thread::spawn(move || {
        let mut sink = String::new();
        while matches!(io::stdin().read_line(&mut sink), Ok(n) if n > 0) {
            sink.clear();
        }
        std::process::exit(3);
    });

    // The network faults of this node's outgoing datagrams: the same
    // schedule the parent and the simulator resolve from (scenario, seed,
    // duration), so no fault list needs to travel on the start line.
    let schedule = Schedule::resolve(&scenario, &layout.nodes, &streams);
    let plan = link_plan(&schedule, scenario.network.loss, me, &addrs);
    let mut dice = MirrorDice::new(
        streams,
        me,
        addrs.clone(),
        Sampler::new(&scenario.network.latency),
    );
    let mut node: Node<SocketAddr> = Node::new();
    for &(m, t) in &layout.pairs {
        if m == me {
            for setup in &scenario.detectors {
                let ids = [u64::from(m), u64::from(t), name_hash(&setup.name)];
                let jitter: f64 = streams.stream(Purpose::Liveness, &ids).random();
                node.watch(
                    addrs[t as usize],
                    &setup.name,
                    setup.config.clone(),
                    Nanos::ZERO,
                    jitter,
                )
                .map_err(|e| format!("detector `{}`: {e}", setup.name))?;
            }
        }
        if t == me {
            let mut intervals: Vec<Nanos> = Vec::new();
            for setup in &scenario.detectors {
                if let Some(i) = setup.config.heartbeat_interval() {
                    if !intervals.contains(&i) {
                        intervals.push(i);
                    }
                }
            }
            for interval in intervals {
                let (phase, rng) = heartbeat_stream(&streams, m, t, interval);
                dice.add_heartbeats(m, interval, rng);
                node.send_heartbeats(addrs[m as usize], interval, phase);
            }
        }
    }
    let mut sent_lines = SentLines::new(addrs.clone());
    node.set_sent_observer(
        REPORT_PERIOD,
        Box::new(move |_, sent| {
            let mut out = io::stdout().lock();
            for line in sent_lines.lines(sent) {
                write_line(&mut out, &line);
            }
        }),
    );
    node.set_observer(Box::new(|watch, at, verdict| {
        let v = match verdict {
            Verdict::Alive => "alive",
            Verdict::Suspect => "suspect",
            Verdict::Failed => "failed",
        };
        write_line(
            &mut io::stdout(),
            &format!("v {watch} {} {v}", at.as_nanos()),
        );
    }));

    let now_ns = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_err(|e| format!("system clock: {e}"))?
        .as_nanos();
    if start_ns > now_ns {
        let wait = u64::try_from(start_ns - now_ns).unwrap_or(u64::MAX);
        std::thread::sleep(Duration::from_nanos(wait));
    }
    // The run's time zero on this process's monotonic clock is the common
    // start instant, not the moment this process woke up for it: on a busy
    // machine the nodes wake a few milliseconds apart, and a clock started
    // late would stamp every verdict early (and see the fault windows late).
    let late = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_err(|e| format!("system clock: {e}"))?
        .as_nanos()
        .saturating_sub(start_ns);
    let late = Duration::from_nanos(u64::try_from(late).unwrap_or(u64::MAX));
    let woke = tokio::time::Instant::now();
    let clock = TokioClock {
        epoch: woke.checked_sub(late).unwrap_or(woke),
    };
    let until = scenario.duration;
    let stage = Stage::new(&layout, me);
    let stream_heartbeats = stage.stream_heartbeats.clone();
    runtime
        .block_on(async {
            let (deliver, frames) = tokio::sync::mpsc::unbounded_channel();
            if let (Some(listener), Some(tcp)) = (listener, &tcp_addrs) {
                stage.start(
                    &scenario, &schedule, &streams, clock, listener, &addrs, tcp, deliver,
                );
                let counts = stream_heartbeats.clone();
                tokio::spawn(async move {
                    let mut last = BTreeMap::new();
                    let period = Duration::from_nanos(REPORT_PERIOD.as_nanos());
                    loop {
                        tokio::time::sleep(period).await;
                        let mut out = io::stdout().lock();
                        for line in stream_heartbeat_lines(&counts, &mut last) {
                            write_line(&mut out, &line);
                        }
                    }
                });
            }
            let net = StageTransport::new(net, frames);
            let net = FaultyTransport::new(net, clock, plan, dice);
            node.run(&clock, &net, until).await
        })
        .map_err(|e| format!("UDP socket: {e}"))?;
    // The final counts (the reporter may not have run since the last frames).
    for line in stream_heartbeat_lines(&stream_heartbeats, &mut BTreeMap::new()) {
        write_line(&mut io::stdout(), &line);
    }
    write_line(&mut io::stdout(), "done");
    Ok(())
}

// ---- the parent --------------------------------------------------------------

/// What a node's standard output said.
enum Report {
    /// The UDP port, and the data-plane TCP port of a dataflow stage.
    Port(u16, Option<u16>),
    Change(usize, Nanos, Verdict),
    /// A cumulative count of sent datagrams (`crate::live::traffic`).
    Sent(Counter, u64),
    Done,
    /// Standard output closed (the process ended).
    Closed,
}

fn parse_report(line: &str) -> Option<Report> {
    let w: Vec<&str> = line.split_whitespace().collect();
    match w[..] {
        ["port", p] => p.parse().ok().map(|p| Report::Port(p, None)),
        ["port", p, t] => Some(Report::Port(p.parse().ok()?, Some(t.parse().ok()?))),
        ["v", watch, t, v] => {
            let verdict = match v {
                "alive" => Verdict::Alive,
                "suspect" => Verdict::Suspect,
                "failed" => Verdict::Failed,
                _ => return None,
            };
            Some(Report::Change(
                watch.parse().ok()?,
                Nanos(t.parse().ok()?),
                verdict,
            ))
        }
        ["done"] => Some(Report::Done),
        _ => parse_line(&w).map(|(counter, n)| Report::Sent(counter, n)),
    }
}

/// The node processes; dropping it kills and reaps every one.
struct Nodes {
    children: Vec<Child>,
    stdins: Vec<Option<ChildStdin>>,
}

impl Nodes {
    fn pid(&self, node: u32) -> nix::unistd::Pid {
        let id = self.children[node as usize].id();
        nix::unistd::Pid::from_raw(i32::try_from(id).unwrap_or(i32::MAX))
    }

    fn signal(&self, node: u32, signal: nix::sys::signal::Signal) {
        // A node that is already gone cannot be signalled: nothing to do.
        let _ = nix::sys::signal::kill(self.pid(node), signal);
    }

    /// Kills and waits for every node.
    fn reap(&mut self) {
        self.stdins.clear();
        for child in &mut self.children {
            let _ = child.kill();
            let _ = child.wait();
        }
        self.children.clear();
    }
}

impl Drop for Nodes {
    fn drop(&mut self) {
        self.reap();
    }
}

/// Starts one `fdlab live-node` per node, each with a thread that forwards
/// its reports to `tx`.
fn spawn(
    scenario_arg: &str,
    seed: u64,
    scenario: &Scenario,
    n: u32,
    tx: &mpsc::Sender<(u32, Report)>,
) -> Result<Nodes, String> {
    let exe = std::env::current_exe().map_err(|e| format!("own executable: {e}"))?;
    let mut nodes = Nodes {
        children: Vec::new(),
        stdins: Vec::new(),
    };
    for i in 0..n {
        let mut child = Command::new(&exe)
            .arg("live-node")
            .arg("--scenario")
            .arg(scenario_arg)
            .arg("--seed")
            .arg(seed.to_string())
            .arg("--duration-ns")
            .arg(scenario.duration.as_nanos().to_string())
            .arg("--node")
            .arg(i.to_string())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| format!("starting node {i}: {e}"))?;
        let stdout = child.stdout.take();
        nodes.stdins.push(child.stdin.take());
        nodes.children.push(child);
        let Some(stdout) = stdout else {
            return Err(format!("node {i}: no standard output"));
        };
        let tx = tx.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if let Some(report) = parse_report(&line) {
                    if tx.send((i, report)).is_err() {
                        return;
                    }
                }
            }
            let _ = tx.send((i, Report::Closed));
        });
    }
    Ok(nodes)
}

fn millis(n: Nanos) -> f64 {
    n.as_nanos_f64() / 1e6
}

fn median(values: &mut [f64]) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    values.sort_by(f64::total_cmp);
    let n = values.len();
    Some(if n % 2 == 1 {
        values[n / 2]
    } else {
        (values[n / 2 - 1] + values[n / 2]) / 2.0
    })
}

fn mean(values: &[f64]) -> Option<f64> {
    (!values.is_empty()).then(|| values.iter().sum::<f64>() / values.len() as f64)
}

/// One detector's row of the calibration table.
#[derive(Debug)]
pub struct CalibrationRow {
    pub detector: String,
    pub live_detected: usize,
    pub live_missed: usize,
    pub live_p50_ms: Option<f64>,
    pub live_mean_ms: Option<f64>,
    pub sim_p50_ms: Option<f64>,
    pub sim_mean_ms: Option<f64>,
    pub diff_p50_ms: Option<f64>,
    /// Largest |live - simulated| over the pairs of this seed.
    pub max_pair_diff_ms: Option<f64>,
    pub seeds_p50_ms: Option<f64>,
    pub seeds_mean_ms: Option<f64>,
    pub live_mistakes: usize,
    pub sim_mistakes: usize,
    pub seeds_mistakes_per_run: Option<f64>,
    pub within: Option<bool>,
}

/// Detection delays (ms) per detector, keyed by (monitor, target, fault);
/// ordered, so that the means summed from them are the same bytes every run.
type Delays = Vec<BTreeMap<(u32, u32, usize), f64>>;

fn d_index(run: &RunOutcome, name: &str) -> usize {
    run.detectors.iter().position(|n| n == name).unwrap_or(0)
}

/// The first instant at or after `from` when the pair's detector says Failed
/// (a mistake may start as Suspect).
fn failed_time(run: &RunOutcome, monitor: u32, target: u32, d: usize, from: Nanos) -> Nanos {
    run.pairs
        .iter()
        .find(|p| p.monitor == monitor && p.target == target)
        .and_then(|p| p.detectors.get(d))
        .and_then(|t| {
            t.changes
                .iter()
                .find(|&&(at, v)| at >= from && v == Verdict::Failed)
        })
        .map_or(from, |&(at, _)| at)
}

fn delays_and_mistakes(run: &RunOutcome) -> (Delays, Vec<usize>, Vec<usize>) {
    let m = run_metrics(run);
    let mut delays = Vec::new();
    let mut mistakes = Vec::new();
    let mut missed = Vec::new();
    for d in &m.detectors {
        let mut map = BTreeMap::new();
        for det in &d.detections {
            if let Some(delay) = det.failed_delay() {
                map.insert((det.monitor, det.target, det.fault), millis(delay));
            }
        }
        // A fault to tolerate (a pause) that a detector wrongly declared
        // Failed: the delay from its start to that verdict, which is the same
        // quantity (how long the silence lasts before the verdict).
        for mistake in &d.mistakes {
            if mistake.worst != Verdict::Failed {
                continue;
            }
            let fault = run.faults.iter().enumerate().find(|(_, f)| {
                f.expect == Expect::Tolerate
                    && f.node == Some(mistake.target)
                    && f.window.start <= mistake.start
                    && mistake.start < f.window.end
            });
            if let Some((i, f)) = fault {
                let failed_at = failed_time(
                    run,
                    mistake.monitor,
                    mistake.target,
                    d_index(run, &d.detector),
                    mistake.start,
                );
                map.entry((mistake.monitor, mistake.target, i))
                    .or_insert_with(|| millis(failed_at - f.window.start));
            }
        }
        missed.push(d.failed_missed());
        mistakes.push(d.mistakes.len());
        delays.push(map);
    }
    (delays, mistakes, missed)
}

fn calibrate(
    live: &RunOutcome,
    same_seed: &RunOutcome,
    seeds: &[RunOutcome],
) -> Vec<CalibrationRow> {
    let (live_d, live_m, live_missed) = delays_and_mistakes(live);
    let (sim_d, sim_m, _) = delays_and_mistakes(same_seed);
    let per_seed: Vec<_> = seeds.iter().map(delays_and_mistakes).collect();
    live.detectors
        .iter()
        .enumerate()
        .map(|(d, name)| {
            let mut lv: Vec<f64> = live_d[d].values().copied().collect();
            let mut sv: Vec<f64> = sim_d[d].values().copied().collect();
            let mut all: Vec<f64> = per_seed
                .iter()
                .flat_map(|(ds, _, _)| ds[d].values().copied())
                .collect();
            let max_pair_diff_ms = live_d[d]
                .iter()
                .filter_map(|(k, l)| sim_d[d].get(k).map(|s| (l - s).abs()))
                .max_by(f64::total_cmp);
            let (live_p50_ms, sim_p50_ms) = (median(&mut lv), median(&mut sv));
            let diff_p50_ms = live_p50_ms.zip(sim_p50_ms).map(|(l, s)| l - s);
            let within = diff_p50_ms
                .zip(sim_p50_ms)
                .map(|(diff, s)| diff.abs() <= (s * TOLERANCE_SHARE).max(TOLERANCE_MS));
            let seeds_mistakes: Vec<f64> = per_seed.iter().map(|(_, m, _)| m[d] as f64).collect();
            CalibrationRow {
                detector: name.clone(),
                live_detected: lv.len(),
                live_missed: live_missed[d],
                live_p50_ms,
                live_mean_ms: mean(&lv),
                sim_p50_ms,
                sim_mean_ms: mean(&sv),
                diff_p50_ms,
                max_pair_diff_ms,
                seeds_p50_ms: median(&mut all),
                seeds_mean_ms: mean(&all),
                live_mistakes: live_m[d],
                sim_mistakes: sim_m[d],
                seeds_mistakes_per_run: mean(&seeds_mistakes),
                within,
            }
        })
        .collect()
}

fn opt(v: Option<f64>) -> String {
    v.map_or_else(|| "-".into(), |v| format!("{v:.1}"))
}

fn calibration_csv(rows: &[CalibrationRow], seed: u64, sim_seeds: u32) -> Result<Vec<u8>, String> {
    let mut w = csv::Writer::from_writer(Vec::new());
    let header = [
        "detector",
        "live_detected",
        "live_missed",
        "live_p50_ms",
        "live_mean_ms",
        "sim_same_seed_p50_ms",
        "sim_same_seed_mean_ms",
        "diff_p50_ms",
        "max_pair_diff_ms",
        "sim_seeds",
        "sim_seeds_p50_ms",
        "sim_seeds_mean_ms",
        "live_mistakes",
        "sim_same_seed_mistakes",
        "sim_seeds_mistakes_per_run",
        "within_tolerance",
        "seed",
    ];
    w.write_record(header).map_err(|e| e.to_string())?;
    let f = |v: Option<f64>| v.map_or_else(String::new, |v| format!("{v:.3}"));
    for r in rows {
        w.write_record([
            r.detector.clone(),
            r.live_detected.to_string(),
            r.live_missed.to_string(),
            f(r.live_p50_ms),
            f(r.live_mean_ms),
            f(r.sim_p50_ms),
            f(r.sim_mean_ms),
            f(r.diff_p50_ms),
            f(r.max_pair_diff_ms),
            sim_seeds.to_string(),
            f(r.seeds_p50_ms),
            f(r.seeds_mean_ms),
            r.live_mistakes.to_string(),
            r.sim_mistakes.to_string(),
            f(r.seeds_mistakes_per_run),
            r.within.map_or_else(String::new, |b| b.to_string()),
            seed.to_string(),
        ])
        .map_err(|e| e.to_string())?;
    }
    w.into_inner().map_err(|e| e.to_string())
}

/// `fdlab live`.
pub fn run(args: &LiveArgs) -> Result<(), String> {
    let scenario = live_scenario(&args.scenario, args.duration)?;
    let streams = Streams::new(args.seed);
    let layout = Layout::build(&scenario.topology, &streams);
    let schedule = Schedule::resolve(&scenario, &layout.nodes, &streams);
    // `check_live` refused every fault that would need another action; this
    // guards against a schedule that still holds one.
    for (_, action) in &schedule.actions {
        if !matches!(
            action,
            Action::Crash { .. }
                | Action::PauseStart { .. }
                | Action::PauseEnd { .. }
                | Action::Heal { .. }
        ) {
            return Err(format!(
                "{}: fault action {action:?} is not supported live (crash, pause and the network's faults are)",
                scenario.name
            ));
        }
    }
    // The predictions first: any simulator error surfaces before a process starts.
    let same_seed = engine::run(&scenario, args.seed, false)
        .map_err(|e| e.to_string())?
        .0;
    let seeds: Vec<RunOutcome> = (0..u64::from(args.sim_seeds.max(1)))
        .map(|k| {
            engine::run(&scenario, args.seed + k, false)
                .map(|r| r.0)
                .map_err(|e| e.to_string())
        })
        .collect::<Result<_, _>>()?;

    let duration = Duration::from_nanos(scenario.duration.as_nanos());
    let bound = args
        .timeout
        .map_or(duration + Duration::from_secs(30), |t| {
            Duration::from_nanos(t.as_nanos())
        });
    let launched = Instant::now();
    let deadline = launched + bound;
    let _ = ctrlc::set_handler(|| INTERRUPTED.store(true, Ordering::SeqCst));

    let n = layout.nodes.len() as u32;
    let (tx, rx) = mpsc::channel();
    let mut nodes = spawn(&args.scenario, args.seed, &scenario, n, &tx)?;
    drop(tx);
    let pids: Vec<String> = nodes.children.iter().map(|c| c.id().to_string()).collect();
    say!("live: {} node processes, pids {}", n, pids.join(" "));

    let check = |deadline: Instant| -> Result<(), String> {
        if INTERRUPTED.load(Ordering::SeqCst) {
            return Err("interrupted; every node process was killed".into());
        }
        if Instant::now() >= deadline {
            return Err(format!(
                "the live run passed its bound of {:.0} s (--timeout); every node process was killed",
                bound.as_secs_f64()
            ));
        }
        Ok(())
    };
    let tick = Duration::from_millis(50);

    // Ports.
    let mut ports: Vec<Option<u16>> = vec![None; n as usize];
    let mut tcp_ports: Vec<Option<u16>> = vec![None; n as usize];
    while ports.iter().any(Option::is_none) {
        check(deadline)?;
        match rx.recv_timeout(tick) {
            Ok((i, Report::Port(p, t))) => {
                ports[i as usize] = Some(p);
                tcp_ports[i as usize] = t;
            }
            Ok((i, Report::Closed)) => {
                return Err(format!(
                    "node {} ended before reporting its port",
                    layout.nodes[i as usize]
                ))
            }
            Ok(_) | Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => return Err("every node ended".into()),
        }
    }
    let addrs: Vec<String> = ports
        .iter()
        .map(|p| format!("127.0.0.1:{}", p.unwrap_or(0)))
        .collect();
    let start_unix = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_err(|e| format!("system clock: {e}"))?
        + LEAD;
    let start = Instant::now() + LEAD;
    let mut start_line = format!("start {} {}", start_unix.as_nanos(), addrs.join(" "));
    if !layout.links.is_empty() {
        let tcp: Vec<String> = tcp_ports
            .iter()
            .map(|p| format!("127.0.0.1:{}", p.unwrap_or(0)))
            .collect();
        start_line = format!("{start_line} tcp {}", tcp.join(" "));
    }
    start_line.push('\n');
    for (i, stdin) in nodes.stdins.iter_mut().enumerate() {
        if let Some(stdin) = stdin {
            stdin
                .write_all(start_line.as_bytes())
                .and_then(|()| stdin.flush())
                .map_err(|e| format!("node {}: {e}", layout.nodes[i]))?;
        }
    }

    // Faults, and the nodes' reports, until every live node is done.
    let d_count = scenario.detectors.len();
    let mut by_monitor: Vec<Vec<u32>> = vec![Vec::new(); n as usize];
    for &(m, t) in &layout.pairs {
        by_monitor[m as usize].push(t);
    }
    let mut changes: BTreeMap<(u32, u32, usize), Vec<(Nanos, Verdict)>> = BTreeMap::new();
    let mut traffic = Traffic::default();
    let mut finished = vec![false; n as usize];
    let mut next_action = 0;
    let end = start + duration;
    let mut resumed_all = false;
    // How late the latest signal went out, for the report.
    let mut worst_late = Duration::ZERO;
    let finish_by = (end + GRACE).min(deadline);
    loop {
        check(deadline)?;
        let now = Instant::now();
        while let Some(&(at, action)) = schedule.actions.get(next_action) {
            if start + Duration::from_nanos(at.as_nanos()) > now {
                break;
            }
            use nix::sys::signal::Signal;
            let late = now.saturating_duration_since(start + Duration::from_nanos(at.as_nanos()));
            worst_late = worst_late.max(late);
            match action {
                Action::Crash { node } => {
                    nodes.signal(node, Signal::SIGKILL);
                    finished[node as usize] = true;
                }
                Action::PauseStart { node, .. } if !finished[node as usize] => {
                    nodes.signal(node, Signal::SIGSTOP);
                }
                Action::PauseEnd { node } if !finished[node as usize] => {
                    nodes.signal(node, Signal::SIGCONT);
                }
                _ => {}
            }
            next_action += 1;
        }
        if now >= end && !resumed_all {
            // A node paused past the end must wake to finish.
            for i in 0..n {
                if !finished[i as usize] {
                    nodes.signal(i, nix::sys::signal::Signal::SIGCONT);
                }
            }
            resumed_all = true;
        }
        if finished.iter().all(|&f| f) {
            break;
        }
        if now >= finish_by {
            let late: Vec<&str> = (0..n as usize)
                .filter(|&i| !finished[i])
                .map(|i| layout.nodes[i].as_str())
                .collect();
            return Err(format!(
                "nodes {} did not finish within {} s of the run's end; every node process was killed",
                late.join(", "),
                GRACE.as_secs()
            ));
        }
        // Wake for the next fault on time, not at the next tick.
        let wait = schedule.actions.get(next_action).map_or(tick, |&(at, _)| {
            (start + Duration::from_nanos(at.as_nanos()))
                .saturating_duration_since(Instant::now())
                .min(tick)
        });
        match rx.recv_timeout(wait) {
            Ok((i, Report::Change(watch, at, verdict))) => {
                let k = watch / d_count.max(1);
                let d = watch % d_count.max(1);
                if let Some(&t) = by_monitor[i as usize].get(k) {
                    changes.entry((i, t, d)).or_default().push((at, verdict));
                }
            }
            Ok((i, Report::Sent(counter, count))) => traffic.handle_count(i, counter, count),
            Ok((i, Report::Done | Report::Closed)) => finished[i as usize] = true,
            Ok((_, Report::Port(..))) | Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        }
    }
    nodes.reap();
    let wall = launched.elapsed().as_secs_f64();

    let pairs = layout
        .pairs
        .iter()
        .map(|&(m, t)| {
            // The monitor's watches: per target in pair order, per detector.
            let k = by_monitor[m as usize]
                .iter()
                .position(|&x| x == t)
                .unwrap_or(0);
            PairOutcome {
                monitor: m,
                target: t,
                must_detect: schedule.must_detect(m, t),
                unjudged: schedule.unjudged(m),
                detectors: (0..d_count)
                    .map(|d| {
                        let config = &scenario.detectors[d].config;
                        let heartbeat = config.heartbeat_interval();
                        let datagrams = traffic.messages(m, t, k * d_count + d, heartbeat);
                        let frames = if config.uses_data_stream() {
                            traffic.stream_heartbeats(m, t)
                        } else {
                            0
                        };
                        DetectorTimeline {
                            changes: changes.remove(&(m, t, d)).unwrap_or_default(),
                            messages: datagrams + frames,
                            // The simulator's accounting per message, so that
                            // the two reports' bytes compare.
                            bytes: datagrams * LIVENESS_MESSAGE_BYTES
                                + frames * STREAM_HEARTBEAT_BYTES,
                        }
                    })
                    .collect(),
            }
        })
        .collect();
    let live = RunOutcome {
        scenario: format!("{} (live)", scenario.name),
        seed: args.seed,
        duration: scenario.duration,
        detectors: scenario.detectors.iter().map(|d| d.name.clone()).collect(),
        nodes: layout.nodes.clone(),
        faults: schedule.records.clone(),
        pairs,
        events: 0,
    };

    let rows = calibrate(&live, &same_seed, &seeds);
    let metrics = vec![
        scenario_metrics(&ScenarioResult {
            scenario: live.scenario.clone(),
            runs: vec![live.clone()],
        }),
        scenario_metrics(&ScenarioResult {
            scenario: format!("{} (simulated, seed {})", scenario.name, args.seed),
            runs: vec![same_seed],
        }),
    ];
    for m in &metrics {
        say!("{}", terminal_table(m));
    }
    say!(
        "calibration: delay in ms from a fault's start to a Failed verdict (the detection of a fault to detect, or a mistake about the node a tolerated fault names), live seed {} vs the simulator on the same seed, and over {} seeds (tolerance: |live p50 - sim p50| <= max({:.0}% of sim p50, {TOLERANCE_MS:.0} ms))",
        args.seed,
        args.sim_seeds.max(1),
        TOLERANCE_SHARE * 100.0
    );
    say!(
        "{:<16} {:>6} {:>9} {:>9} {:>9} {:>9} {:>9} {:>10} {:>10} {:>7} {:>7} {:>9} {:>6}",
        "detector",
        "n/miss",
        "live p50",
        "live mean",
        "sim p50",
        "diff",
        "max |pair|",
        "seeds p50",
        "seeds mean",
        "mist L",
        "mist S",
        "mist S/run",
        "ok"
    );
    for r in &rows {
        say!(
            "{:<16} {:>6} {:>9} {:>9} {:>9} {:>9} {:>9} {:>10} {:>10} {:>7} {:>7} {:>9} {:>6}",
            r.detector,
            format!("{}/{}", r.live_detected, r.live_missed),
            opt(r.live_p50_ms),
            opt(r.live_mean_ms),
            opt(r.sim_p50_ms),
            r.diff_p50_ms
                .map_or_else(|| "-".into(), |v| format!("{v:+.1}")),
            opt(r.max_pair_diff_ms),
            opt(r.seeds_p50_ms),
            opt(r.seeds_mean_ms),
            r.live_mistakes,
            r.sim_mistakes,
            opt(r.seeds_mistakes_per_run),
            match r.within {
                Some(true) => "yes",
                Some(false) => "NO",
                None => "-",
            }
        );
    }
    let descriptions = vec![scenario.description.clone(), scenario.description.clone()];
    write_report(&args.out, &metrics, &descriptions)
        .map_err(|e| format!("{}: {e}", args.out.display()))?;
    let csv = calibration_csv(&rows, args.seed, args.sim_seeds.max(1))?;
    let path = args.out.join("calibration.csv");
    write_file(&path, &csv).map_err(|e| format!("{}: {e}", path.display()))?;
    say!(
        "live run of {:.1} s in {wall:.1} s wall (signals sent at most {:.2} ms late); report: {}; calibration: {}",
        scenario.duration.as_nanos_f64() / 1e9,
        worst_late.as_secs_f64() * 1e3,
        args.out.join(INDEX_HTML).display(),
        path.display()
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_live_scenario_file_is_accepted_and_the_network_built_ins_too() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/scenarios/live");
        let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "toml"))
            .collect();
        files.sort();
        assert!(files.len() >= 4, "{files:?}");
        for file in &files {
            let s = live_scenario(file.to_str().unwrap(), None)
                .unwrap_or_else(|e| panic!("{}: {e}", file.display()));
            assert!(s.duration <= Nanos::from_secs(90), "{}", file.display());
        }
        for builtin in [
            "partition-heal",
            "partition-one-way",
            "slow-link",
            "bursty-loss",
            "pipeline-kill",
            "pipeline-freeze",
            "pipeline-blackhole",
        ] {
            live_scenario(builtin, None).unwrap_or_else(|e| panic!("{builtin}: {e}"));
        }
    }

    #[test]
    fn unsupported_faults_are_refused_naming_the_field() {
        for (builtin, field) in [
            ("cpu-starvation", "faults[0].kind = \"degrade\""),
            ("backpressure-cascade", "faults[0].kind = \"backpressure\""),
            ("clock-step-monitor", "faults[0].kind = \"clock\""),
        ] {
            let e = live_scenario(builtin, None).unwrap_err();
            assert!(e.contains(field), "{builtin}: {e}");
            assert!(!e.contains('\n'), "{builtin}: {e}");
        }
        // A dataflow whose heartbeats ride the data stream, or whose stages
        // announce planned pauses.
        let mut s = resolve("pipeline-kill").unwrap();
        s.network.heartbeat_channel = Channel::Data;
        let e = check_live(&s, "x.toml").unwrap_err();
        assert!(e.starts_with("x.toml: network.heartbeat_channel"), "{e}");
        let mut s = resolve("pipeline-kill").unwrap();
        s.workload.maintenance_frames = true;
        let e = check_live(&s, "x.toml").unwrap_err();
        assert!(e.starts_with("x.toml: workload.maintenance_frames"), "{e}");
    }
}
