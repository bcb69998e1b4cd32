//! The node process of `fdlab live` (`fdlab live-node`, started by the
//! parent, not by hand): one node of the scenario, as a real process on
//! loopback.
//!
//! It runs `fdlab-driver`'s loop over tokio UDP: the detectors it owns as a
//! monitor and the heartbeat streams it owes its monitors, with the
//! simulator's heartbeat phases and probe jitters for the seed, so that a
//! live run and the simulated run of the same seed differ only by what the
//! real machine adds (scheduling, loopback latency, signal delivery). Its
//! socket sits behind `fdlab_driver::faulty::FaultyTransport`, which applies
//! the schedule's network faults to the datagrams it sends
//! (`super::links`); a dataflow stage also runs its data plane
//! (`super::dataflow`). It talks to the parent in the lines of
//! `super::wire`, and exits when its standard input closes (the parent is
//! gone).

use std::collections::BTreeMap;
use std::io::{self, Write};
use std::net::SocketAddr;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use clap::Args;
use fdlab_driver::faulty::FaultyTransport;
use fdlab_driver::tokio_io::{TokioClock, TokioTransport};
use fdlab_driver::Node;
use fdlab_protocol::Nanos;
use fdlab_scenarios::resolve;
use fdlab_sim::dist::Sampler;
use fdlab_sim::plan::RunPlan;

use super::dataflow::{changed_stream_heartbeats, Stage, StageTransport};
use super::links::{link_plan, MirrorDice};
use super::traffic::{SentCounts, REPORT_PERIOD};
use super::wire::{Report, Start};

/// The hidden node process.
#[derive(Args)]
pub struct NodeArgs {
    #[arg(long)]
    scenario: String,
    #[arg(long)]
    seed: u64,
    /// The run's duration in nanoseconds (after the parent's override).
    #[arg(long)]
    duration_ns: u64,
    #[arg(long)]
    node: u32,
}

impl NodeArgs {
    /// The arguments that start node `node` of a run, after the executable:
    /// what [`NodeArgs`] parses.
    pub fn command_line(scenario: &str, seed: u64, duration: Nanos, node: u32) -> Vec<String> {
        vec![
            "live-node".into(),
            "--scenario".into(),
            scenario.into(),
            "--seed".into(),
            seed.to_string(),
            "--duration-ns".into(),
            duration.as_nanos().to_string(),
            "--node".into(),
            node.to_string(),
        ]
    }
}

/// Writes `report` to the parent, one line.
fn write_report(out: &mut impl Write, report: &Report) {
    // The parent is gone if this fails; the stdin watcher ends the process.
    let _ = out.write_all(report.line().as_bytes());
    let _ = out.write_all(b"\n");
    let _ = out.flush();
}

