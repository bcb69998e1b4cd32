//! Keys of the SWIM agent, with hashicorp/memberlist's LAN defaults.
//!
//! Source: hashicorp/memberlist `config.go`, `DefaultLANConfig` (the key
//! names are memberlist's, in snake case; lines 273-297 at v0.2.2, the
//! version Debian packages) and SPEC §8.2. Three switches
//! turn Lifeguard's mechanisms on and off one by one (Dadgar, Phillips,
//! Currey, "Lifeguard: Local Health Awareness for More Accurate Failure
//! Detection", DSN workshops 2018):
//! - `local_health_multiplier`: LHA-Probe, the local health multiplier and
//!   the nacks that feed it ([`super::awareness`]);
//! - `dogpile`: LHA-Suspicion, suspicion timeouts that start long and
//!   shrink with independent confirmations ([`super::suspicion`]);
//! - `buddy_system`: a ping to a suspected member carries the suspicion.
//!
//! memberlist has no switches: it always runs all three, so the defaults
//! are [`Variant::Lifeguard`]; [`Variant::Swim`] is the SWIM paper's
//! protocol with memberlist's timings (Das, Gupta, Motivala, "SWIM",
//! DSN 2002).

use serde::{Deserialize, Serialize};

use crate::config::{ensure, ensure_bounded, ensure_positive, ConfigError};
use crate::time::Nanos;

/// Most members a ping-req or a gossip round may go to.
pub const MAX_FANOUT: u32 = 64;
/// Largest multiplier key (`suspicion_mult`, `suspicion_max_timeout_mult`,
/// `retransmit_mult`, `awareness_max_multiplier`). Durations are products
/// of at most three of them and a log10 of the cluster size (below 10), so
/// this bound and [`LONGEST_INTERVAL`] keep every product in range.
pub const MAX_MULTIPLIER: u32 = 100;
/// Longest `probe_interval` or `gossip_interval`: 2^45 ns, about 9.8 hours.
pub const LONGEST_INTERVAL: Nanos = Nanos(1 << 45);
/// Smallest `udp_buffer_size` in bytes: the largest message (a ping-req)
/// with a compound header always fits.
pub const MIN_UDP_BUFFER_BYTES: u32 = 256;
/// Largest `udp_buffer_size` in bytes (a UDP datagram's payload).
pub const MAX_UDP_BUFFER_BYTES: u32 = 65_507;
/// memberlist's `udpRecvBufSize` (`net_transport.go:24` at v0.2.2).
pub const UDP_RECEIVE_BUFFER_BYTES: u64 = 2 * 1024 * 1024;
/// Largest `udp_receive_buffer`: 1 GiB.
pub const MAX_UDP_RECEIVE_BUFFER_BYTES: u64 = 1 << 30;

/// Which protocol a preset configures.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Variant {
    /// SWIM: none of Lifeguard's three mechanisms.
    Swim,
    /// Lifeguard: all three (what memberlist runs).
    Lifeguard,
}

impl Variant {
    pub const ALL: [Variant; 2] = [Variant::Swim, Variant::Lifeguard];

    pub const fn name(self) -> &'static str {
        match self {
            Variant::Swim => "swim",
            Variant::Lifeguard => "lifeguard",
        }
    }
}

/// The `[membership.swim]` table of a scenario.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SwimConfig {
    /// Period of the probe ticker (one member per tick). A probe waits for
    /// an ack, direct or relayed, until this times (the local health
    /// score plus one) after it began; ticks that fall meanwhile are
    /// skipped, but for one that starts the next probe as soon as it ends
    /// (Go's ticker).
    pub probe_interval: Nanos,
    /// Wait for a direct ack before asking others to probe (never scaled);
    /// also how long an indirect prober waits before its nack.
    pub probe_timeout: Nanos,
    /// Members asked to probe indirectly after a direct probe failed.
    pub indirect_checks: u32,
    /// Suspicion timeout = `suspicion_mult x max(1, log10 N) x probe_interval`.
    pub suspicion_mult: u32,
    /// Lifeguard's longest suspicion timeout, in multiples of the shortest.
    pub suspicion_max_timeout_mult: u32,
    /// Period of the gossip rounds.
    pub gossip_interval: Nanos,
    /// Members each gossip round goes to.
    pub gossip_nodes: u32,
    /// A member dead for longer is no longer gossiped to (it had its chance
    /// to refute) and is dropped from the list at the next reshuffle.
    pub gossip_to_the_dead_time: Nanos,
    /// Each update is sent `retransmit_mult x ceil(log10(N + 1))` times.
    pub retransmit_mult: u32,
    /// The local health score stays below this; intervals scale by score + 1.
    pub awareness_max_multiplier: u32,
    /// Bytes of a packet's payload: updates are piggybacked up to it.
    pub udp_buffer_size: u32,
    /// Period of the full state exchange with one random live member over
    /// TCP (push/pull), scaled up past 32 members; 0 turns it off.
    pub push_pull_interval: Nanos,
    /// No TCP ping beside the indirect probes (memberlist's
    /// `DisableTcpPings`).
    pub disable_tcp_pings: bool,
    /// Bytes of a member's UDP receive buffer: what arrives while the
    /// buffer holds this much unread is dropped (memberlist asks the
    /// kernel for `udpRecvBufSize`, 2 MiB, `net_transport.go`).
    pub udp_receive_buffer: u64,
    /// Lifeguard's LHA-Probe: the local health multiplier, fed by nacks.
    pub local_health_multiplier: bool,
    /// Lifeguard's LHA-Suspicion: timeouts shortened by confirmations.
    pub dogpile: bool,
    /// Lifeguard's buddy system: a ping to a suspect carries the suspicion.
    pub buddy_system: bool,
}

