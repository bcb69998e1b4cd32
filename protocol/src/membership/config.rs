//! Keys of Orleans' membership protocol, with Orleans' defaults, for the
//! release (10.2) or the main branch, as `version` chooses.
//!
//! Source: dotnet/orleans `src/Orleans.Core/Configuration/Options/ClusterMembershipOptions.cs`
//! (the option names are kept, in snake case) at v10.2.2 and at main
//! e558829b, and SPEC §8.1. Lines (10.2.2 / main): `ProbeTimeout` 29 / 37,
//! `MinProbeTimeout` absent / 43 (`ProbeTimeout / 2`), `MaxProbeTimeout`
//! absent / 53 (`4 x ProbeTimeout`), `EnableConnectionLivenessCheck`
//! absent / 183, `NumMissedProbesLimit` 82 / 112, `NumVotesForDeathDeclaration`
//! 88 / 118. The back-off bounds are `MembershipTableManager`'s constants
//! (lines 25-29 in both: error 1 s to 1 min, contention 2 s to 64 s, step
//! 2 s); the 250 ms retry of an indirect probe whose intermediary was unwell
//! is 10.2's `SiloHealthMonitor.cs:217` (main has none).

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::config::{ensure, ensure_positive, ConfigError};
use crate::time::Nanos;

/// Most silos one silo may probe: Orleans' ring choice hashes every silo on
/// every ring, so the work of a view change grows with this times the
/// cluster size.
pub const MAX_PROBED_SILOS: u32 = 64;
/// Most votes a row may need.
pub const MAX_VOTES: u32 = 64;
/// The local health score's ceiling (`LocalSiloHealthMonitor.MaxScore`).
pub const MAX_HEALTH_SCORE: u32 = 8;

/// Which Orleans the agents follow. Users run releases (the default);
/// main shows where Orleans is going. The two differ in how a silo
/// probes, when it may vote, and what its health score counts (SPEC §8.1,
/// docs/membership.md lists every rule with its line in each).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum OrleansVersion {
    /// The 10.2.x release (read at v10.2.2).
    #[default]
    V10_2,
    /// The main branch (read at e558829b, 2026-11).
    Main,
}

impl OrleansVersion {
    /// The value of the `version` key, and the label reports show.
    pub const fn name(self) -> &'static str {
        match self {
            OrleansVersion::V10_2 => "10.2",
            OrleansVersion::Main => "main",
        }
    }

    /// Every accepted value, for error messages.
    pub const ACCEPTED: &'static str = "\"10.2\" (the release, the default) or \"main\"";
}

impl std::fmt::Display for OrleansVersion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl Serialize for OrleansVersion {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.name())
    }
}

impl<'de> Deserialize<'de> for OrleansVersion {
    /// `"10.2"` or `"main"`; the bare number `10.2` is taken too, as users
    /// write version numbers.
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<OrleansVersion, D::Error> {
        struct Visitor;
        impl serde::de::Visitor<'_> for Visitor {
            type Value = OrleansVersion;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                write!(f, "{}", OrleansVersion::ACCEPTED)
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<OrleansVersion, E> {
                match v {
                    "10.2" => Ok(OrleansVersion::V10_2),
                    "main" => Ok(OrleansVersion::Main),
                    other => Err(E::custom(format!(
                        "unknown version `{}`: expected {}",
                        other.chars().take(40).collect::<String>(),
                        OrleansVersion::ACCEPTED
                    ))),
                }
            }
            fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<OrleansVersion, E> {
                if v == 10.2 {
                    Ok(OrleansVersion::V10_2)
                } else {
                    Err(E::custom(format!(
                        "unknown version `{v}`: expected {}",
                        OrleansVersion::ACCEPTED
                    )))
                }
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<OrleansVersion, E> {
                Err(E::custom(format!(
                    "unknown version `{v}`: expected {}",
                    OrleansVersion::ACCEPTED
                )))
            }
        }
        deserializer.deserialize_any(Visitor)
    }
}

