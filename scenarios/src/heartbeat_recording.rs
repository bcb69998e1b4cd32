//! Recorded heartbeat arrivals: the `--trace` input of `fdlab tune`.
//!
//! A CSV file with a header row that names a `time_ms` column; each row is the
//! instant one heartbeat arrived at the monitor, in decimal milliseconds
//! (parsed exactly into nanoseconds, as in event files):
//!
//! ```text
//! # heartbeats from node-7 as seen by node-2
//! time_ms,seq
//! 1718000000000,1
//! 1718000001003.5,2
//! ```
//!
//! Other columns are allowed and ignored (a log export often carries sequence
//! numbers or host names), with one exception: if there is an `event` column,
//! as in the event files of `fdlab trace`, only its `heartbeat` rows are
//! arrivals, so one recording serves both commands. Blank lines and `#` lines
//! are skipped. Times must not decrease, nor pass
//! [`RECORDED_TIME_LIMIT`](crate::events::RECORDED_TIME_LIMIT) (2^62 ns), and
//! a file is read up to [`RECORDING_LIMIT`](crate::read_limit::RECORDING_LIMIT)
//! bytes, as event files are. A trace needs at least [`MIN_HEARTBEATS`]
//! heartbeats: fewer give no usable statistics.

use std::io::Read;

use fdlab_protocol::Nanos;

use crate::events::{header_names, parse_millis, show, take_column, CsvInput, EventsError};

/// Fewest heartbeats a trace must hold to tune anything on it: phi accrual
/// alone needs a few intervals before its statistics mean anything.
pub const MIN_HEARTBEATS: usize = 10;

const TIME: &str = "time_ms";
const HEARTBEAT: &[u8] = b"heartbeat";

/// The first problem in a heartbeat trace: the same shape as an event file's
/// error (`file:line: problem`).
pub type HeartbeatRecordingError = EventsError;

/// Reads the heartbeat arrival instants of a trace. `file` only names the
/// input in errors.
pub fn parse_heartbeat_recording(
    file: &str,
    reader: impl Read,
) -> Result<Vec<Nanos>, HeartbeatRecordingError> {
    let input = CsvInput::read(file, reader)?;
    let mut arrivals = Vec::new();
    let mut previous = None;
    input.rows(
        &format!("empty file; expected a header row naming a `{TIME}` column, then one row per heartbeat"),
        read_header,
        |&(columns, time, event), record, at| {
            if record.len() != columns {
                return Err(input.error(
                    Some(at),
                    format!(
                        "row has {} field{}, the header has {columns}",
                        record.len(),
                        if record.len() == 1 { "" } else { "s" },
                    ),
                ));
            }
            let field = |i: usize| record.get(i).unwrap_or_default().trim_ascii();
            if event.is_some_and(|e| field(e) != HEARTBEAT) {
                return Ok(());
            }
            let arrival =
                parse_millis(TIME, field(time)).map_err(|p| input.error(Some(at), p))?;
            input.in_order(&mut previous, arrival, at, "heartbeat")?;
            arrivals.push(arrival);
            Ok(())
        },
    )?;
    if arrivals.len() < MIN_HEARTBEATS {
        return Err(input.error(
            None,
            format!(
                "only {} heartbeat{}; a trace needs at least {MIN_HEARTBEATS} to tune a detector on",
                arrivals.len(),
                if arrivals.len() == 1 { "" } else { "s" },
            ),
        ));
    }
    if arrivals.first() == arrivals.last() {
        return Err(input.error(
            None,
            "every heartbeat has the same time; a trace must span some time".to_string(),
        ));
    }
    Ok(arrivals)
}

