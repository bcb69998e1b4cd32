//! A membership sweep's plan: its points (each a variant of the scenario,
//! with some `membership.orleans` keys or one judge's keys set), the judges
//! every point runs, its seeds, and `sweep.toml`.
//!
//! A membership scenario has no shadow mode: a point that changes an
//! Orleans key changes the whole cluster, and each judge is a cluster run of
//! its own. So a unit is one point, one judge and one seed: one cluster
//! run. Which judges a point runs:
//!
//! - when the sweep varies a judge's keys (`phi-5s.threshold`), that judge
//!   alone (the others would give the same figures at every point);
//! - otherwise every judge of the scenario, or those named by `--judge`.
//!
//! Every point is made and validated, as a whole scenario, before anything
//! runs: a value that makes no valid scenario is one error naming the
//! `--vary` and the value.

use fdlab_sim::scenario::Scenario;
use fdlab_sim::valid::ValidScenario;
use serde::{Deserialize, Serialize};
use toml::Value;

use crate::cluster_keys::{apply, keep_judges, resolve_key, Target};
use crate::excerpt::{excerpt, excerpt_to, KEY_CHARS};
use crate::sweep_plan::{point_indices, scenario_digest, PointFile};
use crate::vary::Dimension;

/// The plan of a membership sweep as `sweep.toml` holds it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClusterPlanFile {
    pub scenario: String,
    /// SHA-256 of the scenario as parsed.
    pub scenario_sha256: String,
    /// The judges every point runs, in the scenario's order; a unit names
    /// its judge by its position here.
    pub judges: Vec<String>,
    pub vary: Vec<String>,
    /// Latin-hypercube sample size (0: the full grid).
    pub sample: usize,
    pub sample_seed: u64,
    pub first_seed: u64,
    pub seeds: u32,
    /// The varied keys, whole (`membership.orleans.probe_timeout`,
    /// `phi-5s.threshold`), in `--vary` order.
    pub params: Vec<String>,
    #[serde(rename = "point")]
    pub points: Vec<PointFile>,
}

impl ClusterPlanFile {
    pub fn render(&self) -> Result<String, String> {
        let body = toml::to_string(self).map_err(|e| e.to_string())?;
        Ok(format!(
            "# fdlab sweep plan of a membership scenario: what the units in this directory belong to.\n\
             # `fdlab sweep --resume` checks that it is unchanged.\n\n{body}"
        ))
    }

    pub fn seed_list(&self) -> Vec<u64> {
        (0..u64::from(self.seeds))
            .map(|k| self.first_seed.wrapping_add(k))
            .collect()
    }

    /// Rows of the results: every point × judge, point-major.
    pub fn rows(&self) -> usize {
        self.points.len() * self.judges.len()
    }

    /// The point and judge (indices) of row `row`.
    pub fn row(&self, row: usize) -> (usize, usize) {
        (row / self.judges.len(), row % self.judges.len())
    }

    /// How a unit's line names row `row`: `p0003,1` (point, judge index).
    pub fn row_key(&self, row: usize) -> String {
        let (p, j) = self.row(row);
        format!("{},{j}", self.points[p].name)
    }

    /// How messages name row `row`: ``p0003 judged by `phi-5s` ``.
    pub fn row_label(&self, row: usize) -> String {
        let (p, j) = self.row(row);
        format!("{} judged by `{}`", self.points[p].name, self.judges[j])
    }

    /// Units: rows × seeds.
    pub fn unit_count(&self) -> usize {
        self.rows() * self.seeds as usize
    }
}

/// Whether the text of a `sweep.toml` is a membership sweep's plan.
pub fn is_cluster_plan(text: &str) -> bool {
    text.parse::<toml::Table>()
        .is_ok_and(|t| t.contains_key("judges"))
}

/// A membership sweep's plan, with what makes each point's scenario.
pub struct ClusterPlan {
    pub file: ClusterPlanFile,
    /// The scenario with only the plan's judges.
    base: Scenario,
    targets: Vec<Target>,
    values: Vec<Vec<Value>>,
    /// Per point, the index of its value in each dimension.
    indices: Vec<Vec<usize>>,
}

impl ClusterPlan {
    /// The keys the points set, in `--vary` order.
    pub fn targets(&self) -> &[Target] {
        &self.targets
    }

