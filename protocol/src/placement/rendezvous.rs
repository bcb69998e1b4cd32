//! `rendezvous`: highest random weight (Thaler and Ravishankar, 1998): each
//! key goes to the live server that scores it highest (SPEC §9).
//!
//! No memcached client is reproduced; fdlab fixes the hash so that results
//! are stable across platforms and versions:
//! - key hash: the 64-bit FNV-1a of the key's UTF-8 bytes, computed once;
//! - server seed: the 64-bit FNV-1a of the server's name;
//! - score of server s for a key: `fmix64(seed_s XOR key_hash)`, MurmurHash3's
//!   64-bit finalizer, so `owner` costs one multiply-xorshift mix per server
//!   and no string hashing;
//! - equal weights: the highest score wins, the earlier server on a tie;
//! - unequal weights: the logarithmic method of weighted rendezvous hashing
//!   (Schindelhauer and Schomaker, 2005): `u` = the score's top 53 bits as a
//!   fraction in (0, 1), weighted score `-weight / ln(u)`, highest wins
//!   (`ln` from the `libm` crate, the same bits on every platform). A server
//!   then owns a share of keys proportional to its weight.
//!
//! A dead server's keys go to their second-highest scorer, and no other key
//! moves: about 1/N of the keys for one of N servers.

use super::hash::{fmix64, fnv1a_64};

/// Bits of a score used as the fraction `u` of the weighted method (an `f64`
/// mantissa holds 53).
const FRACTION_BITS: u32 = 53;

/// Highest random weight over a server list.
#[derive(Clone, Debug)]
pub struct Rendezvous {
    seeds: Vec<u64>,
    /// `None`: all weights equal (integer scores); else each server's weight.
    weights: Option<Vec<f64>>,
}

impl Rendezvous {
    pub fn new(names: &[String], weights: &[u32]) -> Rendezvous {
        let seeds = names.iter().map(|n| fnv1a_64(n.as_bytes())).collect();
        let equal = weights.windows(2).all(|w| w[0] == w[1]);
        Rendezvous {
            seeds,
            weights: (!equal).then(|| weights.iter().map(|&w| f64::from(w)).collect()),
        }
    }

    /// The 64-bit FNV-1a of the key.
    pub fn key_hash(&self, key: &str) -> u64 {
        fnv1a_64(key.as_bytes())
    }

    /// The score of server `i` for a key of hash `hash`.
    #[inline]
    pub fn score(&self, i: usize, hash: u64) -> u64 {
        fmix64(self.seeds[i] ^ hash)
    }

    /// The live server of the highest score, the earlier one on a tie.
    #[inline]
    pub fn owner(&self, hash: u64, live: &[bool]) -> Option<usize> {
        match &self.weights {
            None => {
                let mut best: Option<(u64, usize)> = None;
                for (i, &seed) in self.seeds.iter().enumerate() {
                    let score = fmix64(seed ^ hash);
                    if live[i] && best.is_none_or(|(b, _)| score > b) {
                        best = Some((score, i));
                    }
                }
                best.map(|(_, i)| i)
            }
            Some(weights) => {
                let mut best: Option<(f64, usize)> = None;
                for (i, &weight) in weights.iter().enumerate() {
                    if !live[i] {
                        continue;
                    }
                    let top = self.score(i, hash) >> (u64::BITS - FRACTION_BITS);
                    // (top + 0.5) / 2^53: strictly inside (0, 1).
                    let u = (top as f64 + 0.5) / (1u64 << FRACTION_BITS) as f64;
                    let weighted = -weight / libm::log(u);
                    if best.is_none_or(|(b, _)| weighted > b) {
                        best = Some((weighted, i));
                    }
                }
                best.map(|(_, i)| i)
            }
        }
    }
}
