//! The keys a membership scenario is swept and tuned over (`fdlab sweep
//! --vary`, `fdlab tune --set`): a key of `[membership.orleans]`
//! (`membership.orleans.probe_timeout`) or a key of a judge's `[[detectors]]`
//! table (`phi-5s.threshold`); and the scenario with some of them set.
//!
//! A membership scenario's judges are its `[[detectors]]` (and `classic`,
//! Orleans' missed-probe count, which has no table: its parameters are the
//! Orleans keys `num_missed_probes_limit` and `probe_timeout`). Every key is
//! checked the way a scenario file's is: an unknown Orleans key gets the
//! scenario file's "did you mean", a bad value the key and the problem.

use fdlab_protocol::membership::config::VERSION_KEYS;
use fdlab_protocol::membership::OrleansConfig;
use fdlab_protocol::{DetectorConfig, KINDS};
use fdlab_sim::scenario::{Scenario, CLASSIC_JUDGE};
use toml::{Table, Value};

use crate::detector_from_table;
use crate::detector_spec::insert_dotted;
use crate::excerpt::excerpt;
use crate::scenario_file::rephrase;
use crate::sweep_plan::remove_dotted;

/// The prefix of the Orleans keys.
pub const ORLEANS_PREFIX: &str = "membership.orleans.";

/// What a membership key sets.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target {
    /// A key of `[membership.orleans]`.
    Orleans(String),
    /// A key (dotted for a stage) of the `[[detectors]]` table of the judge
    /// named `judge`.
    Judge { judge: String, param: String },
}

impl Target {
    /// The whole key, as outputs show it: `membership.orleans.probe_timeout`,
    /// `phi-5s.threshold`.
    pub fn key(&self) -> String {
        match self {
            Target::Orleans(k) => format!("{ORLEANS_PREFIX}{k}"),
            Target::Judge { judge, param } => format!("{judge}.{param}"),
        }
    }

    /// The key within its table: `probe_timeout`, `threshold`.
    pub fn param(&self) -> &str {
        match self {
            Target::Orleans(k) => k,
            Target::Judge { param, .. } => param,
        }
    }

    /// The judge whose table the key is in, if it is a judge's.
    pub fn judge(&self) -> Option<&str> {
        match self {
            Target::Orleans(_) => None,
            Target::Judge { judge, .. } => Some(judge),
        }
    }
}

/// The keys of `[membership.orleans]`, in Orleans' order, then the keys
/// of one version only (`min_probe_timeout`, ...), which the defaults leave
/// unset.
pub fn orleans_keys() -> Vec<String> {
    let mut keys: Vec<String> = orleans_table(&OrleansConfig::default())
        .map(|t| t.keys().cloned().collect())
        .unwrap_or_default();
    for (key, _) in VERSION_KEYS {
        if !keys.iter().any(|k| k == key) {
            keys.push(key.to_string());
        }
    }
    keys
}

fn orleans_table(config: &OrleansConfig) -> Result<Table, String> {
    Table::try_from(config).map_err(|e| format!("`membership.orleans`: {e}"))
}

/// What the classic judge's parameters are, for an error about `classic.X`.
pub fn classic_has_no_keys() -> String {
    format!(
        "the `{CLASSIC_JUDGE}` judge has no parameters of its own: it suspects a silo after \
         `{ORLEANS_PREFIX}num_missed_probes_limit` missed probes, one every \
         `{ORLEANS_PREFIX}probe_timeout`: set or vary those"
    )
}

