//! What a live run can do: the scenarios `fdlab live` accepts, refused
//! before any process starts with an error that names the field, and the
//! fault actions the parent knows how to inject.
//!
//! A live run starts one process per node on one machine, so it is small
//! and short; crashes and pauses are signals (a crash cannot restart its
//! node), the network's faults are each node's transport filter
//! (`super::links`), and every process shares the machine's clock (no drift
//! or offsets).

use fdlab_protocol::Nanos;
use fdlab_sim::faults::{Action, Schedule};
use fdlab_sim::scenario::{Channel, FaultKind, Scenario, Topology};

/// Most nodes (processes) a live run may start.
pub const MAX_NODES: u32 = 16;
/// Longest live run (real time).
pub const MAX_DURATION: Nanos = Nanos::from_secs(300);

/// Checks that `scenario` can run live; the error names `name` (the file as
/// given, or the built-in's name) and the field.
pub fn check_live(s: &Scenario, name: &str) -> Result<(), String> {
    // Its table faults go with it: only a membership scenario has them.
    if let Some(m) = &s.membership {
        return Err(format!(
            "{name}: [membership]: membership scenarios ({}) are not supported live: a live run starts heartbeat detectors, with no membership agents and no table service; run it with `fdlab run`",
            m.protocol.name()
        ));
    }
    let dataflow = match &s.topology {
        Topology::Mesh { nodes, .. } if *nodes <= MAX_NODES => false,
        Topology::Mesh { nodes, .. } => {
            return Err(format!(
                "{name}: topology.nodes = {nodes}: a live run starts one process per node, at most {MAX_NODES}"
            ))
        }
        Topology::Dataflow { layers } => {
            let stages: u32 = layers.iter().sum();
            if stages > MAX_NODES {
                return Err(format!(
                    "{name}: topology.layers: {stages} stages; a live run starts one process per stage, at most {MAX_NODES}"
                ));
            }
            true
        }
    };
    if s.duration > MAX_DURATION {
        return Err(format!(
            "{name}: duration = {} is longer than a live run may last ({MAX_DURATION}); shorten it with --duration",
            s.duration
        ));
    }
    for (i, f) in s.faults.iter().enumerate() {
        let kind = f.kind();
        if !supported_live(kind) {
            return Err(format!(
                "{name}: faults[{i}].kind = \"{}\" is not supported live (crash, pause, partition, slow-link and loss are)",
                kind.name()
            ));
        }
        if kind == FaultKind::Crash && f.duration.is_some() {
            return Err(format!(
                "{name}: faults[{i}].duration: a crash with a duration restarts its node, and restarts are not supported live; drop the duration"
            ));
        }
    }
    for (i, f) in s.random_faults.iter().enumerate() {
        if !supported_live(f.kind) || f.kind == FaultKind::Crash {
            return Err(format!(
                "{name}: random_faults[{i}].kind = \"{}\" is not supported live (random crashes restart their node; pause, partition, slow-link and loss are supported)",
                f.kind.name()
            ));
        }
    }
    if !s.clocks.is_empty() {
        return Err(format!(
            "{name}: clocks: per-node clock drift and offsets are not supported live (the processes share the machine's clock)"
        ));
    }
    if dataflow {
        check_live_dataflow(s, name)?;
    }
    Ok(())
}

/// What a live dataflow cannot do.
fn check_live_dataflow(s: &Scenario, name: &str) -> Result<(), String> {
    if s.network.heartbeat_channel == Channel::Data {
        return Err(format!(
            "{name}: network.heartbeat_channel = \"data\" is not supported live (heartbeats go as UDP datagrams); use \"control\""
        ));
    }
    if s.workload.maintenance_frames {
        return Err(format!(
            "{name}: workload.maintenance_frames = true is not supported live (stages send no maintenance frames)"
        ));
    }
    Ok(())
}

/// Fault kinds a live run injects: crashes and pauses by signals, the
/// network's by each node's transport filter (`super::links`).
fn supported_live(kind: FaultKind) -> bool {
    matches!(
        kind,
        FaultKind::Crash
            | FaultKind::Pause
            | FaultKind::Partition
            | FaultKind::SlowLink
            | FaultKind::Loss
    )
}

/// Checks that every action of `schedule` is one the parent injects;
/// `check_live` refused every fault that would need another, so this guards
/// against a schedule that still holds one. The error names `scenario`.
pub fn check_actions(schedule: &Schedule, scenario: &str) -> Result<(), String> {
    for (_, action) in &schedule.actions {
        if !matches!(
            action,
            Action::Crash { .. }
                | Action::PauseStart { .. }
                | Action::PauseEnd { .. }
                | Action::Heal { .. }
        ) {
            return Err(format!(
                "{scenario}: fault action {action:?} is not supported live (crash, pause and the network's faults are)"
            ));
        }
    }
    Ok(())
}
