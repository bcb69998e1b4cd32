//! Recorded event lists: the `EVENTS.csv` input of `fdlab trace`.
//!
//! A CSV file with a header row naming the columns `time_ms`, `event` and,
//! optionally, `arg_ms`, in any order. Each row is one [`RecordedEvent`]:
//!
//! ```text
//! # exported from node-7's heartbeat log
//! time_ms,event,arg_ms
//! 0,heartbeat,
//! 1000.25,heartbeat,
//! 1200,probe_ok,3.5
//! 1500,maintenance,250
//! 4000,query,
//! ```
//!
//! Times are decimal milliseconds, parsed exactly into nanoseconds, and must not
//! decrease: replay applies events in file order and a detector's timers cannot
//! run backwards. They must not pass [`RECORDED_TIME_LIMIT`] either (2^62 ns,
//! about 146 years): a detector adds timeouts and pauses to them, and near
//! the end of the nanosecond clock (2^64 ns) those sums would saturate and
//! turn into wrong verdicts. A file is read up to
//! [`RECORDING_LIMIT`](crate::read_limit::RECORDING_LIMIT) bytes. `arg_ms` is the round-trip time of `probe_ok` and the pause
//! length of `maintenance`, and must be empty for every other event, so that a
//! value in the wrong row is reported rather than silently dropped.
//!
//! Production traces run to millions of rows, so rows are read into one reused
//! [`csv::ByteRecord`] and parsed from bytes, with no allocation per row.

use std::fmt;
use std::io::Read;

use fdlab_protocol::Nanos;
use fdlab_sim::event_replay::{RecordedEvent, RecordedEventKind};

use crate::excerpt::excerpt_bytes;
use crate::read_limit::{read_limited, RECORDING_LIMIT};

/// The latest instant (and the longest pause or round-trip time) a recording
/// may hold: 2^62 ns, about 146 years from the recording's zero. Far past any
/// real clock (Unix time in ms is about 2^40.6 today), and far enough below
/// 2^64 ns that every sum a detector makes of a time and a duration is exact.
pub const RECORDED_TIME_LIMIT: Nanos = Nanos(1 << 62);

/// The first problem found in an event file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EventsError {
    /// The file's name as the user gave it.
    pub file: String,
    /// The 1-based line, when the problem is on one.
    pub line: Option<u64>,
    /// What is wrong, naming the column and quoting the bad text.
    pub problem: String,
}

impl fmt::Display for EventsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(line) => write!(f, "{}:{}: {}", self.file, line, self.problem),
            None => write!(f, "{}: {}", self.file, self.problem),
        }
    }
}

impl std::error::Error for EventsError {}

/// The `event` column's accepted values, in the order error messages list them.
pub const EVENT_NAMES: [&str; 7] = [
    "heartbeat",
    "query",
    "data",
    "backpressure",
    "maintenance",
    "probe_ok",
    "probe_failed",
];

const TIME: &str = "time_ms";
const EVENT: &str = "event";
const ARG: &str = "arg_ms";

/// Where each known column sits in a row.
struct Columns {
    count: usize,
    time: usize,
    event: usize,
    arg: Option<usize>,
}

/// Reads a recorded event list. `file` is only used to name the input in errors.
///
/// Blank lines and lines starting with `#` are skipped; whitespace around fields
/// is ignored. Zero events (a header alone) is a valid, empty trace.
pub fn parse_events(file: &str, reader: impl Read) -> Result<Vec<RecordedEvent>, EventsError> {
    let input = CsvInput::read(file, reader)?;
    let mut events = Vec::new();
    let mut previous = None;
    input.rows(
        &format!("empty file; expected a header row naming the columns {TIME}, {EVENT} and optionally {ARG}"),
        read_header,
        |columns, record, at| {
            let event = read_row(record, columns).map_err(|p| input.error(Some(at), p))?;
            input.in_order(&mut previous, event.time, at, "row")?;
            events.push(event);
            Ok(())
        },
    )?;
    Ok(events)
}

/// A CSV input read whole, whose errors name the file and the line.
///
/// The whole input is kept in memory (a few bytes per row, less than what is
/// parsed from it) because the csv crate's line numbers are wrong after
/// blank, comment and CRLF lines; errors recount them from the bytes.
pub(crate) struct CsvInput {
    file: String,
    data: Vec<u8>,
}

impl CsvInput {
    /// Reads at most [`RECORDING_LIMIT`] bytes of `reader`.
    pub(crate) fn read(file: &str, reader: impl Read) -> Result<CsvInput, EventsError> {
        let mut input = CsvInput {
            file: file.to_string(),
            data: Vec::new(),
        };
        input.data = read_limited(reader, RECORDING_LIMIT)
            .map_err(|e| input.error(None, format!("cannot read: {e}")))?;
        Ok(input)
    }

    /// An error at the record read from byte `at` (see [`byte_of`]), or about
    /// the whole file.
    pub(crate) fn error(&self, at: Option<u64>, problem: String) -> EventsError {
        EventsError {
            file: self.file.clone(),
            line: at.map(|byte| self.line(byte)),
            problem,
        }
    }

