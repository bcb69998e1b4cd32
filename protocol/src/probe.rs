//! `adaptive-probe`: probe/response with a learned per-peer timeout.
//! (Implementation in progress.)

use serde::{Deserialize, Serialize};

use crate::config::{ensure, ensure_positive, ConfigError};
use crate::time::Nanos;

/// Keys of a `kind = "adaptive-probe"` detector; defaults are Orleans'.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct AdaptiveProbeConfig {
    /// Timeout used until 4 RTT samples exist (Orleans' `ProbeTimeout`).
    pub initial_timeout: Nanos,
    /// Lower clamp of the effective timeout (default `initial_timeout / 2`).
    pub min_timeout: Option<Nanos>,
    /// Upper clamp of the effective timeout (default `4 * initial_timeout`).
    pub max_timeout: Option<Nanos>,
    /// Consecutive missed probes after which the peer is Failed.
    pub missed_probes_limit: u32,
}

impl Default for AdaptiveProbeConfig {
    fn default() -> Self {
        AdaptiveProbeConfig {
            initial_timeout: Nanos::from_secs(5),
            min_timeout: None,
            max_timeout: None,
            missed_probes_limit: 3,
        }
    }
}

impl AdaptiveProbeConfig {
    /// The lower clamp, defaulted.
    pub fn min_timeout(&self) -> Nanos {
        self.min_timeout
            .unwrap_or(Nanos(self.initial_timeout.as_nanos() / 2))
    }

    /// The upper clamp, defaulted.
    pub fn max_timeout(&self) -> Nanos {
        self.max_timeout
            .unwrap_or(Nanos(self.initial_timeout.as_nanos().saturating_mul(4)))
    }

    pub fn validate(&self) -> Result<(), ConfigError> {
        ensure_positive(self.initial_timeout, "initial_timeout")?;
        if let Some(min) = self.min_timeout {
            ensure_positive(min, "min_timeout")?;
        }
        ensure_positive(self.min_timeout(), "initial_timeout")?;
        ensure(
            self.max_timeout() >= self.min_timeout(),
            "max_timeout",
            "must not be shorter than `min_timeout`",
        )?;
        ensure(
            self.missed_probes_limit >= 1,
            "missed_probes_limit",
            "must be at least 1",
        )?;
        Ok(())
    }
}

/// Placeholder while the state machine is written.
#[derive(Clone, Debug)]
pub struct AdaptiveProbe {
    config: AdaptiveProbeConfig,
}

impl AdaptiveProbe {
    pub fn new(config: AdaptiveProbeConfig, now: Nanos) -> Result<AdaptiveProbe, ConfigError> {
        let _ = now;
        config.validate()?;
        Ok(AdaptiveProbe { config })
    }
}

impl crate::detector::FailureDetector for AdaptiveProbe {
    fn handle_timeout(&mut self, _now: Nanos) {}
    fn poll_timeout(&self) -> Option<Nanos> {
        None
    }
    fn verdict(&self) -> crate::verdict::Verdict {
        crate::verdict::Verdict::Alive
    }
    fn score(&self, _now: Nanos) -> f64 {
        self.config.initial_timeout.as_millis_f64()
    }
}
