//! memcached keys: what the text protocol accepts.
//!
//! memcached's protocol.txt: a key is at most 250 bytes and contains no
//! control characters or whitespace. python-memcached 1.59 (memcache.py
//! `check_key`) accepts the bytes `[\x21-\x7e\x80-\xff]`, 1 to 250 of them.
//! fdlab also requires UTF-8 (every client here hashes a string) and refuses
//! Unicode whitespace and control characters beyond ASCII (U+0085, U+00A0,
//! U+2028, ...), which a text client would split on or a reader would miss.

/// memcached's longest key, bytes.
pub const MAX_KEY_BYTES: usize = 250;

/// What a character is called in an error.
fn describe(c: char) -> String {
    match c {
        ' ' => "a space".into(),
        '\t' => "a tab".into(),
        '\n' => "a line feed".into(),
        '\r' => "a carriage return".into(),
        c if c.is_control() => format!("a control character (U+{:04X})", u32::from(c)),
        c => format!("whitespace (U+{:04X})", u32::from(c)),
    }
}

/// Checks a key: valid UTF-8, 1 to 250 bytes, no whitespace or control
/// character. The error completes "the key ...": "is empty", "is 251 bytes;
/// memcached keys are at most 250", "is not valid UTF-8 (byte 3)", "contains
/// a space at byte 4". Byte positions count from 1.
pub fn check_key(key: &[u8]) -> Result<&str, String> {
    if key.is_empty() {
        return Err("is empty".into());
    }
    if key.len() > MAX_KEY_BYTES {
        return Err(format!(
            "is {} bytes; memcached keys are at most {MAX_KEY_BYTES}",
            key.len()
        ));
    }
    let text = std::str::from_utf8(key)
        .map_err(|e| format!("is not valid UTF-8 (byte {})", e.valid_up_to() + 1))?;
    if let Some((at, c)) = text
        .char_indices()
        .find(|&(_, c)| c.is_whitespace() || c.is_control())
    {
        return Err(format!("contains {} at byte {}", describe(c), at + 1));
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn good_keys_pass() {
        assert_eq!(check_key(b"Users.Profile.42"), Ok("Users.Profile.42"));
        assert_eq!(check_key("clé".as_bytes()), Ok("clé"));
        assert!(check_key(&[b'k'; MAX_KEY_BYTES]).is_ok());
    }

    #[test]
    fn each_fault_is_named_with_its_byte() {
        assert_eq!(check_key(b""), Err("is empty".into()));
        assert_eq!(
            check_key(&[b'k'; 251]),
            Err("is 251 bytes; memcached keys are at most 250".into())
        );
        assert_eq!(
            check_key(b"ab\xffc"),
            Err("is not valid UTF-8 (byte 3)".into())
        );
        assert_eq!(
            check_key(b"abc def"),
            Err("contains a space at byte 4".into())
        );
        assert_eq!(check_key(b"a\tb"), Err("contains a tab at byte 2".into()));
        assert_eq!(
            check_key(b"\x01a"),
            Err("contains a control character (U+0001) at byte 1".into())
        );
        assert_eq!(
            check_key(b"a\x7f"),
            Err("contains a control character (U+007F) at byte 2".into())
        );
        assert_eq!(
            check_key("a\u{a0}b".as_bytes()),
            Err("contains whitespace (U+00A0) at byte 2".into())
        );
    }
}
