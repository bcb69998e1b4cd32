//! Liveness traffic of a `fdlab live` run: each node streams the cumulative
//! counts of the datagrams its driver sent ([`fdlab_driver::Sent`]) to the
//! parent, which attributes them to monitored pairs and detectors as the
//! simulator does (a detector's overhead is the heartbeat stream it listens
//! to, or its probes and their replies).
//!
//! Lines on a node's standard output, counts cumulative since the start:
//!
//! - `hb MONITOR INTERVAL_NS N`: heartbeats sent to node MONITOR every INTERVAL;
//! - `probes WATCH N`: probes sent by the node's watch WATCH;
//! - `replies PROBER WATCH N`: replies sent to node PROBER's watch WATCH;
//! - `shb DOWNSTREAM N`: stream-heartbeat frames sent on the data link to
//!   node DOWNSTREAM (a dataflow stage's data plane, `crate::live::dataflow`).
//!
//! A node reports at most once per [`REPORT_PERIOD`] while its counts change,
//! and once at its end; a crashed node's last period of sends is missing.

use std::collections::BTreeMap;

use fdlab_driver::Sent;
use fdlab_protocol::Nanos;

/// How often a node reports its counts while they change.
pub const REPORT_PERIOD: Nanos = Nanos::from_millis(100);

/// What a count counts, and who sent it (node index).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Counter {
    Heartbeats { monitor: u32, interval: Nanos },
    Probes { watch: usize },
    Replies { prober: u32, watch: usize },
    StreamHeartbeats { downstream: u32 },
}

/// The node side: turns [`Sent`] snapshots into the lines of the counts that
/// changed since the last call.
pub struct SentLines<A> {
    /// Address -> node index of every node of the run.
    nodes: Vec<A>,
    last: BTreeMap<Counter, u64>,
}

impl<A: PartialEq> SentLines<A> {
    pub fn new(nodes: Vec<A>) -> Self {
        SentLines {
            nodes,
            last: BTreeMap::new(),
        }
    }

    fn node(&self, addr: &A) -> Option<u32> {
        self.nodes.iter().position(|a| a == addr).map(|i| i as u32)
    }

    /// The lines for what changed in `sent`.
    pub fn lines(&mut self, sent: &Sent<A>) -> Vec<String> {
        let mut counts = Vec::new();
        for (peer, interval, n) in &sent.heartbeats {
            if let Some(monitor) = self.node(peer) {
                let interval = *interval;
                counts.push((Counter::Heartbeats { monitor, interval }, *n));
            }
        }
        for (watch, n) in sent.probes.iter().enumerate() {
            counts.push((Counter::Probes { watch }, *n));
        }
        for (peer, watch, n) in &sent.replies {
            if let Some(prober) = self.node(peer) {
                let watch = *watch as usize;
                counts.push((Counter::Replies { prober, watch }, *n));
            }
        }
        let mut out = Vec::new();
        for (counter, n) in counts {
            if self.last.insert(counter, n) == Some(n) {
                continue;
            }
            out.push(match counter {
                Counter::Heartbeats { monitor, interval } => {
                    format!("hb {monitor} {} {n}", interval.as_nanos())
                }
                Counter::Probes { watch } => format!("probes {watch} {n}"),
                Counter::Replies { prober, watch } => format!("replies {prober} {watch} {n}"),
                Counter::StreamHeartbeats { downstream } => format!("shb {downstream} {n}"),
            });
        }
        out
    }
}

/// The parent side: one line's counter and count, if it is a count line.
pub fn parse_line(words: &[&str]) -> Option<(Counter, u64)> {
    match *words {
        ["hb", monitor, interval, n] => Some((
            Counter::Heartbeats {
                monitor: monitor.parse().ok()?,
                interval: Nanos(interval.parse().ok()?),
            },
            n.parse().ok()?,
        )),
        ["probes", watch, n] => Some((
            Counter::Probes {
                watch: watch.parse().ok()?,
            },
            n.parse().ok()?,
        )),
        ["replies", prober, watch, n] => Some((
            Counter::Replies {
                prober: prober.parse().ok()?,
                watch: watch.parse().ok()?,
            },
            n.parse().ok()?,
        )),
        ["shb", downstream, n] => Some((
            Counter::StreamHeartbeats {
                downstream: downstream.parse().ok()?,
            },
            n.parse().ok()?,
        )),
        _ => None,
    }
}

