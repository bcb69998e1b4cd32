//! The reproducers of an adversarial user's command lines (issue 33): each
//! is refused with one `fdlab: error:` line and exit status 1, within a
//! second, under a 4 GiB address-space limit: no panic, no abort, no
//! allocation sized by the hostile number, no simulation before the refusal.

use std::time::{Duration, Instant};

mod common;
use common::{assert_one_error_line, fdlab_with_memory_limit, head, text};

/// The address-space limit every case runs under (MiB), as the issue's
/// reproducers did (`ulimit -v 4194304`).
const LIMIT_MIB: u64 = 4096;
/// Longest a refusal may take: it comes before any work.
const REFUSED_WITHIN: Duration = Duration::from_secs(1);

/// Runs `args` and asserts a quick refusal holding every needle.
fn refused(args: &[&str], needles: &[&str]) {
    let started = Instant::now();
    let out = fdlab_with_memory_limit(LIMIT_MIB, args);
    let took = started.elapsed();
    assert_one_error_line(&out, needles);
    assert!(took < REFUSED_WITHIN, "{args:?} took {took:?}");
}

#[test]
fn a_swim_only_scenario_is_not_tuned_or_swept() {
    // Was an index panic at src/tune/cluster.rs:289 (exit 101).
    refused(
        &["tune", "lifeguard-starved-4", "--seeds", "1"],
        &["lifeguard-starved-4", "no Orleans judge"],
    );
    refused(
        &[
            "sweep",
            "lifeguard-starved-4",
            "--seeds",
            "1",
            "--vary",
            "swim.suspicion_mult=3,4",
        ],
        &["--vary", "no Orleans judge"],
    );
}

#[test]
fn seed_counts_are_refused_before_they_are_allocated() {
    // 4294967295 seeds were a 34 GB allocation (exit 134); 100,000,000 were
    // refused after 787 MB.
    for seeds in ["4294967295", "100000000"] {
        refused(
            &[
                "sweep",
                "crash-mesh",
                "--seeds",
                seeds,
                "--vary",
                "fixed-3s.timeout=1s,2s",
            ],
            &["--seeds", seeds],
        );
        refused(
            &[
                "tune",
                "crash-mesh",
                "--detector",
                "fixed-timeout",
                "--seeds",
                seeds,
            ],
            &["--seeds", seeds],
        );
        refused(
            &["tune", "orleans-crash", "--seeds", seeds],
            &["--seeds", seeds],
        );
        refused(&["run", "crash-mesh", "--seeds", seeds], &["--seeds"]);
    }
}

#[test]
fn argument_errors_are_one_line_and_exit_1() {
    // clap's own errors were three lines without the prefix, and exit 2,
    // which is tune's "no setting met the constraint".
    refused(
        &[
            "swarm",
            "scenarios/swarm/pipeline-freezes.toml",
            "--runs",
            "abc",
        ],
        &["fdlab: error: --runs: invalid value 'abc'"],
    );
    refused(
        &["run", "crash-mesh", "--seeds", "4294967296"],
        &["fdlab: error: --seeds: invalid value '4294967296'"],
    );
    refused(
        &[
            "tune",
            "crash-mesh",
            "--detector",
            "fixed-timeout",
            "--max-false-failed-per-hour",
            "nan",
        ],
        &["fdlab: error: --max-false-failed-per-hour: invalid value 'nan'"],
    );
    refused(&["sweep", "crash-mesh"], &["--vary", "required"]);
    refused(&["run", "--no-such-option"], &["--no-such-option"]);
    refused(&["no-such-command"], &["no-such-command"]);
    // A value of 10,000 digits is not echoed whole.
    let long = "9".repeat(10_000);
    let out = fdlab_with_memory_limit(LIMIT_MIB, &["run", "crash-mesh", "--seeds", &long]);
    assert_one_error_line(&out, &["--seeds", "…"]);
    assert!(out.stderr.len() < 400, "{}", head(&text(&out.stderr)));
    // Help is not an error.
    let help = fdlab_with_memory_limit(LIMIT_MIB, &["run", "--help"]);
    assert_eq!(help.status.code(), Some(0));
    assert!(text(&help.stdout).contains("Usage:"));
}

