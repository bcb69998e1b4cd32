//! `ketama` and `twemproxy-ketama`: consistent hashing on a ring of MD5
//! points (SPEC §9).
//!
//! Sources: libketama (RJ/ketama `libketama/ketama.c`: `ketama_hashi`,
//! `ketama_create_continuum`, `ketama_get_server`) and twemproxy
//! (twitter/twemproxy 0.5.0 `src/hashkit/nc_ketama.c`: `ketama_update` line
//! 58, its point count line 162 and point names line 178,
//! `ketama_hash`, `ketama_dispatch` line 222). The two differ in what they hash and
//! in the key hash, and fdlab keeps them apart ([`Ketama::libketama`],
//! [`Ketama::twemproxy`]).
//!
//! - Points: server `name` gets `points_per_server` points,
//!   four per MD5 digest of `"{name}-{k}"`, k = 0, 1, ...; digest bytes
//!   `[4h..4h+4]` little-endian are the points, h = 0..3. With equal weights
//!   that is 40 digests, 160 points.
//! - Weights as twemproxy: `pct = weight / total_weight` and
//!   `points_per_server = floorf(pct * 160 / 4 * nlive + 0.0000000001) * 4`,
//!   in `float` arithmetic (see [`points_per_server`]). The float rounding is
//!   real: with 25, 47 or 50 equal servers (550 of the counts 1..=5000) a
//!   server gets 156 points, not 160.
//! - Names: libketama hashes `"host:port"`; twemproxy its own name of the
//!   server ([`super::twemproxy::name`]: the configured name, or `host`
//!   alone on port 11211, or `host:port`).
//! - Key: libketama's `ketama_hashi`, the first four bytes of the key's MD5,
//!   little-endian; twemproxy's the pool's `hash:` (default `fnv1a_64`,
//!   [`super::TwemproxyHash`]). The owner is the server of the first point
//!   at or after it, wrapping to the first point.
//! - A dead server: twemproxy with `auto_eject_hosts` rebuilds the ring over
//!   the live servers (`ketama_update` skips `next_retry > now`), with `pct`
//!   and `nlive` of the live servers; libketama is rebuilt from its server
//!   file when a line is removed. fdlab computes that rebuilt ring exactly.
//!   When every live server keeps its number of points (equal weights, and
//!   both server counts away from the float quirk above), the rebuilt ring is
//!   the full ring less the dead servers' points, so the owner is the server
//!   of the next point of a live server on the full ring: fdlab walks the full
//!   ring then. Otherwise (unequal weights: a survivor's `pct` grows) the
//!   points themselves change, some keys move between live servers, and fdlab
//!   builds the live ring once per set of live servers and keeps the last one.
//!   With no live server twemproxy refuses the request: None.
//!
//! Deviations: libketama weights by memory and computes
//! `floorf(pct * 40.0 * numservers)` in double; fdlab uses twemproxy's
//! formula for both. Equal points are ordered by the servers' order (the
//! list's for libketama, twemproxy's by name for twemproxy); both sources
//! use `qsort`, whose order for equal points is unspecified.

use std::sync::{Arc, Mutex};

use super::hash::{ketama_points, POINTS_PER_DIGEST};
use super::TwemproxyHash;

/// `KETAMA_POINTS_PER_SERVER`: points of a server of average weight.
pub const KETAMA_POINTS_PER_SERVER: u32 = 160;

/// The `0.0000000001` twemproxy adds before `floorf`.
const TWEMPROXY_EPSILON: f64 = 0.000_000_000_1;

/// twemproxy's `pointer_per_server` for a server of `weight` among live
/// servers of `total_weight` and number `nlive`, in C's arithmetic:
/// `(float)weight / (float)total_weight`, then `* 160 / 4 * (float)nlive` in
/// `float`, `+ 0.0000000001` in `double`, back to `float` for `floorf`.
pub fn points_per_server(weight: u32, total_weight: u64, nlive: usize) -> u32 {
    let pct = weight as f32 / total_weight as f32;
    let quarter = pct * KETAMA_POINTS_PER_SERVER as f32 / POINTS_PER_DIGEST as f32 * nlive as f32;
    let nudged = (f64::from(quarter) + TWEMPROXY_EPSILON) as f32;
    nudged.floor() as u32 * POINTS_PER_DIGEST as u32
}

/// A ring: points ascending, each with its server.
#[derive(Clone, Debug, Default)]
struct Ring {
    values: Vec<u32>,
    servers: Vec<u32>,
}