impl Default for SwimConfig {
    /// memberlist's `DefaultLANConfig`, all three Lifeguard mechanisms on.
    fn default() -> Self {
        SwimConfig {
            probe_interval: Nanos::from_secs(1),
            probe_timeout: Nanos::from_millis(500),
            indirect_checks: 3,
            suspicion_mult: 4,
            suspicion_max_timeout_mult: 6,
            gossip_interval: Nanos::from_millis(200),
            gossip_nodes: 3,
            gossip_to_the_dead_time: Nanos::from_secs(30),
            retransmit_mult: 4,
            awareness_max_multiplier: 8,
            udp_buffer_size: 1_400,
            push_pull_interval: Nanos::from_secs(30),
            disable_tcp_pings: false,
            udp_receive_buffer: UDP_RECEIVE_BUFFER_BYTES,
            local_health_multiplier: true,
            dogpile: true,
            buddy_system: true,
        }
    }
}

impl SwimConfig {
    /// The LAN defaults with Lifeguard's mechanisms as `variant` has them.
    pub fn preset(variant: Variant) -> SwimConfig {
        let on = variant == Variant::Lifeguard;
        SwimConfig {
            local_health_multiplier: on,
            dogpile: on,
            buddy_system: on,
            ..SwimConfig::default()
        }
    }

    /// The variant these switches make, if they are all on or all off.
    pub fn variant(&self) -> Option<Variant> {
        match (
            self.local_health_multiplier,
            self.dogpile,
            self.buddy_system,
        ) {
            (true, true, true) => Some(Variant::Lifeguard),
            (false, false, false) => Some(Variant::Swim),
            _ => None,
        }
    }

