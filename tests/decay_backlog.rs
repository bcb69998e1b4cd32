//! `dataflow-decay` with `ewma_samples = "skip-backlog"` on the built-in
//! `pipeline-freeze`: the backlog that a 30 s freeze leaves behind no longer
//! trips Failed once the freeze is over, and detection is unchanged.
//!
//! The scenario carries both `decay` (every interval feeds the estimate, the
//! default) and `decay-drain` (the option), which watch the same simulated
//! traffic; the reports crate's metrics judge them against the ground truth.

use fdlab_protocol::Verdict;
use fdlab_reports::metrics::{run_metrics, DetectorRun};
use fdlab_scenarios::builtin_scenario;
use fdlab_sim::engine::run;

/// Seeds simulated (the scenario has 50; a few suffice and keep a debug build quick).
const SEEDS: u64 = 10;

#[test]
fn skip_backlog_removes_the_false_failed_after_a_freeze() {
    let scenario = builtin_scenario("pipeline-freeze")
        .expect("built-in")
        .expect("valid");
    let index = |name: &str| {
        scenario
            .detectors
            .iter()
            .position(|d| d.name == name)
            .unwrap_or_else(|| panic!("pipeline-freeze has no detector {name}"))
    };
    let (literal, drain) = (index("decay"), index("decay-drain"));
    let mut failed = [0usize; 2];
    for seed in 1..=SEEDS {
        let (outcome, _) = run(&scenario, seed, false);
        let metrics = run_metrics(&outcome);
        let freeze_end = outcome.faults[0].window.end;
        let (a, b) = (&metrics.detectors[literal], &metrics.detectors[drain]);
        for (count, d) in failed.iter_mut().zip([a, b]) {
            let false_failed = false_failed(d);
            // Every one of them follows the freeze (with 1 s to spare).
            for &start in &false_failed {
                assert!(
                    start >= freeze_end,
                    "seed {seed}: {} at {start:?}",
                    d.detector
                );
                assert!(
                    start.as_secs_f64() < freeze_end.as_secs_f64() + 1.0,
                    "seed {seed}: {} at {start:?}",
                    d.detector
                );
            }
            *count += false_failed.len();
        }
        // The option changes nothing before a stream's first Failed verdict:
        // the freeze is detected at the same instants by both.
        let instants = |d: &DetectorRun| {
            d.detections
                .iter()
                .map(|x| (x.monitor, x.target, x.suspect_at, x.failed_at))
                .collect::<Vec<_>>()
        };
        assert_eq!(instants(a), instants(b), "seed {seed}");
        assert!(b.detections.iter().all(|x| x.failed_at.is_some()));
    }
    eprintln!("false Failed over {SEEDS} seeds, every-interval / skip-backlog: {failed:?}");
    assert!(
        failed[0] > 0,
        "every-interval decay had no false Failed: {failed:?}"
    );
    assert_eq!(failed[1], 0, "skip-backlog decay: {failed:?}");
}

/// Starts of the mistakes (Suspect or Failed verdicts when the target must
/// not be detected) that reached Failed.
fn false_failed(d: &DetectorRun) -> Vec<fdlab_protocol::Nanos> {
    d.mistakes
        .iter()
        .filter(|m| m.worst == Verdict::Failed)
        .map(|m| m.start)
        .collect()
}
