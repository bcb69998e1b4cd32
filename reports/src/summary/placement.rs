//! The key-placement part of the summary: per group of placement scenarios
//! that ran the same distributions, one row per distribution, pooled over
//! every detector (or judge) feeding it and every seed: what a crash
//! declaration moves, what a false one costs, what the clients feel.
//!
//! **The pick**: the distribution whose clients miss or fail the smallest
//! share of requests; shares within a factor of [`SAME_WITHIN`] weigh the
//! same, and then fewer keys moved by false declarations per healthy
//! server-hour, then less disagreement between clients, decide.

use super::blame::and_list;
use super::weigh::{bucket, smallest_positive as floor, SAME_WITHIN};
use super::words::figure;
use super::{by_lineup, Cell, Column, Group, Part, Row};
use crate::placement::{PlacementMetrics, PlacementReport, PlacementSummary};

/// Nanoseconds in an hour and in a second.
const NANOS_PER_HOUR: f64 = 3.6e12;
const NANOS_PER_SECOND: f64 = 1e9;

/// One distribution's pooled counts.
#[derive(Clone, Debug, Default)]
struct Pool {
    name: String,
    true_declarations: u64,
    false_declarations: u64,
    moved_true: u64,
    moved_false: u64,
    /// Keys × true declarations: the denominator of the moved share.
    key_declarations: f64,
    requests: u64,
    misses: u64,
    failed: u64,
    stale: u64,
    disagreement: u128,
    run_time: u128,
    healthy_server_time: u128,
}

impl Pool {
    fn add(&mut self, s: &PlacementSummary) {
        self.true_declarations += s.true_declarations;
        self.false_declarations += s.false_declarations;
        self.moved_true += s.moved_true;
        self.moved_false += s.moved_false;
        self.key_declarations += s.true_declarations as f64 * f64::from(s.keys);
        self.requests += s.requests;
        self.misses += s.misses;
        self.failed += s.failed;
        self.stale += s.stale;
        self.disagreement += s.disagreement;
        self.run_time += s.run_time;
        self.healthy_server_time += s.healthy_server_time;
    }
    fn share(&self, n: u64) -> Option<f64> {
        (self.requests > 0).then(|| n as f64 / self.requests as f64)
    }
    fn moved_per_crash(&self) -> Option<f64> {
        (self.key_declarations > 0.0).then(|| self.moved_true as f64 / self.key_declarations)
    }
    fn lost_per_server_hour(&self) -> Option<f64> {
        (self.healthy_server_time > 0)
            .then(|| self.moved_false as f64 / (self.healthy_server_time as f64 / NANOS_PER_HOUR))
    }
    fn disagreement_per_hour(&self) -> Option<f64> {
        (self.run_time > 0).then(|| {
            self.disagreement as f64 / NANOS_PER_SECOND / (self.run_time as f64 / NANOS_PER_HOUR)
        })
    }
    fn bad_share(&self) -> Option<f64> {
        self.share(self.misses + self.failed)
    }
}

fn percent(v: Option<f64>) -> Cell {
    v.map_or(Cell::None, |v| Cell::number(v * 100.0, 2))
}

/// The part for the run's placement scenarios, in the order given.
pub fn placement_part(reports: &[PlacementReport]) -> Part {
    let lineups: Vec<Vec<String>> = reports
        .iter()
        .map(|r| {
            let mut names: Vec<String> = Vec::new();
            for s in &r.metrics.summary {
                if !names.contains(&s.distribution) {
                    names.push(s.distribution.clone());
                }
            }
            names
        })
        .collect();
    let groups = by_lineup(&lineups)
        .into_iter()
        .map(|(lineup, members)| {
            let scenarios: Vec<&PlacementMetrics> =
                members.iter().map(|&i| &reports[i].metrics).collect();
            group(&lineup, &scenarios)
        })
        .collect();
    Part {
        id: "placement".into(),
        title: "Key placement".into(),
        candidate: "distribution".into(),
        groups,
    }
}

