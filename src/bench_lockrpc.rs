//! `fdlab bench --only lockrpc`: the built-in `lockrpc-slow-peer` (4 lock
//! servers, 8 clients each) at 200 lock RPCs per second per client for one
//! simulated hour under the `rustfs` policy, one seed, 16 workers per
//! server (the built-in's 4 would saturate at this rate): wall time,
//! events per second and the process's peak memory (the target of issue
//! 7/9 is under 30 s on a 2-core machine).

use std::time::Instant;

use fdlab_protocol::Nanos;
use fdlab_scenarios::builtin::builtin_scenario;
use fdlab_sim::lockrpc::{self, Setup};
use fdlab_sim::valid::ValidScenario;

/// Lock RPCs per second of each client in the benchmark.
const RPCS_PER_SECOND: f64 = 200.0;
/// Workers per lock server in the benchmark.
const WORKERS: u32 = 16;
/// The policy timed.
const POLICY: &str = "rustfs";
/// The target wall time on a 2-core machine (issue 7/9).
const TARGET_SECS: f64 = 30.0;

/// Runs the benchmark and prints its figures.
pub fn measure(quick: bool) -> Result<(), String> {
    let base = builtin_scenario("lockrpc-slow-peer")
        .ok_or("the built-in lockrpc-slow-peer is missing")?
        .map_err(|e| e.to_string())?;
    let mut s = base.into_inner();
    s.duration = Nanos::from_secs(if quick { 60 } else { 3_600 });
    if let Some(l) = s.lockrpc.as_mut() {
        l.rpcs_per_second = RPCS_PER_SECOND;
        l.workers = WORKERS;
        l.policies = Some(vec![POLICY.to_string()]);
    }
    let s = ValidScenario::new(s).map_err(|e| e.to_string())?;
    let setup = Setup::new(&s).ok_or("not a lock-RPC scenario")?;
    say!(
        "\nlock RPCs ({} servers x {} clients, {RPCS_PER_SECOND}/s lock RPCs per client, {WORKERS} workers per server, policy {POLICY}, {}, one seed; n1 20x slower for a minute):",
        setup.servers,
        setup.clients_per_node,
        s.duration
    );
    let started = Instant::now();
    let outcome = lockrpc::run(&s, &setup, 1, 0);
    let wall = started.elapsed().as_secs_f64();
    say!(
        "  {wall:.2} s: {} events ({:.2} M events/s), {} acquisitions, {} lock RPCs sent",
        outcome.events,
        outcome.events as f64 / wall.max(1e-9) / 1e6,
        outcome.acquisitions,
        outcome.counters.sent.lock
    );
    if !quick {
        crate::bench::say_target(wall, TARGET_SECS);
    }
    crate::bench::say_peak_memory();
    Ok(())
}
