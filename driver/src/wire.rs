//! The messages the driver exchanges: 13 bytes, `[tag][u32 LE][u64 LE]`:
//! liveness datagrams, and the data-stream frames a host delivers from a
//! stream socket (a dataflow stage's upstream link).
//!
//! Decoding never panics: anything that is not exactly one of our messages
//! (wrong length, unknown tag) is `None`, and the driver drops it, as a UDP
//! host drops garbage.

use fdlab_protocol::{Frame, Nanos};

/// One liveness message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Msg {
    /// A heartbeat of the stream sent every `interval` (detectors subscribe
    /// to the stream of their own interval, as in the simulator).
    Heartbeat { interval: Nanos },
    /// A probe for the monitor's watch number `watch`.
    Probe { watch: u32, id: u64 },
    /// The answer to a probe, echoing it.
    ProbeReply { watch: u32, id: u64 },
    /// A frame of the data stream from the sender (for the detectors that
    /// watch that stream).
    Frame(Frame),
}

/// Bytes of every encoded message.
pub const LEN: usize = 13;

const HEARTBEAT: u8 = 1;
const PROBE: u8 = 2;
const PROBE_REPLY: u8 = 3;
const DATA: u8 = 4;
const STREAM_HEARTBEAT: u8 = 5;
const BACKPRESSURE: u8 = 6;
const MAINTENANCE: u8 = 7;

impl Msg {
    pub fn encode(self) -> [u8; LEN] {
        let (tag, a, b) = match self {
            Msg::Heartbeat { interval } => (HEARTBEAT, 0, interval.as_nanos()),
            Msg::Probe { watch, id } => (PROBE, watch, id),
            Msg::ProbeReply { watch, id } => (PROBE_REPLY, watch, id),
            Msg::Frame(Frame::Data) => (DATA, 0, 0),
            Msg::Frame(Frame::StreamHeartbeat) => (STREAM_HEARTBEAT, 0, 0),
            Msg::Frame(Frame::Backpressure) => (BACKPRESSURE, 0, 0),
            Msg::Frame(Frame::Maintenance { pause }) => (MAINTENANCE, 0, pause.as_nanos()),
        };
        let mut out = [0u8; LEN];
        out[0] = tag;
        out[1..5].copy_from_slice(&a.to_le_bytes());
        out[5..].copy_from_slice(&b.to_le_bytes());
        out
    }

    pub fn decode(bytes: &[u8]) -> Option<Msg> {
        let bytes: &[u8; LEN] = bytes.try_into().ok()?;
        let a = u32::from_le_bytes(bytes[1..5].try_into().ok()?);
        let b = u64::from_le_bytes(bytes[5..].try_into().ok()?);
        match bytes[0] {
            HEARTBEAT => Some(Msg::Heartbeat { interval: Nanos(b) }),
            PROBE => Some(Msg::Probe { watch: a, id: b }),
            PROBE_REPLY => Some(Msg::ProbeReply { watch: a, id: b }),
            DATA => Some(Msg::Frame(Frame::Data)),
            STREAM_HEARTBEAT => Some(Msg::Frame(Frame::StreamHeartbeat)),
            BACKPRESSURE => Some(Msg::Frame(Frame::Backpressure)),
            MAINTENANCE => Some(Msg::Frame(Frame::Maintenance { pause: Nanos(b) })),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_garbage() {
        for m in [
            Msg::Heartbeat {
                interval: Nanos::from_millis(100),
            },
            Msg::Probe { watch: 3, id: 77 },
            Msg::ProbeReply {
                watch: u32::MAX,
                id: u64::MAX,
            },
            Msg::Frame(Frame::Data),
            Msg::Frame(Frame::StreamHeartbeat),
            Msg::Frame(Frame::Backpressure),
            Msg::Frame(Frame::Maintenance {
                pause: Nanos::from_secs(5),
            }),
        ] {
            assert_eq!(Msg::decode(&m.encode()), Some(m));
        }
        assert_eq!(Msg::decode(&[]), None);
        assert_eq!(Msg::decode(&[1; 12]), None);
        assert_eq!(Msg::decode(&[1; 14]), None);
        assert_eq!(Msg::decode(&[9; LEN]), None);
    }
}
