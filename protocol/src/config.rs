//! Detector configuration: one typed struct per kind (each in its detector's
//! module), gathered in [`DetectorConfig`], with validation that names the key.
//!
//! The keys and defaults are those of the spec's §3 and of a scenario's
//! `[[detectors]]` table. Parsing text into these types (TOML tables, the
//! `KEY=VALUE,...` form of `fdlab trace --detector`) lives in the `scenarios`
//! crate; this crate only defines and checks them.

use std::fmt;

use serde::Serialize;

use crate::decay::DataflowDecayConfig;
use crate::fixed::FixedTimeoutConfig;
use crate::phi::PhiAccrualConfig;
use crate::probe::AdaptiveProbeConfig;
use crate::time::Nanos;
use crate::two_stage::TwoStageConfig;

/// The configuration of one detector, tagged by its `kind`.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum DetectorConfig {
    FixedTimeout(FixedTimeoutConfig),
    PhiAccrual(PhiAccrualConfig),
    AdaptiveProbe(AdaptiveProbeConfig),
    DataflowDecay(DataflowDecayConfig),
    TwoStage(TwoStageConfig),
}

/// Every `kind` accepted, in the order `fdlab list` shows them.
pub const KINDS: [&str; 5] = [
    "fixed-timeout",
    "phi-accrual",
    "adaptive-probe",
    "dataflow-decay",
    "two-stage",
];

impl DetectorConfig {
    /// The `kind` key of this configuration.
    pub fn kind(&self) -> &'static str {
        match self {
            DetectorConfig::FixedTimeout(_) => KINDS[0],
            DetectorConfig::PhiAccrual(_) => KINDS[1],
            DetectorConfig::AdaptiveProbe(_) => KINDS[2],
            DetectorConfig::DataflowDecay(_) => KINDS[3],
            DetectorConfig::TwoStage(_) => KINDS[4],
        }
    }

    /// Checks every key once and keeps the result as a [`ValidConfig`].
    pub fn validated(self) -> Result<ValidConfig, ConfigError> {
        self.validate()?;
        Ok(ValidConfig(self))
    }

    /// Checks every key; the error names the first key that is out of range.
    pub fn validate(&self) -> Result<(), ConfigError> {
        match self {
            DetectorConfig::FixedTimeout(c) => c.validate(),
            DetectorConfig::PhiAccrual(c) => c.validate(),
            DetectorConfig::AdaptiveProbe(c) => c.validate(),
            DetectorConfig::DataflowDecay(c) => c.validate(),
            DetectorConfig::TwoStage(c) => c.validate(),
        }
    }

    /// The interval at which the monitored node must send heartbeats for this
    /// detector, if it consumes heartbeats. Hosts use it to schedule senders.
    pub fn heartbeat_interval(&self) -> Option<Nanos> {
        match self {
            DetectorConfig::FixedTimeout(c) => Some(c.interval),
            DetectorConfig::PhiAccrual(c) => Some(c.interval),
            DetectorConfig::AdaptiveProbe(_) | DetectorConfig::DataflowDecay(_) => None,
            DetectorConfig::TwoStage(c) => {
                match (c.fast.heartbeat_interval(), c.confirm.heartbeat_interval()) {
                    (Some(a), Some(b)) => Some(a.min(b)),
                    (a, b) => a.or(b),
                }
            }
        }
    }

    /// Whether the detector probes its peer (hosts then call
    /// `handle_start_probing` and carry out `poll_transmit`).
    pub fn uses_probes(&self) -> bool {
        match self {
            DetectorConfig::AdaptiveProbe(_) => true,
            DetectorConfig::TwoStage(c) => c.fast.uses_probes() || c.confirm.uses_probes(),
            _ => false,
        }
    }

    /// Bytes one instance of this detector holds, its sample windows included
    /// (reserved up front), so hosts can refuse runs that cannot fit in memory.
    pub fn memory_estimate(&self) -> u64 {
        let base = std::mem::size_of::<crate::Detector>() as u64;
        let sample = std::mem::size_of::<u64>() as u64;
        match self {
            DetectorConfig::PhiAccrual(c) => base + c.max_sample_size as u64 * sample,
            DetectorConfig::AdaptiveProbe(_) => base + crate::probe::RTT_WINDOW as u64 * sample,
            DetectorConfig::TwoStage(c) => {
                base + c.fast.memory_estimate() + c.confirm.memory_estimate()
            }
            DetectorConfig::FixedTimeout(_) | DetectorConfig::DataflowDecay(_) => base,
        }
    }

    /// Whether the detector watches the frames of a data channel.
    pub fn uses_data_stream(&self) -> bool {
        match self {
            DetectorConfig::DataflowDecay(_) => true,
            DetectorConfig::TwoStage(c) => {
                c.fast.uses_data_stream() || c.confirm.uses_data_stream()
            }
            _ => false,
        }
    }
}

/// A [`DetectorConfig`] that passed [`DetectorConfig::validate`]: the only
/// way to make one is [`DetectorConfig::validated`], so a host that holds one
/// starts detectors from it ([`crate::Detector::start`]) without checking it
/// again.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(transparent)]
pub struct ValidConfig(DetectorConfig);

impl ValidConfig {
    pub fn config(&self) -> &DetectorConfig {
        &self.0
    }

    pub fn into_config(self) -> DetectorConfig {
        self.0
    }
}

impl std::ops::Deref for ValidConfig {
    type Target = DetectorConfig;

    fn deref(&self) -> &DetectorConfig {
        &self.0
    }
}

/// A configuration key with a value out of range.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigError {
    /// The key, dotted for nested tables (`fast.decay`).
    pub key: String,
    /// What is wrong with its value.
    pub problem: String,
}

impl ConfigError {
    pub fn new(key: impl Into<String>, problem: impl Into<String>) -> ConfigError {
        ConfigError {
            key: key.into(),
            problem: problem.into(),
        }
    }

    /// The same error for a key nested under `prefix` (`fast` + `decay` -> `fast.decay`).
    pub fn nested(self, prefix: &str) -> ConfigError {
        ConfigError {
            key: format!("{prefix}.{}", self.key),
            problem: self.problem,
        }
    }
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "`{}` {}", self.key, self.problem)
    }
}

impl std::error::Error for ConfigError {}

/// `Ok` when `ok`, else an error for `key`.
pub(crate) fn ensure(ok: bool, key: &str, problem: &str) -> Result<(), ConfigError> {
    if ok {
        Ok(())
    } else {
        Err(ConfigError::new(key, problem))
    }
}

/// A positive duration.
pub(crate) fn ensure_positive(value: Nanos, key: &str) -> Result<(), ConfigError> {
    ensure(!value.is_zero(), key, "must be a positive duration")?;
    ensure_bounded(value, key)
}

/// At most [`crate::time::MAX_DURATION`].
pub(crate) fn ensure_bounded(value: Nanos, key: &str) -> Result<(), ConfigError> {
    ensure(
        value <= crate::time::MAX_DURATION,
        key,
        &format!(
            "{value} is beyond the longest duration fdlab takes ({}, about 146 years)",
            crate::time::MAX_DURATION
        ),
    )
}

/// A finite number in the open interval `(low, high)`.
pub(crate) fn ensure_open_range(
    value: f64,
    low: f64,
    high: f64,
    key: &str,
) -> Result<(), ConfigError> {
    ensure(
        value.is_finite() && value > low && value < high,
        key,
        &format!("must be between {low} and {high} (exclusive), got {value}"),
    )
}
