//! The real memberlist against fdlab's model of it, figure by figure: the
//! table `fdlab live` prints for a membership scenario and its
//! `calibration.csv`.
//!
//! The rules are issue 34's acceptance: a detection time agrees when
//! fdlab's median is within max(15%, 1 s) of the real median; a count per
//! run when fdlab's mean lies in the real runs' 95% interval (Student's t
//! over the runs); messages per member per second within 15%; and for SWIM
//! against Lifeguard, the direction of every comparison of false events
//! (fewer, as many, more) must be the same.

use std::fmt::Write as _;

use fdlab_reports::metrics::{mean_ci95, ratio_ci95};

use super::figures::Figures;

/// A detection time agrees within this fraction of the real median...
const DETECTION_SHARE: f64 = 0.15;
/// ...or within this many seconds, whichever is larger.
const DETECTION_FLOOR_S: f64 = 1.0;
/// Messages per member per second agree within this fraction.
const MESSAGES_SHARE: f64 = 0.15;

/// One judge's runs: the real ones (seeds S, S+1, ...) and the simulated
/// ones (the same seeds first, then more).
pub struct JudgeRuns {
    pub judge: String,
    pub real: Vec<Figures>,
    pub sim: Vec<Figures>,
}

/// One line of the comparison.
pub struct Line {
    pub figure: &'static str,
    pub unit: &'static str,
    pub judge: String,
    pub real_runs: usize,
    /// The real median (times) or mean (counts, rates); none: no value.
    pub real: Option<f64>,
    /// The real runs' range (times) or 95% interval (counts).
    pub real_low: Option<f64>,
    pub real_high: Option<f64>,
    pub sim_seeds: usize,
    pub sim: Option<f64>,
    /// Whether fdlab agrees with the real runs by `rule`; none: not
    /// decidable (a side has no value, or one real run).
    pub agrees: Option<bool>,
    pub rule: String,
}

fn median(mut v: Vec<f64>) -> Option<f64> {
    crate::stats::median_nearest_rank(&mut v)
}

