//! twemproxy's own server lists for `fdlab place`: a server line
//! `host:port:weight [name]` (twemproxy `src/nc_conf.c` `conf_add_server`,
//! tag 0.5.0), and a pool of a `nutcracker.yml` (its `servers:`, `hash:` and
//! `distribution:`), so a user can hand fdlab the configuration their proxy
//! runs. The reader takes the subset of YAML that twemproxy's own
//! configurations use (its `conf/nutcracker.yml` and README): top-level pool
//! names ending in `:`, indented `key: value` lines, and `servers:` followed
//! by `- host:port:weight [name]` items, quoted or not. Anything else is an
//! error naming the file and line.

use fdlab_protocol::placement::{DistributionKind, Server, TwemproxyHash};

/// A pool of a `nutcracker.yml`, as `fdlab place` uses it.
#[derive(Debug, Default, PartialEq)]
pub struct Pool {
    pub name: String,
    pub servers: Vec<Server>,
    /// `hash:`, if given (twemproxy's default is `fnv1a_64`).
    pub hash: Option<TwemproxyHash>,
    /// `distribution:`, as fdlab's distribution, if given.
    pub distribution: Option<DistributionKind>,
}

/// Whether `text` reads as a `nutcracker.yml` (a line `name:` at the left
/// margin) rather than a plain server list.
pub fn is_yaml(text: &str) -> bool {
    text.lines()
        .map(|l| l.split('#').next().unwrap_or(""))
        .any(|l| !l.starts_with([' ', '\t', '-']) && l.trim_end().ends_with(':'))
}

/// A twemproxy server line `host:port:weight [name]`: `None` when `text`
/// is not of that shape (three `:`-separated parts whose last two are
/// numbers), else the server or what is wrong with it.
pub fn server_line(text: &str) -> Option<Result<Server, String>> {
    let mut fields = text.split_whitespace();
    let address = fields.next()?;
    let mut parts = address.rsplitn(3, ':');
    let (weight, port, host) = (parts.next()?, parts.next()?, parts.next()?);
    if !weight.chars().all(|c| c.is_ascii_digit()) || !port.chars().all(|c| c.is_ascii_digit()) {
        return None;
    }
    let label = fields.next().map(str::to_string);
    if let Some(extra) = fields.next() {
        return Some(Err(format!(
            "`{text}`: expected `host:port:weight [name]`, and `{extra}` follows the name"
        )));
    }
    Some(match weight.parse::<u32>() {
        Ok(0) | Err(_) => Err(format!(
            "`{address}`: the weight `{weight}` is not a whole number from 1"
        )),
        Ok(w) => Ok(Server {
            name: format!("{host}:{port}"),
            weight: w,
            label,
        }),
    })
}

