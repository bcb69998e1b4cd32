#!/usr/bin/env python3
"""Reference vectors for protocol/src/placement/tests/vectors.rs.

Written from the clients' published code, independently of fdlab's Rust, with
the Python 3 standard library only (zlib, hashlib). Run it and compare with
the constants in vectors.rs:  python3 reference_vectors.py
"""
import hashlib
import zlib


def i32(x):
    """C#/Java int: 32-bit two's complement wrap."""
    x &= 0xFFFFFFFF
    return x - (1 << 32) if x & 0x80000000 else x


def utf16_units(s):
    b = s.encode("utf-16-le")
    return [b[i] | (b[i + 1] << 8) for i in range(0, len(b), 2)]


def old_compat(s):
    # SockIOPool.cs origCompatHashingAlg: hash = (hash * 33) + cArr[i]
    h = 0
    for c in utf16_units(s):
        h = i32(h * 33 + c)
    return h


def new_compat(s):
    # SockIOPool.cs newCompatHashingAlg: (crc >> 16) & 0x7fff over UTF-8
    return (zlib.crc32(s.encode("utf-8")) >> 16) & 0x7FFF


def java_hash(s):
    # java.lang.String.hashCode
    h = 0
    for c in utf16_units(s):
        h = i32(31 * h + c)
    return h


def get_sock(key, buckets, live, H, failover=True):
    # SockIOPool.cs getSock: while (tries++ <= count) ...
    count = len(buckets)
    hv = H(key)
    tries = 0
    path = []
    while tries <= count:
        tries += 1
        # C# %: the remainder takes the sign of hv (truncated division)
        bucket = abs(hv) % count * (-1 if hv < 0 else 1)
        if bucket < 0:
            bucket += count
        server = buckets[bucket]
        path.append(server)
        if live[server]:
            return server, path
        if not failover:
            return None, path
        hv = i32(hv + H("" + str(tries) + key))
    return None, path


def cmemcache_hash(b):
    # memcache.py 1.59 cmemcache_hash
    return (((zlib.crc32(b) & 0xFFFFFFFF) >> 16) & 0x7FFF) or 1


def get_server(key, buckets, live):
    # memcache.py 1.59 Client._get_server, _SERVER_RETRIES = 10
    serverhash = cmemcache_hash(key.encode("utf8"))
    for i in range(10):
        server = buckets[serverhash % len(buckets)]
        if live[server]:
            return server
        serverhash = cmemcache_hash((str(serverhash) + str(i)).encode("ascii"))
    return None


def ketama_points(text):
    d = hashlib.md5(text.encode()).digest()
    return [int.from_bytes(d[4 * h:4 * h + 4], "little") for h in range(4)]


def ketama_ring(names):
    # equal weights: 40 digests of "name-k", 4 points each (libketama)
    ring = []
    for s, name in enumerate(names):
        for k in range(40):
            for p in ketama_points("%s-%d" % (name, k)):
                ring.append((p, s))
    ring.sort()
    return ring


def ketama_owner(ring, key):
    h = ketama_points(key)[0]  # ketama_hashi
    for p, s in ring:
        if p >= h:
            return s
    return ring[0][1]


def twemproxy_fnv1a_64(b):
    # nc_fnv.c hash_fnv1a_64 with signed char (x86)
    h = 0xCBF29CE484222325 & 0xFFFFFFFF
    for byte in b:
        val = byte if byte < 0x80 else (byte - 256) & 0xFFFFFFFF
        h = ((h ^ val) * (0x100000001B3 & 0xFFFFFFFF)) & 0xFFFFFFFF
    return h


def fnv1a64(b):
    h = 0xCBF29CE484222325
    for byte in b:
        h = ((h ^ byte) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


def fmix64(k):
    m = 0xFFFFFFFFFFFFFFFF
    k ^= k >> 33
    k = (k * 0xFF51AFD7ED558CCD) & m
    k ^= k >> 33
    k = (k * 0xC4CEB9FE1A85EC53) & m
    k ^= k >> 33
    return k


KEYS = ["foo", "Users.Profile.42", "key:1234", "clé", "Users.Profile.4242", "session:abcdefgh"]

print("== SockIOPool, weights {5, 2}: buckets A A A A A B B")
BUCKETS = [0] * 5 + [1] * 2
for key in KEYS:
    print(repr(key), "old", old_compat(key), "new", new_compat(key), "java", java_hash(key))
    for name, H in (("old", old_compat), ("new", new_compat), ("java", java_hash)):
        for live in ([True, True], [False, True], [True, False]):
            server, path = get_sock(key, BUCKETS, live, H)
            print("  ", name, "live", live, "->", server, "path", path)

print("== python-memcached, weights [2, 1, 1]: buckets A A B C")
PB = [0, 0, 1, 2]
for key in KEYS:
    print(repr(key), "hash", cmemcache_hash(key.encode()),
          "all", get_server(key, PB, [True] * 3),
          "A dead", get_server(key, PB, [False, True, True]),
          "B dead", get_server(key, PB, [True, False, True]))

print("== libketama")
print("points of 127.0.0.1:11211-0", ketama_points("127.0.0.1:11211-0"))
NAMES = ["127.0.0.1:11211", "127.0.0.1:11212", "127.0.0.1:11213"]
ring = ketama_ring(NAMES)
ring_less_1 = ketama_ring([NAMES[0], NAMES[2]])
for key in KEYS:
    o = ketama_owner(ring, key)
    d = ketama_owner(ring_less_1, key)
    print(repr(key), "hash", ketama_points(key)[0], "owner", o,
          "11212 dead", [0, 2][d])

print("== twemproxy fnv1a_64, modula weights [1, 1, 1]")
for key in KEYS:
    h = twemproxy_fnv1a_64(key.encode())
    print(repr(key), "hash", h, "all", h % 3, "B dead", [0, 2][h % 2])

print("== rendezvous")
for key in KEYS:
    kh = fnv1a64(key.encode())
    scores = [fmix64(fnv1a64(n.encode()) ^ kh) for n in NAMES]
    print(repr(key), "hash", kh, "owner", scores.index(max(scores)))
