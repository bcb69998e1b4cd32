//! A lock-RPC scenario resolved once for all its runs.

use fdlab_protocol::lockrpc::{write_quorum, ChannelConfig, PolicyKind};
use fdlab_protocol::Nanos;

use crate::dist::Sampler;
use crate::scenario::Scenario;

/// The resolved `[lockrpc]` table (valid scenarios only).
#[derive(Clone, Debug)]
pub struct Setup {
    pub servers: u32,
    pub clients: u32,
    pub clients_per_node: u32,
    pub quorum: u32,
    /// Acquisitions per second of each client.
    pub acquisitions_per_second: f64,
    pub policies: Vec<PolicyKind>,
    pub configs: Vec<ChannelConfig>,
    pub workers: u32,
    pub convoy: bool,
    pub keys: u32,
    pub service: Sampler,
    pub hold: Sampler,
    pub latency: Sampler,
    /// The scenario's own loss of every message (TCP retransmits it).
    pub loss: f64,
    pub duration: Nanos,
}

impl Setup {
    /// `None` when `scenario` has no `[lockrpc]` table.
    pub fn new(scenario: &Scenario) -> Option<Setup> {
        let l = scenario.lockrpc.as_ref()?;
        let servers = scenario.topology.node_names().len() as u32;
        let policies = l.kinds();
        Some(Setup {
            servers,
            clients: servers * l.clients_per_node,
            clients_per_node: l.clients_per_node,
            quorum: write_quorum(servers),
            acquisitions_per_second: l.rpcs_per_second / f64::from(servers),
            configs: policies.iter().map(|&k| l.channel_config(k)).collect(),
            policies,
            workers: l.workers,
            convoy: l.convoy,
            keys: l.keys,
            service: Sampler::new(&l.service_time),
            hold: Sampler::new(&l.hold),
            latency: Sampler::new(&scenario.network.latency),
            loss: scenario.network.loss,
            duration: scenario.duration,
        })
    }

    /// The node client `c` runs on.
    pub fn node_of(&self, client: u32) -> u32 {
        client / self.clients_per_node
    }
}
