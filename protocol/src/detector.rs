//! The one driving interface every detector implements.
//!
//! The shape follows quinn-proto's sans-IO connection: the host feeds inputs
//! through `handle_*` methods together with its local time, asks `poll_timeout`
//! for the next instant at which the state can change with no further input,
//! calls `handle_timeout` at (or after) that instant, drains outputs with
//! `poll_transmit`, and reads the verdict and score through getters. A host never
//! needs to know which kind of detector it drives.
//!
//! Inputs a detector does not use are ignored by the default methods: a
//! heartbeat detector ignores data frames, a data-stream detector ignores probe
//! replies. Hosts may therefore send every input to every detector.

use crate::time::Nanos;
use crate::verdict::Verdict;

/// A frame seen on the data channel from the monitored upstream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Frame {
    /// A business data frame.
    Data,
    /// A small frame the upstream sends when it had nothing to send for a while.
    StreamHeartbeat,
    /// The upstream says it is alive but throttled by flow control.
    Backpressure,
    /// The upstream announces a planned stop-the-world pause of this length.
    Maintenance { pause: Nanos },
}

/// Identifies one probe so that its reply can be matched.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ProbeId(pub u64);

/// An output the host must carry out: send a probe to the monitored peer, which
/// answers with the same id when it processes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Transmit {
    pub probe: ProbeId,
}

/// The outcome of a probe that was carried out elsewhere, as found in a recorded
/// trace (`probe_ok` / `probe_failed` rows).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProbeOutcome {
    /// Answered after this round-trip time.
    Answered { rtt: Nanos },
    /// Not answered within its timeout.
    Missed,
}

/// The sans-IO driving interface (see the module documentation).
///
/// All `now` arguments are the host's local time; they must not decrease between
/// calls (a detector treats a smaller `now` as "no time passed").
pub trait FailureDetector {
    /// A heartbeat from the monitored peer arrived.
    fn handle_heartbeat(&mut self, now: Nanos) {
        let _ = now;
    }

    /// A frame of the data channel arrived.
    fn handle_frame(&mut self, now: Nanos, frame: Frame) {
        let _ = (now, frame);
    }

    /// The host will carry out this detector's active probing from now on; the
    /// first probe is delayed by `jitter` (in `[0, 1)`) times the detector's
    /// initial timeout. Hosts that replay recorded outcomes do not call this.
    fn handle_start_probing(&mut self, now: Nanos, jitter: f64) {
        let _ = (now, jitter);
    }

    /// The reply to an earlier [`Transmit`] arrived.
    fn handle_probe_reply(&mut self, now: Nanos, probe: ProbeId) {
        let _ = (now, probe);
    }

    /// A recorded probe outcome (used when replaying traces).
    fn handle_probe_outcome(&mut self, now: Nanos, outcome: ProbeOutcome) {
        let _ = (now, outcome);
    }

    /// The local node was stalled (stop-the-world pause, CPU starvation) for
    /// `stall`, ending at `now`. Hosts report it before the backlog is handled.
    fn handle_local_stall(&mut self, now: Nanos, stall: Nanos) {
        let _ = (now, stall);
    }

    /// The local node's health degradation score changed (0 = healthy), as
    /// Orleans' `LocalSiloHealthMonitor` reports it.
    fn handle_local_health(&mut self, now: Nanos, score: u32) {
        let _ = (now, score);
    }

    /// A timer returned by [`FailureDetector::poll_timeout`] expired. Calling it
    /// early or late is harmless: the detector acts on whatever is due at `now`.
    fn handle_timeout(&mut self, now: Nanos);

    /// The next local instant at which the state can change without input, if any.
    fn poll_timeout(&self) -> Option<Nanos>;

    /// The next probe the host must send, if any.
    fn poll_transmit(&mut self) -> Option<Transmit> {
        None
    }

    /// The current verdict, as of the last `handle_*` call.
    fn verdict(&self) -> Verdict;

    /// The detector's score at `now`, the figure its verdict is a threshold
    /// on where there is one: phi for phi accrual, the health score for
    /// dataflow decay, the silence since the last heartbeat in milliseconds for
    /// fixed-timeout (Failed once it exceeds the timeout). Adaptive probing
    /// counts missed probes, a figure with no useful curve, so its score is
    /// the probe timeout it has learned, in milliseconds; a two-stage detector
    /// gives its confirmer's.
    fn score(&self, now: Nanos) -> f64;
}

use crate::config::{ConfigError, DetectorConfig, ValidConfig};
use crate::decay::DataflowDecay;
use crate::fixed::FixedTimeout;
use crate::phi::PhiAccrual;
use crate::probe::AdaptiveProbe;
use crate::two_stage::TwoStage;

