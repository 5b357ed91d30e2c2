//! Errors of raw NAND operations.

use thiserror::Error;

/// The outcome of a failed NAND operation.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum MtdError {
    /// Power was cut at or before this operation; call `reboot` first.
    #[error("power cut")]
    PowerCut,
    /// The block is marked bad.
    #[error("block {0} is bad")]
    BadBlock(u32),
    /// ECC could not correct the page.
    #[error("uncorrectable ECC error in block {block} page {page}")]
    Uncorrectable { block: u32, page: u32 },
    /// The program operation failed; the page content is undefined.
    #[error("program failed in block {block} page {page}")]
    ProgramFailed { block: u32, page: u32 },
    /// The erase failed; the block must be retired.
    #[error("erase of block {0} failed")]
    EraseFailed(u32),
    /// A (sub-)page was programmed twice without an erase (a caller bug).
    #[error("block {block} offset {offs} already programmed")]
    AlreadyProgrammed { block: u32, offs: u32 },
    /// Address or length outside the device or not aligned.
    #[error("bad address: block {block} offset {offs} length {len}")]
    BadAddress { block: u32, offs: u32, len: u32 },
    /// The block device under block2mtd (the simulated SSD) failed a request.
    #[error("block2mtd: the SSD failed a request: {0}")]
    Device(String),
}

impl MtdError {
    /// True for the power-cut error.
    pub fn is_power_cut(&self) -> bool {
        matches!(self, MtdError::PowerCut)
    }
}
