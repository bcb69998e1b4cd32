//! `fdlab tune SCENARIO` on a membership scenario: searches each judge's
//! settings ([`fdlab_scenarios::cluster_search`]: `classic` over Orleans'
//! `probe_timeout` × `num_missed_probes_limit`, a detector judge over its
//! threshold) and recommends the one with the fastest median time from a
//! crash to its Dead declaration among those with no false declaration
//! (the `--max-*-per-hour` flags bound, per node-hour up: false
//! declarations; suspicions that led to no declaration; both).
//!
//! Every setting × seed is one cluster run (a setting changes the
//! cluster). A crash never declared ranks as never declared (fewer first,
//! then the objective), as a missed detection does for a detector. The
//! recommendation is printed as the `[membership.orleans]` keys, or the
//! judge's `[[detectors]]` table, to paste into the scenario; the honesty
//! rules of detector tuning hold: figures with their counts, runner-ups,
//! a note when the setting is at an edge of the searched values, exit
//! status 2 when no setting meets the constraint, output independent of
//! `--jobs`.

use std::process::ExitCode;

use fdlab_reports::atomic::write_file;
use fdlab_reports::cluster::{summarize_totals, ClusterRunTotals, JudgeSummary};
use fdlab_scenarios::cluster_keys::{apply, keep_judges, resolve_key, Target};
use fdlab_scenarios::cluster_search::judge_grid;
use fdlab_scenarios::detector_spec::parse_key_values;
use fdlab_scenarios::excerpt::excerpt;
use fdlab_scenarios::search_space::End;
use fdlab_sim::membership;
use fdlab_sim::valid::ValidScenario;
use rayon::prelude::*;
use toml::Value;

use super::cluster_render::{
    best_of_other_judges, describe, edge_note, evidence, runner_ups, settings_csv, snippet,
};
use super::rank::{rank, Candidate, Constraint, Objective};
use super::{TuneArgs, EXIT_NO_SETTING};
use crate::budget::{self, Work};
use crate::cluster_runs::distinct_sizes;
use crate::out_paths::{refuse_same_file, Input};
use crate::simulate::{progress, seed_list};

/// One setting: a judge and the keys set for it.
pub(super) struct Setting {
    pub judge: String,
    pub values: Vec<(Target, Value)>,
    /// The varied keys at an end of their axis.
    pub edges: Vec<(Target, Value, End)>,
}

impl Setting {
    /// `judge `classic`: membership.orleans.probe_timeout = "2s", ...`.
    pub fn describe(&self) -> String {
        let keys: Vec<String> = self
            .values
            .iter()
            .map(|(t, v)| match t {
                Target::Orleans(_) => format!("{} = {v}", t.key()),
                Target::Judge { param, .. } => format!("{param} = {v}"),
            })
            .collect();
        let keys = if keys.is_empty() {
            "as in the scenario".to_string()
        } else {
            keys.join(", ")
        };
        format!("judge `{}`: {keys}", self.judge)
    }
}

/// The constraint of the flags; with none, no false declaration.
fn constraint(args: &TuneArgs) -> Constraint {
    match (
        args.max_false_failed_per_hour,
        args.max_suspicions_per_hour,
        args.max_mistakes_per_hour,
    ) {
        (None, None, None) => Constraint {
            max_false_failed: Some(0.0),
            ..Constraint::default()
        },
        (f, s, m) => Constraint::from_flags(f, s, m),
    }
}

/// The ranking's view of a judge's figures under one setting.
fn candidate(s: &JudgeSummary) -> Candidate {
    let false_rate = s.false_rate().unwrap_or(0.0);
    let undeclared = s.undeclared_suspicion_rate().unwrap_or(0.0);
    Candidate {
        crashes: s.crashes,
        detection: s.declare,
        missed: s.never_declared(),
        mistakes: s.false_declarations + s.suspicions_undeclared,
        mistakes_per_hour: false_rate + undeclared,
        false_failed: s.false_declarations,
        false_failed_per_hour: false_rate,
        suspicions_per_hour: undeclared,
        mean_mistake: None,
        query_accuracy: 1.0,
    }
}

/// The keys set by `--set`, each resolved on `scenario`.
fn pins(args: &TuneArgs, scenario: &ValidScenario) -> Result<Vec<(Target, Value)>, String> {
    let Some(text) = &args.set else {
        return Ok(Vec::new());
    };
    let items = parse_key_values(text).map_err(|e| format!("--set: {e}"))?;
    items
        .into_iter()
        .map(|(key, value)| {
            let (head, param) = key.split_once('.').ok_or_else(|| {
                format!(
                    "--set {}: expected membership.orleans.KEY or JUDGE.KEY on membership scenario `{}`",
                    excerpt(&key),
                    scenario.name
                )
            })?;
            let target = resolve_key(scenario, head, param).map_err(|e| format!("--set: {e}"))?;
            Ok((target, value))
        })
        .collect()
}

