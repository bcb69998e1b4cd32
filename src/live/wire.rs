//! The parent/child protocol of `fdlab live`: every line the parent
//! (`fdlab live`) and a node process (`fdlab live-node`) exchange, formatted
//! and parsed here and nowhere else. Lines are plain text, one message per
//! line, words separated by single spaces; times are integer nanoseconds.
//!
//! Node -> parent, on the node's standard output:
//!
//! - `port UDP` (a mesh node) or `port UDP TCP` (a dataflow stage, whose data
//!   plane listens on TCP): the loopback ports the node bound, first thing;
//! - `v WATCH T_NS VERDICT`: the node's watch WATCH (its targets in pair
//!   order, per detector) changed its verdict (`alive`, `suspect`, `failed`)
//!   at T_NS of the run's time;
//! - the cumulative counts of what the node sent (`super::traffic`):
//!   `hb MONITOR INTERVAL_NS N` (heartbeats to node MONITOR every INTERVAL),
//!   `probes WATCH N` (probes of its watch WATCH), `replies PROBER WATCH N`
//!   (replies to node PROBER's watch WATCH), `shb DOWNSTREAM N`
//!   (stream-heartbeat frames on its data link to node DOWNSTREAM);
//! - `done`: the run's duration is over.
//!
//! Parent -> node, on the node's standard input, once every node has said
//! its ports: `start UNIX_NS UDP_ADDR... [tcp TCP_ADDR...]`, the run's time
//! zero (nanoseconds since the Unix epoch) and every node's addresses by
//! node index (the data-plane ones for a dataflow). Closing the node's
//! standard input tells it the parent is gone.

use std::net::SocketAddr;

use fdlab_protocol::{Nanos, Verdict};

use super::traffic::Counter;

/// A line of a node's standard output.
#[derive(Clone, Debug, PartialEq)]
pub enum Report {
    /// The UDP port, and the data-plane TCP port of a dataflow stage.
    Port {
        udp: u16,
        tcp: Option<u16>,
    },
    /// Watch `.0` changed to `.2` at `.1`.
    Change(usize, Nanos, Verdict),
    /// A cumulative count of what the node sent.
    Sent(Counter, u64),
    Done,
}

impl Report {
    /// The line, without its newline.
    pub fn line(&self) -> String {
        match *self {
            Report::Port { udp, tcp: None } => format!("port {udp}"),
            Report::Port {
                udp,
                tcp: Some(tcp),
            } => format!("port {udp} {tcp}"),
            Report::Change(watch, at, verdict) => {
                format!("v {watch} {} {}", at.as_nanos(), verdict_word(verdict))
            }
            Report::Sent(counter, n) => match counter {
                Counter::Heartbeats { monitor, interval } => {
                    format!("hb {monitor} {} {n}", interval.as_nanos())
                }
                Counter::Probes { watch } => format!("probes {watch} {n}"),
                Counter::Replies { prober, watch } => format!("replies {prober} {watch} {n}"),
                Counter::StreamHeartbeats { downstream } => format!("shb {downstream} {n}"),
            },
            Report::Done => "done".to_owned(),
        }
    }

    /// The report a line holds; `None` for anything else (a node prints
    /// nothing else on its standard output, so that is ignored).
    pub fn parse(line: &str) -> Option<Report> {
        let w: Vec<&str> = line.split_whitespace().collect();
        let count = |text: &str| text.parse::<u64>().ok();
        let sent = |counter, n: &str| Some(Report::Sent(counter, count(n)?));
        match w[..] {
            ["port", udp] => Some(Report::Port {
                udp: udp.parse().ok()?,
                tcp: None,
            }),
            ["port", udp, tcp] => Some(Report::Port {
                udp: udp.parse().ok()?,
                tcp: Some(tcp.parse().ok()?),
            }),
            ["v", watch, t, v] => Some(Report::Change(
                watch.parse().ok()?,
                Nanos(t.parse().ok()?),
                parse_verdict(v)?,
            )),
            ["done"] => Some(Report::Done),
            ["hb", monitor, interval, n] => sent(
                Counter::Heartbeats {
                    monitor: monitor.parse().ok()?,
                    interval: Nanos(interval.parse().ok()?),
                },
                n,
            ),
            ["probes", watch, n] => sent(
                Counter::Probes {
                    watch: watch.parse().ok()?,
                },
                n,
            ),
            ["replies", prober, watch, n] => sent(
                Counter::Replies {
                    prober: prober.parse().ok()?,
                    watch: watch.parse().ok()?,
                },
                n,
            ),
            ["shb", downstream, n] => sent(
                Counter::StreamHeartbeats {
                    downstream: downstream.parse().ok()?,
                },
                n,
            ),
            _ => None,
        }
    }
}

fn verdict_word(verdict: Verdict) -> &'static str {
    match verdict {
        Verdict::Alive => "alive",
        Verdict::Suspect => "suspect",
        Verdict::Failed => "failed",
    }
}

fn parse_verdict(word: &str) -> Option<Verdict> {
    match word {
        "alive" => Some(Verdict::Alive),
        "suspect" => Some(Verdict::Suspect),
        "failed" => Some(Verdict::Failed),
        _ => None,
    }
}

/// The parent's one line to every node.
#[derive(Clone, Debug, PartialEq)]
pub struct Start {
    /// The run's time zero, nanoseconds since the Unix epoch.
    pub unix_ns: u128,
    /// Every node's UDP address, by node index.
    pub udp: Vec<SocketAddr>,
    /// Every node's data-plane address, by node index (a dataflow only).
    pub tcp: Option<Vec<SocketAddr>>,
}

