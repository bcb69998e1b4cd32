//! A placement scenario resolved once for all its runs: the servers as
//! each client lists them, each distribution's placement over each list,
//! the keys and their hashes.

use fdlab_protocol::placement::{
    DeadMarks, DistributionKind, NamespaceGroup, Placement, PlacementConfig, Server,
};

use super::workload::Zipf;
use crate::scenario::{PlacementSetup, SERVER_PORT};

/// One server list order and the clients that use it.
#[derive(Clone, Debug)]
struct Order {
    /// Position in this list -> server index (list order of the scenario).
    servers: Vec<usize>,
    /// Per distribution: the placement over this list, and each key's hash.
    placements: Vec<(Placement, Vec<u64>)>,
    /// Per distribution: each key's owner with every server live.
    primary: Vec<Vec<u8>>,
}

/// Whether a key's owner under `kind` is the first live server of a
/// preference list of its own that does not depend on which servers are
/// live (a failover chain, a rendezvous ranking): then a death moves only
/// the dead server's keys, and a return only keys not on their first
/// choice, and the ledger recomputes only those. Not `modulo-eject`
/// (every key moves), nor `ketama`, whose ring is rebuilt over the live
/// servers (twemproxy) and may move keys of live servers too.
fn follows_a_preference_list(kind: DistributionKind) -> bool {
    matches!(
        kind,
        DistributionKind::SockIoPool
            | DistributionKind::Namespace
            | DistributionKind::ModuloFailover
            | DistributionKind::Rendezvous
    )
}

/// How a client's live set changed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LiveChange {
    /// The servers marked dead (bit i: server i).
    pub died: u64,
    /// Whether some mark lifted.
    pub revived: bool,
}

/// The resolved scenario (see the module documentation).
#[derive(Clone, Debug)]
pub struct Setup {
    pub servers: Vec<Server>,
    pub clients: u32,
    /// Each client's requests per second.
    pub requests_per_second: f64,
    pub kinds: Vec<DistributionKind>,
    configs: Vec<PlacementConfig>,
    keys: Vec<String>,
    pub zipf: Zipf,
    /// Orders; the first is the scenario's list order.
    orders: Vec<Order>,
    /// By client: its order.
    order_of: Vec<usize>,
}

impl Setup {
    /// Resolves `p` for a mesh of `nodes` nodes (valid scenarios only:
    /// the placements cannot fail then).
    pub fn new(p: &PlacementSetup, node_names: &[String]) -> Result<Setup, String> {
        let servers: Vec<Server> = (0..p.servers as usize)
            .map(|i| Server::new(format!("{}:{SERVER_PORT}", node_names[i]), p.weight(i)))
            .collect();
        let clients = node_names.len() as u32 - p.servers;
        let kinds = p.kinds();
        let groups: Vec<NamespaceGroup> = (0..p.namespaces)
            .map(|g| NamespaceGroup {
                prefix: format!("ns{g}"),
                servers: p.group_servers(g).collect(),
            })
            .collect();
        let configs: Vec<PlacementConfig> = kinds
            .iter()
            .map(|&kind| {
                let mut c = PlacementConfig::defaults(kind);
                c.hash = p.sock_hash();
                c.twemproxy_hash = p.twemproxy_hash();
                c.failover = p.failover;
                c.groups = groups.clone();
                c
            })
            .collect();
        let keys: Vec<String> = (0..p.keys).map(|i| p.key_name(i)).collect();
        let mut lists: Vec<Vec<usize>> = vec![(0..servers.len()).collect()];
        let mut order_of = vec![0usize; clients as usize];
        for o in &p.orders {
            let list: Vec<usize> = o
                .servers
                .iter()
                .map(|n| node_index(node_names, n))
                .collect::<Result<_, _>>()?;
            let at = match lists.iter().position(|l| *l == list) {
                Some(at) => at,
                None => {
                    lists.push(list);
                    lists.len() - 1
                }
            };
            for c in &o.clients {
                let node = node_index(node_names, c)?;
                order_of[node - p.servers as usize] = at;
            }
        }
        let orders = lists
            .into_iter()
            .map(|list| {
                let ordered: Vec<Server> = list.iter().map(|&i| servers[i].clone()).collect();
                let placements = configs
                    .iter()
                    .map(|config| {
                        // A group names servers by list index: map them into
                        // this order's positions.
                        let mut config = config.clone();
                        for g in &mut config.groups {
                            for s in &mut g.servers {
                                *s = list.iter().position(|&x| x == *s).unwrap_or(*s);
                            }
                            g.servers.sort_unstable();
                        }
                        let placement = Placement::new(&ordered, &config).map_err(|e| e.0)?;
                        let hashes = keys.iter().map(|k| placement.key_hash(k)).collect();
                        Ok((placement, hashes))
                    })
                    .collect::<Result<Vec<_>, String>>()?;
                Ok(Order {
                    servers: list,
                    placements,
                    primary: Vec::new(),
                })
            })
            .collect::<Result<Vec<_>, String>>()?;
        let mut setup = Setup {
            zipf: Zipf::new(p.keys, p.zipf),
            servers,
            clients,
            requests_per_second: p.requests_per_second,
            kinds,
            configs,
            keys,
            orders,
            order_of,
        };
        let live = vec![true; setup.servers.len()];
        for o in 0..setup.orders.len() {
            let primary = (0..setup.kinds.len())
                .map(|j| setup.owners(&setup.orders[o], j, &live))
                .collect();
            setup.orders[o].primary = primary;
        }
        Ok(setup)
    }

