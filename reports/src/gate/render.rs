//! The gate's verdict for people and for CI: a Markdown report and JUnit XML.

use super::*;

/// Escapes `|` so a cell cannot break a Markdown table.
fn cell(text: &str) -> String {
    text.replace('|', "\\|")
}

/// A Markdown report (GitHub job summaries and GitLab render it); under
/// `strict`, a figure changed within the tolerances fails too.
pub fn markdown(c: &Comparison, baseline: &Path, strict: bool) -> String {
    let mut md = String::new();
    let status = match (c.passes(strict), c.tolerated()) {
        (false, _) => "FAILED",
        (true, 0) => "passed",
        (true, _) => "passed, with changed figures",
    };
    let _ = writeln!(
        md,
        "## fdlab check {status}\n\n{} scenario × detector results compared with `{}`: {} regression(s), {} figure(s) changed within the tolerances.\n",
        c.compared,
        baseline.display(),
        c.regressions(),
        c.tolerated()
    );
    if c.tolerated() > 0 {
        let _ = writeln!(
            md,
            "{} Runs are deterministic: a changed figure comes from a change of code or of the suite, never from chance. {}\n",
            if strict { "❌" } else { "⚠" },
            if strict {
                "`--strict` fails on every change."
            } else {
                "Review each ⚠ below; `--strict` fails on them."
            }
        );
    }
    if c.compares_nothing() {
        let _ = writeln!(
            md,
            "❌ The baseline covers none of the suite's {} scenario × detector results: a gate that compares nothing fails.\n",
            c.new.len()
        );
    }
    if !c.changes.is_empty() {
        md.push_str("| | scenario | detector | metric | before | after | change |\n");
        md.push_str("|---|---|---|---|---|---|---|\n");
        // Regressions first, each group in suite order.
        for regression in [true, false] {
            for x in c.changes.iter().filter(|x| x.regression == regression) {
                let mark = match (regression, strict) {
                    (true, _) => "❌ regression",
                    (false, true) => "❌ changed",
                    (false, false) => "⚠ changed",
                };
                let _ = writeln!(
                    md,
                    "| {mark} | {} | {} | {} | {} | {} | {} |",
                    cell(&x.scenario),
                    cell(&x.detector),
                    x.metric,
                    x.before,
                    x.after,
                    cell(&x.change)
                );
            }
        }
        md.push('\n');
    }
    for (scenario, detector) in &c.missing {
        let _ = writeln!(
            md,
            "- ❌ `{}` / `{}` is in the baseline but was not run.",
            cell(scenario),
            cell(detector)
        );
    }
    for (scenario, detector) in &c.new {
        let _ = writeln!(
            md,
            "- ❌ `{}` / `{}` is not in the baseline: nothing gates it (`fdlab check --update` adds it).",
            cell(scenario),
            cell(detector)
        );
    }
    if c.passed() && c.changes.is_empty() {
        md.push_str("Every figure is identical to the baseline.\n");
    }
    md
}

fn xml(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// JUnit XML: one test case per scenario × detector, failed when any of its
/// metrics regressed (under `strict`, when any changed).
pub fn junit(c: &Comparison, run: &[Entry], strict: bool) -> String {
    let mut cases = String::new();
    let mut failures = 0;
    let mut case = |scenario: &str, detector: &str, problems: Vec<String>| {
        let _ = write!(
            cases,
            "    <testcase classname=\"fdlab.check.{}\" name=\"{}\"",
            xml(scenario),
            xml(detector)
        );
        if problems.is_empty() {
            cases.push_str("/>\n");
        } else {
            failures += 1;
            let _ = write!(
                cases,
                ">\n      <failure message=\"{}\">{}</failure>\n    </testcase>\n",
                xml(&problems[0]),
                xml(&problems.join("\n"))
            );
        }
    };
    for e in run {
        let mut problems: Vec<String> = c
            .changes
            .iter()
            .filter(|x| {
                (x.regression || strict) && x.scenario == e.scenario && x.detector == e.detector
            })
            .map(|x| format!("{}: {} -> {} ({})", x.metric, x.before, x.after, x.change))
            .collect();
        if c.new
            .iter()
            .any(|(s, d)| *s == e.scenario && *d == e.detector)
        {
            problems.push(
                "not in the baseline: nothing to compare with (`fdlab check --update` adds it)"
                    .to_string(),
            );
        }
        case(&e.scenario, &e.detector, problems);
    }
    for (scenario, detector) in &c.missing {
        case(
            scenario,
            detector,
            vec!["in the baseline but not run".to_string()],
        );
    }
    let tests = run.len() + c.missing.len();
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n  <testsuite name=\"fdlab check\" tests=\"{tests}\" failures=\"{failures}\">\n{cases}  </testsuite>\n</testsuites>\n"
    )
}
