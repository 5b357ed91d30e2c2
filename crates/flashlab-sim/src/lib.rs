//! The flashlab simulation driver.
//!
//! [`run`] takes validated [`Settings`] and an iterator of host requests (synthetic
//! or from a trace reader), splits each request into logical pages, drives the FTL,
//! schedules the NAND operations the FTL issued on a timeline of dies (busy-until)
//! and channel buses (transfer calendars) ([`timing`]), and returns a [`RunResult`].
//! It reads no files and no clock: the caller measures wall time and fills `wall_time_s`.

mod addr;
mod buffer;
mod calendar;
mod checks;
mod clock;
mod counting;
mod deferred;

mod end;
mod engine;
mod host;
pub mod hotness;
mod lookahead;
mod map_run;
mod merge_moves;
mod merge_run;
mod migrate_run;
mod observe;
mod pipeline;
mod prewrite;
mod report;
mod sched;
pub mod settings;
mod ssd;
mod trim;

mod result;
pub mod timing;

pub use addr::PageSpan;
pub use engine::{run, run_observed, run_prewrite_observed, run_synthetic, run_synthetic_observed, SimError};
pub use observe::{Observer, RequestRecord, RunEnd};
pub use pipeline::pipelined;
pub use ssd::{Completion, Ssd};

pub use flashlab_trace::Op;

pub use result::RunResult;
pub use settings::Settings;