#[test]
fn an_unwritable_out_is_refused_before_the_simulation() {
    // Was refused after 4-5 s of simulation of orleans-random-200.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("a-file");
    std::fs::write(&file, b"x").unwrap();
    let under_file = file.join("report");
    let under = under_file.to_str().unwrap();
    refused(
        &["run", "orleans-random-200", "--seeds", "1", "--out", under],
        &["a-file"],
    );
    let csv = file.join("t.csv");
    refused(
        &[
            "tune",
            "crash-mesh",
            "--detector",
            "fixed-timeout",
            "--out",
            csv.to_str().unwrap(),
        ],
        &["--out", "does not exist"],
    );
    // A directory no file can be made in, even by root: /proc refuses.
    if std::path::Path::new("/proc/self").exists() {
        refused(
            &["run", "orleans-random-200", "--out", "/proc/fdlab-report"],
            &["/proc/fdlab-report", "cannot be written"],
        );
        refused(
            &[
                "check",
                "--baseline",
                "scenarios/ci-baseline.toml",
                "--junit",
                "/proc/junit.xml",
            ],
            &["--junit", "cannot be written"],
        );
    }
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
}

/// `base` (a built-in scenario's file) with `from` replaced by `to`, run
/// with `--dry-run`: refused with one line naming `file:line` and holding
/// every needle.
fn scenario_refused(base: &str, from: &str, to: &str, needles: &[&str]) {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(format!("scenarios/builtin/{base}.toml")).unwrap();
    assert!(text.contains(from), "{base} has no `{from}`");
    let file = dir.path().join(format!("{base}.toml"));
    std::fs::write(&file, text.replacen(from, to, 1)).unwrap();
    let path = file.to_str().unwrap();
    let mut all = vec![path];
    all.extend_from_slice(needles);
    refused(&["run", path, "--dry-run"], &all);
}

#[test]
fn tables_that_would_never_judge_or_cut_are_refused() {
    // A [[detectors]] table named for a built-in judge: the name ran SWIM.
    for name in ["swim", "lifeguard", "classic"] {
        scenario_refused(
            "orleans-crash",
            "[membership]",
            &format!(
                "[[detectors]]\nname = \"{name}\"\nkind = \"fixed-timeout\"\ntimeout = \"5s\"\n\n[membership]"
            ),
            &["name", "built-in judge"],
        );
    }
    // A halves partition whose side is empty, every node, or names a node
    // twice: a no-op, even with `expect = "detect"`.
    let fault = |nodes: &str| {
        format!(
            "[[faults]]\nkind = \"partition\"\nshape = \"halves\"\nnodes = {nodes}\nat = \"10s\"\nduration = \"5s\"\nexpect = \"detect\"\n\n[[faults]]"
        )
    };
    let all: Vec<String> = (0..6).map(|i| format!("\"n{i}\"")).collect();
    for (nodes, needle) in [
        ("[]".to_string(), "empty"),
        (format!("[{}]", all.join(", ")), "other side is empty"),
        ("[\"n1\", \"n2\", \"n1\"]".to_string(), "`n1` twice"),
    ] {
        scenario_refused("partition-heal", "[[faults]]", &fault(&nodes), &[needle]);
    }
    // Weights past the clients' limit: refused by the dry run too, at the
    // file's line (the run's refusal named no file).
    scenario_refused(
        "placement-crash",
        "servers = 10",
        "servers = 10\nweights = [1000000, 1000000, 1000000, 1000000, 1, 1, 1, 1, 1, 1]",
        &[":21:", "placement.weights", "4000006"],
    );
}

#[test]
fn what_errors_quote_is_short_and_shows_as_itself() {
    // `1e308` was quoted as 309 digits.
    scenario_refused(
        "crash-mesh",
        "duration = ",
        "duration = 1e308\nx_duration = ",
        &["1.000e308"],
    );
    // A right-to-left override in a name was printed raw.
    let dir = tempfile::tempdir().unwrap();
    let base = std::fs::read_to_string("scenarios/builtin/orleans-crash.toml").unwrap();
    let file = dir.path().join("rlo.toml");
    std::fs::write(
        &file,
        base.replacen(
            "[membership]",
            "[[detectors]]\nname = \"evil\u{202E}lave\"\nkind = \"fixed-timeout\"\ntimeout = \"5s\"\n\n[membership]",
            1,
        ),
    )
    .unwrap();
    let out = fdlab_with_memory_limit(LIMIT_MIB, &["run", file.to_str().unwrap(), "--dry-run"]);
    assert_one_error_line(&out, &["\\u{202e}"]);
    assert!(!text(&out.stderr).contains('\u{202E}'));
}
