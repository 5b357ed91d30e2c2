//! Error type of the crate.

use thiserror::Error;

/// Errors from configuring or building a hot-data identifier.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum HotDataError {
    /// An identifier name that is not one of [`crate::NAMES`].
    #[error("unknown hot-data identifier `{name}`; valid names are: {valid}")]
    UnknownKind {
        /// The name that was given.
        name: String,
        /// The valid names, comma separated.
        valid: String,
    },
    /// A parameter outside its valid range.
    #[error("{identifier}: `{field}` must be {expected}, got {got}")]
    InvalidParameter {
        /// Kind name of the identifier being configured (e.g. `multi-hash`).
        identifier: &'static str,
        /// The offending field (e.g. `counter_bits`).
        field: &'static str,
        /// What was expected (e.g. `2..=8`).
        expected: String,
        /// The value that was given.
        got: String,
    },
}

impl HotDataError {
    /// Shorthand for [`HotDataError::InvalidParameter`].
    pub fn invalid(
        identifier: &'static str,
        field: &'static str,
        expected: impl Into<String>,
        got: impl ToString,
    ) -> Self {
        HotDataError::InvalidParameter { identifier, field, expected: expected.into(), got: got.to_string() }
    }
}

/// Checks `lo <= value <= hi`, naming `field` of `identifier` on failure.
pub(crate) fn check_range<T>(
    identifier: &'static str,
    field: &'static str,
    value: T,
    lo: T,
    hi: T,
) -> Result<(), HotDataError>
where
    T: PartialOrd + std::fmt::Display + Copy,
{
    if value < lo || value > hi {
        return Err(HotDataError::invalid(identifier, field, format!("in {lo}..={hi}"), value));
    }
    Ok(())
}
