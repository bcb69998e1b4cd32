//! Keys of Orleans' membership protocol, with Orleans' defaults.
//!
//! Source: dotnet/orleans `ClusterMembershipOptions` (the option names are
//! kept, in snake case) and SPEC §8.1. The back-off bounds are those of
//! `MembershipTableManager` (status writes after a conflict: 2 s doubling to
//! 64 s; any table operation after an error: 1 s doubling to 60 s); the
//! 250 ms retry of an indirect probe answered "unknown" is
//! `SiloHealthMonitor`'s.

use serde::{Deserialize, Serialize};

use crate::config::{ensure, ensure_positive, ConfigError};
use crate::time::Nanos;

/// Most silos one silo may probe: Orleans' ring choice hashes every silo on
/// every ring, so the work of a view change grows with this times the
/// cluster size.
pub const MAX_PROBED_SILOS: u32 = 64;
/// Most votes a row may need: a row keeps this many votes at most.
pub const MAX_VOTES: u32 = 64;
/// The local health score's ceiling (`LocalSiloHealthMonitor`).
pub const MAX_HEALTH_SCORE: u32 = 8;

/// The `[membership.orleans]` table of a scenario.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct OrleansConfig {
    /// Peers each silo probes (chosen on that many hash rings).
    pub num_probed_silos: u32,
    /// Period of the probes to each monitored peer, and their base wait.
    pub probe_timeout: Nanos,
    /// Consecutive missed probes after which the classic judge suspects.
    pub num_missed_probes_limit: u32,
    /// Fresh votes that declare a silo Dead (capped by half the cluster).
    pub num_votes_for_death_declaration: u32,
    /// A vote older than this (by the reader's clock) no longer counts.
    pub death_vote_expiration: Nanos,
    /// Period of a silo's IAmAlive write.
    pub i_am_alive_period: Nanos,
    /// A silo whose IAmAlive is older than this many periods is stale.
    pub num_missed_table_i_am_alive_limit: u32,
    /// Period of the view refresh from the table.
    pub table_refresh_period: Nanos,
    /// A silo that has not joined after this long gives up and stops.
    pub max_join_attempt_time: Nanos,
    /// After `num_missed_probes_limit - 1` misses, probe through another silo.
    pub enable_indirect_probes: bool,
    /// Retry of an indirect probe whose intermediary answered "unknown".
    pub indirect_probe_retry: Nanos,
    /// Scale the probe wait by 1 + the local health score.
    pub extend_probe_timeout_during_degradation: bool,
    /// Compute the local health score (else it stays 0 while Active).
    pub local_health_degradation_monitoring: bool,
    /// No vote against a peer heard from within
    /// `4 x probe_timeout x num_missed_probes_limit`.
    pub connection_liveness_check: bool,
    /// Back-off after a conflicting status write: from `status_backoff_min`
    /// doubling to `status_backoff_max`.
    pub status_backoff_min: Nanos,
    pub status_backoff_max: Nanos,
    /// Back-off after a table error (unreachable table).
    pub error_backoff_min: Nanos,
    pub error_backoff_max: Nanos,
}

impl Default for OrleansConfig {
    fn default() -> Self {
        OrleansConfig {
            num_probed_silos: 10,
            probe_timeout: Nanos::from_secs(5),
            num_missed_probes_limit: 3,
            num_votes_for_death_declaration: 2,
            death_vote_expiration: Nanos::from_secs(120),
            i_am_alive_period: Nanos::from_secs(30),
            num_missed_table_i_am_alive_limit: 3,
            table_refresh_period: Nanos::from_secs(60),
            max_join_attempt_time: Nanos::from_secs(300),
            enable_indirect_probes: true,
            indirect_probe_retry: Nanos::from_millis(250),
            extend_probe_timeout_during_degradation: true,
            local_health_degradation_monitoring: true,
            connection_liveness_check: true,
            status_backoff_min: Nanos::from_secs(2),
            status_backoff_max: Nanos::from_secs(64),
            error_backoff_min: Nanos::from_secs(1),
            error_backoff_max: Nanos::from_secs(60),
        }
    }
}

