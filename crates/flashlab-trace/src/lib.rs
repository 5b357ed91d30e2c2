//! Streaming block-I/O trace readers and writers for flashlab.
//!
//! Readers turn text traces of thirteen formats ([`TraceFormat`]) into
//! [`Request`]s in bytes and nanoseconds; writers do the reverse. The crate
//! does no file I/O and never reads the clock: readers take any
//! [`std::io::BufRead`], writers any [`std::io::Write`]. Reading streams one
//! line at a time through a reused buffer, so memory does not grow with the
//! trace length. [`prefetched`] runs a consumer over a reader while a second thread
//! parses ahead (the same items, in order).
//!
//! ```
//! use flashlab_trace::{ReaderOptions, TraceReader, TraceFormat, Op};
//!
//! let text = "0 0 303567 7 0\n78643005 1 55596 6 1\n";
//! let reader = TraceReader::with_auto_detect(text.as_bytes(), ReaderOptions::named("x.ascii"))?;
//! assert_eq!(reader.format(), TraceFormat::Ssdsim);
//! let reqs: Vec<_> = reader.collect::<Result<_, _>>()?;
//! assert_eq!(reqs[1].op, Op::Read);
//! assert_eq!(reqs[1].offset_bytes, 55596 * 512);
//! # Ok::<(), flashlab_trace::TraceError>(())
//! ```
//!
//! See `docs/traces.md` for every format's columns, units and op encodings.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod detect;
mod error;
mod format;
mod formats;
mod parse;
mod prefetch;
mod reader;
mod stats;
mod writer;

pub use detect::{detect, SAMPLE_LINES};
pub use error::TraceError;
pub use format::{FormatChoice, Op, Request, TraceFormat, SECTOR_BYTES};
pub use prefetch::{prefetched, Prefetched};
pub use reader::{FioTimeUnit, ReaderOptions, TraceReader, MAX_LINE_BYTES};
pub use stats::{stats, TraceStats};
pub use writer::{write_header, write_request, TraceWriter};
