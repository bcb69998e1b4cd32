//! `fdlab live`: a small mesh or dataflow scenario with one real OS process
//! per node on the loopback interface, faults injected with real signals (and
//! network faults by each node's transport), and a calibration of the
//! simulator against what the processes measured. A membership scenario
//! (judges `swim`, `lifeguard`) runs on real memberlist agents instead
//! ([`memberlist`]).
//!
//! This module is the command: its arguments, the scenario they name, and
//! the order of things. The run's layout and fault schedule are resolved
//! exactly as the simulator resolves them for the same seed; the simulated
//! predictions run first, so that a simulator error surfaces before any
//! process starts; then the processes run and the reports are written.
//!
//! - [`supported`]: the scenarios a live run accepts;
//! - [`parent`]: the node processes, their faults as signals, and what they
//!   report, collected into the run's outcome;
//! - [`processes`]: a run's child processes, reaped whatever ends the run;
//! - [`node`]: one node process (`fdlab live-node`);
//! - [`wire`]: every line the parent and a node exchange;
//! - [`links`]: the network faults of a node's datagrams;
//! - [`dataflow`] and [`data_link`]: a dataflow stage's data plane over TCP;
//! - [`traffic`]: the sent-message counts, attributed as the simulator does;
//! - [`calibration`]: the live run against the simulator (`calibration.csv`);
//! - [`memberlist`]: a membership scenario on the real hashicorp/memberlist.

mod calibration;
mod data_link;
mod dataflow;
mod links;
mod memberlist;
mod node;
mod parent;
mod processes;
mod supported;
mod traffic;
mod wire;

use std::path::PathBuf;
use std::time::Duration;

use crate::out_paths::{refuse_in_dir, scenario_inputs};
use clap::Args;
use fdlab_protocol::Nanos;
use fdlab_reports::atomic::write_file;
use fdlab_reports::metrics::{scenario_metrics, ScenarioResult};
use fdlab_reports::report::{write_report_files, About, CHARTS_DIR, INDEX_HTML};
use fdlab_reports::report_dir::{
    check_out, publish, ReportKind, CALIBRATION_CSV, RUN_REPORT_FILES,
};
use fdlab_reports::tables::terminal_table;
use fdlab_scenarios::resolve;
use fdlab_scenarios::seed_range::seed_range;
use fdlab_sim::engine;
use fdlab_sim::outcome::RunOutcome;
use fdlab_sim::plan::RunPlan;
use fdlab_sim::valid::ValidScenario;

pub use node::{node, NodeArgs};
use supported::{check_actions, check_live};

#[derive(Args)]
pub struct LiveArgs {
    /// A built-in scenario name or a scenario file: a mesh or a dataflow of
    /// at most 16 processes, with crash, pause, partition, slow-link and loss
    /// faults; or a membership scenario with the judges `swim` and
    /// `lifeguard`, run on real memberlist agents (at most 200, with crash,
    /// pause and duty-cycle faults).
    #[arg(value_name = "SCENARIO")]
    scenario: String,
    /// The seed: heartbeat phases, fault times drawn from windows, monitor
    /// rings; the simulated run of this seed is the first prediction.
    #[arg(long, value_name = "S", default_value_t = 1)]
    seed: u64,
    /// Shortens (or lengthens) the scenario, e.g. `70s` for `crash-mesh`,
    /// whose crash is at 60 s. At most 5 minutes.
    #[arg(long, value_name = "DURATION")]
    duration: Option<Nanos>,
    /// Seeds of the simulated prediction (S, S+1, ...), besides seed S itself.
    #[arg(long, value_name = "N", default_value_t = 20)]
    sim_seeds: u32,
    /// Real runs per judge of a membership scenario (seeds S, S+1, ...);
    /// a detector scenario runs once.
    #[arg(long, value_name = "R", default_value_t = 1)]
    runs: u32,
    /// Hard bound on the whole command, real time (default: the scenario's
    /// duration plus 30 s). Every node is killed when it expires.
    #[arg(long, value_name = "DURATION")]
    timeout: Option<Nanos>,
    /// Directory for the reports and `calibration.csv`.
    #[arg(long, value_name = "DIR", default_value = "reports-live")]
    out: PathBuf,
}

