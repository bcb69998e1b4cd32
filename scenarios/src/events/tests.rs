//! Tests of [`super`]: parsing recorded event lists and their errors.

use super::*;

fn parse(text: &str) -> Result<Vec<RecordedEvent>, EventsError> {
    parse_events("t.csv", text.as_bytes())
}

fn err(text: &str) -> EventsError {
    match parse(text) {
        Ok(events) => panic!("parsed as {events:?}"),
        Err(e) => e,
    }
}

fn at(ms: u64, kind: RecordedEventKind) -> RecordedEvent {
    RecordedEvent {
        time: Nanos::from_millis(ms),
        kind,
    }
}

#[test]
fn parses_every_event_kind() {
    let events = parse(
        "time_ms,event,arg_ms\n\
         0,heartbeat,\n\
         1.5,query,\n\
         2,data,\n\
         3,backpressure,\n\
         4,maintenance,250\n\
         5,probe_ok,3.25\n\
         6,probe_failed,\n",
    )
    .unwrap();
    use RecordedEventKind::*;
    assert_eq!(
        events,
        [
            at(0, Heartbeat),
            RecordedEvent {
                time: Nanos(1_500_000),
                kind: Query
            },
            at(2, Data),
            at(3, Backpressure),
            at(
                4,
                Maintenance {
                    pause: Nanos::from_millis(250)
                }
            ),
            at(
                5,
                ProbeOk {
                    rtt: Nanos(3_250_000)
                }
            ),
            at(6, ProbeFailed),
        ]
    );
}

#[test]
fn columns_in_any_order_and_arg_optional() {
    let events = parse(" event , time_ms \n heartbeat , 10 \nquery,20\n").unwrap();
    assert_eq!(
        events,
        [
            at(10, RecordedEventKind::Heartbeat),
            at(20, RecordedEventKind::Query)
        ]
    );
    let events = parse("arg_ms,event,time_ms\n7,probe_ok,1\n").unwrap();
    assert_eq!(
        events,
        [at(
            1,
            RecordedEventKind::ProbeOk {
                rtt: Nanos::from_millis(7)
            }
        )]
    );
    let events = parse("\u{feff}time_ms,event\n1,data\n").unwrap();
    assert_eq!(events, [at(1, RecordedEventKind::Data)]);
}

#[test]
fn bad_number_names_column_and_text() {
    let e = err("time_ms,event\n0,heartbeat\n12x,heartbeat\n");
    assert_eq!(e.line, Some(3));
    assert_eq!(e.file, "t.csv");
    assert!(
        e.problem.starts_with("`time_ms` is `12x`: not a number"),
        "{e}"
    );
    assert!(
        e.to_string().starts_with("t.csv:3: `time_ms` is `12x`"),
        "{e}"
    );
    let e = err("time_ms,event\n-5,heartbeat\n");
    assert!(e.problem.contains("negative"), "{e}");
    let e = err("time_ms,event\n99999999999999999999,heartbeat\n");
    assert!(e.problem.contains("past the limit"), "{e}");
    let e = err("time_ms,event\n,heartbeat\n");
    assert_eq!(e.problem, "`time_ms` is empty");
    let e = err("time_ms,event,arg_ms\n1,probe_ok,fast\n");
    assert!(
        e.problem.starts_with("`arg_ms` is `fast`: not a number"),
        "{e}"
    );
}

#[test]
fn times_and_durations_past_2_pow_62_ns_are_refused() {
    // 2^62 ns = 4611686018427.387904 ms: the limit itself is accepted.
    let events =
        parse("time_ms,event,arg_ms\n4611686018427.387904,maintenance,4611686018427.387904\n")
            .unwrap();
    assert_eq!(events[0].time, RECORDED_TIME_LIMIT);
    let e = err("time_ms,event\n0,heartbeat\n4611686018427.388,query\n");
    assert_eq!(e.line, Some(3));
    assert_eq!(
        e.problem,
        "`time_ms` is `4611686018427.388`: past the limit of 4611686018427.387904 ms (2^62 ns, about 146 years)"
    );
    let e = err("time_ms,event\n18446744073709,query\n");
    assert!(e.problem.contains("past the limit"), "{e}");
    let e = err("time_ms,event,arg_ms\n1,probe_ok,4611686018428\n");
    assert!(
        e.problem
            .starts_with("`arg_ms` is `4611686018428`: past the limit"),
        "{e}"
    );
}

#[test]
fn quoted_input_is_a_short_escaped_excerpt() {
    let huge = "7".repeat(1 << 20);
    let e = err(&format!("time_ms,event\n{huge}x,heartbeat\n"));
    assert_eq!(
        e.problem,
        format!(
            "`time_ms` is `{}…`: not a number (decimal milliseconds, like 1500 or 1500.25)",
            "7".repeat(60)
        )
    );
    let e = err("time_ms,event\n1,\"heart\0beat\nx\"\n");
    assert!(
        e.problem.starts_with("unknown event `heart\\0beat\\nx`"),
        "{e}"
    );
    let e = err(&format!("{huge},event\n"));
    assert!(e.to_string().len() < 200, "{}", e.to_string().len());
}

#[test]
fn unknown_event_lists_the_events() {
    let e = err("time_ms,event\n1,hartbeat\n");
    assert_eq!(e.line, Some(2));
    assert_eq!(
        e.problem,
        "unknown event `hartbeat`; expected one of heartbeat, query, data, \
         backpressure, maintenance, probe_ok, probe_failed"
    );
}

