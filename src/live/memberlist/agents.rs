//! One run of real memberlist agents: one `fdlab-memberlist-agent` process
//! per member on 127.0.0.1 (`agents/memberlist/main.go`), joined into one
//! cluster, then the scenario's faults as real signals at the instants the
//! simulator's schedule gives them (crash = `SIGKILL`; pause, and each stop
//! of a duty cycle, = `SIGSTOP` then `SIGCONT`), while the agents' CSV rows
//! are collected.
//!
//! No agent outlives the run: every one is killed and reaped when the run
//! ends, fails, passes its bound or is interrupted (Ctrl-C), and each agent
//! asks the kernel first thing for `PR_SET_PDEATHSIG = SIGKILL` (and exits
//! if fdlab is already gone), so that it is killed when fdlab dies, even
//! by `SIGKILL` and even while it is stopped.

use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use fdlab_protocol::Nanos;
use fdlab_sim::faults::{Action, Schedule};
use nix::sys::signal::Signal;

use super::super::processes::{check_bound, Processes};
use super::rows::{Event, Row};

/// Time between the cluster's convergence and the run's time zero, before
/// the run's own offset (see [`run`]).
const LEAD: Duration = Duration::from_millis(500);
/// Longest the parent waits for a row before it looks at the clock again.
const TICK: Duration = Duration::from_millis(20);
/// Time every agent gets to start and report its port.
const START_BOUND: Duration = Duration::from_secs(30);
/// Time the cluster gets to converge (every agent knows every member):
/// this, plus [`CONVERGE_PER_MEMBER`] per member.
const CONVERGE_BOUND: Duration = Duration::from_secs(20);
const CONVERGE_PER_MEMBER: Duration = Duration::from_millis(200);
/// How long a member may miss others before it is asked to join them.
const REJOIN_AFTER: Duration = Duration::from_secs(3);

/// What one run of the agents produced.
pub struct RealRun {
    /// Every row after the agents converged, in arrival order per agent;
    /// times from the run's time zero.
    pub rows: Vec<Row>,
    /// Real time the cluster took to converge.
    pub converged_in: Duration,
    /// How late the latest signal went out.
    pub worst_late: Duration,
}

/// What a reader thread hands the parent.
enum Heard {
    Line(String),
    Closed,
}

/// Starts one agent per name of `names` (from this, the main thread: the
/// kernel's parent-death signal follows the thread that forked).
fn spawn(
    agent: &Path,
    names: &[String],
    config: &[String],
    tx: &mpsc::Sender<(u32, Heard)>,
) -> Result<Processes, String> {
    let mut agents = Processes::default();
    let parent = nix::unistd::getpid();
    for (i, name) in names.iter().enumerate() {
        let mut command = Command::new(agent);
        command
            .arg("-name")
            .arg(name)
            .arg(format!("-parent={parent}"))
            .args(config)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
        let mut child = command
            .spawn()
            .map_err(|e| format!("starting agent {name} ({}): {e}", agent.display()))?;
        let stdout = child.stdout.take();
        agents.push(child);
        let Some(stdout) = stdout else {
            return Err(format!("agent {name}: no standard output"));
        };
        let tx = tx.clone();
        let i = i as u32;
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send((i, Heard::Line(line))).is_err() {
                    return;
                }
            }
            let _ = tx.send((i, Heard::Closed));
        });
    }
    Ok(agents)
}

/// A run in progress.
struct Run<'a> {
    names: &'a [String],
    numbers: BTreeMap<&'a str, u32>,
    agents: Processes,
    heard: mpsc::Receiver<(u32, Heard)>,
    deadline: Instant,
    bound: Duration,
    /// Rows so far, with times in Unix nanoseconds.
    rows: Vec<(i128, Row)>,
    /// Agents that were killed on purpose (a crash fault).
    killed: BTreeSet<u32>,
}

