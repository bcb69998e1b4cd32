//! `fdlab place`: the CSV of key owners, and one error line for each bad
//! input with nothing on standard output.

mod common;

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use common::{assert_one_error_line, fdlab, text};

const RING: &str = "127.0.0.1:11211,127.0.0.1:11212,127.0.0.1:11213";

fn write(dir: &Path, name: &str, bytes: &[u8]) -> String {
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    path.display().to_string()
}

/// Runs `fdlab` with `input` on its standard input.
fn fdlab_with_stdin(args: &[&str], input: &[u8]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_fdlab"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("runs the fdlab binary");
    child.stdin.take().unwrap().write_all(input).unwrap();
    child.wait_with_output().unwrap()
}

#[test]
fn ketama_and_modula_owners_match_the_reference_vectors() {
    let dir = tempfile::tempdir().unwrap();
    let keys = write(
        dir.path(),
        "keys.txt",
        "foo\nUsers.Profile.42\nkey:1234\nclé\n".as_bytes(),
    );
    let out = fdlab(&[
        "place",
        "--servers",
        RING,
        "--keys",
        &keys,
        "--dead",
        "127.0.0.1:11212",
        "--distribution",
        "ketama,modulo-eject",
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    // Owners from protocol/src/placement/tests/reference_vectors.py
    // (libketama ring; twemproxy fnv1a_64 modula).
    let expected = "\
key,distribution,dead,server
foo,ketama,none,127.0.0.1:11213
Users.Profile.42,ketama,none,127.0.0.1:11211
key:1234,ketama,none,127.0.0.1:11212
clé,ketama,none,127.0.0.1:11212
foo,ketama,127.0.0.1:11212,127.0.0.1:11213
Users.Profile.42,ketama,127.0.0.1:11212,127.0.0.1:11211
key:1234,ketama,127.0.0.1:11212,127.0.0.1:11213
clé,ketama,127.0.0.1:11212,127.0.0.1:11213
foo,modulo-eject,none,127.0.0.1:11213
Users.Profile.42,modulo-eject,none,127.0.0.1:11212
key:1234,modulo-eject,none,127.0.0.1:11213
clé,modulo-eject,none,127.0.0.1:11213
foo,modulo-eject,127.0.0.1:11212,127.0.0.1:11213
Users.Profile.42,modulo-eject,127.0.0.1:11212,127.0.0.1:11211
key:1234,modulo-eject,127.0.0.1:11212,127.0.0.1:11211
clé,modulo-eject,127.0.0.1:11212,127.0.0.1:11211
";
    assert_eq!(text(&out.stdout), expected);
    assert!(out.stderr.is_empty(), "{}", text(&out.stderr));
}

#[test]
fn a_failed_request_is_none_and_weights_come_from_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let servers = write(
        dir.path(),
        "servers.txt",
        b"# SockIOPool, weights {5, 2}\n10.0.0.1:11211 5\n10.0.0.2:11211 2  # small\n",
    );
    // key:1234 tries A count + 1 = 8 times with A dead (reference vectors).
    let out = fdlab_with_stdin(
        &[
            "place",
            "--servers-file",
            &servers,
            "--distribution",
            "sockiopool",
            "--dead",
            "10.0.0.1:11211",
        ],
        b"foo\r\nkey:1234\r\n",
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout),
        "key,distribution,dead,server\n\
         foo,sockiopool,none,10.0.0.1:11211\n\
         key:1234,sockiopool,none,10.0.0.1:11211\n\
         foo,sockiopool,10.0.0.1:11211,10.0.0.2:11211\n\
         key:1234,sockiopool,10.0.0.1:11211,none\n"
    );
}

