//! flashlab-flashfs: a UBIFS-style flash file system on flashlab-ubi.
//!
//! All content lives in CRC-protected nodes (inodes, 4 KiB data blocks
//! with optional compression, directory entries, truncations) appended to
//! journal heads (base, data, GC); a log of reference nodes lists the buds.
//! A commit writes the in-memory index B-tree out of place (the wandering
//! tree), the LEB-properties tree and the orphan list, then the master
//! node. Mount reads the master, loads the index and replays the journal
//! in sequence-number order. See `docs/flashfs.md`.
//!
//! Also: [`powercut`] (the power-cut campaign), [`model`] (the reference
//! file system used by tests) and [`jffs2`] (a JFFS2-style baseline).

// Failures hand UBI (and so the device) back by value, on purpose.
#![allow(clippy::result_large_err)]

mod api;
mod budget;
mod codec;
mod commit;
mod compress;
mod crc_tail;
#[cfg(test)]
mod data_crc_test;
mod error;
mod fs;
pub mod fsbench;
mod gc;
mod hot;
pub mod hot_truth;
mod idx_encode;
mod invariants;
pub mod jffs2;
mod journal;
#[cfg(test)]
mod journal_block_test;
mod key;
mod layout;
mod lprops;
mod lpsets;
mod lz4_memo;
mod lz4_probe;
mod lz4_seen;
mod measured;

pub mod model;
mod mount;
mod names;
mod node;
mod orphan;
pub mod powercut;
mod replay;
pub mod scaling;
mod settings;
mod statfs;
mod stats;
mod tnc;
mod tnc_arena;
#[cfg(test)]
mod tnc_cursor_test;
#[cfg(test)]
mod tnc_oracle;
#[cfg(test)]
mod tnc_vs_oracle;
mod vfs_impl;
mod vmap;
mod znode_lebs;

pub use api::{DirEntry, Stat, StatFs, BLOCK, MAX_FILE_BYTES, NAME_MAX};
pub use compress::Compression;
pub use error::{Errno, FsError, FsResult, InvariantViolation, MountFailure};
pub use flashlab_vfs::{CacheSettings, FileSystem, PageCache};
pub use fs::{Fd, Fs};
pub use layout::{ubifs_default_journal, FsGeo};
pub use settings::{FsSettings, HotHeadMapping};
pub use stats::{distribution, EraseDistribution, FsCounters, Stats};
pub use vfs_impl::OnFlash;