/// The latest counts of every node: (sender, counter) -> count.
#[derive(Debug, Default)]
pub struct Traffic {
    counts: BTreeMap<(u32, Counter), u64>,
}

impl Traffic {
    /// Node `sender` reported `count` (cumulative: the latest wins).
    pub fn handle_count(&mut self, sender: u32, counter: Counter, count: u64) {
        self.counts.insert((sender, counter), count);
    }

    fn get(&self, sender: u32, counter: Counter) -> u64 {
        self.counts.get(&(sender, counter)).copied().unwrap_or(0)
    }

    /// The messages sent for detector `detector` of the pair `monitor` ->
    /// `target`: its heartbeat stream (if it listens to one), plus the probes
    /// of the monitor's watch `watch` and the target's replies to them.
    pub fn messages(
        &self,
        monitor: u32,
        target: u32,
        watch: usize,
        heartbeat: Option<Nanos>,
    ) -> u64 {
        let heartbeats = heartbeat.map_or(0, |interval| {
            self.get(target, Counter::Heartbeats { monitor, interval })
        });
        let probes = self.get(monitor, Counter::Probes { watch });
        let replies = self.get(
            target,
            Counter::Replies {
                prober: monitor,
                watch,
            },
        );
        heartbeats + probes + replies
    }

    /// The stream-heartbeat frames `target` sent on its data link to
    /// `monitor` (the overhead of each detector that watches that stream).
    pub fn stream_heartbeats(&self, monitor: u32, target: u32) -> u64 {
        self.get(
            target,
            Counter::StreamHeartbeats {
                downstream: monitor,
            },
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn changed_counts_round_trip_and_add_up_per_detector() {
        let ms = Nanos::from_millis;
        let mut lines = SentLines::new(vec!["n0", "n1", "n2"]);
        let mut sent = Sent {
            heartbeats: vec![("n0", ms(1000), 3), ("n0", ms(100), 30)],
            probes: vec![0, 4],
            replies: vec![("n2", 1, 5)],
        };
        let first = lines.lines(&sent);
        assert_eq!(
            first,
            [
                "hb 0 1000000000 3",
                "hb 0 100000000 30",
                "probes 0 0",
                "probes 1 4",
                "replies 2 1 5"
            ]
        );
        sent.heartbeats[1].2 = 31;
        assert_eq!(lines.lines(&sent), ["hb 0 100000000 31"]);
        assert!(lines.lines(&sent).is_empty());

        // The parent: node 1 sent all that; node 0 (the monitor of node 1,
        // watch 1) sent 7 probes.
        let mut traffic = Traffic::default();
        for line in first.iter().chain(["hb 0 100000000 31".to_owned()].iter()) {
            let words: Vec<&str> = line.split_whitespace().collect();
            let (counter, n) = parse_line(&words).unwrap();
            traffic.handle_count(1, counter, n);
        }
        traffic.handle_count(0, Counter::Probes { watch: 1 }, 7);
        let (counter, n) = parse_line(&["shb", "4", "9"]).unwrap();
        traffic.handle_count(1, counter, n);
        assert_eq!(traffic.stream_heartbeats(4, 1), 9);
        assert_eq!(traffic.stream_heartbeats(1, 4), 0);
        assert_eq!(traffic.messages(0, 1, 1, Some(ms(100))), 31 + 7);
        assert_eq!(traffic.messages(0, 1, 0, Some(ms(1000))), 3);
        // Replies go to the prober's watch: node 2's watch 1 on node 1.
        assert_eq!(traffic.messages(2, 1, 1, None), 5);
        assert_eq!(traffic.messages(0, 2, 0, Some(ms(1000))), 0);
        for bad in [
            &["hb", "x", "1", "2"][..],
            &["probes", "1"],
            &["replies", "1", "2", "-3"],
        ] {
            assert_eq!(parse_line(bad), None, "{bad:?}");
        }
    }
}