/// Runs `names.len()` agents of `agent` with `config`, the faults of
/// `schedule` for `duration`, within `bound` of real time from the first
/// start. Time zero is [`LEAD`] plus `offset` after the cluster converged
/// (`offset`: [`fdlab_sim::membership::live_zero_offset`], so that the
/// faults fall anywhere in the agents' probe interval).
pub fn run(
    agent: &Path,
    names: &[String],
    config: &[String],
    schedule: &Schedule,
    duration: Nanos,
    bound: Duration,
    offset: Duration,
) -> Result<RealRun, String> {
    let launched = Instant::now();
    let (tx, rx) = mpsc::channel();
    let agents = spawn(agent, names, config, &tx)?;
    drop(tx);
    let mut run = Run {
        names,
        numbers: names
            .iter()
            .enumerate()
            .map(|(i, n)| (n.as_str(), i as u32))
            .collect(),
        agents,
        heard: rx,
        deadline: launched + bound,
        bound,
        rows: Vec::new(),
        killed: BTreeSet::new(),
    };
    let ports = run.ports()?;
    let converge_started = Instant::now();
    run.converge(&ports)?;
    let converged_in = converge_started.elapsed();
    let lead = LEAD + offset;
    let zero_unix = unix_now()? + lead.as_nanos() as i128;
    let zero = Instant::now() + lead;
    let worst_late = run.faults(schedule, zero, duration)?;
    run.agents.reap();
    // What the readers still hold.
    while let Ok((i, heard)) = run.heard.recv_timeout(TICK) {
        if let Heard::Line(line) = heard {
            run.take(i, &line)?;
        }
    }
    let rows = run
        .rows
        .into_iter()
        .filter_map(|(unix, mut row)| {
            let at = unix - zero_unix;
            (at >= 0).then(|| {
                row.at = Nanos(at as u64);
                row
            })
        })
        .collect();
    Ok(RealRun {
        rows,
        converged_in,
        worst_late,
    })
}

fn unix_now() -> Result<i128, String> {
    let d = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_err(|e| format!("system clock: {e}"))?;
    Ok(d.as_nanos() as i128)
}