/// Resolves the key `head.param` (split at its first dot) on membership
/// scenario `scenario`. `head` is `membership` (then `param` is
/// `orleans.KEY`), a judge's name, or a detector kind (the scenario's first
/// judge of that kind).
pub fn resolve_key(scenario: &Scenario, head: &str, param: &str) -> Result<Target, String> {
    let judges = scenario.orleans_judge_names();
    if judges.is_empty() {
        // A SWIM-only scenario: its runs have no Orleans keys.
        return Err(format!(
            "`{}`: membership scenario `{}` has no Orleans judge; its SWIM runs are not swept or tuned yet",
            excerpt(&format!("{head}.{param}")),
            scenario.name
        ));
    }
    let orleans = param.strip_prefix("orleans.");
    if head == "membership" && (orleans.is_some() || !judges.iter().any(|j| j == head)) {
        let Some(key) = orleans else {
            return Err(format!(
                "`membership.{}`: only the keys of [membership.orleans] can be varied ({ORLEANS_PREFIX}KEY)",
                excerpt(param)
            ));
        };
        let keys = orleans_keys();
        if !keys.iter().any(|k| k == key) {
            // The scenario file's message, with its "did you mean".
            let mut table = Table::new();
            table.insert(key.to_string(), Value::Boolean(true));
            let problem = Value::Table(table)
                .try_into::<OrleansConfig>()
                .err()
                .map(|e| rephrase(e.message()))
                .unwrap_or_else(|| format!("expected one of {}", keys.join(", ")));
            return Err(format!("`{ORLEANS_PREFIX}{}`: {problem}", excerpt(key)));
        }
        return Ok(Target::Orleans(key.to_string()));
    }
    if head == CLASSIC_JUDGE {
        return Err(format!(
            "`{}`: {}",
            excerpt(&format!("{head}.{param}")),
            classic_has_no_keys()
        ));
    }
    let named = scenario
        .detectors
        .iter()
        .find(|d| d.name == head && judges.contains(&d.name));
    let of_kind = || {
        KINDS.contains(&head).then(|| {
            scenario
                .detectors
                .iter()
                .find(|d| d.config.kind() == head && judges.contains(&d.name))
        })
    };
    match (named, of_kind()) {
        (Some(d), _) | (None, Some(Some(d))) => {
            check_judge_key(&d.config, &d.name, param)?;
            Ok(Target::Judge {
                judge: d.name.clone(),
                param: param.to_string(),
            })
        }
        (None, Some(None)) => Err(format!(
            "no judge of scenario `{}` is a `{head}` (its judges: {})",
            scenario.name,
            judges.join(", ")
        )),
        (None, None) => Err(format!(
            "`{}` is neither a judge of membership scenario `{}` ({}) nor `membership` \
             (vary {ORLEANS_PREFIX}KEY or JUDGE.KEY)",
            excerpt(head),
            scenario.name,
            judges.join(", ")
        )),
    }
}

/// Refuses `param` when the judge's kind has no such key, with a "did you
/// mean" (a value's own problems are found when it is set).
fn check_judge_key(config: &DetectorConfig, judge: &str, param: &str) -> Result<(), String> {
    let Ok(mut table) = Table::try_from(config) else {
        return Ok(());
    };
    remove_dotted(&mut table, param);
    // An empty table is no key's value: a known key gets a type error.
    if insert_dotted(&mut table, param, Value::Table(Table::new())).is_err() {
        return Ok(());
    }
    match detector_from_table(&table) {
        Err(e) if e.problem.starts_with("unknown key") => {
            let last = param.rsplit('.').next().unwrap_or(param);
            let problem = match e.problem.split_once("; expected ") {
                Some((head, expected)) => {
                    let keys = expected.split('`').skip(1).step_by(2);
                    let hint = keys
                        .map(|k| (strsim::levenshtein(last, k), k))
                        .filter(|(d, _)| *d <= 2)
                        .min_by_key(|(d, _)| *d)
                        .map(|(_, k)| format!(" (did you mean `{k}`?)"))
                        .unwrap_or_default();
                    format!("{head}{hint}; expected {expected}")
                }
                None => e.problem,
            };
            Err(format!("`{judge}.{}`: {problem}", excerpt(param)))
        }
        _ => Ok(()),
    }
}

/// `scenario` with `settings` made: each key set to its value. The result
/// is not validated as a whole (make a `ValidScenario` of it); an error
/// names the key and what is wrong with the value.
pub fn apply(scenario: &Scenario, settings: &[(&Target, &Value)]) -> Result<Scenario, String> {
    let mut out = scenario.clone();
    let Some(membership) = out.membership.as_mut() else {
        return Err(format!("`{}` is not a membership scenario", scenario.name));
    };
    if settings
        .iter()
        .any(|(t, _)| matches!(t, Target::Orleans(_)))
    {
        let mut table = orleans_table(&membership.orleans)?;
        for (target, value) in settings {
            if let Target::Orleans(key) = target {
                table.insert(key.clone(), (*value).clone());
            }
        }
        membership.orleans = Value::Table(table)
            .try_into::<OrleansConfig>()
            .map_err(|e| {
                let keys: Vec<String> = settings
                    .iter()
                    .filter(|(t, _)| matches!(t, Target::Orleans(_)))
                    .map(|(t, v)| format!("{} = {v}", t.key()))
                    .collect();
                format!("`{}`: {}", keys.join(", "), rephrase(e.message()))
            })?;
    }
    for (target, value) in settings {
        let Target::Judge { judge, param } = target else {
            continue;
        };
        let Some(d) = out.detectors.iter_mut().find(|d| &d.name == judge) else {
            return Err(format!(
                "`{judge}` is not a detector of `{}`",
                scenario.name
            ));
        };
        let mut table = Table::try_from(&d.config)
            .map_err(|e| format!("judge `{judge}`: can not be set: {e}"))?;
        remove_dotted(&mut table, param);
        let key = target.key();
        insert_dotted(&mut table, param, (*value).clone()).map_err(|e| format!("`{key}`: {e}"))?;
        d.config = detector_from_table(&table)
            .map_err(|e| format!("`{key}` = {value}: {e}"))?
            .config;
    }
    Ok(out)
}

