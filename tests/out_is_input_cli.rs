//! An output never replaces one of the command's own inputs: a command whose
//! output path is (after resolving `..` and symbolic links) one of its input
//! files is refused before it runs, and the input is left as it was.

use std::fs;
use std::path::Path;

mod common;
use common::{assert_one_error_line, fdlab};

const SCENARIO: &str = r#"
duration = "30s"
seeds = 1

[topology]
kind = "mesh"
nodes = 3

[network]
latency = LATENCY

[[detectors]]
name = "fixed"
kind = "fixed-timeout"

[[faults]]
kind = "crash"
node = "n1"
at = "10s"
"#;

const CONSTANT: &str = r#"{ dist = "constant", value = "1ms" }"#;

fn write(path: &Path, text: &str) -> String {
    fs::write(path, text).unwrap();
    path.to_str().unwrap().to_string()
}

/// Runs `args`, expects the one-line refusal naming `needles`, and that
/// `input` still holds `text`.
fn refused(args: &[&str], needles: &[&str], input: &Path, text: &str) {
    let out = fdlab(args);
    assert_one_error_line(&out, needles);
    assert_eq!(fs::read_to_string(input).unwrap(), text, "{args:?}");
}

#[test]
fn trace_out_is_not_its_events_file() {
    let dir = tempfile::tempdir().unwrap();
    let text = "time_ms,event\n0,heartbeat\n5000,query\n";
    let events = write(&dir.path().join("events.csv"), text);
    fs::create_dir(dir.path().join("sub")).unwrap();
    let detour = dir.path().join("sub/../events.csv");
    let link = dir.path().join("link.csv");
    std::os::unix::fs::symlink(&events, &link).unwrap();
    for out in [
        events.clone(),
        detour.display().to_string(),
        link.display().to_string(),
    ] {
        refused(
            &[
                "trace",
                "--detector",
                "kind=fixed-timeout",
                "--out",
                &out,
                &events,
            ],
            &["--out", "same file", "events.csv"],
            Path::new(&events),
            text,
        );
    }
    // Another file is fine.
    let other = dir.path().join("out.csv");
    let out = fdlab(&[
        "trace",
        "--detector",
        "kind=fixed-timeout",
        "--out",
        other.to_str().unwrap(),
        &events,
    ]);
    assert!(out.status.success());
}

#[test]
fn check_reports_are_not_its_baseline() {
    let dir = tempfile::tempdir().unwrap();
    let suite = dir.path().join("suite");
    fs::create_dir(&suite).unwrap();
    write(
        &suite.join("s.toml"),
        &SCENARIO.replace("LATENCY", CONSTANT),
    );
    let baseline = dir.path().join("base.toml");
    let (s, b) = (suite.to_str().unwrap(), baseline.to_str().unwrap());
    assert!(fdlab(&["check", "--suite", s, "--baseline", b, "--update"])
        .status
        .success());
    let text = fs::read_to_string(&baseline).unwrap();
    for option in ["--junit", "--markdown"] {
        refused(
            &["check", "--suite", s, "--baseline", b, option, b],
            &[option, "same file", "--baseline"],
            &baseline,
            &text,
        );
    }
    // Nor a scenario of the suite.
    let scenario = suite.join("s.toml");
    let scenario_text = fs::read_to_string(&scenario).unwrap();
    refused(
        &[
            "check",
            "--suite",
            s,
            "--baseline",
            b,
            "--junit",
            scenario.to_str().unwrap(),
        ],
        &["--junit", "same file", "s.toml"],
        &scenario,
        &scenario_text,
    );
}

#[test]
fn tune_out_is_not_its_trace_or_scenario() {
    let dir = tempfile::tempdir().unwrap();
    let mut rows = String::from("time_ms\n");
    for i in 0..50 {
        rows.push_str(&format!("{}\n", i * 1000));
    }
    let trace = write(&dir.path().join("hb.csv"), &rows);
    refused(
        &[
            "tune",
            "--trace",
            &trace,
            "--detector",
            "fixed-timeout",
            "--out",
            &trace,
        ],
        &["--out", "same file", "hb.csv"],
        Path::new(&trace),
        &rows,
    );
    let text = SCENARIO.replace("LATENCY", CONSTANT);
    let scenario = write(&dir.path().join("s.toml"), &text);
    refused(
        &[
            "tune",
            &scenario,
            "--detector",
            "fixed-timeout",
            "--seeds",
            "1",
            "--out",
            &scenario,
        ],
        &["--out", "same file", "s.toml"],
        Path::new(&scenario),
        &text,
    );
}

#[test]
fn run_replay_and_sweep_do_not_write_over_their_scenario_or_samples() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    // Samples in a file named like one the report writes.
    let samples = "# latency samples, ms\n1\n2\n3\n";
    for (samples_name, command) in [
        ("runs.csv", &["run"][..]),
        ("trace.csv", &["replay", "--seed", "1"][..]),
    ] {
        let samples_path = dir.path().join(samples_name);
        write(&samples_path, samples);
        let latency = format!(r#"{{ dist = "empirical", file = "{samples_name}" }}"#);
        let scenario = write(
            &dir.path().join("s.toml"),
            &SCENARIO.replace("LATENCY", &latency),
        );
        let mut args = command.to_vec();
        args.extend([scenario.as_str(), "--out", d]);
        refused(&args, &["--out", samples_name], &samples_path, samples);
    }
    // A scenario file named like a sweep's result.
    let text = SCENARIO.replace("LATENCY", CONSTANT);
    let scenario = write(&dir.path().join("pareto.csv"), &text);
    refused(
        &[
            "sweep",
            &scenario,
            "--vary",
            "fixed.timeout=2s,4s",
            "--out",
            d,
        ],
        &["--out", "pareto.csv"],
        Path::new(&scenario),
        &text,
    );
}

#[test]
fn live_does_not_write_over_its_scenario() {
    let dir = tempfile::tempdir().unwrap();
    let live = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/live/crash.toml");
    let text = fs::read_to_string(live).unwrap();
    // A scenario file named like the calibration the live run writes.
    let scenario = write(&dir.path().join("calibration.csv"), &text);
    refused(
        &["live", &scenario, "--out", dir.path().to_str().unwrap()],
        &["--out", "calibration.csv"],
        Path::new(&scenario),
        &text,
    );
}
