use thiserror::Error;

/// A configuration error; its `Display` is one line naming the file, line or key.
#[derive(Debug, Error, PartialEq)]
pub enum ConfigError {
    #[error("{source_name}: {message}")]
    Syntax { source_name: String, message: String },
    #[error("{location}: unknown key `{key}`; nearest valid: {nearest}")]
    UnknownKey { location: String, key: String, nearest: String },
    #[error("--set {arg:?}: expected KEY=VALUE, e.g. device.spare_factor=0.1")]
    SetSyntax { arg: String },
    #[error("--set {key}: {message}")]
    SetValue { key: String, message: String },
    #[error("{key} = {value}: {expected}")]
    Invalid { key: &'static str, value: String, expected: String },
    #[error(transparent)]
    Geometry(#[from] flashlab_nand::GeometryError),
    #[error(transparent)]
    Ftl(#[from] flashlab_ftl::FtlError),
    /// A key whose name is built at run time (e.g. `flashfs.flash.blocks`).
    #[error("{key}: {message}")]
    Setting { key: String, message: String },
    #[error("hotness.identifiers[{index}]: {message}")]
    Identifier { index: usize, message: String },
}

impl ConfigError {
    pub(crate) fn invalid(key: &'static str, value: impl std::fmt::Display, expected: impl Into<String>) -> Self {
        ConfigError::Invalid { key, value: value.to_string(), expected: expected.into() }
    }
}