/// The `[membership.orleans]` table of a scenario. Keys that exist in one
/// version only are options: a value given for the other version is an
/// error (see [`OrleansConfig::validate`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct OrleansConfig {
    /// Which Orleans: the release `10.2` (default) or `main`.
    pub version: OrleansVersion,
    /// Peers each silo probes (chosen on that many hash rings).
    pub num_probed_silos: u32,
    /// 10.2: the period of the probes to each monitored peer and their
    /// wait. main: the wait until a peer has answered enough probes to
    /// learn its round trip, and the base of the bounds below.
    pub probe_timeout: Nanos,
    /// main: the least a learned probe wait may be (`probe_timeout / 2`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min_probe_timeout: Option<Nanos>,
    /// main: the most a probe wait may be, health included
    /// (`4 x probe_timeout`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_probe_timeout: Option<Nanos>,
    /// Consecutive missed probes after which the classic judge suspects.
    pub num_missed_probes_limit: u32,
    /// Fresh votes that declare a silo Dead (capped by half the cluster).
    pub num_votes_for_death_declaration: u32,
    /// A vote older than this (measured from the newest vote or the
    /// reader's clock, whichever is later) no longer counts.
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
    /// 10.2: the wait before the next probe after an intermediary that was
    /// itself unwell reported a failure (250 ms in Orleans).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub indirect_probe_retry: Option<Nanos>,
    /// Scale the probe wait by 1 + the local health score.
    pub extend_probe_timeout_during_degradation: bool,
    /// Compute the local health score (else it stays 0).
    pub local_health_degradation_monitoring: bool,
    /// main: no vote against a peer from which a message arrived, on a
    /// connection still open, within `max_probe_timeout x
    /// num_missed_probes_limit`. 10.2 has no such check.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub connection_liveness_check: Option<bool>,
    /// Back-off after a conflicting status write (joining): random,
    /// between `status_backoff_min` and `status_backoff_min + 2 s x 2^n`,
    /// at most `status_backoff_max`.
    pub status_backoff_min: Nanos,
    pub status_backoff_max: Nanos,
    /// Back-off after a table error (the table unreachable), the same way.
    pub error_backoff_min: Nanos,
    pub error_backoff_max: Nanos,
}

/// The keys that exist in one version only, and which.
pub const VERSION_KEYS: [(&str, OrleansVersion); 4] = [
    ("min_probe_timeout", OrleansVersion::Main),
    ("max_probe_timeout", OrleansVersion::Main),
    ("connection_liveness_check", OrleansVersion::Main),
    ("indirect_probe_retry", OrleansVersion::V10_2),
];

/// 10.2's wait after an unwell intermediary (`SiloHealthMonitor.cs:217`).
pub const INDIRECT_PROBE_RETRY: Nanos = Nanos::from_millis(250);

impl Default for OrleansConfig {
    fn default() -> Self {
        OrleansConfig {
            version: OrleansVersion::default(),
            num_probed_silos: 10,
            probe_timeout: Nanos::from_secs(5),
            min_probe_timeout: None,
            max_probe_timeout: None,
            num_missed_probes_limit: 3,
            num_votes_for_death_declaration: 2,
            death_vote_expiration: Nanos::from_secs(120),
            i_am_alive_period: Nanos::from_secs(30),
            num_missed_table_i_am_alive_limit: 3,
            table_refresh_period: Nanos::from_secs(60),
            max_join_attempt_time: Nanos::from_secs(300),
            enable_indirect_probes: true,
            indirect_probe_retry: None,
            extend_probe_timeout_during_degradation: true,
            local_health_degradation_monitoring: true,
            connection_liveness_check: None,
            status_backoff_min: Nanos::from_secs(2),
            status_backoff_max: Nanos::from_secs(64),
            error_backoff_min: Nanos::from_secs(1),
            error_backoff_max: Nanos::from_secs(60),
        }
    }
}

impl OrleansConfig {
    /// The defaults of `version`.
    pub fn of(version: OrleansVersion) -> OrleansConfig {
        OrleansConfig {
            version,
            ..OrleansConfig::default()
        }
    }

