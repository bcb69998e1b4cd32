//! The "Next:" lines `fdlab run` prints name the scenario as the user gave
//! it (a file's path, quoted for the shell where it must be), so that each
//! one runs as printed.

mod common;

use std::process::Command;
use std::time::Duration;

use common::fdlab_within_in;

#[test]
fn every_next_line_of_a_run_on_a_file_runs_as_printed() {
    let dir = tempfile::tempdir().unwrap();
    let file = "my scenario.toml";
    std::fs::copy(
        concat!(env!("CARGO_MANIFEST_DIR"), "/scenarios/live/crash.toml"),
        dir.path().join(file),
    )
    .unwrap();
    let (code, stdout, stderr, _) = fdlab_within_in(
        dir.path(),
        &["run", file, "--seeds", "2", "--out", "out"],
        Duration::from_secs(120),
    );
    assert_eq!(code, Some(0), "{stderr}");
    let next: Vec<&str> = stdout
        .lines()
        .skip_while(|l| *l != "Next:")
        .skip(1)
        .take_while(|l| l.starts_with("  fdlab "))
        .map(str::trim)
        .collect();
    assert_eq!(next.len(), 3, "{stdout}");
    assert!(
        next[0].starts_with("fdlab replay 'my scenario.toml' --seed "),
        "{}",
        next[0]
    );
    assert!(
        next[1].starts_with("fdlab tune 'my scenario.toml' "),
        "{}",
        next[1]
    );
    for line in &next[..2] {
        // As a shell runs it: the quotes, and the comment after `#`.
        let command = line.replacen("fdlab", env!("CARGO_BIN_EXE_fdlab"), 1);
        let o = Command::new("sh")
            .arg("-c")
            .arg(&command)
            .current_dir(dir.path())
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "{line}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
    // The gate's line names the checkout's baseline, run from its root.
    assert!(next[2].starts_with("fdlab check --baseline scenarios/ci-baseline.toml"));
    assert!(std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("scenarios/ci-baseline.toml")
        .is_file());
}
