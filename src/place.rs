//! `fdlab place`: which server each key goes to, under each distribution, with
//! no server dead and with the given servers dead (docs/placement.md).
//!
//! Output: CSV on standard output, header `key,distribution,dead,server`, one
//! row per key, distribution and dead set, in that nesting: for each
//! distribution (in `--distribution` order), for each dead set (`none` first,
//! then each `--dead` in order), every key in input order. `dead` is `none`
//! or the dead servers joined by `+` in server-list order; `server` is the
//! owner's `host:port`, or `none` when the client fails the request. Every
//! input is checked before anything is written: an error prints one line and
//! no CSV. Rows are written as they are computed (a buffered writer), so
//! the memory held is that of the keys, whatever the table's size.

use std::collections::BTreeMap;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

use clap::Args;
use fdlab_protocol::placement::{
    check_key, DistributionKind, NamespaceGroup, Placement, PlacementConfig, Server, SockHash,
    TwemproxyHash,
};

use crate::nutcracker::{self, Pool};
use fdlab_scenarios::read_limit::{read_file_limited, read_limited, TEXT_FILE_LIMIT};

/// What the `dead` column says when no server is dead, and the `server`
/// column when the request fails.
const NONE: &str = "none";
/// Joins the servers of a dead set in the `dead` column.
const DEAD_SEPARATOR: &str = "+";
/// A server's weight when none is given.
const DEFAULT_WEIGHT: u32 = 1;
/// The name of standard input in errors.
const STDIN_NAME: &str = "standard input";
/// Bytes of CSV gathered before each write to standard output: few system
/// calls for a table of millions of rows, and a bounded memory.
const OUTPUT_BUFFER_BYTES: usize = 1 << 16;

#[derive(Args)]
pub struct PlaceArgs {
    /// The servers in the client's order, as `host:port[=weight],...`
    /// (weight 1 if not given).
    #[arg(long, value_name = "HOST:PORT[=WEIGHT],...")]
    servers: Option<String>,
    /// The servers from a file: one `host:port [weight]` or twemproxy's
    /// `host:port:weight [name]` per line (`#` starts a comment), or a
    /// twemproxy `nutcracker.yml`: its pool's servers, `hash:` and
    /// `distribution:`.
    #[arg(long, value_name = "FILE")]
    servers_file: Option<PathBuf>,
    /// The pool of a `nutcracker.yml` --servers-file with several.
    #[arg(long, value_name = "NAME")]
    pool: Option<String>,
    /// twemproxy's key hash, for modulo-eject and twemproxy-ketama: fnv1a_64
    /// or md5 (default: the pool's `hash:`, else twemproxy's fnv1a_64).
    #[arg(long, value_name = "NAME")]
    twemproxy_hash: Option<String>,
    /// The keys, one per line (bytes, checked as memcached keys); without it,
    /// or with `-`, standard input.
    #[arg(long, value_name = "FILE")]
    keys: Option<PathBuf>,
    /// Servers to mark dead, as `host:port,...`; repeat for more sets. Rows
    /// with no server dead always come first.
    #[arg(long, value_name = "HOST:PORT,...")]
    dead: Vec<String>,
    /// The distributions, comma-separated (default: the pool's of a
    /// nutcracker.yml, else all seven: sockiopool, namespace,
    /// modulo-failover, modulo-eject, ketama, twemproxy-ketama, rendezvous).
    #[arg(long, value_name = "NAME,...")]
    distribution: Option<String>,
    /// SockIOPool's hash, for sockiopool and namespace: old-compat,
    /// new-compat or native (Java's String.hashCode).
    #[arg(long, value_name = "NAME", default_value = "new-compat")]
    hash: String,
    /// sockiopool and namespace: a dead server's keys fail instead of being
    /// rehashed onto another server.
    #[arg(long)]
    no_failover: bool,
    /// A namespace group, as `PREFIX=host:port,...`: keys `PREFIX.rest` go to
    /// these servers under `namespace`. Repeat for more groups.
    #[arg(long, value_name = "PREFIX=HOST:PORT,...")]
    namespace: Vec<String>,
}

