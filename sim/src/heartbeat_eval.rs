//! How good one detector setting is on a recorded heartbeat recording: the host
//! behind `fdlab tune --trace`.
//!
//! A recording is the list of instants at which heartbeats from one peer arrived at
//! one monitor in a real system. The peer was alive for the whole recording, so it
//! can show a detector's *mistakes* directly, but it contains no crash, so
//! *detection time* is measured the way Chen, Toueg & Aguilera ("On the Quality
//! of Service of Failure Detectors", IEEE Transactions on Computers 51(5), 2002,
//! §6) and Hayashibara et al. ("The φ Accrual Failure Detector", SRDS 2004, §5)
//! evaluate detectors on recorded heartbeats: cut the recording at a random
//! instant, as if the sender had crashed there, and see how long the detector
//! takes to declare it Failed when no further heartbeat comes.
//!
//! - **Mistakes.** Every heartbeat is fed in order to a fresh detector that
//!   starts monitoring at the first arrival; due timers fire between arrivals at
//!   their own instants ([`crate::event_replay::fire_due_timers_observed`]), the same
//!   contract as `fdlab trace` and the simulator. A mistake is a transition from
//!   Alive to Suspect or Failed (a Suspect that turns into Failed is one
//!   mistake); it lasts until the verdict is Alive again, or until the
//!   recording ends. A mistake that reached Failed is a *false Failed*, the
//!   others are Suspect-only (suspicions), as in `fdlab run`'s reports.
//!   Mistakes per hour (Chen et al.'s λ_M, also split), mean mistake duration
//!   (T_M) and query accuracy (P_A, the share of the recording's span with an
//!   Alive verdict) are measured over the span from the first to the last
//!   arrival. The peer never fails during a recording, so every instant is
//!   healthy time: P_A here is the query accuracy over healthy time of the
//!   reports, with no recovery lag to leave out.
//! - **Detection time by cuts.** `cuts` crash instants are drawn uniformly in
//!   `[first arrival, last arrival)` from a ChaCha stream of the seed
//!   (its own stream, `Streams::recording_cuts`). For a cut `c` the detector has seen exactly the
//!   heartbeats at or before `c` (and fired its timers up to `c`); then it gets
//!   no input, only its own timers, until its verdict is Failed: T_D = that
//!   instant − `c` (zero if it is already Failed at `c`). With no input a
//!   detector never leaves Failed, so the first Failed is the permanent one Chen
//!   et al.'s T_D asks for. A detector with no further timer before reaching
//!   Failed (or more than [`MAX_TIMERS_PER_CUT`] of them) *missed* the crash.
//!   The cuts are sorted and the recording is replayed once: at each cut the live
//!   detector is cloned and the clone is run forward.
//!
//! Only detectors fed by heartbeats can be judged this way: `fixed-timeout`,
//! `phi-accrual`, `dataflow-decay` (each heartbeat is a stream-heartbeat frame)
//! and `two-stage` compositions of them. `adaptive-probe` needs probe round
//! trips, which a heartbeat recording does not contain, and is rejected.
//!
//! Library code: no IO; the same arrivals, configuration, cut count and seed
//! give the same evaluation on any machine.

use std::fmt;

use fdlab_protocol::time::NANOS_PER_HOUR;
use fdlab_protocol::{ConfigError, Detector, DetectorConfig, FailureDetector, Nanos, Verdict};
use rand::RngExt;

use crate::event_replay::fire_due_timers_observed;
use crate::rng::Streams;
use crate::stats::{mean_nanos, nearest_rank, DurationStats};

/// Timers a clone may fire after a cut before it is declared to have missed the
/// crash: far more than any detector needs (phi and fixed timeouts reach Failed
/// in one or two, tick-based decay computes its crossing in a few), so only a
/// detector that would never fail hits it.
pub const MAX_TIMERS_PER_CUT: usize = 100_000;

/// Fewest heartbeats a recording needs: two give one interval and a non-empty span.
pub const MIN_ARRIVALS: usize = 2;