    pub(crate) fn line(&self, at: u64) -> u64 {
        line_of_record(&self.data, at)
    }

    /// Hands the first non-blank row to `header` (`empty` is the error when
    /// there is none), then every later non-blank row, with its position, to
    /// `row`. Lines starting with `#` are comments; fields may be ragged (the
    /// callers say so in the file's terms).
    pub(crate) fn rows<H>(
        &self,
        empty: &str,
        header: impl FnOnce(&csv::ByteRecord) -> Result<H, String>,
        mut row: impl FnMut(&H, &csv::ByteRecord, u64) -> Result<(), EventsError>,
    ) -> Result<H, EventsError> {
        let mut csv = csv::ReaderBuilder::new()
            // The header is read by hand, to report its problems our way.
            .has_headers(false)
            .flexible(true)
            .comment(Some(b'#'))
            .from_reader(self.data.as_slice());
        let mut record = csv::ByteRecord::new();
        let read_error = |e: csv::Error| {
            self.error(
                e.position().map(|p| p.byte()),
                format!("malformed CSV: {e}"),
            )
        };
        let mut header_at = None;
        while csv.read_byte_record(&mut record).map_err(read_error)? {
            if !is_blank(&record) {
                header_at = Some(byte_of(&record));
                break;
            }
        }
        let Some(header_at) = header_at else {
            return Err(self.error(None, empty.to_string()));
        };
        let columns = header(&record).map_err(|p| self.error(Some(header_at), p))?;
        while csv.read_byte_record(&mut record).map_err(read_error)? {
            if !is_blank(&record) {
                row(&columns, &record, byte_of(&record))?;
            }
        }
        Ok(columns)
    }

    /// Checks that `time` (of the `what` at byte `at`) is not before the
    /// previous one's, and makes it the previous one.
    pub(crate) fn in_order(
        &self,
        previous: &mut Option<(Nanos, u64)>,
        time: Nanos,
        at: u64,
        what: &str,
    ) -> Result<(), EventsError> {
        if let Some((before, before_at)) = *previous {
            if time < before {
                return Err(self.error(
                    Some(at),
                    format!(
                        "time {} ms is before the previous {what}'s {} ms (line {}); rows must be in time order",
                        millis(time),
                        millis(before),
                        self.line(before_at),
                    ),
                ));
            }
        }
        *previous = Some((time, at));
        Ok(())
    }
}

/// Where the csv reader stood before reading `record`: the end of the previous
/// record, before any blank or comment lines it then skipped.
pub(crate) fn byte_of(record: &csv::ByteRecord) -> u64 {
    record.position().map_or(0, |p| p.byte())
}

/// The 1-based line of the record read from byte `from` (see [`byte_of`]):
/// skips what the csv reader skips before a record (line breaks, `#` lines up
/// to their `\n`), then counts line breaks (`\n`, `\r\n` or a lone `\r`).
/// Only called on errors, so the scan from the start costs nothing in the
/// common case.
pub(crate) fn line_of_record(data: &[u8], from: u64) -> u64 {
    let mut start = usize::try_from(from).unwrap_or(usize::MAX).min(data.len());
    loop {
        match data.get(start) {
            Some(b'\r' | b'\n') => start += 1,
            Some(b'#') => {
                start = data[start..]
                    .iter()
                    .position(|&b| b == b'\n')
                    .map_or(data.len(), |i| start + i + 1);
            }
            _ => break,
        }
    }
    let before = &data[..start];
    let breaks = before
        .iter()
        .enumerate()
        .filter(|&(i, &b)| b == b'\n' || (b == b'\r' && before.get(i + 1) != Some(&b'\n')))
        .count();
    breaks as u64 + 1
}

/// A line of nothing but whitespace (and commas) is blank, like an empty line.
pub(crate) fn is_blank(record: &csv::ByteRecord) -> bool {
    record.iter().all(|field| field.trim_ascii().is_empty())
}

/// Text of a field for an error message: a short excerpt, escaped (lossy:
/// the file may not be UTF-8); see [`crate::excerpt`].
pub(crate) fn show(field: &[u8]) -> String {
    excerpt_bytes(field)
}

fn millis(n: Nanos) -> String {
    let mut out = String::new();
    n.fmt_millis(&mut out);
    out
}

/// A header's column names with their indices, trimmed; a spreadsheet's UTF-8
/// byte-order mark before the first is dropped.
pub(crate) fn header_names(record: &csv::ByteRecord) -> impl Iterator<Item = (usize, &[u8])> {
    record.iter().enumerate().map(|(index, field)| {
        let name = field.trim_ascii();
        let name = if index == 0 {
            name.strip_prefix(b"\xEF\xBB\xBF")
                .unwrap_or(name)
                .trim_ascii()
        } else {
            name
        };
        (index, name)
    })
}

/// Records where column `name` is, unless it was already found.
pub(crate) fn take_column(
    slot: &mut Option<usize>,
    index: usize,
    name: &[u8],
) -> Result<(), String> {
    if slot.is_some() {
        return Err(format!("column `{}` appears twice", show(name)));
    }
    *slot = Some(index);
    Ok(())
}

