//! File-system errors.

use flashlab_ubi::{Ubi, UbiError};
use thiserror::Error;

pub use flashlab_vfs::Errno;

/// A failed file-system operation.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum FsError {
    #[error("{0:?}")]
    Errno(Errno),
    /// The flash or UBI failed (a power cut included); the mounted file
    /// system must be dropped and mounted again.
    #[error("ubi: {0}")]
    Io(#[from] UbiError),
    /// On-flash data failed its checks.
    #[error("corrupt: {0}")]
    Corrupt(String),
    /// An internal invariant does not hold (strict mode).
    #[error("invariant: {0}")]
    Invariant(#[from] InvariantViolation),
}

impl FsError {
    /// The errno a POSIX caller would see.
    pub fn errno(&self) -> Errno {
        match self {
            FsError::Errno(e) => *e,
            FsError::Io(UbiError::ReadOnly) => Errno::EROFS,
            _ => Errno::EIO,
        }
    }

    pub fn is_power_cut(&self) -> bool {
        matches!(self, FsError::Io(e) if e.is_power_cut())
    }
}

impl From<Errno> for FsError {
    fn from(e: Errno) -> Self {
        FsError::Errno(e)
    }
}

pub type FsResult<T> = Result<T, FsError>;

/// A broken internal invariant.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("{what}")]
pub struct InvariantViolation {
    pub what: String,
}

impl InvariantViolation {
    pub fn new(what: impl Into<String>) -> Self {
        Self { what: what.into() }
    }
}

/// Mount or format failed; UBI is handed back.
pub struct MountFailure {
    pub ubi: Ubi,
    pub error: FsError,
}

impl std::fmt::Debug for MountFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "MountFailure({:?})", self.error)
    }
}