#[test]
fn times_going_backwards() {
    let e = err("time_ms,event\n1000,heartbeat\n2000,heartbeat\n\n1500,query\n");
    assert_eq!(e.line, Some(5));
    assert_eq!(
        e.problem,
        "time 1500 ms is before the previous row's 2000 ms (line 3); rows must be in time order"
    );
}

#[test]
fn equal_times_keep_file_order() {
    let events = parse("time_ms,event\n5,heartbeat\n5,query\n5,data\n").unwrap();
    use RecordedEventKind::*;
    assert_eq!(events, [at(5, Heartbeat), at(5, Query), at(5, Data)]);
}

#[test]
fn header_problems() {
    let e = err("time_ms,arg_ms\n");
    assert_eq!(e.problem, "missing column `event`");
    assert_eq!(e.line, Some(1));
    let e = err("event\n");
    assert_eq!(e.problem, "missing column `time_ms`");
    let e = err("time_ms,event,rtt\n");
    assert!(e.problem.starts_with("unknown column `rtt`"), "{e}");
    let e = err("time_ms,event,event\n");
    assert_eq!(e.problem, "column `event` appears twice");
    let e = err("time_ms,event,\n");
    assert!(e.problem.contains("column 3 of the header is empty"), "{e}");
    // A file without a header is caught on its first row.
    let e = err("0,heartbeat\n");
    assert!(e.problem.starts_with("unknown column `0`"), "{e}");
}

#[test]
fn empty_file_is_an_error() {
    for text in ["", "\n\n", "# only a comment\n", "  \n"] {
        let e = err(text);
        assert_eq!(e.line, None);
        assert!(e.problem.starts_with("empty file"), "{e}");
        assert!(e.to_string().starts_with("t.csv: empty file"), "{e}");
    }
}

#[test]
fn header_only_is_an_empty_trace() {
    assert_eq!(parse("time_ms,event,arg_ms\n").unwrap(), []);
    assert_eq!(parse("time_ms,event").unwrap(), []);
}

#[test]
fn arg_ms_is_required_where_it_means_something() {
    let e = err("time_ms,event,arg_ms\n1,probe_ok,\n");
    assert_eq!(e.line, Some(2));
    assert_eq!(
        e.problem,
        "`probe_ok` needs `arg_ms` (the round-trip time in ms)"
    );
    let e = err("time_ms,event\n1,maintenance\n");
    assert!(e.problem.contains("no `arg_ms` column"), "{e}");
}

#[test]
fn arg_ms_on_other_events_is_an_error() {
    let e = err("time_ms,event,arg_ms\n1,heartbeat,5\n");
    assert_eq!(e.line, Some(2));
    assert!(
        e.problem
            .starts_with("`arg_ms` must be empty for `heartbeat`, got `5`"),
        "{e}"
    );
}

#[test]
fn ragged_row() {
    let e = err("time_ms,event\n1,heartbeat\n2\n");
    assert_eq!(e.line, Some(3));
    assert_eq!(e.problem, "row has 1 field, the header has 2");
    let e = err("time_ms,event\n1,heartbeat,3\n");
    assert_eq!(e.problem, "row has 3 fields, the header has 2");
}

#[test]
fn comments_and_blank_lines_are_skipped() {
    let text = "# recorded on node-7\n\ntime_ms,event\n# warm-up\n0,heartbeat\n\n   \n\
                # a comment, with commas\n1000,heartbeat\r\n2000,query";
    let events = parse(text).unwrap();
    use RecordedEventKind::*;
    assert_eq!(
        events,
        [at(0, Heartbeat), at(1000, Heartbeat), at(2000, Query)]
    );
    // Line numbers still count the skipped lines.
    let e = err("# c\n\ntime_ms,event\n\n# c\nx,heartbeat\n");
    assert_eq!(e.line, Some(6));
    let e = err("# c\r\n\r\ntime_ms,event\r\n\r\n# c\r\n0,data\r\nx,heartbeat\r\n");
    assert_eq!(e.line, Some(7));
    let e = err("time_ms,event\r0,data\r\r1,nope\r");
    assert_eq!(e.line, Some(4));
    // A quoted field spanning lines moves the following rows down.
    let e = err("time_ms,event\n\"0\",\"data\"\n\"1\n\",data\n2,nope\n");
    assert_eq!(e.line, Some(5));
}

#[test]
fn non_utf8_bytes_do_not_panic() {
    let e = parse_events("t.csv", &b"time_ms,event\n1,\xff\xfe\n"[..]).unwrap_err();
    assert!(e.problem.starts_with("unknown event"), "{e}");
    let e = parse_events("t.csv", &b"time_ms,event\n\xff,heartbeat\n"[..]).unwrap_err();
    assert!(e.problem.contains("not a number"), "{e}");
}

#[test]
fn parses_a_large_file() {
    const ROWS: u64 = 100_000;
    let mut text = String::from("time_ms,event,arg_ms\n");
    for i in 0..ROWS {
        let line = match i % 4 {
            0 => format!("{i}.5,heartbeat,\n"),
            1 => format!("{i},probe_ok,{}\n", i % 7),
            2 => format!("{i},query,\n"),
            _ => format!("{i},maintenance,10.125\n"),
        };
        text.push_str(&line);
    }
    let events = parse(&text).unwrap();
    assert_eq!(events.len() as u64, ROWS);
    assert_eq!(
        events[0],
        RecordedEvent {
            time: Nanos(500_000),
            kind: RecordedEventKind::Heartbeat
        }
    );
    assert_eq!(
        events[99_999],
        at(
            99_999,
            RecordedEventKind::Maintenance {
                pause: Nanos(10_125_000)
            }
        )
    );
    assert!(events.windows(2).all(|w| w[0].time <= w[1].time));
}