/// One set of dead servers: its label and live flags.
struct DeadSet {
    label: String,
    live: Vec<bool>,
}

pub fn run(args: &PlaceArgs) -> Result<(), String> {
    let (servers, source, pool) = read_servers(args)?;
    let kinds = match (
        &args.distribution,
        pool.as_ref().and_then(|p| p.distribution),
    ) {
        (None, Some(kind)) => vec![kind],
        (list, _) => parse_distributions(list.as_deref())?,
    };
    let twemproxy_hash = match &args.twemproxy_hash {
        Some(name) => TwemproxyHash::from_name(name).ok_or_else(|| {
            format!(
                "--twemproxy-hash: `{name}` is not one of {}",
                TwemproxyHash::ALL.map(TwemproxyHash::name).join(", ")
            )
        })?,
        None => pool.as_ref().and_then(|p| p.hash).unwrap_or_default(),
    };
    let hash = SockHash::from_name(&args.hash).ok_or_else(|| {
        format!(
            "--hash: `{}` is not one of {}",
            args.hash,
            SockHash::ALL.map(SockHash::name).join(", ")
        )
    })?;
    let dead_sets = parse_dead_sets(&args.dead, &servers)?;
    let groups = parse_groups(&args.namespace, &servers)?;
    let mut placements = Vec::with_capacity(kinds.len());
    for kind in kinds {
        let config = PlacementConfig {
            hash,
            twemproxy_hash,
            failover: !args.no_failover,
            groups: groups.clone(),
            ..PlacementConfig::defaults(kind)
        };
        let placement = Placement::new(&servers, &config).map_err(|e| {
            let from = if kind == DistributionKind::Namespace && e.0.starts_with("namespace") {
                "--namespace"
            } else {
                &source
            };
            format!("{from}: {e}")
        })?;
        placements.push(placement);
    }
    let (keys_name, key_bytes) = read_keys(args.keys.as_deref())?;
    let keys = parse_keys(&keys_name, &key_bytes)?;
    // Every input was checked above: from here on rows go out as they are
    // computed, so memory stays that of the keys whatever the table's size
    // (a 62 MB key file makes 37.8 M rows, 2 GB of CSV).
    let out = io::BufWriter::with_capacity(OUTPUT_BUFFER_BYTES, io::stdout().lock());
    match write_csv(&placements, &dead_sets, &keys, out) {
        Ok(()) => Ok(()),
        // A closed pipe (`| head`) is the reader's choice, not an error.
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err(format!("standard output: {e}")),
    }
}

/// The servers from `--servers` or `--servers-file`, how to name their
/// source in an error, and the `nutcracker.yml` pool they came from.
fn read_servers(args: &PlaceArgs) -> Result<(Vec<Server>, String, Option<Pool>), String> {
    if args.pool.is_some() && args.servers_file.is_none() {
        return Err("--pool: names a pool of a nutcracker.yml --servers-file".into());
    }
    match (&args.servers, &args.servers_file) {
        (Some(_), Some(_)) => Err("give --servers or --servers-file, not both".into()),
        (None, None) => {
            Err("no servers: give --servers host:port,... or --servers-file FILE".into())
        }
        (Some(list), None) => {
            let servers = parse_server_list(list)?;
            Ok((servers, "--servers".into(), None))
        }
        (None, Some(path)) => {
            let name = path.display().to_string();
            let bytes =
                read_file_limited(path, TEXT_FILE_LIMIT).map_err(|e| format!("{name}: {e}"))?;
            let text = std::str::from_utf8(&bytes).map_err(|e| {
                let line = bytes[..e.valid_up_to()]
                    .iter()
                    .filter(|&&b| b == b'\n')
                    .count()
                    + 1;
                format!("{name}:{line}: not valid UTF-8")
            })?;
            if nutcracker::is_yaml(text) {
                let pool = nutcracker::pool(&name, text, args.pool.as_deref())?;
                for s in &pool.servers {
                    check_host_port(&s.name).map_err(|e| format!("{name}: {e}"))?;
                }
                let source = format!("{name} (pool `{}`)", pool.name);
                return Ok((pool.servers.clone(), source, Some(pool)));
            }
            if args.pool.is_some() {
                return Err(format!("--pool: {name} is not a nutcracker.yml"));
            }
            Ok((parse_server_file(&name, text)?, name, None))
        }
    }
}

