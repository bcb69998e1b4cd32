//! Detector scores over time for one monitored pair, for the timeline plot of
//! `fdlab replay` (which picks the pair from the run's
//! [`crate::plan::RunPlan`] before it runs).
//!
//! The engine hands the sampler every detector of the chosen pair after each
//! input it applied ([`ScoreSampler::observe`]); nothing else changes a
//! detector's state, so between two observations its score at any instant is
//! a pure function of the state kept from the earlier one (`score(&self, now)`
//! is a getter). The sampler keeps a copy of that state and, at the next
//! observation, evaluates it on a regular grid of true time in between, and at
//! the instant itself (the value just before the input: phi's peak before a
//! heartbeat resets it). The curve is thus exact at every grid point and every
//! input, with no extra simulation events, and only in replays: a run without
//! a sampler pays nothing (the engine's observer is a type parameter).

use fdlab_protocol::{Detector, FailureDetector, Nanos};

use crate::clock::Clock;

/// Grid points per run: about one per pixel column of a wide chart.
pub const GRID_POINTS: u64 = 2_000;

/// One detector's score over the run, in true time order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ScoreSeries {
    /// `(true time, score)`; several samples may share an instant (before and
    /// after an input).
    pub samples: Vec<(Nanos, f64)>,
}

/// A detector's state as of its last observation.
struct Snapshot {
    at: Nanos,
    detector: Detector,
    clock: Clock,
}

/// Collects the scores of every detector of one pair during one run.
pub struct ScoreSampler {
    pair: (u32, u32),
    step: Nanos,
    last: Vec<Option<Snapshot>>,
    series: Vec<ScoreSeries>,
}

impl ScoreSampler {
    /// A sampler for `pair` = (monitor, target) with `detectors` detectors,
    /// on a grid of [`GRID_POINTS`] over a run of `duration`.
    pub fn new(pair: (u32, u32), detectors: usize, duration: Nanos) -> ScoreSampler {
        ScoreSampler {
            pair,
            step: Nanos((duration.as_nanos() / GRID_POINTS).max(1)),
            last: (0..detectors).map(|_| None).collect(),
            series: vec![ScoreSeries::default(); detectors],
        }
    }

    /// The pair this sampler draws.
    pub fn pair(&self) -> (u32, u32) {
        self.pair
    }

    /// Detector `det` of `pair` has just handled an input at true time `now`;
    /// `clock` is its monitor's clock. Ignores other pairs.
    pub fn observe(
        &mut self,
        pair: (u32, u32),
        det: u16,
        now: Nanos,
        clock: Clock,
        detector: &Detector,
    ) {
        let d = usize::from(det);
        if pair != self.pair || d >= self.series.len() {
            return;
        }
        let samples = &mut self.series[d].samples;
        if let Some(old) = &self.last[d] {
            grid(samples, old, self.step, now);
            samples.push((now, old.detector.score(old.clock.local(now))));
        }
        let score = detector.score(clock.local(now));
        if samples.last() != Some(&(now, score)) {
            samples.push((now, score));
        }
        match &mut self.last[d] {
            // Reuses the snapshot's allocations (phi's sample window).
            Some(old) => {
                old.at = now;
                old.detector.clone_from(detector);
                old.clock = clock;
            }
            slot @ None => {
                *slot = Some(Snapshot {
                    at: now,
                    detector: detector.clone(),
                    clock,
                })
            }
        }
    }

    /// The series, one per detector in scenario order, with the grid filled up
    /// to `end` (the end of the run).
    pub fn finish(mut self, end: Nanos) -> Vec<ScoreSeries> {
        for (series, last) in self.series.iter_mut().zip(&self.last) {
            if let Some(old) = last {
                grid(&mut series.samples, old, self.step, end);
                series
                    .samples
                    .push((end, old.detector.score(old.clock.local(end))));
            }
        }
        self.series
    }
}

/// Pushes the scores of `old` at the grid points strictly between `old.at`
/// and `until`.
fn grid(samples: &mut Vec<(Nanos, f64)>, old: &Snapshot, step: Nanos, until: Nanos) {
    let step = step.as_nanos().max(1);
    let mut t = (old.at.as_nanos() / step + 1).saturating_mul(step);
    while t < until.as_nanos() {
        let at = Nanos(t);
        samples.push((at, old.detector.score(old.clock.local(at))));
        t = t.saturating_add(step);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fdlab_protocol::phi::PhiAccrualConfig;
    use fdlab_protocol::DetectorConfig;

    const PAIR: (u32, u32) = (0, 1);

    #[test]
    fn samples_are_exact_between_and_at_inputs() {
        let config = DetectorConfig::PhiAccrual(PhiAccrualConfig::default());
        // Detectors see local time, 1 ms behind true time here.
        let clock = Clock::new(0.0, -1_000_000);
        let local = |t: Nanos| clock.local(t);
        let mut d = Detector::new(config, local(Nanos::ZERO)).unwrap();
        let end = Nanos::from_secs(20);
        // A grid step of 10 ms.
        let mut s = ScoreSampler::new(PAIR, 1, end);
        s.observe(PAIR, 0, Nanos::ZERO, clock, &d);
        let mut before = Vec::new();
        for k in 1..=5 {
            let t = Nanos::from_secs(k);
            before.push((t, d.score(local(t))));
            d.handle_heartbeat(local(t));
            s.observe(PAIR, 0, t, clock, &d);
            // Another pair and an unknown detector index are ignored.
            s.observe((1, 0), 0, t, clock, &d);
            s.observe(PAIR, 7, t, clock, &d);
        }
        let series = s.finish(end);
        assert_eq!(series.len(), 1);
        let samples = &series[0].samples;
        assert!(samples.windows(2).all(|w| w[0].0 <= w[1].0));
        // Before each heartbeat: the value of the state before it.
        for (t, v) in before {
            assert!(samples.contains(&(t, v)), "{t:?}");
        }
        // After the last heartbeat: the grid of the final state, to the end.
        let tail: Vec<_> = samples
            .iter()
            .filter(|x| x.0 > Nanos::from_secs(5))
            .collect();
        assert_eq!(tail.len(), 1_500);
        for &&(t, v) in &tail {
            assert_eq!(v, d.score(local(t)));
        }
        assert_eq!(tail.last().unwrap().0, end);
        assert!(tail.last().unwrap().1 > 8.0, "phi after 15 s of silence");
    }

    #[test]
    fn no_observation_no_samples() {
        let s = ScoreSampler::new(PAIR, 2, Nanos::from_secs(1));
        assert_eq!(s.pair(), PAIR);
        assert!(s
            .finish(Nanos::from_secs(1))
            .iter()
            .all(|x| x.samples.is_empty()));
    }
}
