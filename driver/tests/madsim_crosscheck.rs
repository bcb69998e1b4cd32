//! madsim cross-check (only under `--cfg madsim`: run `cargo simtest`).
//!
//! The detectors of `fdlab-protocol`, unchanged, driven by `fdlab_driver::Node`
//! inside madsim 0.2.34, must give the same detection times, recovery times
//! and mistake counts, as distributions over many seeds, as fdlab's own
//! simulator gives for the equivalent scenario (`crosscheck/mod.rs` explains
//! the equivalence and the tolerances). Seeds: `MADSIM_TEST_SEED`,
//! `MADSIM_TEST_NUM`.
#![cfg(madsim)]

mod crosscheck;

use crosscheck::{madsim_side, Spec, CRASH, LOSS, PARTITION, PAUSE};
use std::future::Future;

use madsim::runtime::Runtime;

#[test]
fn a_crash_is_detected_alike() {
    crosscheck::cross_check(&CRASH, &["fixed-1s/3s", "phi-akka", "phi-100ms"]);
}

#[test]
fn a_stop_the_world_pause_is_detected_and_recovered_alike() {
    crosscheck::cross_check(&PAUSE, &["fixed-1s/3s", "phi-akka", "phi-100ms"]);
}

#[test]
fn an_isolating_partition_is_detected_and_healed_alike() {
    crosscheck::cross_check(&PARTITION, &["fixed-1s/3s", "phi-akka", "phi-100ms"]);
}

#[test]
fn loss_makes_the_same_mistakes() {
    crosscheck::cross_check(&LOSS, &["phi-100ms"]);
}

/// madsim's determinism check (`Runtime::check_determinism`, what
/// `MADSIM_TEST_CHECK_DETERMINISM` turns on for `#[madsim::test]`): each
/// scenario runs twice with one seed and every random draw is compared; then
/// a third run must give the same timelines.
#[test]
fn every_scenario_is_deterministic_under_madsim() {
    fn check<F>(spec: &Spec, f: fn() -> F)
    where
        F: Future<Output = crosscheck::Timelines> + 'static,
    {
        let seed = crosscheck::seeds().start;
        let checked = Runtime::check_determinism(seed, madsim_side::config(spec), f);
        assert_eq!(checked, madsim_side::run(spec, seed), "{}", spec.name);
        assert_ne!(
            checked,
            madsim_side::run(spec, seed + 1),
            "{}: another seed, other phases",
            spec.name
        );
    }
    check(&CRASH, || madsim_side::scenario(CRASH));
    check(&PAUSE, || madsim_side::scenario(PAUSE));
    check(&PARTITION, || madsim_side::scenario(PARTITION));
    check(&LOSS, || madsim_side::scenario(LOSS));
}

/// The same crash under madsim's own test harness: every seed of
/// `MADSIM_TEST_NUM` runs as its own test, and `MADSIM_TEST_CHECK_DETERMINISM`
/// works as documented. Each run must land within the analytic bounds:
/// fixed 1 s / 3 s detects 2–3 s after the crash (plus at most 10 ms of
/// latency); phi (Akka defaults) at phi = 8, about 4.52 s after the last
/// heartbeat (mean 1 s + 3 s acceptable pause + 5.23 sigma of 100 ms), so
/// 3.5–4.55 s after the crash; phi with 100 ms heartbeats about 3.63 s after
/// the last one, so 3.5–3.65 s.
#[madsim::test]
async fn every_crash_lands_within_the_analytic_bounds() {
    let timelines = madsim_side::scenario(CRASH).await;
    let bounds = [(2.0, 3.011), (3.5, 4.55), (3.5, 3.65)];
    for (d, (lo, hi)) in bounds.into_iter().enumerate() {
        let m = crosscheck::measure(&CRASH, &timelines[d]);
        let detect = m.detect.unwrap_or(f64::NAN);
        assert!(
            detect > lo && detect <= hi && m.mistakes == 0,
            "detector {d}: detected {detect} s after the crash (bounds {lo}..{hi}), {} mistakes",
            m.mistakes
        );
    }
}