fn read_header(record: &csv::ByteRecord) -> Result<Columns, String> {
    let (mut time, mut event, mut arg) = (None, None, None);
    for (index, name) in header_names(record) {
        let slot = match name {
            b"time_ms" => &mut time,
            b"event" => &mut event,
            b"arg_ms" => &mut arg,
            b"" => {
                return Err(format!(
                    "column {} of the header is empty; the header names the columns {TIME}, {EVENT} and optionally {ARG}",
                    index + 1
                ))
            }
            other => {
                return Err(format!(
                    "unknown column `{}`; the header must name the columns {TIME}, {EVENT} and optionally {ARG}",
                    show(other)
                ))
            }
        };
        take_column(slot, index, name)?;
    }
    let Some(time) = time else {
        return Err(format!("missing column `{TIME}`"));
    };
    let Some(event) = event else {
        return Err(format!("missing column `{EVENT}`"));
    };
    Ok(Columns {
        count: record.len(),
        time,
        event,
        arg,
    })
}

fn read_row(record: &csv::ByteRecord, columns: &Columns) -> Result<RecordedEvent, String> {
    if record.len() != columns.count {
        return Err(format!(
            "row has {} field{}, the header has {}",
            record.len(),
            if record.len() == 1 { "" } else { "s" },
            columns.count
        ));
    }
    let field = |i: usize| record.get(i).unwrap_or_default().trim_ascii();
    let time = parse_millis(TIME, field(columns.time))?;
    let event = field(columns.event);
    let arg = columns.arg.map(field).filter(|a| !a.is_empty());
    let needs_arg = |what: &str| -> Result<Nanos, String> {
        let Some(text) = arg else {
            return Err(format!(
                "`{}` needs `{ARG}` ({what}){}",
                show(event),
                if columns.arg.is_none() {
                    ", but the file has no `arg_ms` column"
                } else {
                    ""
                }
            ));
        };
        parse_millis(ARG, text)
    };
    let kind = match event {
        b"heartbeat" => RecordedEventKind::Heartbeat,
        b"query" => RecordedEventKind::Query,
        b"data" => RecordedEventKind::Data,
        b"backpressure" => RecordedEventKind::Backpressure,
        b"probe_failed" => RecordedEventKind::ProbeFailed,
        b"maintenance" => RecordedEventKind::Maintenance {
            pause: needs_arg("the pause length in ms")?,
        },
        b"probe_ok" => RecordedEventKind::ProbeOk {
            rtt: needs_arg("the round-trip time in ms")?,
        },
        b"" => {
            return Err(format!(
                "`{EVENT}` is empty; expected one of {}",
                EVENT_NAMES.join(", ")
            ))
        }
        other => {
            return Err(format!(
                "unknown event `{}`; expected one of {}",
                show(other),
                EVENT_NAMES.join(", ")
            ))
        }
    };
    if !matches!(
        kind,
        RecordedEventKind::Maintenance { .. } | RecordedEventKind::ProbeOk { .. }
    ) {
        if let Some(text) = arg {
            return Err(format!(
                "`{ARG}` must be empty for `{}`, got `{}`; only maintenance and probe_ok take one",
                show(event),
                show(text)
            ));
        }
    }
    Ok(RecordedEvent { time, kind })
}

/// Decimal milliseconds, exactly, as [`Nanos::parse_millis`] reads them, at
/// most [`RECORDED_TIME_LIMIT`], with a message that names the column and
/// quotes the text.
pub(crate) fn parse_millis(column: &str, text: &[u8]) -> Result<Nanos, String> {
    let bad = |why: &str| format!("`{column}` is `{}`: {why}", show(text));
    let past_limit = || {
        bad(&format!(
            "past the limit of {} ms (2^62 ns, about 146 years)",
            millis(RECORDED_TIME_LIMIT)
        ))
    };
    if text.is_empty() {
        return Err(format!("`{column}` is empty"));
    }
    let Ok(s) = std::str::from_utf8(text) else {
        return Err(bad("not a number"));
    };
    match Nanos::parse_millis(s) {
        Ok(n) if n > RECORDED_TIME_LIMIT => Err(past_limit()),
        Ok(n) => Ok(n),
        Err(_) if s.starts_with('-') => Err(bad("must not be negative")),
        Err(_) if looks_decimal(s) => Err(past_limit()),
        Err(_) => Err(bad(
            "not a number (decimal milliseconds, like 1500 or 1500.25)",
        )),
    }
}

/// Digits with at most one `.`: a number that failed to parse only by size.
fn looks_decimal(s: &str) -> bool {
    let s = s.strip_prefix('+').unwrap_or(s);
    s.bytes().any(|b| b.is_ascii_digit())
        && s.bytes().all(|b| b.is_ascii_digit() || b == b'.')
        && s.bytes().filter(|&b| b == b'.').count() <= 1
}

#[cfg(test)]
mod tests;
