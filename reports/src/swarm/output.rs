//! The files and the console summary of `fdlab swarm` (docs/swarm.md):
//!
//! - `swarm.csv`: one row per property × detector (or judge) violated,
//!   with its smallest reproducer;
//! - `violations.csv`: every violation of every run;
//! - `runs.csv`: every run, with the fault kinds it enabled;
//! - `minimal-<n>.toml`: the reproducers (written by the command).
//!
//! Everything here is a function of the runs and the reproducers alone
//! (no wall-clock figure), so the same swarm writes the same bytes for any
//! `--jobs`.

use std::io::{self, Write};

use fdlab_protocol::Nanos;
use fdlab_sim::outcome::FaultRecord;
use fdlab_sim::scenario::{Check, FaultKind};

use super::Violation;
use crate::tables::format::opt_ms;
use crate::tables::terminal::aligned;

pub const SWARM_CSV: &str = "swarm.csv";
pub const VIOLATIONS_CSV: &str = "violations.csv";
pub const SWARM_RUNS_CSV: &str = "runs.csv";

/// The name of the `n`-th reproducer (from 1).
pub fn minimal_file(n: usize) -> String {
    format!("minimal-{n}.toml")
}

/// Whether `name` is a reproducer's file name (`minimal-<digits>.toml`).
pub fn is_minimal_file(name: &str) -> bool {
    name.strip_prefix("minimal-")
        .and_then(|rest| rest.strip_suffix(".toml"))
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// One run of a swarm.
#[derive(Clone, Debug, PartialEq)]
pub struct SwarmRun {
    /// From 1, in seed order.
    pub run: u64,
    pub seed: u64,
    /// The fault kinds the run enabled.
    pub enabled: Vec<FaultKind>,
    /// Its faults as they happened (times resolved).
    pub faults: Vec<FaultRecord>,
    /// Simulated events (every judge's, in a membership scenario).
    pub events: u64,
    pub violations: Vec<Violation>,
}

/// A property violated by one detector or judge over a swarm, and its
/// smallest reproducer.
#[derive(Clone, Debug, PartialEq)]
pub struct Finding {
    /// The first violation of this kind, in run order.
    pub first: Violation,
    /// The run it came from, and its seed (the reproducer's too).
    pub run: u64,
    pub seed: u64,
    /// Runs that violated it, and violations in all.
    pub runs: u64,
    pub violations: u64,
    /// Faults of that run, and of the reproducer.
    pub faults: usize,
    pub minimal_faults: usize,
    /// Shrinking: candidates tried (runs), kept, and whether it reached a
    /// fixpoint (a time budget may stop it).
    pub tried: u64,
    pub kept: u64,
    pub complete: bool,
    /// The reproducer's file name and its violation, described.
    pub file: String,
    pub evidence: String,
    /// The `fdlab replay` command that shows it.
    pub replay: String,
}

const VIOLATIONS_HEADER: [&str; 15] = [
    "run",
    "seed",
    "property",
    "subject",
    "distribution",
    "monitor",
    "target",
    "at_ms",
    "observed_ms",
    "bound_ms",
    "fault",
    "fault_kind",
    "fault_target",
    "fault_start_ms",
    "fault_ms",
];

/// `violations.csv`.
pub fn write_violations(out: &mut dyn Write, runs: &[SwarmRun]) -> io::Result<()> {
    let mut w = csv::Writer::from_writer(out);
    w.write_record(VIOLATIONS_HEADER)?;
    for r in runs {
        for v in &r.violations {
            let fault = v.fault.and_then(|i| r.faults.get(i));
            w.write_record([
                r.run.to_string(),
                r.seed.to_string(),
                v.property.name().to_string(),
                v.subject.clone(),
                v.distribution.clone().unwrap_or_default(),
                v.monitor.clone().unwrap_or_default(),
                v.target.clone().unwrap_or_default(),
                opt_ms(Some(v.at)),
                opt_ms(v.observed),
                opt_ms(v.bound),
                v.fault.map(|i| i.to_string()).unwrap_or_default(),
                fault.map(|f| f.kind.name().to_string()).unwrap_or_default(),
                fault.map(|f| f.target.clone()).unwrap_or_default(),
                opt_ms(fault.map(|f| f.window.start)),
                opt_ms(fault.map(|f| f.window.end - f.window.start)),
            ])?;
        }
    }
    w.flush()
}

/// `runs.csv`.
pub fn write_runs(out: &mut dyn Write, runs: &[SwarmRun]) -> io::Result<()> {
    let mut w = csv::Writer::from_writer(out);
    w.write_record(["run", "seed", "kinds", "faults", "violations", "events"])?;
    for r in runs {
        let kinds: Vec<&str> = r.enabled.iter().map(|k| k.name()).collect();
        w.write_record([
            r.run.to_string(),
            r.seed.to_string(),
            kinds.join(" "),
            r.faults.len().to_string(),
            r.violations.len().to_string(),
            r.events.to_string(),
        ])?;
    }
    w.flush()
}

/// `swarm.csv`.
pub fn write_findings(out: &mut dyn Write, findings: &[Finding]) -> io::Result<()> {
    let mut w = csv::Writer::from_writer(out);
    w.write_record([
        "property",
        "subject",
        "distribution",
        "runs_violated",
        "violations",
        "first_run",
        "seed",
        "faults",
        "minimal_faults",
        "shrink_tried",
        "shrink_kept",
        "shrink_complete",
        "minimal_file",
        "evidence",
        "replay",
    ])?;
    for f in findings {
        w.write_record([
            f.first.property.name().to_string(),
            f.first.subject.clone(),
            f.first.distribution.clone().unwrap_or_default(),
            f.runs.to_string(),
            f.violations.to_string(),
            f.run.to_string(),
            f.seed.to_string(),
            f.faults.to_string(),
            f.minimal_faults.to_string(),
            f.tried.to_string(),
            f.kept.to_string(),
            f.complete.to_string(),
            f.file.clone(),
            f.evidence.clone(),
            f.replay.clone(),
        ])?;
    }
    w.flush()
}

/// The console summary: per property checked, its bound and each detector
/// or judge that violated it, with its reproducer; then each reproducer's
/// violation and replay command.
pub fn summary_table(checks: &[Check], runs: u64, findings: &[Finding]) -> String {
    let secs = |t: Nanos| format!("{} s", trim(t.as_secs_f64()));
    let mut rows: Vec<Vec<String>> = vec![[
        "property",
        "bound",
        "violated by",
        "runs",
        "first run (seed)",
        "faults -> minimal",
        "shrink runs",
        "reproducer",
    ]
    .iter()
    .map(|h| h.to_string())
    .collect()];
    for check in checks {
        let bound = check.bound.map_or_else(|| "-".to_string(), secs);
        let mine: Vec<&Finding> = findings
            .iter()
            .filter(|f| f.first.property == check.property)
            .collect();
        if mine.is_empty() {
            rows.push(vec![
                check.property.name().into(),
                bound.clone(),
                "held".into(),
                format!("0/{runs}"),
                String::new(),
                String::new(),
                String::new(),
                String::new(),
            ]);
        }
        for (i, f) in mine.iter().enumerate() {
            rows.push(vec![
                if i == 0 {
                    check.property.name().into()
                } else {
                    String::new()
                },
                if i == 0 { bound.clone() } else { String::new() },
                f.first.who(),
                format!("{}/{runs}", f.runs),
                format!("{} ({})", f.run, f.seed),
                format!(
                    "{} -> {}{}",
                    f.faults,
                    f.minimal_faults,
                    if f.complete { "" } else { " (cut short)" }
                ),
                f.tried.to_string(),
                f.file.clone(),
            ]);
        }
    }
    let mut out = aligned(&rows);
    for f in findings {
        out.push_str(&format!(
            "{}: {} by {}: {}\n  {}\n",
            f.file,
            f.first.property.name(),
            f.first.who(),
            f.evidence,
            f.replay
        ));
    }
    out
}

/// A number of seconds without trailing zeros (`30`, `1.5`).
fn trim(x: f64) -> String {
    let s = format!("{x:.3}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use fdlab_sim::outcome::Window;
    use fdlab_sim::scenario::{Expect, Property};

    fn violation() -> Violation {
        Violation {
            property: Property::NoFalseFailed,
            subject: "decay".into(),
            distribution: None,
            monitor: Some("s2.0".into()),
            target: Some("s1.0".into()),
            at: Nanos::from_millis(61_234),
            observed: Some(Nanos::from_millis(15)),
            bound: None,
            fault: Some(0),
        }
    }

    #[test]
    fn file_names_and_rows() {
        assert_eq!(minimal_file(3), "minimal-3.toml");
        assert!(is_minimal_file("minimal-12.toml"));
        assert!(!is_minimal_file("minimal-.toml") && !is_minimal_file("minimal-1.txt"));
        let faults = vec![FaultRecord {
            kind: FaultKind::Pause,
            target: "s1.0".into(),
            node: Some(2),
            held: vec![2],
            window: Window {
                start: Nanos::from_secs(30),
                end: Nanos::from_secs(61),
            },
            expect: Expect::Detect,
        }];
        let run = SwarmRun {
            run: 1,
            seed: 7,
            enabled: vec![FaultKind::Pause, FaultKind::Loss],
            faults: faults.clone(),
            events: 10,
            violations: vec![violation()],
        };
        let mut out = Vec::new();
        write_violations(&mut out, std::slice::from_ref(&run)).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert_eq!(
            text.lines().nth(1),
            Some("1,7,no_false_failed,decay,,s2.0,s1.0,61234.000,15.000,,0,pause,s1.0,30000.000,31000.000")
        );
        let mut out = Vec::new();
        write_runs(&mut out, &[run]).unwrap();
        assert!(String::from_utf8(out)
            .unwrap()
            .contains("\n1,7,pause loss,1,1,10\n"));
        assert_eq!(
            violation().describe(&faults),
            "s2.0 about s1.0: false Failed from 61.234 s for 0.015 s; fault: pause s1.0 at 30.000 s for 31.000 s"
        );
    }
}
