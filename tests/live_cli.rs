//! `fdlab live` end to end: real node processes on loopback, real signals.
//! Each test checks that no node process is left behind.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

mod common;
use common::{fdlab, text};

const CRASH: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/scenarios/live/crash.toml");
const PARTITION: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/scenarios/live/partition.toml");
/// The monitors of the node `CRASH` kills.
const KILLED_PAIRS: u64 = 4;
const PIPELINE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/scenarios/live/pipeline.toml");
const PIPELINE_PARTITION: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/scenarios/live/pipeline-partition.toml"
);

/// The node pids from `live: N node processes, pids P1 P2 ...`.
fn pids(stdout: &str) -> Vec<u32> {
    let line = stdout
        .lines()
        .find(|l| l.starts_with("live: "))
        .unwrap_or_else(|| panic!("no pid line in {stdout}"));
    let (_, list) = line.split_once("pids ").expect("pids listed");
    list.split_whitespace()
        .map(|p| p.parse().expect("a pid"))
        .collect()
}

/// Whether process `pid` exists and is not a zombie.
fn running(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        // `pid (comm) S ...`: the state follows the last `)`.
        Ok(stat) => stat
            .rsplit_once(')')
            .is_none_or(|(_, rest)| !rest.trim_start().starts_with('Z')),
        Err(_) => false,
    }
}

