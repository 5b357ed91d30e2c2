//! Errors of the ext4 model.

use crate::settings::SettingsError;
use flashlab_vfs::Errno;
use thiserror::Error;

#[derive(Debug, Error)]
pub enum Ext4Error {
    #[error("{0:?}")]
    Errno(Errno),
    #[error("SSD: {0}")]
    Device(String),
    #[error("{0}")]
    Layout(String),
    #[error("ext4 invariant violated: {0}")]
    Invariant(String),
    #[error(transparent)]
    Settings(#[from] SettingsError),
}

impl From<Errno> for Ext4Error {
    fn from(e: Errno) -> Self {
        Ext4Error::Errno(e)
    }
}

impl From<flashlab_sim::SimError> for Ext4Error {
    fn from(e: flashlab_sim::SimError) -> Self {
        Ext4Error::Device(e.to_string())
    }
}

impl Ext4Error {
    pub fn errno(&self) -> Errno {
        match self {
            Ext4Error::Errno(e) => *e,
            _ => Errno::EIO,
        }
    }
}

pub type Ext4Result<T> = Result<T, Ext4Error>;
