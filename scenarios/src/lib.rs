//! Input formats of fdlab, parsed and validated so that every mistake is
//! reported once, clearly, with the file, line or key it is in (spec §7):
//!
//! - [`detector_spec`]: detector specifications, from a scenario's
//!   `[[detectors]]` table or the `KEY=VALUE,...` argument of
//!   `fdlab trace --detector`;
//! - [`events`]: recorded event lists, the CSV input of `fdlab trace`.
//!
//! Scenario files (schema, validation, the built-in library) come later.

pub mod detector_spec;
pub mod events;

pub use detector_spec::{detector_from_table, parse_detector_arg, DetectorSpec, SpecError};
pub use events::{parse_events, EventsError};
