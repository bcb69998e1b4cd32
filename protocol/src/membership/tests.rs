//! Unit tests of the Orleans agent, rule by rule, each naming the Orleans
//! source line it checks (v10.2.2 / main e558829b). A small world plays
//! the table (a compare-and-swap table like the simulator's) and the other
//! silos (answering, silent, or refusing connections).

use std::collections::{BTreeMap, BTreeSet};
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

fn ms(x: u64) -> Nanos {
    Nanos::from_millis(x)
}

/// What an intermediary does with an indirect probe.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Relay {
    /// Probes the target as the world says the target behaves, and
    /// answers with this health score.
    Honest { health: u32 },
}

/// A one-silo view of a cluster: the agent under test is `n0`.
struct World {
    a: OrleansAgent,
    rows: BTreeMap<SiloId, Row>,
    version: u64,
    now: Nanos,
    /// Nodes whose connections are refused (crashed), and nodes that are
    /// silent (paused, or cut off).
    down: BTreeSet<u32>,
    silent: BTreeSet<u32>,
    relay: Relay,
    table_down: bool,
    /// Every message the agent sent, in order, and when.
    log: Vec<Transmit>,
    sent_at: Vec<Nanos>,
    /// Indirect requests the world holds back (a silent relay's).
    held: Vec<Transmit>,
    ops: Vec<(Nanos, TableOp)>,
}

impl World {
    /// `n0` joins a cluster of `others` Active silos and becomes Active.
    fn joined(others: u32, config: OrleansConfig) -> World {
        let rows = (1..=others)
            .map(|n| {
                let r = Row {
                    silo: silo(n),
                    status: SiloStatus::Active,
                    votes: Vec::new(),
                    i_am_alive: s(0),
                    etag: 0,
                };
                (r.silo, r)
            })
            .collect();
        let a = OrleansAgent::new(config, JudgeSpec::Classic, silo(0), s(0), 7);
        let mut w = World {
            a,
            rows,
            version: 1,
            now: s(0),
            down: BTreeSet::new(),
            silent: BTreeSet::new(),
            relay: Relay::Honest { health: 0 },
            table_down: false,
            log: Vec::new(),
            sent_at: Vec::new(),
            held: Vec::new(),
            ops: Vec::new(),
        };
        w.settle();
        assert_eq!(w.a.status(), SiloStatus::Active);
        w
    }

    fn view(&self) -> Arc<TableView> {
        Arc::new(TableView::new(
            self.version,
            self.rows.values().cloned().collect(),
        ))
    }

    fn apply(&mut self, op: &TableOp) -> TableResult {
        self.ops.push((self.now, op.clone()));
        if self.table_down {
            return TableResult::Unavailable;
        }
        match op {
            TableOp::ReadAll => {
                // The other live silos keep their IAmAlive fresh.
                for (id, r) in &mut self.rows {
                    let quiet = self.down.contains(&id.node) || self.silent.contains(&id.node);
                    if id.node != 0 && !quiet {
                        r.i_am_alive = self.now;
                    }
                }
                TableResult::Read(self.view())
            }
            TableOp::Insert { row, version } => {
                if *version != self.version || self.rows.contains_key(&row.silo) {
                    return TableResult::Conflict;
                }
                self.rows.insert(row.silo, row.clone());
                self.version += 1;
                TableResult::Written
            }
            TableOp::Update {
                silo,
                status,
                votes,
                etag,
                version,
            } => match self.rows.get_mut(silo) {
                Some(r) if r.etag == *etag && *version == self.version => {
                    r.status = *status;
                    r.votes.clone_from(votes);
                    r.etag += 1;
                    self.version += 1;
                    TableResult::Written
                }
                _ => TableResult::Conflict,
            },
            TableOp::IAmAlive { silo, time } => match self.rows.get_mut(silo) {
                Some(r) => {
                    r.i_am_alive = *time;
                    TableResult::Written
                }
                None => TableResult::Conflict,
            },
        }
    }

