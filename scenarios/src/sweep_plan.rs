//! A sweep's plan: which detector it varies, its points, its seeds, and the
//! units of work (one point on one seed) a shard runs.
//!
//! The plan is written to `sweep.toml` in the output directory. `--resume`
//! and `fdlab merge` compare it byte for byte, so units from different
//! sweeps are never mixed, and `fdlab merge` writes the outputs from it
//! without needing the scenario.

use std::fmt::Write as _;

use crate::detector_from_table;
use crate::detector_spec::insert_dotted;
use crate::excerpt::{excerpt, excerpt_to, KEY_CHARS};
use fdlab_protocol::KINDS;
use fdlab_sim::scenario::{DetectorSetup, Scenario};
use rand::seq::SliceRandom;
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use toml::{Table, Value};

use crate::vary::Dimension;

/// Most points a sweep may have.
pub const MAX_POINTS: usize = 100_000;

/// The plan as `sweep.toml` holds it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlanFile {
    pub scenario: String,
    /// SHA-256 of the scenario as parsed (any change to it is another sweep).
    pub scenario_sha256: String,
    /// The detector the points vary (a scenario detector's name, or a kind).
    pub detector: String,
    pub vary: Vec<String>,
    /// Latin-hypercube sample size (0: the full grid).
    pub sample: usize,
    pub sample_seed: u64,
    pub first_seed: u64,
    pub seeds: u32,
    /// The varied parameters, in `--vary` order.
    pub params: Vec<String>,
    #[serde(rename = "point")]
    pub points: Vec<PointFile>,
}

/// One point: its name and its parameter values, as text.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PointFile {
    pub name: String,
    pub values: Vec<String>,
}

impl PlanFile {
    pub fn render(&self) -> Result<String, String> {
        let body = toml::to_string(self).map_err(|e| e.to_string())?;
        Ok(format!(
            "# fdlab sweep plan: what the units in this directory belong to.\n\
             # `fdlab sweep --resume` and `fdlab merge` check that it is unchanged.\n\n{body}"
        ))
    }

    pub fn seed_list(&self) -> Vec<u64> {
        (0..u64::from(self.seeds))
            .map(|k| self.first_seed.wrapping_add(k))
            .collect()
    }

    /// Units in seed-major order: `(seed index, point index)`.
    pub fn unit_count(&self) -> usize {
        self.points.len() * self.seeds as usize
    }
}

/// The plan with the detector configurations of its points.
pub struct Plan {
    pub file: PlanFile,
    /// One per point, named as the point.
    pub setups: Vec<DetectorSetup>,
}