    pub fn keys(&self) -> usize {
        self.keys.len()
    }

    /// Every key's owner under distribution `j` in `order`, with `live` by
    /// server index.
    fn owners(&self, order: &Order, j: usize, live: &[bool]) -> Vec<u8> {
        let in_order: Vec<bool> = order.servers.iter().map(|&s| live[s]).collect();
        let (placement, hashes) = &order.placements[j];
        self.keys
            .iter()
            .zip(hashes)
            .map(|(key, &hash)| match placement.owner(key, hash, &in_order) {
                Some(pos) => order.servers[pos] as u8,
                None => u8::MAX,
            })
            .collect()
    }

    /// Client `c`'s owners under distribution `j`.
    pub fn client_owners(&self, j: usize, c: usize, live: &[bool]) -> Vec<u8> {
        self.owners(&self.orders[self.order_of[c]], j, live)
    }

    /// Brings client `c`'s `owners` under distribution `j` up to `live`
    /// after `change`; calls `moved(key, old, new)` for each key
    /// whose owner changed. Only the keys that can move are looked at when
    /// the distribution allows it ([`follows_a_preference_list`]).
    pub fn update_owners(
        &self,
        j: usize,
        c: usize,
        live: &[bool],
        change: LiveChange,
        owners: &mut [u8],
        mut moved: impl FnMut(usize, u8, u8),
    ) {
        let order = &self.orders[self.order_of[c]];
        let in_order: Vec<bool> = order.servers.iter().map(|&s| live[s]).collect();
        let (placement, hashes) = &order.placements[j];
        let primary = &order.primary[j];
        let selective = follows_a_preference_list(self.kinds[j]);
        for (k, owner) in owners.iter_mut().enumerate() {
            let old = *owner;
            if selective {
                let on_dead = old != u8::MAX && change.died & (1u64 << old) != 0;
                let off_first = change.revived && old != primary[k];
                if !on_dead && !off_first {
                    continue;
                }
            }
            let new = match placement.owner(&self.keys[k], hashes[k], &in_order) {
                Some(pos) => order.servers[pos] as u8,
                None => u8::MAX,
            };
            if new != old {
                *owner = new;
                moved(k, old, new);
            }
        }
    }

    /// Distribution `j`'s starting state: every client's dead marks and
    /// owners with every server live.
    pub(super) fn new_book_parts(&self, j: usize) -> (Vec<DeadMarks>, Vec<Vec<u8>>) {
        let n = self.servers.len();
        let live = vec![true; n];
        let marks = (0..self.clients)
            .map(|_| DeadMarks::new(n, self.configs[j].dead_retry))
            .collect();
        let owners = (0..self.clients as usize)
            .map(|c| self.client_owners(j, c, &live))
            .collect();
        (marks, owners)
    }
}

fn node_index(names: &[String], name: &str) -> Result<usize, String> {
    names
        .iter()
        .position(|n| n == name)
        .ok_or_else(|| format!("no node `{name}`"))
}
