//! The rows a memberlist agent writes (`agents/memberlist/main.go`):
//! `unix_ns,observer,event,subject,detail`, one per thing the member
//! observed, with its local time.

use std::collections::BTreeMap;

use fdlab_protocol::Nanos;

/// What an agent observed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// It is up, on this port.
    Ready { port: u16 },
    /// The subject became Alive in its list (first heard of, or back from
    /// Dead).
    Join,
    /// It moved the subject to Suspect; `probe`: by its own failed probe
    /// (the subject is named), else heard by gossip (the subject is not).
    Suspect { probe: bool },
    /// Its own suspicion timer of the subject ran out.
    Declare,
    /// It moved the subject to Dead (its own timer, or gossip).
    Dead,
    /// It refuted a suspicion (`dead`: a death) of itself.
    Refute { dead: bool },
    /// Cumulative counts of what it sent: UDP packets, TCP streams opened
    /// or accepted.
    Sent { packets: u64, streams: u64 },
    /// A line memberlist logged as an error.
    Error,
}

impl Event {
    /// What the row's detail field said.
    pub fn detail(self) -> String {
        match self {
            Event::Ready { port } => port.to_string(),
            Event::Suspect { probe } => if probe { "probe" } else { "gossip" }.into(),
            Event::Refute { dead } => if dead { "dead" } else { "suspect" }.into(),
            Event::Sent { packets, streams } => format!("{packets}/{streams}"),
            Event::Join | Event::Declare | Event::Dead | Event::Error => String::new(),
        }
    }

    pub const fn name(self) -> &'static str {
        match self {
            Event::Ready { .. } => "ready",
            Event::Join => "join",
            Event::Suspect { .. } => "suspect",
            Event::Declare => "declare",
            Event::Dead => "dead",
            Event::Refute { .. } => "refute",
            Event::Sent { .. } => "sent",
            Event::Error => "error",
        }
    }
}

/// One row, its time from the run's time zero (rows before it are dropped).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Row {
    pub at: Nanos,
    pub observer: u32,
    pub event: Event,
    pub subject: Option<u32>,
}

impl Row {
    /// Parses a line of agent `observer`; `numbers` maps member names to
    /// their numbers. Returns the row's Unix time in nanoseconds beside it.
    pub fn parse(
        line: &str,
        observer: &str,
        numbers: &BTreeMap<&str, u32>,
    ) -> Result<(i128, Row), String> {
        let fields: Vec<&str> = line.splitn(5, ',').collect();
        let [unix, who, event, subject, detail] = fields[..] else {
            return Err("a row of fewer than 5 fields".into());
        };
        let unix: i128 = unix.parse().map_err(|_| "a bad time")?;
        if who != observer {
            return Err(format!("a row of {who}"));
        }
        let number = |name: &str| {
            numbers
                .get(name)
                .copied()
                .ok_or_else(|| format!("an unknown member {name:?}"))
        };
        let count = |s: &str| s.parse::<u64>().map_err(|_| format!("a bad count {s:?}"));
        let event = match event {
            "ready" => Event::Ready {
                port: detail.parse().map_err(|_| "a bad port")?,
            },
            "join" => Event::Join,
            "suspect" => Event::Suspect {
                probe: detail == "probe",
            },
            "declare" => Event::Declare,
            "dead" => Event::Dead,
            "refute" => Event::Refute {
                dead: detail == "dead",
            },
            "sent" => {
                let (packets, streams) = detail.split_once('/').ok_or("a bad count")?;
                Event::Sent {
                    packets: count(packets)?,
                    streams: count(streams)?,
                }
            }
            "error" => Event::Error,
            other => return Err(format!("an unknown event {other:?}")),
        };
        let subject = match subject {
            "" => None,
            s => Some(number(s)?),
        };
        let row = Row {
            at: Nanos::ZERO,
            observer: number(observer)?,
            event,
            subject,
        };
        Ok((unix, row))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_parse_and_bad_rows_are_refused() {
        let names: BTreeMap<&str, u32> = [("n0", 0), ("n1", 1)].into_iter().collect();
        let (unix, row) = Row::parse("17,n0,dead,n1,", "n0", &names).unwrap();
        assert_eq!(unix, 17);
        assert_eq!(
            (row.observer, row.event, row.subject),
            (0, Event::Dead, Some(1))
        );
        let (_, row) = Row::parse("17,n1,sent,,12/3", "n1", &names).unwrap();
        assert_eq!(
            row.event,
            Event::Sent {
                packets: 12,
                streams: 3
            }
        );
        let (_, row) = Row::parse("1,n1,suspect,,gossip", "n1", &names).unwrap();
        assert_eq!(
            (row.event, row.subject),
            (Event::Suspect { probe: false }, None)
        );
        for bad in [
            "17,n0,dead",
            "x,n0,dead,n1,",
            "17,n1,dead,n0,",
            "17,n0,dead,n7,",
            "17,n0,ate,n1,",
            "17,n0,sent,,12",
        ] {
            assert!(Row::parse(bad, "n0", &names).is_err(), "{bad}");
        }
    }
}
