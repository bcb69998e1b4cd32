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
use std::io::{self, IsTerminal, Write};
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Mutex;

/// `--color`: when messages and tables carry ANSI colours. Shared by every
/// command and by fdlab's own error lines.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum ColorWhen {
    /// When the stream is a terminal and `NO_COLOR` is not set.
    #[default]
    Auto,
    Always,
    Never,
}

/// The `--color` choice, as a `ColorWhen` index (set once, at start).
static COLOR: AtomicU8 = AtomicU8::new(0);

/// Sets the `--color` choice for the rest of the process.
pub fn set_color(when: ColorWhen) {
    COLOR.store(when as u8, Ordering::Relaxed);
}

fn color_for(is_terminal: bool) -> bool {
    match COLOR.load(Ordering::Relaxed) {
        1 => true,
        2 => false,
        // https://no-color.org: any non-empty value turns colour off.
        _ => is_terminal && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()),
    }
}

/// Whether standard output gets colours.
pub fn stdout_color() -> bool {
    color_for(io::stdout().is_terminal())
}

/// Whether standard error gets colours.
pub fn stderr_color() -> bool {
    color_for(io::stderr().is_terminal())
}

/// The `--color` choice written on a command line before clap has parsed
/// it (`--color never`, `--color=always`), so that clap's own help and
/// fdlab's error about a bad argument follow it too; the last one given
/// wins, as clap's would.
pub fn color_in_args(args: &[String]) -> ColorWhen {
    let mut when = ColorWhen::Auto;
    for (i, arg) in args.iter().enumerate() {
        let value = match arg.strip_prefix("--color") {
            Some("") => args.get(i + 1).map(String::as_str),
            Some(rest) => rest.strip_prefix('='),
            None => None,
        };
        when = match value {
            Some("always") => ColorWhen::Always,
            Some("never") => ColorWhen::Never,
            Some("auto") => ColorWhen::Auto,
            _ => when,
        };
    }
    when
}

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

/// Writes `bytes` to standard output as [`line`] writes a line (a
/// completion script, a manual page).
pub fn bytes(bytes: &[u8]) {
    let mut failure = STDOUT_FAILURE.lock().unwrap_or_else(|e| e.into_inner());
    if failure.is_some() {
        return;
    }
    let mut out = io::stdout().lock();
    if let Err(e) = out.write_all(bytes).and_then(|()| out.flush()) {
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
/// read is shortened (see [`fdlab_scenarios::excerpt::short_numbers`]).
pub fn error(message: &str) {
    let one_line: String = fdlab_scenarios::excerpt::short_numbers(message)
        .chars()
        .flat_map(fdlab_scenarios::excerpt::control_escaped)
        .collect();
    if stderr_color() {
        err_line(format_args!("fdlab: \x1b[1;31merror:\x1b[0m {one_line}"));
    } else {
        err_line(format_args!("fdlab: error: {one_line}"));
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
