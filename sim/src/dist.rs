//! Sampling the duration distributions of a scenario.
//!
//! Every transcendental function here is the pure-Rust `libm` crate's, never
//! the platform's: `f64::exp` and `f64::ln` come from the C library (glibc,
//! musl, macOS' libm, with or without FMA), which may round differently, and a
//! one-ulp difference in a latency can move an event across a timeout and
//! change a run. `rand_distr` would pick `std`'s functions as soon as any crate
//! of the build enables `num-traits/std` (plotters does), so the samplers
//! below draw their uniforms from the ChaCha stream and do the rest with
//! `libm`: a standard normal by inverting its CDF with Wichura's AS 241, a
//! log-normal as its exponential, a Pareto and an exponential by inverting
//! their CDFs.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, OnceLock};

use fdlab_protocol::Nanos;
use rand::RngExt;
use rand_chacha::ChaCha8Rng;

use crate::scenario::Dist;

/// A distribution ready to sample (parameters converted once).
#[derive(Clone, Debug, PartialEq)]
pub enum Sampler {
    Constant(Nanos),
    Uniform(u64, u64),
    /// Mean and standard deviation, ns; draws from the shared standard
    /// normal table.
    Normal {
        mean: f64,
        sd: f64,
        table: Arc<QuantileTable>,
    },
    /// The median (ns) and the table of `exp(sigma z)` for the sigma.
    LogNormal {
        median: f64,
        table: Arc<QuantileTable>,
    },
    /// Scale (ns) and shape.
    Pareto {
        scale: f64,
        shape: f64,
    },
    Empirical(Vec<Nanos>),
}

/// Wichura's AS 241 (PPND16) coefficients, highest degree first, for
/// [`normal_quantile`]: `|p - 1/2| <= 0.425`, ...
#[allow(clippy::excessive_precision)] // the paper's digits, rounded by the compiler
const AS241_A: [f64; 8] = [
    2.509_080_928_730_122_672_7e3,
    3.343_057_558_358_812_810_5e4,
    6.726_577_092_700_870_085_3e4,
    4.592_195_393_154_987_145_7e4,
    1.373_169_376_550_946_112_5e4,
    1.971_590_950_306_551_442_7e3,
    1.331_416_678_917_843_774_5e2,
    3.387_132_872_796_366_608_0,
];
#[allow(clippy::excessive_precision)] // the paper's digits, rounded by the compiler
const AS241_B: [f64; 8] = [
    5.226_495_278_852_854_561_0e3,
    2.872_908_573_572_194_267_4e4,
    3.930_789_580_009_271_061_0e4,
    2.121_379_430_158_659_586_7e4,
    5.394_196_021_424_751_107_7e3,
    6.871_870_074_920_579_083_0e2,
    4.231_333_070_160_091_125_2e1,
    1.0,
];
/// ... a tail with `sqrt(-ln(min(p, 1-p))) <= 5`, ...
#[allow(clippy::excessive_precision)] // the paper's digits, rounded by the compiler
const AS241_C: [f64; 8] = [
    7.745_450_142_783_414_076_4e-4,
    2.272_384_498_926_918_458_33e-2,
    2.417_807_251_774_506_117_7e-1,
    1.270_458_252_452_368_382_58,
    3.647_848_324_763_204_605_04,
    5.769_497_221_460_691_405_5,
    4.630_337_846_156_545_295_9,
    1.423_437_110_749_683_577_34,
];
#[allow(clippy::excessive_precision)] // the paper's digits, rounded by the compiler
const AS241_D: [f64; 8] = [
    1.050_750_071_644_416_843_24e-9,
    5.475_938_084_995_344_946e-4,
    1.519_866_656_361_645_719_66e-2,
    1.481_039_764_274_800_745_9e-1,
    6.897_673_349_851_000_045_5e-1,
    1.676_384_830_183_803_849_4,
    2.053_191_626_637_758_821_87,
    1.0,
];
/// ... and the far tail.
#[allow(clippy::excessive_precision)] // the paper's digits, rounded by the compiler
const AS241_E: [f64; 8] = [
    2.010_334_399_292_288_132_65e-7,
    2.711_555_568_743_487_578_15e-5,
    1.242_660_947_388_078_438_6e-3,
    2.653_218_952_657_612_309_3e-2,
    2.965_605_718_285_048_912_3e-1,
    1.784_826_539_917_291_335_8,
    5.463_784_911_164_114_369_9,
    6.657_904_643_501_103_777_2,
];
#[allow(clippy::excessive_precision)] // the paper's digits, rounded by the compiler
const AS241_F: [f64; 8] = [
    2.044_263_103_389_939_785_64e-15,
    1.421_511_758_316_445_888_7e-7,
    1.846_318_317_510_054_681_8e-5,
    7.868_691_311_456_132_591e-4,
    1.487_536_129_085_061_485_25e-2,
    1.369_298_809_227_358_053_1e-1,
    5.998_322_065_558_879_376_9e-1,
    1.0,
];

