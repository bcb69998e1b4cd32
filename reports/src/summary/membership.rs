//! The membership part of the summary: per group of membership scenarios
//! that ran the same judges, one row per judge, then the pick
//! ([`super::weigh`], with "declare" for "detect").
//!
//! *Declares crash*: every crash was written Dead before the run ended.
//! *Tolerates K*: no false declaration (a live silo or member written
//! Dead) was put down to a fault of kind K ([`super::blame`]: the fault
//! holds the declared node or the declaring one). The figures pool the
//! group's runs: the mean time from crash to its first Dead write, false
//! declarations and suspicions per node-hour up, messages between members
//! per node-second up.

use fdlab_protocol::Nanos;

use super::blame::{blame, Mistake, Tolerance};
use super::weigh::{group, Standing, Words};
use super::{by_lineup, Part};
use crate::cluster::{ClusterMetrics, MembershipReport};
use fdlab_sim::scenario::FaultKind;

/// Nanoseconds in an hour and in a second.
const NANOS_PER_HOUR: f64 = 3.6e12;
const NANOS_PER_SECOND: f64 = 1e9;

/// How the membership part names its figures.
pub const WORDS: Words = Words {
    mistakes: "false declarations",
    exposure: "node-hour",
    message_per: "node-second",
    detect: "declare",
    detects: "declares",
    speed: "mean",
    speed_title: "declare mean",
};

fn standing(judge: &str, scenarios: &[&ClusterMetrics]) -> Standing {
    let (mut crashes, mut declared) = (0usize, 0usize);
    let (mut declare_sum, mut declare_n) = (0u128, 0u128);
    let (mut false_n, mut suspicions) = (0u128, 0u128);
    let (mut node_time, mut messages) = (0u128, 0u128);
    let mut tolerance = Tolerance::default();
    for m in scenarios {
        for j in m.summary.iter().filter(|j| j.judge == judge) {
            crashes += j.crashes;
            declared += j.declared;
            if let Some(d) = j.declare {
                declare_sum += u128::from(d.mean.0) * d.n as u128;
                declare_n += d.n as u128;
            }
            false_n += j.false_declarations as u128;
            suspicions += j.suspicions as u128;
            node_time += j.node_time;
            messages += j.messages;
        }
        for (seed, duration, faults) in &m.faults {
            let mistakes: Vec<Mistake> = m
                .declarations
                .iter()
                .filter(|r| r.judge == judge && r.seed == *seed && r.declaration.false_positive)
                .map(|r| Mistake {
                    at: r.declaration.at,
                    observer: r.declaration.by.node,
                    target: r.declaration.target.node,
                })
                .collect();
            tolerance.faults.extend(blame(faults, *duration, &mistakes));
        }
    }
    let per_hour =
        |n: u128| (node_time > 0).then(|| n as f64 / (node_time as f64 / NANOS_PER_HOUR));
    Standing {
        name: judge.to_string(),
        detect: if crashes > 0 {
            vec![(FaultKind::Crash, crashes, crashes - declared)]
        } else {
            Vec::new()
        },
        tolerance,
        speed: (declare_n > 0).then(|| {
            let mean = declare_sum / declare_n;
            Nanos(u64::try_from(mean).unwrap_or(u64::MAX))
        }),
        false_rate: per_hour(false_n),
        suspicion_rate: per_hour(suspicions),
        message_rate: (node_time > 0)
            .then(|| messages as f64 / (node_time as f64 / NANOS_PER_SECOND)),
    }
}

/// The part for the run's membership scenarios, in the order given.
pub fn membership_part(reports: &[MembershipReport]) -> Part {
    let lineups: Vec<Vec<String>> = reports
        .iter()
        .map(|r| r.metrics.summary.iter().map(|j| j.judge.clone()).collect())
        .collect();
    let groups = by_lineup(&lineups)
        .into_iter()
        .map(|(lineup, members)| {
            let scenarios: Vec<&ClusterMetrics> =
                members.iter().map(|&i| &reports[i].metrics).collect();
            let standings: Vec<Standing> = lineup.iter().map(|c| standing(c, &scenarios)).collect();
            let names = scenarios.iter().map(|m| m.scenario.clone()).collect();
            group(names, &standings, &WORDS)
        })
        .collect();
    Part {
        id: "membership".into(),
        title: "Membership judges".into(),
        candidate: "judge".into(),
        groups,
    }
}
