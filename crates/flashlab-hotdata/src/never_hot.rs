//! The trivial baseline: nothing is ever hot.

use serde::{Deserialize, Serialize};

use crate::HotDataIdentifier;

/// Parameters of [`NeverHot`] (none; unknown fields are still rejected).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, Default)]
#[serde(default, deny_unknown_fields)]
pub struct NeverHotParams {}

/// Calls every block cold and keeps no state.
#[derive(Clone, Copy, Debug, Default)]
pub struct NeverHot;

impl HotDataIdentifier for NeverHot {
    #[inline]
    fn record_write(&mut self, _lba: u64) {}

    #[inline]
    fn is_hot(&self, _lba: u64) -> bool {
        false
    }

    fn memory_bytes(&self) -> usize {
        0
    }

    fn name(&self) -> &'static str {
        "never-hot"
    }
}
