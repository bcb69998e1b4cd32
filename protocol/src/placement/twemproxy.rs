//! What twemproxy (nutcracker) does to a pool's server list before it
//! places a key: the name each server is known by, the order it keeps them
//! in, and the key hash the pool is configured with (twitter/twemproxy,
//! tag 0.5.0, the version Debian ships as `nutcracker` 0.5.0+dfsg).
//!
//! - **Names** (`src/nc_conf.c` `conf_add_server`, lines 1535-1660): a
//!   server line is `host:port:weight [name]`. The name is the one given;
//!   without one it is `host` when the port is 11211 ("to maintain backward
//!   compatibility with libmemcached, we don't include the port as the part
//!   of the input string to the consistent hashing algorithm, when it is
//!   equal to 11211", `CONF_DEFAULT_KETAMA_PORT`), else `host:port`. ketama
//!   hashes `"{name}-{k}"` (`src/hashkit/nc_ketama.c` `ketama_update`, line
//!   178).
//! - **Order** (`src/nc_conf.c` `conf_validate_server`, line 1185):
//!   `array_sort(&cp->server, conf_server_name_cmp)` sorts every pool's
//!   servers by name with `string_compare` (`src/nc_string.c`, lines
//!   102-109): a shorter name first, names of one length bytewise. `modula`
//!   lists the servers in that order (`src/hashkit/nc_modula.c` line 29,
//!   `modula_update`), so the order of the configuration file does not
//!   matter, and two twemproxy instances with one pool in different orders
//!   place every key alike.
//! - **Key hash** (`hash:`, default `fnv1a_64`, `src/nc_conf.h`
//!   line 44 `CONF_DEFAULT_HASH`): [`TwemproxyHash`].

use std::fmt;

use super::hash::{ketama_key_hash, twemproxy_fnv1a_64};
use super::Server;

/// The port twemproxy leaves out of an unnamed server's name
/// (`CONF_DEFAULT_KETAMA_PORT`, `src/nc_conf.h` line 56; `src/nc_conf.c`
/// line 1643).
pub const DEFAULT_KETAMA_PORT: &str = "11211";

/// A pool's `hash:` (the two fdlab reproduces).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum TwemproxyHash {
    /// `fnv1a_64`, twemproxy's default: [`twemproxy_fnv1a_64`].
    #[default]
    Fnv1a64,
    /// `md5`: `src/hashkit/nc_md5.c` `hash_md5` (lines 311-321), the first
    /// four bytes of the key's MD5 little-endian, libketama's `ketama_hashi`.
    Md5,
}

impl TwemproxyHash {
    pub const ALL: [TwemproxyHash; 2] = [TwemproxyHash::Fnv1a64, TwemproxyHash::Md5];

    /// The name in a `nutcracker.yml`: `fnv1a_64`, `md5`.
    pub fn name(self) -> &'static str {
        match self {
            TwemproxyHash::Fnv1a64 => "fnv1a_64",
            TwemproxyHash::Md5 => "md5",
        }
    }

    pub fn from_name(name: &str) -> Option<TwemproxyHash> {
        TwemproxyHash::ALL.into_iter().find(|h| h.name() == name)
    }

    /// The key's hash.
    pub fn hash(self, key: &[u8]) -> u32 {
        match self {
            TwemproxyHash::Fnv1a64 => twemproxy_fnv1a_64(key),
            TwemproxyHash::Md5 => ketama_key_hash(key),
        }
    }
}

impl fmt::Display for TwemproxyHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The name twemproxy knows `server` by: its own name if it has one, else
/// `host` on port 11211, else `host:port`.
pub fn name(server: &Server) -> String {
    if let Some(label) = &server.label {
        return label.clone();
    }
    match server.name.rsplit_once(':') {
        Some((host, DEFAULT_KETAMA_PORT)) => host.to_string(),
        _ => server.name.clone(),
    }
}

/// The servers' indices in twemproxy's order: by name, a shorter name
/// first, names of one length bytewise. Two servers of one name are refused
/// by twemproxy (`conf_validate_server`) and by fdlab ([`check_names`]).
pub fn order(servers: &[Server]) -> Vec<usize> {
    let names: Vec<String> = servers.iter().map(name).collect();
    let mut order: Vec<usize> = (0..servers.len()).collect();
    order.sort_by(|&a, &b| {
        let (x, y) = (names[a].as_bytes(), names[b].as_bytes());
        x.len().cmp(&y.len()).then(x.cmp(y))
    });
    order
}

/// twemproxy refuses a pool with two servers of one name ("has servers with
/// same name"): `host:11211` and a server named `host` are one name.
pub fn check_names(servers: &[Server]) -> Result<(), String> {
    let mut names: Vec<(String, usize)> = servers
        .iter()
        .enumerate()
        .map(|(i, s)| (name(s), i))
        .collect();
    names.sort();
    for pair in names.windows(2) {
        if pair[0].0 == pair[1].0 {
            return Err(format!(
                "servers {} and {} are both named `{}` in twemproxy (a server on port \
                 {DEFAULT_KETAMA_PORT} without a name is known by its host)",
                pair[0].1 + 1,
                pair[1].1 + 1,
                pair[0].0
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn server(name: &str, label: Option<&str>) -> Server {
        Server {
            name: name.into(),
            weight: 1,
            label: label.map(str::to_string),
        }
    }

    #[test]
    fn names_follow_conf_add_server() {
        assert_eq!(name(&server("10.0.0.1:11211", None)), "10.0.0.1");
        assert_eq!(name(&server("10.0.0.1:11212", None)), "10.0.0.1:11212");
        assert_eq!(name(&server("10.0.0.1:11211", Some("s1"))), "s1");
    }

    #[test]
    fn the_order_is_shorter_names_first_then_bytewise() {
        let servers = [
            server("b:1", None),
            server("a:11211", None),
            server("aa:2", None),
            server("z:9", Some("server-1")),
            server("c:1", None),
        ];
        // Names: b:1, a, aa:2, server-1, c:1.
        assert_eq!(order(&servers), [1, 0, 4, 2, 3]);
        assert!(check_names(&servers).is_ok());
        let clash = [server("h:11211", None), server("x:1", Some("h"))];
        assert!(check_names(&clash).unwrap_err().contains("both named `h`"));
    }

    #[test]
    fn md5_is_libketamas_key_hash() {
        assert_eq!(TwemproxyHash::Md5.hash(b"foo"), ketama_key_hash(b"foo"));
        assert_eq!(
            TwemproxyHash::from_name("fnv1a_64"),
            Some(TwemproxyHash::Fnv1a64)
        );
    }
}
