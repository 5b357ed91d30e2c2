//! flashlab-mtd: a raw NAND flash device (MTD-like) with real bytes.
//!
//! Page and sub-page reads and programs, block erase, an out-of-band area,
//! and seeded fault models: factory and grown bad blocks, correctable
//! bit-flips, uncorrectable reads, program and erase failures, an
//! endurance limit, and a power cut at any chosen operation. After a cut
//! every operation fails with [`MtdError::PowerCut`] until [`Nand::reboot`];
//! the page being programmed holds partial garbage and a block being
//! erased is left untouched, erased or partly garbage.
//!
//! The same device can sit on the simulated SSD instead of raw flash
//! ([`Nand::block2mtd`], Linux's block2mtd): every read, program and erase
//! then also goes to the SSD as requests (see `block2mtd.rs`).
//!
//! No file I/O, no wall clock; all randomness comes from the seed.

mod block2mtd;
mod dedup;
mod error;
mod nand;
mod oob;
mod settings;
mod slab;
mod state;
mod stats;
mod store;

pub use block2mtd::{Block2Mtd, Block2MtdSettings, Block2MtdStats, EraseMode};
pub use error::MtdError;
pub use nand::{Nand, ReadInfo};
pub use settings::{FaultSettings, NandSettings, SettingsError};
pub use state::StateError;
pub use stats::{Cause, CauseCounts, MtdStats, ALL_CAUSES};