/// The judges to tune: `--judge`, in the scenario's order, or all.
fn judges(args: &TuneArgs, scenario: &ValidScenario) -> Result<Vec<String>, String> {
    let names = scenario.orleans_judge_names();
    if names.is_empty() {
        // A SWIM-only scenario: nothing here would be ranked.
        return Err(format!(
            "`{}` has no Orleans judge to tune: its judges are SWIM runs, whose keys are not swept or tuned yet",
            scenario.name
        ));
    }
    for (i, name) in args.judge.iter().enumerate() {
        if !names.contains(name) {
            if fdlab_sim::scenario::is_swim_run(name) {
                return Err(format!(
                    "--judge {}: a SWIM run, whose keys are not swept or tuned yet; the Orleans judges: {}",
                    excerpt(name),
                    names.join(", ")
                ));
            }
            return Err(format!(
                "--judge {}: not a judge of `{}` (its judges: {})",
                excerpt(name),
                scenario.name,
                names.join(", ")
            ));
        }
        if args.judge[..i].contains(name) {
            return Err(format!("--judge {}: named twice", excerpt(name)));
        }
    }
    Ok(names
        .into_iter()
        .filter(|n| args.judge.is_empty() || args.judge.contains(n))
        .collect())
}

/// `fdlab tune` on membership scenario `scenario`, named `arg` on the
/// command line (see the module docs).
pub fn run(args: &TuneArgs, arg: &str, scenario: &ValidScenario) -> Result<ExitCode, String> {
    if let Some(kind) = &args.detector {
        return Err(format!(
            "--detector {}: `{}` is a membership scenario: its judges are tuned (every judge, or --judge NAME)",
            excerpt(kind),
            scenario.name
        ));
    }
    if let Some(out) = &args.out {
        crate::out_paths::refuse_unwritable_file("--out", out)?;
        let inputs: Vec<Input> = fdlab_scenarios::resolve::files_of(arg, scenario)
            .into_iter()
            .map(|f| Input::new("the scenario's file", f))
            .collect();
        refuse_same_file("--out", out, &inputs)?;
    }
    let objective = args.objective.unwrap_or(Objective::P50);
    let constraint = constraint(args);
    let judges = judges(args, scenario)?;
    let pins = pins(args, scenario)?;
    let pinned: Vec<(&Target, &Value)> = pins.iter().map(|(t, v)| (t, v)).collect();
    let base = apply(scenario, &pinned)
        .and_then(|s| ValidScenario::new(s).map_err(|e| e.to_string()))
        .map_err(|e| format!("--set: {e}"))?;
    let seeds = seed_list(args.seed, args.seeds, scenario.seeds)?;
    // Every setting of every judge, each made and checked before any runs.
    let mut settings = Vec::new();
    let mut variants = Vec::new();
    for judge in &judges {
        let mut grid = judge_grid(&base, judge)?;
        for (t, _) in &pins {
            grid.pin(t);
        }
        let alone = keep_judges(&base, std::slice::from_ref(judge));
        for values in grid.points() {
            let set: Vec<(&Target, &Value)> = values.iter().map(|(t, v)| (t, v)).collect();
            let made = apply(&alone, &set);
            let setting = Setting {
                judge: judge.clone(),
                edges: grid.edges(&values),
                values: values.clone(),
            };
            let variant = made
                .and_then(|s| ValidScenario::new(s).map_err(|e| e.to_string()))
                .map_err(|e| format!("{} makes no valid scenario: {e}", setting.describe()))?;
            settings.push(setting);
            variants.push(variant);
        }
    }
    budget::runs_fit((settings.len() as u64).saturating_mul(seeds.len() as u64))?;
    let threads = budget::threads(args.jobs)?;
    let kinds = distinct_sizes(
        variants
            .iter()
            .enumerate()
            .map(|(i, v)| Ok((format!("t{:04}", i + 1), v.clone(), seeds.len() as u64))),
    )?;
    let work = Work {
        runs: kinds.iter().map(|(s, n)| (s, *n)).collect(),
        logged: false,
    };
    let checked = budget::check(&work, &args.size, threads)?;
    if args.size.dry_run {
        budget::dry_run(&work, &checked, threads)?;
        return Ok(ExitCode::SUCCESS);
    }
    let pool = crate::simulate::thread_pool(args.jobs)?;
    let jobs: Vec<(usize, u64)> = (0..settings.len())
        .flat_map(|i| seeds.iter().map(move |&s| (i, s)))
        .collect();
    let bar = progress(jobs.len() as u64, "cluster runs");
    let totals: Vec<ClusterRunTotals> = pool.install(|| {
        jobs.par_iter()
            .map(|&(i, seed)| {
                let (outcome, _) = membership::run(&variants[i], seed, 0, false);
                bar.inc(1);
                ClusterRunTotals::of(&outcome)
            })
            .collect()
    });
    bar.finish_and_clear();
    let summaries: Vec<JudgeSummary> = totals
        .chunks(seeds.len())
        .zip(&settings)
        .map(|(runs, s)| summarize_totals(&s.judge, runs))
        .collect();
    let candidates: Vec<Candidate> = summaries.iter().map(candidate).collect();
    let ranking = rank(&candidates, objective, &constraint);

    let mut report = header(
        args,
        scenario,
        &judges,
        &settings,
        seeds.len(),
        objective,
        &constraint,
    );
    let status = match ranking.best() {
        Some(best) => {
            let s = &settings[best];
            report.push(format!("recommended: {}", s.describe()));
            report.extend(evidence(&summaries[best], &candidates[best]).map(|l| format!("  {l}")));
            report.push(format!(
                "  {} of {} settings meet the constraint",
                ranking.feasible,
                settings.len()
            ));
            if summaries[best].crashes == 0 {
                report.push("  note: no crash to declare in this scenario: settings are ranked by their declarations and suspicions alone; tune on a scenario with a crash as well".into());
            }
            if let Some(note) = edge_note(s) {
                report.push(note);
            }
            let lines = runner_ups(&settings, &candidates, &ranking, objective);
            if !lines.is_empty() {
                report.push(String::new());
                report.push("runner-ups:".into());
                report.extend(lines.into_iter().map(|l| format!("  {l}")));
            }
            let others = best_of_other_judges(&settings, &candidates, &ranking, objective, best);
            if !others.is_empty() {
                report.push(String::new());
                report.push("the best setting of each other judge:".into());
                report.extend(others.into_iter().map(|l| format!("  {l}")));
            }
            report.push(String::new());
            report.push("paste into the scenario (keys not shown keep their values):".into());
            report.push(snippet(s, &pins, &variants[best]));
            ExitCode::SUCCESS
        }
        None => {
            let least = ranking.order[0];
            report.push(format!(
                "no setting meets the constraint of {} on this scenario; the closest to it is: {}",
                describe(&constraint),
                settings[least].describe()
            ));
            report
                .extend(evidence(&summaries[least], &candidates[least]).map(|l| format!("  {l}")));
            report.push(
                "  raise the --max-*-per-hour bounds, or hold one of the keys of the settings below with --set KEY=VALUE to search elsewhere"
                    .into(),
            );
            report.push(String::new());
            report.push("its settings (do not meet the constraint):".into());
            report.push(snippet(&settings[least], &pins, &variants[least]));
            ExitCode::from(EXIT_NO_SETTING)
        }
    };
    if let Some(out) = &args.out {
        let table = settings_csv(&settings, &summaries, &candidates, &ranking);
        write_file(out, table.as_bytes()).map_err(|e| format!("{}: {e}", out.display()))?;
        report.push(format!("every setting: {}", out.display()));
    }
    for line in report {
        say!("{line}");
    }
    if status != ExitCode::SUCCESS {
        note!(
            "fdlab tune: no setting meets the constraint of {} (exit status {EXIT_NO_SETTING})",
            describe(&constraint)
        );
    }
    Ok(status)
}

/// The lines that say what was searched.
fn header(
    args: &TuneArgs,
    scenario: &ValidScenario,
    judges: &[String],
    settings: &[Setting],
    seeds: usize,
    objective: Objective,
    constraint: &Constraint,
) -> Vec<String> {
    let per_judge: Vec<String> = judges
        .iter()
        .map(|j| {
            let n = settings.iter().filter(|s| s.judge == *j).count();
            format!("{j} {n}")
        })
        .collect();
    vec![
        format!(
            "fdlab tune: membership scenario {}, judges {}",
            scenario.name,
            judges.join(", ")
        ),
        format!(
            "  search: {} settings ({}) x {seeds} seeds (from seed {}), one cluster run per setting and seed; {}; objective: {} time to Dead",
            settings.len(),
            per_judge.join(", "),
            args.seed,
            describe(constraint),
            objective.name()
        ),
        String::new(),
    ]
}
