//! The simulator against SPEC §10's operators' reading, and its
//! determinism.

use fdlab_protocol::lockrpc::PolicyKind;
use fdlab_protocol::Nanos;
use proptest::prelude::*;

use super::*;
use crate::scenario::{
    Dist, Fault, FaultKind, LockrpcSetup, MonitorCount, Network, Scenario, Topology,
};
use crate::valid::ValidScenario;

fn lock_table(rate: f64) -> LockrpcSetup {
    LockrpcSetup {
        rpcs_per_second: rate,
        ..LockrpcSetup::default()
    }
}

fn scenario(nodes: u32, secs: u64, l: LockrpcSetup, faults: Vec<Fault>) -> ValidScenario {
    let topology = Topology::Mesh {
        nodes,
        monitors_per_node: MonitorCount::All,
    };
    ValidScenario::new(Scenario {
        network: Network {
            latency: Dist::Constant {
                value: Nanos::from_micros(500),
            },
            ..Network::default()
        },
        faults,
        lockrpc: Some(l),
        ..Scenario::new("t", topology, Nanos::from_secs(secs))
    })
    .unwrap()
}

fn fault(kind: FaultKind, node: &str, at: u64, duration: Option<u64>) -> Fault {
    Fault {
        kind: Some(kind),
        node: Some(node.into()),
        at: Some(Nanos::from_secs(at)),
        duration: duration.map(Nanos::from_secs),
        ..Fault::default()
    }
}

fn by_policy(s: &ValidScenario, seed: u64) -> Vec<LockOutcome> {
    let setup = Setup::new(s).unwrap();
    run_all(s, &setup, seed)
}

fn get(runs: &[LockOutcome], p: PolicyKind) -> &LockOutcome {
    runs.iter().find(|r| r.policy == p).unwrap()
}

/// n1 serves every RPC 38 ms slower from 10 s to 40 s: its queue passes
/// the 3 s deadline.
fn slow_peer() -> ValidScenario {
    let mut slow = fault(FaultKind::Degrade, "n1", 10, Some(30));
    slow.slowdown = Some(Nanos::from_millis(38));
    scenario(4, 50, lock_table(20.0), vec![slow])
}

#[test]
fn a_slow_peer_evict_on_timeout_redials_on_every_timeout_rustfs_keeps_the_channel() {
    let runs = by_policy(&slow_peer(), 1);
    let evict = get(&runs, PolicyKind::EvictOnTimeout);
    let rustfs = get(&runs, PolicyKind::Rustfs);
    assert!(evict.timeouts.live() > 100, "{:?}", evict.timeouts);
    // Mostly while the peer was slow (the rest as its queue drained).
    assert!(
        evict.timeouts.slow * 2 > evict.timeouts.live(),
        "{:?}",
        evict.timeouts
    );
    assert_eq!(evict.timeouts.dead, 0);
    // Every timeout evicts (as does each RPC failed by a tear-down).
    assert_eq!(evict.evictions.live(), evict.counters.evictions());
    assert!(
        evict.counters.evictions_timeout * 10 >= evict.timeouts.live() * 9,
        "{evict:?}"
    );
    assert_eq!(evict.resets.live(), evict.timeouts.live());
    assert!(evict.redials.live() * 2 >= evict.evictions.live());
    // RustFS: the slow peer keeps serving, so most timeouts are suppressed,
    // and a channel is evicted at most once per cooldown (5 s) per node.
    assert!(rustfs.timeouts.live() > 100);
    assert!(rustfs.counters.suppressed() > rustfs.evictions.live());
    let cooldowns = 30 / 5 + 1;
    assert!(
        rustfs.evictions.live() <= u64::from(rustfs.servers) * cooldowns,
        "{:?}",
        rustfs.evictions
    );
    assert!(rustfs.redials.live() * 10 < evict.redials.live());
    // Detached until the node's budget (256 per peer, shared by its 8
    // clients, each RPC living 30 s) is spent, then cancelled: every reset
    // is an abort.
    assert!(rustfs.counters.detached > 0);
    assert_eq!(
        rustfs.counters.aborted,
        rustfs.resets.total() + rustfs.unsent_cancels
    );
    // A degraded server accepts every stream at once, so no reset is of
    // a stream pending accept: h2 closes no connection.
    assert_eq!(rustfs.teardowns.total(), 0);
    assert_eq!(evict.teardowns.total(), 0);
}

