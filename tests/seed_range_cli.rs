//! Seeds S, S+1, ..., S+N-1 never wrap past the largest seed (2^64 - 1) to
//! 0: a range that would is refused, naming the options that made it.

use std::fs;

mod common;
use common::{assert_one_error_line, fdlab, text};

const MAX: &str = "18446744073709551615";

const SCENARIO: &str = r#"
duration = "20s"
seeds = 3

[topology]
kind = "mesh"
nodes = 3

[[detectors]]
name = "fixed"
kind = "fixed-timeout"

[[faults]]
kind = "crash"
node = "n1"
at = "10s"
"#;

#[test]
fn seed_ranges_past_the_largest_seed_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = dir.path().join("s.toml");
    fs::write(&scenario, SCENARIO).unwrap();
    let s = scenario.to_str().unwrap();
    let out_dir = dir.path().join("out");
    let o = out_dir.to_str().unwrap();
    let out = fdlab(&["run", s, "--seed", MAX, "--seeds", "2", "--out", o]);
    assert_one_error_line(&out, &["--seed", MAX, "--seeds 2"]);
    // The scenario's own count.
    let out = fdlab(&["run", s, "--seed", MAX, "--out", o]);
    assert_one_error_line(&out, &["--seed", MAX, "`seeds = 3`"]);
    assert!(!out_dir.exists());
    let out = fdlab(&[
        "sweep",
        s,
        "--vary",
        "fixed.timeout=2s,4s",
        "--seed",
        MAX,
        "--seeds",
        "2",
        "--out",
        o,
    ]);
    assert_one_error_line(&out, &["--seed", MAX, "--seeds 2"]);
    assert!(!out_dir.exists());
    let out = fdlab(&[
        "tune",
        s,
        "--detector",
        "fixed-timeout",
        "--seed",
        MAX,
        "--seeds",
        "2",
    ]);
    assert_one_error_line(&out, &["--seed", MAX, "--seeds 2"]);
    let out = fdlab(&["live", s, "--seed", MAX, "--sim-seeds", "2", "--out", o]);
    assert_one_error_line(&out, &["--seed", MAX, "--sim-seeds 2"]);
    assert!(!out_dir.exists());
    // The last seed itself is fine.
    let out = fdlab(&["run", s, "--seed", MAX, "--seeds", "1", "--out", o]);
    assert!(out.status.success(), "{}", text(&out.stderr));
}
