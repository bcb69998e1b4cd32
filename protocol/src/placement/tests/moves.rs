//! How many keys move when one of N = 10 servers dies (SPEC §9 "known
//! values"), over 100,000 keys.
//!
//! Sampling error: a share p of K = 100,000 keys has a binomial standard
//! deviation sqrt(p (1 - p) / K): 0.00095 for p = 0.1 or 0.9. The bounds
//! below allow that five times over plus the distribution's own unevenness
//! (stated per test): a test that fails is a wrong algorithm, not bad luck.

use super::super::{DistributionKind, NamespaceGroup, Placement, PlacementConfig, SockHash};
use super::{placement, servers};

/// Keys per test.
const KEYS: usize = 100_000;
/// Servers per test.
const N: usize = 10;
/// The server that dies.
const DEAD: usize = 3;
/// Five binomial standard deviations of a share near 0.1 or 0.9 over KEYS.
const SAMPLING_BOUND: f64 = 5.0 * 0.00095;

fn names() -> Vec<String> {
    (0..N).map(|i| format!("10.0.0.{}:11211", i + 1)).collect()
}

fn ten_servers() -> Vec<super::super::Server> {
    let names = names();
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    servers(&refs, &[1; N])
}

fn keys() -> Vec<String> {
    (0..KEYS).map(|i| format!("user:{i}:profile")).collect()
}

/// Owners of `keys` with every server live, and with server `DEAD` dead.
fn owners_before_after(p: &Placement, keys: &[String]) -> Vec<(Option<usize>, Option<usize>)> {
    let all = [true; N];
    let mut one_dead = [true; N];
    one_dead[DEAD] = false;
    keys.iter()
        .map(|k| {
            let h = p.key_hash(k);
            (p.owner(k, h, &all), p.owner(k, h, &one_dead))
        })
        .collect()
}

/// The share of keys whose owner changed.
fn moved_share(owners: &[(Option<usize>, Option<usize>)]) -> f64 {
    owners.iter().filter(|(b, a)| b != a).count() as f64 / owners.len() as f64
}

/// Asserts only the dead server's keys moved; returns their share.
fn only_the_dead_servers_keys_move(owners: &[(Option<usize>, Option<usize>)]) -> f64 {
    for (before, after) in owners {
        assert!(
            before.is_some(),
            "every key has an owner while all are live"
        );
        if before != after {
            assert_eq!(
                *before,
                Some(DEAD),
                "a live server's key moved: {before:?} -> {after:?}"
            );
        } else {
            assert_ne!(*before, Some(DEAD), "a dead server kept a key");
        }
    }
    moved_share(owners)
}

#[test]
fn modulo_eject_moves_n_minus_1_over_n() {
    let p = placement(DistributionKind::ModuloEject, &ten_servers());
    let share = moved_share(&owners_before_after(&p, &keys()));
    // A key stays iff hash % 10 and hash % 9 name the same server: 9 of the
    // 90 residue pairs, so exactly 1/10 stays for a uniform hash.
    let expected = (N - 1) as f64 / N as f64;
    assert!((share - expected).abs() < SAMPLING_BOUND, "moved {share}");
}

#[test]
fn ketama_moves_about_one_over_n() {
    let p = placement(DistributionKind::Ketama, &ten_servers());
    let share = only_the_dead_servers_keys_move(&owners_before_after(&p, &keys()));
    // One server's share of a 160-point ring: arcs vary, relative standard
    // deviation about 1/sqrt(160) = 8 %: 0.1 +- 0.03 is 3.7 of them.
    assert!((share - 1.0 / N as f64).abs() < 0.03, "moved {share}");
}

#[test]
fn sockiopool_with_failover_moves_only_the_dead_servers_keys() {
    for hash in SockHash::ALL {
        let config = PlacementConfig {
            hash,
            ..PlacementConfig::defaults(DistributionKind::SockIoPool)
        };
        let p = Placement::new(&ten_servers(), &config).unwrap();
        let owners = owners_before_after(&p, &keys());
        let share = only_the_dead_servers_keys_move(&owners);
        // The hashes are near uniform over 10 buckets; old-compat of these
        // similar keys is the least even: 0.1 +- 0.02.
        assert!((share - 0.1).abs() < 0.02, "{hash}: moved {share}");
        // Most moved keys find a live server within count + 1 tries.
        let failed = owners.iter().filter(|(_, a)| a.is_none()).count();
        assert!(failed * 100 < KEYS, "{hash}: {failed} requests failed");
    }
}

