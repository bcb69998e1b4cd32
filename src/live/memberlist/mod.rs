//! `fdlab live` on a membership scenario: the real hashicorp/memberlist
//! beside fdlab's model of it (SPEC §12, issue 34).
//!
//! For each real run (seeds S, S+1, ...) and each judge (`swim`,
//! `lifeguard`), N memberlist agents run on 127.0.0.1 with the faults the
//! simulator's schedule gives that seed, as signals; fdlab's simulated runs
//! of the same scenario and seeds (and more) run first. The two are then
//! compared figure by figure.
//!
//! - [`supported`]: what the real library can run, and the agent's options;
//! - [`agent_build`]: the agent, built from Debian's Go and memberlist;
//! - [`agents`]: one run of the agent processes and their signals;
//! - [`rows`]: what an agent writes;
//! - [`figures`]: the figures of a run, real or simulated;
//! - [`compare`]: the comparison, printed and as `calibration.csv`.

mod agent_build;
mod agents;
mod compare;
mod figures;
mod rows;
mod supported;

use std::time::Duration;

use fdlab_protocol::membership::swim::Variant;
use fdlab_reports::atomic::write_file;
use fdlab_reports::report_dir::{check_out, publish, ReportKind, CALIBRATION_CSV, LIVE_EVENTS_CSV};
use fdlab_scenarios::seed_range::seed_range;
use fdlab_sim::membership;
use fdlab_sim::scenario::LIFEGUARD_RUN;
use fdlab_sim::valid::ValidScenario;

use crate::out_paths::{refuse_in_dir, scenario_inputs};

pub use supported::check_memberlist;

use super::LiveArgs;
use compare::JudgeRuns;
use figures::Truth;
use rows::Row;

/// Real time a run may take beyond its scenario's duration (the agents'
/// start and convergence), unless `--timeout` says otherwise.
const START_ALLOWANCE: Duration = Duration::from_secs(60);
/// Most real runs per judge (`--runs`): each takes the scenario's duration
/// of real time.
const MAX_RUNS: u32 = 100;

