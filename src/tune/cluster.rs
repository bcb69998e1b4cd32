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

use fdlab_protocol::Nanos;
use fdlab_reports::atomic::write_file;
use fdlab_reports::cluster::{summarize_totals, ClusterRunTotals, JudgeSummary};
use fdlab_scenarios::cluster_keys::{apply, keep_judges, resolve_key, Target};
use fdlab_scenarios::cluster_search::judge_grid;
use fdlab_scenarios::detector_spec::parse_key_values;
use fdlab_scenarios::excerpt::excerpt;
use fdlab_scenarios::search_space::End;
use fdlab_sim::membership;
use fdlab_sim::scenario::CLASSIC_JUDGE;
use fdlab_sim::valid::ValidScenario;
use rayon::prelude::*;
use toml::{Table, Value};

use super::rank::{rank, Candidate, Constraint, Objective, Ranking};
use super::render::duration;
use super::{TuneArgs, EXIT_NO_SETTING};
use crate::budget::{self, Work};
use crate::cluster_runs::distinct_sizes;
use crate::out_paths::{refuse_same_file, Input};
use crate::simulate::{progress, seed_list};

/// One setting: a judge and the keys set for it.
struct Setting {
    judge: String,
    values: Vec<(Target, Value)>,
    /// The varied keys at an end of their axis.
    edges: Vec<(Target, Value, End)>,
}