impl Ring {
    /// The ring of the servers `names` with `counts[i]` points each; equal
    /// points in the order of the servers' `rank`s.
    fn build(names: &[String], counts: &[u32], rank: &[u32]) -> Ring {
        let total: usize = counts.iter().map(|&c| c as usize).sum();
        let mut points: Vec<(u32, u32, u32)> = Vec::with_capacity(total);
        let mut text = String::new();
        for (server, (name, &count)) in names.iter().zip(counts).enumerate() {
            for k in 0..count as usize / POINTS_PER_DIGEST {
                use std::fmt::Write;
                text.clear();
                let _ = write!(text, "{name}-{k}");
                for value in ketama_points(text.as_bytes()) {
                    points.push((value, rank[server], server as u32));
                }
            }
        }
        // Ranks are distinct: (value, rank) orders every pair of points, so
        // an unstable sort is exact.
        points.sort_unstable();
        debug_assert_eq!(points.len(), total);
        Ring {
            values: points.iter().map(|&(v, ..)| v).collect(),
            servers: points.iter().map(|&(.., s)| s).collect(),
        }
    }

    /// The index of the first point at or after `hash`, wrapping.
    #[inline]
    fn first_at_or_after(&self, hash: u32) -> usize {
        debug_assert!(!self.values.is_empty());
        let at = self.values.partition_point(|&v| v < hash);
        if at == self.values.len() {
            0
        } else {
            at
        }
    }
}

/// The live servers' ring last built, and for which servers.
#[derive(Debug, Default)]
struct LiveRingCache(Mutex<Option<(Vec<bool>, Arc<Ring>)>>);

/// A ketama ring over a server list.
#[derive(Debug)]
pub struct Ketama {
    names: Vec<String>,
    weights: Vec<u32>,
    /// Each server's place in the client's order, for equal points.
    rank: Vec<u32>,
    /// `None`: libketama's `ketama_hashi` (MD5).
    hash: Option<TwemproxyHash>,
    /// Points per server with every server live.
    full_counts: Vec<u32>,
    full: Ring,
    live_ring: LiveRingCache,
}

impl Clone for Ketama {
    fn clone(&self) -> Ketama {
        Ketama {
            names: self.names.clone(),
            weights: self.weights.clone(),
            rank: self.rank.clone(),
            hash: self.hash,
            full_counts: self.full_counts.clone(),
            full: self.full.clone(),
            live_ring: LiveRingCache::default(),
        }
    }
}

impl Ketama {
    /// libketama's ring: `names` are `host:port`, equal points in list
    /// order, keys hashed by `ketama_hashi`.
    pub fn libketama(names: Vec<String>, weights: Vec<u32>) -> Ketama {
        let rank = (0..names.len() as u32).collect();
        Ketama::build(names, weights, rank, None)
    }

    /// twemproxy's ring: `names` are twemproxy's names of the servers (in
    /// the client's list order), `order` the pool's order (indices), keys
    /// hashed by the pool's `hash`.
    pub fn twemproxy(
        names: Vec<String>,
        weights: Vec<u32>,
        order: &[usize],
        hash: TwemproxyHash,
    ) -> Ketama {
        let mut rank = vec![0u32; names.len()];
        for (place, &server) in order.iter().enumerate() {
            rank[server] = place as u32;
        }
        Ketama::build(names, weights, rank, Some(hash))
    }

    fn build(
        names: Vec<String>,
        weights: Vec<u32>,
        rank: Vec<u32>,
        hash: Option<TwemproxyHash>,
    ) -> Ketama {
        debug_assert_eq!(names.len(), weights.len());
        debug_assert_eq!(names.len(), rank.len());
        let total: u64 = weights.iter().map(|&w| u64::from(w)).sum();
        let full_counts: Vec<u32> = weights
            .iter()
            .map(|&w| points_per_server(w, total, weights.len()))
            .collect();
        let full = Ring::build(&names, &full_counts, &rank);
        Ketama {
            names,
            weights,
            rank,
            hash,
            full_counts,
            full,
            live_ring: LiveRingCache::default(),
        }
    }

    /// The key's hash: libketama's `ketama_hashi`, or the twemproxy pool's.
    pub fn key_hash(&self, key: &str) -> u32 {
        self.hash.unwrap_or(TwemproxyHash::Md5).hash(key.as_bytes())
    }

    /// Points per server on the ring of the live servers (0 for a dead one).
    fn live_counts(&self, live: &[bool]) -> Vec<u32> {
        let (nlive, total) = self.live_totals(live);
        self.weights
            .iter()
            .zip(live)
            .map(|(&w, &l)| {
                if l {
                    points_per_server(w, total, nlive)
                } else {
                    0
                }
            })
            .collect()
    }

