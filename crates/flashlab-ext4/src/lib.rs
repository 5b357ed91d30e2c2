//! flashlab-ext4: an ext4-like host file system over the simulated SSD
//! ([`flashlab_sim::Ssd`]), behind the shared file-system API
//! ([`flashlab_vfs::FileSystem`]); run it under [`flashlab_vfs::PageCache`]
//! for Linux's delayed allocation and writeback.
//!
//! - `layout`, `layout_tables`: block groups as mke2fs lays them out, with
//!   `flex_bg` (16 groups a flex group, mke2fs's ext4 default) or without;
//! - `alloc`: mballoc-like block allocation at `ext4_ext_find_goal`'s goal,
//!   Orlov directory spreading over flex groups, files in their parent's
//!   flex group;
//! - `mballoc`: a data request's normalised window and power-of-two
//!   aligned (buddy) placement when the goal is taken;
//! - `lgprealloc`: small files' data from the locality group's preallocations;
//! - `data`: delayed allocation at writeback, in-place overwrites, truncation;
//! - `journal`: jbd2 ordered mode — commit, checkpoint, metadata writeback;
//! - `io`: requests at the simulated clock, waits where Linux waits;
//! - `meta`: metadata reads on a cold cache (buffer and inode caches);
//! - `check`: the strict-mode invariants.
//!
//! See docs/host-fs.md (`## ext4-like model`) for the rules and what differs
//! from Linux. No file I/O, no wall clock.

mod alloc;
mod bits;
mod check;
mod data;
mod dirhash;
mod error;
mod fs;
mod ialloc;
mod inode;
mod io;
mod journal;
mod layout;
mod layout_tables;
mod lgprealloc;
mod mballoc;
mod measured;
mod meta;
mod namei;
mod settings;
mod stats;
mod vfs_impl;

pub use data::content_tag;
pub use error::{Ext4Error, Ext4Result};
pub use fs::Ext4;
pub use io::{Req, FLUSH_BLOCK, MAX_REQUEST_BLOCKS};
pub use journal::{REVOKES_PER_BLOCK, TAGS_PER_DESCRIPTOR};
pub use layout::{GroupTables, Layout, BLOCK, FIRST_INO, JOURNAL_INO, LOST_FOUND_INO, ROOT_INO};
pub use settings::{Content, Ext4Settings, SettingsError};
pub use stats::{Cause, Ext4Stats};
pub use vfs_impl::MAX_FILE_BYTES;
