//! What an error message may quote of a user's input: a short excerpt,
//! escaped.
//!
//! An error is one line on a terminal or in a CI log. Input can hold a field
//! of 20 MB, a NUL byte, an escape sequence that clears the screen, or a line
//! of whatever binary file was named by mistake; echoed as is, any of these
//! buries or breaks the one line that says what is wrong. So every message
//! that quotes input quotes it through [`excerpt`] (or [`excerpt_bytes`]):
//! at most [`EXCERPT_CHARS`] characters, control characters escaped as Rust
//! does (`\0`, `\n`, `\u{1b}`), and `…` where it was cut. Messages that come
//! from other crates and may embed input (serde's "invalid type: string
//! \"...\"", a duration's parse error) go through [`bounded`], which applies
//! the same rule to every quoted span and caps the whole message.

/// Characters of input an error quotes at most.
pub const EXCERPT_CHARS: usize = 60;

/// Characters of a key path (`detectors[0].fast.threshold`) an error shows
/// at most: real paths are far shorter; a key of a megabyte is not.
pub const KEY_CHARS: usize = 120;

/// Characters of a whole message from another crate kept by [`bounded`]:
/// enough for the longest list of expected keys.
pub const MESSAGE_CHARS: usize = 1000;

/// Marks where a quote or a message was cut.
pub const CUT: char = '…';

/// `text`, escaped (see [`char::escape_debug`]: control characters and `\`;
/// quotes are left as they are), cut to [`EXCERPT_CHARS`] characters, escapes
/// included, with `…` after.
pub fn excerpt(text: &str) -> String {
    excerpt_to(text, EXCERPT_CHARS)
}

/// [`excerpt`] with another length: `max` characters shown at most (and the
/// `…`).
pub fn excerpt_to(text: &str, max: usize) -> String {
    if text.chars().count() > max {
        // A number is shown whole, shortened: its first digits cut off
        // would read as another number.
        if let Ok(x) = text.trim().parse::<f64>() {
            if x.is_finite() {
                return format!("{x:.3e}");
            }
        }
    }
    cut_to(text, max)
}

/// `text` escaped and cut to `max` characters, as it is.
fn cut_to(text: &str, max: usize) -> String {
    let mut out = String::new();
    let mut shown = 0;
    for c in text.chars() {
        let escaped = escaped(c);
        let len = escaped.clone().count();
        if shown + len > max {
            out.push(CUT);
            return out;
        }
        out.extend(escaped);
        shown += len;
    }
    out
}

/// [`excerpt`] of bytes that may not be UTF-8 (a CSV field): invalid bytes
/// show as `\u{fffd}`. Only the start of `bytes` is decoded, so a field of
/// any size costs the same.
pub fn excerpt_bytes(bytes: &[u8]) -> String {
    // 4 bytes per character at most, and one more to know whether it was cut.
    let head = &bytes[..bytes.len().min(EXCERPT_CHARS * 4 + 4)];
    let text = String::from_utf8_lossy(head);
    // Only a whole field may be read as a number.
    let mut out = if head.len() < bytes.len() {
        cut_to(&text, EXCERPT_CHARS)
    } else {
        excerpt(&text)
    };
    if head.len() < bytes.len() && !out.ends_with(CUT) {
        out.push(CUT);
    }
    out
}

/// A key path for an error: [`excerpt_to`] [`KEY_CHARS`], so an ordinary
/// path shows unchanged.
pub fn key(path: &str) -> String {
    excerpt_to(path, KEY_CHARS)
}

