//! Command-line errors found by clap, said the way fdlab says every other
//! error: one line, `fdlab: error: --runs: ...`, exit status 1.
//!
//! clap prints its own errors on three or more lines (the error, a usage
//! line, a "For more information" hint) without fdlab's prefix, and exits 2,
//! which is `fdlab tune`'s "no setting met the constraint". A CI script that
//! branches on tune's 2 must not mistake a typo for it, and a log reader
//! greps one prefix. Help and version requests are not errors: they print as
//! clap prints them and exit 0.

use clap::error::{ContextKind, ContextValue, ErrorKind};
use fdlab_scenarios::excerpt::{bounded, excerpt};

/// What the command line asked for, when clap did not parse it into
/// arguments: a request to print (help, version), or an error line.
pub enum NotParsed {
    /// `--help` or `--version`: print this and exit 0.
    Print(clap::Error),
    /// The one-line error, without the `fdlab: error: ` prefix.
    Error(String),
}

/// Sorts clap's `error` into a print request or fdlab's one-line error.
pub fn classify(error: clap::Error) -> NotParsed {
    match error.kind() {
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => NotParsed::Print(error),
        _ => NotParsed::Error(one_line(&error)),
    }
}

/// clap's message on one line, led by the argument it is about.
///
/// The text is clap's own (it knows what was expected); what is dropped is
/// its usage line and hints, and what is moved is the argument's name, to the
/// front, as fdlab's own errors put the key first. A quoted value is cut to
/// an excerpt (`--seeds` given a 10,000-digit number is not echoed whole).
fn one_line(error: &clap::Error) -> String {
    let rendered = error.render().to_string();
    let body: Vec<&str> = rendered
        .lines()
        .map(str::trim)
        .take_while(|l| !l.starts_with("Usage:") && !l.starts_with("For more information"))
        .filter(|l| !l.is_empty() && !l.starts_with("tip:"))
        .collect();
    let mut text = body.join(" ");
    if let Some(rest) = text.strip_prefix("error: ") {
        text = rest.to_string();
    }
    let arg = match error.get(ContextKind::InvalidArg) {
        Some(ContextValue::String(arg)) => Some(arg.clone()),
        Some(ContextValue::Strings(args)) if args.len() == 1 => Some(args[0].clone()),
        _ => None,
    };
    if error.kind() == ErrorKind::MissingRequiredArgument {
        if let Some(ContextValue::Strings(args)) = error.get(ContextKind::InvalidArg) {
            return bounded(&format!("{}: required, and not given", args.join(", ")));
        }
    }
    let text = match &arg {
        // `invalid value 'abc' for '--runs <N>': ...` reads, key first,
        // `--runs: invalid value 'abc': ...`.
        Some(arg) => {
            let name = arg.split([' ', '=']).next().unwrap_or(arg);
            let without = text.replacen(&format!(" for '{arg}'"), "", 1);
            if without.starts_with(name) {
                without
            } else {
                format!("{name}: {without}")
            }
        }
        None => text,
    };
    let text = match error.get(ContextKind::InvalidValue) {
        Some(ContextValue::String(value)) => {
            text.replacen(&format!("'{value}'"), &format!("'{}'", excerpt(value)), 1)
        }
        _ => text,
    };
    bounded(&text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::{CommandFactory, Parser};

    /// A command line like fdlab's, to make clap's errors from.
    #[derive(Parser, Debug)]
    #[command(name = "fdlab", version)]
    struct Cli {
        #[arg(long, value_name = "N")]
        runs: Option<u32>,
        #[arg(long)]
        vary: Vec<String>,
        #[arg(long, required = true)]
        out: String,
    }

    fn error_of(args: &[&str]) -> String {
        let mut full = vec!["fdlab"];
        full.extend_from_slice(args);
        match classify(Cli::try_parse_from(full).unwrap_err()) {
            NotParsed::Error(line) => line,
            NotParsed::Print(e) => panic!("not an error: {e}"),
        }
    }

    #[test]
    fn a_bad_value_is_one_line_led_by_its_argument() {
        let e = error_of(&["--out", "x", "--runs", "abc"]);
        assert_eq!(
            e,
            "--runs: invalid value 'abc': invalid digit found in string"
        );
        let e = error_of(&["--out", "x", "--runs", "4294967296"]);
        assert!(e.starts_with("--runs: invalid value '4294967296'"), "{e}");
        assert!(!e.contains('\n'), "{e}");
    }

    #[test]
    fn missing_and_unknown_arguments_are_one_line() {
        let e = error_of(&[]);
        assert_eq!(e, "--out <OUT>: required, and not given");
        let e = error_of(&["--out", "x", "--nosuch"]);
        assert!(e.starts_with("--nosuch: unexpected argument"), "{e}");
        assert!(!e.contains('\n'), "{e}");
    }

    #[test]
    fn a_long_value_is_cut() {
        let long = "9".repeat(10_000);
        let e = error_of(&["--out", "x", "--runs", &long]);
        assert!(e.len() < 200, "{e}");
        assert!(e.contains('…'), "{e}");
    }

    #[test]
    fn help_and_version_are_not_errors() {
        for flag in ["--help", "--version"] {
            let e = Cli::try_parse_from(["fdlab", flag]).unwrap_err();
            assert!(matches!(classify(e), NotParsed::Print(_)), "{flag}");
        }
        Cli::command().debug_assert();
    }
}
