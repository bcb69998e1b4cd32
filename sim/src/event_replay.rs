//! Replaying a recorded event list through one detector: the host behind
//! `fdlab trace`, for heartbeat arrivals recorded in a production system.
//!
//! Events are applied in order (equal times keep their file order). Before each
//! event the detector's due timers are fired, at their own instants, so a verdict
//! reached between two recorded events is in place when the next one is applied:
//! the same contract the simulator follows. Probe outcomes are taken as recorded;
//! the detector's own probing is never started, since nobody would answer it.

use fdlab_protocol::{FailureDetector, Frame, Nanos, ProbeOutcome, Verdict};

/// What happened at one row of a recorded event list.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RecordedEventKind {
    /// A heartbeat arrived (a stream-heartbeat frame for data-stream detectors).
    Heartbeat,
    /// Asks for the detector's value and verdict at this instant.
    Query,
    /// A data frame arrived.
    Data,
    /// A backpressure frame arrived.
    Backpressure,
    /// A maintenance frame announcing a pause of this length arrived.
    Maintenance { pause: Nanos },
    /// A probe was answered after this round-trip time.
    ProbeOk { rtt: Nanos },
    /// A probe was not answered in time.
    ProbeFailed,
}

impl RecordedEventKind {
    /// The `event` column's spelling.
    pub const fn name(self) -> &'static str {
        match self {
            RecordedEventKind::Heartbeat => "heartbeat",
            RecordedEventKind::Query => "query",
            RecordedEventKind::Data => "data",
            RecordedEventKind::Backpressure => "backpressure",
            RecordedEventKind::Maintenance { .. } => "maintenance",
            RecordedEventKind::ProbeOk { .. } => "probe_ok",
            RecordedEventKind::ProbeFailed => "probe_failed",
        }
    }
}

/// One row of a recorded event list.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RecordedEvent {
    pub time: Nanos,
    pub kind: RecordedEventKind,
}

/// The answer to one `query` row.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct QueryRow {
    pub time: Nanos,
    /// phi, health score, or timeout in milliseconds, by detector kind.
    pub value: f64,
    pub verdict: Verdict,
}

/// The instant monitoring starts for an event list: its first event (recorded event lists
/// often carry epoch timestamps, so zero would be meaningless).
pub fn monitoring_start(events: &[RecordedEvent]) -> Nanos {
    events.first().map_or(Nanos::ZERO, |e| e.time)
}

/// Fires every timer of `detector` due at or before `now`, each at its own instant.
pub fn fire_due_timers(detector: &mut impl FailureDetector, now: Nanos) {
    fire_due_timers_observed(detector, now, |_, _| {});
}

/// [`fire_due_timers`], calling `after_each(instant, verdict)` after each timer
/// fired, for hosts that keep the verdict timeline between recorded events.
pub fn fire_due_timers_observed<D: FailureDetector>(
    detector: &mut D,
    now: Nanos,
    mut after_each: impl FnMut(Nanos, Verdict),
) {
    while let Some(due) = detector.poll_timeout() {
        if due > now {
            break;
        }
        detector.handle_timeout(due);
        after_each(due, detector.verdict());
        // Detectors make progress on every timer (a property test holds them to
        // it); a host still must not hang on one that does not.
        if detector.poll_timeout() == Some(due) {
            break;
        }
    }
}

/// Applies one recorded event.
pub fn apply(detector: &mut impl FailureDetector, event: RecordedEvent) {
    let now = event.time;
    match event.kind {
        RecordedEventKind::Heartbeat => detector.handle_heartbeat(now),
        RecordedEventKind::Query => {}
        RecordedEventKind::Data => detector.handle_frame(now, Frame::Data),
        RecordedEventKind::Backpressure => detector.handle_frame(now, Frame::Backpressure),
        RecordedEventKind::Maintenance { pause } => {
            detector.handle_frame(now, Frame::Maintenance { pause })
        }
        RecordedEventKind::ProbeOk { rtt } => {
            detector.handle_probe_outcome(now, ProbeOutcome::Answered { rtt })
        }
        RecordedEventKind::ProbeFailed => detector.handle_probe_outcome(now, ProbeOutcome::Missed),
    }
}

/// Replays `events` (times non-decreasing) through `detector`, calling
/// `on_query` for every `query` row.
pub fn replay(
    detector: &mut impl FailureDetector,
    events: &[RecordedEvent],
    mut on_query: impl FnMut(QueryRow),
) {
    for &event in events {
        fire_due_timers(detector, event.time);
        if event.kind == RecordedEventKind::Query {
            on_query(QueryRow {
                time: event.time,
                value: detector.score(event.time),
                verdict: detector.verdict(),
            });
        } else {
            apply(detector, event);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fdlab_protocol::fixed::{FixedTimeout, FixedTimeoutConfig};

    fn at(ms: u64, kind: RecordedEventKind) -> RecordedEvent {
        RecordedEvent {
            time: Nanos::from_millis(ms),
            kind,
        }
    }

    #[test]
    fn queries_see_verdicts_reached_between_events() {
        use RecordedEventKind::*;
        let events = [
            at(0, Heartbeat),
            at(1000, Heartbeat),
            at(3000, Query),
            at(5000, Query),
            at(5500, Heartbeat),
            at(5500, Query),
        ];
        let mut d =
            FixedTimeout::new(FixedTimeoutConfig::default(), monitoring_start(&events)).unwrap();
        let mut rows = Vec::new();
        replay(&mut d, &events, |row| rows.push(row.verdict));
        assert_eq!(rows, [Verdict::Alive, Verdict::Failed, Verdict::Alive]);
    }
}
