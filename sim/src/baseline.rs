//! References the benchmarks print next to fdlab's own figures, so that a
//! ratio holds on any machine: a bare binary-heap event loop that does no
//! work per event, and the workload of issue 9/9's madsim comparison as an
//! fdlab scenario (`cargo simbench` runs the same workload in madsim).

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use fdlab_protocol::fixed::FixedTimeoutConfig;
use fdlab_protocol::{DetectorConfig, Nanos};

use crate::queue::EventQueue;
use crate::scenario::{DetectorSetup, Dist, MonitorCount, Network, Scenario, Topology};

/// Nodes of the madsim comparison: every one sends a heartbeat to every
/// other one.
pub const MADSIM_NODES: u32 = 10;
/// Its heartbeat period.
pub const MADSIM_HEARTBEAT: Nanos = Nanos::from_millis(10);
/// Its link latency: uniform over [1 ms, 10 ms), madsim 0.2.34's default
/// `net::Config::send_latency`.
pub const MADSIM_LATENCY_MIN: Nanos = Nanos::from_millis(1);
pub const MADSIM_LATENCY_MAX: Nanos = Nanos::from_millis(10);
/// Its simulated time.
pub const MADSIM_DURATION: Nanos = Nanos::from_secs(1_000);
/// The fixed timeout's deadline: three periods, as the built-ins' `fixed-3s`.
const MADSIM_TIMEOUT: Nanos = Nanos::from_millis(30);

/// The madsim comparison as an fdlab scenario: [`MADSIM_NODES`] nodes,
/// every one monitoring every other with a fixed timeout over heartbeats
/// every [`MADSIM_HEARTBEAT`], uniform 1-10 ms links, no fault, one seed.
pub fn madsim_workload() -> Scenario {
    let topology = Topology::Mesh {
        nodes: MADSIM_NODES,
        monitors_per_node: MonitorCount::All,
    };
    Scenario {
        description: "10 nodes, all-to-all heartbeats every 10 ms over uniform 1-10 ms links"
            .into(),
        network: Network {
            latency: Dist::Uniform {
                min: MADSIM_LATENCY_MIN,
                max: MADSIM_LATENCY_MAX,
            },
            ..Default::default()
        },
        detectors: vec![DetectorSetup {
            name: "fixed-30ms".into(),
            config: DetectorConfig::FixedTimeout(FixedTimeoutConfig {
                interval: MADSIM_HEARTBEAT,
                timeout: MADSIM_TIMEOUT,
                ..Default::default()
            }),
        }],
        ..Scenario::new("madsim-workload", topology, MADSIM_DURATION)
    }
}

/// Delays of the bare loops' pushed events: a spread of about 1 to 10 ms, ns.
const SPREAD_NS: u64 = 9_000_000;
const BASE_NS: u64 = 1_000_000;

/// The `i`th delay of the bare loops: a fixed spread, no randomness.
fn delay(i: u64) -> u64 {
    BASE_NS + i.wrapping_mul(0x9E37_79B9_7F4A_7C15) % SPREAD_NS
}

/// Pops `events` events from a binary heap holding `pending` of them,
/// pushing one back at a later time for each (a fixed spread of delays, no
/// randomness, no work): the cost of a plain priority-queue event loop.
/// Returns a checksum of the times popped, so that nothing is optimised away.
pub fn heap_loop(events: u64, pending: usize) -> u64 {
    let mut heap: BinaryHeap<Reverse<(u64, u64)>> = BinaryHeap::with_capacity(pending + 1);
    let mut seq = 0u64;
    for i in 0..pending as u64 {
        heap.push(Reverse((delay(i), seq)));
        seq += 1;
    }
    let mut sum = 0u64;
    for _ in 0..events {
        let Some(Reverse((time, _))) = heap.pop() else {
            break;
        };
        sum = sum.wrapping_add(time);
        heap.push(Reverse((time + delay(seq), seq)));
        seq += 1;
    }
    sum
}

/// [`heap_loop`] on fdlab's own event queue (the timing wheel of
/// [`EventQueue`], with an event of the engine's size as the item): what
/// the queue costs a run's event with no handler, beside the heap's.
/// Returns the same checksum as [`heap_loop`] given the same arguments.
pub fn wheel_loop(events: u64, pending: usize) -> u64 {
    let mut queue: EventQueue<[u64; 2]> = EventQueue::new();
    let mut seq = 0u64;
    for i in 0..pending as u64 {
        queue.push(delay(i), [seq, 0]);
        seq += 1;
    }
    let mut sum = 0u64;
    for _ in 0..events {
        let Some((time, _)) = queue.pop() else {
            break;
        };
        sum = sum.wrapping_add(time);
        queue.push(time + delay(seq), [seq, 0]);
        seq += 1;
    }
    sum
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_heap_loop_pops_in_time_order_and_keeps_its_size() {
        // Same arguments, same checksum; more events, another one.
        assert_eq!(heap_loop(1_000, 16), heap_loop(1_000, 16));
        assert_ne!(heap_loop(1_000, 16), heap_loop(1_001, 16));
        assert_eq!(heap_loop(0, 16), 0);
    }

    #[test]
    fn the_wheel_loop_pops_what_the_heap_loop_pops() {
        for (events, pending) in [(0, 16), (1, 1), (10_000, 100), (100_000, 140)] {
            assert_eq!(wheel_loop(events, pending), heap_loop(events, pending));
        }
    }

    #[test]
    fn the_madsim_workload_is_a_valid_all_to_all_mesh() {
        let s = crate::valid::ValidScenario::new(madsim_workload()).unwrap();
        let (outcome, _) = crate::engine::run(&s, 1, false);
        // 90 pairs, a heartbeat every 10 ms for 1,000 s: about 9 M
        // heartbeats, each a tick and an arrival (timers aside).
        assert!(outcome.events > 2 * 90 * 99_000, "{}", outcome.events);
    }
}
