//! Hot-data identification for flashlab.
//!
//! A pure, deterministic library: no I/O, no clock; every hash seed comes from the `u64`
//! seed given to [`IdentifierSpec::build`]. The built-in identifiers form the closed
//! enum [`Identifier`], which implements [`HotDataIdentifier`] by `match` (no dynamic
//! dispatch on the hot path):
//!
//! - [`MultiHash`]: Hsieh, Kuo and Chang's multi-hash counter table (seed 000).
//! - [`MultiBloom`]: Park and Du's multiple Bloom filters.
//! - [`TemperatureTable`]: WPO-GC's LPN temperature table (seed 001).
//! - [`TwoLevelLru`]: Chang and Kuo's hot and candidate LRU lists.
//! - [`WindowOracle`]: exact windowed frequency, the ground truth of [`evaluate`].
//! - [`NeverHot`]: calls nothing hot.
//!
//! ```
//! use flashlab_hotdata::{evaluate, HotDataIdentifier, IdentifierSpec, WindowOracle};
//!
//! // A kind name plus parameters; omitted parameters take their defaults.
//! let spec: IdentifierSpec =
//!     serde_json::from_str(r#"{"kind": "multi-hash", "counters": 8192}"#).unwrap();
//! let mut id = spec.build(42, 1 << 20).unwrap();
//! for _ in 0..4 {
//!     id.record_write(7);
//! }
//! assert!(id.is_hot(7)); // written 4 times since the last decay: never cold
//! assert_eq!(id.memory_bytes(), 8192 * 4 / 8);
//!
//! let mut ids = vec![IdentifierSpec::from_name("two-level-lru").unwrap().build(42, 0).unwrap()];
//! let mut oracle = WindowOracle::new(&Default::default(), 42).unwrap();
//! let acc = evaluate([1u64, 2, 1, 1, 1].into_iter(), &mut ids, &mut oracle);
//! assert_eq!(acc[0].queries, 5);
//! ```

mod config;
mod error;
mod eval;
mod flat_map;
mod hash;
pub mod multi_bloom;
pub mod multi_hash;
pub mod never_hot;
pub mod temperature_table;
pub mod two_level_lru;
pub mod window_oracle;

pub use config::{parse_kind, IdentifierConfig, IdentifierKind, IdentifierSpec, NAMES};
pub use error::HotDataError;
pub use eval::{evaluate, evaluate_with_warmup, replay, Accuracy};
pub use hash::{derive_seeds, mix64};
pub use multi_bloom::{MultiBloom, MultiBloomParams};
pub use multi_hash::{MultiHash, MultiHashParams};
pub use never_hot::{NeverHot, NeverHotParams};
pub use temperature_table::{TemperatureTable, TemperatureTableParams};
pub use two_level_lru::{LruPlace, TwoLevelLru, TwoLevelLruParams};
pub use window_oracle::{WindowOracle, WindowOracleParams};

/// A hot-data identifier: fed every write, asked whether a block is hot.
pub trait HotDataIdentifier {
    /// Record one write of logical block `lba` (the simulator's write counter advances
    /// by one per call).
    fn record_write(&mut self, lba: u64);

    /// Is `lba` hot now?
    fn is_hot(&self, lba: u64) -> bool;

    /// Records a write of `lba`, then says whether it is hot: the same answer as
    /// `record_write(lba)` followed by `is_hot(lba)`, possibly faster.
    #[inline]
    fn record_and_query(&mut self, lba: u64) -> bool {
        self.record_write(lba);
        self.is_hot(lba)
    }

    /// A temperature where the method has one (e.g. counter value, recent write
    /// count); `None` otherwise.
    fn temperature(&self, _lba: u64) -> Option<f64> {
        None
    }

    /// Bytes of identifier state (the table sizes, not Rust struct overhead).
    fn memory_bytes(&self) -> usize;

    /// The kind name, one of [`NAMES`].
    fn name(&self) -> &'static str;
}

/// The built-in identifiers as one closed enum.
#[derive(Clone, Debug)]
pub enum Identifier {
    /// Multi-hash counter table.
    MultiHash(MultiHash),
    /// Multiple Bloom filters.
    MultiBloom(MultiBloom),
    /// LPN temperature table.
    TemperatureTable(TemperatureTable),
    /// Two-level LRU lists.
    TwoLevelLru(TwoLevelLru),
    /// Exact windowed frequency.
    WindowOracle(WindowOracle),
    /// Nothing is hot.
    NeverHot(NeverHot),
}

/// Forwards a method call to the variant's value.
macro_rules! dispatch {
    ($self:expr, $id:ident => $call:expr) => {
        match $self {
            Identifier::MultiHash($id) => $call,
            Identifier::MultiBloom($id) => $call,
            Identifier::TemperatureTable($id) => $call,
            Identifier::TwoLevelLru($id) => $call,
            Identifier::WindowOracle($id) => $call,
            Identifier::NeverHot($id) => $call,
        }
    };
}

impl Identifier {
    /// The kind of this identifier.
    pub fn kind(&self) -> IdentifierKind {
        match self {
            Identifier::MultiHash(_) => IdentifierKind::MultiHash,
            Identifier::MultiBloom(_) => IdentifierKind::MultiBloom,
            Identifier::TemperatureTable(_) => IdentifierKind::TemperatureTable,
            Identifier::TwoLevelLru(_) => IdentifierKind::TwoLevelLru,
            Identifier::WindowOracle(_) => IdentifierKind::WindowOracle,
            Identifier::NeverHot(_) => IdentifierKind::NeverHot,
        }
    }
}

impl HotDataIdentifier for Identifier {
    #[inline]
    fn record_write(&mut self, lba: u64) {
        dispatch!(self, id => id.record_write(lba))
    }

    #[inline]
    fn is_hot(&self, lba: u64) -> bool {
        dispatch!(self, id => id.is_hot(lba))
    }

    #[inline]
    fn record_and_query(&mut self, lba: u64) -> bool {
        dispatch!(self, id => id.record_and_query(lba))
    }

    fn temperature(&self, lba: u64) -> Option<f64> {
        dispatch!(self, id => id.temperature(lba))
    }

    fn memory_bytes(&self) -> usize {
        dispatch!(self, id => id.memory_bytes())
    }

    fn name(&self) -> &'static str {
        dispatch!(self, id => id.name())
    }
}
