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

/// A ring's own salt, mixed into every position on it.
fn ring_salt(ring: u32) -> u64 {
    mix(u64::from(ring).wrapping_add(0x9e37_79b9_7f4a_7c15))
}

/// A silo's hash, the same on every ring.
fn silo_hash(silo: SiloId) -> u64 {
    mix((u64::from(silo.node) << 32) | u64::from(silo.generation))
}

/// A silo's position on ring `ring`.
pub fn ring_position(silo: SiloId, ring: u32) -> u64 {
    mix(silo_hash(silo) ^ ring_salt(ring))
}

/// The silos `me` probes among `candidates` (sorted, `me` possibly among
/// them): on ring r = 0, 1, ... the first successor of `me` not already
/// chosen, until `count` are chosen or none is left. Sorted by silo.
pub fn monitored(me: SiloId, candidates: &[SiloId], count: u32) -> Vec<SiloId> {
    let mut rings = Rings::new(me, count);
    rings.update(candidates);
    rings.chosen().to_vec()
}

/// The ring choice of one silo, kept up to date as silos come and go.
///
/// Per ring it keeps the `count` nearest successors of the silo: a ring's
/// choice skips at most `count - 1` silos chosen on earlier rings, so its
/// pick is always among them. A silo that joins is placed on every ring in
/// `O(count)`; only the departure of one of the nearest makes it scan every
/// silo again. A cluster that forms one join at a time would otherwise make
/// every silo rescan the cluster at every join.
#[derive(Clone, Debug)]
pub struct Rings {
    me: SiloId,
    me_hash: u64,
    count: usize,
    /// The candidates last given, sorted.
    members: Vec<SiloId>,
    /// Per ring, the nearest `(distance, silo)`, sorted, at most `count`.
    nearest: Vec<Vec<(u64, SiloId)>>,
    chosen: Vec<SiloId>,
}

impl Rings {
    pub fn new(me: SiloId, count: u32) -> Rings {
        Rings {
            me,
            me_hash: silo_hash(me),
            count: count as usize,
            members: Vec::new(),
            nearest: Vec::new(),
            chosen: Vec::new(),
        }
    }

    /// The current choice, sorted.
    pub fn chosen(&self) -> &[SiloId] {
        &self.chosen
    }

    /// Takes `candidates` (sorted) as the silos to choose from; returns
    /// whether the choice changed.
    pub fn update(&mut self, candidates: &[SiloId]) -> bool {
        if candidates == self.members.as_slice() {
            return false;
        }
        let (added, removed) = diff(&self.members, candidates);
        let others = candidates.iter().filter(|&&s| s != self.me).count();
        let want = self.count.min(others);
        let full = want != self.nearest.len()
            || self.nearest.iter().any(|list| list.len() < want)
            || self
                .nearest
                .iter()
                .any(|list| list.iter().any(|(_, s)| removed.binary_search(s).is_ok()));
        self.members = candidates.to_vec();
        if full {
            self.nearest = vec![Vec::with_capacity(want + 1); want];
            for &s in candidates {
                self.place(s, want);
            }
        } else {
            for s in added {
                self.place(s, want);
            }
        }
        let mut chosen: Vec<SiloId> = Vec::with_capacity(want);
        for list in &self.nearest {
            if let Some(&(_, s)) = list.iter().find(|(_, s)| !chosen.contains(s)) {
                chosen.push(s);
            }
        }
        debug_assert_eq!(
            chosen.len(),
            want,
            "each ring's nearest hold an unchosen silo"
        );
        chosen.sort_unstable();
        let changed = chosen != self.chosen;
        self.chosen = chosen;
        changed
    }

    /// Puts `s` among the nearest of every ring where it is near enough.
    fn place(&mut self, s: SiloId, want: usize) {
        if s == self.me {
            return;
        }
        let h = silo_hash(s);
        for (r, list) in self.nearest.iter_mut().enumerate() {
            let salt = ring_salt(r as u32);
            let d = mix(h ^ salt).wrapping_sub(mix(self.me_hash ^ salt));
            if list.len() == want && list[want - 1] <= (d, s) {
                continue;
            }
            let at = list.partition_point(|&x| x < (d, s));
            list.insert(at, (d, s));
            list.truncate(want);
        }
    }
}

/// What `new` adds to and removes from `old` (both sorted).
fn diff(old: &[SiloId], new: &[SiloId]) -> (Vec<SiloId>, Vec<SiloId>) {
    let (mut added, mut removed) = (Vec::new(), Vec::new());
    let (mut i, mut j) = (0, 0);
    while i < old.len() || j < new.len() {
        match (old.get(i), new.get(j)) {
            (Some(a), Some(b)) if a == b => {
                i += 1;
                j += 1;
            }
            (Some(a), Some(b)) if a < b => {
                removed.push(*a);
                i += 1;
            }
            (Some(a), None) => {
                removed.push(*a);
                i += 1;
            }
            (_, Some(b)) => {
                added.push(*b);
                j += 1;
            }
            (None, None) => break,
        }
    }
    (added, removed)
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

    /// The definition, ring by ring, with a scan of every silo.
    fn by_definition(me: SiloId, candidates: &[SiloId], count: u32) -> Vec<SiloId> {
        let others: Vec<SiloId> = candidates.iter().copied().filter(|&s| s != me).collect();
        let want = (count as usize).min(others.len());
        let mut chosen: Vec<SiloId> = Vec::new();
        let mut ring = 0;
        while chosen.len() < want {
            let origin = ring_position(me, ring);
            let next = others
                .iter()
                .filter(|s| !chosen.contains(s))
                .min_by_key(|&&s| (ring_position(s, ring).wrapping_sub(origin), s));
            chosen.extend(next);
            ring += 1;
        }
        chosen.sort_unstable();
        chosen
    }

    #[test]
    fn the_one_pass_choice_is_the_definition() {
        for n in [1, 2, 3, 11, 57, 300] {
            let all = silos(n);
            for count in [1, 3, 10] {
                for me in all.iter().step_by(7) {
                    assert_eq!(monitored(*me, &all, count), by_definition(*me, &all, count));
                }
            }
        }
    }

    #[test]
    fn kept_up_to_date_it_stays_the_definition() {
        // Silos join one by one, then some leave, then others join.
        let all = silos(120);
        let me = all[5];
        let mut rings = Rings::new(me, 10);
        for n in 1..=all.len() {
            rings.update(&all[..n]);
            assert_eq!(
                rings.chosen(),
                by_definition(me, &all[..n], 10).as_slice(),
                "{n}"
            );
        }
        let mut some: Vec<SiloId> = all.iter().copied().filter(|s| s.node % 3 != 0).collect();
        rings.update(&some);
        assert_eq!(rings.chosen(), by_definition(me, &some, 10).as_slice());
        some.push(SiloId {
            node: 500,
            generation: 1,
        });
        rings.update(&some);
        assert_eq!(rings.chosen(), by_definition(me, &some, 10).as_slice());
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
