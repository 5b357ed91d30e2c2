//! UBI errors.

use flashlab_mtd::{MtdError, Nand};
use thiserror::Error;

/// A failed UBI operation.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum UbiError {
    /// The NAND failed (including `PowerCut`).
    #[error("flash: {0}")]
    Mtd(#[from] MtdError),
    /// No free PEB is left.
    #[error("no free physical eraseblock")]
    NoSpace,
    /// The bad-block reserve is exhausted; UBI is read-only.
    #[error("read-only: bad-block reserve exhausted")]
    ReadOnly,
    /// Unknown volume.
    #[error("no volume {0}")]
    NoVolume(u32),
    /// A volume with this id or name exists.
    #[error("volume exists")]
    Exists,
    /// LEB number, offset or length out of range or unaligned.
    #[error("bad LEB range: lnum {lnum} offs {offs} len {len}")]
    BadRange { lnum: u32, offs: u32, len: u32 },
    /// The device holds no UBI image.
    #[error("device is not UBI-formatted")]
    Unformatted,
    /// Settings or geometry unusable.
    #[error("bad settings: {0}")]
    Settings(String),
}

impl UbiError {
    /// True when the underlying cause is a power cut.
    pub fn is_power_cut(&self) -> bool {
        matches!(self, UbiError::Mtd(MtdError::PowerCut))
    }
}

/// Attach failed; the device is handed back.
pub struct AttachFailure {
    pub nand: Nand,
    pub error: UbiError,
}

impl std::fmt::Debug for AttachFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "AttachFailure({:?})", self.error)
    }
}
