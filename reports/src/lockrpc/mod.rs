//! What each lock-RPC channel policy costs (SPEC §10, "slow is not
//! dead"): the reports of lock-RPC scenarios ([`fdlab_sim::lockrpc`]).
//!
//! Per policy, pooled over seeds ([`LockrpcSummary`]): channel evictions,
//! re-dials, stream resets and connection tear-downs, each split by
//! whether the peer was dead (its server crashed) or live at the time;
//! timeouts per client per second; lock latency p50/p99 of successful
//! acquisitions; failed acquisitions; orphaned-lock time; unlock retries;
//! the time to stop using a dead peer; evictions of live peers per hour.
//!
//! Outputs: `lockrpc.csv` and the console table ([`tables`]), the verdict
//! ([`verdict`]), a chart of the time to stop using a dead peer against
//! evictions of live peers per hour ([`chart`]), and the "Lock RPCs"
//! sections of `index.html` and `report.md` ([`section`]).

pub mod chart;
pub mod metrics;
pub mod section;
pub mod tables;
pub mod verdict;

pub use metrics::{lockrpc_metrics, LockrpcMetrics, LockrpcSummary};
pub use tables::{lockrpc_terminal_table, write_lockrpc_table};
pub use verdict::lockrpc_verdict;

/// The lock-RPC table's file name.
pub const LOCKRPC_CSV: &str = "lockrpc.csv";

#[cfg(test)]
mod tests {
    use fdlab_protocol::lockrpc::{ChannelCounters, OpCounts, PolicyKind};
    use fdlab_protocol::Nanos;
    use fdlab_sim::lockrpc::{DeadPeerStop, LockOutcome, PeerSplit};

    use super::chart::{lockrpc_chart_svg, NOTHING};
    use super::*;
    use crate::charts::{Chart, Palette};

    fn outcome(policy: PolicyKind, seed: u64, stop: Option<(u64, bool)>) -> LockOutcome {
        LockOutcome {
            scenario: "s".into(),
            seed,
            policy,
            duration: Nanos::from_secs(60),
            servers: 4,
            clients: 2,
            events: 1,
            counters: ChannelCounters::default(),
            evictions: PeerSplit {
                dead: 3,
                slow: 1,
                healthy: 0,
            },
            redials: PeerSplit {
                dead: 0,
                slow: 0,
                healthy: 600,
            },
            resets: PeerSplit::default(),
            unsent_cancels: 0,
            teardowns: PeerSplit::default(),
            timeouts: PeerSplit {
                dead: 0,
                slow: 12,
                healthy: 0,
            },
            acquisitions: 10,
            retried_attempts: 0,
            acquired: 8,
            failed_acquisitions: 2,
            latencies_us: vec![1_000, 2_000, 3_000, 4_000],
            orphaned: Nanos::from_secs(1),
            unlock_retries: 0,
            unlock_give_ups: 0,
            lease_expiries: 0,
            locks_lost: 0,
            live_server_time: Nanos::from_secs(240),
            dead_peers: stop
                .map(|(secs, stopped)| DeadPeerStop {
                    server: 1,
                    start: Nanos::from_secs(10),
                    end: Nanos::from_secs(60),
                    rpc_stop_after: Nanos::from_millis(2),
                    rpcs_stopped: true,
                    stop_after: Nanos::from_secs(secs),
                    stopped,
                    rpcs: 5,
                    probes: 0,
                    dials: 100,
                    background_dials: 0,
                })
                .into_iter()
                .collect(),
            first_healthy_eviction: None,
            faults: Vec::new(),
        }
    }

