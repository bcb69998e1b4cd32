//! What makes a placement scenario valid (the `[placement]` table and the
//! topology it needs), each refused with the key it is under.

use std::collections::BTreeSet;

use fdlab_protocol::placement::{DistributionKind, TwemproxyHash, MAX_TOTAL_WEIGHT};

use super::placement_setup::{PlacementSetup, MAX_KEYS, MAX_SERVERS};
use super::validate::{check, ScenarioError};
use super::{MonitorCount, Scenario, Topology};

/// Most requests of one run (clients × rate × duration): each is drawn and
/// placed once per detector and distribution.
pub const MAX_REQUESTS: f64 = 1e10;
/// Most clients: a key's clients are counted per owner in 16 bits.
pub const MAX_CLIENTS: u32 = 10_000;

impl Scenario {
    pub(super) fn validate_placement(&self, p: &PlacementSetup) -> Result<(), ScenarioError> {
        let key = |k: &str| format!("placement.{k}");
        let nodes = match &self.topology {
            Topology::Mesh {
                nodes,
                monitors_per_node: MonitorCount::All,
            } => *nodes,
            _ => {
                return Err(ScenarioError::new(
                    "topology.kind",
                    "a placement scenario needs `kind = \"mesh\"` without `monitors_per_node`: its first nodes are the servers, the others the clients, and every client watches every server",
                ))
            }
        };
        check(
            p.servers >= 1 && p.servers <= MAX_SERVERS,
            || key("servers"),
            &format!("must be 1 to {MAX_SERVERS}, and is {}", p.servers),
        )?;
        let clients = nodes.saturating_sub(p.servers);
        check(
            p.servers < nodes,
            || key("servers"),
            &format!(
                "is {} of the {nodes} nodes: leave at least one client (nodes n{}.. are the clients)",
                p.servers, p.servers
            ),
        )?;
        check(
            clients <= MAX_CLIENTS,
            || "topology.nodes".into(),
            &format!("{clients} clients; a placement scenario takes at most {MAX_CLIENTS}"),
        )?;
        check(
            p.keys >= 1 && p.keys <= MAX_KEYS,
            || key("keys"),
            &format!("must be 1 to {MAX_KEYS}, and is {}", p.keys),
        )?;
        check(
            p.zipf.is_finite() && p.zipf >= 0.0 && p.zipf <= 10.0,
            || key("zipf"),
            &format!(
                "must be an exponent from 0 (uniform) to 10, and is {}",
                p.zipf
            ),
        )?;
        check(
            p.requests_per_second.is_finite() && p.requests_per_second > 0.0,
            || key("requests_per_second"),
            &format!("must be a positive rate, and is {}", p.requests_per_second),
        )?;
        let requests = p.requests_per_second * f64::from(clients) * self.duration.as_secs_f64();
        check(
            requests <= MAX_REQUESTS,
            || key("requests_per_second"),
            &format!(
                "{clients} clients at {}/s for {} make {requests:.3e} requests; a run takes at most {MAX_REQUESTS:.0e}",
                p.requests_per_second, self.duration
            ),
        )?;
        if let Some(names) = &p.distributions {
            check(
                !names.is_empty(),
                || key("distributions"),
                "must name at least one distribution",
            )?;
            for (i, name) in names.iter().enumerate() {
                check(
                    DistributionKind::from_name(name).is_some(),
                    || format!("placement.distributions[{i}]"),
                    &format!(
                        "unknown distribution `{}`; one of {}",
                        name,
                        DistributionKind::ALL
                            .iter()
                            .map(|k| format!("`{}`", k.name()))
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                )?;
                check(
                    !names[..i].contains(name),
                    || format!("placement.distributions[{i}]"),
                    &format!("`{name}` is listed twice"),
                )?;
            }
        }
        if let Some(w) = &p.weights {
            check(
                w.len() == p.servers as usize,
                || key("weights"),
                &format!("has {} weights for {} servers", w.len(), p.servers),
            )?;
            for (i, &weight) in w.iter().enumerate() {
                check(
                    weight >= 1,
                    || format!("placement.weights[{i}]"),
                    "must be at least 1 (a server of weight 0 gets no key: leave it out)",
                )?;
            }
            // The clients' own limit (fdlab_protocol::placement), checked
            // here so that a dry run and the file's line say it.
            let total = w.iter().fold(0u64, |t, &x| t.saturating_add(u64::from(x)));
            check(
                total <= MAX_TOTAL_WEIGHT,
                || key("weights"),
                &format!(
                    "add up to {total}, past {MAX_TOTAL_WEIGHT}: the clients list each server `weight` times"
                ),
            )?;
        }
        if let Some(h) = &p.hash {
            check(
                ["old-compat", "new-compat", "native"].contains(&h.as_str()),
                || key("hash"),
                &format!(
                    "unknown hash `{}`; one of `old-compat`, `new-compat`, `native`",
                    h
                ),
            )?;
        }
        if let Some(h) = &p.twemproxy_hash {
            check(
                TwemproxyHash::from_name(h).is_some(),
                || key("twemproxy_hash"),
                &format!(
                    "unknown hash `{h}`; one of {} (the two twemproxy hashes fdlab reproduces)",
                    TwemproxyHash::ALL
                        .map(|t| format!("`{}`", t.name()))
                        .join(", ")
                ),
            )?;
        }
        check(
            p.namespaces >= 1 && p.namespaces <= p.servers,
            || key("namespaces"),
            &format!(
                "must be 1 to the {} servers (each group needs a server), and is {}",
                p.servers, p.namespaces
            ),
        )?;
        let names = self.topology.node_names();
        let server_names: BTreeSet<&str> = names[..p.servers as usize]
            .iter()
            .map(String::as_str)
            .collect();
        let mut seen = BTreeSet::new();
        for (i, o) in p.orders.iter().enumerate() {
            let path = |k: &str| format!("placement.orders[{i}].{k}");
            check(
                !o.clients.is_empty(),
                || path("clients"),
                "must name at least one client",
            )?;
            for c in &o.clients {
                let index = names.iter().position(|n| n == c);
                check(
                    index.is_some_and(|x| x >= p.servers as usize),
                    || path("clients"),
                    &format!(
                        "`{}` is not a client (clients are n{} to n{})",
                        c,
                        p.servers,
                        nodes - 1
                    ),
                )?;
                check(
                    seen.insert(c.clone()),
                    || path("clients"),
                    &format!("`{c}` has another order already"),
                )?;
            }
            let listed: BTreeSet<&str> = o.servers.iter().map(String::as_str).collect();
            check(
                listed == server_names && o.servers.len() == server_names.len(),
                || path("servers"),
                &format!(
                    "must list every server once (n0 to n{}) in the order these clients use",
                    p.servers - 1
                ),
            )?;
        }
        check(
            self.detectors.iter().all(|d| !d.config.uses_data_stream()),
            || "detectors".into(),
            "a placement client hears its servers only by heartbeats or probes: use fixed-timeout, phi-accrual or adaptive-probe",
        )?;
        Ok(())
    }
}
