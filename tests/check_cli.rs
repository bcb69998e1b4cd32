//! End-to-end runs of `fdlab check`, the CI regression gate.

use std::fs;
use std::path::Path;
use std::process::Output;

mod common;
use common::{fdlab, text};

/// A small suite scenario; `TIMEOUT` is the fixed detector's timeout.
const SUITE_SCENARIO: &str = r#"
description = "a crash for the gate"
duration = "60s"
seeds = 4

[topology]
kind = "mesh"
nodes = 5
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

fn write_suite(dir: &Path, timeout: &str) {
    fs::create_dir_all(dir).unwrap();
    fs::write(
        dir.join("crash.toml"),
        SUITE_SCENARIO.replace("TIMEOUT", timeout),
    )
    .unwrap();
}

fn check(suite: &Path, baseline: &Path, extra: &[&str]) -> Output {
    let mut args = vec![
        "check",
        "--suite",
        suite.to_str().unwrap(),
        "--baseline",
        baseline.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    fdlab(&args)
}

#[test]
fn an_unchanged_tree_passes_with_zero_difference() {
    let dir = tempfile::tempdir().unwrap();
    let (suite, baseline) = (dir.path().join("suite"), dir.path().join("base.toml"));
    write_suite(&suite, "3s");
    let out = check(&suite, &baseline, &["--update"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let written = fs::read_to_string(&baseline).unwrap();
    assert!(written.contains("detector = \"fixed\""), "{written}");
    let junit = dir.path().join("junit.xml");
    let out = check(&suite, &baseline, &["--junit", junit.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("Every figure is identical to the baseline"));
    let xml = fs::read_to_string(&junit).unwrap();
    assert!(xml.contains("tests=\"2\" failures=\"0\""), "{xml}");
    // Another thread count, same figures.
    let out = check(&suite, &baseline, &["--jobs", "1"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
}

#[test]
fn a_slower_detector_default_fails_the_gate_and_names_the_regression() {
    let dir = tempfile::tempdir().unwrap();
    let (suite, baseline) = (dir.path().join("suite"), dir.path().join("base.toml"));
    write_suite(&suite, "3s");
    assert!(check(&suite, &baseline, &["--update"]).status.success());
    // The fixed detector now waits 5 s instead of 3 s.
    write_suite(&suite, "5s");
    let junit = dir.path().join("junit.xml");
    let md = dir.path().join("summary.md");
    let out = check(
        &suite,
        &baseline,
        &[
            "--junit",
            junit.to_str().unwrap(),
            "--markdown",
            md.to_str().unwrap(),
        ],
    );
    assert_eq!(out.status.code(), Some(1));
    let report = text(&out.stdout);
    assert!(report.contains("fdlab check FAILED"), "{report}");
    assert!(
        report
            .lines()
            .any(|l| l.contains("regression") && l.contains("| fixed |") && l.contains("p99")),
        "{report}"
    );
    // phi did not move.
    assert!(!report.lines().any(|l| l.contains("| phi |")), "{report}");
    assert!(text(&out.stderr).contains("regression(s)"));
    assert!(report.contains(&fs::read_to_string(&md).unwrap()));
    let xml = fs::read_to_string(&junit).unwrap();
    assert!(xml.contains("failures=\"1\"") && xml.contains("<failure message=\"p50"));
    // Faster again than the baseline: an improvement passes.
    write_suite(&suite, "2s");
    let out = check(&suite, &baseline, &[]);
    assert!(out.status.success(), "{}", text(&out.stdout));
    assert!(text(&out.stdout).contains("✅"));
}

#[test]
fn a_baseline_stricter_than_reality_fails() {
    let dir = tempfile::tempdir().unwrap();
    let (suite, baseline) = (dir.path().join("suite"), dir.path().join("base.toml"));
    write_suite(&suite, "3s");
    assert!(check(&suite, &baseline, &["--update"]).status.success());
    // Claim phi detected twice as fast.
    let written = fs::read_to_string(&baseline).unwrap();
    let mut lines: Vec<String> = written.lines().map(String::from).collect();
    let phi = lines
        .iter()
        .position(|l| l == "detector = \"phi\"")
        .unwrap();
    let p99 = phi
        + lines[phi..]
            .iter()
            .position(|l| l.starts_with("p99_ms"))
            .unwrap();
    let value: f64 = lines[p99]
        .split('=')
        .nth(1)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    lines[p99] = format!("p99_ms = {}", value / 2.0);
    fs::write(&baseline, lines.join("\n")).unwrap();
    let out = check(&suite, &baseline, &[]);
    assert_eq!(out.status.code(), Some(1));
    let report = text(&out.stdout);
    assert!(
        report
            .lines()
            .any(|l| l.contains("regression") && l.contains("| phi |") && l.contains("+100.00%")),
        "{report}"
    );
}

#[test]
fn missing_or_malformed_baselines_and_suites_are_one_line_errors() {
    let dir = tempfile::tempdir().unwrap();
    let (suite, baseline) = (dir.path().join("suite"), dir.path().join("base.toml"));
    write_suite(&suite, "3s");
    let out = check(&suite, &baseline, &[]);
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(
        err.contains("base.toml") && err.contains("--update"),
        "{err}"
    );
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(!baseline.exists());

    let bad = "version = 1\n[tolerance]\ndetection_time = \"five\"\n";
    fs::write(&baseline, bad).unwrap();
    for extra in [&[][..], &["--update"][..]] {
        let out = check(&suite, &baseline, extra);
        assert_eq!(out.status.code(), Some(1));
        let err = text(&out.stderr);
        assert!(
            err.contains("base.toml") && err.contains("detection_time"),
            "{err}"
        );
        assert_eq!(err.trim().lines().count(), 1, "{err}");
        // Nothing overwritten, not even with --update.
        assert_eq!(fs::read_to_string(&baseline).unwrap(), bad);
    }

    let out = check(&dir.path().join("nowhere"), &baseline, &[]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("--suite"));
    fs::write(suite.join("broken.toml"), "duration = \"soon\"\n").unwrap();
    let out = check(&suite, &baseline, &[]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("broken.toml"));
}

/// The committed baseline matches the committed CI suite.
#[test]
fn the_committed_baseline_names_every_ci_scenario() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let text = fs::read_to_string(root.join("scenarios/ci-baseline.toml")).unwrap();
    let baseline = fdlab_check_names(&text);
    for entry in fs::read_dir(root.join("scenarios/ci")).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_stem().unwrap().to_str().unwrap().to_string();
        assert!(baseline.contains(&name), "{name} is not in the baseline");
    }
}

fn fdlab_check_names(baseline: &str) -> Vec<String> {
    baseline
        .lines()
        .filter_map(|l| l.strip_prefix("scenario = \""))
        .map(|l| l.trim_end_matches('"').to_string())
        .collect()
}
