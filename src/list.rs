//! `fdlab list`: what can be put in a scenario.

use clap::Args;
use fdlab_sim::scenario::FaultKind;

use fdlab_protocol::decay::DataflowDecayConfig;
use fdlab_protocol::fixed::FixedTimeoutConfig;
use fdlab_protocol::phi::PhiAccrualConfig;
use fdlab_protocol::probe::AdaptiveProbeConfig;
use fdlab_protocol::DetectorConfig;

#[derive(Args)]
pub struct ListArgs {
    /// The fault kinds with their keys, the distributions with their
    /// parameters, and the other tables of a scenario file, instead
    #[arg(long)]
    faults: bool,
}

pub fn run(args: &ListArgs) -> Result<(), String> {
    if args.faults {
        return faults();
    }
    say!("Built-in scenarios (`fdlab run NAME`; the files are under scenarios/builtin/; membership scenarios: docs/membership.md):\n");
    let width = fdlab_scenarios::builtin()
        .iter()
        .map(|(name, _)| name.len())
        .max()
        .unwrap_or(0);
    for (name, _) in fdlab_scenarios::builtin() {
        let scenario = fdlab_scenarios::resolve(name).map_err(|e| e.to_string())?;
        let kind = match &scenario.membership {
            Some(m) => format!("membership ({}): ", m.protocol.name()),
            None => String::new(),
        };
        say!(
            "  {name:<width$} {:>3} seeds  {kind}{}",
            scenario.seeds,
            scenario.description.trim()
        );
    }
    say!();
    say!("Detector kinds (keys of a [[detectors]] table or of `fdlab trace --detector`, with defaults):\n");
    let kinds = [
        (
            DetectorConfig::FixedTimeout(FixedTimeoutConfig::default()),
            "heartbeat deadline; optional: suspect_after",
        ),
        (
            DetectorConfig::PhiAccrual(PhiAccrualConfig::default()),
            "Hayashibara et al. / Akka; optional: suspect_threshold; distribution: normal | normal-exact | exponential; history: akka | every-interval",
        ),
        (
            DetectorConfig::AdaptiveProbe(AdaptiveProbeConfig::default()),
            "Orleans probes with a learned timeout; min_timeout defaults to initial/2, max_timeout to 4 x initial",
        ),
        (
            DetectorConfig::DataflowDecay(DataflowDecayConfig::default()),
            "health score carried by the data stream; grace: none | one-interval; decay_per: tick | missed-frame; ewma_samples: every-interval | skip-backlog",
        ),
    ];
    for (config, note) in kinds {
        let text = toml::to_string(&config).map_err(|e| e.to_string())?;
        say!("# {}: {note}\n{text}", config.kind());
    }
    say!(
        "# two-stage: a fast detector raises Suspect, a slow one confirms Failed\n\
         kind = \"two-stage\"\nfast = {{ kind = \"dataflow-decay\" }}\nconfirm = {{ kind = \"phi-accrual\" }}"
    );
    Ok(())
}

/// `fdlab list --faults`: every fault kind, distribution and table key that
/// is not a detector's (docs/scenarios.md has the long form).
fn faults() -> Result<(), String> {
    say!(
        "Nodes are named n0, n1, ... in a mesh and s<layer>.<index> (s0.0, s1.2) in a dataflow.\n"
    );
    say!("Fault kinds ([[faults]]: kind, at = \"30s\" or window = [\"10s\", \"20s\"], expect = \"detect\" | \"tolerate\",");
    say!("and the keys below; expect defaults to detect for crash and tolerate for the rest):\n");
    for kind in FaultKind::ALL {
        say!("  {:<13} {}", kind.name(), kind.keys().join(", "));
        say!("  {:<13} {}", "", kind.summary());
    }
    say!();
    say!("[[random_faults]]: kind (crash, pause, slow-link, loss, backpressure, degrade), rate_per_node_hour,");
    say!("  duration (a distribution; default 1s), extra_latency, probability, slowdown, capacity, expect\n");
    say!("[[clocks]]: node, drift (-0.5 to 0.5; 1e-4 = 100 ppm fast), offset (\"+250ms\", \"-1s\")\n");
    say!("Distributions (latency, data_latency, workload.interval, workload.service_time, on, off, duration, table_latency):");
    for (dist, keys) in [
        ("constant", "value"),
        ("uniform", "min, max"),
        ("normal", "mean, std_dev (truncated at 0)"),
        ("lognormal", "median, sigma (0 to 10)"),
        ("pareto", "scale, shape (the tail index)"),
        (
            "empirical",
            "file (a CSV of samples in ms, next to the scenario file)",
        ),
    ] {
        say!("  {{ dist = \"{dist}\", {keys} }}");
    }
    say!();
    say!("[topology]: kind = \"mesh\" (nodes, monitors_per_node = N | \"all\") or \"dataflow\" (layers = [2, 2, 2])");
    say!("[network]: latency, data_latency, loss, heartbeat_channel = \"control\" | \"data\", send_buffer, receive_queue");
    say!("[workload]: interval, service_time, on, off, idle_frame_interval, maintenance_frames");
    say!("[membership]: protocol = \"orleans\", judges = [\"classic\", DETECTOR...], restart_after, table_latency (a distribution)");
    say!("[membership.orleans]: Orleans' ClusterMembershipOptions in snake case, with Orleans' defaults (docs/membership.md):");
    let orleans = toml::to_string(&fdlab_protocol::membership::OrleansConfig::default())
        .map_err(|e| e.to_string())?;
    let mut line = String::new();
    for key in orleans.lines() {
        if !line.is_empty() && line.len() + key.len() > 100 {
            say!("  {line},");
            line.clear();
        }
        if !line.is_empty() {
            line.push_str(", ");
        }
        line.push_str(key);
    }
    say!("  {line}");
    say!("  version = \"10.2\" (the release, default) | \"main\"; main only: min_probe_timeout, max_probe_timeout, connection_liveness_check; 10.2 only: indirect_probe_retry");
    say!("[swarm] (fdlab swarm: what each run draws; docs/swarm.md): kinds, faults = [fewest, most], start = [earliest, latest], detect_from;");
    say!("  [swarm.<kind>]: rate (the share of runs enabling it, default 0.5), duration = [least, most],");
    say!(
        "  and per kind extra_latency, probability, slowdown, capacity or offset = [least, most];"
    );
    say!("  partition: shapes (of isolate, halves, bridge); loss: bursty (a share), burst and gap = [least, most]");
    say!("[properties] (fdlab swarm: what every run must satisfy): detect_within, no_false_failed, recover_within,");
    say!("  no_live_declared_dead, converge_within, placement_split_within; lock RPCs: stop_using_dead_within,");
    say!("  no_healthy_evicted (a duration, true, or false for off)");
    say!("Top level: description, duration, seeds, name");
    Ok(())
}
