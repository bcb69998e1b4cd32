//! The sweep tests' scenario: a crash among tolerated pauses, a small and
//! quick sweep, and what a finished sweep directory holds.

use std::fs;
use std::path::Path;

/// A crash among tolerated pauses.
pub const SCENARIO: &str = r#"
description = "a crash and tolerated pauses"
duration = "60s"
seeds = 4

[topology]
kind = "mesh"
nodes = 4
monitors_per_node = 2

[network]
latency = { dist = "lognormal", median = "2ms", sigma = 1.0 }

[[detectors]]
name = "phi"
kind = "phi-accrual"
interval = "200ms"
first_heartbeat_estimate = "200ms"
acceptable_heartbeat_pause = "0s"

[[faults]]
kind = "crash"
node = "n1"
window = ["30s", "40s"]

[[random_faults]]
kind = "pause"
rate_per_node_hour = 120
duration = { dist = "uniform", min = "100ms", max = "600ms" }
"#;

/// What a finished sweep directory holds.
pub const FILES: [&str; 5] = [
    "sweep.toml",
    "units.csv",
    "sweep.csv",
    "pareto.csv",
    "tradeoff.svg",
];

/// Writes the scenario into `dir`; its path.
pub fn setup(dir: &Path) -> String {
    let path = dir.join("s.toml");
    fs::write(&path, SCENARIO).unwrap();
    path.to_str().unwrap().to_string()
}

/// Asserts that the finished sweep directories `a` and `b` hold the same
/// bytes in each of [`FILES`].
pub fn assert_same_files(a: &Path, b: &Path) {
    for f in FILES {
        let (x, y) = (fs::read(a.join(f)).unwrap(), fs::read(b.join(f)).unwrap());
        assert!(
            x == y,
            "{f} differs between {} and {}",
            a.display(),
            b.display()
        );
    }
}
