//! `two-stage`: a fast detector raises Suspect, a slow one confirms Failed.
//!
//! For example dataflow decay (which reacts within milliseconds of a stalled
//! stream) for suspicion, and phi accrual over heartbeats to confirm. The
//! composite is Failed only when the confirmer is Failed while the fast stage
//! fires, Suspect when only the fast stage fires, and Alive otherwise: the fast
//! stage gates the verdict, so a confirmer alone never declares a death the fast
//! path has not noticed. Both stages see every input.

use serde::Serialize;

use crate::config::{ConfigError, DetectorConfig};
use crate::detector::{Detector, FailureDetector, Frame, ProbeId, ProbeOutcome, Transmit};
use crate::time::Nanos;
use crate::verdict::Verdict;

/// Keys of a `kind = "two-stage"` detector: two nested detector tables.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TwoStageConfig {
    /// The detector that raises suspicion.
    pub fast: Box<DetectorConfig>,
    /// The detector that confirms a failure.
    pub confirm: Box<DetectorConfig>,
}

impl TwoStageConfig {
    pub fn validate(&self) -> Result<(), ConfigError> {
        self.fast.validate().map_err(|e| e.nested("fast"))?;
        self.confirm.validate().map_err(|e| e.nested("confirm"))?;
        // Probe ids are numbered per detector; two probing stages would answer
        // each other's replies.
        if self.fast.uses_probes() && self.confirm.uses_probes() {
            return Err(ConfigError::new(
                "confirm.kind",
                "at most one stage of a two-stage detector may probe",
            ));
        }
        Ok(())
    }
}

/// The two-stage composition.
#[derive(Clone, Debug)]
pub struct TwoStage {
    fast: Box<Detector>,
    confirm: Box<Detector>,
}

impl TwoStage {
    pub fn new(config: TwoStageConfig, now: Nanos) -> Result<TwoStage, ConfigError> {
        config.validate()?;
        Ok(TwoStage::build(config, now))
    }

    /// [`TwoStage::new`] of a configuration already validated.
    pub(crate) fn build(config: TwoStageConfig, now: Nanos) -> TwoStage {
        debug_assert!(config.validate().is_ok());
        TwoStage {
            fast: Box::new(Detector::build(*config.fast, now)),
            confirm: Box::new(Detector::build(*config.confirm, now)),
        }
    }

    pub fn fast(&self) -> &Detector {
        &self.fast
    }

    pub fn confirm(&self) -> &Detector {
        &self.confirm
    }
}

impl FailureDetector for TwoStage {
    fn handle_heartbeat(&mut self, now: Nanos) {
        self.fast.handle_heartbeat(now);
        self.confirm.handle_heartbeat(now);
    }
    fn handle_frame(&mut self, now: Nanos, frame: Frame) {
        self.fast.handle_frame(now, frame);
        self.confirm.handle_frame(now, frame);
    }
    fn handle_start_probing(&mut self, now: Nanos, jitter: f64) {
        self.fast.handle_start_probing(now, jitter);
        self.confirm.handle_start_probing(now, jitter);
    }
    fn handle_probe_reply(&mut self, now: Nanos, probe: ProbeId) {
        self.fast.handle_probe_reply(now, probe);
        self.confirm.handle_probe_reply(now, probe);
    }
    fn handle_probe_outcome(&mut self, now: Nanos, outcome: ProbeOutcome) {
        self.fast.handle_probe_outcome(now, outcome);
        self.confirm.handle_probe_outcome(now, outcome);
    }
    fn handle_local_stall(&mut self, now: Nanos, stall: Nanos) {
        self.fast.handle_local_stall(now, stall);
        self.confirm.handle_local_stall(now, stall);
    }
    fn handle_local_health(&mut self, now: Nanos, score: u32) {
        self.fast.handle_local_health(now, score);
        self.confirm.handle_local_health(now, score);
    }
    fn handle_timeout(&mut self, now: Nanos) {
        if self.fast.poll_timeout().is_some_and(|t| t <= now) {
            self.fast.handle_timeout(now);
        }
        if self.confirm.poll_timeout().is_some_and(|t| t <= now) {
            self.confirm.handle_timeout(now);
        }
    }
    fn poll_timeout(&self) -> Option<Nanos> {
        match (self.fast.poll_timeout(), self.confirm.poll_timeout()) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }
    /// Probes of the (at most one) probing stage; replies go to both stages and
    /// the non-probing one ignores them.
    fn poll_transmit(&mut self) -> Option<Transmit> {
        self.fast
            .poll_transmit()
            .or_else(|| self.confirm.poll_transmit())
    }
    #[inline]
    fn verdict(&self) -> Verdict {
        match (self.fast.verdict(), self.confirm.verdict()) {
            (Verdict::Alive, _) => Verdict::Alive,
            (_, Verdict::Failed) => Verdict::Failed,
            _ => Verdict::Suspect,
        }
    }
    /// The confirmer's score: the figure that decides Failed.
    fn score(&self, now: Nanos) -> f64 {
        self.confirm.score(now)
    }
}
