//! Liveness traffic of a `fdlab live` run: each node streams the cumulative
//! counts of the datagrams its driver sent ([`fdlab_driver::Sent`]) to the
//! parent, which attributes them to monitored pairs and detectors as the
//! simulator does (a detector's overhead is the heartbeat stream it listens
//! to, or its probes and their replies).
//!
//! What a count counts is a [`Counter`]; the lines that carry the counts
//! (`hb`, `probes`, `replies`, `shb`) are formatted and parsed with every
//! other line of the parent/child protocol in `super::wire`.
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

/// The node side: turns [`Sent`] snapshots into the counts that changed
/// since the last call.
pub struct SentCounts<A> {
    /// Address -> node index of every node of the run.
    nodes: Vec<A>,
    last: BTreeMap<Counter, u64>,
}

impl<A: PartialEq> SentCounts<A> {
    pub fn new(nodes: Vec<A>) -> Self {
        SentCounts {
            nodes,
            last: BTreeMap::new(),
        }
    }

    fn node(&self, addr: &A) -> Option<u32> {
        self.nodes.iter().position(|a| a == addr).map(|i| i as u32)
    }

    /// The counts of `sent` that changed, in the order of `sent`'s
    /// heartbeat streams, probes, then replies.
    pub fn changed(&mut self, sent: &Sent<A>) -> Vec<(Counter, u64)> {
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
        counts.retain(|&(counter, n)| self.last.insert(counter, n) != Some(n));
        counts
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
    fn changed_counts_are_reported_once_and_add_up_per_detector() {
        let ms = Nanos::from_millis;
        let hb = |monitor, interval| Counter::Heartbeats { monitor, interval };
        let mut counts = SentCounts::new(vec!["n0", "n1", "n2"]);
        let mut sent = Sent {
            heartbeats: vec![
                ("n0", ms(1000), 3),
                ("n0", ms(100), 30),
                ("elsewhere", ms(1), 1),
            ],
            probes: vec![0, 4],
            replies: vec![("n2", 1, 5)],
        };
        let first = counts.changed(&sent);
        assert_eq!(
            first,
            [
                (hb(0, ms(1000)), 3),
                (hb(0, ms(100)), 30),
                (Counter::Probes { watch: 0 }, 0),
                (Counter::Probes { watch: 1 }, 4),
                (
                    Counter::Replies {
                        prober: 2,
                        watch: 1
                    },
                    5
                ),
            ]
        );
        sent.heartbeats[1].2 = 31;
        assert_eq!(counts.changed(&sent), [(hb(0, ms(100)), 31)]);
        assert!(counts.changed(&sent).is_empty());

        // The parent: node 1 sent all that; node 0 (the monitor of node 1,
        // watch 1) sent 7 probes.
        let mut traffic = Traffic::default();
        for (counter, n) in first.into_iter().chain([(hb(0, ms(100)), 31)]) {
            traffic.handle_count(1, counter, n);
        }
        traffic.handle_count(0, Counter::Probes { watch: 1 }, 7);
        traffic.handle_count(1, Counter::StreamHeartbeats { downstream: 4 }, 9);
        assert_eq!(traffic.stream_heartbeats(4, 1), 9);
        assert_eq!(traffic.stream_heartbeats(1, 4), 0);
        assert_eq!(traffic.messages(0, 1, 1, Some(ms(100))), 31 + 7);
        assert_eq!(traffic.messages(0, 1, 0, Some(ms(1000))), 3);
        // Replies go to the prober's watch: node 2's watch 1 on node 1.
        assert_eq!(traffic.messages(2, 1, 1, None), 5);
        assert_eq!(traffic.messages(0, 2, 0, Some(ms(1000))), 0);
    }
}
