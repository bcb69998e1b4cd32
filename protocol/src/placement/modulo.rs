//! The modulo distributions: `modulo-failover` (python-memcached) and
//! `modulo-eject` (twemproxy `modula` with `auto_eject_hosts`), SPEC §9.

use super::buckets::Buckets;
use super::hash::{cmemcache_hash, cmemcache_rehash};
use super::TwemproxyHash;

/// python-memcached's `Client._SERVER_RETRIES`: servers tried per request.
pub const PYTHON_SERVER_RETRIES: u32 = 10;

/// `modulo-failover`: python-memcached 1.59 `Client._get_server`
/// (linsomniac/python-memcached, tag 1.59, memcache.py):
///
/// ```text
/// serverhash = cmemcache_hash(key)      # ((crc32(key) >> 16) & 0x7fff) or 1
/// for i in range(Client._SERVER_RETRIES):             # 10
///     server = self.buckets[serverhash % len(self.buckets)]
///     if server.connect(): return server
///     serverhash = cmemcache_hash(str(serverhash) + str(i))
/// return None
/// ```
///
/// `self.buckets` lists each server `weight` times in list order
/// (`_init_buckets`); a `str` key is hashed as its UTF-8 bytes
/// (`_encode_key`). Deviation: `server.connect()` is fdlab's `live[i]` (a
/// dead mark held `dead_retry`, python's `_Host.deaduntil`, see
/// [`super::DeadMarks`]) rather than a connection attempt; the `(hash, key)`
/// tuple form of a key is not modelled.
#[derive(Clone, Debug)]
pub struct ModuloFailover {
    buckets: Buckets,
}

impl ModuloFailover {
    pub fn new(buckets: Buckets) -> ModuloFailover {
        ModuloFailover { buckets }
    }

    /// `cmemcache_hash(key)`, in 1..=32767.
    pub fn key_hash(&self, key: &str) -> u32 {
        cmemcache_hash(key.as_bytes())
    }

    /// `_get_server`: the server of a key of hash `hash` given `live`.
    #[inline]
    pub fn owner(&self, hash: u32, live: &[bool]) -> Option<usize> {
        let count = self.buckets.count();
        let primary = self.buckets.server(u64::from(hash) % count);
        if live[primary] {
            return Some(primary);
        }
        self.fail_over(hash, live)
    }

    #[cold]
    fn fail_over(&self, mut hash: u32, live: &[bool]) -> Option<usize> {
        if !self.buckets.any_live(live) {
            return None;
        }
        let count = self.buckets.count();
        // Try i found its server dead; rehash with i for try i + 1.
        for i in 0..PYTHON_SERVER_RETRIES - 1 {
            hash = cmemcache_rehash(hash, i);
            let server = self.buckets.server(u64::from(hash) % count);
            if live[server] {
                return Some(server);
            }
        }
        None
    }
}

/// `modulo-eject`: twemproxy `distribution: modula` with
/// `auto_eject_hosts: true` (twitter/twemproxy 0.5.0
/// src/hashkit/nc_modula.c): `modula_update` (line 29) lists every live server
/// `weight` times in the pool's order (ejected ones, `next_retry > now`, are
/// skipped) and `modula_dispatch` (line 146) picks `continuum[hash % ncontinuum]`. The
/// pool's order is twemproxy's, by server name, not the configuration's
/// ([`super::twemproxy::order`]); the key hash is the pool's `hash:`
/// ([`super::TwemproxyHash`], default `fnv1a_64`). With no live server the
/// pool refuses the request (src/nc_server.c `server_pool_update`:
/// ECONNREFUSED): None.
///
/// Deviations: a server is ejected when fdlab's dead mark says so, not after
/// `server_failure_limit` (2) failed requests; `hash_tag` is not modelled.
#[derive(Clone, Debug)]
pub struct ModuloEject {
    /// Every server (the continuum when all are live), in the pool's order.
    all: Buckets,
    weights: Vec<u32>,
    /// Server indices in the pool's order.
    order: Vec<usize>,
    hash: TwemproxyHash,
}

impl ModuloEject {
    /// The pool of servers of `weights` (in the client's list order), kept
    /// in `order` (indices into `weights`).
    pub fn new(weights: &[u32], order: Vec<usize>, hash: TwemproxyHash) -> ModuloEject {
        debug_assert_eq!(order.len(), weights.len());
        let all = Buckets::new(order.clone(), |i| weights[i]);
        ModuloEject {
            all,
            weights: weights.to_vec(),
            order,
            hash,
        }
    }

    /// The pool's hash of the key.
    pub fn key_hash(&self, key: &str) -> u32 {
        self.hash.hash(key.as_bytes())
    }

    /// `modula_dispatch` over the continuum of the live servers.
    #[inline]
    pub fn owner(&self, hash: u32, live: &[bool]) -> Option<usize> {
        if live.iter().all(|&l| l) {
            return Some(self.all.server(u64::from(hash) % self.all.count()));
        }
        // The live continuum, walked rather than built: O(servers).
        let live_weight: u64 = self
            .weights
            .iter()
            .zip(live)
            .filter(|&(_, &l)| l)
            .map(|(&w, _)| u64::from(w))
            .sum();
        if live_weight == 0 {
            return None;
        }
        let mut rest = u64::from(hash) % live_weight;
        for &i in self.order.iter().filter(|&&i| live[i]) {
            let w = u64::from(self.weights[i]);
            if rest < w {
                return Some(i);
            }
            rest -= w;
        }
        unreachable!("rest < live weight")
    }
}
