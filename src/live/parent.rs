//! The parent side of `fdlab live`: it spawns one `fdlab live-node` process
//! per node (`super::node`), hands every node the others' addresses and a
//! common start instant, injects the schedule's crashes and pauses as real
//! signals at their instants (`SIGKILL`; `SIGSTOP` then `SIGCONT`), and
//! collects the verdict changes and sent-message counts the nodes stream
//! (the lines of `super::wire`) into the run's [`RunOutcome`], the shape the
//! simulator gives its own runs, so that the reports and the calibration
//! compare the two.
//!
//! Every node is killed and waited for when the run ends, fails, passes its
//! time bound or is interrupted (Ctrl-C); a node also exits by itself when
//! its standard input closes (the parent is gone).

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::net::SocketAddr;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use fdlab_protocol::{Nanos, Verdict};
use fdlab_sim::engine::{LIVENESS_MESSAGE_BYTES, STREAM_HEARTBEAT_BYTES};
use fdlab_sim::faults::{Action, Schedule};
use fdlab_sim::outcome::{DetectorTimeline, PairOutcome, RunOutcome};
use fdlab_sim::plan::RunPlan;
use fdlab_sim::scenario::Scenario;
use fdlab_sim::topology::Layout;
use nix::sys::signal::Signal;

use super::node::NodeArgs;
use super::processes::{check_bound, on_interrupt, Processes};
use super::traffic::Traffic;
use super::wire::{Report, Start};

/// Time between the nodes' start line and the run's time zero.
const LEAD: Duration = Duration::from_millis(500);
/// Extra time a node gets to report `done` after the run's end.
const GRACE: Duration = Duration::from_secs(5);
/// Longest the parent waits for a node's line before it looks at the clock
/// (its bound, the run's end) again.
const TICK: Duration = Duration::from_millis(50);

/// What the parent heard from a node.
enum Heard {
    Report(Report),
    /// Its standard output closed (the process ended).
    Closed,
}

/// Starts one `fdlab live-node` per node, each with a thread that forwards
/// what it hears from the node to `tx`.
fn spawn(
    scenario_arg: &str,
    seed: u64,
    scenario: &Scenario,
    n: u32,
    tx: &mpsc::Sender<(u32, Heard)>,
) -> Result<Processes, String> {
    let exe = std::env::current_exe().map_err(|e| format!("own executable: {e}"))?;
    let mut nodes = Processes::default();
    for i in 0..n {
        let mut child = Command::new(&exe)
            .args(NodeArgs::command_line(
                scenario_arg,
                seed,
                scenario.duration,
                i,
            ))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| format!("starting node {i}: {e}"))?;
        let stdout = child.stdout.take();
        nodes.push(child);
        let Some(stdout) = stdout else {
            return Err(format!("node {i}: no standard output"));
        };
        let tx = tx.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if let Some(report) = Report::parse(&line) {
                    if tx.send((i, Heard::Report(report))).is_err() {
                        return;
                    }
                }
            }
            let _ = tx.send((i, Heard::Closed));
        });
    }
    Ok(nodes)
}

/// What the node processes of a run measured.
pub struct Measured {
    /// The live run, as the simulator would have reported it.
    pub outcome: RunOutcome,
    /// Real time from the first process's start to the last one's end, s.
    pub wall: f64,
    /// How late the latest signal went out.
    pub worst_late: Duration,
}

/// What the parent collects while the nodes run.
#[derive(Default)]
struct Collected {
    /// Verdict changes per (monitor, target, detector index).
    changes: BTreeMap<(u32, u32, usize), Vec<(Nanos, Verdict)>>,
    traffic: Traffic,
    worst_late: Duration,
}

/// A running set of node processes and what it runs.
struct Parent<'a> {
    scenario: &'a Scenario,
    layout: &'a Layout,
    schedule: &'a Schedule,
    nodes: Processes,
    heard: mpsc::Receiver<(u32, Heard)>,
    bound: Duration,
    deadline: Instant,
}