#[test]
fn the_breaker_caps_timeouts_per_second_after_its_first_window() {
    let runs = by_policy(&slow_peer(), 2);
    let rustfs = get(&runs, PolicyKind::Rustfs);
    let breaker = get(&runs, PolicyKind::RustfsBreaker);
    assert!(rustfs.timeouts.live() > 0);
    assert!(
        breaker.timeouts.live() * 2 < rustfs.timeouts.live(),
        "breaker {} rustfs {}",
        breaker.timeouts.live(),
        rustfs.timeouts.live()
    );
    assert!(breaker.counters.skipped > 0);
    // After the threshold's 3 timeouts, each further one opens a window
    // of at least `first_window` (1.5 s): per client, over the 30 s of the
    // fault plus the 3 s deadline, about 3 + 33 / 1.5 timeouts of lock
    // RPCs at most, times two for the in-flight ones a window catches.
    let per_client = breaker.counters.timeouts.lock / u64::from(breaker.clients);
    assert!(per_client <= 2 * (3 + 33 * 2 / 3), "{per_client}");
}

#[test]
fn no_lock_is_held_forever_leases_reclaim_orphans() {
    // Evict-on-timeout cancels timed-out RPCs the server may already have
    // granted: those locks stay until the lease (5 s here) expires.
    let mut l = lock_table(20.0);
    l.server_lease = Some(Nanos::from_secs(5));
    l.policies = Some(vec!["evict-on-timeout".into()]);
    let mut slow = fault(FaultKind::Degrade, "n1", 5, Some(20));
    slow.slowdown = Some(Nanos::from_millis(38));
    let s = scenario(4, 40, l, vec![slow]);
    let r = &by_policy(&s, 3)[0];
    assert!(r.lease_expiries > 0, "{r:?}");
    // Every orphan ended by the lease: at most 5 s each (plus the queue).
    assert!(
        r.orphaned.as_secs_f64()
            <= 5.0 * r.lease_expiries as f64 + 1e-9 + 3.0 * r.lease_expiries as f64
    );
    // After the fault (and a lease), acquisitions go through again.
    assert!(r.acquired * 10 > r.acquisitions * 9, "{r:?}");
}

#[test]
fn a_dead_peer_stops_receiving_rpcs_within_a_bound() {
    // Crashed for good at 10 s. Every client hears the reset one latency
    // later; from then on no policy sends an RPC on a connection to it.
    // What differs is the dialling: without a breaker or an offline
    // transport, every request dials (and is refused), so use never stops;
    // the breaker skips the peer after 3 failures (only probes and unlock
    // retries, 31.6 s of backoff at most, dial it afterwards); dsync's
    // offline channel fails requests at once and re-dials in the
    // background only, every 1 to 2 s.
    let s = scenario(
        4,
        70,
        lock_table(20.0),
        vec![fault(FaultKind::Crash, "n1", 10, None)],
    );
    let runs = by_policy(&s, 4);
    let rpc_bound = Nanos::from_secs(1);
    for r in &runs {
        assert_eq!(r.dead_peers.len(), 1);
        // Every client still gets a quorum from the other three.
        assert!(r.acquired * 10 > r.acquisitions * 9, "{:?}", r.policy);
        assert_eq!(r.evictions.live(), 0, "{:?}", r.policy);
        let d = r.dead_peers[0];
        assert!(d.rpcs_stopped, "{:?}: {d:?}", r.policy);
        assert!(d.rpc_stop_after <= rpc_bound, "{:?}: {d:?}", r.policy);
    }
    let breaker = get(&runs, PolicyKind::RustfsBreaker).dead_peers[0];
    assert!(breaker.stopped, "{breaker:?}");
    let unlock_tail = Nanos::from_millis(31_300 + 1_000);
    assert!(breaker.stop_after <= unlock_tail, "{breaker:?}");
    let dsync = get(&runs, PolicyKind::Dsync);
    let d = dsync.dead_peers[0];
    assert!(d.stopped && d.stop_after <= rpc_bound, "{d:?}");
    assert_eq!(d.dials, 0, "{d:?}");
    // Background re-dials: one per node (grid holds one connection per
    // node pair) every 1 to 2 s of the 60 s.
    let nodes = u64::from(dsync.servers);
    assert!(d.background_dials >= nodes * 30, "{d:?}");
    assert!(d.background_dials <= nodes * 61, "{d:?}");
    assert!(dsync.counters.offline_skipped > 0);
    // A release round fails at once on the offline channel to the dead
    // server, and the other three are a quorum: released, no retry, no
    // give-up (MinIO leaves the dead server's lock to its lease).
    assert_eq!(
        (dsync.unlock_give_ups, dsync.unlock_retries),
        (0, 0),
        "{dsync:?}"
    );
    for p in [PolicyKind::EvictOnTimeout, PolicyKind::Rustfs] {
        let d = get(&runs, p).dead_peers[0];
        assert!(!d.stopped, "{p:?}: {d:?}");
        assert!(d.dials > 10 * breaker.dials, "{p:?}: {d:?}");
        assert!(d.dials > 10 * d.rpcs, "{p:?}: {d:?}");
    }
    // One transport eviction per cooldown per node under RustFS.
    let rustfs = get(&runs, PolicyKind::Rustfs);
    let cooldowns = 60 / 5 + 1;
    assert!(rustfs.evictions.dead <= u64::from(rustfs.servers) * cooldowns);
    assert!(rustfs.evictions.dead >= u64::from(rustfs.servers) * (cooldowns - 2));
}

