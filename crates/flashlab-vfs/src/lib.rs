//! flashlab-vfs: the file-system layer shared by flashlab's file systems.
//!
//! - [`FileSystem`]: the POSIX-like calls every file-system model offers
//!   (create, open, read, write, truncate, unlink, mkdir, rmdir, rename,
//!   readdir, stat, fsync, sync, statfs) plus the few inode-level hooks a
//!   page cache above it needs (write one page, write the inode, budget
//!   dirty pages, device time, simulated time).
//! - [`PageCache`]: Linux's page cache and writeback rules over any
//!   [`FileSystem`], driven by simulated time (see `docs/flashfs.md`).
//!
//! - [`idhash`]: integer-keyed maps and sets without SipHash, shared by
//!   the page cache and the host file-system models.
//! - [`workload`]: the file workloads (fileserver, varmail, dd, untar,
//!   IOZone) and [`workload::run_workload`], the generic runner of
//!   `flashlab fs bench`.
//!
//! No file I/O, no wall clock.

mod cache;
mod frames;
pub mod idhash;
mod lru;
mod pagemap;
mod readahead;
mod settings;
mod types;
pub mod workload;
mod writeback;

pub use cache::{CacheStats, PageCache};
pub use settings::CacheSettings;
pub use types::{new_tail_token, DirEntry, Errno, Fd, FileSystem, Stat, StatFs, TailToken, PAGE_BYTES, TAIL_HEAD};
