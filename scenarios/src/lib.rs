//! Input formats of fdlab, parsed and validated so that every mistake is
//! reported once, clearly, with the file, line or key it is in (spec §7):
//!
//! - [`scenario_file`]: scenario files (TOML), read into a validated
//!   [`fdlab_sim::scenario::Scenario`]; errors name the file, the line and the
//!   key (`crash.toml:14: `faults[1].probability`: ...`);
//! - [`builtin`]: the built-in scenario library, TOML files under
//!   `scenarios/builtin/` embedded in the binary (and plain files to copy);
//! - [`resolve`](mod@resolve): a command's `SCENARIO` argument, a file or a
//!   built-in name;
//! - [`detector_spec`]: detector specifications, from a scenario's
//!   `[[detectors]]` table or the `KEY=VALUE,...` argument of
//!   `fdlab trace --detector`;
//! - [`events`]: recorded event lists, the CSV input of `fdlab trace`;
//! - [`heartbeat_recording`]: recorded heartbeat arrivals, the `--trace` input of
//!   `fdlab tune`;
//! - [`search_space`]: the parameter grid `fdlab tune` searches per detector kind;
//! - [`vary`]: the `--vary KEY=SPEC` arguments of `fdlab sweep`, one
//!   dimension each;
//! - [`sweep_plan`]: a sweep's points, seeds and shards, and `sweep.toml`,
//!   the plan `fdlab sweep --resume` and `fdlab merge` read back;
//! - [`cluster_keys`] and [`cluster_plan`]: the keys a membership scenario
//!   is swept and tuned over (`membership.orleans.KEY`, `JUDGE.KEY`), and a
//!   membership sweep's points, judges and `sweep.toml`; [`cluster_search`]:
//!   the settings `fdlab tune` searches per judge of a membership scenario;
//! - [`scenario_writer`]: a scenario written back as a scenario file (the
//!   minimal reproducers of `fdlab swarm`);
//! - [`seed_range`](mod@seed_range): `--seed S` and N seeds, refused when
//!   they would wrap past the largest seed.
//!
//! Two rules hold for every input: it is read through [`read_limit`], so a
//! huge or endless file is refused with the limit instead of filling the
//! memory, and whatever an error quotes of it goes through [`excerpt`]: a
//! short, escaped excerpt.

pub mod builtin;
pub mod cluster_keys;
pub mod cluster_plan;
pub mod cluster_search;
pub mod detector_spec;
pub mod events;
pub mod excerpt;
pub mod heartbeat_recording;
pub mod read_limit;
pub mod resolve;
pub mod scenario_file;
pub mod scenario_writer;
pub mod search_space;
pub mod seed_range;
pub mod sweep_plan;
pub mod vary;

pub use builtin::{builtin, builtin_scenario, builtin_suite};
pub use detector_spec::{detector_from_table, parse_detector_arg, DetectorSpec, SpecError};
pub use events::{parse_events, EventsError};
pub use resolve::{resolve, resolve_with_swarm, ResolveError};
pub use scenario_file::{
    key_place, load_scenario, load_scenario_with_swarm, parse_scenario, parse_scenario_with_swarm,
    ScenarioFileError,
};
pub use scenario_writer::write_scenario;
