//! The API's names, defaults and errors.

use super::super::{
    check_key, DeadMarks, DistributionKind, NamespaceGroup, Placement, PlacementConfig, Server,
    SockHash, MAX_KEY_BYTES, MAX_TOTAL_WEIGHT, PYTHON_DEAD_RETRY,
};
use super::{owner, placement, servers};
use crate::time::Nanos;

#[test]
fn names_round_trip() {
    for kind in DistributionKind::ALL {
        assert_eq!(DistributionKind::from_name(kind.name()), Some(kind));
        assert_eq!(kind.to_string(), kind.name());
    }
    assert_eq!(DistributionKind::from_name("modulo"), None);
    for hash in SockHash::ALL {
        assert_eq!(SockHash::from_name(hash.name()), Some(hash));
    }
    assert_eq!(
        DistributionKind::ALL.map(DistributionKind::name),
        [
            "sockiopool",
            "namespace",
            "modulo-failover",
            "modulo-eject",
            "ketama",
            "twemproxy-ketama",
            "rendezvous"
        ]
    );
}

#[test]
fn defaults_are_the_clients() {
    let d = PlacementConfig::defaults(DistributionKind::ModuloFailover);
    assert_eq!(d.dead_retry, PYTHON_DEAD_RETRY);
    assert_eq!(d.dead_retry, Nanos::from_secs(30));
    let s = PlacementConfig::defaults(DistributionKind::SockIoPool);
    assert!(s.failover);
    assert_eq!(s.hash, SockHash::NewCompat);
    assert_eq!(s.dead_retry, Nanos::from_secs(1));
    assert_eq!(MAX_KEY_BYTES, 250);
}

fn error(list: &[Server], config: &PlacementConfig) -> String {
    Placement::new(list, config).unwrap_err().to_string()
}

#[test]
fn bad_server_lists_are_named() {
    let d = PlacementConfig::defaults(DistributionKind::Ketama);
    assert!(error(&[], &d).contains("no servers"));
    let e = error(&servers(&["a:1", "b:1"], &[1, 0]), &d);
    assert!(e.contains("`b:1` has weight 0"), "{e}");
    let e = error(&servers(&["a:1", "b:1", "a:1"], &[1, 1, 1]), &d);
    assert!(e.contains("`a:1` is listed twice (servers 1 and 3)"), "{e}");
    let e = error(&servers(&[""], &[1]), &d);
    assert!(e.contains("server 1 has no name"), "{e}");
    let e = error(&servers(&["a:1", "b:1"], &[999_999, 2]), &d);
    assert!(e.contains(&MAX_TOTAL_WEIGHT.to_string()), "{e}");
}

#[test]
fn bad_namespace_groups_are_named() {
    let list = servers(&["a:1", "b:1"], &[1, 1]);
    let with = |groups: Vec<NamespaceGroup>| PlacementConfig {
        groups,
        ..PlacementConfig::defaults(DistributionKind::Namespace)
    };
    let group = |prefix: &str, servers: Vec<usize>| NamespaceGroup {
        prefix: prefix.into(),
        servers,
    };
    let e = error(&list, &with(vec![group("Users", vec![0, 2])]));
    assert!(e.contains("`Users` names server index 2"), "{e}");
    let e = error(&list, &with(vec![group("Users", vec![])]));
    assert!(e.contains("`Users` has no servers"), "{e}");
    let e = error(&list, &with(vec![group("U", vec![0]), group("U", vec![1])]));
    assert!(e.contains("`U` is given twice"), "{e}");
    let e = error(&list, &with(vec![group("a.b", vec![0])]));
    assert!(e.contains("contains a `.`"), "{e}");
    let e = error(&list, &with(vec![group("", vec![0])]));
    assert!(e.contains("is empty"), "{e}");
    let e = error(&list, &with(vec![group("U", vec![1, 1])]));
    assert!(e.contains("names server `b:1` twice"), "{e}");
    // Groups are a namespace setting: other kinds ignore them.
    let ketama = PlacementConfig {
        kind: DistributionKind::Ketama,
        ..with(vec![group("", vec![])])
    };
    assert!(Placement::new(&list, &ketama).is_ok());
}

#[test]
fn a_namespace_without_groups_is_sockiopool() {
    let list = servers(&["a:1", "b:1", "c:1"], &[3, 1, 2]);
    let ns = placement(DistributionKind::Namespace, &list);
    let pool = placement(DistributionKind::SockIoPool, &list);
    for i in 0..1000 {
        let key = format!("Users.{i}");
        for live in [[true; 3], [false, true, true], [true, true, false]] {
            assert_eq!(owner(&ns, &key, &live), owner(&pool, &key, &live), "{key}");
        }
    }
}

#[test]
fn no_live_server_fails_every_request() {
    let list = servers(&["a:1", "b:1"], &[1, 2]);
    for kind in DistributionKind::ALL {
        let p = placement(kind, &list);
        assert_eq!(owner(&p, "k", &[false, false]), None, "{kind}");
        assert!(owner(&p, "k", &[true, true]).is_some(), "{kind}");
    }
}

#[test]
fn a_server_back_from_the_dead_gets_its_keys_back() {
    let list = servers(&["a:1", "b:1", "c:1", "d:1"], &[1, 1, 1, 1]);
    let mut marks = DeadMarks::new(4, Nanos::from_secs(30));
    for kind in DistributionKind::ALL {
        let p = placement(kind, &list);
        let before: Vec<_> = (0..500)
            .map(|i| owner(&p, &format!("k{i}"), marks.live()))
            .collect();
        marks.handle_verdict(Nanos::from_secs(1), 2, true);
        marks.handle_verdict(Nanos::from_secs(2), 2, false);
        marks.handle_timeout(marks.poll_timeout().unwrap());
        let after: Vec<_> = (0..500)
            .map(|i| owner(&p, &format!("k{i}"), marks.live()))
            .collect();
        assert_eq!(before, after, "{kind}");
    }
}

#[test]
fn check_key_is_exported() {
    assert!(check_key(b"ok").is_ok());
}

#[test]
fn a_placement_can_be_shared_between_threads() {
    fn shareable<T: Send + Sync + Clone>() {}
    shareable::<Placement>();
    shareable::<DeadMarks>();
}
