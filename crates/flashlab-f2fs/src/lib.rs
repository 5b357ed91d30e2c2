//! flashlab-f2fs: an F2FS-like log-structured file system over
//! flashlab's simulated SSD ([`flashlab_sim::Ssd`]), following Linux's
//! fs/f2fs and mkfs.f2fs (the function each rule follows is named where
//! it is implemented; `docs/host-fs.md` lists what differs).
//!
//! - `layout`: mkfs's areas, overprovision and reserved segments;
//! - `temp`: the six logs and the temperature rules;
//! - `seg`: SIT, SSA, free segments, LFS and SSR allocation;
//! - `node`: the NAT and the node tree of a file;
//! - `fs`, `ns`: the file system's state and its POSIX-like calls;
//! - `gc`: foreground greedy and background cost-benefit cleaning;
//! - `checkpoint`: checkpoints, roll-forward fsync, discard, timers;
//! - `io`: requests to the SSD at the simulated clock;
//! - `meta`: node, NAT and dentry reads on a cold cache;
//! - `invariants`: strict-mode checks;
//!
//! No file I/O, no wall clock.

mod checkpoint;
mod content;
mod error;
mod fs;
mod gc;
mod invariants;
mod io;
pub mod layout;
mod measured;
mod meta;
mod node;
mod ns;
mod seg;
mod settings;
mod stats;
mod temp;
mod vfs_impl;

pub use error::{F2fsError, F2fsResult};
pub use fs::{is_cold_name, F2fs, Inode, DENTRY_SLOTS};
pub use layout::{best_overprovision, Layout, LayoutError, MkfsTools};
pub use node::{ADDRS_PER_BLOCK, ADDRS_PER_INODE, ROOT_INO};
pub use seg::NONE;
pub use settings::{ContentMode, F2fsSettings, IpuPolicy, KernelRules, SettingsError};
pub use stats::F2fsStats;
pub use temp::{LogType, NodeKind};
