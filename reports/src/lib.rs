//! fdlab's outputs. Every file is written atomically ([`atomic`]): the query
//! table of `fdlab trace` ([`query_csv`]); the QoS metrics of Chen, Toueg &
//! Aguilera computed from run outcomes ([`metrics`]) and their CSV files and
//! terminal table ([`tables`]); SVG charts ([`charts`]); the report of a run
//! as Markdown and self-contained HTML ([`report`], [`markdown`], [`html`],
//! with the tables of [`detail_table`]); the replay trace, its digest and the
//! timeline of one pair ([`replay`]); the CI gate's comparison ([`gate`]) and
//! its baseline file ([`baseline_file`]). A report's directory is written
//! whole ([`swap_dir`]), and replaced only when it is a report ([`report_dir`]).

pub mod atomic;
pub mod baseline_file;
pub mod charts;
pub mod cluster;
pub mod detail_table;
pub mod gate;
pub mod html;
pub mod markdown;
pub mod metrics;
pub mod pid;
pub mod query_csv;
pub mod replay;
pub mod report;
pub mod report_dir;
pub mod swap_dir;
pub mod tables;
pub mod verdict;