/// A message from another crate made safe to print on one line: every span
/// between backticks or double quotes cut to [`EXCERPT_CHARS`] characters
/// (escapes included), control characters escaped, and the whole cut to
/// [`MESSAGE_CHARS`].
/// Backslashes and quotes are left alone, since such messages often quote
/// with `{:?}` already; a message that quotes nothing long passes unchanged.
pub fn bounded(message: &str) -> String {
    let message = &short_numbers(message);
    let mut out = String::new();
    let mut quote: Option<(char, usize)> = None;
    let mut kept = 0;
    let mut previous = None;
    for c in message.chars() {
        if kept >= MESSAGE_CHARS {
            out.push(CUT);
            return out;
        }
        match quote {
            Some((open, n)) if c == open && previous != Some('\\') => {
                quote = None;
                if n > EXCERPT_CHARS {
                    out.push(CUT);
                }
                out.push(c);
                kept += 1;
            }
            Some((open, n)) => {
                let len = control_escaped(c).count();
                if n + len <= EXCERPT_CHARS {
                    out.extend(control_escaped(c));
                    kept += len;
                }
                // Past the excerpt, the span counts as long whatever follows.
                quote = Some((open, n + len));
            }
            None => {
                if c == '`' || c == '"' {
                    quote = Some((c, 0));
                }
                let len = control_escaped(c).count();
                out.extend(control_escaped(c));
                kept += len;
            }
        }
        previous = Some(c);
    }
    if matches!(quote, Some((_, n)) if n > EXCERPT_CHARS) {
        out.push(CUT);
    }
    out
}

/// `c` as [`char::escape_debug`] shows it, but quotes as they are: an
/// excerpt sits between backticks, where `it's` reads better than `it\'s`.
fn escaped(c: char) -> impl Iterator<Item = char> + Clone {
    let shown: Vec<char> = match c {
        '\'' | '"' => vec![c],
        // `escape_debug` leaves some invisible format characters as they are.
        c if hidden(c) && !c.is_control() => c.escape_unicode().collect(),
        c => c.escape_debug().collect(),
    };
    shown.into_iter()
}

/// `c`, or its escape if it does not show as itself (see
/// [`fdlab_sim::printable`]).
pub fn control_escaped(c: char) -> impl Iterator<Item = char> {
    let control = hidden(c);
    let plain = (!control).then_some(c).into_iter();
    let escape = control.then(|| c.escape_debug()).into_iter().flatten();
    plain.chain(escape)
}

use fdlab_sim::printable::hidden;

/// Digits in a row past which an error shows a number in scientific
/// notation: a `u64` has 20, so any longer run is an `f64` printed whole
/// (`1e308` as 309 digits) or pasted input.
const LONGEST_NUMBER_DIGITS: usize = 20;