/// `fdlab live-node`: reports its ports, reads the start line, runs until
/// the duration, streaming its verdict changes and sent-message counts, then
/// reports `done` (the lines: `super::wire`).
pub fn node(args: &NodeArgs) -> Result<(), String> {
    let scenario = resolve(&args.scenario).map_err(|e| e.to_string())?;
    crate::lockrpc_runs::refuse_lockrpc(&scenario, "live")?;
    let scenario = super::with_duration(scenario, Some(Nanos(args.duration_ns)))?;
    let plan = RunPlan::build(&scenario, args.seed);
    let layout = plan.layout();
    let me = args.node;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("tokio runtime: {e}"))?;
    let net = runtime
        .block_on(TokioTransport::bind(SocketAddr::from(([127, 0, 0, 1], 0))))
        .map_err(|e| format!("bind 127.0.0.1:0: {e}"))?;
    let port = net
        .socket
        .local_addr()
        .map_err(|e| format!("local address: {e}"))?
        .port();
    // A dataflow stage also listens for its upstreams' data links.
    let dataflow = !layout.links.is_empty();
    let (listener, tcp_port) = if dataflow {
        let l = runtime
            .block_on(tokio::net::TcpListener::bind(SocketAddr::from((
                [127, 0, 0, 1],
                0,
            ))))
            .map_err(|e| format!("bind TCP 127.0.0.1:0: {e}"))?;
        let tcp_port = l
            .local_addr()
            .map_err(|e| format!("local address: {e}"))?
            .port();
        (Some(l), Some(tcp_port))
    } else {
        (None, None)
    };
    let ports = Report::Port {
        udp: port,
        tcp: tcp_port,
    };
    write_report(&mut io::stdout(), &ports);

    let mut line = String::new();
    io::stdin()
        .read_line(&mut line)
        .map_err(|e| format!("stdin: {e}"))?;
    let Start {
        unix_ns: start_ns,
        udp: addrs,
        tcp: tcp_addrs,
    } = Start::parse(&line, layout.nodes.len())?;
    if dataflow && tcp_addrs.is_none() {
        return Err("start line: no data-plane (tcp) addresses for a dataflow stage".into());
    }
    // The parent's end: when our standard input closes, exit.
    std::thread::spawn(move || {
        let mut sink = String::new();
        while matches!(io::stdin().read_line(&mut sink), Ok(n) if n > 0) {
            sink.clear();
        }
        std::process::exit(3);
    });

    // The network faults of this node's outgoing datagrams: the same
    // schedule the parent and the simulator resolve from (scenario, seed,
    // duration), so no fault list needs to travel on the start line.
    let faults = link_plan(plan.schedule(), scenario.network.loss, me, &addrs);
    let mut dice = MirrorDice::new(
        &plan,
        me,
        addrs.clone(),
        Sampler::new(&scenario.network.latency),
    );
    let mut node: Node<SocketAddr> = Node::new();
    for &(m, t) in &layout.pairs {
        if m == me {
            for (d, setup) in scenario.detectors.iter().enumerate() {
                let jitter = plan.first_probe_jitter(m, t, d);
                node.watch(
                    addrs[t as usize],
                    &setup.name,
                    setup.config.clone(),
                    Nanos::ZERO,
                    jitter,
                )
                .map_err(|e| format!("detector `{}`: {e}", setup.name))?;
            }
        }
        if t == me {
            let mut intervals: Vec<Nanos> = Vec::new();
            for setup in &scenario.detectors {
                if let Some(i) = setup.config.heartbeat_interval() {
                    if !intervals.contains(&i) {
                        intervals.push(i);
                    }
                }
            }
            for interval in intervals {
                let (phase, rng) = plan.heartbeat_sender(m, t, interval);
                dice.add_heartbeats(m, interval, rng);
                node.send_heartbeats(addrs[m as usize], interval, phase);
            }
        }
    }
    let mut sent_counts = SentCounts::new(addrs.clone());
    node.set_sent_observer(
        REPORT_PERIOD,
        Box::new(move |_, sent| {
            let mut out = io::stdout().lock();
            for (counter, n) in sent_counts.changed(sent) {
                write_report(&mut out, &Report::Sent(counter, n));
            }
        }),
    );
    node.set_observer(Box::new(|watch, at, verdict| {
        write_report(&mut io::stdout(), &Report::Change(watch, at, verdict));
    }));

    let now_ns = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_err(|e| format!("system clock: {e}"))?
        .as_nanos();
    if start_ns > now_ns {
        let wait = u64::try_from(start_ns - now_ns).unwrap_or(u64::MAX);
        std::thread::sleep(Duration::from_nanos(wait));
    }
    // The run's time zero on this process's monotonic clock is the common
    // start instant, not the moment this process woke up for it: on a busy
    // machine the nodes wake a few milliseconds apart, and a clock started
    // late would stamp every verdict early (and see the fault windows late).
    let late = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_err(|e| format!("system clock: {e}"))?
        .as_nanos()
        .saturating_sub(start_ns);
    let late = Duration::from_nanos(u64::try_from(late).unwrap_or(u64::MAX));
    let woke = tokio::time::Instant::now();
    let clock = TokioClock {
        epoch: woke.checked_sub(late).unwrap_or(woke),
    };
    let until = scenario.duration;
    let stage = Stage::new(layout, me);
    let stream_heartbeats = stage.stream_heartbeats.clone();
    runtime
        .block_on(async {
            let (deliver, frames) = tokio::sync::mpsc::unbounded_channel();
            if let (Some(listener), Some(tcp)) = (listener, &tcp_addrs) {
                stage.start(&plan, clock, listener, &addrs, tcp, deliver);
                let counts = stream_heartbeats.clone();
                tokio::spawn(async move {
                    let mut last = BTreeMap::new();
                    let period = Duration::from_nanos(REPORT_PERIOD.as_nanos());
                    loop {
                        tokio::time::sleep(period).await;
                        let mut out = io::stdout().lock();
                        for (counter, n) in changed_stream_heartbeats(&counts, &mut last) {
                            write_report(&mut out, &Report::Sent(counter, n));
                        }
                    }
                });
            }
            let net = StageTransport::new(net, frames);
            let net = FaultyTransport::new(net, clock, faults, dice);
            node.run(&clock, &net, until).await
        })
        .map_err(|e| format!("UDP socket: {e}"))?;
    // The final counts (the reporter may not have run since the last frames).
    for (counter, n) in changed_stream_heartbeats(&stream_heartbeats, &mut BTreeMap::new()) {
        write_report(&mut io::stdout(), &Report::Sent(counter, n));
    }
    write_report(&mut io::stdout(), &Report::Done);
    Ok(())
}
