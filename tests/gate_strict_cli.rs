//! The gate shows every changed figure: a phi threshold moved from 8 to 10
//! passes within the tolerances with ⚠ marks, fails under `--strict`, and
//! the hint to accept it is the user's own command with `--update`.

use std::path::Path;

mod common;
use common::{fdlab, text};

fn copy_suite(to: &Path, threshold: &str) {
    let from = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/ci");
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|x| x == "toml") {
            let mut body = std::fs::read_to_string(&path).unwrap();
            body = body.replace(
                "kind = \"phi-accrual\"",
                &format!("kind = \"phi-accrual\"\nthreshold = {threshold}"),
            );
            std::fs::write(to.join(path.file_name().unwrap()), body).unwrap();
        }
    }
}

#[test]
fn a_changed_phi_threshold_is_flagged_and_fails_under_strict() {
    let dir = tempfile::tempdir().unwrap();
    let (before, after) = (dir.path().join("before"), dir.path().join("after"));
    copy_suite(&before, "8.0");
    copy_suite(&after, "10.0");
    let baseline = dir.path().join("baseline.toml");
    let b = baseline.to_str().unwrap();
    let update = fdlab(&[
        "check",
        "--suite",
        before.to_str().unwrap(),
        "--baseline",
        b,
        "--update",
    ]);
    assert!(update.status.success(), "{}", text(&update.stderr));
    let suite = after.to_str().unwrap();
    let out = fdlab(&["check", "--suite", suite, "--baseline", b, "--jobs", "2"]);
    let stdout = text(&out.stdout);
    // Within the tolerances (about +1.5% at p50, +2.3% at p99): it passes,
    // every changed figure marked: four detector scenarios and the Orleans
    // cluster's phi judge, whose threshold now sets its time to Dead.
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(stdout.contains("passed, with changed figures"), "{stdout}");
    assert_eq!(stdout.matches("| ⚠ changed |").count(), 10, "{stdout}");
    let strict = fdlab(&[
        "check",
        "--suite",
        suite,
        "--baseline",
        b,
        "--jobs",
        "2",
        "--strict",
    ]);
    assert_eq!(strict.status.code(), Some(1));
    let err = text(&strict.stderr);
    assert!(err.contains("--strict fails on any change"), "{err}");
    // The hint is the user's command, with --update and without --strict.
    let hint = format!("`fdlab check --update --suite {suite} --baseline {b} --jobs 2`");
    assert!(err.contains(&hint), "{err}");
}
