//! `fdlab trace`: one detector over a recorded event list.

use std::io::{self, BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};

use clap::Args;
use fdlab_protocol::Detector;
use fdlab_reports::atomic::write_atomically;
use fdlab_reports::query_csv::QueryCsvWriter;
use fdlab_scenarios::detector_spec::parse_detector_arg;
use fdlab_scenarios::events::parse_events;
use fdlab_scenarios::read_limit::{open_limited, RECORDING_LIMIT};
use fdlab_sim::event_replay::{monitoring_start, replay, RecordedEvent};

use crate::out_paths::{refuse_same_file, Input};

#[derive(Args)]
pub struct TraceArgs {
    /// The detector, as `kind=KIND,key=value,...` with the keys of a scenario's
    /// `[[detectors]]` table (e.g. `kind=phi-accrual,threshold=8`).
    #[arg(long, value_name = "KEY=VALUE,...")]
    detector: String,
    /// Write the result here (atomically) instead of to standard output.
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
    /// The recorded events: CSV with a header `time_ms,event[,arg_ms]`; `-` reads
    /// standard input.
    #[arg(value_name = "EVENTS.csv")]
    events: PathBuf,
}

pub fn run(args: &TraceArgs) -> Result<(), String> {
    let spec = parse_detector_arg(&args.detector).map_err(|e| format!("--detector: {e}"))?;
    if let Some(out) = &args.out {
        crate::out_paths::refuse_unwritable_file("--out", out)?;
        refuse_same_file("--out", out, &[Input::new("the events file", &args.events)])?;
    }
    let events = read_events(&args.events)?;
    let mut detector = Detector::new(spec.config, monitoring_start(&events))
        .map_err(|e| format!("--detector: {e}"))?;
    match &args.out {
        Some(path) => {
            let mut queries = 0usize;
            write_atomically(path, |out| {
                queries = write_rows(&mut detector, &events, out)?;
                Ok(())
            })
            .map_err(|e| format!("{}: {e}", path.display()))?;
            note!(
                "fdlab trace: {} events, {queries} queries -> {}",
                events.len(),
                path.display()
            );
        }
        None => {
            let stdout = io::stdout();
            let mut out = BufWriter::new(stdout.lock());
            match write_rows(&mut detector, &events, &mut out).and_then(|_| out.flush()) {
                Ok(()) => {}
                // A closed pipe (`| head`) is the reader's choice, not an error.
                Err(e) if e.kind() == io::ErrorKind::BrokenPipe => {}
                Err(e) => return Err(format!("standard output: {e}")),
            }
        }
    }
    Ok(())
}

fn read_events(path: &Path) -> Result<Vec<RecordedEvent>, String> {
    let name = path.display().to_string();
    let reader: Box<dyn Read> = if name == "-" {
        Box::new(io::stdin().lock())
    } else {
        Box::new(open_limited(path, RECORDING_LIMIT).map_err(|e| format!("{name}: {e}"))?)
    };
    parse_events(&name, BufReader::with_capacity(1 << 16, reader)).map_err(|e| e.to_string())
}

/// Replays and writes one row per query; returns the number of queries.
fn write_rows(
    detector: &mut Detector,
    events: &[RecordedEvent],
    out: &mut dyn Write,
) -> io::Result<usize> {
    let mut csv = QueryCsvWriter::new(out)?;
    let mut queries = 0usize;
    let mut failure = None;
    replay(detector, events, |row| {
        if failure.is_none() {
            queries += 1;
            if let Err(e) = csv.write(&row) {
                failure = Some(e);
            }
        }
    });
    if let Some(e) = failure {
        return Err(e);
    }
    csv.finish()?;
    Ok(queries)
}
