//! Sampling the duration distributions of a scenario.
//!
//! Every transcendental function here is the pure-Rust `libm` crate's, never
//! the platform's: `f64::exp` and `f64::ln` come from the C library (glibc,
//! musl, macOS' libm, with or without FMA), which may round differently, and a
//! one-ulp difference in a latency can move an event across a timeout and
//! change a run. `rand_distr` would pick `std`'s functions as soon as any crate
//! of the build enables `num-traits/std` (plotters does), so the samplers
//! below draw their uniforms from the ChaCha stream and do the rest with
//! `libm`: a standard normal by Marsaglia's polar method (Marsaglia & Bray,
//! "A convenient method for generating normal variables", SIAM Review 1964),
//! a log-normal as its exponential, a Pareto by inverting its CDF.

use fdlab_protocol::Nanos;
use rand::RngExt;
use rand_chacha::ChaCha8Rng;

use crate::scenario::Dist;

/// A distribution ready to sample (parameters converted once).
#[derive(Clone, Debug, PartialEq)]
pub enum Sampler {
    Constant(Nanos),
    Uniform(u64, u64),
    /// Mean and standard deviation, ns.
    Normal {
        mean: f64,
        sd: f64,
    },
    /// `ln` of the median (ns) and sigma.
    LogNormal {
        mu: f64,
        sigma: f64,
    },
    /// Scale (ns) and shape.
    Pareto {
        scale: f64,
        shape: f64,
    },
    Empirical(Vec<Nanos>),
}

/// A standard normal draw (Marsaglia's polar method; only `sqrt`, which IEEE
/// 754 rounds exactly, and `libm::log`).
pub fn standard_normal(rng: &mut ChaCha8Rng) -> f64 {
    loop {
        let u = 2.0 * rng.random::<f64>() - 1.0;
        let v = 2.0 * rng.random::<f64>() - 1.0;
        let s = u * u + v * v;
        if s > 0.0 && s < 1.0 {
            return u * (-2.0 * libm::log(s) / s).sqrt();
        }
    }
}

/// An exponential draw of mean `mean` (inverse CDF with `libm::log`; `u` in
/// (0, 1] keeps it finite).
pub fn exponential(rng: &mut ChaCha8Rng, mean: f64) -> f64 {
    let u = 1.0 - rng.random::<f64>();
    -mean * libm::log(u)
}

impl Sampler {
    /// Builds a sampler from a validated [`Dist`]; degenerate parameters
    /// (rejected by validation) fall back to a constant rather than panic.
    pub fn new(dist: &Dist) -> Sampler {
        let finite = |x: f64| x.is_finite();
        match dist {
            Dist::Constant { value } => Sampler::Constant(*value),
            Dist::Uniform { min, max } => {
                Sampler::Uniform(min.as_nanos(), max.as_nanos().max(min.as_nanos()))
            }
            Dist::Normal { mean, std_dev } => {
                let sd = std_dev.as_nanos_f64();
                if finite(sd) && sd >= 0.0 {
                    Sampler::Normal {
                        mean: mean.as_nanos_f64(),
                        sd,
                    }
                } else {
                    Sampler::Constant(*mean)
                }
            }
            Dist::Lognormal { median, sigma } => {
                if finite(*sigma) && *sigma >= 0.0 {
                    Sampler::LogNormal {
                        mu: libm::log(median.as_nanos_f64().max(1.0)),
                        sigma: *sigma,
                    }
                } else {
                    Sampler::Constant(*median)
                }
            }
            Dist::Pareto { scale, shape } => {
                if finite(*shape) && *shape > 0.0 && scale.as_nanos() > 0 {
                    Sampler::Pareto {
                        scale: scale.as_nanos_f64(),
                        shape: *shape,
                    }
                } else {
                    Sampler::Constant(*scale)
                }
            }
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
            Sampler::Normal { mean, sd } => {
                Nanos::from_nanos_f64((mean + sd * standard_normal(rng)).max(0.0))
            }
            Sampler::LogNormal { mu, sigma } => {
                Nanos::from_nanos_f64(libm::exp(mu + sigma * standard_normal(rng)))
            }
            Sampler::Pareto { scale, shape } => {
                // u in (0, 1]: the inverse CDF stays finite.
                let u = 1.0 - rng.random::<f64>();
                Nanos::from_nanos_f64(scale * libm::pow(u, -1.0 / shape))
            }
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
    fn samples_have_their_distribution_s_moments() {
        let mut rng = Streams::new(5).stream(Purpose::Workload, &[3]);
        let n = 200_000;
        let z: Vec<f64> = (0..n).map(|_| standard_normal(&mut rng)).collect();
        let mean = z.iter().sum::<f64>() / n as f64;
        let var = z.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / n as f64;
        assert!(
            mean.abs() < 0.01 && (var - 1.0).abs() < 0.01,
            "{mean} {var}"
        );
        let within = z.iter().filter(|x| x.abs() < 1.959_964).count() as f64 / n as f64;
        assert!((within - 0.95).abs() < 0.003, "{within}");
        // Log-normal: the median is the configured one.
        let d = Sampler::new(&Dist::Lognormal {
            median: Nanos::from_millis(2),
            sigma: 0.5,
        });
        let mut draws: Vec<Nanos> = (0..n).map(|_| d.sample(&mut rng)).collect();
        draws.sort_unstable();
        let median = draws[n / 2].as_millis_f64();
        assert!((median - 2.0).abs() < 0.02, "{median}");
        // Pareto: never below its scale; P(X > 2 scale) = 2^-shape.
        let p = Sampler::new(&Dist::Pareto {
            scale: Nanos::from_millis(1),
            shape: 2.0,
        });
        let draws: Vec<Nanos> = (0..n).map(|_| p.sample(&mut rng)).collect();
        assert!(draws.iter().all(|d| *d >= Nanos::from_millis(1)));
        let tail = draws.iter().filter(|d| **d > Nanos::from_millis(2)).count() as f64 / n as f64;
        assert!((tail - 0.25).abs() < 0.005, "{tail}");
    }

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
