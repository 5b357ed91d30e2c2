//! Exact windowed write frequency: the ground truth of the evaluation.
//!
//! A block is hot when it was written at least `min_writes` times within the last
//! `window_writes` writes (the current write included). A ring buffer holds the last
//! `W` block numbers and a flat hash map their counts, so each write is O(1).

use serde::{Deserialize, Serialize};

use crate::error::{check_range, HotDataError};
use crate::flat_map::FlatMap;
use crate::HotDataIdentifier;

const KIND: &str = "window-oracle";

/// Parameters of [`WindowOracle`]; every field has a default.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
#[serde(default, deny_unknown_fields)]
pub struct WindowOracleParams {
    /// `W`: the window length in writes (1..=2^30). Default 5000 (the multi-hash decay period).
    pub window_writes: u64,
    /// `k`: hot when written at least this many times within the window (1..=W). Default 4.
    pub min_writes: u64,
}

impl Default for WindowOracleParams {
    fn default() -> Self {
        WindowOracleParams { window_writes: 5000, min_writes: 4 }
    }
}

impl WindowOracleParams {
    /// Checks every field against its valid range.
    pub fn validate(&self) -> Result<(), HotDataError> {
        check_range(KIND, "window_writes", self.window_writes, 1, 1 << 30)?;
        check_range(KIND, "min_writes", self.min_writes, 1, self.window_writes)
    }
}

/// Exact sliding-window frequency oracle.
#[derive(Clone, Debug)]
pub struct WindowOracle {
    ring: Vec<u64>,
    /// Next ring position to overwrite.
    pos: usize,
    /// Number of valid ring entries (`<= W`).
    filled: usize,
    counts: FlatMap,
    min_writes: u32,
}

impl WindowOracle {
    /// Builds the oracle; `seed` only seeds its internal hash map.
    pub fn new(params: &WindowOracleParams, seed: u64) -> Result<Self, HotDataError> {
        params.validate()?;
        let w = params.window_writes as usize;
        Ok(WindowOracle {
            ring: vec![0; w],
            pos: 0,
            filled: 0,
            counts: FlatMap::with_max_entries(w, seed),
            min_writes: params.min_writes as u32,
        })
    }

    /// Writes of `lba` within the window.
    pub fn count(&self, lba: u64) -> u32 {
        self.counts.get(lba).unwrap_or(0)
    }

    /// The window length `W`.
    pub fn window_writes(&self) -> usize {
        self.ring.len()
    }

    /// The hot threshold `k`.
    pub fn min_writes(&self) -> u32 {
        self.min_writes
    }
}

impl WindowOracle {
    /// Records a write; returns the block's count within the window afterwards.
    #[inline]
    fn record_and_count(&mut self, lba: u64) -> u32 {
        if self.filled == self.ring.len() {
            self.counts.add(self.ring[self.pos], -1);
        } else {
            self.filled += 1;
        }
        self.ring[self.pos] = lba;
        self.pos += 1;
        if self.pos == self.ring.len() {
            self.pos = 0;
        }
        self.counts.add(lba, 1)
    }
}

impl HotDataIdentifier for WindowOracle {
    #[inline]
    fn record_write(&mut self, lba: u64) {
        self.record_and_count(lba);
    }

    #[inline]
    fn record_and_query(&mut self, lba: u64) -> bool {
        self.record_and_count(lba) >= self.min_writes
    }

    #[inline]
    fn is_hot(&self, lba: u64) -> bool {
        self.count(lba) >= self.min_writes
    }

    /// Writes of `lba` within the window.
    fn temperature(&self, lba: u64) -> Option<f64> {
        Some(f64::from(self.count(lba)))
    }

    fn memory_bytes(&self) -> usize {
        self.ring.len() * std::mem::size_of::<u64>() + self.counts.memory_bytes()
    }

    fn name(&self) -> &'static str {
        KIND
    }
}
