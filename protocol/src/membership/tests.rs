//! Unit tests of the Orleans agent, driven by hand: the table's replies and
//! the peers' messages are written out step by step.

use std::sync::Arc;

use super::*;
use crate::time::Nanos;

fn silo(node: u32) -> SiloId {
    SiloId {
        node,
        generation: 0,
    }
}

fn s(x: u64) -> Nanos {
    Nanos::from_secs(x)
}

fn row(node: u32, status: SiloStatus, alive: Nanos) -> Row {
    Row {
        silo: silo(node),
        status,
        votes: Vec::new(),
        i_am_alive: alive,
        etag: 0,
    }
}

fn view(version: u64, rows: Vec<Row>) -> Arc<TableView> {
    Arc::new(TableView { version, rows })
}

fn reply(agent: &mut OrleansAgent, now: Nanos, result: TableResult) -> Option<TableRequest> {
    let id = OpId(agent.next_op_for_tests() - 1);
    agent.handle_table_reply(now, TableReply { id, result });
    agent.poll_table()
}

/// An agent for node 0 that joined a cluster of `others` Active silos.
fn joined(others: u32) -> OrleansAgent {
    let mut a = OrleansAgent::new(OrleansConfig::default(), JudgeSpec::Classic, silo(0), s(0));
    assert_eq!(a.poll_table().unwrap().op, TableOp::ReadAll);
    let mut rows: Vec<Row> = (1..=others)
        .map(|n| row(n, SiloStatus::Active, s(0)))
        .collect();
    let insert = reply(&mut a, s(0), TableResult::Read(view(1, rows.clone()))).unwrap();
    assert!(matches!(insert.op, TableOp::Insert { version: 1, .. }));
    assert_eq!(
        reply(&mut a, s(0), TableResult::Written).unwrap().op,
        TableOp::ReadAll
    );
    rows.insert(0, row(0, SiloStatus::Joining, s(0)));
    assert!(reply(&mut a, s(0), TableResult::Read(view(2, rows.clone()))).is_none());
    // The connectivity check: a ping to every Active silo, all answered.
    // (After the gossip of the insert.)
    let pings: Vec<Transmit> = std::iter::from_fn(|| a.poll_transmit())
        .filter(|t| matches!(t.message, Message::Ping { .. }))
        .collect();
    assert_eq!(pings.len(), others as usize);
    for t in pings {
        let Message::Ping { probe } = t.message else {
            panic!("a ping")
        };
        a.handle_message(s(0), t.to, Message::Pong { probe });
    }
    let activate = a.poll_table().unwrap();
    assert!(matches!(
        activate.op,
        TableOp::Update {
            status: SiloStatus::Active,
            version: 2,
            ..
        }
    ));
    let first = reply(&mut a, s(0), TableResult::Written).unwrap();
    assert_eq!(a.status(), SiloStatus::Active);
    assert!(std::iter::from_fn(|| a.poll_event()).any(|e| e == AgentEvent::Joined));
    // Gossip of the write to every Active silo.
    assert_eq!(
        std::iter::from_fn(|| a.poll_transmit()).count(),
        others as usize
    );
    rows[0].status = SiloStatus::Active;
    // IAmAlive, then the refresh.
    assert!(matches!(first.op, TableOp::IAmAlive { .. }));
    reply(&mut a, s(0), TableResult::Written);
    reply(&mut a, s(0), TableResult::Read(view(3, rows)));
    a
}

#[test]
fn joins_then_probes_its_ring() {
    let mut a = joined(4);
    assert_eq!(a.monitored().count(), 4);
    a.handle_timeout(s(0));
    let pings = std::iter::from_fn(|| a.poll_transmit())
        .filter(|t| matches!(t.message, Message::Ping { .. }))
        .count();
    assert_eq!(pings, 4);
    assert_eq!(a.poll_timeout(), Some(s(5)));
}

