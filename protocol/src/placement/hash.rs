//! The key hashes of the memcached clients, bit for bit.
//!
//! Each function names the client source it reproduces. None allocates: the
//! failover rehashes of SockIOPool (`"" + tries + key`) and python-memcached
//! (`str(hash) + str(i)`) hash their decimal prefix from a stack buffer and
//! then continue over the key.

use md5::{Digest, Md5};

/// The longest decimal form of a `u32` ("4294967295"), bytes.
const U32_DECIMAL_DIGITS: usize = 10;

/// `n` in decimal, into `buf`; returns the digits.
fn decimal(n: u32, buf: &mut [u8; U32_DECIMAL_DIGITS]) -> &[u8] {
    let mut at = buf.len();
    let mut rest = n;
    loop {
        at -= 1;
        buf[at] = b'0' + (rest % 10) as u8;
        rest /= 10;
        if rest == 0 {
            break;
        }
    }
    &buf[at..]
}

/// Multiplier of SockIOPool's original hash, `hash = (hash * 33) + c`
/// (memcacheddotnet `SockIOPool.cs` `origCompatHashingAlg`; Java Whalin
/// `SockIOPool.java` `origCompatHashingAlg`).
const OLD_COMPAT_MULTIPLIER: i32 = 33;

/// Multiplier of Java's `String.hashCode`, `s[0]*31^(n-1) + ... + s[n-1]`
/// (the Java Language Specification fixes it, so it is the same on every JVM).
const JAVA_STRING_MULTIPLIER: i32 = 31;

/// The polynomial string hash `hash = hash * multiplier + c` over UTF-16
/// code units, in 32-bit signed wrapping arithmetic (C# and Java `int`
/// overflow wraps, unchecked), starting from `seed` (0 for a whole string).
fn utf16_polynomial(seed: i32, multiplier: i32, units: impl Iterator<Item = u16>) -> i32 {
    units.fold(seed, |hash, unit| {
        hash.wrapping_mul(multiplier).wrapping_add(i32::from(unit))
    })
}

/// SockIOPool's `old-compat` hash of `prefix` (ASCII digits) followed by
/// `key`: `hash = (hash * 33) + c` over the string's UTF-16 code units
/// (`key.ToCharArray()` / `key.toCharArray()`), signed 32-bit wrapping.
pub fn old_compat(prefix: &[u8], key: &str) -> i32 {
    let seed = utf16_polynomial(
        0,
        OLD_COMPAT_MULTIPLIER,
        prefix.iter().map(|&b| u16::from(b)),
    );
    utf16_polynomial(seed, OLD_COMPAT_MULTIPLIER, key.encode_utf16())
}

/// fdlab's stand-in for SockIOPool's `native` hash (`key.GetHashCode()` in
/// C#, `key.hashCode()` in Java): Java's `String.hashCode`, exact for the Java
/// Whalin client. .NET's `String.GetHashCode` is not reproducible: .NET Core
/// seeds it at random in every process (two clients of one cluster disagree
/// on every key) and .NET Framework's differs between 32- and 64-bit
/// runtimes; Java's is fixed by the language specification.
pub fn java_string_hash(prefix: &[u8], key: &str) -> i32 {
    let seed = utf16_polynomial(
        0,
        JAVA_STRING_MULTIPLIER,
        prefix.iter().map(|&b| u16::from(b)),
    );
    utf16_polynomial(seed, JAVA_STRING_MULTIPLIER, key.encode_utf16())
}

/// The 15 bits `(crc32 >> 16) & 0x7fff` that SockIOPool's `new-compat` and
/// python-memcached's `cmemcache_hash` keep of a CRC-32.
const CRC_SHIFT: u32 = 16;
const CRC_KEPT_BITS: u32 = 0x7fff;