/// Hex SHA-256 of the scenario as parsed: the same file gives the same
/// digest, any change to it another.
pub fn scenario_digest(scenario: &Scenario) -> String {
    let digest = Sha256::digest(format!("{scenario:?}").as_bytes());
    digest.iter().fold(String::new(), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

/// The detector the dimensions vary, as a TOML table of its keys.
fn base_table(scenario: &Scenario, dims: &[Dimension]) -> Result<(String, Table), String> {
    let name = &dims[0].detector;
    if let Some(d) = dims.iter().find(|d| d.detector != *name) {
        return Err(format!(
            "--vary {}: a sweep varies one detector, and `{}` is not `{name}`",
            d.arg, d.detector
        ));
    }
    let config = match scenario.detectors.iter().find(|d| d.name == *name) {
        Some(d) => Some(d.config.clone()),
        None if KINDS.contains(&name.as_str()) => scenario
            .detectors
            .iter()
            .find(|d| d.config.kind() == name)
            .map(|d| d.config.clone()),
        None => {
            let names: Vec<&str> = scenario.detectors.iter().map(|d| d.name.as_str()).collect();
            return Err(format!(
                "--vary {}: `{name}` is neither a detector of scenario `{}` ({}) nor a detector kind ({})",
                dims[0].arg,
                scenario.name,
                names.join(", "),
                KINDS.join(", ")
            ));
        }
    };
    let table = match config {
        Some(config) => Table::try_from(&config)
            .map_err(|e| format!("detector `{name}`: can not be swept: {e}"))?,
        // A kind the scenario does not use: its defaults.
        None => {
            let mut t = Table::new();
            t.insert("kind".into(), Value::String(name.clone()));
            t
        }
    };
    Ok((name.clone(), table))
}

/// Index tuples of the points: the full grid (first dimension outermost), or
/// `sample` points of a Latin hypercube over the dimensions' value lists.
pub(crate) fn point_indices(
    dims: &[Dimension],
    sample: usize,
    seed: u64,
) -> Result<Vec<Vec<usize>>, String> {
    if sample == 0 {
        let total = dims
            .iter()
            .try_fold(1usize, |n, d| n.checked_mul(d.labels.len()))
            .filter(|&n| n <= MAX_POINTS)
            .ok_or_else(|| {
                format!("the grid has more than {MAX_POINTS} points; use --sample N to draw some")
            })?;
        return Ok((0..total)
            .map(|mut k| {
                let mut idx = vec![0; dims.len()];
                for (i, d) in dims.iter().enumerate().rev() {
                    idx[i] = k % d.labels.len();
                    k /= d.labels.len();
                }
                idx
            })
            .collect());
    }
    if sample > MAX_POINTS {
        return Err(format!("--sample {sample}: at most {MAX_POINTS} points"));
    }
    // McKay, Beckman & Conover (1979): each dimension's range is cut into
    // `sample` equal strata and every stratum is used exactly once.
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut columns: Vec<Vec<usize>> = Vec::with_capacity(dims.len());
    for d in dims {
        let mut strata: Vec<usize> = (0..sample).collect();
        strata.shuffle(&mut rng);
        let column = strata
            .into_iter()
            .map(|s| {
                let u = (s as f64 + rng.random::<f64>()) / sample as f64;
                ((u * d.labels.len() as f64) as usize).min(d.labels.len() - 1)
            })
            .collect();
        columns.push(column);
    }
    let mut seen = std::collections::BTreeSet::new();
    let mut points = Vec::new();
    for i in 0..sample {
        let idx: Vec<usize> = columns.iter().map(|c| c[i]).collect();
        // A point drawn twice is run once.
        if seen.insert(idx.clone()) {
            points.push(idx);
        }
    }
    Ok(points)
}

/// Builds the plan of a sweep and checks every point's configuration.
pub fn plan(
    scenario: &Scenario,
    dims: &[Dimension],
    sample: usize,
    sample_seed: u64,
    first_seed: u64,
    seeds: u32,
) -> Result<Plan, String> {
    let (detector, base) = base_table(scenario, dims)?;
    for (i, d) in dims.iter().enumerate() {
        if dims[..i].iter().any(|x| x.param == d.param) {
            return Err(format!(
                "--vary {}: `{}` is varied twice",
                excerpt_to(&d.arg, KEY_CHARS),
                excerpt(&d.param)
            ));
        }
    }
    let indices = point_indices(dims, sample, sample_seed)?;
    let width = indices.len().to_string().len().max(4);
    let mut points = Vec::with_capacity(indices.len());
    let mut setups = Vec::with_capacity(indices.len());
    for (n, idx) in indices.iter().enumerate() {
        let name = format!("p{:0width$}", n + 1);
        let mut table = base.clone();
        for (d, &i) in dims.iter().zip(idx) {
            remove_dotted(&mut table, &d.param);
            insert_dotted(&mut table, &d.param, d.values[i].clone())
                .map_err(|e| format!("--vary {}: {e}", excerpt_to(&d.arg, KEY_CHARS)))?;
        }
        let spec = detector_from_table(&table).map_err(|e| {
            let values: Vec<String> = dims
                .iter()
                .zip(idx)
                .map(|(d, &i)| format!("{}={}", d.param, d.labels[i]))
                .collect();
            format!(
                "--vary: the point {} is not a valid `{detector}`: {e}",
                values.join(", ")
            )
        })?;
        setups.push(DetectorSetup {
            name: name.clone(),
            config: spec.config,
        });
        points.push(PointFile {
            name,
            values: dims
                .iter()
                .zip(idx)
                .map(|(d, &i)| d.labels[i].clone())
                .collect(),
        });
    }
    Ok(Plan {
        file: PlanFile {
            scenario: scenario.name.clone(),
            scenario_sha256: scenario_digest(scenario),
            detector,
            vary: dims.iter().map(|d| d.arg.clone()).collect(),
            sample,
            sample_seed,
            first_seed,
            seeds,
            params: dims.iter().map(|d| d.param.clone()).collect(),
            points,
        },
        setups,
    })
}

/// Removes a (dotted) key so that the sweep's value replaces the base's.
pub(crate) fn remove_dotted(table: &mut Table, dotted: &str) {
    match dotted.split_once('.') {
        None => {
            table.remove(dotted);
        }
        Some((head, rest)) => {
            if let Some(Value::Table(inner)) = table.get_mut(head) {
                remove_dotted(inner, rest);
            }
        }
    }
}

/// `I/N`: this process runs share `I` (0-based) of `N`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    pub index: usize,
    pub count: usize,
}

impl Shard {
    pub const WHOLE: Shard = Shard { index: 0, count: 1 };

    /// Parses `--shard I/N`.
    pub fn parse(text: &str) -> Result<Shard, String> {
        let err = || {
            format!(
                "--shard {}: expected I/N with 0 <= I < N (e.g. 0/4)",
                excerpt(text)
            )
        };
        let (i, n) = text.split_once('/').ok_or_else(err)?;
        let (index, count): (usize, usize) = (
            i.trim().parse().map_err(|_| err())?,
            n.trim().parse().map_err(|_| err())?,
        );
        if count == 0 || index >= count {
            return Err(err());
        }
        Ok(Shard { index, count })
    }

    /// `--shard-count N`: the index from a Kubernetes Indexed Job
    /// (`JOB_COMPLETION_INDEX`) or a Slurm job array (`SLURM_ARRAY_TASK_ID`),
    /// both 0-based here.
    pub fn from_env(
        count: usize,
        lookup: impl Fn(&str) -> Option<String>,
    ) -> Result<Shard, String> {
        for var in ["JOB_COMPLETION_INDEX", "SLURM_ARRAY_TASK_ID"] {
            if let Some(value) = lookup(var) {
                let index: usize = value.trim().parse().map_err(|_| {
                    format!(
                        "--shard-count {count}: {var}=`{}` is not a shard index",
                        excerpt(&value)
                    )
                })?;
                return Shard::parse(&format!("{index}/{count}"))
                    .map_err(|_| format!("--shard-count {count}: {var}={index} is not below {count} (Slurm arrays must be 0-based: --array=0-{})", count.saturating_sub(1)));
            }
        }
        Err(format!(
            "--shard-count {count}: neither JOB_COMPLETION_INDEX nor SLURM_ARRAY_TASK_ID is set; use --shard I/{count}"
        ))
    }

    /// This shard's units, `(seed index, point index)`: a contiguous block of
    /// the seed-major order, so a shard simulates few seeds, each once for
    /// all of its points.
    pub fn units(&self, points: usize, seeds: usize) -> Vec<(usize, usize)> {
        let total = points * seeds;
        let (lo, hi) = (
            total * self.index / self.count,
            total * (self.index + 1) / self.count,
        );
        (lo..hi).map(|u| (u / points, u % points)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vary::parse_vary;

    #[test]
    fn shards_partition_the_units() {
        for count in 1..6 {
            let mut all: Vec<(usize, usize)> = (0..count)
                .flat_map(|i| Shard { index: i, count }.units(7, 3))
                .collect();
            all.sort();
            let want: Vec<(usize, usize)> =
                (0..3).flat_map(|s| (0..7).map(move |p| (s, p))).collect();
            assert_eq!(all, want);
        }
        assert_eq!(Shard::parse("2/3").unwrap(), Shard { index: 2, count: 3 });
        for bad in ["3/3", "1", "a/2", "0/0", "-1/2"] {
            assert!(Shard::parse(bad).unwrap_err().contains("I/N"), "{bad}");
        }
        let env = |v: &'static str| move |k: &str| (k == v).then(|| "2".to_string());
        assert_eq!(
            Shard::from_env(4, env("SLURM_ARRAY_TASK_ID")).unwrap(),
            Shard { index: 2, count: 4 }
        );
        assert!(Shard::from_env(2, env("JOB_COMPLETION_INDEX")).is_err());
        assert!(Shard::from_env(2, |_| None)
            .unwrap_err()
            .contains("JOB_COMPLETION_INDEX"));
    }

    #[test]
    fn latin_hypercube_uses_every_stratum_once() {
        let dims = vec![
            parse_vary("phi-accrual.threshold=1..100:1").unwrap(),
            parse_vary("phi-accrual.max_sample_size=100..1099:1").unwrap(),
        ];
        let pts = point_indices(&dims, 100, 7).unwrap();
        assert_eq!(pts.len(), 100);
        for (d, dim) in dims.iter().enumerate() {
            let mut strata: Vec<usize> =
                pts.iter().map(|p| p[d] * 100 / dim.labels.len()).collect();
            strata.sort();
            assert_eq!(strata, (0..100).collect::<Vec<_>>());
        }
        assert_eq!(pts, point_indices(&dims, 100, 7).unwrap());
        assert_ne!(pts, point_indices(&dims, 100, 8).unwrap());
    }
}