impl OrleansConfig {
    /// Checks every key; the error names the first key out of range.
    pub fn validate(&self) -> Result<(), ConfigError> {
        ensure(
            (1..=MAX_PROBED_SILOS).contains(&self.num_probed_silos),
            "num_probed_silos",
            &format!("must be between 1 and {MAX_PROBED_SILOS}"),
        )?;
        ensure_positive(self.probe_timeout, "probe_timeout")?;
        ensure(
            self.num_missed_probes_limit >= 1,
            "num_missed_probes_limit",
            "must be at least 1",
        )?;
        ensure(
            (1..=MAX_VOTES).contains(&self.num_votes_for_death_declaration),
            "num_votes_for_death_declaration",
            &format!("must be between 1 and {MAX_VOTES}"),
        )?;
        ensure(
            self.num_votes_for_death_declaration <= self.num_probed_silos,
            "num_votes_for_death_declaration",
            &format!(
                "{} votes can never be cast: each silo is probed by about `num_probed_silos` = {} others",
                self.num_votes_for_death_declaration, self.num_probed_silos
            ),
        )?;
        ensure_positive(self.death_vote_expiration, "death_vote_expiration")?;
        ensure_positive(self.i_am_alive_period, "i_am_alive_period")?;
        ensure(
            self.num_missed_table_i_am_alive_limit >= 1,
            "num_missed_table_i_am_alive_limit",
            "must be at least 1",
        )?;
        ensure_positive(self.table_refresh_period, "table_refresh_period")?;
        ensure_positive(self.max_join_attempt_time, "max_join_attempt_time")?;
        ensure_positive(self.indirect_probe_retry, "indirect_probe_retry")?;
        ensure_positive(self.status_backoff_min, "status_backoff_min")?;
        ensure_positive(self.status_backoff_max, "status_backoff_max")?;
        ensure(
            self.status_backoff_min <= self.status_backoff_max,
            "status_backoff_max",
            "must not be shorter than `status_backoff_min`",
        )?;
        ensure_positive(self.error_backoff_min, "error_backoff_min")?;
        ensure_positive(self.error_backoff_max, "error_backoff_max")?;
        ensure(
            self.error_backoff_min <= self.error_backoff_max,
            "error_backoff_max",
            "must not be shorter than `error_backoff_min`",
        )?;
        // Products the agent forms must stay far from overflow.
        let longest = crate::time::MAX_DURATION.as_nanos() / 1024;
        for (key, value) in [
            ("probe_timeout", self.probe_timeout),
            ("i_am_alive_period", self.i_am_alive_period),
            ("death_vote_expiration", self.death_vote_expiration),
        ] {
            ensure(
                value.as_nanos() <= longest,
                key,
                &format!("{value} is too long (at most {})", Nanos(longest)),
            )?;
        }
        ensure(
            self.num_missed_probes_limit <= 1_000,
            "num_missed_probes_limit",
            "must be at most 1000",
        )?;
        ensure(
            self.num_missed_table_i_am_alive_limit <= 1_000,
            "num_missed_table_i_am_alive_limit",
            "must be at most 1000",
        )?;
        Ok(())
    }

    /// The window of the local health checks and of missed-probe
    /// accounting: `probe_timeout x num_missed_probes_limit`.
    pub fn health_window(&self) -> Nanos {
        Nanos(self.probe_timeout.as_nanos() * u64::from(self.num_missed_probes_limit))
    }

    /// A peer heard from within this window gets no vote (connection liveness).
    pub fn liveness_window(&self) -> Nanos {
        Nanos(4 * self.health_window().as_nanos())
    }

    /// An IAmAlive older than this makes a silo stale.
    pub fn stale_after(&self) -> Nanos {
        Nanos(self.i_am_alive_period.as_nanos() * u64::from(self.num_missed_table_i_am_alive_limit))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_orleans_and_valid() {
        let c = OrleansConfig::default();
        c.validate().unwrap();
        assert_eq!(c.health_window(), Nanos::from_secs(15));
        assert_eq!(c.liveness_window(), Nanos::from_secs(60));
        assert_eq!(c.stale_after(), Nanos::from_secs(90));
    }

    #[test]
    fn errors_name_the_key() {
        let more_votes = OrleansConfig {
            num_votes_for_death_declaration: 11,
            ..Default::default()
        };
        assert_eq!(
            more_votes.validate().unwrap_err().key,
            "num_votes_for_death_declaration"
        );
        let zero = OrleansConfig {
            probe_timeout: Nanos::ZERO,
            ..Default::default()
        };
        assert_eq!(zero.validate().unwrap_err().key, "probe_timeout");
        let backwards = OrleansConfig {
            status_backoff_min: Nanos::from_secs(100),
            ..Default::default()
        };
        assert_eq!(backwards.validate().unwrap_err().key, "status_backoff_max");
        let none = OrleansConfig {
            num_probed_silos: 0,
            ..Default::default()
        };
        assert_eq!(none.validate().unwrap_err().key, "num_probed_silos");
    }

    #[test]
    fn toml_keys_and_unknown_keys() {
        let c: OrleansConfig = toml::from_str("probe_timeout = \"2s\"").unwrap();
        assert_eq!(c.probe_timeout, Nanos::from_secs(2));
        assert!(toml::from_str::<OrleansConfig>("probe_timout = \"2s\"").is_err());
    }
}