/// Any detector kind behind the one interface, built from a [`DetectorConfig`].
/// An enum rather than a trait object: hosts drive millions of detector calls per
/// second and the match is cheaper than a virtual call.
#[derive(Clone, Debug)]
pub enum Detector {
    FixedTimeout(FixedTimeout),
    PhiAccrual(PhiAccrual),
    AdaptiveProbe(AdaptiveProbe),
    DataflowDecay(DataflowDecay),
    TwoStage(TwoStage),
}

impl Detector {
    /// Validates `config` and starts monitoring at `now`.
    pub fn new(config: DetectorConfig, now: Nanos) -> Result<Detector, ConfigError> {
        Ok(Detector::start(&config.validated()?, now))
    }

    /// Starts monitoring at `now` with a configuration validated once, when
    /// it was loaded: a host that starts thousands of detectors from one
    /// configuration checks it once, and never has to handle an error here.
    pub fn start(config: &ValidConfig, now: Nanos) -> Detector {
        Detector::build(config.config().clone(), now)
    }

    /// Builds a detector of a configuration known to be valid.
    pub(crate) fn build(config: DetectorConfig, now: Nanos) -> Detector {
        match config {
            DetectorConfig::FixedTimeout(c) => Detector::FixedTimeout(FixedTimeout::build(c, now)),
            DetectorConfig::PhiAccrual(c) => Detector::PhiAccrual(PhiAccrual::build(c, now)),
            DetectorConfig::AdaptiveProbe(c) => {
                Detector::AdaptiveProbe(AdaptiveProbe::build(c, now))
            }
            DetectorConfig::DataflowDecay(c) => {
                Detector::DataflowDecay(DataflowDecay::build(c, now))
            }
            DetectorConfig::TwoStage(c) => Detector::TwoStage(TwoStage::build(c, now)),
        }
    }
}

/// Forwards one trait method to whichever kind `self` holds.
macro_rules! dispatch {
    ($self:ident, $d:ident => $call:expr) => {
        match $self {
            Detector::FixedTimeout($d) => $call,
            Detector::PhiAccrual($d) => $call,
            Detector::AdaptiveProbe($d) => $call,
            Detector::DataflowDecay($d) => $call,
            Detector::TwoStage($d) => $call,
        }
    };
}

impl Detector {
    /// [`FailureDetector::handle_heartbeat`], then the verdict and the
    /// next timeout it leaves: the three calls a host makes at every
    /// heartbeat, with one branch on the kind instead of three (the
    /// per-heartbeat path of a large mesh, docs/perf-history.md).
    #[inline]
    pub fn handle_heartbeat_then_poll(&mut self, now: Nanos) -> (Verdict, Option<Nanos>) {
        dispatch!(self, d => {
            d.handle_heartbeat(now);
            (d.verdict(), d.poll_timeout())
        })
    }
}

impl FailureDetector for Detector {
    #[inline]
    fn handle_heartbeat(&mut self, now: Nanos) {
        dispatch!(self, d => d.handle_heartbeat(now))
    }
    #[inline]
    fn handle_frame(&mut self, now: Nanos, frame: Frame) {
        dispatch!(self, d => d.handle_frame(now, frame))
    }
    #[inline]
    fn handle_start_probing(&mut self, now: Nanos, jitter: f64) {
        dispatch!(self, d => d.handle_start_probing(now, jitter))
    }
    #[inline]
    fn handle_probe_reply(&mut self, now: Nanos, probe: ProbeId) {
        dispatch!(self, d => d.handle_probe_reply(now, probe))
    }
    #[inline]
    fn handle_probe_outcome(&mut self, now: Nanos, outcome: ProbeOutcome) {
        dispatch!(self, d => d.handle_probe_outcome(now, outcome))
    }
    #[inline]
    fn handle_local_stall(&mut self, now: Nanos, stall: Nanos) {
        dispatch!(self, d => d.handle_local_stall(now, stall))
    }
    #[inline]
    fn handle_local_health(&mut self, now: Nanos, score: u32) {
        dispatch!(self, d => d.handle_local_health(now, score))
    }
    #[inline]
    fn handle_timeout(&mut self, now: Nanos) {
        dispatch!(self, d => d.handle_timeout(now))
    }
    #[inline]
    fn poll_timeout(&self) -> Option<Nanos> {
        dispatch!(self, d => d.poll_timeout())
    }
    #[inline]
    fn poll_transmit(&mut self) -> Option<Transmit> {
        dispatch!(self, d => d.poll_transmit())
    }
    #[inline]
    fn verdict(&self) -> Verdict {
        dispatch!(self, d => d.verdict())
    }
    #[inline]
    fn score(&self, now: Nanos) -> f64 {
        dispatch!(self, d => d.score(now))
    }
}
