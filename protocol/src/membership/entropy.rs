//! A membership agent's random choices, made from entropy its host hands in.
//!
//! A state machine of this crate draws no random numbers (SPEC §2), yet
//! SWIM chooses at random: the probe order (memberlist's `shuffleNodes`),
//! the ping-req members and the gossip targets (`kRandomNodes`), the
//! tickers' phase (where memberlist takes its creation instant: see
//! [`super::swim::agent`]) and where a returning member goes
//! in the probe order (`randomOffset`); and so does Orleans: each probe
//! loop's first delay and each periodic loop's (`RandomTimeSpan.Next`), the
//! intermediary of an indirect probe (`Random.Shared.Next`), and every
//! back-off (`ExponentialBackoff`, `BackoffComputation`). The host passes 64 bits of entropy
//! at construction and with every `handle_timeout`; the agent absorbs them
//! into a 64-bit state and draws from it with SplitMix64 (Steele, Lea,
//! Flood, "Fast splittable pseudorandom number generators", OOPSLA 2014).
//!
//! Absorbing a word is `state = mix(state.wrapping_add(GOLDEN) ^ entropy)`
//! (`mix` is SplitMix64's finaliser), so the state moves
//! even when a host hands the same word every time, and a draw is
//! SplitMix64's `state += GOLDEN; mix(state)`. The same inputs (times,
//! packets, entropy words) therefore give the same choices, and a host
//! that draws its words from a seeded generator gets a run fixed by its
//! seed. Bounded draws use Lemire's multiply-shift (bias below 2^-32 for
//! the list sizes here).

use crate::time::Nanos;

/// SplitMix64's increment: 2^64 / the golden ratio.
const GOLDEN: u64 = 0x9e37_79b9_7f4a_7c15;

/// SplitMix64's finaliser: a bijective 64-bit mix.
const fn mix(mut x: u64) -> u64 {
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// The agent's generator state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Entropy {
    state: u64,
}

impl Entropy {
    pub fn new(entropy: u64) -> Entropy {
        let mut e = Entropy { state: 0 };
        e.absorb(entropy);
        e
    }

    /// Mixes a fresh word from the host into the state.
    pub fn absorb(&mut self, entropy: u64) {
        self.state = mix(self.state.wrapping_add(GOLDEN) ^ entropy);
    }

    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(GOLDEN);
        mix(self.state)
    }

    /// A number in `0..n` (0 when n is 0).
    pub fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next_u64()) * u128::from(n)) >> 64) as u64
    }

    /// A duration uniform in `[low, high)` (`low` when the range is empty):
    /// Orleans' `RandomTimeSpan.Next(low, high)`.
    pub fn between(&mut self, low: Nanos, high: Nanos) -> Nanos {
        if high <= low {
            return low;
        }
        low + Nanos(self.below((high - low).as_nanos()))
    }

    /// Shuffles `items` uniformly (Fisher-Yates).
    pub fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            let j = self.below(i as u64 + 1) as usize;
            items.swap(i, j);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_entropy_same_draws_and_constant_words_still_move() {
        let mut a = Entropy::new(42);
        let mut b = Entropy::new(42);
        a.absorb(7);
        b.absorb(7);
        assert_eq!(a.next_u64(), b.next_u64());
        let mut c = Entropy::new(0);
        let first = c;
        c.absorb(0);
        assert_ne!(c, first);
        let mut d = Entropy::new(43);
        d.absorb(7);
        assert_ne!(a.next_u64(), d.next_u64());
    }

    #[test]
    fn bounded_draws_and_shuffles() {
        let mut e = Entropy::new(1);
        let mut seen = [0u32; 5];
        for _ in 0..5_000 {
            seen[e.below(5) as usize] += 1;
        }
        assert!(seen.iter().all(|&n| n > 800), "{seen:?}");
        assert_eq!(e.below(0), 0);
        let mut items: Vec<u32> = (0..10).collect();
        e.shuffle(&mut items);
        let mut sorted = items.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..10).collect::<Vec<_>>());
        assert_ne!(items, sorted);
    }
}