/// `scenario` with only the judges `judges` (names, in that order): its
/// `membership.judges` and the detectors they name. A judge's cluster runs
/// do not depend on the other judges, so this only leaves runs out.
pub fn keep_judges(scenario: &Scenario, judges: &[String]) -> Scenario {
    let mut out = scenario.clone();
    out.detectors.retain(|d| judges.contains(&d.name));
    if let Some(m) = out.membership.as_mut() {
        m.judges = Some(judges.to_vec());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use fdlab_protocol::Nanos;

    fn crash() -> Scenario {
        crate::builtin_scenario("orleans-crash")
            .unwrap()
            .unwrap()
            .into_inner()
    }

    #[test]
    fn keys_resolve_to_orleans_keys_and_judges() {
        let s = crash();
        assert_eq!(
            resolve_key(&s, "membership", "orleans.probe_timeout").unwrap(),
            Target::Orleans("probe_timeout".into())
        );
        let phi = Target::Judge {
            judge: "phi-5s".into(),
            param: "threshold".into(),
        };
        assert_eq!(resolve_key(&s, "phi-5s", "threshold").unwrap(), phi);
        // A kind stands for the first judge of that kind.
        assert_eq!(resolve_key(&s, "phi-accrual", "threshold").unwrap(), phi);
        assert_eq!(phi.key(), "phi-5s.threshold");
        let err = resolve_key(&s, "membership", "orleans.probe_timout").unwrap_err();
        assert!(err.contains("did you mean `probe_timeout`"), "{err}");
        assert!(
            err.starts_with("`membership.orleans.probe_timout`"),
            "{err}"
        );
        let err = resolve_key(&s, "membership", "restart_after").unwrap_err();
        assert!(
            err.contains("only the keys of [membership.orleans]"),
            "{err}"
        );
        let err = resolve_key(&s, "classic", "x").unwrap_err();
        assert!(err.contains("num_missed_probes_limit"), "{err}");
        assert!(err.contains("probe_timeout"), "{err}");
        let err = resolve_key(&s, "fixed-timeout", "timeout").unwrap_err();
        assert!(
            err.contains("no judge of scenario `orleans-crash`"),
            "{err}"
        );
        let err = resolve_key(&s, "phi-5s", "treshold").unwrap_err();
        assert!(err.starts_with("`phi-5s.treshold`: unknown key"), "{err}");
        assert!(err.contains("(did you mean `threshold`?)"), "{err}");
        let err = resolve_key(&s, "phi", "threshold").unwrap_err();
        assert!(err.contains("classic, phi-5s, probe-orleans"), "{err}");
    }

    #[test]
    fn settings_apply_and_bad_values_name_the_key() {
        let s = crash();
        let timeout = Target::Orleans("probe_timeout".into());
        let limit = Target::Orleans("num_missed_probes_limit".into());
        let threshold = Target::Judge {
            judge: "phi-5s".into(),
            param: "threshold".into(),
        };
        let (two, four, twelve) = (Value::from("2s"), Value::Integer(4), Value::Float(12.0));
        let v = apply(
            &s,
            &[(&timeout, &two), (&limit, &four), (&threshold, &twelve)],
        )
        .unwrap();
        let o = &v.membership.as_ref().unwrap().orleans;
        assert_eq!(o.probe_timeout, Nanos::from_secs(2));
        assert_eq!(o.num_missed_probes_limit, 4);
        assert_eq!(v.detectors[0].config.kind(), "phi-accrual");
        assert_ne!(v.detectors[0].config, s.detectors[0].config);
        // Everything else as it was.
        assert_eq!(v.detectors[1], s.detectors[1]);
        assert_eq!(o.num_probed_silos, 10);

        let err = apply(&s, &[(&limit, &Value::from("many"))]).unwrap_err();
        assert!(
            err.contains("membership.orleans.num_missed_probes_limit"),
            "{err}"
        );
        let err = apply(&s, &[(&threshold, &Value::from("high"))]).unwrap_err();
        assert!(err.contains("phi-5s.threshold"), "{err}");
        let kept = keep_judges(&s, &["classic".to_string()]);
        assert!(kept.detectors.is_empty());
        assert_eq!(kept.judge_names(), ["classic"]);
    }
}