    #[test]
    fn policies_pool_over_seeds_and_the_verdict_names_them() {
        let runs = [
            outcome(PolicyKind::Rustfs, 1, Some((50, false))),
            outcome(PolicyKind::RustfsBreaker, 1, Some((4, true))),
            outcome(PolicyKind::Rustfs, 2, Some((50, false))),
            outcome(PolicyKind::RustfsBreaker, 2, Some((6, true))),
        ];
        let m = lockrpc_metrics("s", &runs);
        assert_eq!(m.seeds, 2);
        let names: Vec<&str> = m.summary.iter().map(|s| s.policy.as_str()).collect();
        assert_eq!(names, ["rustfs", "rustfs-breaker"]);
        let b = &m.summary[1];
        assert_eq!((b.runs, b.acquisitions, b.failed), (2, 20, 4));
        assert_eq!(b.latency_p50, Some(Nanos::from_millis(2)));
        assert_eq!(b.latency_p99, Some(Nanos::from_millis(4)));
        assert_eq!(b.stop_mean, Some(Nanos::from_secs(5)));
        // Never stopped: the whole window counts.
        assert_eq!(m.summary[0].stop_mean, Some(Nanos::from_secs(50)));
        // 2 live evictions over 2 minutes: 60 per hour; 24 timeouts over
        // 2 clients x 120 s.
        assert!((b.live_evictions_per_hour() - 60.0).abs() < 1e-9);
        assert!((b.timeouts_per_client_second() - 0.1).abs() < 1e-9);
        let v = lockrpc_verdict(&m);
        assert!(
            v[0].starts_with("Stops using a dead peer fastest: rustfs-breaker (5.0 s"),
            "{v:?}"
        );
        // 1,200 re-dials in 2 minutes from 2 clients: 300 per client-minute.
        assert!(
            v.iter().any(|l| l.starts_with("Re-dial storm: rustfs")),
            "{v:?}"
        );
        let mut out = Vec::new();
        tables::write_lockrpc(&mut out, std::slice::from_ref(&m)).unwrap();
        let csv = String::from_utf8(out).unwrap();
        assert_eq!(csv.lines().count(), 3);
        // 2 windows of 50 s, 200 dials: 120 per minute dead.
        assert!(
            csv.lines()
                .nth(2)
                .unwrap()
                .contains(",2,5.000000,2,0.002000,2,10,200,0,120.000,0,100.000,"),
            "{csv}"
        );
        assert!(
            v.iter()
                .any(|l| l.starts_with("RPCs to a dead peer stopped under every policy, 0.0 s")),
            "{v:?}"
        );
        match lockrpc_chart_svg(&m, &Palette::default()) {
            Chart::Svg(svg) => assert!(svg.contains("data-chart=\"lockrpc\"")),
            Chart::Nothing(line) => panic!("{line}"),
        }
    }

    /// Counters whose every field differs from every other, times `k`.
    fn distinct_counters(k: u64) -> ChannelCounters {
        ChannelCounters {
            timeouts: OpCounts {
                lock: k,
                unlock: 2 * k,
                ping: 3 * k,
                refresh: 4 * k,
            },
            evictions_timeout: 5 * k,
            evictions_transport: 6 * k,
            suppressed_peer_recently_served: 7 * k,
            suppressed_cooling_down: 8 * k,
            detached: 9 * k,
            aborted: 10 * k,
            late_success: 11 * k,
            late_error: 12 * k,
            late_releases: 13 * k,
            late_released: 14 * k,
            late_partial: 15 * k,
            late_failed: 16 * k,
            skipped: 17 * k,
            offline_skipped: 18 * k,
            ..ChannelCounters::default()
        }
    }

