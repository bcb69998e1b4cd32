//! Per policy, pooled over a scenario's seeds.

use fdlab_protocol::lockrpc::ChannelCounters;
use fdlab_protocol::Nanos;
use fdlab_sim::lockrpc::{LockOutcome, PeerSplit};

/// One policy's figures over every seed of a scenario.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LockrpcSummary {
    pub policy: String,
    pub runs: u32,
    /// Simulated time, summed over runs.
    pub run_time: Nanos,
    pub clients: u32,
    pub evictions: PeerSplit,
    pub redials: PeerSplit,
    pub resets: PeerSplit,
    pub teardowns: PeerSplit,
    pub timeouts: PeerSplit,
    /// Every channel's counters, summed over runs: RustFS's six lock
    /// metrics by label (timeouts per op, evictions per trigger,
    /// suppressions per verdict, detached and aborted RPCs, late
    /// completions and late releases per outcome), breaker skips, and
    /// requests failed at once on an offline channel (MinIO grid).
    pub counters: ChannelCounters,
    pub acquisitions: u64,
    pub acquired: u64,
    /// Acquisitions that did not get the lock: failed, or still waiting
    /// when the run ended (dsync retries for up to 10 min).
    pub failed: u64,
    pub latency_p50: Option<Nanos>,
    pub latency_p99: Option<Nanos>,
    pub orphaned: Nanos,
    pub unlock_retries: u64,
    pub unlock_give_ups: u64,
    pub lease_expiries: u64,
    pub locks_lost: u64,
    /// Crash windows, those whose use (RPCs and dials for requests,
    /// probes aside) stopped, and those whose RPCs stopped.
    pub dead_windows: u32,
    pub dead_windows_stopped: u32,
    pub dead_windows_rpcs_stopped: u32,
    /// Mean over crash windows of the time to stop using the dead peer
    /// (the whole window when use never stopped).
    pub stop_mean: Option<Nanos>,
    /// The same for RPCs alone: refused dials are not RPCs.
    pub rpc_stop_mean: Option<Nanos>,
    /// RPCs sent to dead peers, dials to them for requests, and background
    /// re-dials.
    pub rpcs_to_dead: u64,
    pub dials_to_dead: u64,
    pub background_dials_to_dead: u64,
    /// Crash windows' time, summed.
    pub dead_time: Nanos,
}

impl LockrpcSummary {
    fn minutes(&self) -> f64 {
        self.run_time.as_secs_f64() / 60.0
    }
    /// Per minute of run (all clients together).
    pub fn per_minute(&self, n: u64) -> f64 {
        n as f64 / self.minutes().max(f64::MIN_POSITIVE)
    }
    /// Dials (for requests and in the background) to a dead peer per
    /// minute it was dead, all clients together.
    pub fn dead_dials_per_minute(&self) -> Option<f64> {
        (!self.dead_time.is_zero()).then(|| {
            (self.dials_to_dead + self.background_dials_to_dead) as f64
                / (self.dead_time.as_secs_f64() / 60.0)
        })
    }
    /// Evictions of live (healthy or slow) peers per simulated hour, all
    /// clients together.
    pub fn live_evictions_per_hour(&self) -> f64 {
        self.evictions.live() as f64 / (self.run_time.as_secs_f64() / 3600.0).max(f64::MIN_POSITIVE)
    }
    /// Timeouts per client per second.
    pub fn timeouts_per_client_second(&self) -> f64 {
        self.timeouts.total() as f64
            / (f64::from(self.clients.max(1)) * self.run_time.as_secs_f64()).max(f64::MIN_POSITIVE)
    }
    pub fn failed_share(&self) -> Option<f64> {
        (self.acquisitions > 0).then(|| self.failed as f64 / self.acquisitions as f64)
    }
}

/// A lock-RPC scenario as reported.
#[derive(Clone, Debug, PartialEq)]
pub struct LockrpcMetrics {
    pub scenario: String,
    pub servers: u32,
    pub clients: u32,
    pub seeds: u32,
    /// One per policy, in scenario order.
    pub summary: Vec<LockrpcSummary>,
}

/// Quantile `q` of sorted microsecond samples, as the nearest rank.
fn quantile(sorted: &[u32], q: f64) -> Option<Nanos> {
    if sorted.is_empty() {
        return None;
    }
    let rank = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    Some(Nanos(u64::from(sorted[rank - 1]) * 1_000))
}

/// Pools `runs` (every policy of every seed of `scenario`) per policy,
/// in the order policies first appear.
pub fn lockrpc_metrics(scenario: &str, runs: &[LockOutcome]) -> LockrpcMetrics {
    let mut order: Vec<String> = Vec::new();
    for r in runs {
        if !order.iter().any(|p| p == r.policy.name()) {
            order.push(r.policy.name().to_string());
        }
    }
    let mut seeds: Vec<u64> = runs.iter().map(|r| r.seed).collect();
    seeds.sort_unstable();
    seeds.dedup();
    let summary = order
        .iter()
        .map(|policy| {
            let mine: Vec<&LockOutcome> =
                runs.iter().filter(|r| r.policy.name() == policy).collect();
            let mut s = LockrpcSummary {
                policy: policy.clone(),
                ..LockrpcSummary::default()
            };
            let mut latencies: Vec<u32> = Vec::new();
            let (mut stop_sum, mut rpc_stop_sum) = (0u128, 0u128);
            for r in &mine {
                s.runs += 1;
                s.run_time = s.run_time + r.duration;
                s.clients = r.clients;
                s.evictions.merge(&r.evictions);
                s.redials.merge(&r.redials);
                s.resets.merge(&r.resets);
                s.teardowns.merge(&r.teardowns);
                s.timeouts.merge(&r.timeouts);
                s.counters.add(&r.counters);
                s.acquisitions += r.acquisitions;
                s.acquired += r.acquired;
                s.failed += r.acquisitions - r.acquired;
                s.orphaned = s.orphaned + r.orphaned;
                s.unlock_retries += r.unlock_retries;
                s.unlock_give_ups += r.unlock_give_ups;
                s.lease_expiries += r.lease_expiries;
                s.locks_lost += r.locks_lost;
                latencies.extend_from_slice(&r.latencies_us);
                for d in &r.dead_peers {
                    s.dead_windows += 1;
                    s.dead_windows_stopped += u32::from(d.stopped);
                    s.dead_windows_rpcs_stopped += u32::from(d.rpcs_stopped);
                    let window = d.end - d.start;
                    let span = |after: Nanos, stopped: bool| {
                        u128::from(if stopped { after } else { window }.as_nanos())
                    };
                    stop_sum += span(d.stop_after, d.stopped);
                    rpc_stop_sum += span(d.rpc_stop_after, d.rpcs_stopped);
                    s.rpcs_to_dead += d.rpcs;
                    s.dials_to_dead += d.dials;
                    s.background_dials_to_dead += d.background_dials;
                    s.dead_time = s.dead_time + window;
                }
            }
            latencies.sort_unstable();
            s.latency_p50 = quantile(&latencies, 0.5);
            s.latency_p99 = quantile(&latencies, 0.99);
            let mean = |sum: u128| {
                (s.dead_windows > 0).then(|| Nanos((sum / u128::from(s.dead_windows)) as u64))
            };
            s.stop_mean = mean(stop_sum);
            s.rpc_stop_mean = mean(rpc_stop_sum);
            s
        })
        .collect();
    LockrpcMetrics {
        scenario: scenario.to_string(),
        servers: runs.first().map_or(0, |r| r.servers),
        clients: runs.first().map_or(0, |r| r.clients),
        seeds: seeds.len() as u32,
        summary,
    }
}
