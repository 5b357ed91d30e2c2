//! The FUSE edge of flashlab: real software on simulated flash.
//!
//! * [`blockdev`]: `flashlab blockdev serve` — the simulated SSD as one disk file
//!   (loop device, mkfs, mount, fstrim work on it), contents in a [`store::SparseStore`],
//!   state saved as an [`image`].
//! * [`session`]: the mount-point checks and the serve loop (unmount or SIGINT ends it).
//!
//! The logic is in [`disk`], [`store`] and [`image`], tested without FUSE; the FUSE
//! `Filesystem` impls only translate calls.

pub mod blockdev;
pub mod disk;
pub mod image;
pub mod session;
pub mod store;

pub use disk::{Disk, DiskError, Pace};
pub use session::{check_mount_point, serve, MountError};
pub mod flashvol;
pub mod fsmount;