#[test]
fn the_same_seed_gives_the_same_runs_and_policies_share_the_arrivals() {
    let s = slow_peer();
    let a = by_policy(&s, 7);
    let b = by_policy(&s, 7);
    assert_eq!(a, b);
    let arrivals: Vec<u64> = a.iter().map(|r| r.acquisitions).collect();
    assert!(arrivals.windows(2).all(|w| w[0] == w[1]), "{arrivals:?}");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(12))]
    #[test]
    fn small_lock_scenarios_run_deterministically(
        seed in 0u64..1_000,
        nodes in 2u32..=5,
        clients in 1u32..=3,
        rate in 1.0f64..60.0,
        workers in 1u32..=4,
        convoy in any::<bool>(),
        kind in 0usize..7,
        at in 0u64..20,
        length in 1u64..15,
        slowdown_ms in 0u64..3_000,
        keys in 1u32..8,
    ) {
        let mut l = lock_table(rate);
        l.clients_per_node = clients;
        l.workers = workers;
        l.convoy = convoy;
        l.keys = keys;
        l.server_lease = Some(Nanos::from_secs(4));
        let node = format!("n{}", nodes - 1);
        let mut faults = Vec::new();
        match kind {
            0 => {}
            1 => faults.push(fault(FaultKind::Crash, &node, at, Some(length))),
            2 => faults.push(fault(FaultKind::Pause, &node, at, Some(length))),
            3 => {
                let mut f = fault(FaultKind::Degrade, &node, at, Some(length));
                f.slowdown = Some(Nanos::from_millis(slowdown_ms));
                faults.push(f);
            }
            4 => {
                let mut f = fault(FaultKind::SlowLink, &node, at, Some(length));
                f.node = None;
                f.extra_latency = Some(Nanos::from_millis(slowdown_ms));
                faults.push(f);
            }
            5 => faults.push(fault(FaultKind::Partition, &node, at, Some(length))),
            _ => {
                let mut f = fault(FaultKind::Loss, &node, at, Some(length));
                f.node = None;
                f.probability = Some(slowdown_ms as f64 / 3_000.0);
                faults.push(f);
            }
        }
        let s = scenario(nodes, 30, l, faults);
        let a = by_policy(&s, seed);
        let b = by_policy(&s, seed);
        prop_assert_eq!(&a, &b);
        for r in &a {
            prop_assert!(r.acquired + r.failed_acquisitions <= r.acquisitions);
            prop_assert_eq!(r.latencies_us.len() as u64, r.acquired);
            prop_assert!(r.live_server_time <= Nanos(30_000_000_000 * u64::from(nodes)));
            let c = &r.counters;
            // Every timeout is detached or aborted; an abort is a reset
            // sent, or a request dropped before it left.
            prop_assert_eq!(c.detached + c.aborted, c.timeouts.total());
            prop_assert_eq!(c.aborted, r.resets.total() + r.unsent_cancels);
            prop_assert_eq!(c.teardowns, r.teardowns.total());
            prop_assert!(c.late_released + c.late_partial + c.late_failed <= c.late_releases);
        }
    }
}

