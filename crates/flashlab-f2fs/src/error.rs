//! Errors of the F2FS model.

use flashlab_vfs::Errno;

/// What went wrong.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum F2fsError {
    #[error("{0:?}")]
    Errno(Errno),
    #[error("device: {0}")]
    Device(String),
    #[error("mkfs: {0}")]
    Layout(String),
    #[error("settings: {0}")]
    Settings(String),
    #[error("invariant violated: {0}")]
    Invariant(String),
}

impl From<Errno> for F2fsError {
    fn from(e: Errno) -> Self {
        F2fsError::Errno(e)
    }
}

impl F2fsError {
    /// The errno a POSIX caller would see.
    pub fn errno(&self) -> Errno {
        match self {
            F2fsError::Errno(e) => *e,
            F2fsError::Layout(_) | F2fsError::Settings(_) => Errno::EINVAL,
            F2fsError::Device(_) | F2fsError::Invariant(_) => Errno::EIO,
        }
    }
}

pub type F2fsResult<T> = Result<T, F2fsError>;
