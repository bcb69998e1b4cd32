//! One run's metrics: per detector, every detection, mistake and recovery
//! over all its monitored pairs ([`DetectorRun`]), and the compact totals a
//! summary needs ([`RunTotals`]), also per link class.

use fdlab_protocol::Nanos;
use fdlab_sim::outcome::{DetectorTimeline, FaultRecord, RunOutcome};
use fdlab_sim::stats::{mean_nanos, DurationStats};

use super::classes::LinkClass;
use super::judge::{judge, Detection, Mistake, PairMetrics, Truth};
use super::rates::{per_second, rate_per_hour, ratio};
use super::recovery::Recovery;

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
    /// Pairs in order, then time order.
    pub recoveries: Vec<Recovery>,
    /// Sums over pairs, in nanoseconds.
    pub must_not_detect: u128,
    pub alive_must_not_detect: u128,
    pub healthy: u128,
    pub alive_healthy: u128,
    /// Sum of the durations of `mistakes`, in nanoseconds.
    pub mistake_time: u128,
    /// The part of it in false Failed mistakes.
    pub false_failed_time: u128,
    pub messages: u64,
    pub bytes: u64,
    /// `pairs` × run duration, in nanoseconds: the exposure of the overhead.
    pub pair_time: u128,
    /// The totals of the pairs of each link class present, in class order.
    pub classes: Vec<(LinkClass, RunTotals)>,
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
    /// Mistakes that reached Failed.
    pub fn false_failed(&self) -> usize {
        self.mistakes.iter().filter(|m| m.is_false_failed()).count()
    }
    /// Mistakes that never reached Failed.
    pub fn suspicions(&self) -> usize {
        self.mistakes.len() - self.false_failed()
    }
    /// False Failed per monitored-pair-hour of must-not-detect time.
    pub fn false_failed_rate(&self) -> Option<f64> {
        rate_per_hour(self.false_failed() as u128, self.must_not_detect)
    }
    /// Suspect-only mistakes per monitored-pair-hour of must-not-detect time.
    pub fn suspicion_rate(&self) -> Option<f64> {
        rate_per_hour(self.suspicions() as u128, self.must_not_detect)
    }
    /// Mean duration of a false Failed mistake (from its first non-Alive
    /// verdict to Alive).
    pub fn mean_false_failed(&self) -> Option<Nanos> {
        mean_nanos(self.false_failed_time, self.false_failed() as u128)
    }
    /// Mean duration of a Suspect-only mistake.
    pub fn mean_suspicion(&self) -> Option<Nanos> {
        mean_nanos(
            self.mistake_time - self.false_failed_time,
            self.suspicions() as u128,
        )
    }
    /// Recovery lags of the finished recoveries.
    pub fn recovery_stats(&self) -> Option<DurationStats> {
        DurationStats::from_samples(self.recoveries.iter().filter_map(|r| r.lag()))
    }
    /// Recoveries not finished before must-not-detect time ended.
    pub fn recovery_unfinished(&self) -> usize {
        self.recoveries
            .iter()
            .filter(|r| r.alive_at.is_none())
            .count()
    }
    /// P_A: the share of healthy time with an Alive verdict.
    pub fn query_accuracy(&self) -> Option<f64> {
        ratio(self.alive_healthy, self.healthy)
    }
    /// The share of all must-not-detect time with an Alive verdict, recovery
    /// lag included (what fdlab called P_A before healthy time).
    pub fn alive_share_must_not_detect(&self) -> Option<f64> {
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
    /// Mistakes that reached Failed, and their time (the rest are
    /// Suspect-only).
    pub false_failed: u64,
    pub false_failed_time: u128,
    /// One per recovery, in order: its lag (`None` = unfinished).
    pub recovery: Vec<Option<Nanos>>,
    pub must_not_detect: u128,
    pub alive_must_not_detect: u128,
    pub healthy: u128,
    pub alive_healthy: u128,
    pub messages: u64,
    pub bytes: u64,
    pub pair_time: u128,
}

impl RunTotals {
    /// Adds one pair's record (`m`, judged on `timeline` in a run of
    /// `duration`).
    fn add_pair(&mut self, m: &PairMetrics, timeline: &DetectorTimeline, duration: Nanos) {
        self.pairs += 1;
        self.failed
            .extend(m.detections.iter().map(|d| d.failed_delay()));
        self.suspect
            .extend(m.detections.iter().map(|d| d.suspect_delay()));
        self.mistakes += m.mistakes.len() as u64;
        for x in &m.mistakes {
            let time = u128::from(x.duration().0);
            self.mistake_time += time;
            if x.is_false_failed() {
                self.false_failed += 1;
                self.false_failed_time += time;
            }
        }
        self.recovery.extend(m.recoveries.iter().map(|r| r.lag()));
        self.must_not_detect += u128::from(m.must_not_detect.0);
        self.alive_must_not_detect += u128::from(m.alive_must_not_detect.0);
        self.healthy += u128::from(m.healthy.0);
        self.alive_healthy += u128::from(m.alive_healthy.0);
        self.messages = self.messages.saturating_add(timeline.messages);
        self.bytes = self.bytes.saturating_add(timeline.bytes);
        self.pair_time += u128::from(duration.0);
    }
}

impl DetectorRun {
    pub fn totals(&self) -> RunTotals {
        RunTotals {
            pairs: self.pairs,
            failed: self.detections.iter().map(|d| d.failed_delay()).collect(),
            suspect: self.detections.iter().map(|d| d.suspect_delay()).collect(),
            mistakes: self.mistakes.len() as u64,
            mistake_time: self.mistake_time,
            false_failed: self.false_failed() as u64,
            false_failed_time: self.false_failed_time,
            recovery: self.recoveries.iter().map(|r| r.lag()).collect(),
            must_not_detect: self.must_not_detect,
            alive_must_not_detect: self.alive_must_not_detect,
            healthy: self.healthy,
            alive_healthy: self.alive_healthy,
            messages: self.messages,
            bytes: self.bytes,
            pair_time: self.pair_time,
        }
    }

    /// Adds one pair's record, judged on `timeline` in a run of `duration`,
    /// to the detector's figures and to those of its link `class`.
    fn add_pair(
        &mut self,
        class: LinkClass,
        m: PairMetrics,
        timeline: &DetectorTimeline,
        duration: Nanos,
    ) {
        let position = match self.classes.iter().position(|(c, _)| *c == class) {
            Some(i) => i,
            None => {
                self.classes.push((class, RunTotals::default()));
                self.classes.sort_by_key(|(c, _)| *c);
                self.classes
                    .iter()
                    .position(|(c, _)| *c == class)
                    .unwrap_or(0)
            }
        };
        self.classes[position].1.add_pair(&m, timeline, duration);
        self.pairs += 1;
        for x in &m.mistakes {
            let time = u128::from(x.duration().0);
            self.mistake_time += time;
            if x.is_false_failed() {
                self.false_failed_time += time;
            }
        }
        self.detections.extend(m.detections);
        self.mistakes.extend(m.mistakes);
        self.recoveries.extend(m.recoveries);
        self.must_not_detect += u128::from(m.must_not_detect.0);
        self.alive_must_not_detect += u128::from(m.alive_must_not_detect.0);
        self.healthy += u128::from(m.healthy.0);
        self.alive_healthy += u128::from(m.alive_healthy.0);
        self.messages = self.messages.saturating_add(timeline.messages);
        self.bytes = self.bytes.saturating_add(timeline.bytes);
        self.pair_time += u128::from(duration.0);
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
                d.add_pair(LinkClass::of(run, pair), m, timeline, duration);
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