/// A paused server accepts no stream: cancelled requests that wait in its
/// accept queue count against h2's 20, and the connection is closed
/// (GOAWAY) once it runs again. RustFS detaches instead of cancelling
/// until its node's budget (256 per peer) is spent.
#[test]
fn a_paused_peer_closes_connections_only_over_resets_of_unaccepted_streams() {
    let short = fault(FaultKind::Pause, "n1", 10, Some(6));
    let runs = by_policy(&scenario(4, 40, lock_table(20.0), vec![short]), 5);
    let evict = get(&runs, PolicyKind::EvictOnTimeout);
    let rustfs = get(&runs, PolicyKind::Rustfs);
    // 8 clients x 5 lock RPCs/s per node to n1: ~120 streams pending when
    // the first deadlines pass, every one cancelled.
    assert!(evict.teardowns.total() > 0, "{evict:?}");
    // Within the budget: detached, never cancelled, no connection closed.
    assert_eq!(rustfs.counters.aborted, 0, "{rustfs:?}");
    assert_eq!(rustfs.teardowns.total(), 0, "{rustfs:?}");
    // A long pause spends the budget: aborts, and then tear-downs.
    let long = fault(FaultKind::Pause, "n1", 10, Some(30));
    let runs = by_policy(&scenario(4, 60, lock_table(20.0), vec![long]), 5);
    let rustfs = get(&runs, PolicyKind::Rustfs);
    assert!(rustfs.counters.aborted > 0, "{rustfs:?}");
    assert!(rustfs.teardowns.total() > 0, "{rustfs:?}");
}

/// A peer cut off by a partition answers no SYN and no segment: requests
/// time out, dials fail after the 3 s connect timeout, and the breaker
/// stops sending lock RPCs to it within its windows.
#[test]
fn a_black_holed_peer_is_skipped_by_the_breaker() {
    let cut = fault(FaultKind::Partition, "n1", 10, Some(30));
    let runs = by_policy(&scenario(4, 50, lock_table(20.0), vec![cut]), 6);
    let rustfs = get(&runs, PolicyKind::Rustfs);
    let breaker = get(&runs, PolicyKind::RustfsBreaker);
    for r in &runs {
        // A quorum of 3 of 4 survives the cut of one, but not for n1's own
        // clients (a quarter of them, for 30 s of 50). dsync retries for
        // up to 10 min instead of failing: none fails, and what n1's
        // clients (and those they contend with after the heal) still wait
        // for at the end is neither acquired nor failed.
        if r.policy == PolicyKind::Dsync {
            assert_eq!(r.failed_acquisitions, 0);
            assert!(r.retried_attempts > 0);
            assert!(r.acquired * 10 > r.acquisitions * 6, "{r:?}");
        } else {
            assert!(r.acquired * 10 > r.acquisitions * 8, "{:?}", r.policy);
        }
        assert_eq!(r.timeouts.live(), r.timeouts.healthy + r.timeouts.slow);
    }
    // Timeouts of n1 while cut off are of an unreachable ("dead") peer.
    assert!(rustfs.timeouts.dead > 100, "{rustfs:?}");
    assert!(breaker.counters.skipped > 100, "{breaker:?}");
    // Per node, after its 3 timeouts, a probe per window (1.5 s, doubling):
    // at most about 3 + 33 / 1.5 per node, twice for those in flight.
    // Six channels are cut (n1 to each other node, and back), each
    // carrying 8 clients x 20 / 4 = 40 lock RPCs a second. The breaker
    // opens on the first deadlines, 3 s into the cut, after which the
    // lock RPCs of 24 s or more are skipped, not sent: at least 80% of
    // 6 x 40 x 24.
    let per_channel = 8 * 20 / 4;
    assert!(
        breaker.counters.skipped * 10 >= 8 * 6 * per_channel * 24,
        "{breaker:?}"
    );
    // What the breaker cannot stop is what was in flight when it opened.
    assert!(
        breaker.counters.timeouts.lock <= 6 * (per_channel * 3 + 2 * (3 + 33 * 2 / 3)),
        "{breaker:?}"
    );
    assert_eq!(rustfs.counters.skipped, 0);
    // After the heal, n1 serves again: the last 10 s see grants from it.
    assert!(breaker.counters.completed > 0);
}

