//! flashlab-ubi: UBI-style volume management over raw NAND.
//!
//! Every PEB carries a 64-byte erase-counter (EC) header and, once it holds
//! data, a 64-byte volume-id (VID) header with a global sequence number;
//! both have a CRC-32. UBI maps LEBs of volumes to PEBs, attaches by
//! scanning the headers (cost reported) or through a fastmap, levels wear
//! with a threshold and a protection queue, scrubs LEBs after corrected
//! bit-flips, tortures PEBs after program failures and retires bad ones
//! into a reserve, and offers an atomic LEB change.

// Failures hand the (large) device back by value, on purpose.
#![allow(clippy::result_large_err)]

mod attach;
mod error;
mod fastmap;
mod headers;
mod io;
mod pebs;

mod settings;
mod stats;
mod ubi;
mod volumes;
mod wl;

pub use error::{AttachFailure, UbiError};
pub use headers::{EcHdr, Parsed, VidHdr, HDR_BYTES};
pub use settings::UbiSettings;
pub use stats::UbiStats;
pub use ubi::{Geometry, Ubi, VolumeInfo, FASTMAP_VOL, LAYOUT_VOL};