/// Horner's rule over coefficients highest degree first (plain multiply
/// and add: Rust never fuses them, so every platform rounds alike).
fn horner(coefficients: &[f64; 8], x: f64) -> f64 {
    coefficients.iter().fold(0.0, |acc, &c| acc * x + c)
}

/// The standard normal quantile of `p` in (0, 1), to about 1e-16 relative
/// (Wichura, "Algorithm AS 241: The percentage points of the normal
/// distribution", Applied Statistics 37(3), 1988): rational functions, and
/// `libm::log` with an exactly rounded `sqrt` in the tails.
pub fn normal_quantile(p: f64) -> f64 {
    let q = p - 0.5;
    if q.abs() <= 0.425 {
        let r = 0.180_625 - q * q;
        return q * horner(&AS241_A, r) / horner(&AS241_B, r);
    }
    let tail = if q < 0.0 { p } else { 1.0 - p };
    let r = (-libm::log(tail)).sqrt();
    let z = if r <= 5.0 {
        let r = r - 1.6;
        horner(&AS241_C, r) / horner(&AS241_D, r)
    } else {
        let r = r - 5.0;
        horner(&AS241_E, r) / horner(&AS241_F, r)
    };
    if q < 0.0 {
        -z
    } else {
        z
    }
}

/// A uniform draw in the open interval (0, 1): 53 random bits, centred in
/// their step, so neither end (whose quantile is infinite) can come out.
fn open_unit(rng: &mut ChaCha8Rng) -> f64 {
    const STEP: f64 = 1.0 / (1u64 << 53) as f64;
    ((rng.random::<u64>() >> 11) as f64 + 0.5) * STEP
}

/// Equal-probability steps of a [`QuantileTable`] (32 KiB of values).
const TABLE_STEPS: usize = 4096;
/// Draws in this many outermost steps on either side (0.4% each) are
/// computed exactly: the quantile curves too fast there for a straight line.
const EXACT_TAIL_STEPS: usize = 16;
/// Distinct log-normal sigmas whose tables a process keeps; more are built
/// per sampler (the same values, only slower to set up).
const MAX_CACHED_TABLES: usize = 64;

/// What a [`QuantileTable`] tabulates: a function of the standard normal
/// quantile `z`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Curve {
    /// `z` itself.
    StandardNormal,
    /// `exp(sigma z)`: a log-normal of median 1.
    LogNormal { sigma: f64 },
}

impl Curve {
    fn at(self, p: f64) -> f64 {
        let z = normal_quantile(p);
        match self {
            Curve::StandardNormal => z,
            Curve::LogNormal { sigma } => libm::exp(sigma * z),
        }
    }
}

/// A quantile function tabulated at equal steps of probability and read by
/// linear interpolation: the classic table-lookup inversion method (Devroye,
/// *Non-Uniform Random Variate Generation*, 1986, §II.2). A draw costs one
/// uniform, a multiply and two loads instead of AS 241's rational functions
/// and an `exp` (together about a fifth of a pipeline simulation's time);
/// the tails, where a line would be too coarse, fall back to the exact
/// quantile. Interpolation errs (relative) by under 3e-6 between the 5th and
/// 95th percentiles and under 2.5e-4 at the last interpolated step for a
/// sigma up to 1 (a 1 ms median latency moves by at most a quarter of a
/// microsecond): far below any latency model's own uncertainty, and, like
/// everything here, the same bits on every platform.
#[derive(Debug, PartialEq)]
pub struct QuantileTable {
    curve: Curve,
    /// The curve at `k / TABLE_STEPS` for `k` in
    /// `EXACT_TAIL_STEPS..=TABLE_STEPS - EXACT_TAIL_STEPS`.
    values: Box<[f64]>,
}

