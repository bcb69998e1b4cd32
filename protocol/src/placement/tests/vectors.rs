//! Reference vectors: hashes and owners computed by
//! `reference_vectors.py` (beside this file), a Python 3 script written from
//! the clients' code with the standard library only (zlib.crc32,
//! hashlib.md5), independently of the Rust. Each block cites its source; the
//! Python expression that computed the figures is quoted above it.

use super::super::hash::{java_string_hash, ketama_points, new_compat, old_compat};
use super::super::{DistributionKind, Placement, PlacementConfig, SockHash};
use super::{owner, placement, servers};

const KEYS: [&str; 6] = [
    "foo",
    "Users.Profile.42",
    "key:1234",
    "clé",
    "Users.Profile.4242",
    "session:abcdefgh",
];

const A: usize = 0;
const B: usize = 1;
const C: usize = 2;

/// SockIOPool hashes (memcacheddotnet `SockIOPool.cs`):
/// - old: `h = i32(h * 33 + c)` over `s.encode("utf-16-le")` code units,
///   `i32(x)` the 32-bit two's complement wrap (`origCompatHashingAlg`);
/// - new: `(zlib.crc32(s.encode("utf-8")) >> 16) & 0x7FFF`
///   (`newCompatHashingAlg`);
/// - native: Java `String.hashCode`, `h = i32(31 * h + c)` over UTF-16 units.
#[test]
fn sockiopool_hashes_match_the_reference() {
    #[rustfmt::skip]
    let expected: [(i32, i32, i32); 6] = [
        (114_852, 3187, 101_574),
        (1_327_479_333, 9329, 14_055_625),
        (1_018_391_949, 19_510, 464_904_317),
        (111_608, 1735, 98_720),                  // 'é' is one UTF-16 unit, two UTF-8 bytes
        (-1_778_983_349, 2356, 622_555_399),      // old-compat wraps negative
        (525_314_434, 13_239, -188_726_040),      // Java's hash wraps negative
    ];
    for (key, (old, new, java)) in KEYS.iter().zip(expected) {
        assert_eq!(old_compat(b"", key), old, "old-compat {key}");
        assert_eq!(new_compat(b"", key), new, "new-compat {key}");
        assert_eq!(java_string_hash(b"", key), java, "native {key}");
    }
}

/// SockIOPool `getSock` over weights {5, 2} (buckets A A A A A B B),
/// reference_vectors.py `get_sock`: `while tries <= count: tries += 1;
/// bucket = abs(hv) % count * sign(hv), + count if negative; ...; hv =
/// i32(hv + H("" + str(tries) + key))`. `None`: all count + 1 = 8 tries hit
/// the dead A although B is live.
#[test]
fn sockiopool_get_sock_matches_the_reference() {
    let list = servers(&["10.0.0.1:11211", "10.0.0.2:11211"], &[5, 2]);
    let both = [true, true];
    let a_dead = [false, true];
    let b_dead = [true, false];
    // (key, hash, owner with both live, with A dead, with B dead)
    #[rustfmt::skip]
    let cases: [(&str, SockHash, usize, Option<usize>, usize); 12] = [
        ("foo", SockHash::OldCompat, A, Some(B), A),
        ("foo", SockHash::NewCompat, A, Some(B), A),               // path A A B
        ("foo", SockHash::Native, A, Some(B), A),                  // path A A A B
        ("Users.Profile.42", SockHash::OldCompat, B, Some(B), A),  // path B B A
        ("Users.Profile.42", SockHash::Native, A, Some(B), A),     // path A A A A B
        ("key:1234", SockHash::NewCompat, A, None, A),             // 8 times A
        ("key:1234", SockHash::Native, A, None, A),
        ("clé", SockHash::NewCompat, B, Some(B), A),               // path B A
        ("clé", SockHash::Native, B, Some(B), A),                  // path B B A
        ("Users.Profile.4242", SockHash::OldCompat, A, Some(B), A), // negative hv; path A x7, B
        ("session:abcdefgh", SockHash::OldCompat, A, None, A),
        ("session:abcdefgh", SockHash::Native, A, Some(B), A),      // negative hv; path A B
    ];
    for (key, hash, all_live, without_a, without_b) in cases {
        let config = PlacementConfig {
            hash,
            ..PlacementConfig::defaults(DistributionKind::SockIoPool)
        };
        let p = Placement::new(&list, &config).unwrap();
        assert_eq!(owner(&p, key, &both), Some(all_live), "{key} {hash}");
        assert_eq!(owner(&p, key, &a_dead), without_a, "{key} {hash} A dead");
        assert_eq!(
            owner(&p, key, &b_dead),
            Some(without_b),
            "{key} {hash} B dead"
        );
    }
}

