//! Judging one detector's verdict timeline on one monitored pair against the
//! pair's ground truth: detections (T_D), mistakes (λ_M, T_M) split into
//! false Failed and Suspect-only ones, recoveries ([`super::recovery`]) and
//! the healthy time behind P_A, as defined in [`crate::metrics`].

use fdlab_protocol::{Nanos, Verdict};
use fdlab_sim::outcome::{DetectorTimeline, PairOutcome, Window};

use super::recovery::{recoveries, Recovery};
use super::spans::{contains, intersect, measure, normalize, subtract, Spans};

/// One must-detect window of one pair, as one detector handled it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Detection {
    pub monitor: u32,
    pub target: u32,
    /// Index into [`RunOutcome::faults`](fdlab_sim::outcome::RunOutcome::faults).
    pub fault: usize,
    /// The window, its end clipped to the end of the run.
    pub window: Window,
    /// When the lasting Suspect-or-worse began; `None` = missed.
    pub suspect_at: Option<Nanos>,
    /// When the lasting Failed began; `None` = missed.
    pub failed_at: Option<Nanos>,
}

impl Detection {
    /// Detection time to Suspect (T_D to a suspicion).
    pub fn suspect_delay(&self) -> Option<Nanos> {
        self.suspect_at.map(|t| t - self.window.start)
    }
    /// Detection time to Failed (T_D).
    pub fn failed_delay(&self) -> Option<Nanos> {
        self.failed_at.map(|t| t - self.window.start)
    }
}

/// Why a mistake ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum MistakeEnd {
    /// The verdict went back to Alive.
    Alive,
    /// A must-detect window began: the verdict became right.
    MustDetect,
    /// The monitor went down.
    Unjudged,
    /// The run ended.
    RunEnd,
}

impl MistakeEnd {
    /// The name used in `mistakes.csv`.
    pub const fn as_str(self) -> &'static str {
        match self {
            MistakeEnd::Alive => "alive",
            MistakeEnd::MustDetect => "must-detect",
            MistakeEnd::Unjudged => "unjudged",
            MistakeEnd::RunEnd => "run-end",
        }
    }
}

/// A Suspect or Failed verdict about a target that must not be detected.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Mistake {
    pub monitor: u32,
    pub target: u32,
    pub start: Nanos,
    pub end: Nanos,
    /// The worst verdict during the mistake.
    pub worst: Verdict,
    pub ended_by: MistakeEnd,
}

impl Mistake {
    pub fn duration(&self) -> Nanos {
        self.end - self.start
    }

    /// A **false Failed**: the verdict reached Failed during the mistake, so
    /// a host acting on Failed (failover, eviction, rebalancing) would have
    /// acted on a healthy peer. Otherwise the mistake is **Suspect-only** (a
    /// suspicion): it ended, or stopped being judged, before any Failed.
    pub fn is_false_failed(&self) -> bool {
        self.worst == Verdict::Failed
    }
}

/// One detector's record on one pair in one run.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PairMetrics {
    /// One per must-detect window with judged time, in the pair's order.
    pub detections: Vec<Detection>,
    /// In time order.
    pub mistakes: Vec<Mistake>,
    /// In time order.
    pub recoveries: Vec<Recovery>,
    /// Must-not-detect time of the pair.
    pub must_not_detect: Nanos,
    /// The part of it during which the verdict was Alive.
    pub alive_must_not_detect: Nanos,
    /// Must-not-detect time outside recovery windows.
    pub healthy: Nanos,
    /// The part of it during which the verdict was Alive.
    pub alive_healthy: Nanos,
}

/// One detector's record on one pair of a run of length `duration`.
pub fn pair_metrics(
    duration: Nanos,
    pair: &PairOutcome,
    timeline: &DetectorTimeline,
) -> PairMetrics {
    judge(duration, pair, &Truth::new(duration, pair), timeline)
}

/// The ground truth of one pair as spans, shared by all its detectors.
pub(super) struct Truth {
    pub(super) judged: Spans,
    pub(super) must_detect: Spans,
    pub(super) must_not_detect: Spans,
}

impl Truth {
    pub(super) fn new(duration: Nanos, pair: &PairOutcome) -> Truth {
        let end = duration.0;
        let clip = |w: &Window| (w.start.0.min(end), w.end.0.min(end));
        let unjudged = normalize(pair.unjudged.iter().map(clip).collect());
        let judged = subtract(&normalize(vec![(0, end)]), &unjudged);
        let detect = normalize(pair.must_detect.iter().map(|m| clip(&m.window)).collect());
        let must_detect = intersect(&judged, &detect);
        let must_not_detect = subtract(&judged, &must_detect);
        Truth {
            judged,
            must_detect,
            must_not_detect,
        }
    }
}

