//! Serde configuration of the identifiers: a kind name plus parameters with defaults.
//!
//! In TOML an identifier is a table whose `kind` key names it and whose other keys are
//! that kind's parameters, e.g. `{ kind = "multi-hash", counters = 8192 }`. Omitted
//! parameters take their defaults; unknown keys and unknown kinds are errors.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::error::HotDataError;
use crate::multi_bloom::{MultiBloom, MultiBloomParams};
use crate::multi_hash::{MultiHash, MultiHashParams};
use crate::never_hot::{NeverHot, NeverHotParams};
use crate::temperature_table::{TemperatureTable, TemperatureTableParams};
use crate::two_level_lru::{TwoLevelLru, TwoLevelLruParams};
use crate::window_oracle::{WindowOracle, WindowOracleParams};
use crate::Identifier;

/// Kind names of the built-in identifiers, in [`IdentifierKind::ALL`] order.
pub const NAMES: &[&str] =
    &["multi-hash", "multi-bloom", "temperature-table", "two-level-lru", "window-oracle", "never-hot"];

/// The built-in identifier kinds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum IdentifierKind {
    /// [`MultiHash`]
    MultiHash,
    /// [`MultiBloom`]
    MultiBloom,
    /// [`TemperatureTable`]
    TemperatureTable,
    /// [`TwoLevelLru`]
    TwoLevelLru,
    /// [`WindowOracle`]
    WindowOracle,
    /// [`NeverHot`]
    NeverHot,
}

impl IdentifierKind {
    /// Every kind, in [`NAMES`] order.
    pub const ALL: [IdentifierKind; 6] = [
        IdentifierKind::MultiHash,
        IdentifierKind::MultiBloom,
        IdentifierKind::TemperatureTable,
        IdentifierKind::TwoLevelLru,
        IdentifierKind::WindowOracle,
        IdentifierKind::NeverHot,
    ];

    /// The kind's name, as in [`NAMES`].
    pub fn name(self) -> &'static str {
        NAMES[self as usize]
    }
}

impl fmt::Display for IdentifierKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Parses a kind name; an unknown name gives an error listing the valid ones.
pub fn parse_kind(name: &str) -> Result<IdentifierKind, HotDataError> {
    IdentifierKind::ALL
        .into_iter()
        .find(|k| k.name() == name)
        .ok_or_else(|| HotDataError::UnknownKind { name: name.to_string(), valid: NAMES.join(", ") })
}

impl FromStr for IdentifierKind {
    type Err = HotDataError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        parse_kind(s)
    }
}

/// One identifier's configuration: its kind (the `kind` key) and its parameters.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum IdentifierSpec {
    /// `kind = "multi-hash"`
    MultiHash(MultiHashParams),
    /// `kind = "multi-bloom"`
    MultiBloom(MultiBloomParams),
    /// `kind = "temperature-table"`
    TemperatureTable(TemperatureTableParams),
    /// `kind = "two-level-lru"`
    TwoLevelLru(TwoLevelLruParams),
    /// `kind = "window-oracle"`
    WindowOracle(WindowOracleParams),
    /// `kind = "never-hot"`
    NeverHot(NeverHotParams),
}

/// Alias: the configuration of one identifier.
pub type IdentifierConfig = IdentifierSpec;

impl Default for IdentifierSpec {
    /// The seed-000 multi-hash table with its defaults.
    fn default() -> Self {
        IdentifierSpec::MultiHash(MultiHashParams::default())
    }
}

impl IdentifierSpec {
    /// The default parameters of `kind`.
    pub fn default_for(kind: IdentifierKind) -> Self {
        match kind {
            IdentifierKind::MultiHash => IdentifierSpec::MultiHash(Default::default()),
            IdentifierKind::MultiBloom => IdentifierSpec::MultiBloom(Default::default()),
            IdentifierKind::TemperatureTable => IdentifierSpec::TemperatureTable(Default::default()),
            IdentifierKind::TwoLevelLru => IdentifierSpec::TwoLevelLru(Default::default()),
            IdentifierKind::WindowOracle => IdentifierSpec::WindowOracle(Default::default()),
            IdentifierKind::NeverHot => IdentifierSpec::NeverHot(Default::default()),
        }
    }

    /// The default parameters of the kind called `name`.
    pub fn from_name(name: &str) -> Result<Self, HotDataError> {
        parse_kind(name).map(Self::default_for)
    }

    /// The kind of this configuration.
    pub fn kind(&self) -> IdentifierKind {
        match self {
            IdentifierSpec::MultiHash(_) => IdentifierKind::MultiHash,
            IdentifierSpec::MultiBloom(_) => IdentifierKind::MultiBloom,
            IdentifierSpec::TemperatureTable(_) => IdentifierKind::TemperatureTable,
            IdentifierSpec::TwoLevelLru(_) => IdentifierKind::TwoLevelLru,
            IdentifierSpec::WindowOracle(_) => IdentifierKind::WindowOracle,
            IdentifierSpec::NeverHot(_) => IdentifierKind::NeverHot,
        }
    }

    /// Checks every parameter (logical_blocks is checked by [`IdentifierSpec::build`]).
    pub fn validate(&self) -> Result<(), HotDataError> {
        match self {
            IdentifierSpec::MultiHash(p) => p.validate(),
            IdentifierSpec::MultiBloom(p) => p.validate(),
            IdentifierSpec::TemperatureTable(p) => p.validate(),
            IdentifierSpec::TwoLevelLru(p) => p.validate(),
            IdentifierSpec::WindowOracle(p) => p.validate(),
            IdentifierSpec::NeverHot(_) => Ok(()),
        }
    }

    /// Builds the identifier. `seed` seeds every hash function; `logical_blocks` is the
    /// size of the logical space (used by `temperature-table`, which needs 1..=2^40).
    pub fn build(&self, seed: u64, logical_blocks: u64) -> Result<Identifier, HotDataError> {
        Ok(match self {
            IdentifierSpec::MultiHash(p) => Identifier::MultiHash(MultiHash::new(p, seed)?),
            IdentifierSpec::MultiBloom(p) => Identifier::MultiBloom(MultiBloom::new(p, seed)?),
            IdentifierSpec::TemperatureTable(p) => {
                Identifier::TemperatureTable(TemperatureTable::new(p, logical_blocks)?)
            }
            IdentifierSpec::TwoLevelLru(p) => Identifier::TwoLevelLru(TwoLevelLru::new(p, seed)?),
            IdentifierSpec::WindowOracle(p) => Identifier::WindowOracle(WindowOracle::new(p, seed)?),
            IdentifierSpec::NeverHot(_) => Identifier::NeverHot(NeverHot),
        })
    }
}
