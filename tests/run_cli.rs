//! End-to-end runs of `fdlab run`, `fdlab replay` and `fdlab list`.

use std::fs;
use std::path::Path;
use std::process::{Command, Output};

mod common;
use common::{fdlab, text};

const SMALL: &str = r#"
description = "a small crash scenario for tests"
duration = "90s"
seeds = 3

[topology]
kind = "mesh"
nodes = 4

[network]
latency = { dist = "uniform", min = "1ms", max = "3ms" }
loss = 0.01

[[detectors]]
name = "fixed-3s"
kind = "fixed-timeout"

[[detectors]]
name = "phi"
kind = "phi-accrual"
interval = "200ms"

[[faults]]
kind = "crash"
node = "n1"
window = ["40s", "50s"]
"#;

#[test]
fn run_writes_tables_and_the_same_bytes_for_any_jobs() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = dir.path().join("small.toml");
    fs::write(&scenario, SMALL).unwrap();
    let out1 = dir.path().join("one");
    let out2 = dir.path().join("two");
    let a = fdlab(&[
        "run",
        scenario.to_str().unwrap(),
        "--mistakes",
        "--seeds",
        "4",
        "--jobs",
        "1",
        "--out",
        out1.to_str().unwrap(),
    ]);
    assert!(a.status.success(), "{}", text(&a.stderr));
    let stdout = text(&a.stdout);
    assert!(stdout.contains("small (4 runs)"), "{stdout}");
    assert!(stdout.contains("fixed-3s") && stdout.contains("phi"));
    assert!(stdout.contains("simulated events"), "{stdout}");
    let b = fdlab(&[
        "run",
        scenario.to_str().unwrap(),
        "--mistakes",
        "--seeds",
        "4",
        "--jobs",
        "2",
        "--out",
        out2.to_str().unwrap(),
    ]);
    assert!(b.status.success(), "{}", text(&b.stderr));
    for file in ["summary.csv", "runs.csv", "detections.csv", "mistakes.csv"] {
        let one = fs::read(out1.join(file)).unwrap();
        let two = fs::read(out2.join(file)).unwrap();
        assert!(!one.is_empty(), "{file}");
        assert_eq!(one, two, "{file} differs between --jobs 1 and 2");
    }
    // 4 runs x 2 detectors in runs.csv, plus the header.
    let runs = fs::read_to_string(out1.join("runs.csv")).unwrap();
    assert_eq!(runs.lines().count(), 1 + 4 * 2);
    // Every monitor of n1 (3 of them) detects its crash in every run.
    let detections = fs::read_to_string(out1.join("detections.csv")).unwrap();
    assert_eq!(detections.lines().count(), 1 + 4 * 3 * 2);
    assert!(!detections.contains("missed"));
}

fn digest_of(out: &Output) -> String {
    let stdout = text(&out.stdout);
    stdout
        .lines()
        .find_map(|l| l.strip_prefix("trace digest (SHA-256 of trace.csv): "))
        .unwrap_or_else(|| panic!("no digest in {stdout}"))
        .to_string()
}

#[test]
fn replay_gives_the_same_trace_and_digest_in_another_process() {
    let dir = tempfile::tempdir().unwrap();
    let (d1, d2, d3) = (
        dir.path().join("a"),
        dir.path().join("b"),
        dir.path().join("c"),
    );
    let replay = |seed: &str, out: &Path| {
        fdlab(&[
            "replay",
            "pipeline-freeze",
            "--seed",
            seed,
            "--out",
            out.to_str().unwrap(),
        ])
    };
    let a = replay("7", &d1);
    let b = replay("7", &d2);
    let c = replay("8", &d3);
    assert!(a.status.success(), "{}", text(&a.stderr));
    assert_eq!(digest_of(&a), digest_of(&b));
    assert_ne!(digest_of(&a), digest_of(&c), "another seed, another run");
    let trace = fs::read(d1.join("trace.csv")).unwrap();
    assert_eq!(trace, fs::read(d2.join("trace.csv")).unwrap());
    let trace = String::from_utf8(trace).unwrap();
    assert!(trace.starts_with("time_ms,event,node,peer,detector,detail\n"));
    for needle in [",fault,s1.0,", ",verdict,", ",deliver,"] {
        assert!(trace.contains(needle), "{needle}");
    }
}