/// The scenario as the live run uses it: resolved, `--duration` applied,
/// validated for the simulator and for live.
fn live_scenario(arg: &str, duration: Option<Nanos>) -> Result<ValidScenario, String> {
    let s = with_duration(resolve(arg).map_err(|e| e.to_string())?, duration)?;
    crate::lockrpc_runs::refuse_lockrpc(&s, "live")?;
    check_live(&s, arg)?;
    Ok(s)
}

/// `scenario` with its duration replaced by `duration` (when given), checked
/// again (faults must still fit in it).
pub(crate) fn with_duration(
    scenario: ValidScenario,
    duration: Option<Nanos>,
) -> Result<ValidScenario, String> {
    let Some(d) = duration else {
        return Ok(scenario);
    };
    if d == Nanos::ZERO {
        return Err("--duration: must be positive".into());
    }
    let mut s = scenario.into_inner();
    s.duration = d;
    let name = s.name.clone();
    ValidScenario::new(s).map_err(|e| format!("{name}: {e}"))
}

/// `fdlab live`.
pub fn run(args: &LiveArgs) -> Result<(), String> {
    let resolved = with_duration(
        resolve(&args.scenario).map_err(|e| e.to_string())?,
        args.duration,
    )?;
    if resolved.is_membership() {
        return memberlist::run(args, resolved);
    }
    if args.runs != 1 {
        return Err(format!(
            "--runs {}: a detector scenario runs live once (only a membership scenario runs more)",
            args.runs
        ));
    }
    let scenario = live_scenario(&args.scenario, args.duration)?;
    let sim_seeds = args.sim_seeds.max(1);
    let sim_seeds_option = format!("--sim-seeds {sim_seeds}");
    let seed_list = seed_range(args.seed, u64::from(sim_seeds), "--seed", &sim_seeds_option)?;
    let plan = RunPlan::build(&scenario, args.seed);
    check_actions(plan.schedule(), &scenario.name)?;
    // An output that would replace an input first, then the directory rule.
    let inputs = scenario_inputs(
        std::slice::from_ref(&args.scenario),
        std::slice::from_ref(&scenario),
    );
    let mut written = RUN_REPORT_FILES.to_vec();
    written.push(CALIBRATION_CSV);
    refuse_in_dir("--out", &args.out, &written, &[CHARTS_DIR], &inputs)?;
    check_out(&args.out, ReportKind::Live).map_err(|e| format!("{}: {e}", args.out.display()))?;
    // The predictions first.
    let same_seed = engine::run(&scenario, args.seed, false).0;
    let seeds: Vec<RunOutcome> = seed_list
        .map(|seed| engine::run(&scenario, seed, false).0)
        .collect();

    let duration = Duration::from_nanos(scenario.duration.as_nanos());
    let bound = args
        .timeout
        .map_or(duration + Duration::from_secs(30), |t| {
            Duration::from_nanos(t.as_nanos())
        });
    let measured = parent::run_nodes(&args.scenario, args.seed, &plan, bound)?;
    let live = measured.outcome;

    let rows = calibration::calibrate(&live, &same_seed, &seeds);
    let metrics = vec![
        scenario_metrics(&ScenarioResult {
            scenario: live.scenario.clone(),
            runs: vec![live.clone()],
        }),
        scenario_metrics(&ScenarioResult {
            scenario: format!("{} (simulated, seed {})", scenario.name, args.seed),
            runs: vec![same_seed],
        }),
    ];
    for m in &metrics {
        say!("{}", terminal_table(m));
    }
    calibration::print_table(&rows, args.seed, args.sim_seeds.max(1))?;
    let about = vec![About::of(&scenario), About::of(&scenario)];
    let csv = calibration::calibration_csv(&rows, args.seed, args.sim_seeds.max(1))?;
    // The report and the calibration appear together, whole.
    publish(&args.out, ReportKind::Live, |dir| {
        write_report_files(dir, &metrics, &about, &[])?;
        write_file(&dir.join(CALIBRATION_CSV), &csv)
    })
    .map_err(|e| format!("{}: {e}", args.out.display()))?;
    let path = args.out.join(CALIBRATION_CSV);
    say!(
        "live run of {:.1} s in {:.1} s wall (signals sent at most {:.2} ms late); report: {}; calibration: {}",
        scenario.duration.as_nanos_f64() / 1e9,
        measured.wall,
        measured.worst_late.as_secs_f64() * 1e3,
        args.out.join(INDEX_HTML).display(),
        path.display()
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use fdlab_sim::scenario::Channel;

    use super::*;

    #[test]
    fn every_live_scenario_file_is_accepted_and_the_network_built_ins_too() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/scenarios/live");
        let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "toml"))
            .collect();
        files.sort();
        assert!(files.len() >= 4, "{files:?}");
        for file in &files {
            let s = live_scenario(file.to_str().unwrap(), None)
                .unwrap_or_else(|e| panic!("{}: {e}", file.display()));
            assert!(s.duration <= Nanos::from_secs(90), "{}", file.display());
        }
        for builtin in [
            "partition-heal",
            "partition-one-way",
            "slow-link",
            "bursty-loss",
            "pipeline-kill",
            "pipeline-freeze",
            "pipeline-blackhole",
        ] {
            live_scenario(builtin, None).unwrap_or_else(|e| panic!("{builtin}: {e}"));
        }
    }

    #[test]
    fn unsupported_faults_are_refused_naming_the_field() {
        for (builtin, field) in [
            ("cpu-starvation", "faults[0].kind = \"degrade\""),
            ("backpressure-cascade", "faults[0].kind = \"backpressure\""),
            ("clock-step-monitor", "faults[0].kind = \"clock\""),
        ] {
            let e = live_scenario(builtin, None).unwrap_err();
            assert!(e.contains(field), "{builtin}: {e}");
            assert!(!e.contains('\n'), "{builtin}: {e}");
        }
        // A dataflow whose heartbeats ride the data stream, or whose stages
        // announce planned pauses.
        let mut s = resolve("pipeline-kill").unwrap().into_inner();
        s.network.heartbeat_channel = Channel::Data;
        let e = check_live(&s, "x.toml").unwrap_err();
        assert!(e.starts_with("x.toml: network.heartbeat_channel"), "{e}");
        let mut s = resolve("pipeline-kill").unwrap().into_inner();
        s.workload.maintenance_frames = true;
        let e = check_live(&s, "x.toml").unwrap_err();
        assert!(e.starts_with("x.toml: workload.maintenance_frames"), "{e}");
    }

    #[test]
    fn membership_scenarios_and_table_faults_are_refused_with_one_error() {
        for (name, _) in fdlab_scenarios::builtin() {
            let s = resolve(name).unwrap();
            if !s.is_membership() {
                continue;
            }
            let e = live_scenario(name, None).unwrap_err();
            assert!(
                e.starts_with(&format!(
                    "{name}: [membership]: membership scenarios (orleans)"
                )),
                "{e}"
            );
            assert!(!e.contains('\n'), "{e}");
        }
        // A table fault without [membership] is not a valid scenario; were
        // one handed over, it is refused all the same.
        let mut s = resolve("crash-mesh").unwrap().into_inner();
        s.faults.push(fdlab_sim::scenario::Fault {
            kind: Some(fdlab_sim::scenario::FaultKind::TableOutage),
            at: Some(Nanos::from_secs(10)),
            ..Default::default()
        });
        let e = check_live(&s, "x.toml").unwrap_err();
        assert!(
            e.starts_with("x.toml: faults[1].kind = \"table-outage\" is not supported live"),
            "{e}"
        );
    }
}