    /// Carries out everything the agent asked at this instant.
    fn settle(&mut self) {
        loop {
            let mut busy = false;
            while let Some(req) = self.a.poll_table() {
                busy = true;
                let result = self.apply(&req.op);
                self.a
                    .handle_table_reply(self.now, TableReply { id: req.id, result });
            }
            while let Some(t) = self.a.poll_transmit() {
                busy = true;
                self.log.push(t.clone());
                self.sent_at.push(self.now);
                self.deliver(t);
            }
            if !busy {
                return;
            }
        }
    }

    fn deliver(&mut self, t: Transmit) {
        let now = self.now;
        if self.down.contains(&t.to.node) {
            return self.a.handle_unreachable(now, t.to);
        }
        if self.silent.contains(&t.to.node) {
            return;
        }
        match t.message {
            Message::Ping { probe } => self.a.handle_message(now, t.to, Message::Pong { probe }),
            Message::IndirectPing { probe, target, .. } => match self.relay {
                Relay::Honest { health } => {
                    let reached =
                        !self.down.contains(&target.node) && !self.silent.contains(&target.node);
                    if reached || self.down.contains(&target.node) {
                        let reply = Message::IndirectReply {
                            probe,
                            answered: reached,
                            health,
                        };
                        self.a.handle_message(now, t.to, reply);
                    } else {
                        // The target is silent: the relay answers when its
                        // own wait ends (the test plays that).
                        self.held.push(t);
                    }
                }
            },
            _ => {}
        }
    }

    /// Runs the agent's timers up to `until`; n1 probes the agent at each
    /// step, as its monitors would (else its 10.2 health score counts the
    /// missing probe requests).
    fn run_until(&mut self, until: Nanos) {
        while let Some(t) = self.a.poll_timeout().filter(|&t| t <= until) {
            self.now = t.max(self.now);
            self.a.handle_timeout(self.now, 0);
            self.settle();
            self.probed_by_n1();
        }
        self.now = until;
    }

    fn probed_by_n1(&mut self) {
        if !self.down.contains(&1) && !self.silent.contains(&1) {
            let ping = Message::Ping { probe: u64::MAX };
            self.a.handle_message(self.now, silo(1), ping);
            while self.a.poll_transmit().is_some() {}
        }
    }

    fn events(&mut self) -> Vec<AgentEvent> {
        std::iter::from_fn(|| self.a.poll_event()).collect()
    }

    /// The probes (direct and indirect) sent to or about `target`, with
    /// their send order in the log.
    fn probes_of(&self, target: SiloId) -> Vec<&Message> {
        self.log
            .iter()
            .filter(|t| match &t.message {
                Message::Ping { .. } => t.to == target,
                Message::IndirectPing { target: x, .. } => *x == target,
                _ => false,
            })
            .map(|t| &t.message)
            .collect()
    }

    /// The writes of `target`'s row: when, its status, and its voters.
    fn writes_of(&self, target: SiloId) -> Vec<(Nanos, SiloStatus, Vec<SiloId>)> {
        self.ops
            .iter()
            .filter_map(|(at, op)| match op {
                TableOp::Update {
                    silo,
                    status,
                    votes,
                    ..
                } if *silo == target => {
                    Some((*at, *status, votes.iter().map(|v| v.voter).collect()))
                }
                _ => None,
            })
            .collect()
    }

    fn votes_written_against(&self, target: SiloId) -> Vec<(SiloStatus, Vec<SiloId>)> {
        self.writes_of(target)
            .into_iter()
            .map(|(_, status, voters)| (status, voters))
            .collect()
    }
}

fn main_config() -> OrleansConfig {
    OrleansConfig::of(OrleansVersion::Main)
}

