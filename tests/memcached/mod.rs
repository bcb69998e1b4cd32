//! Real memcached servers on loopback, spoken to in memcached's text
//! protocol, for the real-client tests: started on free ports, each a child
//! of the test, all killed and reaped when the set is dropped (a test that
//! fails included).

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// How long a server or proxy may take to accept its first connection.
const START_TIMEOUT: Duration = Duration::from_secs(10);
/// How often to try it meanwhile.
const START_POLL: Duration = Duration::from_millis(20);
/// memcached's memory per server, MiB: the tests store a few thousand bytes.
const MEMCACHED_MIB: &str = "8";

/// A free TCP port on 127.0.0.1, as the kernel hands one out.
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port on 127.0.0.1")
}

/// Whether `addr` accepts a connection now.
pub fn accepts(addr: &str) -> bool {
    TcpStream::connect(addr).is_ok()
}

/// Waits until `addr` accepts a connection.
pub fn wait_for(addr: &str) {
    let started = Instant::now();
    while !accepts(addr) {
        assert!(
            started.elapsed() < START_TIMEOUT,
            "{addr} did not accept a connection within {START_TIMEOUT:?}"
        );
        std::thread::sleep(START_POLL);
    }
}

/// Every process the test started, killed and reaped on drop.
#[derive(Default)]
pub struct Processes {
    children: Vec<(String, Child)>,
}

impl Processes {
    /// Starts `command` as a child known by `name`.
    pub fn spawn(&mut self, name: &str, command: &mut Command) -> usize {
        let child = command
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        self.children.push((name.to_string(), child));
        self.children.len() - 1
    }

    /// Starts a memcached on `addr` (`host:port`) and waits for it.
    pub fn memcached(&mut self, addr: &str) -> usize {
        let (host, port) = addr.rsplit_once(':').expect("host:port");
        let i = self.spawn(
            &format!("memcached {addr}"),
            Command::new("memcached").args([
                "-l",
                host,
                "-p",
                port,
                "-U",
                "0",
                "-m",
                MEMCACHED_MIB,
                "-t",
                "1",
                "-u",
                "root",
            ]),
        );
        wait_for(addr);
        i
    }

    /// Kills child `i` (SIGKILL) and reaps it.
    pub fn kill(&mut self, i: usize) {
        let child = &mut self.children[i].1;
        let _ = child.kill();
        let _ = child.wait();
    }
}

impl Drop for Processes {
    fn drop(&mut self) {
        for (_, child) in &mut self.children {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// A connection speaking memcached's text protocol.
pub struct Conn {
    reader: BufReader<TcpStream>,
}

impl Conn {
    pub fn open(addr: &str) -> Conn {
        let stream = TcpStream::connect(addr).unwrap_or_else(|e| panic!("{addr}: {e}"));
        stream
            .set_read_timeout(Some(START_TIMEOUT))
            .expect("a read timeout");
        Conn {
            reader: BufReader::new(stream),
        }
    }

    fn send(&mut self, text: &str) -> std::io::Result<()> {
        self.reader.get_mut().write_all(text.as_bytes())
    }

    fn line(&mut self) -> std::io::Result<String> {
        let mut line = String::new();
        self.reader.read_line(&mut line)?;
        Ok(line.trim_end().to_string())
    }

    /// `set key 0 0 1` with value `v`: whether the reply is `STORED` (a
    /// proxy answers a request to a server it cannot reach with an error).
    pub fn set(&mut self, key: &str) -> bool {
        self.send(&format!("set {key} 0 0 1\r\nv\r\n"))
            .and_then(|()| self.line())
            .is_ok_and(|l| l == "STORED")
    }

    /// Whether the server holds `key`.
    pub fn has(&mut self, key: &str) -> bool {
        self.send(&format!("get {key}\r\n")).expect("a get");
        let mut found = false;
        loop {
            let line = self.line().expect("a reply to get");
            if line == "END" {
                return found;
            }
            if line.starts_with("VALUE ") {
                found = true;
                self.line().expect("the value's line");
            } else {
                panic!("unexpected reply to get {key}: {line}");
            }
        }
    }

    /// Empties the server.
    pub fn flush(&mut self) {
        self.send("flush_all\r\n").expect("flush_all");
        assert_eq!(self.line().expect("a reply to flush_all"), "OK");
    }
}

/// Where each of `keys` is, asking every server of `servers` directly: the
/// one server that holds it, `none` for no server; a key on two servers
/// fails the test.
pub fn located(servers: &[String], keys: &[String]) -> Vec<String> {
    let mut conns: Vec<(String, Conn)> = servers
        .iter()
        .filter(|s| accepts(s))
        .map(|s| (s.clone(), Conn::open(s)))
        .collect();
    keys.iter()
        .map(|key| {
            let holders: Vec<&str> = conns
                .iter_mut()
                .filter_map(|(name, c)| c.has(key).then_some(name.as_str()))
                .collect();
            match holders.as_slice() {
                [] => "none".to_string(),
                [one] => (*one).to_string(),
                more => panic!("{key} is on {more:?}"),
            }
        })
        .collect()
}

/// Empties every server of `servers` that is up.
pub fn flush_all(servers: &[String]) {
    for s in servers.iter().filter(|s| accepts(s)) {
        Conn::open(s).flush();
    }
}

/// `fdlab place ARGS --keys FILE`: per key, its server in the rows of dead
/// set `dead` (`none` or a server) for `distribution`.
pub fn fdlab_place(args: &[&str], keys_file: &Path, distribution: &str, dead: &str) -> Vec<String> {
    let o = Command::new(env!("CARGO_BIN_EXE_fdlab"))
        .arg("place")
        .args(args)
        .arg("--keys")
        .arg(keys_file)
        .output()
        .expect("fdlab place");
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "fdlab place {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    stdout
        .lines()
        .skip(1)
        .filter_map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            (f[1] == distribution && f[2] == dead).then(|| f[3].to_string())
        })
        .collect()
}