/// Runs `scenario` (named `scenario_arg` on the command line, for the nodes
/// to resolve) with one process per node of `layout`, faults from
/// `schedule`, within `bound` of real time in all.
pub fn run_nodes(
    scenario_arg: &str,
    seed: u64,
    plan: &RunPlan<'_>,
    bound: Duration,
) -> Result<Measured, String> {
    let scenario: &Scenario = plan.scenario();
    let (layout, schedule) = (plan.layout(), plan.schedule());
    let launched = Instant::now();
    let deadline = launched + bound;
    on_interrupt();

    let n = layout.nodes.len() as u32;
    let (tx, rx) = mpsc::channel();
    let nodes = spawn(scenario_arg, seed, scenario, n, &tx)?;
    drop(tx);
    let pids: Vec<String> = nodes.children.iter().map(|c| c.id().to_string()).collect();
    say!("live: {} node processes, pids {}", n, pids.join(" "));

    let mut parent = Parent {
        scenario,
        layout,
        schedule,
        nodes,
        heard: rx,
        bound,
        deadline,
    };
    let start = parent.start()?;
    let collected = parent.drive(start)?;
    parent.nodes.reap();
    let wall = launched.elapsed().as_secs_f64();
    let worst_late = collected.worst_late;
    Ok(Measured {
        outcome: outcome(scenario, seed, layout, schedule, collected),
        wall,
        worst_late,
    })
}