/// MembershipAgent.cs:122-245 (ValidateInitialConnectivity) and
/// MembershipTableManager.cs:393-436: the join reads, inserts its row
/// Joining, pings every Active silo, then writes itself Active; IAmAlive
/// and refresh start at random instants within their periods
/// (MembershipAgent.cs:69, MembershipTableManager.cs:250).
#[test]
fn joins_after_pinging_every_active_silo() {
    let w = World::joined(4, OrleansConfig::default());
    // No timer ran yet: every ping is the connectivity check's.
    let pinged: BTreeSet<SiloId> = w
        .log
        .iter()
        .filter(|t| matches!(t.message, Message::Ping { .. }))
        .map(|t| t.to)
        .collect();
    assert_eq!(pinged.len(), 4);
    assert_eq!(w.rows[&silo(0)].status, SiloStatus::Active);
    let alive = w.a.lanes[1].wake.unwrap();
    let refresh = w.a.lanes[2].wake.unwrap();
    assert!(alive < s(30) && refresh < s(60), "{alive} {refresh}");
    assert_eq!(w.a.monitored().count(), 4);
}

/// SiloHealthMonitor.cs:169 (10.2) and :181 (main): each peer's first probe
/// comes after a random delay within `probe_timeout`; 10.2 then probes
/// every `probe_timeout` after the previous probe began (AsyncTimer.cs:49).
#[test]
fn the_10_2_probe_period_is_probe_timeout() {
    let mut w = World::joined(4, OrleansConfig::default());
    let start = w.log.len();
    w.run_until(s(5));
    let first: Vec<_> = w.log[start..]
        .iter()
        .filter(|t| matches!(t.message, Message::Ping { .. }))
        .collect();
    assert_eq!(first.len(), 4, "one probe each within the first 5 s");
    w.run_until(s(60));
    let n = w.probes_of(silo(2)).len();
    // The connectivity ping, then one probe every 5 s: 12 in 60 s.
    assert_eq!(n, 13, "{n}");
}

/// PhiAccrualFailureDetector.cs (main): after four answered probes the wait
/// and period are learned: mean round trip + probe_timeout / 2, so a LAN
/// peer is probed every ~2.5 s (SiloHealthMonitor.cs:246-257).
#[test]
fn main_learns_a_period_of_about_two_and_a_half_seconds() {
    let mut w = World::joined(4, main_config());
    w.run_until(s(60));
    let n = w.probes_of(silo(2)).len();
    // Four probes 5 s apart (20 s), then every ~2.5 s (0 ms round trips:
    // the learned timeout is exactly 2.5 s): 1 + 4 + 16 = 21 at most.
    assert!((19..=22).contains(&n), "{n}");
}

/// A crashed silo refuses connections: each direct probe fails at once
/// (MessageCenter rejects it); after `limit - 1` failures the next probe
/// goes through a random intermediary (SiloHealthMonitor.cs:192 / :206),
/// whose probe fails too, and the failed indirect probe votes with the
/// intermediary (ClusterHealthMonitor.cs:331-333): two votes declare
/// (MembershipTableManager.cs:886-898), the killer appended once more
/// (DeclareDead, AddSuspector, line 928).
#[test]
fn a_crashed_silo_is_declared_after_two_refusals_and_a_failed_indirect_probe() {
    for (config, by) in [(OrleansConfig::default(), s(20)), (main_config(), s(15))] {
        let version = config.version;
        let mut w = World::joined(4, config);
        w.run_until(s(30));
        let target = silo(2);
        w.down.insert(2);
        w.a.handle_unreachable(w.now, target);
        w.settle();
        w.run_until(w.now + by);
        let written = w.votes_written_against(target);
        assert_eq!(written.len(), 1, "{version}: {written:?}");
        let (status, voters) = &written[0];
        assert_eq!(*status, SiloStatus::Dead, "{version}");
        assert_eq!(voters.len(), 3, "{version}: me, the intermediary, me again");
        assert_eq!(voters[0], silo(0));
        assert_eq!(voters[2], silo(0));
        assert_ne!(voters[1], target);
        assert!(w.events().contains(&AgentEvent::Voted {
            target,
            declared: true
        }));
    }
}

