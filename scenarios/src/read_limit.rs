//! How much of an input file fdlab reads at most.
//!
//! Inputs are read whole into memory. A file named by mistake can be huge, or
//! endless (`/dev/zero`, a pipe that never closes, `/dev/urandom`): read
//! without a bound, it takes all the memory there is before anything can say
//! what is wrong. So every input is read through [`read_limited`] with a
//! limit per kind of file, far above any real one, and a file past it is
//! refused with the figure. A regular file's size is checked before reading
//! ([`open_limited`]), so a large one costs nothing; anything else is read up
//! to one byte past the limit.

use std::fmt;
use std::fs::File;
use std::io::{self, Read};
use std::path::Path;

const MIB: u64 = 1 << 20;

/// Bytes of a scenario file or a `fdlab check` baseline: hand-written TOML of a
/// few kilobytes.
pub const TEXT_FILE_LIMIT: u64 = 64 * MIB;

/// Bytes of an empirical distribution's samples file.
pub const SAMPLES_FILE_LIMIT: u64 = 64 * MIB;

/// Bytes of a recording (the events of `fdlab trace`, the heartbeats of
/// `fdlab tune --trace`): tens of millions of rows.
pub const RECORDING_LIMIT: u64 = 1024 * MIB;

/// Why an input was not read.
#[derive(Debug)]
pub enum ReadLimitError {
    /// Opening or reading failed.
    Io(io::Error),
    /// The input holds more than `limit` bytes (a regular file of `size`
    /// bytes, or a stream that went on past the limit).
    TooLarge { limit: u64, size: Option<u64> },
}

impl fmt::Display for ReadLimitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReadLimitError::Io(e) => e.fmt(f),
            ReadLimitError::TooLarge { limit, size } => {
                match size {
                    Some(size) => write!(f, "{size} bytes, ")?,
                    None => f.write_str("it goes on ")?,
                }
                write!(
                    f,
                    "past the limit of {} for this kind of file; is it the right file?",
                    size_text(*limit)
                )
            }
        }
    }
}

impl std::error::Error for ReadLimitError {}

impl From<io::Error> for ReadLimitError {
    fn from(e: io::Error) -> Self {
        ReadLimitError::Io(e)
    }
}

/// `64 MiB`, `1 GiB`, or bytes when not a whole number of MiB.
pub fn size_text(bytes: u64) -> String {
    const GIB: u64 = 1024 * MIB;
    // Both units are powers of two: a whole number of them has no low bits.
    if bytes >= GIB && bytes & (GIB - 1) == 0 {
        format!("{} GiB", bytes / GIB)
    } else if bytes >= MIB && bytes & (MIB - 1) == 0 {
        format!("{} MiB", bytes / MIB)
    } else {
        format!("{bytes} bytes")
    }
}

/// Opens `path` for reading, refusing a regular file of more than `limit`
/// bytes (from its size, before reading).
pub fn open_limited(path: &Path, limit: u64) -> Result<File, ReadLimitError> {
    let file = File::open(path)?;
    let meta = file.metadata()?;
    if meta.is_file() && meta.len() > limit {
        return Err(ReadLimitError::TooLarge {
            limit,
            size: Some(meta.len()),
        });
    }
    Ok(file)
}

/// Everything `reader` gives, if that is at most `limit` bytes.
pub fn read_limited(reader: impl Read, limit: u64) -> Result<Vec<u8>, ReadLimitError> {
    let mut data = Vec::new();
    let mut reader = reader.take(limit.saturating_add(1));
    let mut chunk = vec![0u8; 1 << 16];
    loop {
        let n = match reader.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e.into()),
        };
        if data.len() as u64 + n as u64 > limit {
            return Err(ReadLimitError::TooLarge { limit, size: None });
        }
        // Grow by doubling, but never past the limit: a file just under it
        // takes its own size, not twice that.
        if data.capacity() - data.len() < n {
            let cap_limit = usize::try_from(limit).unwrap_or(usize::MAX);
            let wanted = (data.capacity() * 2).max(data.len() + n).min(cap_limit);
            data.try_reserve_exact(wanted - data.len())
                .map_err(|e| io::Error::new(io::ErrorKind::OutOfMemory, e))?;
        }
        data.extend_from_slice(&chunk[..n]);
    }
    Ok(data)
}

/// [`open_limited`] then [`read_limited`].
pub fn read_file_limited(path: &Path, limit: u64) -> Result<Vec<u8>, ReadLimitError> {
    read_limited(open_limited(path, limit)?, limit)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_as_people_write_them() {
        assert_eq!(size_text(TEXT_FILE_LIMIT), "64 MiB");
        assert_eq!(size_text(RECORDING_LIMIT), "1 GiB");
        assert_eq!(size_text(1000), "1000 bytes");
    }

    #[test]
    fn reads_up_to_the_limit_and_refuses_past_it() {
        assert_eq!(read_limited(&b"12345"[..], 5).unwrap(), b"12345");
        assert_eq!(read_limited(&b""[..], 0).unwrap(), b"");
        let e = read_limited(&b"123456"[..], 5).unwrap_err();
        assert!(matches!(
            e,
            ReadLimitError::TooLarge {
                limit: 5,
                size: None
            }
        ));
        assert_eq!(
            e.to_string(),
            "it goes on past the limit of 5 bytes for this kind of file; is it the right file?"
        );
    }

    #[test]
    fn an_endless_stream_stops_at_the_limit() {
        let e = read_limited(io::repeat(0), 3 * MIB).unwrap_err();
        assert!(e.to_string().contains("3 MiB"), "{e}");
        // A stream of exactly the limit is read; one byte more is refused.
        assert!(read_limited(io::repeat(7).take(MIB), MIB).is_ok());
        assert!(read_limited(io::repeat(7).take(MIB + 1), MIB).is_err());
    }

    #[test]
    fn a_large_regular_file_is_refused_from_its_size() {
        let dir = std::env::temp_dir().join(format!("fdlab-read-limit-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("sparse.csv");
        File::create(&path).unwrap().set_len(10 * MIB).unwrap();
        let e = read_file_limited(&path, MIB).unwrap_err();
        assert_eq!(
            e.to_string(),
            "10485760 bytes, past the limit of 1 MiB for this kind of file; is it the right file?"
        );
        assert_eq!(
            read_file_limited(&path, 10 * MIB).unwrap().len() as u64,
            10 * MIB
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