    /// Checks every key; the error names the first key out of range.
    pub fn validate(&self) -> Result<(), ConfigError> {
        for (key, value) in [
            ("probe_interval", self.probe_interval),
            ("probe_timeout", self.probe_timeout),
            ("gossip_interval", self.gossip_interval),
        ] {
            ensure_positive(value, key)?;
            ensure(
                value <= LONGEST_INTERVAL,
                key,
                &format!("{value} is too long (at most {LONGEST_INTERVAL}, about 9.8 hours)"),
            )?;
        }
        ensure(
            self.probe_timeout < self.probe_interval,
            "probe_timeout",
            &format!(
                "must be shorter than `probe_interval` ({}): the indirect probes need the rest of the round",
                self.probe_interval
            ),
        )?;
        ensure_bounded(self.gossip_to_the_dead_time, "gossip_to_the_dead_time")?;
        ensure(
            self.push_pull_interval <= LONGEST_INTERVAL,
            "push_pull_interval",
            &format!(
                "{} is too long (at most {LONGEST_INTERVAL}, about 9.8 hours; 0 turns push/pull off)",
                self.push_pull_interval
            ),
        )?;
        ensure(
            (u64::from(MIN_UDP_BUFFER_BYTES)..=MAX_UDP_RECEIVE_BUFFER_BYTES)
                .contains(&self.udp_receive_buffer),
            "udp_receive_buffer",
            &format!(
                "must be between {MIN_UDP_BUFFER_BYTES} and {MAX_UDP_RECEIVE_BUFFER_BYTES} bytes"
            ),
        )?;
        ensure(
            self.indirect_checks <= MAX_FANOUT,
            "indirect_checks",
            &format!("must be at most {MAX_FANOUT}"),
        )?;
        ensure(
            (1..=MAX_FANOUT).contains(&self.gossip_nodes),
            "gossip_nodes",
            &format!("must be between 1 and {MAX_FANOUT}"),
        )?;
        for (key, value) in [
            ("suspicion_mult", self.suspicion_mult),
            (
                "suspicion_max_timeout_mult",
                self.suspicion_max_timeout_mult,
            ),
            ("retransmit_mult", self.retransmit_mult),
            ("awareness_max_multiplier", self.awareness_max_multiplier),
        ] {
            ensure(
                (1..=MAX_MULTIPLIER).contains(&value),
                key,
                &format!("must be between 1 and {MAX_MULTIPLIER}"),
            )?;
        }
        ensure(
            (MIN_UDP_BUFFER_BYTES..=MAX_UDP_BUFFER_BYTES).contains(&self.udp_buffer_size),
            "udp_buffer_size",
            &format!("must be between {MIN_UDP_BUFFER_BYTES} and {MAX_UDP_BUFFER_BYTES} bytes"),
        )?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_memberlist_lan_and_valid() {
        let c = SwimConfig::default();
        c.validate().unwrap();
        assert_eq!(c.probe_interval, Nanos::from_secs(1));
        assert_eq!(c.probe_timeout, Nanos::from_millis(500));
        assert_eq!(c.indirect_checks, 3);
        assert_eq!(c.suspicion_mult, 4);
        assert_eq!(c.suspicion_max_timeout_mult, 6);
        assert_eq!(c.gossip_interval, Nanos::from_millis(200));
        assert_eq!(c.gossip_nodes, 3);
        assert_eq!(c.retransmit_mult, 4);
        assert_eq!(c.awareness_max_multiplier, 8);
        assert_eq!(c.push_pull_interval, Nanos::from_secs(30));
        assert!(!c.disable_tcp_pings);
        assert_eq!(c.udp_receive_buffer, 2 * 1024 * 1024);
        assert_eq!(c.variant(), Some(Variant::Lifeguard));
    }

    #[test]
    fn presets_switch_all_three() {
        let swim = SwimConfig::preset(Variant::Swim);
        assert!(!swim.local_health_multiplier && !swim.dogpile && !swim.buddy_system);
        assert_eq!(swim.variant(), Some(Variant::Swim));
        assert_eq!(
            SwimConfig::preset(Variant::Lifeguard),
            SwimConfig::default()
        );
        let mixed = SwimConfig {
            dogpile: false,
            ..SwimConfig::default()
        };
        assert_eq!(mixed.variant(), None);
    }

    #[test]
    fn errors_name_the_key() {
        let cases = [
            (
                SwimConfig {
                    probe_interval: Nanos::ZERO,
                    ..Default::default()
                },
                "probe_interval",
            ),
            (
                SwimConfig {
                    probe_timeout: Nanos::from_secs(1),
                    ..Default::default()
                },
                "probe_timeout",
            ),
            (
                SwimConfig {
                    gossip_interval: Nanos::ZERO,
                    ..Default::default()
                },
                "gossip_interval",
            ),
            (
                SwimConfig {
                    gossip_nodes: 0,
                    ..Default::default()
                },
                "gossip_nodes",
            ),
            (
                SwimConfig {
                    suspicion_mult: 0,
                    ..Default::default()
                },
                "suspicion_mult",
            ),
            (
                SwimConfig {
                    awareness_max_multiplier: 101,
                    ..Default::default()
                },
                "awareness_max_multiplier",
            ),
            (
                SwimConfig {
                    udp_buffer_size: 100,
                    ..Default::default()
                },
                "udp_buffer_size",
            ),
            (
                SwimConfig {
                    probe_interval: Nanos::from_secs(100_000),
                    probe_timeout: Nanos::from_secs(1),
                    ..Default::default()
                },
                "probe_interval",
            ),
        ];
        for (config, key) in cases {
            assert_eq!(config.validate().unwrap_err().key, key);
        }
    }

    #[test]
    fn toml_keys_and_unknown_keys() {
        let c: SwimConfig = toml::from_str("probe_interval = \"2s\"\ndogpile = false").unwrap();
        assert_eq!(c.probe_interval, Nanos::from_secs(2));
        assert!(!c.dogpile);
        assert!(toml::from_str::<SwimConfig>("probe_intervall = \"2s\"").is_err());
        let v: Variant = toml::from_str::<toml::Table>("v = \"swim\"").unwrap()["v"]
            .clone()
            .try_into()
            .unwrap();
        assert_eq!(v, Variant::Swim);
    }
}
