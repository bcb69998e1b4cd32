//! What a placement run's key ledgers cost ([`crate::placement`]): the
//! requests placed through every distribution, the keys placed for every
//! client (each ledger starts by computing every client's owner of every
//! key under each distribution, and a client whose view changes computes
//! its keys again), and the memory of the ledgers and of the keys.
//!
//! Requests are counted as simulated events (a placed request costs
//! [`EVENTS_PER_PLACED_REQUEST`] of one); keys placed are work of their own
//! ([`Pace::KeyPlacement`]), which no event counts: with 10 million keys a
//! run of 20 clients and six distributions places 1.2 G keys before its
//! first request.

use super::{Pace, Source};
use crate::scenario::{PlacementSetup, Scenario};

/// A placed request's cost in simulated events (drawing it, and looking up
/// its owner under each distribution, is cheaper than an event): measured
/// on `fdlab bench --only placement`.
pub const EVENTS_PER_PLACED_REQUEST: f64 = 0.2;
/// Bytes of one key's name: a `String` in the setup's list (24) and its
/// heap block (malloc's 32 for the 15 to 17 characters of `ns0.item.123456`).
const KEY_BYTES: u64 = 56;
/// Bytes of one key's hash under one distribution and server order.
const HASH_BYTES: u64 = 8;
/// Bytes of one key's owner with every server live, per distribution and
/// server order (`Setup`'s `primary`).
const PRIMARY_BYTES: u64 = 1;
/// Bytes of one key's share of the Zipf table (its cumulative probability).
const ZIPF_BYTES: u64 = 8;
/// Bytes a ledger holds per key besides the owners and counts: the servers
/// holding it and holding its freshest copy (8 each), since when it has
/// been split (8) and its count of distinct owners (1). `ledger.rs`'s
/// `Book`.
const LEDGER_KEY_BYTES: u64 = 25;
/// Bytes of one client's owner of one key (a server index).
const OWNER_BYTES: u64 = 1;
/// Bytes of one count of clients per key and owner slot (`u16`).
const COUNT_BYTES: u64 = 2;
/// View changes of each client per fault: marked dead, then alive again.
const VIEW_CHANGES_PER_FAULT: f64 = 2.0;
/// Seconds in an hour, for random faults' rates per node-hour.
const SECONDS_PER_HOUR: f64 = 3600.0;

/// A placement run's sources and the bytes its ledgers and keys hold.
pub(super) struct Cost {
    pub sources: Vec<Source>,
    pub held: u64,
}

/// The cost of one run of `scenario` whose clients place keys as `p`
/// says: `subjects` ledgers are run (one per detector, or one per
/// membership judge), `at_once` of them held at once (every detector's of
/// a run; a membership run's one judge); `what` names the subjects.
pub(super) fn cost(
    scenario: &Scenario,
    p: &PlacementSetup,
    subjects: u64,
    at_once: u64,
    what: &str,
) -> Cost {
    let servers = u64::from(p.servers.max(1));
    let clients = scenario.monitored_pairs() / servers;
    let kinds = p.kinds().len() as u64;
    let keys = u64::from(p.keys);
    let requests = p.requests_per_second * clients as f64 * scenario.duration.as_secs_f64();
    let changes = VIEW_CHANGES_PER_FAULT * faults(scenario);
    // Every client's keys at the ledger's start, and again at each of its
    // view changes (the selective distributions look at every key too,
    // and recompute the dead server's).
    let placed = (subjects * kinds * clients) as f64 * keys as f64 * (1.0 + changes);
    let sources = vec![
        Source::simulated(
            "placement.requests_per_second",
            format!(
                "{clients} clients requesting {}/s, placed by {kinds} distributions for each of {subjects} {what}",
                p.requests_per_second
            ),
            requests * (kinds * subjects) as f64 * EVENTS_PER_PLACED_REQUEST,
            Pace::Engine,
        ),
        Source {
            key: "placement.keys".into(),
            what: format!(
                "{keys} keys placed for each of {clients} clients by {kinds} distributions, at the start and at about {changes:.0} view changes, for each of {subjects} {what}"
            ),
            events: 0.0,
            pace: Pace::KeyPlacement,
            work: placed,
        },
    ];
    let per_ledger =
        keys.saturating_mul(clients * OWNER_BYTES + COUNT_BYTES * (servers + 1) + LEDGER_KEY_BYTES);
    let orders = 1 + p.orders.len() as u64;
    let setup =
        keys.saturating_mul(KEY_BYTES + ZIPF_BYTES + orders * kinds * (HASH_BYTES + PRIMARY_BYTES));
    let held = per_ledger
        .saturating_mul(kinds * at_once)
        .saturating_add(setup);
    Cost { sources, held }
}

/// The faults of a run that may change the clients' views: every fault
/// written (whatever node it hits: a server's, or one that delays the
/// verdicts) and the random faults a run draws on average.
fn faults(scenario: &Scenario) -> f64 {
    let nodes = scenario.topology.node_names().len() as f64;
    let hours = scenario.duration.as_secs_f64() / SECONDS_PER_HOUR;
    let random: f64 = scenario
        .random_faults
        .iter()
        .map(|r| r.rate_per_node_hour.max(0.0) * nodes * hours)
        .sum();
    scenario.faults.len() as f64 + random
}