/// The pool `wanted` of the `nutcracker.yml` `text` (file `file`), or its
/// only pool when `wanted` is `None`.
pub fn pool(file: &str, text: &str, wanted: Option<&str>) -> Result<Pool, String> {
    let mut pools: Vec<Pool> = Vec::new();
    let mut in_servers = false;
    for (i, raw) in text.lines().enumerate() {
        let at = |e: String| format!("{file}:{}: {e}", i + 1);
        let line = raw.split('#').next().unwrap_or("").trim_end();
        if line.trim().is_empty() {
            continue;
        }
        if !line.starts_with([' ', '\t']) {
            let name = line
                .strip_suffix(':')
                .ok_or_else(|| at(format!("`{line}`: expected a pool name and `:`")))?;
            pools.push(Pool {
                name: name.trim().to_string(),
                ..Pool::default()
            });
            in_servers = false;
            continue;
        }
        let pool = pools
            .last_mut()
            .ok_or_else(|| at("an indented line before the first pool name".into()))?;
        let item = line.trim();
        if let Some(entry) = item.strip_prefix('-') {
            if !in_servers {
                return Err(at(format!("`{item}`: a list item outside `servers:`")));
            }
            let entry = entry.trim().trim_matches(|c| c == '"' || c == '\'');
            let server = server_line(entry)
                .unwrap_or_else(|| Err(format!("`{entry}`: expected `host:port:weight [name]`")));
            pool.servers.push(server.map_err(at)?);
            continue;
        }
        let (key, value) = item
            .split_once(':')
            .ok_or_else(|| at(format!("`{item}`: expected `key: value`")))?;
        let value = value.trim().trim_matches(|c| c == '"' || c == '\'');
        in_servers = key.trim() == "servers";
        match key.trim() {
            "servers" if !value.is_empty() => {
                return Err(at(
                    "`servers:` takes a list of `- host:port:weight [name]` lines".into(),
                ))
            }
            "hash" => {
                pool.hash = Some(TwemproxyHash::from_name(value).ok_or_else(|| {
                    at(format!(
                        "hash `{value}`: fdlab reproduces twemproxy's {}",
                        TwemproxyHash::ALL.map(TwemproxyHash::name).join(" and ")
                    ))
                })?);
            }
            "distribution" => {
                pool.distribution = Some(match value {
                    "modula" => DistributionKind::ModuloEject,
                    "ketama" => DistributionKind::TwemproxyKetama,
                    other => {
                        return Err(at(format!(
                            "distribution `{other}`: fdlab reproduces twemproxy's modula and ketama"
                        )))
                    }
                });
            }
            _ => {}
        }
    }
    let names = || {
        pools
            .iter()
            .map(|p| p.name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let chosen = match wanted {
        Some(w) => pools
            .iter()
            .position(|p| p.name == w)
            .ok_or_else(|| format!("{file}: no pool `{w}`; its pools: {}", names()))?,
        None if pools.len() == 1 => 0,
        None if pools.is_empty() => return Err(format!("{file}: no pool")),
        None => {
            return Err(format!(
                "{file}: {} pools ({}); choose one with --pool",
                pools.len(),
                names()
            ))
        }
    };
    let pool = pools.swap_remove(chosen);
    if pool.servers.is_empty() {
        return Err(format!("{file}: pool `{}` has no servers", pool.name));
    }
    Ok(pool)
}

#[cfg(test)]
mod tests {
    use super::*;

    const YML: &str = "\
alpha:
  listen: 127.0.0.1:22121
  hash: md5
  distribution: ketama
  auto_eject_hosts: true
  servers:
   - 127.0.0.1:11212:1 s2
   - \"127.0.0.1:11211:2\"
beta:
  listen: 127.0.0.1:22122
  distribution: modula
  servers:
   - 10.0.0.1:11211:1
";

    #[test]
    fn a_pool_gives_its_servers_names_hash_and_distribution() {
        assert!(is_yaml(YML));
        assert!(!is_yaml("127.0.0.1:11211 2\n"));
        let p = pool("n.yml", YML, Some("alpha")).unwrap();
        assert_eq!(p.hash, Some(TwemproxyHash::Md5));
        assert_eq!(p.distribution, Some(DistributionKind::TwemproxyKetama));
        assert_eq!(
            p.servers,
            [
                Server {
                    name: "127.0.0.1:11212".into(),
                    weight: 1,
                    label: Some("s2".into())
                },
                Server::new("127.0.0.1:11211", 2)
            ]
        );
        let err = pool("n.yml", YML, None).unwrap_err();
        assert!(
            err.contains("2 pools (alpha, beta); choose one with --pool"),
            "{err}"
        );
        let err = pool("n.yml", "a:\n  hash: murmur\n", None).unwrap_err();
        assert!(err.starts_with("n.yml:2: hash `murmur`"), "{err}");
    }

    #[test]
    fn server_lines_are_told_from_host_port_weight_lines() {
        assert!(server_line("127.0.0.1:11211").is_none());
        assert!(server_line("127.0.0.1:11211:3 cache-a").unwrap().is_ok());
        assert!(server_line("127.0.0.1:11211:0").unwrap().is_err());
        assert!(server_line("h:1:1 a b").unwrap().is_err());
    }
}