/// The quality of service of one detector setting on one recording.
#[derive(Clone, Debug, PartialEq)]
pub struct HeartbeatEvaluation {
    /// Heartbeats in the recording.
    pub heartbeats: usize,
    /// From the first to the last arrival: the time over which mistakes count.
    pub span: Nanos,
    /// Transitions from Alive to Suspect or Failed while the sender was alive.
    pub mistakes: usize,
    /// `mistakes` per hour of `span` (λ_M).
    pub mistakes_per_hour: f64,
    /// Mistakes that reached Failed (the rest are Suspect-only).
    pub false_failed: usize,
    /// `false_failed` per hour of `span`.
    pub false_failed_per_hour: f64,
    /// The other mistakes (Suspect-only) per hour of `span`.
    pub suspicions_per_hour: f64,
    /// Total time with a Suspect or Failed verdict.
    pub mistake_time: Nanos,
    /// Mean mistake duration (T_M), `None` without mistakes.
    pub mean_mistake: Option<Nanos>,
    /// Share of `span` with an Alive verdict (P_A), in `[0, 1]`.
    pub query_accuracy: f64,
    /// Crash instants drawn.
    pub cuts: usize,
    /// Detection times of the cuts that were detected; `None` if none was.
    pub detection: Option<DurationStats>,
    /// Cuts never detected.
    pub missed: usize,
}

/// Why a detector setting cannot be evaluated on a recording.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HeartbeatEvalError {
    /// The detector (or one of its stages) probes its peer.
    NeedsProbes,
    /// Fewer than [`MIN_ARRIVALS`] heartbeats, or all at one instant.
    TooShort { heartbeats: usize },
    /// The arrivals go backwards at this index.
    Unordered { index: usize },
    /// The configuration does not validate.
    Config(ConfigError),
}