pub(super) fn judge(
    duration: Nanos,
    pair: &PairOutcome,
    truth: &Truth,
    timeline: &DetectorTimeline,
) -> PairMetrics {
    let end = duration.0;
    let changes = effective_changes(&timeline.changes, end);
    let alive = spans_where(&changes, end, |v| v == Verdict::Alive);
    let not_failed = spans_where(&changes, end, |v| v != Verdict::Failed);

    let mut detections = Vec::new();
    for m in &pair.must_detect {
        let window = (m.window.start.0.min(end), m.window.end.0.min(end));
        let judged = intersect(&truth.judged, &normalize(vec![window]));
        if judged.is_empty() {
            continue;
        }
        detections.push(Detection {
            monitor: pair.monitor,
            target: pair.target,
            fault: m.fault,
            window: Window {
                start: Nanos(window.0),
                end: Nanos(window.1),
            },
            suspect_at: lasting_from(&judged, &alive).map(Nanos),
            failed_at: lasting_from(&judged, &not_failed).map(Nanos),
        });
    }

    let mut mistakes = Vec::new();
    let mnd = &truth.must_not_detect;
    let mut previous = Verdict::Alive;
    for (k, &(t, verdict)) in changes.iter().enumerate() {
        let was = previous;
        previous = verdict;
        if was != Verdict::Alive || verdict == Verdict::Alive {
            continue;
        }
        let i = mnd.partition_point(|&(_, e)| e <= t);
        let Some(&(start, stop)) = mnd.get(i) else {
            continue;
        };
        if start > t {
            continue;
        }
        let mut worst = verdict;
        let mut back_alive = None;
        for &(u, v) in &changes[k + 1..] {
            if u >= stop {
                break;
            }
            if v == Verdict::Alive {
                back_alive = Some(u);
                break;
            }
            worst = worst.max(v);
        }
        let (mistake_end, ended_by) = match back_alive {
            Some(u) => (u, MistakeEnd::Alive),
            None if stop >= end => (stop, MistakeEnd::RunEnd),
            None if contains(&truth.must_detect, stop) => (stop, MistakeEnd::MustDetect),
            None => (stop, MistakeEnd::Unjudged),
        };
        mistakes.push(Mistake {
            monitor: pair.monitor,
            target: pair.target,
            start: Nanos(t),
            end: Nanos(mistake_end),
            worst,
            ended_by,
        });
    }

    let recoveries = recoveries(pair, truth, &changes, end);
    let lag = normalize(recoveries.iter().map(|r| (r.from.0, r.until.0)).collect());
    let healthy = subtract(mnd, &lag);
    PairMetrics {
        detections,
        mistakes,
        recoveries,
        must_not_detect: Nanos(measure(mnd)),
        alive_must_not_detect: Nanos(measure(&intersect(mnd, &alive))),
        healthy: Nanos(measure(&healthy)),
        alive_healthy: Nanos(measure(&intersect(&healthy, &alive))),
    }
}

/// The first instant of `judged` (the judged part of a window) from which the
/// verdict is never again in `bad` within the window; `None` if the last
/// judged instant is bad (the verdict did not hold until the fault ended).
fn lasting_from(judged: &[(u64, u64)], bad: &[(u64, u64)]) -> Option<u64> {
    let bad = intersect(judged, bad);
    let Some(&(_, last_bad)) = bad.last() else {
        return judged.first().map(|&(s, _)| s);
    };
    judged
        .iter()
        .find(|&&(_, e)| e > last_bad)
        .map(|&(s, _)| s.max(last_bad))
}

/// The verdict changes that matter: before `end`, in time order (stable), one
/// per instant (the last at that instant), each different from the verdict
/// before it (Alive before the first).
fn effective_changes(changes: &[(Nanos, Verdict)], end: u64) -> Vec<(u64, Verdict)> {
    let mut sorted: Vec<(u64, Verdict)> = changes
        .iter()
        .filter(|(t, _)| t.0 < end)
        .map(|&(t, v)| (t.0, v))
        .collect();
    sorted.sort_by_key(|&(t, _)| t);
    let mut out: Vec<(u64, Verdict)> = Vec::new();
    let mut current = Verdict::Alive;
    for (i, &(t, v)) in sorted.iter().enumerate() {
        let last_at_instant = sorted.get(i + 1).is_none_or(|&(u, _)| u != t);
        if last_at_instant && v != current {
            out.push((t, v));
            current = v;
        }
    }
    out
}

/// The spans of `[0, end)` where the verdict satisfies `keep`.
fn spans_where(changes: &[(u64, Verdict)], end: u64, keep: impl Fn(Verdict) -> bool) -> Spans {
    let mut spans = Vec::new();
    let mut from = 0;
    let mut verdict = Verdict::Alive;
    for &(t, v) in changes {
        if keep(verdict) {
            spans.push((from, t));
        }
        from = t;
        verdict = v;
    }
    if keep(verdict) {
        spans.push((from, end));
    }
    normalize(spans)
}