#[test]
fn every_distribution_and_dead_set_by_default() {
    let out = fdlab_with_stdin(
        &[
            "place",
            "--servers",
            RING,
            "--dead",
            "127.0.0.1:11213,127.0.0.1:11211",
            "--namespace",
            "Users=127.0.0.1:11211",
        ],
        b"Users.1\nOrders.2\n",
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    let rows: Vec<&str> = stdout.lines().skip(1).collect();
    assert_eq!(rows.len(), 2 * 7 * 2);
    // The dead set is written in server-list order.
    assert!(rows
        .iter()
        .any(|r| r.contains(",127.0.0.1:11211+127.0.0.1:11213,")));
    // Users keys stay in their group: with its only server dead they fail.
    assert!(rows.contains(&"Users.1,namespace,none,127.0.0.1:11211"));
    assert!(rows.contains(&"Users.1,namespace,127.0.0.1:11211+127.0.0.1:11213,none"));
    assert!(rows.contains(&"Orders.2,namespace,127.0.0.1:11211+127.0.0.1:11213,127.0.0.1:11212"));
}

#[test]
fn each_bad_input_is_one_error_line_and_no_output() {
    let dir = tempfile::tempdir().unwrap();
    let keys = write(dir.path(), "keys.txt", b"a\nb\n");
    let long_key = format!("ok\n{}\n", "k".repeat(251));
    let key_files = [
        (
            "utf8.txt",
            b"ok\nab\xffc\n".to_vec(),
            "utf8.txt:2: key is not valid UTF-8 (byte 3)",
        ),
        (
            "long.txt",
            long_key.into_bytes(),
            "long.txt:2: key is 251 bytes; memcached keys are at most 250",
        ),
        (
            "space.txt",
            b"ok\nok\nabc def\n".to_vec(),
            "space.txt:3: key contains a space at byte 4",
        ),
        (
            "blank.txt",
            b"ok\n\nok\n".to_vec(),
            "blank.txt:2: key is empty",
        ),
    ];
    for (name, bytes, needle) in key_files {
        let path = write(dir.path(), name, &bytes);
        let out = fdlab(&["place", "--servers", RING, "--keys", &path]);
        assert_one_error_line(&out, &[needle]);
        assert!(out.stdout.is_empty(), "{name}");
    }
    let server_file = write(dir.path(), "servers.txt", b"a:1\nb:1 two\n");
    let cases: [(&[&str], &str); 14] = [
        (&["--servers", ""], "--servers: no servers"),
        (&["--servers", "a:1,b:1=0"], "entry 2 `b:1=0`: weight 0"),
        (&["--servers", "a:1=-3"], "weight -3 is negative"),
        (
            &["--servers", "a:1=heavy"],
            "weight `heavy` is not a number",
        ),
        (
            &["--servers", "a:1,b:1,a:1"],
            "`a:1` is listed twice (entries 1 and 3)",
        ),
        (&["--servers", "cache1"], "`cache1` is not host:port"),
        (
            &["--servers-file", &server_file],
            "servers.txt:2: weight `two` is not a number",
        ),
        (
            &["--servers", "a:1", "--dead", "z:9"],
            "--dead `z:9`: `z:9` is not one of the servers",
        ),
        (
            &["--servers", "a:1", "--distribution", "modulo"],
            "`modulo` is not one of",
        ),
        (
            &["--servers", "a:1", "--hash", "crc"],
            "--hash: `crc` is not one of",
        ),
        (
            &["--servers", "a:1", "--namespace", "Users"],
            "expected PREFIX=host:port",
        ),
        (
            &["--servers", "a:1", "--namespace", "U.x=a:1"],
            "namespace `U.x` contains a `.`",
        ),
        (
            &["--servers", "a:1", "--servers-file", &server_file],
            "not both",
        ),
        (&[], "no servers: give --servers"),
    ];
    for (args, needle) in cases {
        let mut all = vec!["place", "--keys", &keys];
        all.extend_from_slice(args);
        let out = fdlab(&all);
        assert_one_error_line(&out, &[needle]);
        assert!(out.stdout.is_empty(), "{args:?}");
    }
    let out = fdlab_with_stdin(&["place", "--servers", "a:1"], b"");
    assert_one_error_line(&out, &["standard input: no keys"]);
}

/// A `nutcracker.yml`: its pool's servers (with their names), hash and
/// distribution, in twemproxy's order; a file of several pools needs
/// `--pool`, and a hash fdlab does not reproduce is one error line.
#[test]
fn a_nutcracker_pool_is_read_as_twemproxy_reads_it() {
    let dir = tempfile::tempdir().unwrap();
    let yml = "\
alpha:
  listen: 127.0.0.1:22121
  hash: md5
  distribution: ketama
  servers:
   - 127.0.0.1:11212:1 zeta
   - 127.0.0.1:11211:1
beta:
  distribution: modula
  servers:
   - 127.0.0.1:11213:1
";
    let file = write(dir.path(), "nutcracker.yml", yml.as_bytes());
    let out = fdlab_with_stdin(
        &["place", "--servers-file", &file, "--pool", "alpha"],
        b"foo\nbar\n",
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    // The pool's distribution only, rows for both keys.
    assert!(
        stdout
            .lines()
            .skip(1)
            .all(|l| l.contains(",twemproxy-ketama,none,")),
        "{stdout}"
    );
    assert_eq!(stdout.lines().count(), 3);
    let both = fdlab(&["place", "--servers-file", &file]);
    assert_one_error_line(&both, &["2 pools (alpha, beta); choose one with --pool"]);
    let bad = write(
        dir.path(),
        "bad.yml",
        b"p:\n  hash: murmur\n  servers:\n   - h:1:1\n",
    );
    let out = fdlab(&["place", "--servers-file", &bad]);
    assert_one_error_line(&out, &["bad.yml:2: hash `murmur`"]);
}