impl QuantileTable {
    fn new(curve: Curve) -> QuantileTable {
        let values = (EXACT_TAIL_STEPS..=TABLE_STEPS - EXACT_TAIL_STEPS)
            .map(|k| curve.at(k as f64 / TABLE_STEPS as f64))
            .collect();
        QuantileTable { curve, values }
    }

    /// The shared table of the standard normal.
    fn standard_normal() -> Arc<QuantileTable> {
        static TABLE: OnceLock<Arc<QuantileTable>> = OnceLock::new();
        TABLE
            .get_or_init(|| Arc::new(QuantileTable::new(Curve::StandardNormal)))
            .clone()
    }

    /// The table of a log-normal of median 1, shared by every sampler of the
    /// process with the same sigma (a run builds its samplers per part).
    fn lognormal(sigma: f64) -> Arc<QuantileTable> {
        static TABLES: Mutex<BTreeMap<u64, Arc<QuantileTable>>> = Mutex::new(BTreeMap::new());
        let mut tables = TABLES
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(t) = tables.get(&sigma.to_bits()) {
            return t.clone();
        }
        let table = Arc::new(QuantileTable::new(Curve::LogNormal { sigma }));
        if tables.len() < MAX_CACHED_TABLES {
            tables.insert(sigma.to_bits(), table.clone());
        }
        table
    }

    /// The curve at probability `p` in (0, 1).
    #[inline]
    pub fn quantile(&self, p: f64) -> f64 {
        let x = p * TABLE_STEPS as f64;
        // `as` saturates: a `p` outside (0, 1) lands in an exact tail. A
        // signed step: x86-64 converts f64 to and from i64 in one
        // instruction each, to and from u64 in several (the same value
        // here, where the step is below 2^12).
        let step = x as i64;
        const FIRST: i64 = EXACT_TAIL_STEPS as i64;
        const END: i64 = (TABLE_STEPS - EXACT_TAIL_STEPS) as i64;
        if !(FIRST..END).contains(&step) {
            return self.tail(p);
        }
        let i = (step - FIRST) as usize;
        let (lo, hi) = (self.values[i], self.values[i + 1]);
        lo + (hi - lo) * (x - step as f64)
    }

    /// The exact curve, for a `p` in a tail (one draw in 128).
    #[cold]
    #[inline(never)]
    fn tail(&self, p: f64) -> f64 {
        self.curve.at(p)
    }

