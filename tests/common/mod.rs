//! What the end-to-end tests share: running the `fdlab` binary.
#![allow(dead_code)] // each test crate uses its own subset

use std::process::{Command, Output};

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