#[test]
fn missed_probes_go_indirect_then_vote_with_the_intermediary() {
    let mut a = joined(4);
    let c = OrleansConfig {
        connection_liveness_check: false,
        ..Default::default()
    };
    a.config = c;
    let target = silo(2);
    let mut now = s(0);
    let mut indirect = None;
    // Everyone but the target answers; the target never does.
    for _ in 0..40 {
        a.handle_timeout(now);
        for t in std::iter::from_fn(|| a.poll_transmit()).collect::<Vec<_>>() {
            match t.message {
                Message::Ping { probe } if t.to != target => {
                    a.handle_message(now, t.to, Message::Pong { probe })
                }
                Message::IndirectPing {
                    probe,
                    target: via_target,
                } => {
                    assert_eq!(via_target, target);
                    indirect = Some((t.to, probe));
                }
                _ => {}
            }
        }
        if indirect.is_some() {
            break;
        }
        now = a.poll_timeout().unwrap();
    }
    // Two direct misses, then the third probe goes through an intermediary,
    // with one more period to wait.
    let (via, probe) = indirect.expect("an indirect probe");
    assert_ne!(via, target);
    assert_eq!(now, s(10));
    let outcome = IndirectOutcome::Failed;
    a.handle_message(now, via, Message::IndirectReply { probe, outcome });
    let events: Vec<AgentEvent> = std::iter::from_fn(|| a.poll_event()).collect();
    assert!(events.contains(&AgentEvent::SuspicionStarted { target }));
    // The suspicion reads the table, then writes the two votes: with 5
    // Active silos two votes declare.
    let read = a.poll_table().unwrap();
    assert_eq!(read.op, TableOp::ReadAll);
    let rows = (0..5).map(|n| row(n, SiloStatus::Active, now)).collect();
    let write = reply(&mut a, now, TableResult::Read(view(3, rows))).unwrap();
    let TableOp::Update {
        silo: who,
        status,
        votes,
        ..
    } = write.op
    else {
        panic!("a vote")
    };
    assert_eq!(who, target);
    assert_eq!(status, SiloStatus::Dead);
    assert_eq!(
        votes.iter().map(|v| v.voter).collect::<Vec<_>>(),
        [silo(0), via]
    );
}

#[test]
fn a_silo_that_reads_itself_dead_terminates() {
    let mut a = joined(3);
    let mut rows: Vec<Row> = (0..4).map(|n| row(n, SiloStatus::Active, s(0))).collect();
    rows[0].status = SiloStatus::Dead;
    a.handle_message(s(1), silo(1), Message::Gossip { version: 9 });
    let read = a.poll_table().unwrap();
    assert_eq!(read.op, TableOp::ReadAll);
    reply(&mut a, s(1), TableResult::Read(view(9, rows)));
    assert_eq!(a.status(), SiloStatus::Dead);
    assert!(std::iter::from_fn(|| a.poll_event()).any(|e| e == AgentEvent::Terminated));
    assert_eq!(a.poll_timeout(), None);
}

#[test]
fn a_recently_heard_peer_gets_no_vote() {
    let mut a = joined(4);
    let target = silo(3);
    // A message from the target a moment ago.
    a.handle_message(s(1), target, Message::Gossip { version: 0 });
    a.enqueue_suspect(target, None);
    a.handle_timeout(s(2));
    let read = a.poll_table().unwrap();
    assert_eq!(read.op, TableOp::ReadAll);
    let rows = (0..5).map(|n| row(n, SiloStatus::Active, s(2))).collect();
    assert!(reply(&mut a, s(2), TableResult::Read(view(3, rows))).is_none());
    assert!(std::iter::from_fn(|| a.poll_event()).any(|e| e == AgentEvent::VoteWithheld { target }));
}

#[test]
fn a_conflict_backs_off_and_doubles() {
    let mut a = joined(4);
    a.config.connection_liveness_check = false;
    let target = silo(3);
    a.enqueue_suspect(target, None);
    a.handle_timeout(s(1));
    let rows: Vec<Row> = (0..5).map(|n| row(n, SiloStatus::Active, s(1))).collect();
    for (attempt, wait) in [(0u32, 2u64), (1, 4), (2, 8)] {
        let read = a.poll_table().unwrap();
        assert_eq!(read.op, TableOp::ReadAll, "attempt {attempt}");
        let now = a.now;
        reply(&mut a, now, TableResult::Read(view(3, rows.clone())));
        reply(&mut a, now, TableResult::Conflict);
        let due = a.poll_timeout().unwrap();
        assert!(due <= now + s(wait));
        a.handle_timeout(now + s(wait));
    }
}
