//! What `fdlab run` prints: the decision summary first, then one line per
//! scenario (a suite) or every scenario's full tables and verdict (one
//! scenario, or `-v`); nothing with `-q`; with `--json`, one JSON document
//! instead of text (docs/json.md). Every text line fits in
//! [`fdlab_reports::summary::terminal::WIDTH`] columns, or `$COLUMNS` when
//! it is narrower.

use fdlab_reports::cluster::{cluster_terminal_table, cluster_verdict, MembershipReport};
use fdlab_reports::lockrpc::{lockrpc_terminal_table, lockrpc_verdict, LockrpcMetrics};
use fdlab_reports::metrics::ScenarioMetrics;
use fdlab_reports::placement::{placement_terminal_table, placement_verdict, PlacementReport};
use fdlab_reports::report::About;
use fdlab_reports::summary::detectors::detectors_part;
use fdlab_reports::summary::locks::locks_part;
use fdlab_reports::summary::membership::membership_part;
use fdlab_reports::summary::placement::placement_part;
use fdlab_reports::summary::terminal::{self, wrap, Style, WIDTH};
use fdlab_reports::summary::{Group, Part, Summary};
use fdlab_reports::tables::terminal_table;
use fdlab_reports::verdict::verdict;
use fdlab_sim::valid::ValidScenario;
use serde::Serialize;

/// Version of the JSON document's layout (docs/json.md); raised when a key
/// changes meaning or goes away.
pub const JSON_SCHEMA: &str = "fdlab-run/1";

/// A run's results, as the console shows them.
pub struct RunView<'a> {
    pub pairs: &'a [ValidScenario],
    pub metrics: &'a [ScenarioMetrics],
    pub clusters: &'a [&'a ValidScenario],
    pub membership: &'a [MembershipReport],
    pub placement: &'a [PlacementReport],
    pub locks: &'a [&'a ValidScenario],
    pub lockrpc: &'a [LockrpcMetrics],
    /// How the command line named each scenario of `pairs`.
    pub about: &'a [About],
}

/// The console's width: [`WIDTH`], or `$COLUMNS` when it is narrower (and
/// sensible).
pub fn width() -> usize {
    /// Narrower than this, tables are unreadable anyway.
    const NARROWEST: usize = 40;
    std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.trim().parse::<usize>().ok())
        .filter(|&c| c >= NARROWEST)
        .map_or(WIDTH, |c| c.min(WIDTH))
}

/// `text` cut to `max` characters at a word, with `…` when cut.
fn fit(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let mut out = wrap(text, max - 1).into_iter().next().unwrap_or_default();
    if out.chars().count() > max - 1 {
        out = out.chars().take(max - 1).collect();
    }
    out.push('…');
    out
}

/// The summary, as the console draws it.
pub fn print_summary(summary: &Summary, max: usize) {
    let text = terminal::render(
        summary,
        max,
        Style {
            color: crate::out::stdout_color(),
        },
    );
    for line in text.lines() {
        say!("{line}");
    }
}

/// A scenario's name, its runs and its pick in a line.
type ScenarioLine = (String, usize, String);

/// One line per scenario, under its part: its name, runs, and its own pick
/// with its figures, weighed as the summary weighs (each scenario a group
/// of its own).
pub fn print_lines(v: &RunView<'_>, max: usize) {
    let pick = |part: Part| only_group(part).map(|g| g.pick_line()).unwrap_or_default();
    let mut parts: Vec<(&str, Vec<ScenarioLine>)> = vec![
        ("Detectors", Vec::new()),
        ("Membership judges", Vec::new()),
        ("Key placement", Vec::new()),
        ("Lock-RPC eviction policies", Vec::new()),
    ];
    for m in v.metrics {
        let line = pick(detectors_part(std::slice::from_ref(m)));
        parts[0].1.push((m.scenario.clone(), m.runs.len(), line));
    }
    for r in v.membership {
        let line = pick(membership_part(std::slice::from_ref(r)));
        parts[1]
            .1
            .push((r.metrics.scenario.clone(), r.metrics.runs(), line));
    }
    for p in v.placement {
        let line = pick(placement_part(std::slice::from_ref(p)));
        parts[2]
            .1
            .push((p.metrics.scenario.clone(), p.metrics.seeds, line));
    }
    for m in v.lockrpc {
        let line = pick(locks_part(std::slice::from_ref(m)));
        let runs = m.summary.iter().map(|p| p.runs as usize).sum();
        parts[3].1.push((m.scenario.clone(), runs, line));
    }
    let name_w = parts
        .iter()
        .flat_map(|(_, lines)| lines.iter().map(|l| l.0.chars().count()))
        .max()
        .unwrap_or(0);
    say!("Each scenario weighed alone (full tables: -v, or run one scenario):");
    for (title, lines) in parts.iter().filter(|(_, lines)| !lines.is_empty()) {
        say!("{title}:");
        for (name, runs, text) in lines {
            let head = format!("  {name:<name_w$} {runs:>4} runs  ");
            let room = max.saturating_sub(head.chars().count()).max(1);
            say!("{head}{}", fit(text, room));
        }
    }
}