/// SiloHealthMonitor.cs:209 (10.2) hands the intermediary the whole
/// timeout; main leaves it `timeout / (2 + score)` less (:225, :310-318).
#[test]
fn the_intermediary_waits_the_whole_timeout_in_10_2_and_less_in_main() {
    for (config, expect) in [
        (OrleansConfig::default(), s(10)),
        (main_config(), ms(2_502)),
    ] {
        let version = config.version;
        let mut w = World::joined(4, config);
        w.run_until(s(60));
        w.silent.insert(2);
        w.run_until(s(100));
        let wait = w
            .log
            .iter()
            .find_map(|t| match t.message {
                Message::IndirectPing { wait, .. } => Some(wait),
                _ => None,
            })
            .expect("an indirect probe");
        // main: 2 x 2.5 s learned (0 ms round trips: exactly 2.5 s), less half.
        let expect = if version == OrleansVersion::Main {
            ms(2_500)
        } else {
            expect
        };
        assert_eq!(wait, expect, "{version}");
    }
}

/// 10.2: a silent target makes the requester's timeout fire before the
/// intermediary's answer can come (SiloHealthMonitor.cs:209, 367-372): the
/// probe is "unknown", the failure count stays, every later probe is
/// indirect again, and no vote is ever asked.
#[test]
fn in_10_2_a_silent_target_is_never_voted_against() {
    let mut w = World::joined(4, OrleansConfig::default());
    w.run_until(s(30));
    w.silent.insert(2);
    w.run_until(s(200));
    assert!(w.votes_written_against(silo(2)).is_empty());
    let indirect = w
        .probes_of(silo(2))
        .iter()
        .filter(|m| matches!(m, Message::IndirectPing { .. }))
        .count();
    assert!(indirect > 10, "{indirect}");
}

/// main: the intermediary answers "failed" in time, so a silent target is
/// voted against, but only once nothing came from it for
/// `max_probe_timeout x limit` = 60 s on its still-open connection
/// (ClusterHealthMonitor.cs:365-382); a refused connection lets the vote
/// through at once (`ConnectionCanary_AllowsVoteWhenNoConnection`).
#[test]
fn main_holds_votes_while_the_connection_is_open_and_recent() {
    let mut w = World::joined(4, main_config());
    w.run_until(s(30));
    w.silent.insert(2);
    w.relay = Relay::Honest { health: 0 };
    let quiet_since = s(30);
    // The silent target's relay answers at the end of its wait: play it.
    let mut t = w.now;
    while t < s(140) {
        t = w.a.poll_timeout().unwrap();
        w.now = t;
        w.a.handle_timeout(t, 0);
        w.settle();
        for held in std::mem::take(&mut w.held) {
            if let Message::IndirectPing { probe, .. } = held.message {
                let reply = Message::IndirectReply {
                    probe,
                    answered: false,
                    health: 0,
                };
                w.a.handle_message(t, held.to, reply);
                w.settle();
            }
        }
    }
    let events = w.events();
    let withheld = events
        .iter()
        .filter(|e| matches!(e, AgentEvent::VoteWithheld { .. }))
        .count();
    assert!(withheld >= 1, "{events:?}");
    let written = w.writes_of(silo(2));
    assert!(!written.is_empty(), "{events:?}");
    // The first vote came only once 60 s passed since the last message.
    let first = written[0].0;
    assert!(
        first - quiet_since > s(60) && first - quiet_since < s(70),
        "{first}"
    );
}

/// 10.2 has no connection-liveness check: a recently heard silo is voted
/// against as soon as the count says so.
#[test]
fn the_10_2_agent_votes_despite_recent_messages() {
    let mut w = World::joined(4, OrleansConfig::default());
    w.run_until(s(30));
    w.a.handle_message(w.now, silo(3), Message::Pong { probe: u64::MAX });
    w.a.suspect(silo(3), None);
    w.a.handle_timeout(w.now, 0);
    w.settle();
    assert_eq!(w.votes_written_against(silo(3)).len(), 1);
}

