//! `namespace`: keys `Namespace.Entity.Id` routed by their namespace to a
//! group of servers, each group its own SockIOPool bucket list (SPEC §9, "the
//! seed's remedy": a dead server costs only its group).
//!
//! fdlab's own design over [`super::sockiopool`]; no client is reproduced:
//! - A key's namespace is its text before the first `.`; a key without a `.`
//!   has none. A key whose namespace names no group, or has none, goes to the
//!   whole server list, as `sockiopool` would place it.
//! - A group's bucket list holds its servers in server-list order (whatever
//!   order the group names them in), each `weight` times, so two clients
//!   that spell a group differently still agree.
//! - Within a group, hashing and failover are SockIOPool's (same `hash`, same
//!   `failover`): a dead server's keys are rehashed onto its group only.
//!
//! The key hash carries the group: its low 32 bits are SockIOPool's `hv`,
//! the bits above are the group's number plus one (zero: the whole list), so
//! [`Namespaces::owner`] does no prefix look-up.

use std::collections::BTreeMap;

use super::buckets::Buckets;
use super::sockiopool::SockIoPool;
use super::{NamespaceGroup, SockHash};

/// The separator between a key's namespace and the rest.
const NAMESPACE_SEPARATOR: char = '.';

/// Bits of a namespace key hash that hold SockIOPool's `hv`.
const HV_BITS: u32 = 32;

/// The namespace of `key`: its text before the first `.`, if it has one.
pub fn namespace_of(key: &str) -> Option<&str> {
    key.split_once(NAMESPACE_SEPARATOR).map(|(ns, _)| ns)
}

/// The groups' pools, and one over the whole list.
#[derive(Clone, Debug)]
pub struct Namespaces {
    /// Group number (1-based; 0 is `whole`) by prefix.
    by_prefix: BTreeMap<String, u32>,
    /// `pools[0]`: the whole list; `pools[g]`: group g.
    pools: Vec<SockIoPool>,
}

impl Namespaces {
    /// The pools of `groups` (already checked by [`super::Placement::new`])
    /// over servers of weights `weights`.
    pub fn new(
        weights: &[u32],
        groups: &[NamespaceGroup],
        hash: SockHash,
        failover: bool,
    ) -> Namespaces {
        let weight = |i: usize| weights[i];
        let whole = Buckets::new((0..weights.len()).collect(), weight);
        let mut pools = vec![SockIoPool::new(whole, hash, failover)];
        let mut by_prefix = BTreeMap::new();
        for group in groups {
            let mut members = group.servers.clone();
            members.sort_unstable();
            debug_assert!(members.windows(2).all(|w| w[0] < w[1]), "no duplicates");
            let number = pools.len() as u32;
            pools.push(SockIoPool::new(
                Buckets::new(members, weight),
                hash,
                failover,
            ));
            let previous = by_prefix.insert(group.prefix.clone(), number);
            debug_assert!(previous.is_none(), "prefixes are unique");
        }
        Namespaces { by_prefix, pools }
    }

    /// The group number of `key` (0: the whole list).
    fn group_of(&self, key: &str) -> u32 {
        namespace_of(key)
            .and_then(|ns| self.by_prefix.get(ns).copied())
            .unwrap_or(0)
    }

    /// The key's hash: `hv` in the low 32 bits, group + 1 above.
    pub fn key_hash(&self, key: &str) -> u64 {
        let group = self.group_of(key);
        let hv = self.pools[group as usize].key_hash(key);
        (u64::from(group) << HV_BITS) | u64::from(hv as u32)
    }

    /// The server of `key` (hash `hash` from [`Namespaces::key_hash`]).
    #[inline]
    pub fn owner(&self, key: &str, hash: u64, live: &[bool]) -> Option<usize> {
        let group = (hash >> HV_BITS) as usize;
        debug_assert_eq!(group, self.group_of(key) as usize, "hash of another key");
        let hv = hash as u32 as i32;
        self.pools[group].owner(key, hv, live)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_namespace_is_the_text_before_the_first_dot() {
        assert_eq!(namespace_of("Users.Profile.42"), Some("Users"));
        assert_eq!(namespace_of(".x"), Some(""));
        assert_eq!(namespace_of("plain"), None);
    }
}
