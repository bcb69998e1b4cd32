//! `sockiopool`: the .NET Memcached.ClientLibrary `SockIOPool.GetSock`, a port
//! of the Java "Whalin" client (SPEC §9).
//!
//! Source: memcacheddotnet `trunk/clientlib/src/clientlib/SockIOPool.cs`
//! (`initialize`, `getSock`, `origCompatHashingAlg`, `newCompatHashingAlg`)
//! and Memcached.ClientLibrary `SockIOPool.cs` `GetSock`, which is the same
//! code:
//!
//! ```text
//! hv = H(key)                         // int, 32-bit, signed
//! while (tries++ <= buckets.Count)    // tries is 1 in the first pass
//!     bucket = hv % buckets.Count; if (bucket < 0) bucket += buckets.Count
//!     if the bucket's server connects: return it
//!     if (!failover) return null
//!     hv += H("" + tries + key)       // unchecked: wraps
//! return null
//! ```
//!
//! So at most `count + 1` buckets are tried, and a request can fail while a
//! live server remains. `%` truncates toward zero in C# and Java, hence the
//! `+ count` for a negative `hv`.
//!
//! Deviations, each from the file above:
//! - "connects" is fdlab's `live[i]`, a dead mark set from a detector
//!   ([`super::DeadMarks`]), instead of `createSocket`'s own dead-host table
//!   (1 s, doubling at each failed connect).
//! - `createSocket`, on reconnecting a host, appends it to `buckets` when
//!   `buckets.BinarySearch(host) < 0`: a binary search of an unsorted list,
//!   which can add a duplicate bucket and reshuffle keys. Not reproduced: the
//!   bucket list stays the configured one.
//! - The caller-given `hashCode` argument is not modelled.
//! - `native` is Java's `String.hashCode` (see [`super::hash::java_string_hash`]).
//! - The Java client of 2005 (gwhalin/Memcached-Java-Client
//!   `src/com/danga/MemCached/SockIOPool.java`, commit 90a8057) loops
//!   `while (tries++ < bucketSize)`, one try fewer, and CRCs `key.getBytes()`
//!   in the platform charset; its 2.x `getBucket` negates a negative bucket
//!   (`bucket *= -1`) instead of adding the count. fdlab follows the .NET code.

use super::buckets::Buckets;
use super::hash::sock_hash;
use super::SockHash;

/// One SockIOPool bucket list with its hash and failover switch.
#[derive(Clone, Debug)]
pub struct SockIoPool {
    buckets: Buckets,
    hash: SockHash,
    failover: bool,
    /// `buckets.Count`, a C# `int`.
    count: i32,
}

impl SockIoPool {
    /// The pool over `buckets`; their count must fit an `i32` (checked by
    /// [`super::Placement::new`]).
    pub fn new(buckets: Buckets, hash: SockHash, failover: bool) -> SockIoPool {
        let count = i32::try_from(buckets.count()).expect("bucket count checked by Placement::new");
        debug_assert!(count >= 1);
        SockIoPool {
            buckets,
            hash,
            failover,
            count,
        }
    }

    /// `hv`: the key's hash, `H(key)`.
    pub fn key_hash(&self, key: &str) -> i32 {
        sock_hash(self.hash, None, key)
    }

    /// `bucket = hv % count`, plus `count` when negative.
    #[inline]
    fn bucket(&self, hv: i32) -> u64 {
        let mut bucket = hv % self.count;
        if bucket < 0 {
            bucket += self.count;
        }
        bucket as u64
    }

    /// `GetSock`: the server of `key` (hash `hv`) given `live`, or None when
    /// the request fails.
    #[inline]
    pub fn owner(&self, key: &str, hv: i32, live: &[bool]) -> Option<usize> {
        let primary = self.buckets.server(self.bucket(hv));
        if live[primary] {
            return Some(primary);
        }
        self.fail_over(key, hv, live)
    }

    /// The rest of `GetSock` after the first bucket's server was dead.
    #[cold]
    fn fail_over(&self, key: &str, mut hv: i32, live: &[bool]) -> Option<usize> {
        // With no live server every try fails: the loop's answer, sooner.
        if !self.failover || !self.buckets.any_live(live) {
            return None;
        }
        // Pass `tries` (1-based) found its server dead; rehash for pass
        // `tries + 1`, up to pass `count + 1`.
        let passes = self.count as u32 + 1;
        for tries in 1..passes {
            hv = hv.wrapping_add(sock_hash(self.hash, Some(tries), key));
            let server = self.buckets.server(self.bucket(hv));
            if live[server] {
                return Some(server);
            }
        }
        None
    }
}