/// An intermediary that reports a failure with a health score above 0 is
/// not believed: "unknown", recused until the view changes; 10.2 probes
/// again 250 ms later (SiloHealthMonitor.cs:211-218), main at its period
/// (:228-234). Once every intermediary is recused the probes go direct
/// again (no silo left to go through, line 192 / 206) and the count of
/// failures, which the unknowns left at 2, reaches the limit.
#[test]
fn an_unwell_intermediarys_failure_is_unknown_and_it_is_recused() {
    for config in [OrleansConfig::default(), main_config()] {
        let version = config.version;
        let mut w = World::joined(4, config);
        w.run_until(s(30));
        w.down.insert(2);
        w.relay = Relay::Honest { health: 3 };
        w.run_until(s(60));
        let indirect: Vec<(Nanos, SiloId)> = w
            .log
            .iter()
            .zip(&w.sent_at)
            .filter(|(t, _)| matches!(t.message, Message::IndirectPing { .. }))
            .map(|(t, &at)| (at, t.to))
            .collect();
        // Until the vote changes the view, each intermediary once.
        let first = &indirect[..3];
        let mut vias: Vec<SiloId> = first.iter().map(|&(_, v)| v).collect();
        vias.sort_unstable();
        assert_eq!(vias, [silo(1), silo(3), silo(4)], "{version}: each once");
        let gaps: Vec<Nanos> = first.windows(2).map(|p| p[1].0 - p[0].0).collect();
        match version {
            OrleansVersion::V10_2 => assert!(gaps.iter().all(|&g| g == ms(250)), "{gaps:?}"),
            OrleansVersion::Main => assert!(gaps.iter().all(|&g| g > s(2)), "{gaps:?}"),
        }
        // Then a direct failure, the third, and a vote alone.
        let written = w.votes_written_against(silo(2));
        assert!(!written.is_empty(), "{version}");
        assert_eq!(written[0].1, [silo(0)], "{version}: no intermediary vote");
    }
}

/// TryToSuspectOrKill only queues the request (MembershipTableManager.cs
/// 820-824): probing goes on while the table is down, and the suspect loop
/// retries after `ExponentialBackoff(1 s, 1 min, 2 s).Next(failures)`
/// (lines 708-765), the request queued again.
#[test]
fn probing_goes_on_while_the_vote_waits_for_the_table() {
    let mut w = World::joined(4, main_config());
    w.run_until(s(30));
    w.table_down = true;
    w.down.insert(2);
    w.run_until(s(90));
    let probes = w.probes_of(silo(2)).len();
    assert!(probes > 10, "{probes}");
    assert!(w.votes_written_against(silo(2)).is_empty());
    let failures = w.a.lanes[3].failures;
    assert!(failures >= 2, "{failures}");
    w.table_down = false;
    w.run_until(s(160));
    let written = w.votes_written_against(silo(2));
    assert_eq!(written.first().map(|w| w.0), Some(SiloStatus::Dead));
}

/// InnerTryToSuspectOrKill (MembershipTableManager.cs:866-874): a target
/// already holding `num_votes_for_death_declaration` fresh votes but not
/// Dead makes the voter stop itself, "Found a bug! Will stop."
#[test]
fn a_voter_that_finds_a_full_row_not_dead_kills_itself() {
    let mut w = World::joined(4, OrleansConfig::default());
    w.run_until(s(30));
    let target = silo(3);
    let row = w.rows.get_mut(&target).unwrap();
    row.votes = vec![
        Vote {
            voter: silo(1),
            time: s(29),
        },
        Vote {
            voter: silo(4),
            time: s(29),
        },
    ];
    w.a.suspect(target, None);
    w.a.handle_timeout(w.now, 0);
    w.settle();
    assert_eq!(w.a.status(), SiloStatus::Dead);
    assert!(w.events().contains(&AgentEvent::KilledItself { target }));
}