#[test]
fn sockiopool_without_failover_fails_the_dead_servers_keys() {
    let config = PlacementConfig {
        failover: false,
        ..PlacementConfig::defaults(DistributionKind::SockIoPool)
    };
    let p = Placement::new(&ten_servers(), &config).unwrap();
    for (before, after) in owners_before_after(&p, &keys()) {
        if before == Some(DEAD) {
            assert_eq!(after, None);
        } else {
            assert_eq!(after, before);
        }
    }
}

#[test]
fn modulo_failover_moves_only_the_dead_servers_keys() {
    let p = placement(DistributionKind::ModuloFailover, &ten_servers());
    let share = only_the_dead_servers_keys_move(&owners_before_after(&p, &keys()));
    // 15-bit hash over 10 buckets: 0.1 +- 0.01.
    assert!((share - 0.1).abs() < 0.01, "moved {share}");
}

#[test]
fn rendezvous_moves_about_one_over_n() {
    let p = placement(DistributionKind::Rendezvous, &ten_servers());
    let share = only_the_dead_servers_keys_move(&owners_before_after(&p, &keys()));
    assert!((share - 0.1).abs() < SAMPLING_BOUND, "moved {share}");
}

#[test]
fn weighted_rendezvous_shares_follow_the_weights() {
    let list = servers(&["a:1", "b:1", "c:1"], &[1, 2, 5]);
    let p = placement(DistributionKind::Rendezvous, &list);
    let mut counts = [0usize; 3];
    for k in keys() {
        counts[super::owner(&p, &k, &[true; 3]).unwrap()] += 1;
    }
    for (i, w) in [1.0, 2.0, 5.0].into_iter().enumerate() {
        let share = counts[i] as f64 / KEYS as f64;
        // Binomial sd at most 0.0016 over 100,000 keys: 5 of them.
        assert!((share - w / 8.0).abs() < 0.008, "server {i}: {share}");
    }
}

#[test]
fn namespace_moves_only_the_dead_servers_group() {
    // Users on servers 0..5, Orders on 5..10; "Misc" keys match no group.
    let config = PlacementConfig {
        groups: vec![
            NamespaceGroup {
                prefix: "Users".into(),
                servers: (0..5).collect(),
            },
            NamespaceGroup {
                prefix: "Orders".into(),
                servers: (5..10).rev().collect(), // any order: list order is used
            },
        ],
        ..PlacementConfig::defaults(DistributionKind::Namespace)
    };
    let p = Placement::new(&ten_servers(), &config).unwrap();
    let keys: Vec<String> = (0..KEYS)
        .map(|i| match i % 3 {
            0 => format!("Users.Profile.{i}"),
            1 => format!("Orders.Item.{i}"),
            _ => format!("Misc.{i}"),
        })
        .collect();
    let owners = owners_before_after(&p, &keys);
    for (key, (before, after)) in keys.iter().zip(&owners) {
        let before = before.unwrap();
        if key.starts_with("Users.") {
            assert!(before < 5, "{key} left its group");
            // After count + 1 = 6 tries a request may fail (None).
            assert!(
                after.is_none_or(|a| a < 5),
                "{key} failed over out of its group"
            );
        } else if key.starts_with("Orders.") {
            assert!(before >= 5, "{key} left its group");
            assert_eq!(Some(before), *after, "{key}: an Orders key moved");
        }
    }
    let share = only_the_dead_servers_keys_move(&owners);
    // Users keys (1/3) on one of 5 servers, Misc keys (1/3) on one of 10.
    let expected = 1.0 / 3.0 / 5.0 + 1.0 / 3.0 / 10.0;
    assert!(
        (share - expected).abs() < 0.01,
        "moved {share}, expected {expected}"
    );
}
