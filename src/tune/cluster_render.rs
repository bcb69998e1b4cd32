//! The words and tables of `fdlab tune` on a membership scenario: the
//! constraint, a setting's evidence, runner-ups and each other judge's
//! best against the recommended one, the snippet to paste, and every
//! setting as CSV. Plain strings, in the order of the search, so that the
//! output is the same for any `--jobs`.

use fdlab_protocol::Nanos;
use fdlab_reports::cluster::JudgeSummary;
use fdlab_scenarios::cluster_keys::Target;
use fdlab_scenarios::search_space::End;
use fdlab_sim::scenario::CLASSIC_JUDGE;
use fdlab_sim::valid::ValidScenario;
use toml::{Table, Value};

use super::cluster::Setting;
use super::rank::{Candidate, Constraint, Objective, Ranking};
use super::render::duration;

/// The constraint in a membership's words.
pub(super) fn describe(c: &Constraint) -> String {
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

/// The evidence for one setting, two lines.
pub(super) fn evidence(s: &JudgeSummary, c: &Candidate) -> [String; 2] {
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

/// The note on a setting at an edge of the searched values.
pub(super) fn edge_note(s: &Setting) -> Option<String> {
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
pub(super) fn against(s: &Setting, c: &Candidate, objective: Objective, best: Nanos) -> String {
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

pub(super) fn runner_ups(
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
pub(super) fn best_of_other_judges(
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
pub(super) fn flatten(table: &Table, prefix: &str, out: &mut Vec<(String, Value)>) {
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
pub(super) fn snippet(s: &Setting, pins: &[(Target, Value)], variant: &ValidScenario) -> String {
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
pub(super) fn settings_csv(
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