/// `host:port[=weight],...`.
fn parse_server_list(list: &str) -> Result<Vec<Server>, String> {
    if list.trim().is_empty() {
        return Err("--servers: no servers".into());
    }
    let mut servers = Vec::new();
    let mut first_at: BTreeMap<String, usize> = BTreeMap::new();
    for (i, entry) in list.split(',').enumerate() {
        let at = |e: String| format!("--servers: entry {} `{entry}`: {e}", i + 1);
        if entry.trim().is_empty() {
            return Err(format!("--servers: entry {} is empty", i + 1));
        }
        let (name, weight) = match entry.split_once('=') {
            Some((name, weight)) => (name, parse_weight(weight).map_err(at)?),
            None => (entry, DEFAULT_WEIGHT),
        };
        check_host_port(name).map_err(|e| format!("--servers: entry {}: {e}", i + 1))?;
        if let Some(first) = first_at.insert(name.to_string(), i + 1) {
            return Err(format!(
                "--servers: `{name}` is listed twice (entries {first} and {})",
                i + 1
            ));
        }
        servers.push(Server::new(name, weight));
    }
    Ok(servers)
}

/// One `host:port [weight]` per line, `#` comments, blank lines skipped.
fn parse_server_file(name: &str, text: &str) -> Result<Vec<Server>, String> {
    let mut servers = Vec::new();
    let mut first_at: BTreeMap<String, usize> = BTreeMap::new();
    for (i, line) in text.lines().enumerate() {
        let number = i + 1;
        let at = |e: String| format!("{name}:{number}: {e}");
        let content = line.split('#').next().unwrap_or("");
        if let Some(server) = nutcracker::server_line(content) {
            let server = server.map_err(at)?;
            check_host_port(&server.name).map_err(at)?;
            if let Some(first) = first_at.insert(server.name.clone(), number) {
                return Err(at(format!(
                    "`{}` is listed twice (first on line {first})",
                    server.name
                )));
            }
            servers.push(server);
            continue;
        }
        let fields: Vec<&str> = content.split_whitespace().collect();
        let (host_port, weight) = match fields.as_slice() {
            [] => continue,
            [host_port] => (*host_port, DEFAULT_WEIGHT),
            [host_port, weight] => (*host_port, parse_weight(weight).map_err(at)?),
            _ => {
                return Err(at(format!(
                    "`{}`: expected `host:port [weight]`",
                    content.trim()
                )))
            }
        };
        check_host_port(host_port).map_err(at)?;
        if let Some(first) = first_at.insert(host_port.to_string(), number) {
            return Err(at(format!(
                "`{host_port}` is listed twice (first on line {first})"
            )));
        }
        servers.push(Server::new(host_port, weight));
    }
    if servers.is_empty() {
        return Err(format!(
            "{name}: no servers (only comments and blank lines)"
        ));
    }
    Ok(servers)
}

/// A weight: a whole number from 1.
fn parse_weight(text: &str) -> Result<u32, String> {
    match text.trim().parse::<i64>() {
        Ok(w) if w < 0 => Err(format!(
            "weight {w} is negative; weights are whole numbers from 1"
        )),
        Ok(0) => Err("weight 0; weights are whole numbers from 1".into()),
        Ok(w) => u32::try_from(w).map_err(|_| format!("weight {w} is too large")),
        Err(_) => Err(format!(
            "weight `{text}` is not a number; weights are whole numbers from 1"
        )),
    }
}

/// `host:port`: a host with no whitespace, control character, `,`, `=`,
/// `+` or `#`, and a port from 1 to 65535. The error names `name`.
fn check_host_port(name: &str) -> Result<(), String> {
    let Some((host, port)) = name.rsplit_once(':') else {
        return Err(format!("`{name}` is not host:port"));
    };
    if host.is_empty() {
        return Err(format!("`{name}` has no host before the `:`"));
    }
    if let Some(c) = host
        .chars()
        .find(|&c| c.is_whitespace() || c.is_control() || ",=+#".contains(c))
    {
        return Err(format!("`{name}` has {c:?} in its host"));
    }
    match port.parse::<u16>() {
        Ok(p) if p >= 1 => Ok(()),
        _ => Err(format!(
            "`{name}`: the port `{port}` is not a port number (1 to 65535)"
        )),
    }
}

