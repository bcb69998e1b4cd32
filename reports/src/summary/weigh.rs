//! How the summary weighs detectors, and membership judges, against each
//! other: a [`Standing`] per candidate, its row, and the pick with the trade
//! in words.
//!
//! **The pick** weighs, in this order: (1) every must-detect fault
//! detected (every crash declared); (2) fewest tolerated fault classes
//! failed; (3) longest pause tolerated; (4) fewest false Failed (false
//! declarations) per pair-hour (node-hour); (5) fewest messages per
//! fewest messages spent per detection: messages per pair-second
//! (node-second) times the time to detect, the trade every heartbeat
//! detector makes between traffic and speed, weighed evenly (a detector
//! twice as fast for twice the messages weighs the same); without a fault
//! to detect, messages alone; (6) fastest detection. Figures within a
//! factor of [`SAME_WITHIN`] weigh the same in (4) and (5), so that a 1%
//! difference does not decide. The rule only orders the table's figures;
//! the sentences then say what the pick gives up against the fastest
//! candidate and the cheapest, in ratios, and name the runner-up.

use std::cmp::Reverse;

use fdlab_protocol::Nanos;
use fdlab_sim::scenario::FaultKind;

use super::blame::{and_list, kinds_in_order, Tolerance};
use super::words::{duration, durations, figure, fraction, times};
use super::{Cell, Column, Group, Row};

/// Rates within this factor of each other weigh the same in the pick.
pub const SAME_WITHIN: f64 = 1.25;
/// Times within this factor of each other are said to be "about as fast".
const ABOUT: f64 = 1.05;

/// One candidate's figures over one group's runs.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Standing {
    pub name: String,
    /// Per must-detect fault kind: (windows, missed).
    pub detect: Vec<(FaultKind, usize, usize)>,
    pub tolerance: Tolerance,
    /// Time to detect (to declare), as [`Words::speed`] says.
    pub speed: Option<Nanos>,
    pub false_rate: Option<f64>,
    pub suspicion_rate: Option<f64>,
    pub message_rate: Option<f64>,
}

impl Standing {
    /// Messages spent per detection: messages per second times the time to
    /// detect; messages per second alone without a fault to detect.
    pub fn cost(&self) -> Option<f64> {
        let rate = self.message_rate?;
        Some(self.speed.map_or(rate, |s| rate * s.as_secs_f64()))
    }
}

/// What a part calls its figures.
pub struct Words {
    /// `false Failed`, `false declarations`.
    pub mistakes: &'static str,
    /// `pair-hour`, `node-hour`.
    pub exposure: &'static str,
    /// `pair-second`, `node-second`.
    pub message_per: &'static str,
    /// `detect`, `declare`.
    pub detect: &'static str,
    /// `detects`, `declares`.
    pub detects: &'static str,
    /// `median`, `mean`.
    pub speed: &'static str,
    /// The speed column's title: `T_D p50`, `declare mean`.
    pub speed_title: &'static str,
}

impl Standing {
    pub fn detected_all(&self) -> bool {
        self.detect.iter().all(|&(_, _, missed)| missed == 0)
    }

    /// Its row: one cell per detected kind, per tolerated kind, then the
    /// figures.
    pub fn row(&self, detect: &[FaultKind], tolerate: &[FaultKind]) -> Row {
        let mut cells = Vec::new();
        for k in detect {
            cells.push(match self.detect.iter().find(|(kind, ..)| kind == k) {
                None => Cell::None,
                Some(&(_, windows, 0)) => Cell::Pass {
                    text: format!("yes ({windows})"),
                },
                Some(&(_, windows, missed)) => Cell::Fail {
                    text: format!("missed {missed}/{windows}"),
                },
            });
        }
        cells.extend(tolerate.iter().map(|&k| self.tolerance.cell(k)));
        cells.push(Cell::maybe(self.speed.map(Nanos::as_secs_f64), 3));
        cells.push(Cell::maybe(self.false_rate, 2));
        cells.push(Cell::maybe(self.suspicion_rate, 2));
        cells.push(Cell::maybe(self.message_rate, 2));
        Row {
            name: self.name.clone(),
            cells,
        }
    }
}