/// Every scenario's full tables, then every verdict in sentences (`-v`, or a
/// run of one scenario).
pub fn print_tables(v: &RunView<'_>) {
    for (scenario, m) in v.pairs.iter().zip(v.metrics) {
        if !scenario.description.is_empty() {
            say!("# {}", scenario.description.trim());
        }
        say!("{}", terminal_table(m));
    }
    for p in v.placement.iter().filter(|p| !p.metrics.by_view) {
        say!("{}", placement_terminal_table(&p.metrics));
    }
    for (scenario, report) in v.clusters.iter().zip(v.membership) {
        if !scenario.description.is_empty() {
            say!("# {}", scenario.description.trim());
        }
        say!("{}", cluster_terminal_table(&report.metrics));
        let placed = v
            .placement
            .iter()
            .find(|p| p.metrics.by_view && p.metrics.scenario == scenario.name);
        if let Some(p) = placed {
            say!("{}", placement_terminal_table(&p.metrics));
        }
    }
    for (scenario, m) in v.locks.iter().zip(v.lockrpc) {
        if !scenario.description.is_empty() {
            say!("# {}", scenario.description.trim());
        }
        say!("{}", lockrpc_terminal_table(m));
    }
    say!("Verdict (details: docs/reports.md):");
    for m in v.metrics {
        say!("  {}:", m.scenario);
        for line in verdict(m).sentences() {
            say!("    {line}");
        }
    }
    for report in v.membership {
        say!("  {}:", report.metrics.scenario);
        for line in cluster_verdict(&report.metrics) {
            say!("    {line}");
        }
    }
    for m in v.lockrpc {
        say!("  {} (lock RPCs):", m.scenario);
        for line in lockrpc_verdict(m) {
            say!("    {line}");
        }
    }
    for report in v.placement {
        say!("  {} (key placement):", report.metrics.scenario);
        for line in placement_verdict(&report.metrics) {
            say!("    {line}");
        }
    }
}

/// The "Next:" lines: replay, tune and check, for the first detector
/// scenario, naming it as the command line did.
pub fn print_next(v: &RunView<'_>, max: usize) {
    let (Some(m), Some(s), Some(about)) = (v.metrics.first(), v.pairs.first(), v.about.first())
    else {
        return;
    };
    let verdict = verdict(m);
    let kind = verdict
        .best_name()
        .and_then(|name| s.detectors.iter().find(|d| d.name == name))
        .map(|d| d.config.kind());
    say!("Next:");
    for step in verdict.next_steps(&about.invoked_as, kind) {
        // A command is never cut; its comment is, to fit.
        match step.split_once("    # ") {
            Some((command, why)) if command.chars().count() + 8 < max => {
                let room = max - command.chars().count() - 8;
                say!("  {command}    # {}", fit(why, room));
            }
            Some((command, _)) => say!("  {command}"),
            None => say!("  {step}"),
        }
    }
}

/// One scenario in the JSON document.
#[derive(Serialize)]
struct ScenarioJson {
    name: String,
    part: &'static str,
    runs: usize,
    verdict: Vec<String>,
    /// The scenario's own table, as the summary draws a group.
    table: Option<Group>,
}

fn only_group(part: Part) -> Option<Group> {
    part.groups.into_iter().next()
}

/// The JSON document of `fdlab run --json` (docs/json.md).
#[derive(Serialize)]
pub struct RunJson {
    schema: &'static str,
    fdlab: &'static str,
    report: String,
    summary: Summary,
    scenarios: Vec<ScenarioJson>,
}

impl RunJson {
    pub fn new(v: &RunView<'_>, summary: Summary, report: String) -> RunJson {
        let mut scenarios = Vec::new();
        for m in v.metrics {
            scenarios.push(ScenarioJson {
                name: m.scenario.clone(),
                part: "detectors",
                runs: m.runs.len(),
                verdict: verdict(m).sentences(),
                table: only_group(detectors_part(std::slice::from_ref(m))),
            });
        }
        for r in v.membership {
            scenarios.push(ScenarioJson {
                name: r.metrics.scenario.clone(),
                part: "membership",
                runs: r.metrics.runs(),
                verdict: cluster_verdict(&r.metrics),
                table: only_group(membership_part(std::slice::from_ref(r))),
            });
        }
        for p in v.placement {
            scenarios.push(ScenarioJson {
                name: p.metrics.scenario.clone(),
                part: "placement",
                runs: p.metrics.seeds,
                verdict: placement_verdict(&p.metrics),
                table: only_group(placement_part(std::slice::from_ref(p))),
            });
        }
        for m in v.lockrpc {
            scenarios.push(ScenarioJson {
                name: m.scenario.clone(),
                part: "lock-rpc",
                runs: m.summary.iter().map(|p| p.runs as usize).sum(),
                verdict: lockrpc_verdict(m),
                table: only_group(locks_part(std::slice::from_ref(m))),
            });
        }
        RunJson {
            schema: JSON_SCHEMA,
            fdlab: env!("CARGO_PKG_VERSION"),
            report,
            summary,
            scenarios,
        }
    }

    pub fn print(&self) -> Result<(), String> {
        let text = serde_json::to_string_pretty(self).map_err(|e| format!("--json: {e}"))?;
        say!("{text}");
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::fit;

    #[test]
    fn long_lines_are_cut_at_a_word_with_an_ellipsis() {
        assert_eq!(fit("short", 10), "short");
        let cut = fit("one two three four five", 12);
        assert_eq!(cut, "one two…");
        assert!(cut.chars().count() <= 12);
        assert_eq!(fit("abcdefghijklmnop", 6).chars().count(), 6);
    }
}
