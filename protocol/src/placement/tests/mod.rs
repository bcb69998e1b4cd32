//! Tests of the placement module as a whole: reference vectors from the
//! clients' code, key movement when a server dies, and the API's errors.

mod api;
mod moves;
mod vectors;

use super::{DistributionKind, Placement, PlacementConfig, Server};

/// Servers `names` with weights `weights`.
pub(super) fn servers(names: &[&str], weights: &[u32]) -> Vec<Server> {
    names
        .iter()
        .zip(weights)
        .map(|(n, &w)| Server::new(*n, w))
        .collect()
}

/// The placement of `kind` with its defaults over `servers`.
pub(super) fn placement(kind: DistributionKind, servers: &[Server]) -> Placement {
    Placement::new(servers, &PlacementConfig::defaults(kind)).expect("valid servers")
}

/// The owner of `key` under `p` given `live`.
pub(super) fn owner(p: &Placement, key: &str, live: &[bool]) -> Option<usize> {
    p.owner(key, p.key_hash(key), live)
}
