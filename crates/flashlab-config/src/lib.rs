//! flashlab configuration in stages:
//!
//! 1. text → [`RawConfig`]: TOML with `deny_unknown_fields`; an unknown key is
//!    reported with its line and the nearest valid keys ([`keys`]);
//! 2. `--set KEY=VALUE` overrides applied to the TOML tree ([`overrides`]);
//! 3. [`RawConfig::resolve`] → [`Settings`]: validated, typed units (nanoseconds,
//!    bytes, pages), enums for every choice.
//!
//! This crate reads no files: callers pass the text and a name for error messages.

mod error;
pub mod keys;
pub mod overrides;
pub mod presets;

mod fs;
mod mapping;
mod raw;
mod resolve;
mod settings;
mod swap;

pub use error::ConfigError;
pub use fs::{FsDevice, RawFs, RawFsWorkload};
pub use raw::*;
pub use settings::*;
pub use swap::RawSwap;

/// Parse config text (named `source` in errors), apply overrides, resolve.
pub fn load(text: &str, source: &str, sets: &[String]) -> Result<(RawConfig, Settings), ConfigError> {
    let raw = overrides::parse_with_overrides(text, source, sets)?;
    let settings = raw.resolve()?;
    Ok((raw, settings))
}

/// The complete default configuration as TOML text.
pub fn default_toml() -> String {
    to_toml(&RawConfig::default())
}

/// A configuration as TOML text (every key).
pub fn to_toml(raw: &RawConfig) -> String {
    toml::to_string_pretty(raw).expect("config serialises")
}
