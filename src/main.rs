//! `fdlab`: a deterministic simulation testbed for failure detectors.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod bench;
mod list;
mod trace;

/// Compare and tune failure detectors (fixed timeouts, phi accrual, adaptive
/// probes, dataflow decay) on simulated or recorded traffic.
#[derive(Parser)]
#[command(name = "fdlab", version, arg_required_else_help = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run one detector over a recorded event list (CSV `time_ms,event[,arg_ms]`)
    /// and write `time_ms,value,verdict` for every `query` row.
    Trace(trace::TraceArgs),
    /// List the detector kinds with their keys and defaults.
    List,
    /// Measure detector and trace-replay speed (build with --release).
    Bench(bench::BenchArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Trace(args) => trace::run(&args),
        Command::List => list::run(),
        Command::Bench(args) => bench::run(&args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("fdlab: error: {message}");
            ExitCode::FAILURE
        }
    }
}