/// `message` with every run of more than [`LONGEST_NUMBER_DIGITS`] digits
/// (and its fraction, if any) written as `1.000e308`. Every error that
/// prints an `f64` with `{}` goes through here, so none has to remember.
pub fn short_numbers(message: &str) -> String {
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
        // A number already cut by an excerpt (`1000…`) is not this long.
        let cut = chars.get(end) == Some(&CUT);
        match digits.parse::<f64>() {
            Ok(x) if i - start > LONGEST_NUMBER_DIGITS && x.is_finite() && !cut => {
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
    use super::*;

    #[test]
    fn short_plain_text_is_unchanged() {
        assert_eq!(excerpt("12x"), "12x");
        assert_eq!(excerpt("héllo wörld"), "héllo wörld");
        assert_eq!(excerpt(""), "");
        assert_eq!(
            key("detectors[0].fast.threshold"),
            "detectors[0].fast.threshold"
        );
    }

    #[test]
    fn control_characters_are_escaped() {
        assert_eq!(excerpt("a\0b"), "a\\0b");
        assert_eq!(excerpt("line\nnext\r"), "line\\nnext\\r");
        assert_eq!(excerpt("\u{1b}[2J"), "\\u{1b}[2J");
        assert_eq!(excerpt("tab\there"), "tab\\there");
        // The limit counts what is shown, escapes included.
        let nuls = excerpt(&"\0".repeat(100));
        assert_eq!(nuls, format!("{}…", "\\0".repeat(EXCERPT_CHARS / 2)));
        assert_eq!(excerpt("it's \"x\""), "it's \"x\"");
    }

    #[test]
    fn long_text_is_cut_with_a_mark() {
        let long = "x".repeat(20 << 20);
        let e = excerpt(&long);
        assert_eq!(e, format!("{}…", "x".repeat(EXCERPT_CHARS)));
        // Exactly the limit: not cut.
        let exact = "y".repeat(EXCERPT_CHARS);
        assert_eq!(excerpt(&exact), exact);
        // Characters, not bytes.
        let wide = "é".repeat(EXCERPT_CHARS + 1);
        assert_eq!(excerpt(&wide), format!("{}…", "é".repeat(EXCERPT_CHARS)));
        assert_eq!(excerpt_to("abcdef", 3), "abc…");
        // A long number is shortened, not cut.
        assert_eq!(excerpt(&format!("1{}", "0".repeat(308))), "1.000e308");
        assert_eq!(excerpt_to("123456", 3), "1.235e5");
    }

    #[test]
    fn bytes_are_decoded_lossily_and_only_in_part() {
        assert_eq!(excerpt_bytes(b"ok"), "ok");
        assert_eq!(excerpt_bytes(b"\xff\xfe1"), "\u{fffd}\u{fffd}1");
        assert_eq!(excerpt_bytes(b"a\x00b"), "a\\0b");
        let huge = vec![b'7'; 20 << 20];
        assert_eq!(
            excerpt_bytes(&huge),
            format!("{}…", "7".repeat(EXCERPT_CHARS))
        );
        // Invalid UTF-8 that makes the decoded head shorter than the limit
        // still shows that it was cut.
        let invalid = vec![0xffu8; 1000];
        let e = excerpt_bytes(&invalid);
        assert!(e.ends_with('…'), "{e}");
        assert!(e.chars().count() <= EXCERPT_CHARS + 1, "{e}");
    }

    #[test]
    fn bounded_cuts_long_quotes_and_escapes_controls() {
        let plain = "unknown key; expected one of `a`, `b`";
        assert_eq!(bounded(plain), plain);
        let serde = format!(
            "invalid type: string \"{}\", expected f64",
            "9".repeat(100_000)
        );
        assert_eq!(
            bounded(&serde),
            format!(
                "invalid type: string \"{}…\", expected f64",
                "9".repeat(EXCERPT_CHARS)
            )
        );
        let raw = format!("`{}`: not a duration", "a\nb".repeat(1000));
        let b = bounded(&raw);
        assert!(!b.contains('\n'), "{b}");
        assert!(b.ends_with("…`: not a duration"), "{b}");
        // An escaped quote does not end a quote.
        let escaped = format!("string \"a\\\"{}\"", "z".repeat(100));
        assert!(bounded(&escaped).ends_with("z…\""), "{}", bounded(&escaped));
        // Unbalanced quotes cannot get past the cap on the whole message.
        let backticks = "``".repeat(1 << 20);
        let b = bounded(&backticks);
        assert_eq!(b.chars().count(), MESSAGE_CHARS + 1);
        // An unclosed long quote is cut too.
        let open = format!("`{}", "q".repeat(500));
        assert_eq!(bounded(&open), format!("`{}…", "q".repeat(EXCERPT_CHARS)));
    }

    #[test]
    fn long_numbers_are_shortened_and_others_kept() {
        let huge = format!("must be at most 1e6, got {}", 1e308);
        assert_eq!(short_numbers(&huge), "must be at most 1e6, got 1.000e308");
        let frac = format!("got {}.5 s", "9".repeat(30));
        assert_eq!(short_numbers(&frac), "got 1.000e30 s");
        let kept = "seed 18446744073709551615, n12, 3.25 s, v1.2.3";
        assert_eq!(short_numbers(kept), kept);
        assert_eq!(short_numbers(""), "");
        let cut = format!("`{}…` has no unit", "1".repeat(60));
        assert_eq!(short_numbers(&cut), cut);
    }
}
