//! One run's metrics: per detector, every detection and mistake over all its
//! monitored pairs ([`DetectorRun`]), and the compact totals a summary needs
//! ([`RunTotals`]).

use fdlab_protocol::Nanos;
use fdlab_sim::outcome::{FaultRecord, RunOutcome};
use fdlab_sim::stats::{mean_nanos, DurationStats};

use super::judge::{judge, Detection, Mistake, Truth};
use super::rates::{per_second, rate_per_hour, ratio};

/// One detector's record over all pairs of one run.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DetectorRun {
    pub detector: String,
    /// Pairs that have a timeline for this detector.
    pub pairs: u64,
    /// Pairs in order, windows in each pair's order.
    pub detections: Vec<Detection>,
    /// Pairs in order, then time order.
    pub mistakes: Vec<Mistake>,
    /// Sums over pairs, in nanoseconds.
    pub must_not_detect: u128,
    pub alive_must_not_detect: u128,
    /// Sum of the durations of `mistakes`, in nanoseconds.
    pub mistake_time: u128,
    pub messages: u64,
    pub bytes: u64,
    /// `pairs` × run duration, in nanoseconds: the exposure of the overhead.
    pub pair_time: u128,
}

impl DetectorRun {
    pub fn failed_stats(&self) -> Option<DurationStats> {
        DurationStats::from_samples(self.detections.iter().filter_map(|d| d.failed_delay()))
    }
    pub fn suspect_stats(&self) -> Option<DurationStats> {
        DurationStats::from_samples(self.detections.iter().filter_map(|d| d.suspect_delay()))
    }
    pub fn failed_missed(&self) -> usize {
        self.detections
            .iter()
            .filter(|d| d.failed_at.is_none())
            .count()
    }
    pub fn suspect_missed(&self) -> usize {
        self.detections
            .iter()
            .filter(|d| d.suspect_at.is_none())
            .count()
    }
    /// λ_M, mistakes per monitored-pair-hour of must-not-detect time.
    pub fn mistake_rate(&self) -> Option<f64> {
        rate_per_hour(self.mistakes.len() as u128, self.must_not_detect)
    }
    /// T_M.
    pub fn mean_mistake(&self) -> Option<Nanos> {
        mean_nanos(self.mistake_time, self.mistakes.len() as u128)
    }
    /// P_A.
    pub fn query_accuracy(&self) -> Option<f64> {
        ratio(self.alive_must_not_detect, self.must_not_detect)
    }
    pub fn messages_per_pair_second(&self) -> Option<f64> {
        per_second(self.messages as u128, self.pair_time)
    }
    pub fn bytes_per_pair_second(&self) -> Option<f64> {
        per_second(self.bytes as u128, self.pair_time)
    }
}

/// The metrics of one run (one seed), with what the output files need to name
/// nodes and faults.
#[derive(Clone, Debug, PartialEq)]
pub struct RunMetrics {
    pub seed: u64,
    pub duration: Nanos,
    pub nodes: Vec<String>,
    pub faults: Vec<FaultRecord>,
    /// Simulation events processed.
    pub events: u64,
    /// In the scenario's detector order.
    pub detectors: Vec<DetectorRun>,
}

impl RunMetrics {
    /// A node's name, or its index if the run does not name it.
    pub fn node_name(&self, node: u32) -> String {
        match self.nodes.get(node as usize) {
            Some(name) => name.clone(),
            None => node.to_string(),
        }
    }
}

/// What a detector's summary needs of one run: its detection delays and its
/// totals. The compact form of [`DetectorRun`] that a sweep keeps (and
/// stores on disk) per point and seed, so that summaries computed from it,
/// in one process or merged from many, are the same to the bit.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RunTotals {
    pub pairs: u64,
    /// One per judged must-detect window, in order: the delay to Failed
    /// (`None` = missed).
    pub failed: Vec<Option<Nanos>>,
    /// The same windows: the delay to Suspect.
    pub suspect: Vec<Option<Nanos>>,
    pub mistakes: u64,
    pub mistake_time: u128,
    pub must_not_detect: u128,
    pub alive_must_not_detect: u128,
    pub messages: u64,
    pub bytes: u64,
    pub pair_time: u128,
}

impl DetectorRun {
    pub fn totals(&self) -> RunTotals {
        RunTotals {
            pairs: self.pairs,
            failed: self.detections.iter().map(|d| d.failed_delay()).collect(),
            suspect: self.detections.iter().map(|d| d.suspect_delay()).collect(),
            mistakes: self.mistakes.len() as u64,
            mistake_time: self.mistake_time,
            must_not_detect: self.must_not_detect,
            alive_must_not_detect: self.alive_must_not_detect,
            messages: self.messages,
            bytes: self.bytes,
            pair_time: self.pair_time,
        }
    }
}

/// Computes every detector's metrics for one run.
pub fn run_metrics(run: &RunOutcome) -> RunMetrics {
    let duration = run.duration;
    let truths: Vec<Truth> = run.pairs.iter().map(|p| Truth::new(duration, p)).collect();
    let detectors = run
        .detectors
        .iter()
        .enumerate()
        .map(|(index, name)| {
            let mut d = DetectorRun {
                detector: name.clone(),
                ..DetectorRun::default()
            };
            for (pair, truth) in run.pairs.iter().zip(&truths) {
                let Some(timeline) = pair.detectors.get(index) else {
                    continue;
                };
                let m = judge(duration, pair, truth, timeline);
                d.pairs += 1;
                d.detections.extend(m.detections);
                d.mistake_time += m
                    .mistakes
                    .iter()
                    .map(|x| u128::from(x.duration().0))
                    .sum::<u128>();
                d.mistakes.extend(m.mistakes);
                d.must_not_detect += u128::from(m.must_not_detect.0);
                d.alive_must_not_detect += u128::from(m.alive_must_not_detect.0);
                d.messages = d.messages.saturating_add(timeline.messages);
                d.bytes = d.bytes.saturating_add(timeline.bytes);
                d.pair_time += u128::from(duration.0);
            }
            d
        })
        .collect();
    RunMetrics {
        seed: run.seed,
        duration,
        nodes: run.nodes.clone(),
        faults: run.faults.clone(),
        events: run.events,
        detectors,
    }
}