/// The must-detect and tolerated kinds of a group's standings, in order.
pub fn classes(standings: &[Standing]) -> (Vec<FaultKind>, Vec<FaultKind>) {
    (
        kinds_in_order(
            standings
                .iter()
                .flat_map(|s| s.detect.iter().map(|&(k, ..)| k)),
        ),
        kinds_in_order(standings.iter().flat_map(|s| s.tolerance.kinds())),
    )
}

/// The columns of [`Standing::row`].
pub fn columns(detect: &[FaultKind], tolerate: &[FaultKind], words: &Words) -> Vec<Column> {
    let mut columns: Vec<Column> = Vec::new();
    for k in detect {
        columns.push(Column::new(
            &format!("{}_{}", words.detects, k.name()),
            &format!("{} {}", words.detects, k.name()),
            None,
        ));
    }
    for k in tolerate {
        columns.push(Column::new(
            &format!("tolerates_{}", k.name()),
            &format!("tolerates {}", k.name()),
            None,
        ));
    }
    let key = |s: &str| s.replace([' ', '-'], "_").to_lowercase();
    columns.extend([
        Column::new(&key(words.speed_title), words.speed_title, Some("s")),
        Column::new(
            &key(&format!("{} per {}", words.mistakes, words.exposure)),
            words.mistakes,
            Some(&format!("per {}", words.exposure)),
        ),
        Column::new(
            &key(&format!("suspicions per {}", words.exposure)),
            "suspicions",
            Some(&format!("per {}", words.exposure)),
        ),
        Column::new(
            &key(&format!("messages per {}", words.message_per)),
            "messages",
            Some(&format!("per {}", words.message_per)),
        ),
    ]);
    columns
}

/// The group of `scenarios` whose candidates stand as `standings`: its
/// table and its pick.
pub fn group(scenarios: Vec<String>, standings: &[Standing], words: &Words) -> Group {
    let (detect, tolerate) = classes(standings);
    let (pick, sentences) = weigh(standings, words);
    Group {
        scenarios,
        columns: columns(&detect, &tolerate, words),
        rows: standings
            .iter()
            .map(|s| s.row(&detect, &tolerate))
            .collect(),
        pick,
        sentences,
    }
}

/// A bucket of a rate relative to the smallest non-zero one: zero, then one
/// bucket per factor of [`SAME_WITHIN`]; `None` last.
pub(crate) fn bucket(v: Option<f64>, smallest: f64) -> i64 {
    match v {
        None => i64::MAX,
        Some(v) if v <= 0.0 => 0,
        Some(v) => 1 + ((v / smallest).ln() / SAME_WITHIN.ln()).floor() as i64,
    }
}

/// The smallest positive value, the base of [`bucket`] (infinity: none).
pub(crate) fn smallest_positive(values: impl Iterator<Item = Option<f64>>) -> f64 {
    values
        .flatten()
        .filter(|v| *v > 0.0)
        .fold(f64::INFINITY, f64::min)
}

/// The pick of `standings` and the sentences that weigh it (module docs).
pub fn weigh(standings: &[Standing], words: &Words) -> (Option<String>, Vec<String>) {
    let mut sentences = Vec::new();
    let false_floor = smallest_positive(standings.iter().map(|s| s.false_rate));
    let cost_floor = smallest_positive(standings.iter().map(Standing::cost));
    let key = |i: usize| {
        let s = &standings[i];
        (
            s.tolerance.failed_kinds().len(),
            Reverse(s.tolerance.pause_rank()),
            bucket(s.false_rate, false_floor),
            bucket(s.cost(), cost_floor),
            s.speed.unwrap_or(Nanos::MAX),
            i,
        )
    };
    let mut eligible: Vec<usize> = (0..standings.len())
        .filter(|&i| standings[i].detected_all())
        .collect();
    eligible.sort_by_key(|&i| key(i));
    let (detect, tolerate) = classes(standings);
    let Some(&pick) = eligible.first() else {
        sentences.push(format!(
            "no pick: every one missed a fault it had to {}",
            words.detect
        ));
        return (None, sentences);
    };
    let p = &standings[pick];
    sentences.push(pick_sentence(p, words));
    if let Some(&r) = eligible.get(1) {
        sentences.push(runner_up_sentence(&standings[r], p, words));
    }
    let fastest = (0..standings.len())
        .filter(|&i| standings[i].speed.is_some())
        .min_by_key(|&i| (standings[i].speed, i));
    if let Some(f) = fastest.filter(|&f| f != pick) {
        sentences.push(against_fastest(p, &standings[f], words));
    }
    let cheapest = (0..standings.len())
        .filter(|&i| standings[i].message_rate.is_some())
        .min_by(|&a, &b| {
            standings[a]
                .message_rate
                .partial_cmp(&standings[b].message_rate)
                .unwrap_or(std::cmp::Ordering::Equal)
                .then(a.cmp(&b))
        });
    if let Some(c) = cheapest.filter(|&c| c != pick && Some(c) != fastest) {
        sentences.push(against_cheapest(p, &standings[c], words));
    }
    for k in &detect {
        let missed_by_all = standings.iter().all(|s| {
            s.detect
                .iter()
                .any(|&(kind, _, missed)| kind == *k && missed > 0)
        });
        if missed_by_all {
            sentences.push(format!("none {} every {} fault", words.detects, k.name()));
        }
    }
    for k in &tolerate {
        if standings
            .iter()
            .all(|s| s.tolerance.failed_kinds().contains(k))
        {
            sentences.push(format!(
                "none tolerates every {} fault here: each made {} under one",
                k.name(),
                words.mistakes
            ));
        }
    }
    (Some(p.name.clone()), sentences)
}

