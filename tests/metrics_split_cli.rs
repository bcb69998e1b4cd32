//! End-to-end checks of the figures a user acts on (`fdlab run FILE`, read
//! back from its CSV files): mistakes split into false Failed and Suspect-only
//! ones, query accuracy over healthy time, recovery lag, and the per-class
//! figures of a dataflow that add up to the blended ones.

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

mod common;
use common::{fdlab, text};

/// A 6-stage pipeline whose processing stage s1.0 is killed at 20 s, as in
/// the built-in `pipeline-kill`, with two detectors that flicker to Suspect
/// about live stages and never declare one Failed:
/// - `decay`, the data-stream detector with its defaults, on a jittery stream;
/// - `fixed-flicker`, heartbeats every 100 ms, Suspect when one is 1 ms late
///   (the network's jitter does that often), Failed only after 3 s of silence.
const FLICKER: &str = r#"
description = "suspicions without false Failed verdicts"
duration = "40s"
seeds = 3

[topology]
kind = "dataflow"
layers = [2, 2, 2]

[workload]
interval = { dist = "uniform", min = "5ms", max = "20ms" }
service_time = { dist = "constant", value = "500us" }

[network]
latency = { dist = "lognormal", median = "1ms", sigma = 0.5 }

[[detectors]]
name = "decay"
kind = "dataflow-decay"

[[detectors]]
name = "fixed-flicker"
kind = "fixed-timeout"
interval = "100ms"
suspect_after = "101ms"
timeout = "3s"

[[faults]]
kind = "crash"
node = "s1.0"
at = "20s"
expect = "detect"
"#;

/// The same pipeline whose source s0.0 is cut off for 5 s, then heals. The
/// 3 s timeout never suspects a live stage here, but trusts s0.0 again only
/// when its next heartbeat arrives after the heal.
const HEAL: &str = r#"
description = "a source cut off, then back"
duration = "40s"
seeds = 3

[topology]
kind = "dataflow"
layers = [2, 2, 2]

[workload]
interval = { dist = "uniform", min = "5ms", max = "20ms" }
service_time = { dist = "constant", value = "500us" }

[network]
latency = { dist = "lognormal", median = "1ms", sigma = 0.5 }

[[detectors]]
name = "fixed-3s"
kind = "fixed-timeout"
interval = "1s"
timeout = "3s"

[[detectors]]
name = "decay"
kind = "dataflow-decay"

[[faults]]
kind = "partition"
shape = "isolate"
node = "s0.0"
mode = "drop"
at = "15s"
duration = "5s"
expect = "detect"
"#;

type Rows = Vec<BTreeMap<String, String>>;

fn read_csv(path: &Path) -> Rows {
    let mut r = csv::Reader::from_path(path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
    let header: Vec<String> = r.headers().unwrap().iter().map(String::from).collect();
    r.records()
        .map(|rec| {
            header
                .iter()
                .cloned()
                .zip(rec.unwrap().iter().map(String::from))
                .collect()
        })
        .collect()
}

fn field<'a>(row: &'a BTreeMap<String, String>, column: &str) -> &'a str {
    row.get(column)
        .unwrap_or_else(|| panic!("no column `{column}` in {row:?}"))
}

fn int(row: &BTreeMap<String, String>, column: &str) -> u64 {
    field(row, column)
        .parse()
        .unwrap_or_else(|_| panic!("`{column}` = `{}` is not a count", field(row, column)))
}

fn float(row: &BTreeMap<String, String>, column: &str) -> f64 {
    field(row, column)
        .parse()
        .unwrap_or_else(|_| panic!("`{column}` = `{}` is not a number", field(row, column)))
}

/// Runs `scenario` once into a temporary directory; the directory (kept
/// while it lives) and the run's output folder in it.
fn run(scenario: &str) -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("scenario.toml");
    fs::write(&file, scenario).unwrap();
    let out = dir.path().join("out");
    let o = fdlab(&[
        "run",
        file.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    (dir, out)
}

fn row<'a>(rows: &'a Rows, detector: &str) -> &'a BTreeMap<String, String> {
    rows.iter()
        .find(|r| field(r, "detector") == detector)
        .unwrap_or_else(|| panic!("no row for {detector}"))
}