fn group(lineup: &[String], scenarios: &[&PlacementMetrics]) -> Group {
    let pools: Vec<Pool> = lineup
        .iter()
        .map(|name| {
            let mut pool = Pool {
                name: name.clone(),
                ..Pool::default()
            };
            for s in scenarios
                .iter()
                .flat_map(|m| &m.summary)
                .filter(|s| &s.distribution == name)
            {
                pool.add(s);
            }
            pool
        })
        .collect();
    let columns = vec![
        Column::new(
            "moved_per_crash_percent",
            "keys moved per crash",
            Some("% of keys"),
        ),
        Column::new(
            "keys_lost_per_healthy_server_hour",
            "keys moved by false declarations",
            Some("per server-h"),
        ),
        Column::new("missed_percent", "requests missed", Some("%")),
        Column::new("failed_percent", "requests failed", Some("%")),
        Column::new("stale_percent", "stale reads", Some("%")),
        Column::new(
            "disagreement_key_seconds_per_hour",
            "clients disagree",
            Some("key-s per h"),
        ),
    ];
    let rows = pools
        .iter()
        .map(|p| Row {
            name: p.name.clone(),
            cells: vec![
                percent(p.moved_per_crash()),
                Cell::maybe(p.lost_per_server_hour(), 1),
                percent(p.share(p.misses)),
                percent(p.share(p.failed)),
                percent(p.share(p.stale)),
                Cell::maybe(p.disagreement_per_hour(), 0),
            ],
        })
        .collect();
    let (pick, sentences) = weigh(&pools);
    Group {
        scenarios: scenarios.iter().map(|m| m.scenario.clone()).collect(),
        columns,
        rows,
        pick,
        sentences,
    }
}

fn weigh(pools: &[Pool]) -> (Option<String>, Vec<String>) {
    let bad_floor = floor(pools.iter().map(Pool::bad_share));
    let lost_floor = floor(pools.iter().map(Pool::lost_per_server_hour));
    let mut order: Vec<usize> = (0..pools.len()).collect();
    order.sort_by(|&a, &b| {
        let key = |p: &Pool| {
            (
                bucket(p.bad_share(), bad_floor),
                bucket(p.lost_per_server_hour(), lost_floor),
            )
        };
        key(&pools[a])
            .cmp(&key(&pools[b]))
            .then(
                pools[a]
                    .disagreement_per_hour()
                    .unwrap_or(f64::INFINITY)
                    .total_cmp(&pools[b].disagreement_per_hour().unwrap_or(f64::INFINITY)),
            )
            .then(a.cmp(&b))
    });
    let Some(&pick) = order.first() else {
        return (None, Vec::new());
    };
    let pct = |v: Option<f64>| v.map_or("-".into(), |v| format!("{:.1}%", v * 100.0));
    let p = &pools[pick];
    let mut sentences = vec![format!(
        "pick `{}`: {} of requests missed or failed, a crash moves {} of a client's keys, {} keys moved by false declarations per healthy server-hour",
        p.name,
        pct(p.bad_share()),
        pct(p.moved_per_crash()),
        figure(p.lost_per_server_hour().unwrap_or(0.0))
    )];
    if let Some(&worst) = order.last().filter(|&&w| w != pick) {
        let w = &pools[worst];
        let mut clauses = vec![format!(
            "{} of requests missed or failed",
            pct(w.bad_share())
        )];
        if let (Some(wm), Some(pm)) = (w.moved_per_crash(), p.moved_per_crash()) {
            if wm > pm * SAME_WITHIN {
                clauses.push(format!("a crash moves {} of the keys", pct(Some(wm))));
            }
        }
        sentences.push(format!("least fit: `{}`, {}", w.name, and_list(&clauses)));
    }
    (Some(p.name.clone()), sentences)
}
