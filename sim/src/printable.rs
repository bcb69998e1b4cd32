//! Characters a terminal does not show as themselves.
//!
//! A name or a value quoted in an error or a report is read by a person on a
//! terminal, in a CI log or a browser. Control characters (a line break, an
//! escape sequence) break the one line an error is; the invisible format
//! characters do worse, silently: a right-to-left override (U+202E) shows
//! `detector-evil` as `live-rotceted`, a zero-width space makes two names
//! that look the same differ. Both are escaped wherever input is echoed,
//! and refused in the names a scenario gives.

/// Whether `c` is not shown as itself: a control character (Unicode `Cc`),
/// or one of the invisible format characters that reorder or hide text
/// (the bidirectional controls of Unicode's UAX #9, zero-width characters,
/// the byte-order mark).
pub fn hidden(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{00AD}'                  // soft hyphen
                | '\u{061C}'            // Arabic letter mark
                | '\u{180E}'            // Mongolian vowel separator
                | '\u{200B}'..='\u{200F}' // zero-width space .. right-to-left mark
                | '\u{202A}'..='\u{202E}' // embeddings and overrides
                | '\u{2060}'..='\u{2064}' // word joiner .. invisible plus
                | '\u{2066}'..='\u{2069}' // isolates
                | '\u{FEFF}'            // byte-order mark
        )
}

/// The first hidden character of `text`, if any.
pub fn first_hidden(text: &str) -> Option<char> {
    text.chars().find(|&c| hidden(c))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn controls_and_invisible_format_characters_are_hidden() {
        for c in [
            '\0', '\n', '\u{1b}', '\u{7f}', '\u{202E}', '\u{200B}', '\u{FEFF}', '\u{2066}',
        ] {
            assert!(hidden(c), "{c:?}");
        }
        for c in ['a', 'é', '-', ' ', '…', '漢', '\u{05D0}'] {
            assert!(!hidden(c), "{c:?}");
        }
        assert_eq!(first_hidden("abc\u{202E}def"), Some('\u{202E}'));
        assert_eq!(first_hidden("plain"), None);
    }
}
