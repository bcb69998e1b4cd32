//! `fdlab`: a deterministic simulation testbed for failure detectors.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

#[macro_use]
mod out;
mod bench;
mod bench_cluster;
mod bench_e2e;
mod bench_lockrpc;
mod bench_mesh;
mod bench_placement;
mod bench_ratios;
mod bench_sim;
mod bench_swarm;
mod budget;
mod check;
mod cli_error;
mod cluster_runs;
mod list;
mod live;
mod lockrpc_runs;
mod longest_first;
mod nutcracker;
mod out_paths;
mod place;
mod run;
mod run_console;
mod simulate;
mod stats;
mod swarm;
mod sweep;
mod trace;
mod tune;

/// Compare and tune failure detectors (fixed timeouts, phi accrual, adaptive
/// probes, dataflow decay) on simulated or recorded traffic.
#[derive(Parser)]
///
/// With no command, `fdlab` runs the built-in suite (`fdlab run`).
#[command(name = "fdlab", version)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    /// When to colour tables and messages (auto: on a terminal, unless
    /// NO_COLOR is set).
    #[arg(long, global = true, value_enum, value_name = "WHEN", default_value_t = out::ColorWhen::Auto)]
    color: out::ColorWhen,
}

#[derive(Subcommand)]
enum Command {
    /// Simulate scenarios over many seeds and compare the detectors
    /// (default: the built-in suite).
    Run(run::RunArgs),
    /// One run with its full event and verdict trace, and its digest.
    Replay(run::ReplayArgs),
    /// Run one detector over a recorded event list (CSV `time_ms,event[,arg_ms]`)
    /// and write `time_ms,value,verdict` for every `query` row.
    Trace(trace::TraceArgs),
    /// Search a detector's parameters on a scenario or on a recorded heartbeat
    /// trace (CSV with a `time_ms` column) and recommend a setting, with its
    /// evidence and a snippet to paste into a scenario. Exit status 2: no
    /// setting meets the --max-*-per-hour bounds.
    Tune(tune::TuneArgs),
    /// List the built-in scenarios and the detector kinds with their keys
    /// (--faults: the fault kinds, distributions and the other tables)
    List(list::ListArgs),
    /// Measure detector and trace-replay speed (build with --release).
    Bench(bench::BenchArgs),
    /// The CI gate: run the CI suite and fail (exit 1) when detection got
    /// slower, or false Failed or suspicions more frequent, than the
    /// committed baseline says.
    Check(check::CheckArgs),
    /// Vary a detector's parameters over a grid or a sample, across seeds:
    /// every metric per point, the Pareto front and the trade-off curve.
    Sweep(sweep::SweepArgs),
    /// Join the directories of a sharded sweep into what one run writes.
    Merge(sweep::MergeArgs),
    /// Random fault schedules per seed (swarm testing), checked against the
    /// scenario's properties; each violation shrunk to a smallest scenario
    /// that still shows it (minimal-<n>.toml) with its replay command.
    /// Exit status 1: a property was violated.
    Swarm(swarm::SwarmArgs),
    /// Run a small mesh or dataflow scenario with one real process per node
    /// on loopback (UDP, and TCP for data frames), crash and pause faults sent as real signals (SIGKILL, SIGSTOP and
    /// SIGCONT), partitions, loss and slow links applied by each node's
    /// transport, and compare the measured detection times with the
    /// simulator's prediction (`calibration.csv`). A membership scenario
    /// with the judges `swim` and `lifeguard` runs on real hashicorp/memberlist
    /// agents instead, compared with fdlab's model of them.
    Live(live::LiveArgs),
    /// Which server each key goes to under the memcached clients'
    /// distributions, with no server dead and with the --dead servers dead:
    /// CSV `key,distribution,dead,server` on standard output.
    Place(place::PlaceArgs),
    /// Print a shell completion script, e.g.
    /// `fdlab completions bash > /etc/bash_completion.d/fdlab`.
    Completions {
        #[arg(value_name = "SHELL")]
        shell: clap_complete::Shell,
    },
    /// Print fdlab's manual page (roff), e.g. `fdlab man | man -l -`.
    Man,
    /// One node process of `fdlab live` (started by it, not by hand).
    #[command(hide = true)]
    LiveNode(live::NodeArgs),
}