/// `--distribution NAME,...`: every name known, none twice.
fn parse_distributions(list: Option<&str>) -> Result<Vec<DistributionKind>, String> {
    let Some(list) = list else {
        return Ok(DistributionKind::ALL.to_vec());
    };
    let known = || DistributionKind::ALL.map(DistributionKind::name).join(", ");
    let mut kinds = Vec::new();
    for name in list.split(',') {
        let kind = DistributionKind::from_name(name.trim())
            .ok_or_else(|| format!("--distribution: `{name}` is not one of {}", known()))?;
        if kinds.contains(&kind) {
            return Err(format!("--distribution: `{name}` is named twice"));
        }
        kinds.push(kind);
    }
    Ok(kinds)
}

/// The index of each server, by name.
fn index_by_name(servers: &[Server]) -> BTreeMap<&str, usize> {
    servers
        .iter()
        .enumerate()
        .map(|(i, s)| (s.name.as_str(), i))
        .collect()
}

/// Server names `host:port,...` as indices, each once and each a server.
fn parse_names(what: &str, list: &str, servers: &[Server]) -> Result<Vec<usize>, String> {
    let index = index_by_name(servers);
    let mut chosen = Vec::new();
    for name in list.split(',') {
        let name = name.trim();
        let &i = index
            .get(name)
            .ok_or_else(|| format!("{what}: `{name}` is not one of the servers"))?;
        if chosen.contains(&i) {
            return Err(format!("{what}: `{name}` is named twice"));
        }
        chosen.push(i);
    }
    Ok(chosen)
}

/// No server dead, then each `--dead` set.
fn parse_dead_sets(dead: &[String], servers: &[Server]) -> Result<Vec<DeadSet>, String> {
    let mut sets = vec![DeadSet {
        label: NONE.into(),
        live: vec![true; servers.len()],
    }];
    for list in dead {
        let what = format!("--dead `{list}`");
        let mut live = vec![true; servers.len()];
        for i in parse_names(&what, list, servers)? {
            live[i] = false;
        }
        let label = servers
            .iter()
            .zip(&live)
            .filter(|&(_, &l)| !l)
            .map(|(s, _)| s.name.as_str())
            .collect::<Vec<_>>()
            .join(DEAD_SEPARATOR);
        if sets.iter().any(|s| s.label == label) {
            return Err(format!("{what}: that set is given twice"));
        }
        sets.push(DeadSet { label, live });
    }
    Ok(sets)
}

/// `--namespace PREFIX=host:port,...`.
fn parse_groups(groups: &[String], servers: &[Server]) -> Result<Vec<NamespaceGroup>, String> {
    groups
        .iter()
        .map(|spec| {
            let what = format!("--namespace `{spec}`");
            let (prefix, list) = spec
                .split_once('=')
                .ok_or_else(|| format!("{what}: expected PREFIX=host:port,..."))?;
            Ok(NamespaceGroup {
                prefix: prefix.to_string(),
                servers: parse_names(&what, list, servers)?,
            })
        })
        .collect()
}

/// The keys' source name and bytes.
fn read_keys(path: Option<&Path>) -> Result<(String, Vec<u8>), String> {
    match path {
        Some(p) if p != Path::new("-") => {
            let name = p.display().to_string();
            let bytes =
                read_file_limited(p, TEXT_FILE_LIMIT).map_err(|e| format!("{name}: {e}"))?;
            Ok((name, bytes))
        }
        _ => {
            let bytes = read_limited(io::stdin().lock().by_ref(), TEXT_FILE_LIMIT)
                .map_err(|e| format!("{STDIN_NAME}: {e}"))?;
            Ok((STDIN_NAME.into(), bytes))
        }
    }
}

