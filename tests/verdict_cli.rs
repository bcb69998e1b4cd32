//! The verdict: every built-in scenario gets one, naming the detector to
//! pick (by the decision summary's rule, on the scenario alone) or saying
//! why there is none.

mod common;
use common::{fdlab, text};

#[test]
fn the_verdict_names_a_detector_or_what_none_managed_for_every_builtin() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r");
    let run = fdlab(&["run", "--seeds", "2", "-v", "--out", out.to_str().unwrap()]);
    assert!(run.status.success(), "{}", text(&run.stderr));
    let stdout = text(&run.stdout);
    // The decision summary comes first, a pick in every part.
    let summary = stdout.split("Verdict").next().unwrap_or_default();
    for part in [
        "== Detectors ==",
        "== Membership judges ==",
        "== Key placement ==",
        "== Lock-RPC eviction policies ==",
    ] {
        assert!(summary.contains(part), "{part}: {summary}");
    }
    assert!(summary.starts_with("== Detectors =="), "{summary}");
    assert!(summary.matches("> pick `").count() >= 6, "{summary}");
    let verdict = stdout.split("Verdict").nth(1).expect("a verdict section");
    let builtins = fdlab(&["list"]);
    let names: Vec<String> = text(&builtins.stdout)
        .lines()
        .skip_while(|l| !l.starts_with("Built-in"))
        .skip(1)
        .take_while(|l| !l.starts_with("Detector kinds"))
        .filter_map(|l| l.split_whitespace().next().map(str::to_string))
        .collect();
    assert!(names.len() >= 14, "{names:?}");
    for name in &names {
        // A lock-RPC scenario's verdict is about its policies (SPEC §10).
        if name.starts_with("lockrpc-") {
            let block: Vec<&str> = verdict
                .lines()
                .skip_while(|l| l.trim() != format!("{name} (lock RPCs):"))
                .skip(1)
                .take_while(|l| l.starts_with("    "))
                .collect();
            assert!(
                block.iter().any(|l| l.contains("Evicts live peers least")),
                "{name}: {block:?}"
            );
            continue;
        }
        let block: Vec<&str> = verdict
            .lines()
            .skip_while(|l| l.trim() != format!("{name}:"))
            .skip(1)
            .take_while(|l| l.starts_with("    "))
            .collect();
        assert!(!block.is_empty(), "no verdict for {name}");
        // A detector scenario: the summary's rule on the scenario alone, a
        // pick or why none; a membership or placement scenario names its
        // judge or distribution (`least costly judge: `swim``).
        let first = block[0].trim_start();
        let named = first.starts_with("pick `") || first.contains(": `");
        let unmet =
            first.starts_with("no pick:") || block.iter().any(|l| l.contains("no detector"));
        assert!(
            !block
                .iter()
                .any(|l| l.contains("fastest to detect, with no false Failed")),
            "{name}: the old rule's sentence: {block:?}"
        );
        assert!(named || unmet, "{name}: {block:?}");
    }
    assert!(verdict.contains("fdlab replay "), "{verdict}");
}
