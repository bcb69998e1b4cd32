//! A closed standard output (`fdlab ... | head -1`, `| true`) never cuts a
//! command's work short and never turns into success: the files are written
//! as with an open one, and the exit status is the command's own (the gate's
//! verdict for `fdlab check`, 2 for a `fdlab tune` with no setting).

use std::fs;
use std::path::Path;

mod common;
use common::{fdlab, fdlab_with_closed_stdout, text};

/// A small crash scenario; `TIMEOUT` is the fixed detector's timeout.
const SCENARIO: &str = r#"
duration = "60s"
seeds = 2

[topology]
kind = "mesh"
nodes = 4
monitors_per_node = 2

[network]
latency = { dist = "lognormal", median = "1ms", sigma = 0.5 }

[[detectors]]
name = "fixed"
kind = "fixed-timeout"
timeout = "TIMEOUT"

[[detectors]]
name = "phi"
kind = "phi-accrual"

[[faults]]
kind = "crash"
node = "n1"
window = ["20s", "30s"]
"#;

fn write_scenario(path: &Path, timeout: &str) {
    fs::write(path, SCENARIO.replace("TIMEOUT", timeout)).unwrap();
}

#[test]
fn run_writes_the_same_report_with_its_output_closed() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = dir.path().join("s.toml");
    write_scenario(&scenario, "3s");
    let (open, closed) = (dir.path().join("open"), dir.path().join("closed"));
    let s = scenario.to_str().unwrap();
    let out = fdlab(&["run", s, "--out", open.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out = fdlab_with_closed_stdout(&["run", s, "--out", closed.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    for file in ["index.html", "summary.csv", "runs.csv", "report.md"] {
        let written = fs::read(closed.join(file))
            .unwrap_or_else(|e| panic!("{file} not written with stdout closed: {e}"));
        assert_eq!(written, fs::read(open.join(file)).unwrap(), "{file}");
    }
}

#[test]
fn check_exits_with_its_verdict_and_writes_junit_with_its_output_closed() {
    let dir = tempfile::tempdir().unwrap();
    let suite = dir.path().join("suite");
    fs::create_dir(&suite).unwrap();
    let baseline = dir.path().join("base.toml");
    let junit = dir.path().join("junit.xml");
    write_scenario(&suite.join("crash.toml"), "3s");
    let args = |extra: &[&str]| -> Vec<String> {
        let mut v: Vec<String> = [
            "check",
            "--suite",
            suite.to_str().unwrap(),
            "--baseline",
            baseline.to_str().unwrap(),
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        v.extend(extra.iter().map(|s| s.to_string()));
        v
    };
    let update = args(&["--update"]);
    let update: Vec<&str> = update.iter().map(String::as_str).collect();
    // Even the baseline is written with the output closed.
    let out = fdlab_with_closed_stdout(&update);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(baseline.exists(), "no baseline written");
    // A regression: the fixed detector waits 5 s instead of 3 s.
    write_scenario(&suite.join("crash.toml"), "5s");
    let gate = args(&["--junit", junit.to_str().unwrap()]);
    let gate: Vec<&str> = gate.iter().map(String::as_str).collect();
    let out = fdlab_with_closed_stdout(&gate);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("regression"),
        "{}",
        text(&out.stderr)
    );
    let xml = fs::read_to_string(&junit).expect("the JUnit file is written");
    assert!(xml.contains("failures=\"1\""), "{xml}");
}

#[test]
fn sweep_writes_its_results_with_its_output_closed() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = dir.path().join("s.toml");
    write_scenario(&scenario, "3s");
    let out_dir = dir.path().join("sweep");
    let out = fdlab_with_closed_stdout(&[
        "sweep",
        scenario.to_str().unwrap(),
        "--vary",
        "fixed.timeout=2s,4s",
        "--out",
        out_dir.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    for file in ["sweep.toml", "units.csv", "sweep.csv", "pareto.csv"] {
        assert!(out_dir.join(file).exists(), "{file} not written");
    }
    assert!(!out_dir.join("journal.csv").exists());
}

#[test]
fn tune_keeps_its_exit_status_and_writes_its_table_with_its_output_closed() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("hb.csv");
    // Heartbeats every second with one 5 s gap: no phi setting without a
    // pause allowance rides it out with zero mistakes.
    let mut rows = String::from("time_ms\n");
    let mut t = 0;
    for i in 0..200 {
        t += if i == 100 { 5000 } else { 1000 };
        rows.push_str(&format!("{t}\n"));
    }
    fs::write(&trace, rows).unwrap();
    let table = dir.path().join("points.csv");
    let out = fdlab_with_closed_stdout(&[
        "tune",
        "--trace",
        trace.to_str().unwrap(),
        "--detector",
        "phi-accrual",
        "--set",
        "acceptable_heartbeat_pause=0s",
        "--cuts",
        "50",
        "--out",
        table.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(table.exists());
}

/// A standard output that fails otherwise than by a closed pipe (a full disk
/// behind `> file`): the work is still done, then the failure is reported
/// and the status is 1, since the printed output is incomplete.
#[test]
fn a_full_standard_output_is_reported_after_the_work() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = dir.path().join("s.toml");
    write_scenario(&scenario, "3s");
    let out_dir = dir.path().join("out");
    let full = fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_fdlab"))
        .args([
            "run",
            scenario.to_str().unwrap(),
            "--out",
            out_dir.to_str().unwrap(),
        ])
        .stdout(full)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(err.starts_with("fdlab: error: standard output:"), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(out_dir.join("index.html").exists());
}