    /// The scenario of point `point` (with only the plan's judges, in the
    /// plan's order: a unit's judge index is its index there).
    pub fn variant(&self, point: usize) -> Result<ValidScenario, String> {
        let settings: Vec<(&Target, &Value)> = self
            .targets
            .iter()
            .zip(&self.values)
            .zip(&self.indices[point])
            .map(|((t, values), &i)| (t, &values[i]))
            .collect();
        let describe = || {
            let items: Vec<String> = self
                .file
                .params
                .iter()
                .zip(&self.file.points[point].values)
                .map(|(k, v)| format!("{k}={v}"))
                .collect();
            items.join(", ")
        };
        let scenario = apply(&self.base, &settings)
            .map_err(|e| format!("--vary: the point {} is not valid: {e}", describe()))?;
        ValidScenario::new(scenario)
            .map_err(|e| format!("--vary: the point {} is not valid: {e}", describe()))
    }
}

/// The judges the points run (see the module docs); `only`: `--judge`.
fn plan_judges(
    scenario: &Scenario,
    targets: &[(Target, &Dimension)],
    only: &[String],
) -> Result<Vec<String>, String> {
    let names = scenario.orleans_judge_names();
    let mut varied: Option<(&str, &Dimension)> = None;
    for (t, d) in targets {
        let Some(judge) = t.judge() else { continue };
        match varied {
            None => varied = Some((judge, d)),
            Some((first, _)) if first == judge => {}
            Some((first, _)) => {
                return Err(format!(
                    "--vary {}: a sweep varies one judge's keys, and `{judge}` is not `{first}`",
                    excerpt_to(&d.arg, KEY_CHARS)
                ))
            }
        }
    }
    for (i, name) in only.iter().enumerate() {
        if !names.contains(name) {
            if fdlab_sim::scenario::is_swim_run(name) {
                return Err(format!(
                    "--judge {}: a SWIM run, whose keys are not swept or tuned yet; the Orleans judges: {}",
                    excerpt(name),
                    names.join(", ")
                ));
            }
            return Err(format!(
                "--judge {}: not a judge of `{}` (its judges: {})",
                excerpt(name),
                scenario.name,
                names.join(", ")
            ));
        }
        if only[..i].contains(name) {
            return Err(format!("--judge {}: named twice", excerpt(name)));
        }
    }
    if let Some((judge, d)) = varied {
        if !only.is_empty() && only != [judge] {
            return Err(format!(
                "--judge: the sweep varies `{judge}`'s keys (--vary {}), so `{judge}` alone runs; leave --judge out",
                excerpt_to(&d.arg, KEY_CHARS)
            ));
        }
        return Ok(vec![judge.to_string()]);
    }
    Ok(if only.is_empty() {
        names
    } else {
        names.into_iter().filter(|n| only.contains(n)).collect()
    })
}