fn pick_sentence(p: &Standing, words: &Words) -> String {
    let mut parts = Vec::new();
    let detected = kinds_in_order(p.detect.iter().map(|&(k, ..)| k));
    if let (false, Some(speed)) = (detected.is_empty(), p.speed) {
        let kinds: Vec<&str> = detected.iter().map(|k| k.name()).collect();
        parts.push(format!(
            "{} every {} fault ({} {})",
            words.detects,
            kinds.join(" and "),
            words.speed,
            duration(speed)
        ));
    }
    parts.extend(p.tolerance.phrase().map(|t| format!("tolerates {t}")));
    parts.push(format!(
        "{} {} per {}, {} messages per {}",
        figure(p.false_rate.unwrap_or(0.0)),
        words.mistakes,
        words.exposure,
        figure(p.message_rate.unwrap_or(0.0)),
        words.message_per
    ));
    format!("pick `{}`: {}", p.name, parts.join("; "))
}

fn runner_up_sentence(r: &Standing, p: &Standing, words: &Words) -> String {
    let mut parts = Vec::new();
    if let Some(speed) = r.speed {
        parts.push(format!("{} {}", words.speed, duration(speed)));
    }
    parts.push(format!(
        "{} {} per {}",
        figure(r.false_rate.unwrap_or(0.0)),
        words.mistakes,
        words.exposure
    ));
    parts.push(format!(
        "{} messages per {}",
        figure(r.message_rate.unwrap_or(0.0)),
        words.message_per
    ));
    // What it fails that the pick does not.
    let pick_failed = p.tolerance.failed_kinds();
    let failed: Vec<&str> = r
        .tolerance
        .failed_kinds()
        .into_iter()
        .filter(|k| !pick_failed.contains(k))
        .map(FaultKind::name)
        .collect();
    if !failed.is_empty() {
        parts.push(format!(
            "fails the {} faults `{}` tolerates",
            failed.join(" and "),
            p.name
        ));
    }
    format!("runner-up `{}`: {}", r.name, parts.join(", "))
}

/// `a` against `b` on messages: `at 1/10 of its messages (0.89 against 8.9
/// per pair-second)` or `with 2.0× its messages (...)`.
fn messages_clause(a: &Standing, b: &Standing, words: &Words) -> Option<String> {
    let (ma, mb) = (a.message_rate?, b.message_rate?);
    if ma <= 0.0 || mb <= 0.0 {
        return None;
    }
    let how = if ma <= mb {
        format!("at {} its messages", fraction(ma, mb))
    } else {
        format!("with {} its messages", times(ma, mb))
    };
    Some(format!(
        "{how} ({} against {} per {})",
        figure(ma),
        figure(mb),
        words.message_per
    ))
}