/// python-memcached 1.59 `Client._get_server` (memcache.py) over weights
/// [2, 1, 1] (buckets A A B C), reference_vectors.py `get_server`:
/// `serverhash = (((zlib.crc32(key) & 0xFFFFFFFF) >> 16) & 0x7FFF) or 1`;
/// `for i in range(10): server = buckets[serverhash % 4]; ...; serverhash =
/// cmemcache_hash((str(serverhash) + str(i)).encode("ascii"))`.
#[test]
fn python_memcached_get_server_matches_the_reference() {
    let list = servers(&["a:11211", "b:11211", "c:11211"], &[2, 1, 1]);
    let p = placement(DistributionKind::ModuloFailover, &list);
    // (key, hash, owner all live, A dead, B dead)
    #[rustfmt::skip]
    let cases: [(&str, u64, usize, usize, usize); 6] = [
        ("foo", 3187, C, C, C),
        ("Users.Profile.42", 9329, A, C, A),
        ("key:1234", 19_510, B, B, A),
        ("clé", 1735, C, C, C),
        ("Users.Profile.4242", 2356, A, C, A),
        ("session:abcdefgh", 13_239, C, C, C),
    ];
    for (key, hash, all, a_dead, b_dead) in cases {
        assert_eq!(p.key_hash(key), hash, "{key}");
        assert_eq!(owner(&p, key, &[true; 3]), Some(all), "{key}");
        assert_eq!(owner(&p, key, &[false, true, true]), Some(a_dead), "{key}");
        assert_eq!(owner(&p, key, &[true, false, true]), Some(b_dead), "{key}");
        assert_eq!(owner(&p, key, &[false; 3]), None, "{key}");
    }
}

/// libketama (`ketama.c`): the points of "127.0.0.1:11211-0" are
/// `int.from_bytes(d[4h:4h+4], "little")` of `d = hashlib.md5(text).digest()`;
/// a 3-server ring of 40 digests x 4 points each, sorted; a key goes to the
/// first point >= `ketama_hashi(key)` (the key's first 4 MD5 bytes,
/// little-endian), wrapping; with 127.0.0.1:11212 removed the ring is rebuilt
/// over the other two (`ketama_ring([NAMES[0], NAMES[2]])`).
#[test]
fn libketama_points_and_owners_match_the_reference() {
    assert_eq!(
        ketama_points(b"127.0.0.1:11211-0"),
        [2_589_391_586, 1_482_608_462, 2_562_656_683, 1_506_298_073]
    );
    let list = servers(
        &["127.0.0.1:11211", "127.0.0.1:11212", "127.0.0.1:11213"],
        &[1, 1, 1],
    );
    let p = placement(DistributionKind::Ketama, &list);
    // (key, hash, owner all live, owner with 11212 removed)
    #[rustfmt::skip]
    let cases: [(&str, u64, usize, usize); 6] = [
        ("foo", 3_675_831_724, C, C),
        ("Users.Profile.42", 2_682_885_958, A, A),
        ("key:1234", 3_170_002_645, B, C),
        ("clé", 1_925_876_898, B, C),
        ("Users.Profile.4242", 3_443_992_190, A, A),
        ("session:abcdefgh", 3_638_408_284, A, A),
    ];
    for (key, hash, all, without_b) in cases {
        assert_eq!(p.key_hash(key), hash, "{key}");
        assert_eq!(owner(&p, key, &[true; 3]), Some(all), "{key}");
        assert_eq!(
            owner(&p, key, &[true, false, true]),
            Some(without_b),
            "{key}"
        );
    }
}

/// twemproxy modula (`nc_modula.c`, `nc_fnv.c` `hash_fnv1a_64`) over three
/// servers of weight 1: `h = 0x84222325; h = ((h ^ val) * 0x1B3) & 0xFFFFFFFF`
/// with `val` the byte sign-extended to 32 bits (x86 `char`); owner `h % 3`,
/// and `[A, C][h % 2]` with B ejected.
#[test]
fn twemproxy_modula_matches_the_reference() {
    let list = servers(&["a:11211", "b:11211", "c:11211"], &[1, 1, 1]);
    let p = placement(DistributionKind::ModuloEject, &list);
    #[rustfmt::skip]
    let cases: [(&str, u64, usize, usize); 6] = [
        ("foo", 4_275_688_823, C, C),
        ("Users.Profile.42", 3_027_259_312, B, A),
        ("key:1234", 1_391_522_342, C, A),
        ("clé", 503_911_478, C, A),                  // 'é' = c3 a9: both sign-extended
        ("Users.Profile.4242", 461_839_642, B, A),
        ("session:abcdefgh", 3_320_555_287, B, C),
    ];
    for (key, hash, all, without_b) in cases {
        assert_eq!(p.key_hash(key), hash, "{key}");
        assert_eq!(owner(&p, key, &[true; 3]), Some(all), "{key}");
        assert_eq!(
            owner(&p, key, &[true, false, true]),
            Some(without_b),
            "{key}"
        );
    }
}

/// fdlab's rendezvous: `kh = fnv1a64(key)`, score of server n
/// `fmix64(fnv1a64(n) ^ kh)`, highest wins (reference_vectors.py).
#[test]
fn rendezvous_matches_the_reference() {
    let list = servers(
        &["127.0.0.1:11211", "127.0.0.1:11212", "127.0.0.1:11213"],
        &[1, 1, 1],
    );
    let p = placement(DistributionKind::Rendezvous, &list);
    #[rustfmt::skip]
    let cases: [(&str, u64, usize); 6] = [
        ("foo", 15_902_901_984_413_996_407, C),
        ("Users.Profile.42", 6_384_142_148_894_216_112, A),
        ("key:1234", 16_229_598_892_238_369_318, B),
        ("clé", 1_562_740_897_900_313_142, A),
        ("Users.Profile.4242", 11_476_794_429_516_750_106, B),
        ("session:abcdefgh", 15_908_602_083_665_487_639, B),
    ];
    for (key, hash, all) in cases {
        assert_eq!(p.key_hash(key), hash, "{key}");
        assert_eq!(owner(&p, key, &[true; 3]), Some(all), "{key}");
    }
}
