//! What a resolved fault record says it holds.

use fdlab_protocol::Nanos;

use super::Schedule;
use crate::rng::Streams;
use crate::scenario::{Fault, FaultKind, MonitorCount, PartitionShape, Scenario, Topology};

fn partition(shape: Option<PartitionShape>, node: Option<&str>, nodes: &[&str]) -> Fault {
    Fault {
        kind: Some(FaultKind::Partition),
        shape,
        node: node.map(String::from),
        nodes: (!nodes.is_empty()).then(|| nodes.iter().map(|n| n.to_string()).collect()),
        at: Some(Nanos::from_secs(10)),
        duration: Some(Nanos::from_secs(5)),
        ..Fault::default()
    }
}

#[test]
fn a_partition_holds_its_named_side_but_the_bridge() {
    let topology = Topology::Mesh {
        nodes: 8,
        monitors_per_node: MonitorCount::All,
    };
    let s = Scenario {
        faults: vec![
            partition(None, Some("n2"), &[]),
            partition(Some(PartitionShape::Halves), None, &["n5", "n1", "n3"]),
            partition(
                Some(PartitionShape::Bridge),
                Some("n4"),
                &["n6", "n4", "n0"],
            ),
            Fault {
                kind: Some(FaultKind::Pause),
                node: Some("n7".into()),
                at: Some(Nanos::from_secs(1)),
                duration: Some(Nanos::from_secs(1)),
                ..Fault::default()
            },
        ],
        ..Scenario::new("p", topology, Nanos::from_secs(60))
    };
    let names = s.topology.node_names();
    let schedule = Schedule::resolve(&s, &names, &Streams::new(1));
    let held: Vec<&[u32]> = schedule.records.iter().map(|r| &r.held[..]).collect();
    assert_eq!(held, [&[2][..], &[1, 3, 5], &[0, 6], &[7]]);
}