/// SockIOPool's `new-compat` hash of `prefix` followed by `key`:
/// `(crc32(utf-8 bytes) >> 16) & 0x7fff` (memcacheddotnet `SockIOPool.cs`
/// `newCompatHashingAlg`: `CRCTool` CRC32 = the IEEE CRC-32 of zlib, over
/// `UTF8Encoding.UTF8.GetBytes(key)`; the C# `int` shift is arithmetic, but the
/// mask keeps bits 16..30 only, so the sign does not matter). The Java Whalin
/// client hashes `key.getBytes()` in the platform charset: the same bytes
/// for ASCII keys, and for all keys where that charset is UTF-8.
pub fn new_compat(prefix: &[u8], key: &str) -> i32 {
    let mut crc = crc32fast::Hasher::new();
    crc.update(prefix);
    crc.update(key.as_bytes());
    ((crc.finalize() >> CRC_SHIFT) & CRC_KEPT_BITS) as i32
}

/// The SockIOPool hash of `key` with the failover prefix `tries` (the decimal
/// of `tries`, as `"" + tries + key`), or of `key` alone.
pub fn sock_hash(hash: super::SockHash, tries: Option<u32>, key: &str) -> i32 {
    let mut buf = [0u8; U32_DECIMAL_DIGITS];
    let prefix: &[u8] = match tries {
        Some(t) => decimal(t, &mut buf),
        None => &[],
    };
    match hash {
        super::SockHash::OldCompat => old_compat(prefix, key),
        super::SockHash::NewCompat => new_compat(prefix, key),
        super::SockHash::Native => java_string_hash(prefix, key),
    }
}

/// python-memcached 1.59 `cmemcache_hash` (memcache.py):
/// `(((binascii.crc32(key) & 0xffffffff) >> 16) & 0x7fff) or 1`: a zero
/// becomes 1. Always in 1..=32767.
pub fn cmemcache_hash(bytes: &[u8]) -> u32 {
    let h = (crc32fast::hash(bytes) >> CRC_SHIFT) & CRC_KEPT_BITS;
    if h == 0 {
        1
    } else {
        h
    }
}

/// python-memcached's failover rehash, `serverHashFunction(str(serverhash) +
/// str(i))` (memcache.py `Client._get_server`): the decimal digits of the
/// previous hash, then those of the try number `i`. The key takes no part.
pub fn cmemcache_rehash(previous: u32, i: u32) -> u32 {
    let mut a = [0u8; U32_DECIMAL_DIGITS];
    let mut b = [0u8; U32_DECIMAL_DIGITS];
    let first = decimal(previous, &mut a);
    let second = decimal(i, &mut b);
    let mut text = [0u8; 2 * U32_DECIMAL_DIGITS];
    text[..first.len()].copy_from_slice(first);
    text[first.len()..first.len() + second.len()].copy_from_slice(second);
    cmemcache_hash(&text[..first.len() + second.len()])
}

/// twemproxy's `fnv1a_64` (src/hashkit/nc_fnv.c `hash_fnv1a_64`), its default
/// key hash (src/nc_conf.h `CONF_DEFAULT_HASH`). Despite its name it is a
/// 32-bit FNV-1a: the state is a `uint32_t` started at the low half of the
/// 64-bit offset basis and multiplied by the low half of the 64-bit prime.
/// Each byte is read as `(uint32_t)key[x]` from a `const char *`: on x86 and
/// x86-64, where `char` is signed, a byte of 0x80 or more is sign-extended
/// (0xe9 -> 0xffffffe9). fdlab follows x86; on ARM (unsigned `char`) keys
/// with non-ASCII bytes hash differently, ASCII keys the same.
pub fn twemproxy_fnv1a_64(bytes: &[u8]) -> u32 {
    /// `(uint32_t) FNV_64_INIT`, the low half of 0xcbf29ce484222325.
    const FNV_64_INIT_LOW: u32 = 0xcbf2_9ce4_8422_2325_u64 as u32;
    /// `(uint32_t) FNV_64_PRIME`, the low half of 0x100000001b3.
    const FNV_64_PRIME_LOW: u32 = 0x0100_0000_01b3_u64 as u32;
    bytes.iter().fold(FNV_64_INIT_LOW, |hash, &b| {
        let val = i32::from(b as i8) as u32; // signed char, sign-extended
        (hash ^ val).wrapping_mul(FNV_64_PRIME_LOW)
    })
}

