//! `fdlab bench --quick --only pipeline` end to end: the dataflow figures
//! come with the references that make them checkable on any machine (the
//! bare heap loop, the same loop on fdlab's queue, the detectors' own work
//! replayed alone) and the per-event budget they leave.

mod common;

use common::{fdlab, text};

/// The numbers of the line that starts (after its indent) with `label`.
fn numbers(out: &str, label: &str) -> Vec<f64> {
    let line = out
        .lines()
        .find(|l| l.trim_start().starts_with(label))
        .unwrap_or_else(|| panic!("no line {label:?} in:\n{out}"));
    line.split(|c: char| !(c.is_ascii_digit() || c == '.'))
        .filter_map(|w| w.trim_end_matches('.').parse().ok())
        .collect()
}

#[test]
fn the_pipeline_part_prints_its_references_and_budget() {
    let out = fdlab(&["bench", "--quick", "--only", "pipeline"]);
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout}{}", text(&out.stderr));
    for label in [
        "built-in dataflow scenarios, all",
        "their detectors alone, the runs' calls made again",
        "bare binary-heap loop, 100 pending, no work",
        "the same loop on fdlab's timing wheel, 100 pending",
        "per event:",
        "the rest of a run",
    ] {
        numbers(&stdout, label);
    }
    // per event: the runs R ns, their detectors' calls LO-HI ns, the heap
    // loop H ns: the bounds are ordered and below the runs' own time.
    let per_event = numbers(&stdout, "per event:");
    let [runs, low, high, heap] = per_event[..4] else {
        panic!("{per_event:?}");
    };
    assert!(low <= high && high < runs && heap > 0.0, "{per_event:?}");
    // The replay made as many calls as the recorded runs: some.
    let alone = numbers(&stdout, "their detectors alone");
    assert!(alone[0] > 0.0, "{alone:?}");
}

/// `fdlab bench --only madsim`: the workload in this process, then the
/// user's command on its file (`fdlab run`, a child process, its report
/// written), each beside the heap loop over as many events.
#[test]
fn the_madsim_part_times_fdlab_run_end_to_end() {
    let out = fdlab(&["bench", "--quick", "--only", "madsim"]);
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout}{}", text(&out.stderr));
    let run = numbers(&stdout, "the same, `fdlab run FILE --jobs 1`");
    // ... 1 thr N events in S s = R M events/s, peak memory M MiB.
    let [threads, events, secs, rate, peak] = run[run.len() - 5..] else {
        panic!("{run:?}");
    };
    assert_eq!(threads, 1.0, "{run:?}");
    assert!(
        events > 2.0 * 90.0 * 99_000.0 && secs > 0.0 && rate > 0.0,
        "{run:?}"
    );
    assert!(peak >= 1.0, "{run:?}");
    assert!(
        stdout.contains("`fdlab run` of the madsim workload ran at"),
        "{stdout}"
    );
}
