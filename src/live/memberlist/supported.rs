//! What the real memberlist can run: a membership scenario whose judges are
//! `swim` and `lifeguard` on a mesh of at most [`MAX_AGENTS`] members, with
//! crashes, pauses and duty-cycle starvation, the faults a signal injects.
//! Anything else is refused before a process starts, in one line that names
//! the field.

use fdlab_protocol::membership::swim::{SwimConfig, Variant};
use fdlab_sim::scenario::{is_swim_run, FaultKind, Scenario, Topology};

use super::super::supported::MAX_DURATION;

/// Most agents (processes) a live membership run starts.
pub const MAX_AGENTS: u32 = 200;

/// Checks that the real memberlist can run `s` (a membership scenario);
/// the error names `name` (the file as given, or the built-in's name).
pub fn check_memberlist(s: &Scenario, name: &str) -> Result<(), String> {
    let refused = |field: String, why: &str| Err(format!("{name}: {field}: {why}"));
    let judges = s.judge_names();
    if let Some(j) = judges.iter().find(|j| !is_swim_run(j)) {
        return refused(
            format!("membership.judges: `{j}`"),
            "an Orleans judge is not supported live; a live membership run starts real memberlist agents, which run `swim` and `lifeguard` only (set `judges = [\"swim\", \"lifeguard\"]`)",
        );
    }
    if s.placement.is_some() {
        return refused(
            "[placement]".into(),
            "key placement is not supported live (the agents run no clients)",
        );
    }
    match &s.topology {
        Topology::Mesh { nodes, .. } if *nodes <= MAX_AGENTS => {}
        Topology::Mesh { nodes, .. } => {
            return refused(
                format!("topology.nodes = {nodes}"),
                &format!(
                    "a live membership run starts one process per member, at most {MAX_AGENTS}"
                ),
            )
        }
        Topology::Dataflow { .. } => {
            return refused(
                "topology.kind = \"dataflow\"".into(),
                "a live membership run needs a mesh",
            )
        }
    }
    if s.duration > MAX_DURATION {
        return refused(
            format!("duration = {}", s.duration),
            &format!(
                "longer than a live run may last ({MAX_DURATION}); shorten it with --duration"
            ),
        );
    }
    if s.network.loss > 0.0 {
        return refused(
            format!("network.loss = {}", s.network.loss),
            "the real agents' datagrams cross the kernel's loopback, which loses none; remove it",
        );
    }
    for (i, f) in s.faults.iter().enumerate() {
        let kind = f.kind();
        match kind {
            FaultKind::Crash if f.duration.is_some() => {
                return refused(
                    format!("faults[{i}].duration"),
                    "a crash with a duration restarts its member, and restarts are not supported live; drop the duration",
                )
            }
            FaultKind::Crash | FaultKind::Pause => {}
            FaultKind::Degrade if f.stopped.is_some() && f.every.is_some() => {}
            FaultKind::Degrade => {
                return refused(
                    format!("faults[{i}]"),
                    "a degrade with a processing time or a slowdown cannot be injected into a real process; only a duty cycle (`stopped`, `every`) can, as SIGSTOP/SIGCONT",
                )
            }
            other => {
                return refused(
                    format!("faults[{i}].kind = \"{}\"", other.name()),
                    "not supported by the real memberlist (crash, pause and duty-cycle degrade are: they are signals; the network's and the table's faults are not)",
                )
            }
        }
    }
    for (i, f) in s.random_faults.iter().enumerate() {
        if f.kind != FaultKind::Pause {
            return refused(
                format!("random_faults[{i}].kind = \"{}\"", f.kind.name()),
                "not supported by the real memberlist (random pauses are)",
            );
        }
    }
    if !s.clocks.is_empty() {
        return refused(
            "clocks".into(),
            "per-member clock drift and offsets are not supported live (the processes share the machine's clock)",
        );
    }
    let setup = s.membership.as_ref();
    if setup.is_some_and(|m| m.restart_after.is_some()) {
        return refused(
            "membership.restart_after".into(),
            "restarts are not supported live",
        );
    }
    let swim = setup.map(|m| &m.swim);
    if swim.is_some_and(|c| c.udp_receive_buffer != SwimConfig::default().udp_receive_buffer) {
        return refused(
            "membership.swim.udp_receive_buffer".into(),
            "memberlist 0.2.2 asks the kernel for 2 MiB (udpRecvBufSize, net_transport.go:24) and has no setting for it; remove the key",
        );
    }
    Ok(())
}

/// What the agents of `variant` run, as fdlab's keys: memberlist as it is
/// (it has no switch for Lifeguard: all three mechanisms on, as fdlab's
/// `lifeguard`), with `swim` turning two of them off as the Lifeguard paper
/// did, `AwarenessMaxMultiplier = 1` (the local health score stays 0) and
/// `SuspicionMaxTimeoutMult = 1` (the suspicion timeout is its minimum).
/// The buddy system and the nacks have no setting: the real `swim` keeps
/// them, unlike fdlab's `swim` judge (the SWIM paper's protocol), so fdlab's
/// side of a live comparison runs this configuration, not that judge.
pub fn as_run(config: &SwimConfig, variant: Variant) -> SwimConfig {
    let memberlist = SwimConfig::preset(Variant::Lifeguard);
    let mut c = SwimConfig {
        local_health_multiplier: memberlist.local_health_multiplier,
        dogpile: memberlist.dogpile,
        buddy_system: memberlist.buddy_system,
        ..config.clone()
    };
    if variant == Variant::Swim {
        c.awareness_max_multiplier = 1;
        c.suspicion_max_timeout_mult = 1;
    }
    c
}