/// One key per line (`\n`, or `\r\n`); each a memcached key.
fn parse_keys<'a>(name: &str, bytes: &'a [u8]) -> Result<Vec<&'a str>, String> {
    let body = bytes.strip_suffix(b"\n").unwrap_or(bytes);
    if body.is_empty() {
        return Err(format!("{name}: no keys"));
    }
    body.split(|&b| b == b'\n')
        .enumerate()
        .map(|(i, line)| {
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            check_key(line).map_err(|e| format!("{name}:{}: key {e}", i + 1))
        })
        .collect()
}

/// The table, row by row into `out`.
fn write_csv(
    placements: &[Placement],
    dead_sets: &[DeadSet],
    keys: &[&str],
    out: impl Write,
) -> io::Result<()> {
    let mut out = csv::Writer::from_writer(out);
    out.write_record(["key", "distribution", "dead", "server"])
        .map_err(into_io)?;
    let mut hashes = Vec::with_capacity(keys.len());
    for placement in placements {
        let kind = placement.config().kind.name();
        hashes.clear();
        hashes.extend(keys.iter().map(|k| placement.key_hash(k)));
        for set in dead_sets {
            for (key, &hash) in keys.iter().zip(&hashes) {
                let server = placement
                    .owner(key, hash, &set.live)
                    .map_or(NONE, |i| placement.servers()[i].name.as_str());
                out.write_record([*key, kind, set.label.as_str(), server])
                    .map_err(into_io)?;
            }
        }
    }
    out.flush()
}

/// The I/O error under a CSV writer's error, so that a closed pipe is
/// still seen as one (writing rows of four fields fails in no other way).
fn into_io(e: csv::Error) -> io::Error {
    match e.into_kind() {
        csv::ErrorKind::Io(e) => e,
        other => io::Error::other(format!("{other:?}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weights_are_whole_numbers_from_one() {
        assert_eq!(parse_weight("3"), Ok(3));
        assert!(parse_weight("0").unwrap_err().contains("weight 0"));
        assert!(parse_weight("-2").unwrap_err().contains("negative"));
        assert!(parse_weight("x").unwrap_err().contains("not a number"));
        assert!(parse_weight("1.5").unwrap_err().contains("not a number"));
        assert!(parse_weight("99999999999")
            .unwrap_err()
            .contains("too large"));
    }

    #[test]
    fn a_server_is_host_colon_port() {
        assert!(check_host_port("10.0.0.1:11211").is_ok());
        assert!(check_host_port("[::1]:11211").is_ok());
        assert!(check_host_port("cache1")
            .unwrap_err()
            .contains("not host:port"));
        assert!(check_host_port(":1").unwrap_err().contains("no host"));
        assert!(check_host_port("a b:1").unwrap_err().contains("' '"));
        assert!(check_host_port("a:0").unwrap_err().contains("port"));
        assert!(check_host_port("a:x").unwrap_err().contains("port"));
    }

    #[test]
    fn a_server_file_skips_comments_and_names_its_lines() {
        let s = parse_server_file("f", "# list\n a:1 5 # big\n\nb:2\n").unwrap();
        assert_eq!(s[0].weight, 5);
        assert_eq!(s[1].name, "b:2");
        let e = parse_server_file("f", "a:1\nb:2 1 x\n").unwrap_err();
        assert!(e.starts_with("f:2: "), "{e}");
        let e = parse_server_file("f", "a:1\na:1\n").unwrap_err();
        assert!(
            e.contains("f:2: `a:1` is listed twice (first on line 1)"),
            "{e}"
        );
    }

    #[test]
    fn keys_are_lines_and_a_bad_one_is_named_by_its_line() {
        assert_eq!(parse_keys("k", b"a\r\nb\n").unwrap(), ["a", "b"]);
        let e = parse_keys("k", b"a\nb c\n").unwrap_err();
        assert_eq!(e, "k:2: key contains a space at byte 2");
        assert_eq!(parse_keys("k", b"a\n\nb").unwrap_err(), "k:2: key is empty");
        assert_eq!(parse_keys("k", b"").unwrap_err(), "k: no keys");
    }
}