/// Loss on lock traffic delays messages by TCP's retransmissions; runs
/// stay deterministic and locks are still taken.
#[test]
fn loss_on_lock_traffic_is_retransmitted() {
    let lossy = Fault {
        kind: Some(FaultKind::Loss),
        at: Some(Nanos::from_secs(5)),
        duration: Some(Nanos::from_secs(20)),
        probability: Some(0.2),
        ..Fault::default()
    };
    let s = scenario(4, 30, lock_table(20.0), vec![lossy]);
    let a = by_policy(&s, 8);
    assert_eq!(a, by_policy(&s, 8));
    for r in &a {
        assert!(
            r.acquired * 10 > r.acquisitions * 9,
            "{:?}: {r:?}",
            r.policy
        );
    }
    // 20% loss on every link: some RPCs wait a 200 ms retransmission.
    let clean = by_policy(&scenario(4, 30, lock_table(20.0), vec![]), 8);
    let p99 = |r: &LockOutcome| {
        let mut l = r.latencies_us.clone();
        l.sort_unstable();
        l[l.len() * 99 / 100]
    };
    let (lossy_p99, clean_p99) = (p99(&a[1]), p99(&clean[1]));
    assert!(lossy_p99 >= 200_000, "{lossy_p99} vs {clean_p99}");
    assert!(clean_p99 < 100_000, "{clean_p99}");
}

/// MinIO's dsync waits 1 s per attempt for a quorum and tries again after
/// its backoff for up to 10 min (`drwmutex.go`, `lockBlocking`): with both
/// servers needed (2 of 2) and one frozen for 5 s, RustFS's single 3 s try
/// fails acquisitions, dsync's retries take the lock after the freeze.
#[test]
fn dsync_retries_an_acquisition_until_it_gets_a_quorum() {
    let freeze = fault(FaultKind::Pause, "n1", 10, Some(5));
    let runs = by_policy(&scenario(2, 30, lock_table(4.0), vec![freeze]), 9);
    let dsync = get(&runs, PolicyKind::Dsync);
    let rustfs = get(&runs, PolicyKind::Rustfs);
    assert!(rustfs.failed_acquisitions > 0, "{rustfs:?}");
    assert_eq!(dsync.failed_acquisitions, 0, "{dsync:?}");
    // Each acquisition asked for during the freeze fails an attempt a
    // second, and is taken once n1 runs again.
    assert!(dsync.retried_attempts >= 8 * 5, "{dsync:?}");
    assert_eq!(dsync.acquired, dsync.acquisitions, "{dsync:?}");
    let longest = dsync.latencies_us.iter().max().copied().unwrap_or(0);
    assert!(longest >= 3_000_000, "{longest} us");
}

/// The same freeze at 2.5 times the load tips dsync into a retry storm
/// that outlasts it: attempts pile up behind the frozen server, each
/// waits 1 s, fails, releases on every server and tries again, and the
/// servers' queues, fed by the retries, stay past the 1 s wait after the
/// freeze ends (a metastable failure; RustFS's single try does not do
/// this).
#[test]
fn dsync_retries_can_outlast_the_fault_that_started_them() {
    let freeze = fault(FaultKind::Pause, "n1", 10, Some(5));
    let runs = by_policy(&scenario(2, 30, lock_table(10.0), vec![freeze]), 9);
    let dsync = get(&runs, PolicyKind::Dsync);
    let rustfs = get(&runs, PolicyKind::Rustfs);
    // RustFS fails what was asked during the freeze, and recovers.
    assert!(rustfs.acquired * 10 > rustfs.acquisitions * 7, "{rustfs:?}");
    // dsync acquires nothing after the freeze: what it took is what was
    // asked before it (10 s of 30).
    assert!(dsync.acquired * 2 < dsync.acquisitions, "{dsync:?}");
    assert!(dsync.retried_attempts > dsync.acquisitions, "{dsync:?}");
}
