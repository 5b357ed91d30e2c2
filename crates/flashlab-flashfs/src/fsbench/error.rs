//! Errors of a benchmark run.

use thiserror::Error;

/// Why a run could not be carried out.
#[derive(Debug, Error)]
pub enum BenchError {
    #[error("invalid device: {0}")]
    Device(String),
    #[error("format or mount failed: {0}")]
    Mount(String),
    #[error("file system error during {phase}: {error}")]
    Fs { phase: &'static str, error: crate::FsError },
}