/// Every pid is gone, allowing `within` for an orphan to notice its parent's
/// end. With `reaped`, not even a zombie may remain (our own children);
/// orphans are reaped by whoever adopts them, which a container may not do.
fn assert_gone(pids: &[u32], within: Duration, reaped: bool) {
    assert!(!pids.is_empty());
    let started = Instant::now();
    loop {
        let left: Vec<u32> = pids
            .iter()
            .copied()
            .filter(|&p| {
                if reaped {
                    Path::new(&format!("/proc/{p}")).exists()
                } else {
                    running(p)
                }
            })
            .collect();
        if left.is_empty() {
            return;
        }
        if started.elapsed() > within {
            panic!("node processes left behind: {left:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The live report counts the liveness messages the nodes sent: per
/// detector, within 1 % of what the simulated run of the same seed sent, plus
/// `killed_pairs` messages: a killed node's last report period (100 ms) is
/// missing live, at most one message of each stream it sent.
fn assert_traffic_matches_the_simulation(out: &Path, killed_pairs: u64) {
    let mut rows = csv::Reader::from_path(out.join("summary.csv")).unwrap();
    let headers = rows.headers().unwrap().clone();
    let col = |name: &str| headers.iter().position(|h| h == name).unwrap();
    let mut live = Vec::new();
    let mut sim = Vec::new();
    for row in rows.records() {
        let row = row.unwrap();
        let messages: u64 = row[col("messages")].parse().unwrap();
        let entry = (row[col("detector")].to_owned(), messages);
        if row[col("scenario")].ends_with("(live)") {
            live.push(entry);
        } else {
            sim.push(entry);
        }
    }
    assert_eq!(live.len(), sim.len());
    assert!(
        sim.iter().any(|&(_, m)| m > 0),
        "no traffic at all: {sim:?}"
    );
    for ((detector, l), (sim_detector, s)) in live.iter().zip(&sim) {
        assert_eq!(detector, sim_detector);
        let slack = *s / 100 + killed_pairs;
        assert!(
            l.abs_diff(*s) <= slack,
            "{detector}: live {l} messages, simulated {s}"
        );
    }
}

#[test]
fn a_live_crash_is_detected_within_tolerance_of_the_simulation() {
    let dir = tempfile::tempdir().unwrap();
    let started = Instant::now();
    let (out, o) = live(dir.path(), CRASH, &["--sim-seeds", "5"]);
    let wall = started.elapsed();
    let stdout = text(&o.stdout);
    assert!(o.status.success(), "{stdout}\n{}", text(&o.stderr));
    assert_gone(&pids(&stdout), Duration::ZERO, true);
    assert!(wall < Duration::from_secs(35), "took {wall:?}");
    for file in [
        "index.html",
        "summary.csv",
        "detections.csv",
        "calibration.csv",
    ] {
        assert!(out.join(file).is_file(), "{file} missing");
    }
    // Every monitor of the crashed node (4) detects it, live and simulated.
    assert_calibrated(&out, 4);
    assert_traffic_matches_the_simulation(&out, KILLED_PAIRS);
}

/// Checks `calibration.csv`: the three heartbeat detectors each made
/// `detections` detections and no mistake live, with a live median detection
/// time within the stated tolerance of the simulated one: max(10 % of the
/// simulated median, 200 ms).
fn assert_calibrated(out: &Path, detections: usize) {
    let rows = calibration(out);
    for row in &rows {
        let detector = &row["detector"];
        assert_eq!(row["live_detected"], detections.to_string(), "{row:?}");
        assert_eq!(row["live_missed"], "0", "{row:?}");
        assert_eq!(row["live_mistakes"], "0", "{row:?}");
        assert_within_tolerance(row);
        assert_eq!(row["within_tolerance"], "true", "{detector}");
    }
    assert_eq!(detectors(&rows), ["fixed-3s", "phi-akka", "phi-100ms"]);
}

/// The rows of `calibration.csv` in `out`, each by column name.
fn calibration(out: &Path) -> Vec<BTreeMap<String, String>> {
    let mut reader = csv::Reader::from_path(out.join("calibration.csv")).unwrap();
    let headers = reader.headers().unwrap().clone();
    reader
        .records()
        .map(|row| {
            let row = row.unwrap();
            headers
                .iter()
                .zip(row.iter())
                .map(|(h, v)| (h.to_owned(), v.to_owned()))
                .collect()
        })
        .collect()
}

/// The detectors of calibration rows, in order.
fn detectors(rows: &[BTreeMap<String, String>]) -> Vec<&str> {
    rows.iter().map(|r| r["detector"].as_str()).collect()
}

/// The stated tolerance: a live median detection time within max(10 % of
/// the simulated median, 200 ms) of the simulated one (same seed).
fn assert_within_tolerance(row: &BTreeMap<String, String>) {
    let detector = &row["detector"];
    let live: f64 = row["live_p50_ms"].parse().unwrap();
    let sim: f64 = row["sim_same_seed_p50_ms"].parse().unwrap();
    let tolerance = (sim * 0.10).max(200.0);
    assert!(
        (live - sim).abs() <= tolerance,
        "{detector}: live p50 {live} ms vs simulated {sim} ms"
    );
}

/// Runs `fdlab live SCENARIO FLAGS... --out DIR/live` and returns that
/// output directory and what the command printed.
fn live(dir: &Path, scenario: &str, flags: &[&str]) -> (PathBuf, std::process::Output) {
    let out = dir.join("live");
    let out_arg = out.to_str().unwrap();
    let mut args = vec!["live", scenario];
    args.extend_from_slice(flags);
    args.extend_from_slice(&["--out", out_arg]);
    let o = fdlab(&args);
    (out, o)
}

/// Runs a six-stage live pipeline scenario (`--sim-seeds 3`), checks that it
/// succeeded and left none of its processes behind, and returns its output
/// directory (inside the returned temporary directory).
fn run_live_pipeline(scenario: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let (out, o) = live(dir.path(), scenario, &["--sim-seeds", "3"]);
    let stdout = text(&o.stdout);
    assert!(o.status.success(), "{stdout}\n{}", text(&o.stderr));
    let pids = pids(&stdout);
    assert_eq!(pids.len(), 6);
    assert_gone(&pids, Duration::ZERO, true);
    (dir, out)
}

#[test]
fn unsupported_scenarios_are_refused_before_any_process_starts() {
    for (scenario, needle) in [
        (
            "backpressure-cascade",
            "faults[0].kind = \"backpressure\" is not supported live",
        ),
        (
            "cpu-starvation",
            "faults[0].kind = \"degrade\" is not supported live",
        ),
        (
            "clock-drift-monitor",
            "faults[0].kind = \"clock\" is not supported live",
        ),
    ] {
        let o = fdlab(&["live", scenario, "--out", "/nonexistent/never-written"]);
        let stderr = text(&o.stderr);
        assert!(!o.status.success(), "{scenario}");
        assert!(stderr.contains(needle), "{scenario}: {stderr}");
        assert!(!text(&o.stdout).contains("pids"), "{scenario}");
    }
    let o = fdlab(&["live", "crash-mesh", "--duration", "6m"]);
    assert!(text(&o.stderr).contains("longer than a live run"));
    // A crash with a duration restarts its node: refused, naming the field.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("restart.toml");
    let crash = std::fs::read_to_string(CRASH).unwrap();
    std::fs::write(&file, format!("{crash}duration = \"2s\"\n")).unwrap();
    let o = fdlab(&["live", file.to_str().unwrap()]);
    let stderr = text(&o.stderr);
    assert!(!o.status.success());
    assert!(
        stderr.contains(file.to_str().unwrap())
            && stderr.contains("faults[0].duration")
            && stderr.contains("restarts are not supported live"),
        "{stderr}"
    );
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
}

#[test]
fn a_live_partition_is_detected_within_tolerance_of_the_simulation() {
    let dir = tempfile::tempdir().unwrap();
    let started = Instant::now();
    let (out, o) = live(dir.path(), PARTITION, &["--sim-seeds", "3"]);
    let wall = started.elapsed();
    let stdout = text(&o.stdout);
    assert!(o.status.success(), "{stdout}\n{}", text(&o.stderr));
    assert_gone(&pids(&stdout), Duration::ZERO, true);
    assert!(wall < Duration::from_secs(40), "took {wall:?}");
    // n1's 4 monitors lose it (one way: n1 still hears them); n3's 4
    // monitors lose it, and n3 loses its 4 targets: 12 detections, which the
    // transports' filters alone cause (no process stops).
    assert_calibrated(&out, 12);
    assert_traffic_matches_the_simulation(&out, 0);
}

#[test]
fn the_time_bound_kills_every_node() {
    let dir = tempfile::tempdir().unwrap();
    let (out, o) = live(dir.path(), CRASH, &["--timeout", "3s"]);
    assert!(!o.status.success());
    assert!(text(&o.stderr).contains("bound"), "{}", text(&o.stderr));
    assert_gone(&pids(&text(&o.stdout)), Duration::ZERO, true);
    // No partial reports.
    assert!(!out.join("calibration.csv").exists());
}

#[test]
fn a_live_pipeline_stage_crash_is_detected_from_its_data_stream_within_tolerance() {
    let (_dir, out) = run_live_pipeline(PIPELINE);
    let rows = calibration(&out);
    for row in &rows {
        // s1.0's two downstream stages detect its crash: the decay detector
        // from the frames that stop arriving over TCP, the others from
        // heartbeats; decay and phi-100ms also declare the paused s1.1
        // Failed (a mistake, timed from the pause's start).
        let expected = if row["detector"] == "fixed-3s" {
            "2"
        } else {
            "4"
        };
        assert_eq!(row["live_detected"], expected, "{row:?}");
        assert_eq!(row["live_missed"], "0", "{row:?}");
        assert_within_tolerance(row);
    }
    assert_eq!(detectors(&rows), ["decay", "fixed-3s", "phi-100ms"]);
    // Heartbeats: killed, s1.0 leaves its two streams to its monitors
    // unreported for up to 100 ms (2); resumed at 5 s sharp, s1.1 sends its
    // two 1 s streams' last heartbeats at 12 s sharp, the run's end, which the
    // simulator counts and live, a fraction of a millisecond later, does not
    // send (2). The decay detector's traffic is stream heartbeats: they fill
    // the silences of the links whose window is full (to the paused s1.1,
    // then to the killed s1.0), about 15 in all, each silence's count within
    // one of the simulation's depending on where its 100 ms periods fall.
    // Without the window, TCP would absorb every frame and live would send
    // none. Each detector is allowed 6 (4 silences, 4 heartbeats).
    assert_traffic_matches_the_simulation(&out, 6);
}

/// A partition on a dataflow: the cut stage's TCP data links stop carrying
/// frames (held in the senders' buffers) and its datagrams are dropped.
#[test]
fn a_live_pipeline_partition_is_detected_within_tolerance() {
    let (_dir, out) = run_live_pipeline(PIPELINE_PARTITION);
    let rows = calibration(&out);
    for row in &rows {
        // s1.0's two downstream stages lose it (decay: its frames stop), and
        // it loses its two upstreams: 4 detections by every detector.
        assert_eq!(row["live_detected"], "4", "{row:?}");
        assert_eq!(row["live_missed"], "0", "{row:?}");
        assert_eq!(row["within_tolerance"], "true", "{row:?}");
    }
    assert_eq!(detectors(&rows), ["decay", "fixed-3s", "phi-100ms"]);
}

/// Background loss with no window edges: each heartbeat's fate is the draw
/// the simulator makes for it (the same stream, the same order), so the live
/// run must lose the same heartbeats. A 250 ms timeout on 100 ms heartbeats
/// turns two or more losses in a row into a mistake with 50 ms of margin
/// either way, so real-time jitter cannot add or remove one.
const LOSS: &str = r#"
description = "30% loss on every link, 100 ms heartbeats, 250 ms timeout"
duration = "8s"

[topology]
kind = "mesh"
nodes = 4
monitors_per_node = "all"

[network]
latency = { dist = "constant", value = "100us" }
loss = 0.3

[[detectors]]
name = "fixed-250ms"
kind = "fixed-timeout"
interval = "100ms"
timeout = "250ms"
"#;

#[test]
fn live_losses_are_the_simulations_losses_for_the_same_seed() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("loss.toml");
    std::fs::write(&file, LOSS).unwrap();
    let (out, o) = live(dir.path(), file.to_str().unwrap(), &["--sim-seeds", "1"]);
    let stdout = text(&o.stdout);
    assert!(o.status.success(), "{stdout}\n{}", text(&o.stderr));
    assert_gone(&pids(&stdout), Duration::ZERO, true);
    // Mistakes per (scenario, monitor, target).
    let mut rows = csv::Reader::from_path(out.join("mistakes.csv")).unwrap();
    let headers = rows.headers().unwrap().clone();
    let col = |name: &str| headers.iter().position(|h| h == name).unwrap();
    let mut live = std::collections::BTreeMap::new();
    let mut sim = std::collections::BTreeMap::new();
    for row in rows.records() {
        let row = row.unwrap();
        let side = if row[col("scenario")].ends_with("(live)") {
            &mut live
        } else {
            &mut sim
        };
        *side
            .entry((
                row[col("monitor")].to_owned(),
                row[col("target")].to_owned(),
            ))
            .or_insert(0) += 1;
    }
    let total: u32 = sim.values().sum();
    assert!(total >= 20, "30% loss makes mistakes: {sim:?}");
    assert_eq!(live, sim, "mistakes per pair, live vs simulated");
    assert_traffic_matches_the_simulation(&out, 0);
}

/// Starts `fdlab live` on the crash scenario and returns it with its node pids.
fn start_live(out: &Path) -> (std::process::Child, Vec<u32>) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_fdlab"))
        .args(["live", CRASH, "--out", out.to_str().unwrap()])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let mut first = String::new();
    BufReader::new(stdout).read_line(&mut first).unwrap();
    let pids = pids(&first);
    std::thread::sleep(Duration::from_secs(1));
    (child, pids)
}

#[test]
fn ctrl_c_kills_every_node() {
    let dir = tempfile::tempdir().unwrap();
    let (mut child, pids) = start_live(&dir.path().join("live"));
    // SIGINT to the parent alone (a terminal would signal the whole group).
    let status = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let exit = child.wait().unwrap();
    // Handled, not the default action (which would end the parent alone):
    // it says so and exits with its error status.
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    assert!(
        stderr.contains("interrupted; every node process was killed"),
        "{exit}: {stderr}"
    );
    assert_eq!(exit.code(), Some(1), "{stderr}");
    assert_gone(&pids, Duration::ZERO, true);
}

#[test]
fn nodes_end_when_the_parent_is_killed() {
    let dir = tempfile::tempdir().unwrap();
    let (mut child, pids) = start_live(&dir.path().join("live"));
    child.kill().unwrap();
    child.wait().unwrap();
    // Orphans notice their closed standard input and exit; init reaps them.
    assert_gone(&pids, Duration::from_secs(5), false);
}
