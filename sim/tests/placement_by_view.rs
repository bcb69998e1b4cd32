//! Key placement by membership view (SPEC §9): memcached clients that are
//! members of the servers' cluster and mark a server dead while their own
//! view holds it Dead.

mod common;

use common::{fault, fixed, mesh, ms};
use fdlab_protocol::membership::{OrleansConfig, OrleansVersion};
use fdlab_protocol::placement::DistributionKind;
use fdlab_protocol::Nanos;
use fdlab_sim::membership::{judges, run};
use fdlab_sim::placement::{evaluate_cluster, Setup};
use fdlab_sim::scenario::{Expect, FaultKind, MembershipSetup, PlacementSetup};
use fdlab_sim::valid::ValidScenario;

const SERVERS: u32 = 4;
const NODES: u32 = 10;

/// Server n1 pauses from 60 s for `pause` s (tolerated), server n2 crashes
/// at 200 s for good; 6 clients, Orleans' classic judge (main, which
/// declares a silo paused for over a minute; 10.2 never does) and SWIM.
fn cluster(pause: u64) -> ValidScenario {
    let mut paused = fault(FaultKind::Pause, "n1", 60_000, Some(pause * 1_000));
    paused.expect = Some(Expect::Tolerate);
    let mut s = mesh(NODES, vec![fixed("fixed-3s", 1_000, 3_000)], Vec::new());
    s.duration = ms(360_000);
    s.faults = vec![paused, fault(FaultKind::Crash, "n2", 200_000, None)];
    // The judges Orleans and SWIM bring: no detector of its own.
    s.detectors.clear();
    s.membership = Some(MembershipSetup {
        judges: Some(vec!["classic".into(), "swim".into()]),
        restart_after: Some(Nanos::from_secs(30)),
        orleans: OrleansConfig::of(OrleansVersion::Main),
        ..MembershipSetup::default()
    });
    s.placement = Some(PlacementSetup {
        servers: SERVERS,
        keys: 2_000,
        zipf: 0.99,
        requests_per_second: 50.0,
        distributions: None,
        weights: None,
        hash: None,
        twemproxy_hash: None,
        failover: true,
        namespaces: 2,
        orders: Vec::new(),
    });
    ValidScenario::new(s).unwrap()
}

fn setup(s: &ValidScenario) -> Setup {
    Setup::new(s.placement.as_ref().unwrap(), &s.topology.node_names()).unwrap()
}

#[test]
fn every_client_follows_its_view_of_a_crashed_server() {
    let s = cluster(5);
    assert_eq!(judges(&s).len(), 2);
    for judge in 0..2 {
        let (o, _) = run(&s, 1, judge, false);
        // Every client's view comes to hold n2 Dead after it crashed, and
        // only clients watch, only servers.
        assert!(o
            .views
            .iter()
            .all(|v| v.client >= SERVERS && v.server < SERVERS));
        for client in SERVERS..NODES {
            let seen = o
                .views
                .iter()
                .find(|v| v.client == client && v.server == 2 && v.dead)
                .unwrap_or_else(|| panic!("{}: n{client} never sees n2 Dead", o.judge));
            assert!(seen.at > Nanos::from_secs(200), "{seen:?}");
        }
        // n2's process is down from its crash to the end.
        let down: Vec<_> = o.stopped.iter().filter(|d| d.0 == 2).collect();
        assert_eq!(down.len(), 1, "{:?}", o.stopped);
        assert_eq!(down[0].1.start, Nanos::from_secs(200));
        assert_eq!(down[0].1.end, s.duration);
        let placed = evaluate_cluster(&setup(&s), &s, &o);
        assert_eq!(placed.cells.len(), setup(&s).kinds.len());
        for c in &placed.cells {
            assert_eq!(c.detector, o.judge);
            // Six clients each mark the crashed server dead once: true.
            assert_eq!(c.true_declarations, 6, "{c:?}");
            // Requests to n2 fail until a client's view drops it.
            assert!(c.failed > 0, "{c:?}");
        }
    }
}

#[test]
fn a_long_pause_declared_dead_stops_the_server_and_costs_its_cache() {
    // 90 s: Orleans main's classic judge declares the paused silo (about
    // 60 s, once nothing came from it for the liveness window),
    // which reads itself Dead when it resumes and stops; its host starts
    // it again 30 s later as a new generation.
    let s = cluster(90);
    let (o, _) = run(&s, 1, 0, false);
    assert_eq!(o.judge, "classic");
    let declared: Vec<_> = o
        .declarations
        .iter()
        .filter(|d| d.target.node == 1)
        .collect();
    assert!(
        !declared.is_empty() && declared[0].false_positive,
        "{declared:?}"
    );
    let stop = o
        .stopped
        .iter()
        .find(|d| d.0 == 1)
        .expect("n1 stops itself");
    assert!(stop.1.start >= Nanos::from_secs(150), "{stop:?}");
    assert!(
        stop.1.end > stop.1.start && stop.1.end < s.duration,
        "{stop:?}"
    );
    // Clients see it Dead, then the new generation Active again.
    for client in SERVERS..NODES {
        let mut marks = o
            .views
            .iter()
            .filter(|v| v.client == client && v.server == 1)
            .map(|v| v.dead);
        assert_eq!(marks.next(), Some(true), "n{client}");
        assert_eq!(marks.next(), Some(false), "n{client}");
    }
    let placed = evaluate_cluster(&setup(&s), &s, &o);
    let quiet = cluster(5);
    let (q, _) = run(&quiet, 1, 0, false);
    let calm = evaluate_cluster(&setup(&quiet), &quiet, &q);
    for (c, k) in placed.cells.iter().zip(&calm.cells) {
        // The false declarations are counted, and the lost cache misses.
        assert_eq!(c.false_declarations, 6, "{c:?}");
        assert!(c.misses > k.misses, "{c:?} against {k:?}");
    }
    // Its cache is lost: the keys that return to it miss, where a cache
    // that survived the stop would have served them (stale).
    let mut kept = o.clone();
    kept.stopped.retain(|d| d.0 != 1);
    let survived = evaluate_cluster(&setup(&s), &s, &kept);
    // Modulo-eject excepted: it moves nearly every key at the ejection and
    // back at the return, so reads turn stale all over the cluster either
    // way, and the misses that refill the lost cache make the copies held
    // elsewhere older still.
    for (c, k) in placed.cells.iter().zip(&survived.cells) {
        assert!(c.misses > k.misses, "{c:?} against {k:?}");
        if c.distribution != Some(DistributionKind::ModuloEject) {
            assert!(c.stale < k.stale, "{c:?} against {k:?}");
        }
    }
    // The same run gives the same costs.
    assert_eq!(placed, evaluate_cluster(&setup(&s), &s, &o));
}
