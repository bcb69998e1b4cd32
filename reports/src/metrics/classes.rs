//! Figures per link class: where in a topology a monitored pair sits.
//!
//! Blended over all pairs, a dataflow's figures hide that its links are not
//! alike: a source's stream is timed by the source alone, a forwarding
//! stage's by the frames it receives and its own service. On `pipeline-kill`
//! (50 seeds), `dataflow-decay` makes 4,935 suspicions per pair-hour on source
//! links and 2,147 on forwarded ones, 2.3 times fewer; blended, 3,541. So
//! every figure is also given per class:
//!
//! - **source**: a dataflow pair whose target is in layer 0 (a source; its
//!   monitor is in layer 1);
//! - **forwarded**: a dataflow pair whose target is in a deeper layer (a stage
//!   that forwards what it receives);
//! - **mesh**: every pair of a mesh, one class.
//!
//! The classes partition the pairs, so counts and times of the classes add up
//! to the blended ones exactly; rates, shares and percentiles are those of
//! each class's own pairs (a blended rate is the classes' rates weighted by
//! their must-not-detect time).

use fdlab_sim::outcome::{PairOutcome, RunOutcome};

use super::run::{RunMetrics, RunTotals};
use super::summary::{summarize_totals, DetectorSummary};

/// The class of a monitored pair, in the order reports list them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum LinkClass {
    Mesh,
    Source,
    Forwarded,
}

impl LinkClass {
    /// The name used in `classes.csv` and the reports.
    pub const fn as_str(self) -> &'static str {
        match self {
            LinkClass::Mesh => "mesh",
            LinkClass::Source => "source",
            LinkClass::Forwarded => "forwarded",
        }
    }

    /// The class of `pair` in `run`, from the layer of its target
    /// ([`RunOutcome::layers`], empty for a mesh).
    pub fn of(run: &RunOutcome, pair: &PairOutcome) -> LinkClass {
        match run.layers.get(pair.target as usize) {
            None => LinkClass::Mesh,
            Some(0) => LinkClass::Source,
            Some(_) => LinkClass::Forwarded,
        }
    }
}

/// One detector's figures over the pairs of one class, all runs pooled.
#[derive(Clone, Debug, PartialEq)]
pub struct ClassSummary {
    pub class: LinkClass,
    /// Named after the detector.
    pub summary: DetectorSummary,
}

/// Per detector (in order of first appearance), one summary per class that
/// has pairs, in class order. Runs are taken in the order given; a run in
/// which a class has no pair does not count among that class's runs.
pub fn summarize_classes(runs: &[RunMetrics]) -> Vec<ClassSummary> {
    let mut names: Vec<&str> = Vec::new();
    for run in runs {
        for d in &run.detectors {
            if !names.contains(&d.detector.as_str()) {
                names.push(&d.detector);
            }
        }
    }
    let mut out = Vec::new();
    for name in names {
        for class in [LinkClass::Mesh, LinkClass::Source, LinkClass::Forwarded] {
            let totals: Vec<RunTotals> = runs
                .iter()
                .flat_map(|r| r.detectors.iter())
                .filter(|d| d.detector == name)
                .filter_map(|d| d.classes.iter().find(|(c, _)| *c == class))
                .map(|(_, t)| t.clone())
                .collect();
            if !totals.is_empty() {
                out.push(ClassSummary {
                    class,
                    summary: summarize_totals(name, &totals),
                });
            }
        }
    }
    out
}
