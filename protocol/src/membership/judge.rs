//! The per-peer judge of a membership agent: the decision "this monitored
//! silo has failed", taken from the agent's probe outcomes.
//!
//! Orleans' own judge is the count of consecutive missed probes
//! (`SiloHealthMonitor`: suspect at `num_missed_probes_limit`). fdlab lets
//! any detector of SPEC §3 take its place: probe replies reach a heartbeat
//! detector (`fixed-timeout`, `phi-accrual`) as heartbeats, and an
//! `adaptive-probe` detector as probe outcomes (answered with a round trip,
//! or missed). The agent still sends its probes every `probe_timeout`, so a
//! heartbeat detector's `interval` should be that period.

use crate::config::ValidConfig;
use crate::detector::{Detector, FailureDetector, ProbeOutcome};
use crate::time::Nanos;
use crate::verdict::Verdict;

/// Which judge the agents of a cluster use.
#[derive(Clone, Debug, PartialEq)]
pub enum JudgeSpec {
    /// Orleans' missed-probe count.
    Classic,
    /// A detector of SPEC §3, one instance per monitored peer.
    Detector(ValidConfig),
}

/// The judge of one monitored peer.
#[derive(Clone, Debug)]
pub(crate) enum Judge {
    Classic,
    Detector(Box<Detector>),
}

impl Judge {
    /// A judge for a peer first monitored at local time `now`.
    pub(crate) fn start(spec: &JudgeSpec, now: Nanos) -> Judge {
        match spec {
            JudgeSpec::Classic => Judge::Classic,
            JudgeSpec::Detector(config) => Judge::Detector(Box::new(Detector::start(config, now))),
        }
    }

    /// The peer answered a probe sent at `sent`.
    pub(crate) fn handle_reply(&mut self, now: Nanos, sent: Nanos) {
        if let Judge::Detector(d) = self {
            d.handle_heartbeat(now);
            d.handle_probe_outcome(
                now,
                ProbeOutcome::Answered {
                    rtt: now.saturating_sub(sent),
                },
            );
        }
    }

    /// A probe went unanswered.
    pub(crate) fn handle_miss(&mut self, now: Nanos) {
        if let Judge::Detector(d) = self {
            d.handle_probe_outcome(now, ProbeOutcome::Missed);
        }
    }

    /// The local health score changed.
    pub(crate) fn handle_health(&mut self, now: Nanos, score: u32) {
        if let Judge::Detector(d) = self {
            d.handle_local_health(now, score);
        }
    }

    pub(crate) fn handle_timeout(&mut self, now: Nanos) {
        if let Judge::Detector(d) = self {
            d.handle_timeout(now);
        }
    }

    pub(crate) fn poll_timeout(&self) -> Option<Nanos> {
        match self {
            Judge::Classic => None,
            Judge::Detector(d) => d.poll_timeout(),
        }
    }

    /// Whether the judge says the peer failed. The classic judge decides
    /// from the missed-probe count, which the agent holds.
    pub(crate) fn failed(&self, missed: u32, limit: u32) -> bool {
        match self {
            Judge::Classic => missed >= limit,
            Judge::Detector(d) => d.verdict() == Verdict::Failed,
        }
    }
}
