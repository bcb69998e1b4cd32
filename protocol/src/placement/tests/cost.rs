//! What `owner` costs: 100,000 keys x 10 servers, every server live and
//! then one dead (`cargo test --release -p fdlab-protocol owner_cost --
//! --ignored --nocapture`). Ignored: a timing, not a check.

use std::time::Instant;

use super::super::DistributionKind;
use super::{placement, servers};

#[test]
#[ignore = "a timing: run by hand with --release"]
fn owner_cost() {
    const KEYS: usize = 100_000;
    let names: Vec<String> = (0..10).map(|i| format!("10.0.0.{i}:11211")).collect();
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    let list = servers(&refs, &[1; 10]);
    let keys: Vec<String> = (0..KEYS).map(|i| format!("user:{i}:profile")).collect();
    let mut one_dead = [true; 10];
    one_dead[3] = false;
    for kind in DistributionKind::ALL {
        let p = placement(kind, &list);
        // The first pass warms the caches and the clock; the second counts.
        let mut hashes: Vec<u64> = keys.iter().map(|k| p.key_hash(k)).collect();
        let started = Instant::now();
        for (h, k) in hashes.iter_mut().zip(&keys) {
            *h = p.key_hash(k);
        }
        let hash_ns = started.elapsed().as_nanos() as f64 / KEYS as f64;
        for (label, live) in [("all live", [true; 10]), ("one dead", one_dead)] {
            let started = Instant::now();
            let mut sum = 0usize;
            for (k, &h) in keys.iter().zip(&hashes) {
                sum += p.owner(k, h, &live).unwrap_or(0);
            }
            let ns = started.elapsed().as_nanos() as f64 / KEYS as f64;
            println!("{kind:16} key_hash {hash_ns:6.1} ns  owner {label}: {ns:6.1} ns  ({sum})");
        }
    }
}