/// The agent's command-line options for `config` (as [`as_run`] gives
/// it): every `[membership.swim]` key as memberlist's `Config` field of the
/// same meaning (memberlist v0.2.2 `config.go`). The three switches have
/// no field (memberlist runs all three), nor has `udp_receive_buffer`
/// (refused unless it is memberlist's 2 MiB).
pub fn agent_options(config: &SwimConfig) -> Vec<String> {
    debug_assert!(config.local_health_multiplier && config.dogpile && config.buddy_system);
    let ns = |d: fdlab_protocol::Nanos| format!("{}ns", d.as_nanos());
    let options = [
        ("-probe-interval", ns(config.probe_interval)),
        ("-probe-timeout", ns(config.probe_timeout)),
        ("-indirect-checks", config.indirect_checks.to_string()),
        ("-suspicion-mult", config.suspicion_mult.to_string()),
        (
            "-suspicion-max-timeout-mult",
            config.suspicion_max_timeout_mult.to_string(),
        ),
        ("-gossip-interval", ns(config.gossip_interval)),
        ("-gossip-nodes", config.gossip_nodes.to_string()),
        (
            "-gossip-to-the-dead-time",
            ns(config.gossip_to_the_dead_time),
        ),
        ("-retransmit-mult", config.retransmit_mult.to_string()),
        (
            "-awareness-max-multiplier",
            config.awareness_max_multiplier.to_string(),
        ),
        ("-udp-buffer-size", config.udp_buffer_size.to_string()),
        ("-push-pull-interval", ns(config.push_pull_interval)),
        ("-disable-tcp-pings", config.disable_tcp_pings.to_string()),
    ];
    options
        .into_iter()
        .map(|(flag, value)| format!("{flag}={value}"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use fdlab_scenarios::resolve;

    #[test]
    fn the_memberlist_scenarios_are_accepted_and_what_cannot_run_is_refused() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/scenarios/memberlist");
        let mut files: Vec<_> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        files.sort();
        assert!(files.len() >= 7, "{files:?}");
        for f in &files {
            let s = resolve(f.to_str().unwrap()).unwrap();
            check_memberlist(&s, "x").unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        }
        let base = || resolve(files[0].to_str().unwrap()).unwrap().into_inner();
        let refused = |s: Scenario, field: &str| {
            let e = check_memberlist(&s, "x.toml").unwrap_err();
            assert!(e.starts_with(&format!("x.toml: {field}")), "{e}");
            assert!(!e.contains('\n'), "{e}");
        };
        let mut s = base();
        s.membership.as_mut().unwrap().judges = Some(vec!["classic".into()]);
        refused(s, "membership.judges: `classic`");
        let mut s = base();
        s.network.loss = 0.01;
        refused(s, "network.loss");
        let mut s = base();
        s.faults[0].duration = Some(fdlab_protocol::Nanos::from_secs(1));
        refused(s, "faults[0].duration");
        let mut s = base();
        s.faults[0].kind = Some(FaultKind::Loss);
        refused(s, "faults[0].kind = \"loss\"");
        let mut s = base();
        s.faults[0].kind = Some(FaultKind::Degrade);
        refused(s, "faults[0]: a degrade");
        let mut s = base();
        s.topology = Topology::Mesh {
            nodes: MAX_AGENTS + 1,
            monitors_per_node: Default::default(),
        };
        refused(s, "topology.nodes = 201");
        let mut s = base();
        s.membership.as_mut().unwrap().swim.udp_receive_buffer = 4096;
        refused(s, "membership.swim.udp_receive_buffer");
        let mut s = base();
        s.membership.as_mut().unwrap().restart_after = Some(fdlab_protocol::Nanos::from_secs(1));
        refused(s, "membership.restart_after");
    }

    #[test]
    fn every_key_maps_and_swim_turns_two_mechanisms_off() {
        let c = SwimConfig::default();
        let swim = agent_options(&as_run(&c, Variant::Swim));
        let lg = agent_options(&as_run(&c, Variant::Lifeguard));
        // fdlab's swim judge has Lifeguard off; the real swim is memberlist.
        let paper = SwimConfig::preset(Variant::Swim);
        assert_eq!(as_run(&paper, Variant::Lifeguard), SwimConfig::default());
        assert!(
            swim.contains(&"-awareness-max-multiplier=1".into()),
            "{swim:?}"
        );
        assert!(
            swim.contains(&"-suspicion-max-timeout-mult=1".into()),
            "{swim:?}"
        );
        assert!(lg.contains(&"-awareness-max-multiplier=8".into()), "{lg:?}");
        assert!(
            lg.contains(&"-suspicion-max-timeout-mult=6".into()),
            "{lg:?}"
        );
        assert!(
            lg.contains(&"-probe-interval=1000000000ns".into()),
            "{lg:?}"
        );
        // One option per memberlist field: the keys less the three switches
        // (set by the variant) and udp_receive_buffer (no field).
        let keys = toml::Value::try_from(&c).unwrap();
        let keys = keys.as_table().unwrap().len();
        assert_eq!(lg.len(), keys - 4, "{lg:?}");
    }
}