/// `fdlab live` of membership scenario `scenario`.
pub fn run(args: &LiveArgs, scenario: ValidScenario) -> Result<(), String> {
    check_memberlist(&scenario, &args.scenario)?;
    let runs = args.runs;
    if !(1..=MAX_RUNS).contains(&runs) {
        return Err(format!(
            "--runs {runs}: a live membership run makes 1 to {MAX_RUNS} real runs per judge (each lasts the scenario's {})",
            scenario.duration
        ));
    }
    let sim_seeds = args.sim_seeds.max(runs);
    let option = format!("--sim-seeds {sim_seeds}");
    let seeds: Vec<u64> = seed_range(args.seed, u64::from(sim_seeds), "--seed", &option)?.collect();
    let inputs = scenario_inputs(
        std::slice::from_ref(&args.scenario),
        std::slice::from_ref(&scenario),
    );
    refuse_in_dir(
        "--out",
        &args.out,
        &[CALIBRATION_CSV, LIVE_EVENTS_CSV],
        &[],
        &inputs,
    )?;
    check_out(&args.out, ReportKind::Live).map_err(|e| format!("{}: {e}", args.out.display()))?;
    let agent = agent_build::agent()?;
    super::processes::on_interrupt();

    let names = scenario.topology.node_names();
    let members = names.len() as u32;
    let judges = membership::judges(&scenario);
    let setup = scenario
        .membership
        .as_ref()
        .ok_or("not a membership scenario")?;
    let variants: Vec<Variant> = judges
        .iter()
        .map(|(judge, _)| {
            if judge == LIFEGUARD_RUN {
                Variant::Lifeguard
            } else {
                Variant::Swim
            }
        })
        .collect();
    let truths: Vec<Truth> = seeds
        .iter()
        .map(|&seed| {
            let schedule = membership::schedule(&scenario, seed);
            Truth::new(&schedule.actions, members, scenario.duration)
        })
        .collect();
    // The model first (an error there stops the run before any process),
    // configured as the agents are.
    let mut runs_by_judge: Vec<JudgeRuns> = Vec::new();
    for ((judge, _), &variant) in judges.iter().zip(&variants) {
        let modelled = as_the_agents_run(&scenario, variant)?;
        let sim = seeds
            .iter()
            .zip(&truths)
            .map(|(&seed, truth)| truth.simulated(&membership::run(&modelled, seed, 0, false).0))
            .collect();
        runs_by_judge.push(JudgeRuns {
            judge: judge.clone(),
            real: Vec::new(),
            sim,
        });
    }

    let bound = args.timeout.map_or(
        Duration::from_nanos(scenario.duration.as_nanos()) + START_ALLOWANCE,
        |t| Duration::from_nanos(t.as_nanos()),
    );
    let mut events: Vec<(String, u64, Row)> = Vec::new();
    for (r, &seed) in seeds.iter().enumerate().take(runs as usize) {
        let schedule = membership::schedule(&scenario, seed);
        for ((judge, judge_runs), &variant) in judges
            .iter()
            .map(|j| &j.0)
            .zip(&mut runs_by_judge)
            .zip(&variants)
        {
            let config = supported::as_run(&setup.swim, variant);
            let options = supported::agent_options(&config);
            let offset = membership::live_zero_offset(seed, config.probe_interval);
            let real = agents::run(
                &agent,
                &names,
                &options,
                &schedule,
                scenario.duration,
                bound,
                Duration::from_nanos(offset.as_nanos()),
            )?;
            let figures = truths[r].real(&real.rows);
            say!(
                "real {}/{runs} {judge} seed {seed}: {members} agents up in {:.1} s; crash -> first Dead {}; {} false events; signals <= {:.1} ms late",
                r + 1,
                real.converged_in.as_secs_f64(),
                list(&figures.first_dead),
                figures.false_healthy + figures.false_starved,
                real.worst_late.as_secs_f64() * 1e3,
            );
            judge_runs.real.push(figures);
            events.extend(real.rows.into_iter().map(|row| (judge.clone(), seed, row)));
        }
    }
    let lines = compare::lines(&runs_by_judge);
    say!(
        "{}: the real memberlist 0.2.2 ({runs} run(s) per judge, seeds {}..) against fdlab ({sim_seeds} seeds)",
        scenario.name,
        args.seed
    );
    say!("{}", compare::table(&lines));
    let calibration = compare::csv(&scenario.name, &lines)?;
    let events = events_csv(&names, &events)?;
    publish(&args.out, ReportKind::Live, |dir| {
        write_file(&dir.join(CALIBRATION_CSV), &calibration)?;
        write_file(&dir.join(LIVE_EVENTS_CSV), &events)
    })
    .map_err(|e| format!("{}: {e}", args.out.display()))?;
    say!(
        "calibration: {}; the agents' rows: {}",
        args.out.join(CALIBRATION_CSV).display(),
        args.out.join(LIVE_EVENTS_CSV).display()
    );
    Ok(())
}

/// `scenario` with one judge, fdlab's model of memberlist configured as the
/// agents of `variant` are (see [`supported::as_run`]): the same faults and
/// seeds, so the same schedule.
fn as_the_agents_run(scenario: &ValidScenario, variant: Variant) -> Result<ValidScenario, String> {
    let mut s = scenario.clone().into_inner();
    let setup = s.membership.as_mut().ok_or("not a membership scenario")?;
    setup.judges = Some(vec![LIFEGUARD_RUN.into()]);
    setup.swim = supported::as_run(&setup.swim, variant);
    ValidScenario::new(s).map_err(|e| format!("{}: {e}", scenario.name))
}

fn list(values: &[Option<f64>]) -> String {
    if values.is_empty() {
        return "-".into();
    }
    values
        .iter()
        .map(|v| v.map_or("never".into(), |s| format!("{s:.1} s")))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The real rows, by judge, seed and time.
fn events_csv(names: &[String], events: &[(String, u64, Row)]) -> Result<Vec<u8>, String> {
    let mut sorted: Vec<&(String, u64, Row)> = events.iter().collect();
    sorted
        .sort_by(|a, b| (&a.0, a.1, a.2.at, a.2.observer).cmp(&(&b.0, b.1, b.2.at, b.2.observer)));
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record([
        "judge", "seed", "t_s", "observer", "event", "subject", "detail",
    ])
    .map_err(|e| e.to_string())?;
    let name = |n: u32| names.get(n as usize).cloned().unwrap_or_default();
    for (judge, seed, row) in sorted {
        w.write_record([
            judge.clone(),
            seed.to_string(),
            format!("{:.6}", row.at.as_nanos_f64() / 1e9),
            name(row.observer),
            row.event.name().to_string(),
            row.subject.map(name).unwrap_or_default(),
            row.event.detail(),
        ])
        .map_err(|e| e.to_string())?;
    }
    w.into_inner().map_err(|e| e.to_string())
}