/// The number of columns, the `time_ms` column and the `event` column if any.
fn read_header(record: &csv::ByteRecord) -> Result<(usize, usize, Option<usize>), String> {
    let (mut time, mut event) = (None, None);
    for (index, name) in header_names(record) {
        let slot = match name {
            b"time_ms" => &mut time,
            b"event" => &mut event,
            _ => continue,
        };
        take_column(slot, index, name)?;
    }
    let Some(time) = time else {
        let first = record.get(0).map(show).unwrap_or_default();
        return Err(format!(
            "no `{TIME}` column in the header (it starts with `{}`); the first row must name the columns, one of them `{TIME}`",
            first.trim()
        ));
    };
    Ok((record.len(), time, event))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Vec<Nanos>, EventsError> {
        parse_heartbeat_recording("hb.csv", text.as_bytes())
    }

    fn err(text: &str) -> EventsError {
        match parse(text) {
            Ok(arrivals) => panic!("parsed as {arrivals:?}"),
            Err(e) => e,
        }
    }

    /// A header and `n` rows one second apart, each `time,extra`.
    fn rows(n: u64) -> String {
        let mut text = String::from("seq,time_ms,host\n");
        for i in 0..n {
            text.push_str(&format!("{i},{}.25,n7\n", i * 1000));
        }
        text
    }

    #[test]
    fn parses_times_and_ignores_other_columns() {
        let arrivals = parse(&rows(12)).unwrap();
        assert_eq!(arrivals.len(), 12);
        assert_eq!(arrivals[0], Nanos(250_000));
        assert_eq!(arrivals[11], Nanos(11_000_250_000));
        let arrivals = parse(&format!(
            "\u{feff}time_ms\n# c\n\n{}",
            "5\n".repeat(9) + "6\n"
        ))
        .unwrap();
        assert_eq!(arrivals.len(), 10);
    }

    #[test]
    fn an_event_column_keeps_only_heartbeats() {
        let mut text = String::from("time_ms,event\n");
        for i in 0..10 {
            text.push_str(&format!("{},heartbeat\n{},query\n", i * 1000, i * 1000 + 1));
        }
        text.push_str("50000,query\n");
        let arrivals = parse(&text).unwrap();
        assert_eq!(arrivals.len(), 10);
        assert_eq!(arrivals[9], Nanos::from_millis(9000));
    }

    #[test]
    fn empty_file() {
        for text in ["", "\n", "# only a comment\n"] {
            let e = err(text);
            assert_eq!(e.line, None);
            assert!(e.to_string().starts_with("hb.csv: empty file"), "{e}");
        }
    }

    #[test]
    fn no_time_column() {
        let e = err("seq,time\n1,2\n");
        assert_eq!(e.line, Some(1));
        assert!(e.problem.starts_with("no `time_ms` column"), "{e}");
        let e = err("1000\n2000\n");
        assert!(e.problem.contains("starts with `1000`"), "{e}");
        let e = err("time_ms,time_ms\n1,1\n");
        assert_eq!(e.problem, "column `time_ms` appears twice");
    }

    #[test]
    fn bad_number_names_file_line_and_text() {
        let mut text = rows(12);
        text.push_str("12,12x,n7\n");
        let e = err(&text);
        assert_eq!(e.line, Some(14));
        assert!(
            e.to_string()
                .starts_with("hb.csv:14: `time_ms` is `12x`: not a number"),
            "{e}"
        );
        let e = err("time_ms\n-4\n");
        assert!(e.problem.contains("negative"), "{e}");
        let e = err("time_ms,seq\n,1\n");
        assert_eq!(e.problem, "`time_ms` is empty");
    }

    #[test]
    fn time_going_backwards() {
        let e = err("time_ms\n1000\n2000\n\n1500\n");
        assert_eq!(e.line, Some(5));
        assert_eq!(
            e.problem,
            "time 1500 ms is before the previous heartbeat's 2000 ms (line 3); rows must be in time order"
        );
    }

    #[test]
    fn ragged_row() {
        let e = err("time_ms,seq\n1,1\n2\n");
        assert_eq!(e.line, Some(3));
        assert_eq!(e.problem, "row has 1 field, the header has 2");
    }

    #[test]
    fn too_few_heartbeats() {
        let e = err(&rows(9));
        assert_eq!(e.line, None);
        assert_eq!(
            e.to_string(),
            "hb.csv: only 9 heartbeats; a trace needs at least 10 to tune a detector on"
        );
        let e = err("time_ms\n");
        assert!(e.problem.starts_with("only 0 heartbeats"), "{e}");
        let e = err(&format!("time_ms\n{}", "7\n".repeat(10)));
        assert!(e.problem.contains("same time"), "{e}");
    }

    #[test]
    fn times_past_2_pow_62_ns_are_refused() {
        let mut text = rows(12);
        text.push_str("12,4611686018427.388,n7\n");
        let e = err(&text);
        assert_eq!(e.line, Some(14));
        assert!(
            e.problem.starts_with(
                "`time_ms` is `4611686018427.388`: past the limit of 4611686018427.387904 ms"
            ),
            "{e}"
        );
    }

    #[test]
    fn quoted_input_is_a_short_escaped_excerpt() {
        let huge = "h".repeat(1 << 20);
        let e = err(&format!("{huge}\0,seq\n1,2\n"));
        assert_eq!(e.line, Some(1));
        assert!(e.to_string().len() < 250, "{}", e.to_string().len());
        assert!(e.problem.contains(&format!("`{}…`", "h".repeat(60))), "{e}");
        let e = err("\u{1b}[2J,seq\n1,2\n");
        assert!(e.problem.contains("`\\u{1b}[2J`"), "{e}");
    }

    #[test]
    fn non_utf8_does_not_panic() {
        let e = parse_heartbeat_recording("hb.csv", &b"time_ms\n\xff\n"[..]).unwrap_err();
        assert!(e.problem.contains("not a number"), "{e}");
    }
}