#[test]
fn suspect_flicker_is_no_false_failed() {
    let (_dir, out) = run(FLICKER);
    let summary = read_csv(&out.join("summary.csv"));
    for detector in ["decay", "fixed-flicker"] {
        let s = row(&summary, detector);
        let (mistakes, false_failed, suspicions) = (
            int(s, "mistakes"),
            int(s, "false_failed"),
            int(s, "suspicions"),
        );
        assert_eq!(false_failed, 0, "{detector}: {s:?}");
        assert!(suspicions > 0, "{detector} flickers: {s:?}");
        assert_eq!(mistakes, false_failed + suspicions, "{detector}: {s:?}");
        assert_eq!(float(s, "false_failed_per_pair_hour"), 0.0, "{s:?}");
        assert!(float(s, "suspicions_per_pair_hour") > 0.0, "{s:?}");
        assert_eq!(
            field(s, "mistakes_per_pair_hour"),
            field(s, "suspicions_per_pair_hour"),
            "{detector}: every mistake is a suspicion"
        );
        assert_eq!(field(s, "false_failed_mean_ms"), "", "no false Failed");
        assert_ne!(field(s, "suspicion_mean_ms"), "");
    }
}

#[test]
fn healthy_query_accuracy_is_whole_without_mistakes_and_lag_is_its_own_figure() {
    let (_dir, out) = run(HEAL);
    let summary = read_csv(&out.join("summary.csv"));
    let fixed = row(&summary, "fixed-3s");
    assert_eq!(int(fixed, "mistakes"), 0, "{fixed:?}");
    // Its verdict on s0.0 stays Failed for a while after the partition heals:
    // that lowers the share of all must-not-detect time with an Alive
    // verdict, but it is recovery lag, not a wrong suspicion of a healthy peer.
    assert_eq!(field(fixed, "query_accuracy_healthy"), "1.000000000");
    assert!(
        float(fixed, "alive_share_must_not_detect") < 1.0,
        "{fixed:?}"
    );
    // Each of the two monitors of s0.0 recovers once per seed.
    assert_eq!(int(fixed, "recovery_n"), 2 * 3, "{fixed:?}");
    assert_eq!(int(fixed, "recovery_unfinished"), 0, "{fixed:?}");
    let p50 = float(fixed, "recovery_p50_ms");
    let p99 = float(fixed, "recovery_p99_ms");
    // A heartbeat every second: the first one after the heal ends it.
    assert!(0.0 < p50 && p50 <= p99 && p99 <= 1_100.0, "{fixed:?}");
    // A detector that makes mistakes is below 100% over healthy time.
    let decay = row(&summary, "decay");
    assert!(int(decay, "mistakes") > 0, "{decay:?}");
    assert!(float(decay, "query_accuracy_healthy") < 1.0, "{decay:?}");
}

#[test]
fn per_class_figures_add_up_to_the_blended_ones() {
    let (_dir, out) = run(HEAL);
    let summary = read_csv(&out.join("summary.csv"));
    let classes = read_csv(&out.join("classes.csv"));
    for s in &summary {
        let detector = field(s, "detector");
        let rows: Vec<_> = classes
            .iter()
            .filter(|c| field(c, "detector") == detector)
            .collect();
        let names: Vec<&str> = rows.iter().map(|c| field(c, "class")).collect();
        assert_eq!(names, ["source", "forwarded"], "{detector}");
        for column in [
            "pair_runs",
            "detect_windows",
            "failed_n",
            "failed_missed",
            "recovery_n",
            "recovery_unfinished",
            "mistakes",
            "false_failed",
            "suspicions",
            "messages",
        ] {
            let parts: u64 = rows.iter().map(|c| int(c, column)).sum();
            assert_eq!(parts, int(s, column), "{detector}: {column}");
        }
        let hours: f64 = rows
            .iter()
            .map(|c| float(c, "must_not_detect_pair_hours"))
            .sum();
        assert!(
            (hours - float(s, "must_not_detect_pair_hours")).abs() < 2e-6,
            "{detector}"
        );
        // 2 sources x 2 monitors, then 2 x 2 forwarded links, per seed.
        assert_eq!(int(rows[0], "pair_runs"), 4 * 3);
        assert_eq!(int(rows[1], "pair_runs"), 4 * 3);
    }
    // Only the monitors of s0.0, a source, had anything to detect.
    let fixed: Vec<_> = classes
        .iter()
        .filter(|c| field(c, "detector") == "fixed-3s")
        .collect();
    assert_eq!(int(fixed[0], "detect_windows"), 2 * 3);
    assert_eq!(int(fixed[1], "detect_windows"), 0);
    // The reports show the classes of a dataflow below the detailed table.
    let md = fs::read_to_string(out.join("report.md")).unwrap();
    assert!(md.contains("By link class:"), "{md}");
    assert!(md.contains("| decay | source | 12 |"), "{md}");
    let html = fs::read_to_string(out.join("index.html")).unwrap();
    assert!(html.contains("<th>link class</th>"));
}
