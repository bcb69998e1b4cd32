//! `fdlab replay` without `--out` writes to `replay-out/<scenario>-<seed>`
//! (`-<judge>` for a membership scenario): a replay never replaces another
//! replay's directory.

mod common;

use std::time::Duration;

use common::fdlab_within_in;

const BOUND: Duration = Duration::from_secs(120);

#[test]
fn each_replay_gets_its_own_directory() {
    let dir = tempfile::tempdir().unwrap();
    let replay = |args: &[&str]| {
        let (code, stdout, stderr, _) = fdlab_within_in(dir.path(), args, BOUND);
        assert_eq!(code, Some(0), "{args:?}: {stderr}");
        stdout
    };
    let one = replay(&["replay", "crash-mesh", "--seed", "1"]);
    let two = replay(&["replay", "crash-mesh", "--seed", "2"]);
    assert!(one.contains("replay-out/crash-mesh-1/trace.csv"), "{one}");
    assert!(two.contains("replay-out/crash-mesh-2/trace.csv"), "{two}");
    let out = dir.path().join("replay-out");
    for d in ["crash-mesh-1", "crash-mesh-2"] {
        assert!(out.join(d).join("trace.csv").is_file(), "{d}");
    }
    // A membership scenario: one directory per judge too.
    let classic = replay(&[
        "replay",
        "orleans-crash",
        "--seed",
        "1",
        "--judge",
        "classic",
    ]);
    assert!(
        classic.contains("replay-out/orleans-crash-1-classic/"),
        "{classic}"
    );
    // The same replay again replaces its own directory, and only it.
    let again = replay(&["replay", "crash-mesh", "--seed", "1"]);
    assert!(
        again.contains("replay-out/crash-mesh-1/trace.csv"),
        "{again}"
    );
    let mut dirs: Vec<String> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    dirs.sort();
    assert_eq!(
        dirs,
        ["crash-mesh-1", "crash-mesh-2", "orleans-crash-1-classic"]
    );
    // A file's scenario is named by its stem; odd characters are replaced.
    let file = dir.path().join("my scenario.toml");
    std::fs::copy(
        concat!(env!("CARGO_MANIFEST_DIR"), "/scenarios/live/crash.toml"),
        &file,
    )
    .unwrap();
    let mine = replay(&["replay", "my scenario.toml", "--seed", "3"]);
    assert!(mine.contains("replay-out/my_scenario-3/"), "{mine}");
}