fn mean(v: &[f64]) -> Option<f64> {
    (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
}

/// A detection figure of a run: one value per crash.
type Pick = fn(&Figures) -> Vec<Option<f64>>;
/// A count or rate of a run.
type Count = fn(&Figures) -> f64;

/// The lines of every judge, then the SWIM/Lifeguard directions.
pub fn lines(judges: &[JudgeRuns]) -> Vec<Line> {
    let mut out = Vec::new();
    let times: [(&'static str, Pick); 2] = [
        ("crash -> first Dead", |f| f.first_dead.clone()),
        ("crash -> every view", |f| f.all_views.clone()),
    ];
    let counts: [(&'static str, Count); 5] = [
        ("false events, healthy observers", |f| {
            f.false_healthy as f64
        }),
        ("false events, starved observers", |f| {
            f.false_starved as f64
        }),
        ("refutations", |f| f.refutations as f64),
        ("suspicions", |f| f.suspicions as f64),
        ("messages / member / s", |f| f.messages_per_member_s),
    ];
    for j in judges {
        for (figure, pick) in times {
            let real: Vec<Option<f64>> = j.real.iter().flat_map(pick).collect();
            if real.is_empty() {
                continue;
            }
            let sim: Vec<f64> = j.sim.iter().flat_map(pick).flatten().collect();
            let real_values: Vec<f64> = real.iter().flatten().copied().collect();
            let undeclared = real.len() - real_values.len();
            let r = median(real_values.clone());
            let s = median(sim);
            let agrees = match (r, s) {
                (Some(r), Some(s)) if undeclared == 0 => {
                    Some((s - r).abs() <= (DETECTION_SHARE * r).max(DETECTION_FLOOR_S))
                }
                _ => None,
            };
            let mut rule = "median within max(15%, 1 s)".to_string();
            if undeclared > 0 {
                let _ = write!(
                    rule,
                    "; {undeclared} of {} real crashes never reached",
                    real.len()
                );
            }
            out.push(Line {
                figure,
                unit: "s",
                judge: j.judge.clone(),
                real_runs: j.real.len(),
                real: r,
                real_low: real_values.iter().copied().reduce(f64::min),
                real_high: real_values.iter().copied().reduce(f64::max),
                sim_seeds: j.sim.len(),
                sim: s,
                agrees,
                rule,
            });
        }
        for (figure, pick) in counts {
            let real: Vec<f64> = j.real.iter().map(pick).collect();
            let sim: Vec<f64> = j.sim.iter().map(pick).collect();
            let s = mean(&sim);
            let rate = figure.starts_with("messages");
            let ci = mean_ci95(&real);
            let r = mean(&real);
            let (agrees, rule) = if rate {
                let ok = r.zip(s).map(|(r, s)| (s - r).abs() <= MESSAGES_SHARE * r);
                (ok, "mean within 15%".to_string())
            } else {
                let ok = ci.zip(s).map(|(ci, s)| ci.low <= s && s <= ci.high);
                (ok, "mean per run in the real 95% interval".to_string())
            };
            out.push(Line {
                figure,
                unit: if rate { "/s" } else { "/run" },
                judge: j.judge.clone(),
                real_runs: real.len(),
                real: r,
                real_low: ci.map(|c| c.low),
                real_high: ci.map(|c| c.high),
                sim_seeds: sim.len(),
                sim: s,
                agrees,
                rule,
            });
        }
    }
    if let (Some(swim), Some(lg)) = (
        judges.iter().find(|j| j.judge == "swim"),
        judges.iter().find(|j| j.judge == "lifeguard"),
    ) {
        let healthy: Count = |f| f.false_healthy as f64;
        let all: Count = |f| (f.false_healthy + f.false_starved) as f64;
        for (figure, pick) in [
            ("SWIM/Lifeguard false events, all observers", all),
            ("SWIM/Lifeguard false events, healthy obs.", healthy),
        ] {
            out.push(direction(figure, swim, lg, pick));
        }
    }
    out
}

/// SWIM against Lifeguard on one count: the real ratio (paired by seed,
/// Fieller's interval) and fdlab's, and whether both go the same way.
fn direction(
    figure: &'static str,
    swim: &JudgeRuns,
    lg: &JudgeRuns,
    pick: fn(&Figures) -> f64,
) -> Line {
    let pairs = swim.real.len().min(lg.real.len());
    let a: Vec<f64> = swim.real[..pairs].iter().map(pick).collect();
    let b: Vec<f64> = lg.real[..pairs].iter().map(pick).collect();
    let ci = ratio_ci95(&a, &b);
    let way = |a: f64, b: f64| a.partial_cmp(&b);
    let real_way = mean(&a).zip(mean(&b)).and_then(|(a, b)| way(a, b));
    let sim_a = mean(&swim.sim.iter().map(pick).collect::<Vec<_>>());
    let sim_b = mean(&lg.sim.iter().map(pick).collect::<Vec<_>>());
    let sim_way = sim_a.zip(sim_b).and_then(|(a, b)| way(a, b));
    let ratio =
        |a: Option<f64>, b: Option<f64>| a.zip(b).and_then(|(a, b)| (b > 0.0).then(|| a / b));
    Line {
        figure,
        unit: "ratio",
        judge: "swim/lifeguard".into(),
        real_runs: pairs,
        real: ci.as_ref().and_then(|c| c.ratio),
        real_low: ci.as_ref().map(|c| c.low),
        real_high: ci.as_ref().and_then(|c| c.high),
        sim_seeds: swim.sim.len().min(lg.sim.len()),
        sim: ratio(sim_a, sim_b),
        agrees: real_way.zip(sim_way).map(|(r, s)| r == s),
        rule: format!(
            "same direction (real: SWIM {}, fdlab: SWIM {})",
            word(real_way),
            word(sim_way)
        ),
    }
}

fn word(way: Option<std::cmp::Ordering>) -> &'static str {
    match way {
        Some(std::cmp::Ordering::Less) => "fewer",
        Some(std::cmp::Ordering::Equal) => "as many",
        Some(std::cmp::Ordering::Greater) => "more",
        None => "?",
    }
}

fn number(v: Option<f64>) -> String {
    v.map_or("-".into(), |v| {
        if v.abs() >= 100.0 {
            format!("{v:.0}")
        } else {
            format!("{v:.2}")
        }
    })
}

/// The comparison as the console shows it (at most 120 columns).
pub fn table(lines: &[Line]) -> String {
    let mut s = format!(
        "{:<50} {:<14} {:>8} {:<17} {:>8}  {}\n",
        "figure", "judge", "real", "(range / 95%)", "fdlab", "agrees"
    );
    for l in lines {
        let range = match (l.real_low, l.real_high) {
            (Some(a), Some(b)) => format!("({}-{})", number(Some(a)), number(Some(b))),
            (Some(a), None) => format!("({}-?)", number(Some(a))),
            _ => String::new(),
        };
        let agrees = match l.agrees {
            Some(true) => "yes",
            Some(false) => "NO",
            None => "n/a",
        };
        let figure = format!("{} ({})", l.figure, l.unit);
        let _ = writeln!(
            s,
            "{figure:<50} {:<14} {:>8} {range:<17} {:>8}  {agrees}",
            l.judge,
            number(l.real),
            number(l.sim),
        );
    }
    s
}

/// The comparison as `calibration.csv`.
pub fn csv(scenario: &str, lines: &[Line]) -> Result<Vec<u8>, String> {
    let mut w = csv::Writer::from_writer(Vec::new());
    let opt = |v: Option<f64>| v.map_or(String::new(), |v| format!("{v:.6}"));
    w.write_record([
        "scenario",
        "figure",
        "unit",
        "judge",
        "real_runs",
        "real",
        "real_low",
        "real_high",
        "sim_seeds",
        "sim",
        "agrees",
        "rule",
    ])
    .map_err(|e| e.to_string())?;
    for l in lines {
        w.write_record([
            scenario.to_string(),
            l.figure.to_string(),
            l.unit.to_string(),
            l.judge.clone(),
            l.real_runs.to_string(),
            opt(l.real),
            opt(l.real_low),
            opt(l.real_high),
            l.sim_seeds.to_string(),
            opt(l.sim),
            l.agrees.map_or(String::new(), |a| a.to_string()),
            l.rule.clone(),
        ])
        .map_err(|e| e.to_string())?;
    }
    w.into_inner().map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn figures(first_dead: f64, healthy: u64) -> Figures {
        Figures {
            first_dead: vec![Some(first_dead)],
            all_views: vec![Some(first_dead + 0.5)],
            false_healthy: healthy,
            messages_per_member_s: 10.0,
            ..Figures::default()
        }
    }

    #[test]
    fn agreement_follows_the_rules_and_can_fail() {
        let judge = |name: &str, real: &[(f64, u64)], sim: &[(f64, u64)]| JudgeRuns {
            judge: name.into(),
            real: real.iter().map(|&(d, h)| figures(d, h)).collect(),
            sim: sim.iter().map(|&(d, h)| figures(d, h)).collect(),
        };
        let swim = judge(
            "swim",
            &[(6.0, 4), (6.2, 6), (6.4, 5)],
            &[(6.9, 5), (7.0, 5)],
        );
        let lg = judge(
            "lifeguard",
            &[(9.0, 1), (9.5, 0), (10.0, 2)],
            &[(12.0, 9), (12.0, 9)],
        );
        let lines = lines(&[swim, lg]);
        let get = |figure: &str, judge: &str| {
            lines
                .iter()
                .find(|l| l.figure == figure && l.judge == judge)
                .unwrap()
        };
        // 7.0 against 6.2: within 1 s. 12.0 against 9.5: 2.5 s > max(1.4, 1).
        assert_eq!(get("crash -> first Dead", "swim").agrees, Some(true));
        assert_eq!(get("crash -> first Dead", "lifeguard").agrees, Some(false));
        // 5 in swim's interval; 9 outside lifeguard's.
        assert_eq!(
            get("false events, healthy observers", "swim").agrees,
            Some(true)
        );
        assert_eq!(
            get("false events, healthy observers", "lifeguard").agrees,
            Some(false)
        );
        // Real: SWIM more; fdlab: SWIM fewer.
        let d = get(
            "SWIM/Lifeguard false events, healthy obs.",
            "swim/lifeguard",
        );
        assert_eq!(d.agrees, Some(false), "{}", d.rule);
        assert!(
            d.rule.contains("real: SWIM more, fdlab: SWIM fewer"),
            "{}",
            d.rule
        );
        let t = table(&lines);
        assert!(t.lines().all(|l| l.chars().count() <= 120), "{t}");
    }
}
