//! One detector over all runs of one scenario: the pooled figures and their
//! 95% intervals ([`DetectorSummary`], the row of `summary.csv`).

use fdlab_protocol::Nanos;
use fdlab_sim::stats::{mean_nanos, DurationStats};

use super::ci::{mean_ci95, MeanCi};
use super::rates::{mean_f64, per_second, rate_per_hour, ratio};
use super::run::{DetectorRun, RunMetrics, RunTotals};

/// One detector over all runs of one scenario: the row of `summary.csv`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DetectorSummary {
    pub detector: String,
    /// Runs (seeds) in which the detector took part.
    pub runs: usize,
    /// Monitored pairs summed over runs.
    pub pair_runs: u64,
    /// Must-detect windows judged (the denominator of `missed`).
    pub detect_windows: usize,
    /// Detection time to Failed, pooled over pairs and seeds.
    pub failed: Option<DurationStats>,
    /// 95% interval of the mean detection time to Failed (nanoseconds).
    pub failed_ci: Option<MeanCi>,
    pub failed_missed: usize,
    pub suspect: Option<DurationStats>,
    pub suspect_ci: Option<MeanCi>,
    pub suspect_missed: usize,
    /// Recovery lags (fault end to Alive), pooled over pairs and seeds.
    pub recovery: Option<DurationStats>,
    pub recovery_unfinished: usize,
    pub mistakes: usize,
    pub mistake_time: u128,
    /// Mistakes that reached Failed, and their time.
    pub false_failed: usize,
    pub false_failed_time: u128,
    pub must_not_detect: u128,
    pub alive_must_not_detect: u128,
    pub healthy: u128,
    pub alive_healthy: u128,
    /// 95% interval of λ_M (mistakes per pair-hour).
    pub mistake_rate_ci: Option<MeanCi>,
    /// 95% intervals of the false Failed and the Suspect-only mistakes per
    /// pair-hour (over the same runs as `mistake_rate_ci`).
    pub false_failed_rate_ci: Option<MeanCi>,
    pub suspicion_rate_ci: Option<MeanCi>,
    pub runs_with_mistake: usize,
    pub messages: u128,
    pub bytes: u128,
    pub pair_time: u128,
}

impl DetectorSummary {
    /// λ_M over all pairs and seeds.
    pub fn mistake_rate(&self) -> Option<f64> {
        rate_per_hour(self.mistakes as u128, self.must_not_detect)
    }
    /// T_M over all mistakes.
    pub fn mean_mistake(&self) -> Option<Nanos> {
        mean_nanos(self.mistake_time, self.mistakes as u128)
    }
    /// Suspect-only mistakes (suspicions).
    pub fn suspicions(&self) -> usize {
        self.mistakes - self.false_failed
    }
    /// False Failed per pair-hour of must-not-detect time.
    pub fn false_failed_rate(&self) -> Option<f64> {
        rate_per_hour(self.false_failed as u128, self.must_not_detect)
    }
    /// Suspect-only mistakes per pair-hour of must-not-detect time.
    pub fn suspicion_rate(&self) -> Option<f64> {
        rate_per_hour(self.suspicions() as u128, self.must_not_detect)
    }
    /// Mean duration of a false Failed mistake.
    pub fn mean_false_failed(&self) -> Option<Nanos> {
        mean_nanos(self.false_failed_time, self.false_failed as u128)
    }
    /// Mean duration of a Suspect-only mistake.
    pub fn mean_suspicion(&self) -> Option<Nanos> {
        mean_nanos(
            self.mistake_time - self.false_failed_time,
            self.suspicions() as u128,
        )
    }
    /// P_A: the share of healthy time (must-not-detect time outside recovery
    /// windows) with an Alive verdict.
    pub fn query_accuracy(&self) -> Option<f64> {
        ratio(self.alive_healthy, self.healthy)
    }
    /// The share of all must-not-detect time with an Alive verdict, recovery
    /// lag included.
    pub fn alive_share_must_not_detect(&self) -> Option<f64> {
        ratio(self.alive_must_not_detect, self.must_not_detect)
    }
    /// Share of runs with at least one mistake.
    pub fn share_runs_with_mistake(&self) -> Option<f64> {
        ratio(self.runs_with_mistake as u128, self.runs as u128)
    }
    pub fn messages_per_pair_second(&self) -> Option<f64> {
        per_second(self.messages, self.pair_time)
    }
    pub fn bytes_per_pair_second(&self) -> Option<f64> {
        per_second(self.bytes, self.pair_time)
    }
}

