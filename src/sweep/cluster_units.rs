//! The units of a membership sweep: one point, one judge and one seed, a
//! cluster run, kept as its [`ClusterRunTotals`] (what the judge's figures
//! are pooled from) on one line of `units.csv` and the journal. The row is
//! named by the point and the judge's index in `sweep.toml`'s `judges`
//! (judge names are free text; an index needs no quoting).

use fdlab_protocol::Nanos;
use fdlab_reports::cluster::ClusterRunTotals;
use fdlab_sim::membership::outcome::ClusterCounts;

use super::units::{delays, num, parse_delays, small, Figures};

/// Columns of a membership sweep's `units.csv` and journal.
pub const CLUSTER_HEADER: &str = "point,judge,seed,declare_delays_ns,agree_delays_ns,declarations,false_declarations,destroyed_ns,suspicions,suspicions_undeclared,votes,votes_withheld,table_reads,table_writes,table_conflicts,table_unavailable,messages,bytes,self_terminations,join_give_ups,restarts,two_active_generations,node_ns,events,false_declarations_healthy,observer_false_healthy,observer_false_starved";

impl Figures for ClusterRunTotals {
    const HEADER: &'static str = CLUSTER_HEADER;
    const KEY_FIELDS: usize = 2;
    const FIELDS: usize = 27;

    fn write(&self, out: &mut String) {
        let c = &self.counts;
        out.push_str(&format!(
            ",{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}",
            delays(&self.declare),
            delays(&self.agree),
            self.declarations,
            self.false_declarations,
            self.destroyed,
            self.suspicions,
            self.suspicions_undeclared,
            c.votes,
            c.votes_withheld,
            c.table_reads,
            c.table_writes,
            c.table_conflicts,
            c.table_unavailable,
            c.messages,
            c.bytes,
            c.self_terminations,
            c.join_give_ups,
            c.restarts,
            c.two_active_generations,
            self.node_time.as_nanos(),
            self.events,
            self.false_declarations_healthy,
            c.observer_false_healthy,
            c.observer_false_starved
        ));
    }

    fn parse(f: &[&str], at: usize) -> Result<ClusterRunTotals, String> {
        let declare = parse_delays(f[at])?;
        let agree = parse_delays(f[at + 1])?;
        if declare.len() != agree.len() {
            return Err("declaration and agreement delays differ in number".into());
        }
        let count = |i: usize| small(f, at + i);
        Ok(ClusterRunTotals {
            declare,
            agree,
            declarations: count(2)?,
            false_declarations: count(3)?,
            destroyed: num(f, at + 4)?,
            suspicions: count(5)?,
            suspicions_undeclared: count(6)?,
            counts: ClusterCounts {
                votes: count(7)?,
                votes_withheld: count(8)?,
                table_reads: count(9)?,
                table_writes: count(10)?,
                table_conflicts: count(11)?,
                table_unavailable: count(12)?,
                messages: count(13)?,
                bytes: count(14)?,
                self_terminations: count(15)?,
                join_give_ups: count(16)?,
                restarts: count(17)?,
                two_active_generations: count(18)?,
                observer_false_healthy: count(22)?,
                observer_false_starved: count(23)?,
                // Not in a unit: no sweep figure reads it.
                refutations: 0,
            },
            node_time: Nanos(count(19)?),
            events: count(20)?,
            false_declarations_healthy: count(21)?,
        })
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::sweep::units::Unit;

    #[test]
    fn a_cluster_unit_round_trips_through_its_line() {
        let u = Unit {
            point: 1,
            seed: 7,
            totals: ClusterRunTotals {
                declare: vec![Some(Nanos(55_296_000_001)), None],
                agree: vec![Some(Nanos(55_322_000_000)), None],
                declarations: 3,
                false_declarations: 1,
                false_declarations_healthy: 1,
                destroyed: u128::from(u64::MAX) + 9,
                suspicions: 20,
                suspicions_undeclared: 4,
                counts: ClusterCounts {
                    votes: 2,
                    votes_withheld: 1,
                    table_reads: 100,
                    table_writes: 90,
                    table_conflicts: 5,
                    table_unavailable: 0,
                    messages: 10_000,
                    bytes: 640_000,
                    self_terminations: 1,
                    join_give_ups: 0,
                    restarts: 1,
                    two_active_generations: 0,
                    observer_false_healthy: 12,
                    observer_false_starved: 3,
                    refutations: 0,
                },
                node_time: Nanos(7_200_000_000_000),
                events: 40_000,
            },
        };
        let keys = vec!["p0001,0".to_string(), "p0001,1".to_string()];
        let line = u.line(&keys);
        assert!(
            line.starts_with("p0001,1,7,55296000001 -,55322000000 -,3,1,"),
            "{line}"
        );
        assert_eq!(line.split(',').count(), CLUSTER_HEADER.split(',').count());
        let rows: BTreeMap<String, usize> = keys.iter().cloned().zip(0..).collect();
        assert_eq!(Unit::parse(line.trim_end(), &rows), Ok(u));
        let err = Unit::<ClusterRunTotals>::parse(
            &line.trim_end().replace("p0001,1,", "p0009,1,"),
            &rows,
        );
        assert_eq!(err, Err("row `p0009,1` is not in the plan".to_string()));
    }
}