    #[test]
    fn rustfs_lock_metrics_are_columns_by_label_summed_over_seeds() {
        let mut one = outcome(PolicyKind::EvictOnTimeout, 1, Some((50, false)));
        one.counters = distinct_counters(1);
        let mut two = outcome(PolicyKind::EvictOnTimeout, 2, Some((50, false)));
        two.counters = distinct_counters(100);
        let m = lockrpc_metrics("s", &[one, two]);
        let mut out = Vec::new();
        tables::write_lockrpc(&mut out, std::slice::from_ref(&m)).unwrap();
        let mut reader = csv::Reader::from_reader(out.as_slice());
        let header: Vec<String> = reader.headers().unwrap().iter().map(String::from).collect();
        let rows: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
        assert_eq!(rows.len(), 1);
        let value = |name: &str| {
            let i = header.iter().position(|h| h == name).expect(name);
            assert_eq!(
                header.iter().filter(|h| *h == name).count(),
                1,
                "{name} twice"
            );
            rows[0][i].to_string()
        };
        // Each field's own multiple of 1 + 100 (seeds 1 and 2 pooled).
        let expected = [
            ("timeouts_lock", 1),
            ("timeouts_unlock", 2),
            ("timeouts_ping", 3),
            ("timeouts_refresh", 4),
            ("evictions_timeout", 5),
            ("evictions_transport", 6),
            ("suppressed_peer_recently_served", 7),
            ("suppressed_cooling_down", 8),
            ("suppressed", 7 + 8),
            ("detached", 9),
            ("aborted", 10),
            ("late_success", 11),
            ("late_error", 12),
            ("late_releases", 13),
            ("late_released", 14),
            ("late_partial", 15),
            ("late_failed", 16),
            ("skipped", 17),
            ("offline_skipped", 18),
        ];
        for (name, v) in expected {
            assert_eq!(value(name), (101 * v).to_string(), "{name}");
        }
        // Two crash windows of 50 s.
        assert_eq!(value("dead_time_s"), "100.000");
        // The rest of the row as before.
        assert_eq!(value("runs"), "2");
        assert_eq!(value("evictions_dead"), "6");

        // The console's second table: the labels under their metrics, the
        // policy's counts in the same order, within 160 characters.
        let console = lockrpc_terminal_table(&m);
        let at = console.find("\nRustFS lock metrics (").expect(&console);
        let lines: Vec<&str> = console[at + 1..].lines().collect();
        assert!(
            lines[0].contains("all 2 clients, 2 runs summed; crash windows 100.0 s in all"),
            "{console}"
        );
        let titles: Vec<&str> = lines[1]
            .split("  ")
            .map(str::trim)
            .filter(|t| !t.is_empty())
            .collect();
        assert_eq!(
            titles,
            [
                "timeouts",
                "evictions",
                "suppressed",
                "timed-out RPCs",
                "late completions",
                "late releases"
            ],
            "{console}"
        );
        let labels: Vec<&str> = lines[2].split_whitespace().collect();
        assert_eq!(
            labels,
            [
                "policy",
                "lock",
                "unlock",
                "ping",
                "refresh",
                "timeout",
                "transport",
                "peer_recently_served",
                "cooling_down",
                "detached",
                "aborted",
                "success",
                "error",
                "released",
                "partial",
                "failed"
            ],
            "{console}"
        );
        let counts: Vec<String> = lines[3].split_whitespace().map(String::from).collect();
        let want: Vec<String> = ["evict-on-timeout".to_string()]
            .into_iter()
            .chain(
                [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 14, 15, 16].map(|v| (101 * v).to_string()),
            )
            .collect();
        assert_eq!(counts, want, "{console}");
        for line in &lines {
            assert!(
                line.chars().count() <= 160,
                "{} wide: {line}",
                line.chars().count()
            );
        }
        // Each metric's name starts over its first label.
        for (title, label) in [
            ("evictions", "timeout"),
            ("suppressed", "peer_recently_served"),
        ] {
            let (t, l) = (lines[1].find(title).unwrap(), lines[2].find(label).unwrap());
            assert_eq!(t, l, "{title} over {label}:\n{}\n{}", lines[1], lines[2]);
        }
    }

    #[test]
    fn every_rustfs_label_has_its_csv_column_once() {
        for metric in &tables::RUSTFS_METRICS {
            for (label, _) in metric.labels {
                let column = metric.column(label);
                let n = tables::lockrpc_header().filter(|h| *h == column).count();
                assert_eq!(n, 1, "{column}");
            }
        }
    }

    #[test]
    fn without_a_dead_peer_the_chart_falls_back_and_without_runs_says_so() {
        let m = lockrpc_metrics("s", &[outcome(PolicyKind::Rustfs, 1, None)]);
        assert!(lockrpc_verdict(&m)[0].starts_with("No peer was dead"));
        match lockrpc_chart_svg(&m, &Palette::default()) {
            Chart::Svg(svg) => assert!(svg.contains("lock latency p99")),
            Chart::Nothing(line) => panic!("{line}"),
        }
        let empty = lockrpc_metrics("s", &[]);
        assert_eq!(
            lockrpc_chart_svg(&empty, &Palette::default()),
            Chart::Nothing(NOTHING.to_string())
        );
    }
}