/// The 64-bit FNV-1a (Fowler, Noll, Vo), byte by byte: fdlab's rendezvous
/// hash of keys and server names.
pub fn fnv1a_64(bytes: &[u8]) -> u64 {
    const OFFSET_BASIS: u64 = 0xcbf2_9ce4_8422_2325;
    const PRIME: u64 = 0x0100_0000_01b3;
    bytes.iter().fold(OFFSET_BASIS, |hash, &b| {
        (hash ^ u64::from(b)).wrapping_mul(PRIME)
    })
}

/// MurmurHash3's 64-bit finalizer `fmix64` (Austin Appleby): a bijection that
/// spreads every input bit over the output.
pub fn fmix64(mut k: u64) -> u64 {
    k ^= k >> 33;
    k = k.wrapping_mul(0xff51_afd7_ed55_8ccd);
    k ^= k >> 33;
    k = k.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    k ^= k >> 33;
    k
}

/// Points (u32) one MD5 digest gives a ketama ring.
pub const POINTS_PER_DIGEST: usize = 4;

/// The four ketama points of one MD5 digest of `text`: digest bytes
/// `[4h..4h+4]` read little-endian, h = 0..3 (libketama `ketama.c`
/// `ketama_create_continuum`; twemproxy `nc_ketama.c` `ketama_hash`).
pub fn ketama_points(text: &[u8]) -> [u32; POINTS_PER_DIGEST] {
    let digest = Md5::digest(text);
    std::array::from_fn(|h| {
        let at = h * 4;
        u32::from_le_bytes([digest[at], digest[at + 1], digest[at + 2], digest[at + 3]])
    })
}

/// libketama's key hash `ketama_hashi`: the first four bytes of the key's
/// MD5, little-endian (twemproxy with `hash: md5` gives the same).
pub fn ketama_key_hash(key: &[u8]) -> u32 {
    ketama_points(key)[0]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimal_writes_every_digit() {
        let mut buf = [0u8; U32_DECIMAL_DIGITS];
        assert_eq!(decimal(0, &mut buf), b"0");
        assert_eq!(decimal(7, &mut buf), b"7");
        assert_eq!(decimal(1234, &mut buf), b"1234");
        assert_eq!(decimal(u32::MAX, &mut buf), b"4294967295");
    }

    #[test]
    fn a_prefix_hashes_as_the_joined_string() {
        for key in ["abc", "Users.42", "é"] {
            let joined = format!("12{key}");
            assert_eq!(old_compat(b"12", key), old_compat(b"", &joined));
            assert_eq!(new_compat(b"12", key), new_compat(b"", &joined));
            assert_eq!(java_string_hash(b"12", key), java_string_hash(b"", &joined));
        }
    }

    #[test]
    fn java_string_hash_is_the_jvms() {
        // Values any JVM prints for "hello".hashCode() and "".hashCode().
        assert_eq!(java_string_hash(b"", "hello"), 99_162_322);
        assert_eq!(java_string_hash(b"", ""), 0);
        // A surrogate pair counts as two UTF-16 units: "😀" is \ud83d\ude00.
        assert_eq!(
            java_string_hash(b"", "😀"),
            0xd83d_i32.wrapping_mul(31).wrapping_add(0xde00)
        );
    }

    #[test]
    fn cmemcache_hash_is_never_zero() {
        assert!((1..=0x7fff).contains(&cmemcache_hash(b"")));
        assert_eq!(cmemcache_hash(b""), 1); // crc32("") = 0 -> "or 1"
    }

    #[test]
    fn twemproxy_fnv_sign_extends_high_bytes() {
        // One byte 0xe9: state ^ 0xffffffe9, not ^ 0x000000e9.
        let init = 0x8422_2325_u32;
        assert_eq!(
            twemproxy_fnv1a_64(&[0xe9]),
            (init ^ 0xffff_ffe9).wrapping_mul(0x1b3)
        );
        assert_eq!(twemproxy_fnv1a_64(b"a"), (init ^ 0x61).wrapping_mul(0x1b3));
    }

    #[test]
    fn fnv1a_64_matches_the_published_vectors() {
        // From the FNV reference test suite (isthe.com/chongo/tech/comp/fnv).
        assert_eq!(fnv1a_64(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a_64(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(fnv1a_64(b"foobar"), 0x8594_4171_f739_67e8);
    }
}