/// A compare-and-swap that loses is not retried by the suspect loop
/// (MembershipTableManager.cs:902); the next failed probe asks again.
#[test]
fn a_lost_vote_write_is_not_retried() {
    let mut w = World::joined(4, OrleansConfig::default());
    w.run_until(s(30));
    w.a.suspect(silo(3), None);
    w.a.handle_timeout(w.now, 0);
    let read = w.a.poll_table().unwrap();
    assert_eq!(read.op, TableOp::ReadAll);
    let view = w.view();
    w.a.handle_table_reply(
        w.now,
        TableReply {
            id: read.id,
            result: TableResult::Read(view),
        },
    );
    let write = w.a.poll_table().unwrap();
    assert!(matches!(write.op, TableOp::Update { .. }));
    w.a.handle_table_reply(
        w.now,
        TableReply {
            id: write.id,
            result: TableResult::Conflict,
        },
    );
    assert!(w.a.poll_table().is_none());
    assert!(w.a.suspicions.is_empty());
    assert_eq!(w.a.lanes[3].wake, None);
}

/// A gossiped snapshot is taken without a table read
/// (MembershipSystemTarget.MembershipChangeNotification, RefreshFromSnapshot);
/// one that holds the silo Dead stops it.
#[test]
fn a_gossiped_snapshot_is_taken_and_a_dead_row_stops_the_silo() {
    let mut w = World::joined(3, OrleansConfig::default());
    let reads = w.ops.len();
    w.rows.get_mut(&silo(0)).unwrap().status = SiloStatus::Dead;
    w.version += 5;
    let view = w.view();
    w.a.handle_message(s(1), silo(1), Message::Gossip { view });
    assert_eq!(w.ops.len(), reads);
    assert_eq!(w.a.status(), SiloStatus::Dead);
    assert!(w.events().contains(&AgentEvent::Terminated));
    assert_eq!(w.a.poll_timeout(), None);
}

/// ClusterHealthMonitor.cs:215 and 194-199: a Joining silo probes only the
/// silos with fresh votes against them or a stale IAmAlive; 10.2 scales
/// its waits by the score of a silo not Active, 8
/// (LocalSiloHealthMonitor.cs:160), main by its Local score only.
#[test]
fn a_joining_silo_watches_only_suspected_silos() {
    let mut a = OrleansAgent::new(
        OrleansConfig::default(),
        JudgeSpec::Classic,
        silo(0),
        s(200),
        1,
    );
    let mut rows: Vec<Row> = (0..4)
        .map(|n| Row {
            silo: silo(n),
            status: SiloStatus::Active,
            votes: Vec::new(),
            i_am_alive: s(190),
            etag: 0,
        })
        .collect();
    rows[0].status = SiloStatus::Joining;
    rows[2].votes = vec![Vote {
        voter: silo(1),
        time: s(195),
    }];
    rows[3].i_am_alive = s(10);
    a.process_view(s(200), Arc::new(TableView::new(4, rows)));
    assert_eq!(a.monitored().collect::<Vec<_>>(), [silo(2), silo(3)]);
    assert_eq!(a.local_score(s(200), s(5)), 8);
}

/// The intermediary's side (MembershipSystemTarget.ProbeIndirectly): it
/// probes with the wait it was given and answers with its own score, 10.2's
/// read when the request came (line 82).
#[test]
fn an_intermediary_probes_with_the_wait_it_was_given() {
    let mut w = World::joined(4, OrleansConfig::default());
    w.run_until(s(30));
    let now = w.now;
    let request = Message::IndirectPing {
        probe: 77,
        target: silo(3),
        wait: s(4),
    };
    w.a.handle_message(now, silo(1), request);
    let ping = w.a.poll_transmit().unwrap();
    assert_eq!(ping.to, silo(3));
    // No answer: the relay fails at its wait's end, not before.
    assert!(w.a.poll_timeout().unwrap() <= now + s(4));
    w.a.handle_timeout(now + s(4), 0);
    let reply = std::iter::from_fn(|| w.a.poll_transmit())
        .find(|t| matches!(t.message, Message::IndirectReply { .. }))
        .unwrap();
    assert_eq!(reply.to, silo(1));
    assert!(matches!(
        reply.message,
        Message::IndirectReply {
            probe: 77,
            answered: false,
            ..
        }
    ));
}
