//! `fdlab list`: the built-ins and detector kinds; `--faults`: every other
//! key a scenario file takes.

mod common;
use common::{fdlab, text};

#[test]
fn list_faults_names_every_fault_kind_with_keys_the_validator_takes() {
    let out = fdlab(&["list", "--faults"]);
    assert!(out.status.success());
    let stdout = text(&out.stdout);
    for kind in [
        "crash",
        "restart",
        "pause",
        "partition",
        "slow-link",
        "loss",
        "backpressure",
        "degrade",
        "clock",
    ] {
        let line = stdout
            .lines()
            .find(|l| l.trim_start().starts_with(&format!("{kind} ")))
            .unwrap_or_else(|| panic!("no line for {kind}"));
        assert!(line.contains("node") || line.contains("from"), "{line}");
    }
    for key in [
        "rate_per_node_hour",
        "empirical",
        "monitors_per_node",
        "heartbeat_channel",
        "s0.0",
        "[swarm.<kind>]",
        "placement_split_within",
        "stop_using_dead_within",
        "no_healthy_evicted",
    ] {
        assert!(stdout.contains(key), "{key} missing");
    }
}