fn bad_scenario(content: &str, needles: &[&str]) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad.toml");
    fs::write(&path, content).unwrap();
    let out_dir = dir.path().join("reports");
    let out = fdlab(&[
        "run",
        path.to_str().unwrap(),
        "--out",
        out_dir.to_str().unwrap(),
    ]);
    let err = text(&out.stderr);
    assert!(!out.status.success(), "accepted: {content}");
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "one line: {err}");
    for n in needles {
        assert!(err.contains(n), "`{n}` missing from: {err}");
    }
    assert!(
        !out_dir.exists(),
        "output directory created for a bad scenario"
    );
}

#[test]
fn bad_scenarios_get_one_line_and_no_output() {
    bad_scenario(
        &SMALL.replace("nodes = 4", "nodes = = 4"),
        &["bad.toml:8", "topology.nodes"],
    );
    bad_scenario(
        &SMALL.replace("nodes = 4", "nodes = 4\ncolour = 3"),
        &["bad.toml:9", "colour"],
    );
    bad_scenario(
        &SMALL.replace("duration = \"90s\"", "duration = \"-90s\""),
        &["bad.toml:3", "duration", "negative"],
    );
    bad_scenario(
        &SMALL.replace("node = \"n1\"", "node = \"n9\""),
        &["bad.toml", "faults[0].node", "n9"],
    );
    bad_scenario(
        &SMALL.replace("loss = 0.01", "loss = 1.5"),
        &["bad.toml:12", "network.loss"],
    );
    bad_scenario(
        &SMALL.replace("kind = \"phi-accrual\"", "kind = \"phi\""),
        &["bad.toml", "kind"],
    );
}

#[test]
fn unknown_scenario_names_are_errors() {
    let out = fdlab(&["run", "no-such-scenario"]);
    assert!(!out.status.success());
    assert!(text(&out.stderr).contains("no-such-scenario"));
    let out = fdlab(&["run", "crash-mesh", "--jobs", "0"]);
    assert!(!out.status.success());
    assert!(text(&out.stderr).contains("--jobs"));
}

#[test]
fn list_shows_the_builtin_suite_and_the_kinds() {
    let out = fdlab(&["list"]);
    assert!(out.status.success());
    let stdout = text(&out.stdout);
    for name in [
        "crash-mesh",
        "pipeline-kill",
        "pipeline-freeze",
        "pipeline-blackhole",
        "phi-accrual",
        "dataflow-decay",
    ] {
        assert!(stdout.contains(name), "{name}");
    }
}

#[test]
fn a_closed_standard_output_ends_quietly() {
    for args in [
        &["list"][..],
        &["run", "crash-mesh", "--seeds", "1", "--out"][..],
    ] {
        let dir = tempfile::tempdir().unwrap();
        let mut args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
        if args.last().map(String::as_str) == Some("--out") {
            args.push(dir.path().display().to_string());
        }
        // A pipe whose reader is gone: every write fails with EPIPE.
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let out = Command::new(env!("CARGO_BIN_EXE_fdlab"))
            .args(&args)
            .stdout(writer)
            .output()
            .unwrap();
        let err = text(&out.stderr);
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        assert!(out.status.success(), "{args:?}: {err}");
    }
}

/// The bytes of a replay are pinned, not only repeatable: a change of any
/// random draw, of the order of events or of a platform's float functions
/// (the simulator uses only the pure-Rust `libm`, so every machine gives
/// these bytes) shows up here. Bursty loss draws exponential burst lengths
/// and log-normal latencies. An intended change of the simulation updates
/// the digest, and says so in its commit.
#[test]
fn a_replay_digest_is_the_same_on_every_machine() {
    let dir = tempfile::tempdir().unwrap();
    let out = fdlab(&[
        "replay",
        "bursty-loss",
        "--seed",
        "3",
        "--out",
        dir.path().to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout)
            .contains("1be4d65aba259d1719317bb9fb105b4cd0aefecfd1a3cd956937143de7ba80b1"),
        "{}",
        text(&out.stdout)
    );
}