/// Aggregates per-run metrics by detector name (first appearance order).
/// Runs are taken in the order given.
pub fn summarize(runs: &[RunMetrics]) -> Vec<DetectorSummary> {
    let mut names: Vec<&str> = Vec::new();
    for run in runs {
        for d in &run.detectors {
            if !names.contains(&d.detector.as_str()) {
                names.push(&d.detector);
            }
        }
    }
    names
        .into_iter()
        .map(|name| {
            let entries: Vec<&DetectorRun> = runs
                .iter()
                .flat_map(|r| r.detectors.iter())
                .filter(|d| d.detector == name)
                .collect();
            summarize_detector(name, &entries)
        })
        .collect()
}

fn summarize_detector(name: &str, entries: &[&DetectorRun]) -> DetectorSummary {
    let totals: Vec<RunTotals> = entries.iter().map(|e| e.totals()).collect();
    summarize_totals(name, &totals)
}

/// Aggregates one detector's runs (in the order given) into its summary.
pub fn summarize_totals(name: &str, entries: &[RunTotals]) -> DetectorSummary {
    let mut s = DetectorSummary {
        detector: name.to_string(),
        runs: entries.len(),
        ..DetectorSummary::default()
    };
    let mut failed = Vec::new();
    let mut suspect = Vec::new();
    let mut failed_run_means = Vec::new();
    let mut suspect_run_means = Vec::new();
    let mut recovery = Vec::new();
    let mut run_rates = Vec::new();
    let mut false_failed_rates = Vec::new();
    let mut suspicion_rates = Vec::new();
    for e in entries {
        s.pair_runs += e.pairs;
        s.detect_windows += e.failed.len();
        let before = failed.len();
        failed.extend(e.failed.iter().flatten());
        if let Some(m) = mean_f64(&failed[before..]) {
            failed_run_means.push(m);
        }
        let before = suspect.len();
        suspect.extend(e.suspect.iter().flatten());
        if let Some(m) = mean_f64(&suspect[before..]) {
            suspect_run_means.push(m);
        }
        s.failed_missed += e.failed.iter().filter(|d| d.is_none()).count();
        s.suspect_missed += e.suspect.iter().filter(|d| d.is_none()).count();
        recovery.extend(e.recovery.iter().flatten());
        s.recovery_unfinished += e.recovery.iter().filter(|d| d.is_none()).count();
        s.mistakes += e.mistakes as usize;
        s.mistake_time += e.mistake_time;
        s.false_failed += e.false_failed as usize;
        s.false_failed_time += e.false_failed_time;
        s.must_not_detect += e.must_not_detect;
        s.alive_must_not_detect += e.alive_must_not_detect;
        s.healthy += e.healthy;
        s.alive_healthy += e.alive_healthy;
        let suspicions = e.mistakes.saturating_sub(e.false_failed);
        for (count, rates) in [
            (e.mistakes, &mut run_rates),
            (e.false_failed, &mut false_failed_rates),
            (suspicions, &mut suspicion_rates),
        ] {
            if let Some(rate) = rate_per_hour(u128::from(count), e.must_not_detect) {
                rates.push(rate);
            }
        }
        if e.mistakes > 0 {
            s.runs_with_mistake += 1;
        }
        s.messages += u128::from(e.messages);
        s.bytes += u128::from(e.bytes);
        s.pair_time += e.pair_time;
    }
    s.failed = DurationStats::from_samples(failed);
    s.suspect = DurationStats::from_samples(suspect);
    s.recovery = DurationStats::from_samples(recovery);
    s.failed_ci = mean_ci95(&failed_run_means);
    s.suspect_ci = mean_ci95(&suspect_run_means);
    s.mistake_rate_ci = mean_ci95(&run_rates);
    s.false_failed_rate_ci = mean_ci95(&false_failed_rates);
    s.suspicion_rate_ci = mean_ci95(&suspicion_rates);
    s
}