fn main() -> ExitCode {
    use clap::{CommandFactory, FromArgMatches};
    let args: Vec<String> = std::env::args_os()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let when = out::color_in_args(&args);
    out::set_color(when);
    let choice = match when {
        out::ColorWhen::Auto => clap::ColorChoice::Auto,
        out::ColorWhen::Always => clap::ColorChoice::Always,
        out::ColorWhen::Never => clap::ColorChoice::Never,
    };
    let parsed = Cli::command()
        .color(choice)
        .try_get_matches_from(std::env::args_os())
        .and_then(|m| Cli::from_arg_matches(&m));
    let cli = match parsed {
        Ok(cli) => cli,
        Err(e) => {
            return match cli_error::classify(e) {
                cli_error::NotParsed::Print(request) => {
                    // Help or version, on standard output.
                    let _ = request.print();
                    ExitCode::SUCCESS
                }
                cli_error::NotParsed::Error(line) => {
                    out::error(&line);
                    ExitCode::FAILURE
                }
            };
        }
    };
    out::set_color(cli.color);
    let done = |result: Result<(), String>| result.map(|()| ExitCode::SUCCESS);
    let result = match cli.command {
        None => done(run::run(&run::RunArgs::default())),
        Some(Command::Run(args)) => done(run::run(&args)),
        Some(Command::Replay(args)) => done(run::replay(&args)),
        Some(Command::Trace(args)) => done(trace::run(&args)),
        Some(Command::Tune(args)) => tune::run(&args),
        Some(Command::List(args)) => done(list::run(&args)),
        Some(Command::Bench(args)) => done(bench::run(&args)),
        Some(Command::Check(args)) => done(check::run(&args)),
        Some(Command::Sweep(args)) => done(sweep::run(&args)),
        Some(Command::Merge(args)) => done(sweep::merge(&args)),
        Some(Command::Swarm(args)) => swarm::run(&args),
        Some(Command::Live(args)) => done(live::run(&args)),
        Some(Command::Place(args)) => done(place::run(&args)),
        Some(Command::Completions { shell }) => done(completions(shell)),
        Some(Command::Man) => done(manual()),
        Some(Command::LiveNode(args)) => done(live::node(&args)),
    };
    match result {
        // The work is done; a standard output that failed other than by a
        // closed pipe leaves the printed report incomplete (see `out`).
        Ok(status) => match out::stdout_failure() {
            Some(message) if status == ExitCode::SUCCESS => {
                out::error(&message);
                ExitCode::FAILURE
            }
            _ => status,
        },
        Err(message) => {
            out::error(&message);
            ExitCode::FAILURE
        }
    }
}

/// `fdlab completions SHELL`: the script clap_complete writes for fdlab's
/// arguments as they are parsed.
fn completions(shell: clap_complete::Shell) -> Result<(), String> {
    use clap::CommandFactory;
    let root = Cli::command();
    // clap_complete offers hidden commands too: fdlab's own node process is
    // not one a user types.
    let mut shown = clap::Command::new("fdlab")
        .version(env!("CARGO_PKG_VERSION"))
        .args(root.get_arguments().cloned())
        .subcommands(root.get_subcommands().filter(|c| !c.is_hide_set()).cloned());
    let mut buffer = Vec::new();
    clap_complete::generate(shell, &mut shown, "fdlab", &mut buffer);
    out::bytes(&buffer);
    Ok(())
}

/// `fdlab man`: fdlab(1), with every command's page after it, from the same
/// definitions as `--help`.
fn manual() -> Result<(), String> {
    use clap::CommandFactory;
    let command = Cli::command();
    let mut buffer = Vec::new();
    clap_mangen::Man::new(command.clone())
        .render(&mut buffer)
        .map_err(|e| e.to_string())?;
    for sub in command.get_subcommands().filter(|c| !c.is_hide_set()) {
        let name = format!("fdlab-{}", sub.get_name());
        let page = sub
            .clone()
            .display_name(name.clone())
            .bin_name(name)
            .version(env!("CARGO_PKG_VERSION"));
        clap_mangen::Man::new(page)
            .render(&mut buffer)
            .map_err(|e| e.to_string())?;
    }
    out::bytes(&buffer);
    Ok(())
}
