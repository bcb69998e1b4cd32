//! Standard output that a closed pipe (`fdlab list | head`) ends quietly,
//! where `println!` would panic.

use std::fmt;
use std::io::{self, Write};

/// The error a closed standard output turns into; `main` exits quietly on it.
pub const CLOSED: &str = "standard output closed";

/// Writes one line to standard output.
pub fn line(args: fmt::Arguments<'_>) -> Result<(), String> {
    let mut out = io::stdout().lock();
    match out.write_fmt(args).and_then(|()| out.write_all(b"\n")) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Err(CLOSED.into()),
        Err(e) => Err(format!("standard output: {e}")),
    }
}

/// `println!` that returns from the enclosing function with an error instead
/// of panicking when standard output fails.
macro_rules! say {
    () => {
        $crate::out::line(format_args!(""))?
    };
    ($($arg:tt)*) => {
        $crate::out::line(format_args!($($arg)*))?
    };
}
