//! The LPN temperature table of WPO-GC (seed 001).
//!
//! Per logical page: the time of its last write and its recent write count. Time is
//! the identifier's own write counter (the first write is at time 1). A write more
//! than `interval_writes` (`u`) after the previous write of the same page resets the
//! count to 1, otherwise it increments it; the temperature is the count. Hot when the
//! temperature is at least `hot_threshold`.
//!
//! The table is updated only by writes, as in the seed: a page's temperature keeps its
//! value until the page is written again (the seed uses that stored value for invalid
//! pages too).

use serde::{Deserialize, Serialize};

use crate::error::{check_range, HotDataError};
use crate::HotDataIdentifier;

const KIND: &str = "temperature-table";

/// Bits of an entry holding the last write time; the remaining 16 hold the count.
const TIME_BITS: u32 = 48;
const TIME_MASK: u64 = (1 << TIME_BITS) - 1;
const COUNT_MAX: u64 = u16::MAX as u64;

/// Parameters of [`TemperatureTable`]; every field has a default.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
#[serde(default, deny_unknown_fields)]
pub struct TemperatureTableParams {
    /// `u`: a write more than this many writes after the previous one of the same page
    /// resets its count (1..=2^47). Default 2500 (chosen by us; the seed gives no value).
    pub interval_writes: u64,
    /// Hot when the recent write count is at least this (1..=65535). Default 4.
    pub hot_threshold: u32,
}

impl Default for TemperatureTableParams {
    fn default() -> Self {
        TemperatureTableParams { interval_writes: 2500, hot_threshold: 4 }
    }
}

impl TemperatureTableParams {
    /// Checks every field against its valid range.
    pub fn validate(&self) -> Result<(), HotDataError> {
        check_range(KIND, "interval_writes", self.interval_writes, 1, 1 << 47)?;
        check_range(KIND, "hot_threshold", self.hot_threshold, 1, u16::MAX as u32)
    }
}

/// Flat per-LPN table: each entry packs a 48-bit last-write time and a 16-bit count.
#[derive(Clone, Debug)]
pub struct TemperatureTable {
    entries: Vec<u64>,
    now: u64,
    interval: u64,
    threshold: u64,
}

impl TemperatureTable {
    /// Builds a table for LPNs `0..logical_blocks` (1..=2^40).
    pub fn new(params: &TemperatureTableParams, logical_blocks: u64) -> Result<Self, HotDataError> {
        params.validate()?;
        check_range(KIND, "logical_blocks", logical_blocks, 1, 1 << 40)?;
        Ok(TemperatureTable {
            entries: vec![0; logical_blocks as usize],
            now: 0,
            interval: params.interval_writes,
            threshold: u64::from(params.hot_threshold),
        })
    }

    /// Recent write count of `lpn` (0 if never written).
    ///
    /// # Panics
    /// If `lpn >= logical_blocks`.
    #[inline]
    pub fn count(&self, lpn: u64) -> u32 {
        (self.entries[self.slot(lpn)] >> TIME_BITS) as u32
    }

    /// Time (write number, from 1) of the last write of `lpn`; 0 if never written.
    pub fn last_write(&self, lpn: u64) -> u64 {
        self.entries[self.slot(lpn)] & TIME_MASK
    }

    /// Writes recorded so far (the identifier's clock).
    pub fn now(&self) -> u64 {
        self.now
    }

    /// Number of LPNs the table covers.
    pub fn logical_blocks(&self) -> u64 {
        self.entries.len() as u64
    }

    #[inline(always)]
    fn slot(&self, lpn: u64) -> usize {
        assert!(lpn < self.entries.len() as u64, "temperature-table: lpn {lpn} outside 0..{}", self.entries.len());
        lpn as usize
    }

    /// The new count of an entry written at time `now`.
    #[inline(always)]
    fn next_count(&self, entry: u64) -> u64 {
        let count = entry >> TIME_BITS;
        let gap = self.now.wrapping_sub(entry) & TIME_MASK;
        if count == 0 || gap > self.interval {
            1
        } else {
            (count + 1).min(COUNT_MAX)
        }
    }
}

impl HotDataIdentifier for TemperatureTable {
    /// # Panics
    /// If `lba >= logical_blocks`.
    #[inline]
    fn record_write(&mut self, lba: u64) {
        let slot = self.slot(lba);
        self.now += 1;
        let count = self.next_count(self.entries[slot]);
        self.entries[slot] = (count << TIME_BITS) | (self.now & TIME_MASK);
    }

    #[inline]
    fn is_hot(&self, lba: u64) -> bool {
        u64::from(self.count(lba)) >= self.threshold
    }

    /// The recent write count.
    fn temperature(&self, lba: u64) -> Option<f64> {
        Some(f64::from(self.count(lba)))
    }

    fn memory_bytes(&self) -> usize {
        self.entries.len() * std::mem::size_of::<u64>()
    }

    fn name(&self) -> &'static str {
        KIND
    }
}