impl fmt::Display for HeartbeatEvalError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HeartbeatEvalError::NeedsProbes => f.write_str(
                "adaptive-probe needs probe round trips, which a heartbeat trace does not \
                 record; tune fixed-timeout, phi-accrual, dataflow-decay or two-stage on it",
            ),
            HeartbeatEvalError::TooShort { heartbeats } => write!(
                f,
                "a trace needs at least {MIN_ARRIVALS} heartbeats at different instants, got {heartbeats}"
            ),
            HeartbeatEvalError::Unordered { index } => {
                write!(f, "heartbeat {index} arrives before the one before it")
            }
            HeartbeatEvalError::Config(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for HeartbeatEvalError {}

impl From<ConfigError> for HeartbeatEvalError {
    fn from(e: ConfigError) -> HeartbeatEvalError {
        HeartbeatEvalError::Config(e)
    }
}

/// Evaluates `config` on the heartbeat `arrivals` (non-decreasing), with
/// `cuts` crash instants drawn from `seed` (see the module documentation).
pub fn evaluate(
    config: &DetectorConfig,
    arrivals: &[Nanos],
    cuts: usize,
    seed: u64,
) -> Result<HeartbeatEvaluation, HeartbeatEvalError> {
    if config.uses_probes() {
        return Err(HeartbeatEvalError::NeedsProbes);
    }
    if let Some(index) = arrivals.windows(2).position(|w| w[1] < w[0]) {
        return Err(HeartbeatEvalError::Unordered { index: index + 1 });
    }
    let (Some(&start), Some(&end)) = (arrivals.first(), arrivals.last()) else {
        return Err(HeartbeatEvalError::TooShort { heartbeats: 0 });
    };
    if arrivals.len() < MIN_ARRIVALS || end == start {
        return Err(HeartbeatEvalError::TooShort {
            heartbeats: arrivals.len(),
        });
    }
    let crash_at = draw_cuts(start, end, cuts, seed);

    let mut detector = Detector::new(config.clone(), start)?;
    let mut timeline = MistakeTimeline::new(start);
    timeline.observe(start, detector.verdict());
    let mut delays = Vec::with_capacity(cuts);
    let mut missed = 0usize;
    let mut next_cut = crash_at.iter().copied().peekable();
    let mut cut_at = |detector: &mut Detector, timeline: &mut MistakeTimeline, c: Nanos| {
        fire_due_timers_observed(detector, c, |t, v| timeline.observe(t, v));
        match detection_delay(detector, c) {
            Some(delay) => delays.push(delay),
            None => missed += 1,
        }
    };
    for &arrival in arrivals {
        // A cut before this arrival has seen every earlier heartbeat only.
        while let Some(c) = next_cut.next_if(|&c| c < arrival) {
            cut_at(&mut detector, &mut timeline, c);
        }
        fire_due_timers_observed(&mut detector, arrival, |t, v| timeline.observe(t, v));
        detector.handle_heartbeat(arrival);
        timeline.observe(arrival, detector.verdict());
    }
    // Cuts are drawn before the last arrival, so none is left; kept for safety.
    for c in next_cut {
        cut_at(&mut detector, &mut timeline, c);
    }
    let span = end - start;
    let (mistakes, false_failed, mistake_time) = timeline.finish(end);
    let hours = span.as_nanos_f64() / NANOS_PER_HOUR as f64;
    Ok(HeartbeatEvaluation {
        heartbeats: arrivals.len(),
        span,
        mistakes,
        mistakes_per_hour: mistakes as f64 / hours,
        false_failed,
        false_failed_per_hour: false_failed as f64 / hours,
        suspicions_per_hour: (mistakes - false_failed) as f64 / hours,
        mistake_time,
        mean_mistake: mean_nanos(u128::from(mistake_time.as_nanos()), mistakes as u128),
        query_accuracy: 1.0 - mistake_time.as_nanos_f64() / span.as_nanos_f64(),
        cuts,
        detection: DurationStats::from_samples(delays),
        missed,
    })
}

/// `count` crash instants uniform in `[start, end)`, sorted.
pub fn draw_cuts(start: Nanos, end: Nanos, count: usize, seed: u64) -> Vec<Nanos> {
    let mut rng = Streams::new(seed).recording_cuts();
    let span = (end - start).as_nanos().max(1);
    let mut cuts: Vec<Nanos> = (0..count)
        .map(|_| start + Nanos(rng.random_range(0..span)))
        .collect();
    cuts.sort_unstable();
    cuts
}

/// The median interval between consecutive arrivals (nearest rank), the
/// heartbeat period a detector should be told; `None` with fewer than two.
pub fn median_interval(arrivals: &[Nanos]) -> Option<Nanos> {
    let mut intervals: Vec<Nanos> = arrivals.windows(2).map(|w| w[1] - w[0]).collect();
    intervals.sort_unstable();
    nearest_rank(&intervals, 50)
}

/// How long a clone of `detector`, given no more input after `cut`, takes to
/// reach Failed; `None` if it never does.
fn detection_delay(detector: &Detector, cut: Nanos) -> Option<Nanos> {
    if detector.verdict() == Verdict::Failed {
        return Some(Nanos::ZERO);
    }
    let mut alone = detector.clone();
    for _ in 0..MAX_TIMERS_PER_CUT {
        let due = alone.poll_timeout()?.max(cut);
        alone.handle_timeout(due);
        if alone.verdict() == Verdict::Failed {
            return Some(due - cut);
        }
        if alone.poll_timeout() == Some(due) {
            // No progress: the host contract says this must not happen; a
            // detector stuck here would never fail on its own.
            return None;
        }
    }
    None
}

/// Mistakes as the verdict changes over a recording during which the peer is alive.
struct MistakeTimeline {
    verdict: Verdict,
    /// Start of the ongoing mistake, if the verdict is not Alive.
    since: Nanos,
    /// The worst verdict of the ongoing mistake.
    worst: Verdict,
    mistakes: usize,
    false_failed: usize,
    time: Nanos,
}

impl MistakeTimeline {
    fn new(start: Nanos) -> MistakeTimeline {
        MistakeTimeline {
            verdict: Verdict::Alive,
            since: start,
            worst: Verdict::Alive,
            mistakes: 0,
            false_failed: 0,
            time: Nanos::ZERO,
        }
    }

    fn observe(&mut self, at: Nanos, verdict: Verdict) {
        match (self.verdict == Verdict::Alive, verdict == Verdict::Alive) {
            (true, false) => {
                self.mistakes += 1;
                self.since = at;
                self.worst = verdict;
            }
            (false, true) => {
                self.time = self.time + (at - self.since);
                if self.worst == Verdict::Failed {
                    self.false_failed += 1;
                }
            }
            (false, false) => self.worst = self.worst.max(verdict),
            (true, true) => {}
        }
        self.verdict = verdict;
    }

    /// Mistakes, those of them that reached Failed, and the time they
    /// lasted, an ongoing one cut at `end`.
    fn finish(mut self, end: Nanos) -> (usize, usize, Nanos) {
        if self.verdict != Verdict::Alive {
            self.observe(end, Verdict::Alive);
        }
        (self.mistakes, self.false_failed, self.time)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fdlab_protocol::fixed::FixedTimeoutConfig;
    use fdlab_protocol::phi::PhiAccrualConfig;
    use fdlab_protocol::probe::AdaptiveProbeConfig;

    const SEC: Nanos = Nanos::from_secs(1);

    fn fixed(timeout_s: u64) -> DetectorConfig {
        DetectorConfig::FixedTimeout(FixedTimeoutConfig {
            timeout: Nanos::from_secs(timeout_s),
            ..FixedTimeoutConfig::default()
        })
    }

    /// Heartbeats every second from `from_s` to `to_s` inclusive.
    fn periodic(from_s: u64, to_s: u64) -> Vec<Nanos> {
        (from_s..=to_s).map(Nanos::from_secs).collect()
    }

    #[test]
    fn periodic_heartbeats_fixed_timeout() {
        // Epoch-like start: monitoring starts at the first arrival, not at zero.
        let arrivals = periodic(1_000, 1_600);
        let e = evaluate(&fixed(3), &arrivals, 1_000, 7).unwrap();
        assert_eq!(e.heartbeats, 601);
        assert_eq!(e.span, Nanos::from_secs(600));
        assert_eq!(
            (e.mistakes, e.mistake_time, e.mean_mistake),
            (0, Nanos::ZERO, None)
        );
        assert_eq!(e.mistakes_per_hour, 0.0);
        assert_eq!(e.query_accuracy, 1.0);
        assert_eq!((e.cuts, e.missed), (1_000, 0));
        let d = e.detection.unwrap();
        assert_eq!(d.n, 1_000);
        // Last heartbeat at most 1 s before the cut; Failed 3 s (+1 ns: the
        // deadline is strict) after it.
        let lo = Nanos::from_secs(2);
        let hi = Nanos::from_secs(3) + Nanos(1);
        for t in [d.mean, d.p50, d.p90, d.p99, d.max] {
            assert!(t > lo && t <= hi, "{t:?}");
        }
        // Uniform cuts: the mean is close to 2.5 s.
        assert!(d.mean > Nanos::from_millis(2_450) && d.mean < Nanos::from_millis(2_550));
    }

    #[test]
    fn one_long_gap_is_one_mistake_until_the_next_heartbeat() {
        // Heartbeats every second, but none between 100 s and 105 s.
        let mut arrivals = periodic(0, 100);
        arrivals.extend(periodic(105, 200));
        let e = evaluate(&fixed(3), &arrivals, 200, 1).unwrap();
        assert_eq!((e.mistakes, e.false_failed), (1, 1));
        assert!((e.false_failed_per_hour - e.mistakes_per_hour).abs() < 1e-12);
        // Failed at 103 s + 1 ns, Alive again at 105 s.
        let lasted = Nanos::from_secs(2) - Nanos(1);
        assert_eq!(e.mistake_time, lasted);
        assert_eq!(e.mean_mistake, Some(lasted));
        assert!((e.mistakes_per_hour - 3600.0 / 200.0).abs() < 1e-9);
        let expected_pa = 1.0 - lasted.as_secs_f64() / 200.0;
        assert!((e.query_accuracy - expected_pa).abs() < 1e-12);
        assert_eq!(e.missed, 0);
        // A 6 s timeout rides the gap out.
        let e = evaluate(&fixed(6), &arrivals, 200, 1).unwrap();
        assert_eq!(e.mistakes, 0);
        // With a Suspect after 4 s, it suspects without declaring Failed:
        // one mistake, a suspicion, from 104 s + 1 ns to 105 s.
        let config = DetectorConfig::FixedTimeout(FixedTimeoutConfig {
            timeout: Nanos::from_secs(6),
            suspect_after: Some(Nanos::from_secs(4)),
            ..FixedTimeoutConfig::default()
        });
        let e = evaluate(&config, &arrivals, 200, 1).unwrap();
        assert_eq!((e.mistakes, e.false_failed), (1, 0));
        assert_eq!(e.false_failed_per_hour, 0.0);
        assert_eq!(e.suspicions_per_hour, e.mistakes_per_hour);
        assert_eq!(e.mistake_time, SEC - Nanos(1));
    }

    #[test]
    fn a_cut_inside_a_mistake_is_detected_at_once() {
        let mut arrivals = periodic(0, 10);
        arrivals.extend(periodic(30, 31));
        // Span 31 s; cuts in (13 s, 30 s) find the detector already Failed.
        let e = evaluate(&fixed(3), &arrivals, 500, 3).unwrap();
        let d = e.detection.unwrap();
        assert_eq!(
            d.p50,
            Nanos::ZERO,
            "more than half the span is inside the gap"
        );
        assert!(d.max <= Nanos::from_secs(3) + Nanos(1));
        assert_eq!(e.mistakes, 1);
    }

    #[test]
    fn mistakes_end_at_the_end_of_the_trace() {
        let arrivals = vec![Nanos::ZERO, SEC, Nanos::from_secs(10)];
        let e = evaluate(&fixed(3), &arrivals, 10, 1).unwrap();
        // Failed from 4 s + 1 ns until the heartbeat at 10 s.
        assert_eq!((e.mistakes, e.false_failed), (1, 1));
        assert_eq!(e.mistake_time, Nanos::from_secs(6) - Nanos(1));
    }

    #[test]
    fn phi_accrual_detects_and_rides_out_jitter() {
        // 1 s heartbeats, every other one 40 ms late.
        let arrivals: Vec<Nanos> = (0..600u64)
            .map(|i| Nanos::from_millis(i * 1_000 + [0, 40][i as usize % 2]))
            .collect();
        let config = DetectorConfig::PhiAccrual(PhiAccrualConfig {
            acceptable_heartbeat_pause: Nanos::ZERO,
            ..PhiAccrualConfig::default()
        });
        let e = evaluate(&config, &arrivals, 300, 9).unwrap();
        assert_eq!(e.mistakes, 0);
        let d = e.detection.unwrap();
        assert_eq!(e.missed, 0);
        // Steady state: mean 1 s, sigma = the 100 ms floor, phi 8 at y ~= 5.22
        // (logistic), so Failed ~1.52 s after the last heartbeat and T_D in
        // (0.52 s, 1.52 s]. Only cuts in the first seconds, while the history
        // still holds the 750 ms / 1250 ms seed, take longer.
        assert!(d.p99 <= Nanos::from_millis(1_530), "{d:?}");
        assert!(
            d.p50 > Nanos::from_millis(900) && d.p50 < Nanos::from_millis(1_100),
            "{d:?}"
        );
        assert!(d.max < Nanos::from_millis(2_500), "{d:?}");
    }

    #[test]
    fn same_seed_same_result_and_cuts_are_sorted_in_span() {
        let arrivals = periodic(0, 300);
        let a = evaluate(&fixed(3), &arrivals, 100, 42).unwrap();
        let b = evaluate(&fixed(3), &arrivals, 100, 42).unwrap();
        assert_eq!(a, b);
        let c = evaluate(&fixed(3), &arrivals, 100, 43).unwrap();
        assert_ne!(a.detection, c.detection);
        let cuts = draw_cuts(SEC, Nanos::from_secs(2), 1_000, 5);
        assert!(cuts.windows(2).all(|w| w[0] <= w[1]));
        assert!(cuts.iter().all(|&c| c >= SEC && c < Nanos::from_secs(2)));
    }

    #[test]
    fn zero_cuts_give_no_detection_statistics() {
        let e = evaluate(&fixed(3), &periodic(0, 20), 0, 1).unwrap();
        assert_eq!((e.cuts, e.missed, e.detection), (0, 0, None));
    }

    #[test]
    fn rejects_probes_short_and_unordered_traces() {
        let probe = DetectorConfig::AdaptiveProbe(AdaptiveProbeConfig::default());
        let e = evaluate(&probe, &periodic(0, 20), 10, 1).unwrap_err();
        assert_eq!(e, HeartbeatEvalError::NeedsProbes);
        assert!(e.to_string().contains("probe round trips"), "{e}");
        let e = evaluate(&fixed(3), &[SEC], 10, 1).unwrap_err();
        assert_eq!(e, HeartbeatEvalError::TooShort { heartbeats: 1 });
        let e = evaluate(&fixed(3), &[SEC, SEC], 10, 1).unwrap_err();
        assert_eq!(e, HeartbeatEvalError::TooShort { heartbeats: 2 });
        let e = evaluate(&fixed(3), &[SEC, Nanos::ZERO, SEC], 10, 1).unwrap_err();
        assert_eq!(e, HeartbeatEvalError::Unordered { index: 1 });
    }

    #[test]
    fn median_interval_of_arrivals() {
        let arrivals = [0, 1_000, 2_100, 3_000, 9_000].map(Nanos::from_millis);
        // Intervals 1000, 1100, 900, 6000 -> sorted 900, 1000, 1100, 6000.
        assert_eq!(median_interval(&arrivals), Some(Nanos::from_millis(1_000)));
        assert_eq!(median_interval(&[SEC]), None);
    }
}
