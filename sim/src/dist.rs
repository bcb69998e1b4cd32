//! Sampling the duration distributions of a scenario.

use fdlab_protocol::Nanos;
use rand::RngExt;
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, LogNormal, Normal, Pareto};

use crate::scenario::Dist;

/// A distribution ready to sample (parameters converted once).
#[derive(Clone, Debug)]
pub enum Sampler {
    Constant(Nanos),
    Uniform(u64, u64),
    Normal(Normal<f64>),
    LogNormal(LogNormal<f64>),
    Pareto(Pareto<f64>),
    Empirical(Vec<Nanos>),
}

impl Sampler {
    /// Builds a sampler from a validated [`Dist`]; degenerate parameters
    /// (rejected by validation) fall back to a constant rather than panic.
    pub fn new(dist: &Dist) -> Sampler {
        match dist {
            Dist::Constant { value } => Sampler::Constant(*value),
            Dist::Uniform { min, max } => {
                Sampler::Uniform(min.as_nanos(), max.as_nanos().max(min.as_nanos()))
            }
            Dist::Normal { mean, std_dev } => {
                Normal::new(mean.as_nanos_f64(), std_dev.as_nanos_f64())
                    .map_or(Sampler::Constant(*mean), Sampler::Normal)
            }
            Dist::Lognormal { median, sigma } => {
                LogNormal::new(libm::log(median.as_nanos_f64().max(1.0)), *sigma)
                    .map_or(Sampler::Constant(*median), Sampler::LogNormal)
            }
            Dist::Pareto { scale, shape } => Pareto::new(scale.as_nanos_f64(), *shape)
                .map_or(Sampler::Constant(*scale), Sampler::Pareto),
            Dist::Empirical { samples, .. } if samples.is_empty() => Sampler::Constant(Nanos::ZERO),
            Dist::Empirical { samples, .. } => Sampler::Empirical(samples.clone()),
        }
    }

    /// One draw (never negative: a normal is truncated at zero).
    pub fn sample(&self, rng: &mut ChaCha8Rng) -> Nanos {
        match self {
            Sampler::Constant(v) => *v,
            Sampler::Uniform(lo, hi) if lo == hi => Nanos(*lo),
            Sampler::Uniform(lo, hi) => Nanos(rng.random_range(*lo..=*hi)),
            Sampler::Normal(d) => Nanos::from_nanos_f64(d.sample(rng).max(0.0)),
            Sampler::LogNormal(d) => Nanos::from_nanos_f64(d.sample(rng)),
            Sampler::Pareto(d) => Nanos::from_nanos_f64(d.sample(rng)),
            Sampler::Empirical(v) => v[rng.random_range(0..v.len())],
        }
    }

    /// Whether every draw is the same value (no randomness consumed).
    pub fn constant(&self) -> Option<Nanos> {
        match self {
            Sampler::Constant(v) => Some(*v),
            Sampler::Uniform(lo, hi) if lo == hi => Some(Nanos(*lo)),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::{Purpose, Streams};

    #[test]
    fn samples_stay_in_range_and_repeat() {
        let d = Sampler::new(&Dist::Uniform {
            min: Nanos::from_millis(5),
            max: Nanos::from_millis(20),
        });
        let draw = || {
            let mut rng = Streams::new(3).stream(Purpose::Workload, &[1]);
            (0..1000).map(|_| d.sample(&mut rng)).collect::<Vec<_>>()
        };
        let a = draw();
        assert_eq!(a, draw());
        assert!(a
            .iter()
            .all(|v| (Nanos::from_millis(5)..=Nanos::from_millis(20)).contains(v)));
        let n = Sampler::new(&Dist::Normal {
            mean: Nanos::from_millis(1),
            std_dev: Nanos::from_millis(5),
        });
        let mut rng = Streams::new(3).stream(Purpose::Workload, &[2]);
        let mean = (0..10_000)
            .map(|_| n.sample(&mut rng).as_millis_f64())
            .sum::<f64>()
            / 1e4;
        assert!(mean > 1.0, "truncation at zero raises the mean: {mean}");
    }
}