fn against_fastest(p: &Standing, f: &Standing, words: &Words) -> String {
    let mut text = match (p.speed, f.speed) {
        (Some(ps), Some(fs)) if fs > Nanos::ZERO && ps.as_secs_f64() > fs.as_secs_f64() * ABOUT => {
            let (a, b) = durations(ps, fs);
            format!(
                "`{}` is {} slower to {} than `{}` ({a} against {b})",
                p.name,
                times(ps.as_secs_f64(), fs.as_secs_f64()),
                words.detect,
                f.name,
            )
        }
        (Some(ps), Some(fs)) => {
            let (a, b) = durations(ps, fs);
            format!(
                "`{}` is about as fast to {} as `{}` ({a} against {b})",
                p.name, words.detect, f.name
            )
        }
        _ => format!("`{}` against `{}`:", p.name, f.name),
    };
    if let Some(m) = messages_clause(p, f, words) {
        text.push(' ');
        text.push_str(&m);
    }
    let mut costs = Vec::new();
    if let (Some((p_up, p_fail)), Some((f_up, Some(f_fail)))) =
        (p.tolerance.pauses(), f.tolerance.pauses())
    {
        if p_fail.is_none() || f_up < p_up {
            costs.push(if f_up > Nanos::ZERO {
                let (up_to, fails) = durations(f_up, f_fail);
                format!("tolerates pauses only up to {up_to} (not {fails})")
            } else {
                format!(
                    "makes {} under pauses of {}",
                    words.mistakes,
                    duration(f_fail)
                )
            });
        }
    }
    let p_failed = p.tolerance.failed_kinds();
    let worse: Vec<String> = f
        .tolerance
        .failed_kinds()
        .into_iter()
        .filter(|k| *k != FaultKind::Pause && !p_failed.contains(k))
        .map(|k| k.name().to_string())
        .collect();
    if !worse.is_empty() {
        costs.push(format!(
            "fails the {} faults `{}` tolerates",
            worse.join(" and "),
            p.name
        ));
    }
    if let (Some(fr), Some(pr)) = (f.false_rate, p.false_rate) {
        if fr > pr * SAME_WITHIN {
            costs.push(if pr > 0.0 {
                format!(
                    "makes {} its {} ({} against {} per {})",
                    times(fr, pr),
                    words.mistakes,
                    figure(fr),
                    figure(pr),
                    words.exposure
                )
            } else {
                format!(
                    "makes {} {} per {} against none",
                    figure(fr),
                    words.mistakes,
                    words.exposure
                )
            });
        }
    }
    if !costs.is_empty() {
        text.push_str(&format!("; `{}` {}", f.name, and_list(&costs)));
    }
    text
}

fn against_cheapest(p: &Standing, c: &Standing, words: &Words) -> String {
    let mut losses = Vec::new();
    if !c.detected_all() {
        losses.push(format!("misses faults it had to {}", words.detect));
    }
    let p_failed = p.tolerance.failed_kinds();
    let extra: Vec<&str> = c
        .tolerance
        .failed_kinds()
        .into_iter()
        .filter(|k| !p_failed.contains(k))
        .map(FaultKind::name)
        .collect();
    if !extra.is_empty() {
        losses.push(format!("fails the {} faults", extra.join(" and ")));
    }
    if let (Some((c_up, Some(_))), Some((p_up, _))) = (c.tolerance.pauses(), p.tolerance.pauses()) {
        if c_up < p_up {
            losses.push(format!("tolerates pauses only up to {}", duration(c_up)));
        }
    }
    if let (Some(cr), Some(pr)) = (c.false_rate, p.false_rate) {
        if cr > pr * SAME_WITHIN {
            losses.push(format!(
                "makes {} {} per {}",
                figure(cr),
                words.mistakes,
                words.exposure
            ));
        }
    }
    if let (Some(cs), Some(ps)) = (c.speed, p.speed) {
        if cs > ps && ps > Nanos::ZERO {
            losses.push(format!(
                "is {} slower to {} ({})",
                times(cs.as_secs_f64(), ps.as_secs_f64()),
                words.detect,
                duration(cs)
            ));
        }
    }
    let rate = c.message_rate.map_or(String::new(), |m| {
        format!(" ({} per {})", figure(m), words.message_per)
    });
    if losses.is_empty() {
        format!(
            "`{}` sends the fewest messages{rate}, at no other cost against `{}`",
            c.name, p.name
        )
    } else {
        format!(
            "`{}` sends the fewest messages{rate}, but against `{}` it {}",
            c.name,
            p.name,
            and_list(&losses)
        )
    }
}