    /// Checks every key; the error names the first key out of range.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let set = |key: &str| match key {
            "min_probe_timeout" => self.min_probe_timeout.is_some(),
            "max_probe_timeout" => self.max_probe_timeout.is_some(),
            "connection_liveness_check" => self.connection_liveness_check.is_some(),
            _ => self.indirect_probe_retry.is_some(),
        };
        for (key, version) in VERSION_KEYS {
            ensure(
                !set(key) || self.version == version,
                key,
                &format!(
                    "exists in Orleans {version} only; this scenario's `version` is \"{}\"",
                    self.version
                ),
            )?;
        }
        ensure(
            (1..=MAX_PROBED_SILOS).contains(&self.num_probed_silos),
            "num_probed_silos",
            &format!("must be between 1 and {MAX_PROBED_SILOS}"),
        )?;
        ensure_positive(self.probe_timeout, "probe_timeout")?;
        if let Some(min) = self.min_probe_timeout {
            ensure_positive(min, "min_probe_timeout")?;
        }
        if let Some(max) = self.max_probe_timeout {
            ensure_positive(max, "max_probe_timeout")?;
        }
        ensure(
            self.min_probe_timeout() <= self.max_probe_timeout(),
            "max_probe_timeout",
            &format!(
                "{} is shorter than `min_probe_timeout` ({})",
                self.max_probe_timeout(),
                self.min_probe_timeout()
            ),
        )?;
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
        if let Some(retry) = self.indirect_probe_retry {
            ensure_positive(retry, "indirect_probe_retry")?;
        }
        ensure_positive(self.status_backoff_min, "status_backoff_min")?;
        ensure_positive(self.status_backoff_max, "status_backoff_max")?;
        ensure(
            self.status_backoff_min < self.status_backoff_max,
            "status_backoff_max",
            "must be longer than `status_backoff_min`",
        )?;
        ensure_positive(self.error_backoff_min, "error_backoff_min")?;
        ensure_positive(self.error_backoff_max, "error_backoff_max")?;
        ensure(
            self.error_backoff_min < self.error_backoff_max,
            "error_backoff_max",
            "must be longer than `error_backoff_min`",
        )?;
        // Products the agent forms must stay far from overflow.
        let longest = crate::time::MAX_DURATION.as_nanos() / 1024;
        for (key, value) in [
            ("probe_timeout", self.probe_timeout),
            ("min_probe_timeout", self.min_probe_timeout()),
            ("max_probe_timeout", self.max_probe_timeout()),
            ("i_am_alive_period", self.i_am_alive_period),
            ("death_vote_expiration", self.death_vote_expiration),
            ("status_backoff_max", self.status_backoff_max),
            ("error_backoff_max", self.error_backoff_max),
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

    /// main's `MinProbeTimeout`: as set, or half of `probe_timeout`.
    pub fn min_probe_timeout(&self) -> Nanos {
        self.min_probe_timeout
            .unwrap_or(Nanos(self.probe_timeout.as_nanos() / 2))
    }

    /// main's `MaxProbeTimeout`: as set, or four times `probe_timeout`.
    pub fn max_probe_timeout(&self) -> Nanos {
        self.max_probe_timeout
            .unwrap_or(Nanos(self.probe_timeout.as_nanos().saturating_mul(4)))
    }

    /// Whether the connection-liveness check holds votes (main, on by
    /// default; 10.2 has none).
    pub fn connection_liveness_check(&self) -> bool {
        self.version == OrleansVersion::Main && self.connection_liveness_check.unwrap_or(true)
    }

    /// 10.2's wait before probing again after an unwell intermediary.
    pub fn indirect_probe_retry(&self) -> Nanos {
        self.indirect_probe_retry.unwrap_or(INDIRECT_PROBE_RETRY)
    }

    /// The window of the health checks on probes sent and received, and
    /// of the connection-liveness check: 10.2 `ProbeTimeout x
    /// NumMissedProbesLimit` (`ProbingSiloHealthMonitor.cs`, 15 s by
    /// default); main `GetFailureDetectionTimeout()` = `MaxProbeTimeout x
    /// NumMissedProbesLimit` (`ClusterMembershipOptionsExtensions.cs:8`,
    /// 60 s by default).
    pub fn failure_detection_window(&self) -> Nanos {
        let base = match self.version {
            OrleansVersion::V10_2 => self.probe_timeout,
            OrleansVersion::Main => self.max_probe_timeout(),
        };
        Nanos(base.as_nanos() * u64::from(self.num_missed_probes_limit))
    }

    /// An IAmAlive older than this makes a silo stale
    /// (`AllowedIAmAliveMissPeriod`).
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
        assert_eq!(c.version, OrleansVersion::V10_2);
        assert_eq!(c.failure_detection_window(), Nanos::from_secs(15));
        assert!(!c.connection_liveness_check());
        assert_eq!(c.indirect_probe_retry(), Nanos::from_millis(250));
        assert_eq!(c.stale_after(), Nanos::from_secs(90));
        // main: ClusterMembershipOptions.cs:43 and :53, and
        // ClusterMembershipOptionsExtensions.cs:8.
        let m = OrleansConfig::of(OrleansVersion::Main);
        m.validate().unwrap();
        assert_eq!(m.min_probe_timeout(), Nanos::from_millis(2_500));
        assert_eq!(m.max_probe_timeout(), Nanos::from_secs(20));
        assert_eq!(m.failure_detection_window(), Nanos::from_secs(60));
        assert!(m.connection_liveness_check());
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
        let bounds = OrleansConfig {
            min_probe_timeout: Some(Nanos::from_secs(30)),
            ..OrleansConfig::of(OrleansVersion::Main)
        };
        assert_eq!(bounds.validate().unwrap_err().key, "max_probe_timeout");
    }

    #[test]
    fn a_key_of_the_other_version_is_refused() {
        let e = OrleansConfig {
            connection_liveness_check: Some(true),
            ..Default::default()
        }
        .validate()
        .unwrap_err();
        assert_eq!(e.key, "connection_liveness_check");
        assert!(e.problem.contains("main only"), "{}", e.problem);
        let e = OrleansConfig {
            indirect_probe_retry: Some(Nanos::from_millis(100)),
            ..OrleansConfig::of(OrleansVersion::Main)
        }
        .validate()
        .unwrap_err();
        assert_eq!(e.key, "indirect_probe_retry");
        assert!(e.problem.contains("10.2 only"), "{}", e.problem);
        let off = OrleansConfig {
            connection_liveness_check: Some(false),
            ..OrleansConfig::of(OrleansVersion::Main)
        };
        off.validate().unwrap();
        assert!(!off.connection_liveness_check());
    }

    #[test]
    fn toml_keys_versions_and_unknown_keys() {
        let c: OrleansConfig = toml::from_str("probe_timeout = \"2s\"").unwrap();
        assert_eq!(c.probe_timeout, Nanos::from_secs(2));
        assert!(toml::from_str::<OrleansConfig>("probe_timout = \"2s\"").is_err());
        for (text, version) in [
            ("version = \"main\"", OrleansVersion::Main),
            ("version = \"10.2\"", OrleansVersion::V10_2),
            ("version = 10.2", OrleansVersion::V10_2),
        ] {
            let c: OrleansConfig = toml::from_str(text).unwrap();
            assert_eq!(c.version, version, "{text}");
        }
        for bad in ["version = \"10.1\"", "version = 11", "version = true"] {
            let e = toml::from_str::<OrleansConfig>(bad)
                .unwrap_err()
                .to_string();
            assert!(e.contains("\"main\""), "{bad}: {e}");
        }
        // The default serialises with its version and without the keys
        // of the other version.
        let text = toml::to_string(&OrleansConfig::default()).unwrap();
        assert!(text.contains("version = \"10.2\""), "{text}");
        assert!(!text.contains("min_probe_timeout"), "{text}");
    }
}
