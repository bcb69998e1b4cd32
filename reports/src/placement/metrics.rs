//! A placement scenario's figures per detector × distribution, pooled over
//! its seeds ([`PlacementSummary`], the row of `placement.csv`). The
//! definitions are in [`super`].

use fdlab_protocol::Nanos;
use fdlab_sim::placement::PlacementOutcome;

/// Nanoseconds in an hour.
const NANOS_PER_HOUR: f64 = 3.6e12;
/// Nanoseconds in a second.
const NANOS_PER_SECOND: f64 = 1e9;

/// One detector feeding one distribution, over every seed.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PlacementSummary {
    pub detector: String,
    pub distribution: String,
    pub runs: usize,
    /// Keys of the workload.
    pub keys: u32,
    pub true_declarations: u64,
    pub false_declarations: u64,
    pub moved_true: u64,
    pub moved_false: u64,
    pub moved_back_true: u64,
    pub moved_back_false: u64,
    pub requests: u64,
    pub misses: u64,
    pub stale: u64,
    pub failed: u64,
    /// Key-nanoseconds of owner disagreement between clients.
    pub disagreement: u128,
    /// Simulated time, summed over runs.
    pub run_time: u128,
    /// Server-time not crashed, summed over runs.
    pub healthy_server_time: u128,
    /// The detector's median time to Failed on a client–server pair (from
    /// the detectors' own report of the same runs).
    pub detect_p50: Option<Nanos>,
}

impl PlacementSummary {
    fn share(moved: u64, declarations: u64, keys: u32) -> Option<f64> {
        (declarations > 0 && keys > 0)
            .then(|| moved as f64 / (declarations as f64 * f64::from(keys)))
    }
    /// Mean share of the keys that changed owner in the declaring client,
    /// per true declaration.
    pub fn moved_per_true(&self) -> Option<f64> {
        Self::share(self.moved_true, self.true_declarations, self.keys)
    }
    pub fn moved_back_per_true(&self) -> Option<f64> {
        Self::share(self.moved_back_true, self.true_declarations, self.keys)
    }
    pub fn moved_per_false(&self) -> Option<f64> {
        Self::share(self.moved_false, self.false_declarations, self.keys)
    }
    pub fn moved_back_per_false(&self) -> Option<f64> {
        Self::share(self.moved_back_false, self.false_declarations, self.keys)
    }
    /// Cache misses, as a share of all requests.
    pub fn miss_share(&self) -> Option<f64> {
        (self.requests > 0).then(|| self.misses as f64 / self.requests as f64)
    }
    /// Stale reads, as a share of all requests.
    pub fn stale_share(&self) -> Option<f64> {
        (self.requests > 0).then(|| self.stale as f64 / self.requests as f64)
    }
    pub fn failed_share(&self) -> Option<f64> {
        (self.requests > 0).then(|| self.failed as f64 / self.requests as f64)
    }
    /// Key-seconds of disagreement per simulated hour.
    pub fn disagreement_per_hour(&self) -> Option<f64> {
        (self.run_time > 0).then(|| {
            self.disagreement as f64 / NANOS_PER_SECOND / (self.run_time as f64 / NANOS_PER_HOUR)
        })
    }
    /// Keys moved by false declarations per healthy server-hour: the cache
    /// a wrong declaration costs, summed over clients.
    pub fn keys_lost_per_healthy_server_hour(&self) -> Option<f64> {
        (self.healthy_server_time > 0)
            .then(|| self.moved_false as f64 / (self.healthy_server_time as f64 / NANOS_PER_HOUR))
    }
    /// Requests missed or failed per declaration (true and false): what a
    /// declaration costs the clients' requests.
    pub fn cost_per_declaration(&self) -> Option<f64> {
        let d = self.true_declarations + self.false_declarations;
        (d > 0).then(|| (self.misses + self.failed) as f64 / d as f64)
    }
}

/// Everything computed for one placement scenario.
#[derive(Clone, Debug, PartialEq)]
pub struct PlacementMetrics {
    pub scenario: String,
    pub servers: u32,
    pub clients: u32,
    pub keys: u32,
    pub seeds: usize,
    /// The clients follow their membership views (a membership scenario
    /// with `[placement]`): each "detector" is a judge, and its detection
    /// time the time it takes to declare a crash.
    pub by_view: bool,
    /// Detector-major, distributions in report order.
    pub summary: Vec<PlacementSummary>,
}