    /// One draw.
    #[inline]
    pub fn sample(&self, rng: &mut ChaCha8Rng) -> f64 {
        self.quantile(open_unit(rng))
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
                        table: QuantileTable::standard_normal(),
                    }
                } else {
                    Sampler::Constant(*mean)
                }
            }
            Dist::Lognormal { median, sigma } => {
                if finite(*sigma) && *sigma >= 0.0 {
                    Sampler::LogNormal {
                        median: median.as_nanos_f64().max(1.0),
                        table: QuantileTable::lognormal(*sigma),
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

    /// One draw (never negative: a normal is truncated at zero). Inlined so
    /// that each call site, which always has the same kind of sampler,
    /// branches on its own (one shared jump was mispredicted about a third
    /// of the time in the pipeline); the rarer kinds are drawn out of line.
    #[inline(always)]
    pub fn sample(&self, rng: &mut ChaCha8Rng) -> Nanos {
        match self {
            Sampler::Constant(v) => *v,
            Sampler::Uniform(lo, hi) if lo != hi => Nanos(rng.random_range(*lo..=*hi)),
            Sampler::LogNormal { median, table } => {
                Nanos::from_nanos_f64(median * table.sample(rng))
            }
            _ => self.sample_other(rng),
        }
    }

    #[inline(never)]
    fn sample_other(&self, rng: &mut ChaCha8Rng) -> Nanos {
        match self {
            Sampler::Constant(v) => *v,
            Sampler::Uniform(lo, hi) if lo == hi => Nanos(*lo),
            Sampler::Uniform(lo, hi) => Nanos(rng.random_range(*lo..=*hi)),
            Sampler::Normal { mean, sd, table } => {
                Nanos::from_nanos_f64((mean + sd * table.sample(rng)).max(0.0))
            }
            Sampler::LogNormal { median, table } => {
                Nanos::from_nanos_f64(median * table.sample(rng))
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
    use crate::rng::Streams;

    #[test]
    fn the_normal_quantile_matches_known_points() {
        for (p, z) in [
            (0.5, 0.0),
            (0.975, 1.959_963_984_540_054),
            (0.025, -1.959_963_984_540_054),
            (0.841_344_746_068_542_9, 1.0),
            (1e-10, -6.361_340_902_404_056),
            (0.999, 3.090_232_306_167_813_5),
        ] {
            let got = normal_quantile(p);
            assert!(
                (got - z).abs() <= 1e-12 * z.abs().max(1.0),
                "{p}: {got} != {z}"
            );
        }
    }

    /// The interpolated tables stay within their documented error of the
    /// exact quantiles, everywhere from the exact tails inwards.
    #[test]
    fn quantile_tables_follow_the_exact_curves() {
        let points = 1_000_000;
        for (curve, middle_bound, edge_bound) in [
            (Curve::StandardNormal, 1e-6, 1e-4),
            (Curve::LogNormal { sigma: 0.5 }, 1e-6, 1e-4),
            (Curve::LogNormal { sigma: 1.0 }, 3e-6, 2.5e-4),
        ] {
            let table = QuantileTable::new(curve);
            let (mut middle, mut edge) = (0.0f64, 0.0f64);
            for k in 1..points {
                let p = k as f64 / points as f64;
                let exact = curve.at(p);
                let error = (table.quantile(p) - exact).abs() / exact.abs().max(1.0);
                if (0.05..=0.95).contains(&p) {
                    middle = middle.max(error);
                } else {
                    edge = edge.max(error);
                }
            }
            assert!(middle < middle_bound, "{curve:?}: middle error {middle:e}");
            assert!(edge < edge_bound, "{curve:?}: edge error {edge:e}");
            // The exact tails are exact.
            assert_eq!(table.quantile(1e-3), curve.at(1e-3));
            assert_eq!(table.quantile(1.0 - 1e-3), curve.at(1.0 - 1e-3));
        }
        // One table per sigma, shared.
        assert!(Arc::ptr_eq(
            &QuantileTable::lognormal(0.25),
            &QuantileTable::lognormal(0.25)
        ));
    }

    #[test]
    fn samples_have_their_distribution_s_moments() {
        let mut rng = Streams::new(5).service(3);
        let n = 200_000;
        let normal = QuantileTable::standard_normal();
        let z: Vec<f64> = (0..n).map(|_| normal.sample(&mut rng)).collect();
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
            let mut rng = Streams::new(3).service(1);
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
        let mut rng = Streams::new(3).service(2);
        let mean = (0..10_000)
            .map(|_| n.sample(&mut rng).as_millis_f64())
            .sum::<f64>()
            / 1e4;
        assert!(mean > 1.0, "truncation at zero raises the mean: {mean}");
    }

    #[test]
    fn fixed_values_draw_no_randomness() {
        // A constant, or a uniform of zero width, takes nothing from its
        // stream: the next draw of the stream is unchanged.
        let fixed = [
            Sampler::new(&Dist::Constant {
                value: Nanos::from_millis(3),
            }),
            Sampler::new(&Dist::Uniform {
                min: Nanos::from_millis(3),
                max: Nanos::from_millis(3),
            }),
        ];
        for sampler in fixed {
            let mut rng = Streams::new(4).service(1);
            let mut untouched = rng.clone();
            assert_eq!(sampler.sample(&mut rng), Nanos::from_millis(3));
            assert_eq!(rng.random::<u64>(), untouched.random::<u64>());
        }
    }
}