impl Run<'_> {
    /// An error once the run is interrupted or past its bound.
    fn check(&self) -> Result<(), String> {
        check_bound(self.deadline, self.bound, "agent")
    }

    /// Waits up to `wait` for one row and takes it.
    fn hear(&mut self, wait: Duration) -> Result<(), String> {
        match self.heard.recv_timeout(wait) {
            Ok((i, Heard::Line(line))) => self.take(i, &line),
            Ok((i, Heard::Closed)) if !self.killed.contains(&i) => Err(format!(
                "agent {} ended by itself (its error, if any, is above)",
                self.names[i as usize]
            )),
            Ok((_, Heard::Closed)) | Err(mpsc::RecvTimeoutError::Timeout) => Ok(()),
            Err(mpsc::RecvTimeoutError::Disconnected) => Err("every agent ended".into()),
        }
    }

    fn take(&mut self, agent: u32, line: &str) -> Result<(), String> {
        let observer = &self.names[agent as usize];
        let (unix, row) = Row::parse(line, observer, &self.numbers)
            .map_err(|e| format!("agent {observer}: {e}: {line:?}"))?;
        self.rows.push((unix, row));
        Ok(())
    }

    /// Every agent's port, once each reported it.
    fn ports(&mut self) -> Result<Vec<u16>, String> {
        let until = (Instant::now() + START_BOUND).min(self.deadline);
        loop {
            let mut ports = vec![None; self.names.len()];
            for (_, row) in &self.rows {
                if let Event::Ready { port } = row.event {
                    ports[row.observer as usize] = Some(port);
                }
            }
            if ports.iter().all(Option::is_some) {
                return Ok(ports.into_iter().flatten().collect());
            }
            if Instant::now() >= until {
                let missing = ports.iter().filter(|p| p.is_none()).count();
                return Err(format!(
                    "{missing} agents did not start within {} s",
                    START_BOUND.as_secs()
                ));
            }
            self.check()?;
            self.hear(TICK)?;
        }
    }

    /// Asks agent `i` to join the members at `ports` (a push/pull with each:
    /// both learn each other's whole list).
    fn join(&mut self, i: usize, ports: &[u16]) -> Result<(), String> {
        let addrs: Vec<String> = ports.iter().map(|p| format!("127.0.0.1:{p}")).collect();
        let line = format!("join {}\n", addrs.join(","));
        if let Some(Some(stdin)) = self.agents.stdins.get_mut(i) {
            stdin
                .write_all(line.as_bytes())
                .and_then(|()| stdin.flush())
                .map_err(|e| format!("agent {}: {e}", self.names[i]))?;
        }
        Ok(())
    }

    /// Joins every agent to the first, then waits until every agent has
    /// seen every member join. An alive message can be lost to a full
    /// broadcast queue when a hundred members join at once (memberlist
    /// then waits for a push/pull, 90 s apart at 100 members): an agent
    /// still missing members after [`REJOIN_AFTER`] joins them itself.
    fn converge(&mut self, ports: &[u16]) -> Result<(), String> {
        let n = self.names.len();
        for i in 1..n {
            self.join(i, &ports[..1])?;
        }
        let bound = CONVERGE_BOUND + CONVERGE_PER_MEMBER * n as u32;
        let until = (Instant::now() + bound).min(self.deadline);
        let mut rejoin = Instant::now() + REJOIN_AFTER;
        loop {
            let mut known = vec![BTreeSet::new(); n];
            for (_, row) in &self.rows {
                if let (Event::Join, Some(s)) = (row.event, row.subject) {
                    known[row.observer as usize].insert(s);
                }
            }
            let behind: Vec<usize> = (0..n).filter(|&i| known[i].len() < n).collect();
            if behind.is_empty() {
                return Ok(());
            }
            if Instant::now() >= until {
                return Err(format!(
                    "the cluster of {n} agents did not converge within {:.0} s ({} agents do not know every member)",
                    bound.as_secs_f64(),
                    behind.len()
                ));
            }
            if Instant::now() >= rejoin {
                for &i in &behind {
                    let missing: Vec<u16> = (0..n as u32)
                        .filter(|m| !known[i].contains(m))
                        .map(|m| ports[m as usize])
                        .collect();
                    self.join(i, &missing)?;
                }
                rejoin = Instant::now() + REJOIN_AFTER;
            }
            self.check()?;
            self.hear(TICK)?;
        }
    }

    /// Sends the schedule's signals at their instants from `zero`, and
    /// collects rows until `duration` has passed; returns the latest
    /// signal's lateness.
    fn faults(
        &mut self,
        schedule: &Schedule,
        zero: Instant,
        duration: Nanos,
    ) -> Result<Duration, String> {
        let due = |at: Nanos| zero + Duration::from_nanos(at.as_nanos());
        let end = due(duration);
        let mut worst_late = Duration::ZERO;
        let mut next = 0;
        loop {
            self.check()?;
            let now = Instant::now();
            while let Some(&(at, action)) = schedule.actions.get(next) {
                if at >= duration || due(at) > now {
                    break;
                }
                worst_late = worst_late.max(now.saturating_duration_since(due(at)));
                match action {
                    Action::Crash { node } => {
                        self.killed.insert(node);
                        self.agents.signal(node, Signal::SIGKILL);
                    }
                    Action::PauseStart { node, .. } => self.agents.signal(node, Signal::SIGSTOP),
                    Action::PauseEnd { node } => self.agents.signal(node, Signal::SIGCONT),
                    // A duty cycle's bounds: its stops are the pauses above.
                    Action::DegradeStart { .. } | Action::DegradeEnd { .. } => {}
                    other => {
                        return Err(format!(
                            "fault action {other:?} is not supported by the real memberlist"
                        ))
                    }
                }
                next += 1;
            }
            if now >= end {
                return Ok(worst_late);
            }
            let next_due = schedule
                .actions
                .get(next)
                .map_or(end, |&(at, _)| due(at).min(end));
            self.hear(next_due.saturating_duration_since(now).min(TICK))?;
        }
    }
}