/// Pools the runs of one placement scenario (in seed order); `detect_p50`
/// gives each detector's median time to Failed, by name.
pub fn placement_metrics(
    scenario: &str,
    runs: &[PlacementOutcome],
    detect_p50: &[(String, Option<Nanos>)],
) -> PlacementMetrics {
    let mut summary: Vec<PlacementSummary> = Vec::new();
    for run in runs {
        for cell in &run.cells {
            let distribution = cell.distribution.map_or("", |d| d.name()).to_string();
            let at = summary
                .iter()
                .position(|s| s.detector == cell.detector && s.distribution == distribution);
            let s = match at {
                Some(i) => &mut summary[i],
                None => {
                    summary.push(PlacementSummary {
                        detector: cell.detector.clone(),
                        distribution,
                        keys: run.keys,
                        detect_p50: detect_p50
                            .iter()
                            .find(|(d, _)| *d == cell.detector)
                            .and_then(|(_, p)| *p),
                        ..PlacementSummary::default()
                    });
                    summary.last_mut().expect("just pushed")
                }
            };
            s.runs += 1;
            s.true_declarations += cell.true_declarations;
            s.false_declarations += cell.false_declarations;
            s.moved_true += cell.moved_true;
            s.moved_false += cell.moved_false;
            s.moved_back_true += cell.moved_back_true;
            s.moved_back_false += cell.moved_back_false;
            s.requests += cell.requests;
            s.misses += cell.misses;
            s.stale += cell.stale;
            s.failed += cell.failed;
            s.disagreement += cell.disagreement;
            s.run_time += u128::from(run.duration.as_nanos());
            s.healthy_server_time += u128::from(run.healthy_server_time.as_nanos());
        }
    }
    let first = runs.first();
    PlacementMetrics {
        scenario: scenario.to_string(),
        servers: first.map_or(0, |r| r.servers),
        clients: first.map_or(0, |r| r.clients),
        keys: first.map_or(0, |r| r.keys),
        // A membership scenario's runs are one judge each: count seeds.
        seeds: runs
            .iter()
            .map(|r| r.seed)
            .collect::<std::collections::BTreeSet<_>>()
            .len(),
        by_view: false,
        summary,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fdlab_protocol::placement::DistributionKind;
    use fdlab_sim::placement::PlacementCell;

    fn run(seed: u64, moved_false: u64) -> PlacementOutcome {
        PlacementOutcome {
            scenario: "s".into(),
            seed,
            duration: Nanos::from_secs(3_600),
            servers: 10,
            clients: 20,
            keys: 1_000,
            healthy_server_time: Nanos::from_secs(36_000),
            cells: vec![PlacementCell {
                detector: "phi".into(),
                distribution: Some(DistributionKind::Ketama),
                true_declarations: 20,
                false_declarations: 2,
                moved_true: 2_000,
                moved_false,
                requests: 1_000,
                misses: 10,
                stale: 5,
                failed: 30,
                disagreement: 5_000_000_000_000,
                ..PlacementCell::default()
            }],
        }
    }

    #[test]
    fn pooled_figures_by_hand() {
        let m = placement_metrics(
            "s",
            &[run(1, 100), run(2, 300)],
            &[("phi".into(), Some(Nanos::from_secs(3)))],
        );
        assert_eq!(m.summary.len(), 1);
        let s = &m.summary[0];
        assert_eq!(
            (s.runs, s.true_declarations, s.false_declarations),
            (2, 40, 4)
        );
        // 4,000 keys moved over 40 true declarations of 1,000 keys: 10%.
        assert_eq!(s.moved_per_true(), Some(0.1));
        // 400 keys over 4 false declarations: 10%.
        assert_eq!(s.moved_per_false(), Some(0.1));
        // 400 keys lost over 2 x 10 healthy server-hours.
        assert_eq!(s.keys_lost_per_healthy_server_hour(), Some(20.0));
        assert_eq!(s.miss_share(), Some(0.01));
        assert_eq!(s.stale_share(), Some(0.005));
        assert_eq!(s.failed_share(), Some(0.03));
        // 10,000 key-seconds over 2 hours.
        assert_eq!(s.disagreement_per_hour(), Some(5_000.0));
        // 80 missed or failed requests over 44 declarations.
        assert!((s.cost_per_declaration().unwrap() - 80.0 / 44.0).abs() < 1e-12);
        assert_eq!(s.detect_p50, Some(Nanos::from_secs(3)));
        assert_eq!(s.moved_back_per_true(), Some(0.0));
    }
}
