//! Which silos a silo probes: the successors of the silo on
//! `num_probed_silos` hash rings, each ring hashing every silo differently,
//! so that the monitoring graph is an expander (after Rapid: Suresh et al.,
//! "Stable and Consistent Membership at Scale with Rapid", USENIX ATC 2018;
//! Orleans adopted it in `ClusterHealthMonitor` since 3.x).
//!
//! Deviation: Orleans hashes a silo's address (`SiloAddress` with its
//! epoch) with its own hash function; fdlab hashes the node index and the
//! generation with SplitMix64, which spreads silos as evenly.

use super::table::SiloId;

/// SplitMix64's finaliser (Steele et al., "Fast splittable pseudorandom
/// number generators", OOPSLA 2014): a bijective 64-bit mix.
const fn mix(mut x: u64) -> u64 {
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// A silo's position on ring `ring`.
pub fn ring_position(silo: SiloId, ring: u32) -> u64 {
    let id = (u64::from(silo.node) << 32) | u64::from(silo.generation);
    mix(mix(id) ^ mix(u64::from(ring).wrapping_add(0x9e37_79b9_7f4a_7c15)))
}

/// The silos `me` probes among `candidates` (sorted, `me` possibly among
/// them): on ring r = 0, 1, ... the first successor of `me` not already
/// chosen, until `count` are chosen or none is left. Sorted by silo.
pub fn monitored(me: SiloId, candidates: &[SiloId], count: u32) -> Vec<SiloId> {
    let others: Vec<SiloId> = candidates.iter().copied().filter(|&s| s != me).collect();
    let want = (count as usize).min(others.len());
    let mut chosen: Vec<SiloId> = Vec::with_capacity(want);
    let mut ring = 0u32;
    while chosen.len() < want {
        let origin = ring_position(me, ring);
        let next = others
            .iter()
            .filter(|s| !chosen.contains(s))
            .min_by_key(|&&s| (ring_position(s, ring).wrapping_sub(origin), s));
        if let Some(&s) = next {
            chosen.push(s);
        }
        ring += 1;
    }
    chosen.sort_unstable();
    chosen
}

#[cfg(test)]
mod tests {
    use super::*;

    fn silos(n: u32) -> Vec<SiloId> {
        (0..n)
            .map(|node| SiloId {
                node,
                generation: 0,
            })
            .collect()
    }

    #[test]
    fn picks_count_distinct_others() {
        let all = silos(50);
        for me in &all {
            let m = monitored(*me, &all, 10);
            assert_eq!(m.len(), 10);
            assert!(!m.contains(me));
            assert!(m.windows(2).all(|w| w[0] < w[1]));
        }
        assert_eq!(monitored(all[0], &all[..4], 10).len(), 3);
    }

    #[test]
    fn every_silo_is_watched_by_about_count_others() {
        // An expander: in-degrees close to the out-degree, none unwatched.
        let all = silos(200);
        let mut watchers = vec![0u32; 200];
        for me in &all {
            for s in monitored(*me, &all, 10) {
                watchers[s.node as usize] += 1;
            }
        }
        assert!(watchers.iter().all(|&w| w >= 3), "{watchers:?}");
        assert_eq!(watchers.iter().sum::<u32>(), 2000);
    }

    #[test]
    fn a_departure_changes_few_choices() {
        let all = silos(100);
        let without: Vec<SiloId> = all.iter().copied().filter(|s| s.node != 42).collect();
        let changed = all
            .iter()
            .filter(|s| s.node != 42)
            .filter(|&&s| monitored(s, &all, 10) != monitored(s, &without, 10))
            .count();
        // Only the watchers of the departed silo (about 10) change.
        assert!(changed <= 20, "{changed}");
    }
}