impl Start {
    /// The line, without its newline.
    pub fn line(&self) -> String {
        let join = |addrs: &[SocketAddr]| {
            addrs
                .iter()
                .map(SocketAddr::to_string)
                .collect::<Vec<_>>()
                .join(" ")
        };
        let mut line = format!("start {} {}", self.unix_ns, join(&self.udp));
        if let Some(tcp) = &self.tcp {
            line = format!("{line} tcp {}", join(tcp));
        }
        line
    }

    /// Parses the start line of a run of `nodes` nodes; the error says what
    /// is wrong with it.
    pub fn parse(line: &str, nodes: usize) -> Result<Start, String> {
        let mut words = line.split_whitespace();
        if words.next() != Some("start") {
            return Err(format!("expected a start line, got `{}`", line.trim()));
        }
        let unix_ns: u128 = words
            .next()
            .and_then(|w| w.parse().ok())
            .ok_or("start line: no start instant")?;
        let parse_addrs = |words: &[&str]| -> Result<Vec<SocketAddr>, String> {
            let addrs: Vec<SocketAddr> = words
                .iter()
                .map(|w| {
                    w.parse()
                        .map_err(|_| format!("start line: bad address `{w}`"))
                })
                .collect::<Result<_, _>>()?;
            if addrs.len() != nodes {
                return Err(format!(
                    "start line: {} addresses for {} nodes",
                    addrs.len(),
                    nodes
                ));
            }
            Ok(addrs)
        };
        let rest: Vec<&str> = words.collect();
        let (udp_words, tcp_words) = match rest.iter().position(|&w| w == "tcp") {
            Some(i) => (&rest[..i], Some(&rest[i + 1..])),
            None => (&rest[..], None),
        };
        Ok(Start {
            unix_ns,
            udp: parse_addrs(udp_words)?,
            tcp: tcp_words.map(parse_addrs).transpose()?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(report: Report, line: &str) {
        assert_eq!(report.line(), line);
        assert_eq!(Report::parse(line), Some(report), "{line}");
    }

    #[test]
    fn every_report_line_round_trips() {
        round_trip(
            Report::Port {
                udp: 4000,
                tcp: None,
            },
            "port 4000",
        );
        round_trip(
            Report::Port {
                udp: 4000,
                tcp: Some(4001),
            },
            "port 4000 4001",
        );
        round_trip(
            Report::Change(3, Nanos(1_500_000_000), Verdict::Alive),
            "v 3 1500000000 alive",
        );
        round_trip(
            Report::Change(0, Nanos(7), Verdict::Suspect),
            "v 0 7 suspect",
        );
        round_trip(
            Report::Change(12, Nanos(0), Verdict::Failed),
            "v 12 0 failed",
        );
        let sent = [
            (
                Counter::Heartbeats {
                    monitor: 2,
                    interval: Nanos::from_millis(100),
                },
                "hb 2 100000000 31",
            ),
            (Counter::Probes { watch: 1 }, "probes 1 31"),
            (
                Counter::Replies {
                    prober: 0,
                    watch: 4,
                },
                "replies 0 4 31",
            ),
            (Counter::StreamHeartbeats { downstream: 5 }, "shb 5 31"),
        ];
        for (counter, line) in sent {
            round_trip(Report::Sent(counter, 31), line);
        }
        round_trip(Report::Done, "done");
    }

    #[test]
    fn anything_else_is_no_report() {
        for bad in [
            "",
            "port",
            "port x",
            "port 1 2 3",
            "port 70000",
            "v 1 2 dead",
            "v -1 2 alive",
            "done now",
            "hb x 1 2",
            "probes 1",
            "replies 1 2 -3",
            "shb 1 2 3",
            "thread 'main' panicked",
        ] {
            assert_eq!(Report::parse(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn the_start_line_round_trips_with_and_without_a_data_plane() {
        let a = |port: u16| SocketAddr::from(([127, 0, 0, 1], port));
        let mesh = Start {
            unix_ns: 1_700_000_000_123_456_789,
            udp: vec![a(4000), a(4001), a(4002)],
            tcp: None,
        };
        let line = "start 1700000000123456789 127.0.0.1:4000 127.0.0.1:4001 127.0.0.1:4002";
        assert_eq!(mesh.line(), line);
        assert_eq!(Start::parse(&format!("{line}\n"), 3), Ok(mesh));
        let dataflow = Start {
            unix_ns: 5,
            udp: vec![a(1), a(2)],
            tcp: Some(vec![a(3), a(4)]),
        };
        let line = "start 5 127.0.0.1:1 127.0.0.1:2 tcp 127.0.0.1:3 127.0.0.1:4";
        assert_eq!(dataflow.line(), line);
        assert_eq!(Start::parse(line, 2), Ok(dataflow));
    }

    #[test]
    fn a_bad_start_line_says_what_is_wrong() {
        for (line, error) in [
            ("port 1\n", "expected a start line, got `port 1`"),
            ("start\n", "start line: no start instant"),
            ("start x 127.0.0.1:1", "start line: no start instant"),
            (
                "start 5 127.0.0.1:1 nowhere",
                "start line: bad address `nowhere`",
            ),
            ("start 5 127.0.0.1:1", "start line: 1 addresses for 2 nodes"),
            (
                "start 5 127.0.0.1:1 127.0.0.1:2 tcp 127.0.0.1:3",
                "start line: 1 addresses for 2 nodes",
            ),
        ] {
            assert_eq!(Start::parse(line, 2), Err(error.to_owned()), "{line:?}");
        }
    }
}