    /// The number and total weight of the live servers.
    fn live_totals(&self, live: &[bool]) -> (usize, u64) {
        self.weights
            .iter()
            .zip(live)
            .filter(|&(_, &l)| l)
            .fold((0, 0), |(n, t), (&w, _)| (n + 1, t + u64::from(w)))
    }

    /// Whether every live server has as many points on the live ring as on
    /// the full one.
    fn live_ring_is_full_ring_less_dead(&self, live: &[bool]) -> bool {
        let (nlive, total) = self.live_totals(live);
        self.weights
            .iter()
            .zip(live)
            .zip(&self.full_counts)
            .all(|((&w, &l), &full)| !l || points_per_server(w, total, nlive) == full)
    }

    /// The server of a key of hash `hash` given `live`.
    #[inline]
    pub fn owner(&self, hash: u32, live: &[bool]) -> Option<usize> {
        let at = self.full.first_at_or_after(hash);
        if live.iter().all(|&l| l) {
            return Some(self.full.servers[at] as usize);
        }
        if !live.iter().any(|&l| l) {
            return None;
        }
        if self.live_ring_is_full_ring_less_dead(live) {
            // The next point of a live server; the walk ends, since a live
            // server has points (the live servers' shares add up to 160
            // points each on average).
            let n = self.full.servers.len();
            return (0..n)
                .map(|step| self.full.servers[(at + step) % n] as usize)
                .find(|&s| live[s]);
        }
        let ring = self.live_ring(live);
        Some(ring.servers[ring.first_at_or_after(hash)] as usize)
    }

    /// The ring of the live servers, from the cache or built.
    #[cold]
    fn live_ring(&self, live: &[bool]) -> Arc<Ring> {
        let mut cache = self.live_ring.0.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((for_live, ring)) = &*cache {
            if for_live.as_slice() == live {
                return Arc::clone(ring);
            }
        }
        let ring = Arc::new(Ring::build(
            &self.names,
            &self.live_counts(live),
            &self.rank,
        ));
        *cache = Some((live.to_vec(), Arc::clone(&ring)));
        ring
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(n: usize) -> Vec<String> {
        (0..n).map(|i| format!("10.0.0.{i}:11211")).collect()
    }

    #[test]
    fn equal_weights_give_160_points_except_where_float_rounds_down() {
        assert_eq!(points_per_server(1, 10, 10), 160);
        assert_eq!(points_per_server(1, 3, 3), 160);
        // twemproxy's float arithmetic: 25 equal servers get 39 digests each.
        assert_eq!(points_per_server(1, 25, 25), 156);
        assert_eq!(points_per_server(1, 26, 26), 160);
    }

    #[test]
    fn the_skip_walk_equals_the_rebuilt_ring_when_counts_hold() {
        let k = Ketama::libketama(names(10), vec![1; 10]);
        let mut live = vec![true; 10];
        live[3] = false;
        live[7] = false;
        assert!(k.live_ring_is_full_ring_less_dead(&live));
        let rebuilt = Ring::build(&k.names, &k.live_counts(&live), &k.rank);
        for key in 0..2000u32 {
            let hash = k.key_hash(&format!("key:{key}"));
            let walked = k.owner(hash, &live).unwrap();
            let direct = rebuilt.servers[rebuilt.first_at_or_after(hash)] as usize;
            assert_eq!(walked, direct, "key:{key}");
        }
    }

    #[test]
    fn with_unequal_weights_a_death_re_apportions_the_survivors() {
        let k = Ketama::libketama(names(3), vec![1, 2, 3]);
        let live = [true, true, false];
        assert!(!k.live_ring_is_full_ring_less_dead(&live));
        assert_eq!(k.live_counts(&live), [104, 212, 0]);
        // The cached ring answers the same twice, and a clone starts empty.
        let h = k.key_hash("k");
        assert_eq!(k.owner(h, &live), k.owner(h, &live));
        assert!(k.clone().live_ring.0.lock().unwrap().is_none());
    }

    #[test]
    fn past_the_last_point_the_ring_wraps() {
        let k = Ketama::libketama(names(3), vec![1; 3]);
        let last = *k.full.values.last().unwrap();
        if last < u32::MAX {
            assert_eq!(k.full.first_at_or_after(last + 1), 0);
        }
        assert_eq!(k.full.first_at_or_after(0), 0);
    }
}
