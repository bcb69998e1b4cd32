//! What the end-to-end tests share: running the `fdlab` binary.
#![allow(dead_code)] // each test crate uses its own subset

use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Runs `fdlab` with `args`, without a CI job-summary file to append to.
pub fn fdlab(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_fdlab"))
        .args(args)
        .env_remove("GITHUB_STEP_SUMMARY")
        .output()
        .expect("runs the fdlab binary")
}

/// Output bytes as text (lossily: a failing test should still print them).
pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Runs `fdlab` with `args`, killed if it has not ended within `deadline`:
/// its exit code (`None`: killed), standard output and error, and how long
/// it took.
pub fn fdlab_within(args: &[&str], deadline: Duration) -> (Option<i32>, String, String, Duration) {
    let started = Instant::now();
    let mut child = Command::new(env!("CARGO_BIN_EXE_fdlab"))
        .args(args)
        .env_remove("GITHUB_STEP_SUMMARY")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("runs the fdlab binary");
    let mut killed = false;
    while child.try_wait().expect("waits for fdlab").is_none() {
        if started.elapsed() > deadline {
            let _ = child.kill();
            killed = true;
            break;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    let out = child.wait_with_output().expect("collects fdlab's output");
    let code = if killed { None } else { out.status.code() };
    (
        code,
        text(&out.stdout),
        text(&out.stderr),
        started.elapsed(),
    )
}