impl Setting {
    /// `judge `classic`: membership.orleans.probe_timeout = "2s", ...`.
    fn describe(&self) -> String {
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

/// The constraint in a membership's words.
fn describe(c: &Constraint) -> String {
    let parts: Vec<String> = [
        (c.max_false_failed, "false declarations"),
        (c.max_suspicions, "suspicions that led to no declaration"),
        (c.max_mistakes, "of both together"),
    ]
    .iter()
    .filter_map(|&(bound, what)| bound.map(|b| format!("at most {b} {what}")))
    .collect();
    format!("{} per node-hour", parts.join(" and "))
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

/// The evidence for one setting, two lines.
fn evidence(s: &JudgeSummary, c: &Candidate) -> [String; 2] {
    let declared = match &s.declare {
        _ if s.crashes == 0 => "time to Dead: no crash to declare in this scenario".to_string(),
        Some(d) => format!(
            "time to Dead over {} crash{}: mean {}, p50 {}, p90 {}, max {}; never declared {}",
            s.crashes,
            if s.crashes == 1 { "" } else { "es" },
            duration(d.mean),
            duration(d.p50),
            duration(d.p90),
            duration(d.max),
            s.never_declared()
        ),
        None => format!(
            "time to Dead over {} crashes: none declared (never declared {})",
            s.crashes,
            s.never_declared()
        ),
    };
    let mistakes = format!(
        "false declarations: {} ({:.4} per node-hour), node-time destroyed {}; suspicions that led to no declaration: {} ({:.2} per node-hour); over {:.2} node-hours in {} runs",
        s.false_declarations,
        c.false_failed_per_hour,
        duration(Nanos(u64::try_from(s.destroyed).unwrap_or(u64::MAX))),
        s.suspicions_undeclared,
        c.suspicions_per_hour,
        s.node_time as f64 / 3.6e12,
        s.runs
    );
    [declared, mistakes]
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
    let names = scenario.judge_names();
    for (i, name) in args.judge.iter().enumerate() {
        if !names.contains(name) {
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
        super::check_out_dir(out)?;
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
                "  raise the --max-*-per-hour bounds, or hold keys with --set to search elsewhere"
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

/// The note on a setting at an edge of the searched values.
fn edge_note(s: &Setting) -> Option<String> {
    if s.edges.is_empty() {
        return None;
    }
    let named: Vec<String> = s
        .edges
        .iter()
        .map(|(t, v, end)| {
            let which = match end {
                End::First => "lowest",
                End::Last => "highest",
            };
            format!("{} = {v} is the {which} value searched", t.key())
        })
        .collect();
    Some(format!(
        "  note: at the edge of the search ({}): a better setting may lie beyond it; set the key there with --set to look",
        named.join("; ")
    ))
}

/// One line for a setting against the recommended one's figure `best`.
fn against(s: &Setting, c: &Candidate, objective: Objective, best: Nanos) -> String {
    if c.crashes == 0 {
        return format!(
            "{}: no crash to declare, false declarations {} ({:.4} per node-hour), suspicions with no declaration {}",
            s.describe(),
            c.false_failed,
            c.false_failed_per_hour,
            c.suspicions()
        );
    }
    let value = c.objective(objective);
    let relative = if best == Nanos::MAX || value == Nanos::MAX || best.is_zero() {
        String::new()
    } else {
        format!(
            ", {:+.1}%",
            (value.as_nanos_f64() / best.as_nanos_f64() - 1.0) * 100.0
        )
    };
    let diff = if best == Nanos::MAX || value == Nanos::MAX {
        "n/a".to_string()
    } else if value >= best {
        format!("+{}", duration(value - best))
    } else {
        format!("-{}", duration(best - value))
    };
    format!(
        "{}: {} {} ({diff}{relative}), never declared {}, false declarations {} ({:.4} per node-hour), suspicions with no declaration {}",
        s.describe(),
        objective.name(),
        duration(value),
        c.missed,
        c.false_failed,
        c.false_failed_per_hour,
        c.suspicions()
    )
}

fn runner_ups(
    settings: &[Setting],
    candidates: &[Candidate],
    ranking: &Ranking,
    objective: Objective,
) -> Vec<String> {
    let Some(best) = ranking.best() else {
        return Vec::new();
    };
    let best_value = candidates[best].objective(objective);
    ranking.order[1..ranking.feasible]
        .iter()
        .take(super::render::RUNNER_UPS)
        .enumerate()
        .map(|(k, &i)| {
            format!(
                "{}. {}",
                k + 2,
                against(&settings[i], &candidates[i], objective, best_value)
            )
        })
        .collect()
}

/// Each judge other than the recommended one's, at its best-ranked setting.
fn best_of_other_judges(
    settings: &[Setting],
    candidates: &[Candidate],
    ranking: &Ranking,
    objective: Objective,
    best: usize,
) -> Vec<String> {
    let best_value = candidates[best].objective(objective);
    let mut seen: Vec<&str> = vec![settings[best].judge.as_str()];
    let mut lines = Vec::new();
    for (position, &i) in ranking.order.iter().enumerate() {
        let judge = settings[i].judge.as_str();
        if seen.contains(&judge) {
            continue;
        }
        seen.push(judge);
        let mut line = against(&settings[i], &candidates[i], objective, best_value);
        if position >= ranking.feasible {
            line.push_str(" (does not meet the constraint)");
        }
        lines.push(line);
    }
    lines
}

/// A detector table as `key = value` lines, stages as dotted keys.
fn flatten(table: &Table, prefix: &str, out: &mut Vec<(String, Value)>) {
    for (k, v) in table {
        match v {
            Value::Table(inner) => flatten(inner, &format!("{prefix}{k}."), out),
            other => out.push((format!("{prefix}{k}"), other.clone())),
        }
    }
}

/// What to paste into the scenario for setting `s` (with the `--set` keys
/// `pins`): the `[membership.orleans]` keys it sets, and its judge's whole
/// `[[detectors]]` table when a key of it is set (`variant` is the
/// scenario with the setting made).
fn snippet(s: &Setting, pins: &[(Target, Value)], variant: &ValidScenario) -> String {
    let set: Vec<&(Target, Value)> = pins.iter().chain(&s.values).collect();
    let mut out = Vec::new();
    let orleans: Vec<String> = set
        .iter()
        .filter(|(t, _)| matches!(t, Target::Orleans(_)))
        .map(|(t, v)| format!("{} = {v}", t.param()))
        .collect();
    if !orleans.is_empty() {
        out.push("[membership.orleans]".to_string());
        out.extend(orleans);
    }
    let of_judge = |list: &[(Target, Value)]| -> Vec<String> {
        list.iter()
            .filter(|(t, _)| t.judge() == Some(s.judge.as_str()))
            .map(|(t, _)| t.param().to_string())
            .collect()
    };
    let (tuned, held) = (of_judge(&s.values), of_judge(pins));
    let detector = variant.detectors.iter().find(|d| d.name == s.judge);
    let judge_keys = !(tuned.is_empty() && held.is_empty()) && s.judge != CLASSIC_JUDGE;
    if let (true, Some(d)) = (judge_keys, detector) {
        if !out.is_empty() {
            out.push(String::new());
        }
        out.push(format!(
            "[[detectors]]   # replaces the scenario's `{}`",
            d.name
        ));
        out.push(format!("name = {}", Value::from(d.name.as_str())));
        let mut keys = Vec::new();
        if let Ok(table) = Table::try_from(&d.config) {
            flatten(&table, "", &mut keys);
        }
        keys.sort_by_key(|(k, _)| k != "kind");
        for (k, v) in keys {
            let mark = if tuned.contains(&k) {
                "   # tuned"
            } else if held.contains(&k) {
                "   # --set"
            } else {
                ""
            };
            out.push(format!("{k} = {v}{mark}"));
        }
    }
    if out.is_empty() {
        out.push(format!(
            "# nothing to change: judge `{}` as in the scenario",
            s.judge
        ));
    }
    out.join("\n")
}

/// Every setting with its figures, in search order.
fn settings_csv(
    settings: &[Setting],
    summaries: &[JudgeSummary],
    candidates: &[Candidate],
    ranking: &Ranking,
) -> String {
    let mut rank_of = vec![0usize; candidates.len()];
    for (position, &i) in ranking.order.iter().enumerate() {
        rank_of[i] = position + 1;
    }
    let mut keys: Vec<String> = Vec::new();
    for s in settings {
        for (t, _) in &s.values {
            if !keys.contains(&t.key()) {
                keys.push(t.key());
            }
        }
    }
    let mut w = csv::Writer::from_writer(Vec::new());
    let mut header = vec![
        "rank".to_string(),
        "meets_constraint".into(),
        "judge".into(),
    ];
    header.extend(keys.iter().cloned());
    header.extend(
        [
            "runs",
            "crashes",
            "declared",
            "never_declared",
            "declare_mean_ms",
            "declare_p50_ms",
            "declare_p90_ms",
            "declare_max_ms",
            "false_declarations",
            "false_per_node_hour",
            "suspicions_undeclared",
            "suspicions_undeclared_per_node_hour",
            "destroyed_ms",
            "node_hours",
        ]
        .map(String::from),
    );
    let _ = w.write_record(&header);
    let ms = |n: Nanos| {
        let mut s = String::new();
        n.fmt_millis(&mut s);
        s
    };
    for (i, ((s, summary), c)) in settings.iter().zip(summaries).zip(candidates).enumerate() {
        let mut row = vec![
            rank_of[i].to_string(),
            ranking.order[..ranking.feasible].contains(&i).to_string(),
            s.judge.clone(),
        ];
        for key in &keys {
            row.push(s.values.iter().find(|(t, _)| t.key() == *key).map_or(
                String::new(),
                |(_, v)| match v {
                    Value::String(text) => text.clone(),
                    other => other.to_string(),
                },
            ));
        }
        let d = summary.declare;
        let stat = |f: fn(&fdlab_sim::stats::DurationStats) -> Nanos| {
            d.as_ref().map_or(String::new(), |d| ms(f(d)))
        };
        row.extend([
            summary.runs.to_string(),
            summary.crashes.to_string(),
            summary.declared.to_string(),
            summary.never_declared().to_string(),
            stat(|d| d.mean),
            stat(|d| d.p50),
            stat(|d| d.p90),
            stat(|d| d.max),
            c.false_failed.to_string(),
            format!("{:.6}", c.false_failed_per_hour),
            c.suspicions().to_string(),
            format!("{:.6}", c.suspicions_per_hour),
            ms(Nanos(u64::try_from(summary.destroyed).unwrap_or(u64::MAX))),
            format!("{:.6}", summary.node_time as f64 / 3.6e12),
        ]);
        let _ = w.write_record(&row);
    }
    String::from_utf8(w.into_inner().unwrap_or_default()).unwrap_or_default()
}
