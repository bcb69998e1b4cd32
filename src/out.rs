//! Standard output and standard error for the commands' messages.
//!
//! A command's printed lines are a report *about* its work, not the work: a
//! closed standard output (`fdlab check ... | head -1`, `fdlab run | true`)
//! must neither cut the work short nor turn into success. So a failed write
//! to standard output is remembered and printing stops, and the command goes
//! on: it still writes its report, its JUnit file, its sweep results, and
//! exits with its own status.
//!
//! Exit status with a closed standard output: the command's own. A run,
//! sweep or tune whose files were all written exits 0 (or tune's 2), which is
//! honest, since the work happened; `fdlab check` exits with the gate's
//! verdict (1 on a regression). A closed pipe (EPIPE) is the reader's choice
//! and is not reported; any other failure to write standard output (a full
//! disk behind `> file`) is reported once the work is done, and turns an
//! otherwise successful command into exit status 1, since its printed output
//! is incomplete.

use std::fmt;
use std::io::{self, Write};
use std::sync::Mutex;

/// The first failure to write standard output, if any.
static STDOUT_FAILURE: Mutex<Option<io::Error>> = Mutex::new(None);

/// Writes one line to standard output, unless an earlier write failed; a
/// failure is remembered (see [`stdout_failure`]) and ends printing, not the
/// command.
pub fn line(args: fmt::Arguments<'_>) {
    let mut failure = STDOUT_FAILURE.lock().unwrap_or_else(|e| e.into_inner());
    if failure.is_some() {
        return;
    }
    let mut out = io::stdout().lock();
    if let Err(e) = out
        .write_fmt(args)
        .and_then(|()| out.write_all(b"\n"))
        .and_then(|()| out.flush())
    {
        *failure = Some(e);
    }
}

/// The failure to report after the work is done: none for a closed pipe,
/// which is the reader's choice (see the module docs).
pub fn stdout_failure() -> Option<String> {
    let failure = STDOUT_FAILURE.lock().unwrap_or_else(|e| e.into_inner());
    match &*failure {
        Some(e) if e.kind() != io::ErrorKind::BrokenPipe => Some(format!("standard output: {e}")),
        _ => None,
    }
}

/// Writes one line to standard error. Unlike `eprintln!`, a closed standard
/// error (`2>&1 | head -1`) is not a panic: the line is lost and the exit
/// status still says what happened.
pub fn err_line(args: fmt::Arguments<'_>) {
    let mut err = io::stderr().lock();
    let _ = err.write_fmt(args).and_then(|()| err.write_all(b"\n"));
}

/// Prints `fdlab: error: message` on one line: a character that got into a
/// message and would not show as itself (a line break, a NUL, an escape
/// sequence, a right-to-left override) is escaped, and a number too long to
/// read is shortened (see [`short_numbers`]).
pub fn error(message: &str) {
    let one_line: String = short_numbers(message)
        .chars()
        .flat_map(fdlab_scenarios::excerpt::control_escaped)
        .collect();
    err_line(format_args!("fdlab: error: {one_line}"));
}

/// Digits in a row past which an error shows a number in scientific
/// notation: a `u64` has 20, so any longer run is an `f64` printed whole
/// (`1e308` as 309 digits) or pasted input.
const LONGEST_NUMBER_DIGITS: usize = 20;

/// `message` with every run of more than [`LONGEST_NUMBER_DIGITS`] digits
/// (and its fraction, if any) written as `1.000e308`. Every error that
/// prints an `f64` with `{}` goes through here, so none has to remember.
fn short_numbers(message: &str) -> String {
    let chars: Vec<char> = message.chars().collect();
    let mut out = String::with_capacity(message.len());
    let mut i = 0;
    while i < chars.len() {
        let start = i;
        while i < chars.len() && chars[i].is_ascii_digit() {
            i += 1;
        }
        if i == start {
            out.push(chars[i]);
            i += 1;
            continue;
        }
        let mut end = i;
        if end + 1 < chars.len() && chars[end] == '.' && chars[end + 1].is_ascii_digit() {
            end += 1;
            while end < chars.len() && chars[end].is_ascii_digit() {
                end += 1;
            }
        }
        let digits: String = chars[start..end].iter().collect();
        match digits.parse::<f64>() {
            Ok(x) if i - start > LONGEST_NUMBER_DIGITS && x.is_finite() => {
                out.push_str(&format!("{x:.3e}"));
                i = end;
            }
            _ => out.push_str(&chars[start..i].iter().collect::<String>()),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::short_numbers;

    #[test]
    fn long_numbers_are_shortened_and_others_kept() {
        let huge = format!("must be at most 1e6, got {}", 1e308);
        assert_eq!(short_numbers(&huge), "must be at most 1e6, got 1.000e308");
        let frac = format!("got {}.5 s", "9".repeat(30));
        assert_eq!(short_numbers(&frac), "got 1.000e30 s");
        let kept = "seed 18446744073709551615, n12, 3.25 s, v1.2.3";
        assert_eq!(short_numbers(kept), kept);
        assert_eq!(short_numbers(""), "");
    }
}

/// `println!` that neither panics nor stops the command when standard
/// output is closed or fails (see the module docs).
macro_rules! say {
    () => {
        $crate::out::line(format_args!(""))
    };
    ($($arg:tt)*) => {
        $crate::out::line(format_args!($($arg)*))
    };
}

/// `eprintln!` that does not panic when standard error is closed.
macro_rules! note {
    ($($arg:tt)*) => {
        $crate::out::err_line(format_args!($($arg)*))
    };
}