/// Builds the plan of a sweep of membership scenario `scenario` over
/// `dims`, running the judges `only` (empty: see the module docs), and
/// checks every point.
pub fn cluster_plan(
    scenario: &Scenario,
    dims: &[Dimension],
    only: &[String],
    sample: usize,
    sample_seed: u64,
    first_seed: u64,
    seeds: u32,
) -> Result<ClusterPlan, String> {
    let mut targets: Vec<(Target, &Dimension)> = Vec::with_capacity(dims.len());
    for d in dims {
        let arg = excerpt_to(&d.arg, KEY_CHARS);
        let t = resolve_key(scenario, &d.detector, &d.param)
            .map_err(|e| format!("--vary {arg}: {e}"))?;
        if targets.iter().any(|(x, _)| *x == t) {
            return Err(format!("--vary {arg}: `{}` is varied twice", t.key()));
        }
        targets.push((t, d));
    }
    let judges = plan_judges(scenario, &targets, only)?;
    let base = keep_judges(scenario, &judges);
    // Each value alone first, so that a bad one is named with its --vary.
    for (t, d) in &targets {
        for (label, value) in d.labels.iter().zip(&d.values) {
            let problem = apply(&base, &[(t, value)])
                .and_then(|s| ValidScenario::new(s).map(drop).map_err(|e| e.to_string()));
            if let Err(e) = problem {
                return Err(format!(
                    "--vary {}: the value `{}` makes no valid scenario: {e}",
                    excerpt_to(&d.arg, KEY_CHARS),
                    excerpt(label)
                ));
            }
        }
    }
    let indices = point_indices(dims, sample, sample_seed)?;
    let width = indices.len().to_string().len().max(4);
    let points = indices
        .iter()
        .enumerate()
        .map(|(n, idx)| PointFile {
            name: format!("p{:0width$}", n + 1),
            values: dims
                .iter()
                .zip(idx)
                .map(|(d, &i)| d.labels[i].clone())
                .collect(),
        })
        .collect();
    let plan = ClusterPlan {
        file: ClusterPlanFile {
            scenario: scenario.name.clone(),
            scenario_sha256: scenario_digest(scenario),
            judges,
            vary: dims.iter().map(|d| d.arg.clone()).collect(),
            sample,
            sample_seed,
            first_seed,
            seeds,
            params: targets.iter().map(|(t, _)| t.key()).collect(),
            points,
        },
        base,
        values: dims.iter().map(|d| d.values.clone()).collect(),
        targets: targets.into_iter().map(|(t, _)| t).collect(),
        indices,
    };
    // Then every point as a whole: keys may only clash together.
    for p in 0..plan.file.points.len() {
        plan.variant(p)?;
    }
    Ok(plan)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vary::parse_vary;

    fn crash() -> Scenario {
        crate::builtin_scenario("orleans-crash")
            .unwrap()
            .unwrap()
            .into_inner()
    }

    fn plan(vary: &[&str], only: &[&str]) -> Result<ClusterPlan, String> {
        let dims: Vec<Dimension> = vary.iter().map(|v| parse_vary(v).unwrap()).collect();
        let only: Vec<String> = only.iter().map(|s| s.to_string()).collect();
        cluster_plan(&crash(), &dims, &only, 0, 1, 1, 2)
    }

    #[test]
    fn orleans_keys_run_every_judge_and_a_judges_keys_that_judge() {
        let p = plan(
            &[
                "membership.orleans.probe_timeout=2s,5s",
                "membership.orleans.num_missed_probes_limit=2,3,4",
            ],
            &[],
        )
        .unwrap();
        assert_eq!(p.file.judges, ["classic", "phi-5s", "probe-orleans"]);
        assert_eq!(p.file.points.len(), 6);
        assert_eq!(p.file.rows(), 18);
        assert_eq!(p.file.unit_count(), 36);
        assert_eq!(p.file.row_key(4), "p0002,1");
        assert_eq!(p.file.row_label(4), "p0002 judged by `phi-5s`");
        assert_eq!(
            p.file.params,
            [
                "membership.orleans.probe_timeout",
                "membership.orleans.num_missed_probes_limit"
            ]
        );
        let v = p.variant(5).unwrap();
        let o = &v.membership.as_ref().unwrap().orleans;
        assert_eq!(
            (o.probe_timeout.as_secs_f64(), o.num_missed_probes_limit),
            (5.0, 4)
        );
        assert!(is_cluster_plan(&p.file.render().unwrap()));

        let p = plan(
            &["membership.orleans.probe_timeout=2s,5s"],
            &["probe-orleans", "classic"],
        )
        .unwrap();
        assert_eq!(p.file.judges, ["classic", "probe-orleans"]);
        assert_eq!(
            p.variant(0).unwrap().judge_names(),
            ["classic", "probe-orleans"]
        );

        let p = plan(&["phi-accrual.threshold=4,8"], &[]).unwrap();
        assert_eq!(p.file.judges, ["phi-5s"]);
        assert_eq!(p.file.params, ["phi-5s.threshold"]);
        assert_eq!(p.variant(1).unwrap().judge_names(), ["phi-5s"]);
    }

    #[test]
    fn bad_keys_and_values_are_one_error_naming_the_vary() {
        let err = |vary: &[&str], only: &[&str]| plan(vary, only).err().unwrap();
        let e = err(&["membership.orleans.num_missed_probes_limit=0,3"], &[]);
        assert!(
            e.starts_with("--vary membership.orleans.num_missed_probes_limit=0,3: the value `0`"),
            "{e}"
        );
        assert!(e.contains("must be at least 1"), "{e}");
        let e = err(
            &[
                "membership.orleans.probe_timeout=1s",
                "membership.orleans.probe_timeout=2s",
            ],
            &[],
        );
        assert!(e.contains("varied twice"), "{e}");
        let e = err(
            &["phi-5s.threshold=4", "probe-orleans.missed_probes_limit=2"],
            &[],
        );
        assert!(e.contains("one judge's keys"), "{e}");
        let e = err(&["phi-5s.threshold=4"], &["classic"]);
        assert!(e.starts_with("--judge:"), "{e}");
        let e = err(&["membership.orleans.probe_timeout=1s"], &["nobody"]);
        assert!(e.contains("not a judge of `orleans-crash`"), "{e}");
        // Values valid alone that clash together.
        let e = err(
            &[
                "membership.orleans.num_probed_silos=2,10",
                "membership.orleans.num_votes_for_death_declaration=2,3",
            ],
            &[],
        );
        assert!(
            e.contains("the point membership.orleans.num_probed_silos=2, membership.orleans.num_votes_for_death_declaration=3 is not valid"),
            "{e}"
        );
        assert!(!is_cluster_plan("detector = \"phi\"\n"));
    }
}