impl Parent<'_> {
    /// An error once the run is interrupted or past its bound.
    fn check(&self) -> Result<(), String> {
        check_bound(self.deadline, self.bound, "node")
    }

    /// Waits for every node's ports, then sends every node the start line;
    /// returns the run's time zero.
    fn start(&mut self) -> Result<Instant, String> {
        let n = self.layout.nodes.len();
        let mut ports: Vec<Option<u16>> = vec![None; n];
        let mut tcp_ports: Vec<Option<u16>> = vec![None; n];
        while ports.iter().any(Option::is_none) {
            self.check()?;
            match self.heard.recv_timeout(TICK) {
                Ok((i, Heard::Report(Report::Port { udp, tcp }))) => {
                    ports[i as usize] = Some(udp);
                    tcp_ports[i as usize] = tcp;
                }
                Ok((i, Heard::Closed)) => {
                    return Err(format!(
                        "node {} ended before reporting its port",
                        self.layout.nodes[i as usize]
                    ))
                }
                Ok(_) | Err(mpsc::RecvTimeoutError::Timeout) => {}
                Err(mpsc::RecvTimeoutError::Disconnected) => return Err("every node ended".into()),
            }
        }
        let loopback = |ports: &[Option<u16>]| -> Vec<SocketAddr> {
            ports
                .iter()
                .map(|p| SocketAddr::from(([127, 0, 0, 1], p.unwrap_or(0))))
                .collect()
        };
        let start_unix = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_err(|e| format!("system clock: {e}"))?
            + LEAD;
        let start = Instant::now() + LEAD;
        let line = Start {
            unix_ns: start_unix.as_nanos(),
            udp: loopback(&ports),
            tcp: (!self.layout.links.is_empty()).then(|| loopback(&tcp_ports)),
        }
        .line()
            + "\n";
        for (i, stdin) in self.nodes.stdins.iter_mut().enumerate() {
            if let Some(stdin) = stdin {
                stdin
                    .write_all(line.as_bytes())
                    .and_then(|()| stdin.flush())
                    .map_err(|e| format!("node {}: {e}", self.layout.nodes[i]))?;
            }
        }
        Ok(start)
    }

    /// Sends the faults' signals at their instants and collects the nodes'
    /// reports, until every node that was not killed is done.
    fn drive(&mut self, start: Instant) -> Result<Collected, String> {
        let n = self.layout.nodes.len() as u32;
        let d_count = self.scenario.detectors.len();
        let by_monitor = targets_by_monitor(self.layout);
        let mut collected = Collected::default();
        let mut finished = vec![false; n as usize];
        let mut next_action = 0;
        let end = start + Duration::from_nanos(self.scenario.duration.as_nanos());
        let mut resumed_all = false;
        let finish_by = (end + GRACE).min(self.deadline);
        let due = |at: Nanos| start + Duration::from_nanos(at.as_nanos());
        loop {
            self.check()?;
            let now = Instant::now();
            while let Some(&(at, action)) = self.schedule.actions.get(next_action) {
                if due(at) > now {
                    break;
                }
                let late = now.saturating_duration_since(due(at));
                collected.worst_late = collected.worst_late.max(late);
                match action {
                    Action::Crash { node } => {
                        self.nodes.signal(node, Signal::SIGKILL);
                        finished[node as usize] = true;
                    }
                    Action::PauseStart { node, .. } if !finished[node as usize] => {
                        self.nodes.signal(node, Signal::SIGSTOP);
                    }
                    Action::PauseEnd { node } if !finished[node as usize] => {
                        self.nodes.signal(node, Signal::SIGCONT);
                    }
                    _ => {}
                }
                next_action += 1;
            }
            if now >= end && !resumed_all {
                // A node paused past the end must wake to finish.
                for i in 0..n {
                    if !finished[i as usize] {
                        self.nodes.signal(i, Signal::SIGCONT);
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
                    .map(|i| self.layout.nodes[i].as_str())
                    .collect();
                return Err(format!(
                    "nodes {} did not finish within {} s of the run's end; every node process was killed",
                    late.join(", "),
                    GRACE.as_secs()
                ));
            }
            // Wake for the next fault on time, not at the next tick.
            let wait = self
                .schedule
                .actions
                .get(next_action)
                .map_or(TICK, |&(at, _)| {
                    due(at).saturating_duration_since(Instant::now()).min(TICK)
                });
            match self.heard.recv_timeout(wait) {
                Ok((i, Heard::Report(Report::Change(watch, at, verdict)))) => {
                    let k = watch / d_count.max(1);
                    let d = watch % d_count.max(1);
                    if let Some(&t) = by_monitor[i as usize].get(k) {
                        let changes = collected.changes.entry((i, t, d)).or_default();
                        changes.push((at, verdict));
                    }
                }
                Ok((i, Heard::Report(Report::Sent(counter, count)))) => {
                    collected.traffic.handle_count(i, counter, count);
                }
                Ok((i, Heard::Report(Report::Done) | Heard::Closed)) => {
                    finished[i as usize] = true;
                }
                Ok((_, Heard::Report(Report::Port { .. })))
                | Err(mpsc::RecvTimeoutError::Timeout) => {}
                Err(mpsc::RecvTimeoutError::Disconnected) => break,
            }
        }
        Ok(collected)
    }
}

/// Every node's targets in pair order: a monitor's watches are these, per
/// target, per detector (watch `k * detectors + d`).
fn targets_by_monitor(layout: &Layout) -> Vec<Vec<u32>> {
    let mut by_monitor: Vec<Vec<u32>> = vec![Vec::new(); layout.nodes.len()];
    for &(m, t) in &layout.pairs {
        by_monitor[m as usize].push(t);
    }
    by_monitor
}

/// The live run as a [`RunOutcome`]: ground truth from the same schedule as
/// the simulator's, the verdicts and the traffic the nodes reported.
fn outcome(
    scenario: &Scenario,
    seed: u64,
    layout: &Layout,
    schedule: &Schedule,
    collected: Collected,
) -> RunOutcome {
    let Collected {
        mut changes,
        traffic,
        ..
    } = collected;
    let d_count = scenario.detectors.len();
    let by_monitor = targets_by_monitor(layout);
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
    RunOutcome {
        scenario: format!("{} (live)", scenario.name),
        seed,
        duration: scenario.duration,
        detectors: scenario.detectors.iter().map(|d| d.name.clone()).collect(),
        nodes: layout.nodes.clone(),
        layers: layout.dataflow_layers(),
        faults: schedule.records.clone(),
        pairs,
        events: 0,
    }
}
