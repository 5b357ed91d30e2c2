//! Multi-hash counter table (Hsieh, Kuo and Chang, ACM TOS 2006), as used by seed 000.
//!
//! `K` independent hash functions map a logical block to `K` entries of a table of `M`
//! saturating `b`-bit counters. Each write increments all `K` counters; the block is
//! hot when every one of them is at least `hot_threshold` (default `2^(b-2)`, i.e. "the
//! two high bits are non-zero"). Every `D` writes all counters are halved (shift right
//! by one).

use serde::{Deserialize, Serialize};

use crate::error::{check_range, HotDataError};
use crate::hash::{derive_seeds, mix64, reduce};
use crate::HotDataIdentifier;

/// Largest supported number of hash functions.
pub const MAX_HASH_FUNCTIONS: usize = 16;

const KIND: &str = "multi-hash";

/// Parameters of [`MultiHash`]; every field has a default.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
#[serde(default, deny_unknown_fields)]
pub struct MultiHashParams {
    /// `K`, the number of hash functions (1..=16). Default 4.
    pub hash_functions: u32,
    /// `M`, the number of counters in the table (1..=2^32). Default 4096.
    pub counters: u64,
    /// `b`, bits per counter (2..=8). Default 4.
    pub counter_bits: u32,
    /// Hot when all `K` counters are at least this (1..=2^b-1). Omitted: `2^(b-2)`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hot_threshold: Option<u32>,
    /// `D`: all counters are halved after every `D` writes; 0 disables decay. Default 5000.
    pub decay_period_writes: u64,
}

impl Default for MultiHashParams {
    fn default() -> Self {
        MultiHashParams {
            hash_functions: 4,
            counters: 4096,
            counter_bits: 4,
            hot_threshold: None,
            decay_period_writes: 5000,
        }
    }
}

impl MultiHashParams {
    /// The effective threshold: `hot_threshold` or `2^(b-2)`.
    pub fn effective_threshold(&self) -> u32 {
        self.hot_threshold.unwrap_or(1 << self.counter_bits.saturating_sub(2))
    }

    /// Checks every field against its valid range.
    pub fn validate(&self) -> Result<(), HotDataError> {
        check_range(KIND, "hash_functions", self.hash_functions, 1, 16)?;
        check_range(KIND, "counters", self.counters, 1, 1 << 32)?;
        check_range(KIND, "counter_bits", self.counter_bits, 2, 8)?;
        let max = (1u32 << self.counter_bits) - 1;
        check_range(KIND, "hot_threshold", self.effective_threshold(), 1, max)
    }
}

/// The multi-hash identifier: a packed table of saturating counters.
#[derive(Clone, Debug)]
pub struct MultiHash {
    /// Packed counters, little-endian bit order, plus one zero padding byte.
    table: Vec<u8>,
    seeds: [u64; MAX_HASH_FUNCTIONS],
    k: usize,
    counters: usize,
    bits: u32,
    max: u8,
    threshold: u8,
    decay_period: u64,
    since_decay: u64,
    /// The last block passed to `record_write` and its indices, so that the usual
    /// `record_write(x)` then `is_hot(x)` hashes `x` only once.
    last_lba: u64,
    last_idx: [usize; MAX_HASH_FUNCTIONS],
}

impl MultiHash {
    /// Builds the table; the `K` hash seeds derive from `seed`.
    pub fn new(params: &MultiHashParams, seed: u64) -> Result<Self, HotDataError> {
        params.validate()?;
        let counters = params.counters as usize;
        let bytes = (counters * params.counter_bits as usize).div_ceil(8);
        let mut seeds = [0u64; MAX_HASH_FUNCTIONS];
        let k = params.hash_functions as usize;
        seeds[..k].copy_from_slice(&derive_seeds(seed, k));
        let mut table = MultiHash {
            table: vec![0; bytes + 1],
            seeds,
            k,
            counters,
            bits: params.counter_bits,
            max: ((1u32 << params.counter_bits) - 1) as u8,
            threshold: params.effective_threshold() as u8,
            decay_period: match params.decay_period_writes {
                0 => u64::MAX,
                d => d,
            },
            since_decay: 0,
            last_lba: 0,
            last_idx: [0; MAX_HASH_FUNCTIONS],
        };
        for f in 0..k {
            table.last_idx[f] = table.hash_index(f, 0);
        }
        Ok(table)
    }

    /// Number of hash functions `K`.
    pub fn hash_functions(&self) -> usize {
        self.k
    }

    /// Number of counters `M`.
    pub fn counters(&self) -> usize {
        self.counters
    }

    /// The hot threshold in use.
    pub fn hot_threshold(&self) -> u8 {
        self.threshold
    }

    /// Table index chosen by hash function `function` (0-based, `< K`) for `lba`.
    #[inline(always)]
    pub fn hash_index(&self, function: usize, lba: u64) -> usize {
        reduce(mix64(lba ^ self.seeds[function]), self.counters)
    }

    /// The `K` table indices of `lba`, in hash-function order.
    pub fn indices_for(&self, lba: u64) -> Vec<usize> {
        (0..self.k).map(|f| self.hash_index(f, lba)).collect()
    }

    /// The `K` counter values of `lba`, in hash-function order.
    pub fn counters_for(&self, lba: u64) -> Vec<u8> {
        (0..self.k).map(|f| self.counter(self.hash_index(f, lba))).collect()
    }

    #[inline(always)]
    fn locate(&self, index: usize) -> (usize, u32) {
        let bit = index * self.bits as usize;
        (bit >> 3, (bit & 7) as u32)
    }

    /// The two bytes at `byte` as one little-endian word (one 16-bit load).
    #[inline(always)]
    fn word(&self, byte: usize) -> u16 {
        let pair: [u8; 2] = self.table[byte..byte + 2].try_into().unwrap();
        u16::from_le_bytes(pair)
    }

    /// Stores a word written by [`Self::word`] as one 16-bit store, so that a later load
    /// of the same counter is forwarded from the store buffer.
    #[inline(always)]
    fn store_word(&mut self, byte: usize, word: u16) {
        self.table[byte..byte + 2].copy_from_slice(&word.to_le_bytes());
    }

    /// Value of counter `index` (`< M`).
    #[inline(always)]
    pub fn counter(&self, index: usize) -> u8 {
        let (byte, off) = self.locate(index);
        ((self.word(byte) >> off) & u16::from(self.max)) as u8
    }

    /// Sets counter `index` (`< M`) to `value`, clamped to the counter's maximum.
    pub fn set_counter(&mut self, index: usize, value: u8) {
        let (byte, off) = self.locate(index);
        let mask = u16::from(self.max) << off;
        let value = u16::from(value.min(self.max)) << off;
        let word = (self.word(byte) & !mask) | value;
        self.store_word(byte, word);
    }

    #[inline(always)]
    fn increment(&mut self, index: usize) {
        let (byte, off) = self.locate(index);
        let word = self.word(byte);
        if ((word >> off) as u8 & self.max) < self.max {
            self.store_word(byte, word + (1 << off));
        }
    }

    /// Seed 000's rule on a set of counter values: hot iff every counter is at least
    /// `threshold` (for `threshold = 2^(b-2)`: every counter's two high bits are
    /// non-zero).
    pub fn classify_counters(counters: &[u8], threshold: u8) -> bool {
        counters.iter().all(|&c| c >= threshold)
    }

    /// Counts one write towards the decay period; decays when it is reached.
    #[inline(always)]
    fn tick(&mut self) {
        self.since_decay += 1;
        if self.since_decay >= self.decay_period {
            self.since_decay = 0;
            self.decay();
        }
    }

    /// `record_and_query` for a compile-time `K`: the indices stay in registers and
    /// are computed once. (Returning index arrays by value instead costs a
    /// store-forwarding stall per call.)
    #[inline(always)]
    fn record_and_query_fixed<const K: usize>(&mut self, lba: u64) -> bool {
        let idx: [usize; K] = std::array::from_fn(|f| self.hash_index(f, lba));
        for &i in &idx {
            self.increment(i);
        }
        self.tick();
        idx.iter().all(|&i| self.counter(i) >= self.threshold)
    }

    /// Halves every counter (shift right by one), as done every `D` writes.
    pub fn decay(&mut self) {
        if 8 % self.bits == 0 {
            let mut mask = 0u8;
            for field in 0..8 / self.bits {
                mask |= (self.max >> 1) << (field * self.bits);
            }
            self.table.iter_mut().for_each(|b| *b = (*b >> 1) & mask);
        } else {
            for i in 0..self.counters {
                let v = self.counter(i);
                self.set_counter(i, v >> 1);
            }
        }
    }

    /// Writes recorded since the last decay.
    pub fn writes_since_decay(&self) -> u64 {
        self.since_decay
    }
}

impl HotDataIdentifier for MultiHash {
    #[inline]
    fn record_write(&mut self, lba: u64) {
        self.last_lba = lba;
        for f in 0..self.k {
            let i = self.hash_index(f, lba);
            self.last_idx[f] = i;
            self.increment(i);
        }
        self.tick();
    }

    #[inline]
    fn is_hot(&self, lba: u64) -> bool {
        if lba == self.last_lba {
            let idx = &self.last_idx[..self.k];
            idx.iter().all(|&i| self.counter(i) >= self.threshold)
        } else {
            (0..self.k).all(|f| self.counter(self.hash_index(f, lba)) >= self.threshold)
        }
    }

    #[inline]
    fn record_and_query(&mut self, lba: u64) -> bool {
        match self.k {
            4 => self.record_and_query_fixed::<4>(lba),
            2 => self.record_and_query_fixed::<2>(lba),
            3 => self.record_and_query_fixed::<3>(lba),
            _ => {
                self.record_write(lba);
                self.is_hot(lba)
            }
        }
    }

    /// The smallest of the `K` counters (a count-min estimate of recent writes).
    fn temperature(&self, lba: u64) -> Option<f64> {
        self.counters_for(lba).into_iter().min().map(f64::from)
    }

    fn memory_bytes(&self) -> usize {
        self.table.len() - 1
    }

    fn name(&self) -> &'static str {
        KIND
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(bits: u32, counters: u64) -> MultiHash {
        let p = MultiHashParams { counter_bits: bits, counters, ..Default::default() };
        MultiHash::new(&p, 1).unwrap()
    }

    #[test]
    fn counters_pack_and_saturate_for_every_width() {
        for bits in 2..=8 {
            let mut t = table(bits, 37);
            let max = ((1u32 << bits) - 1) as u8;
            for i in 0..37 {
                for _ in 0..=i {
                    t.increment(i);
                }
            }
            for i in 0..37 {
                assert_eq!(t.counter(i), ((i + 1) as u8).min(max), "bits {bits} i {i}");
            }
            assert_eq!(t.memory_bytes(), (37 * bits as usize).div_ceil(8));
        }
    }

    #[test]
    fn decay_halves_for_every_width() {
        for bits in 2..=8 {
            let mut t = table(bits, 29);
            for i in 0..29 {
                t.set_counter(i, (i * 7) as u8);
            }
            let before: Vec<u8> = (0..29).map(|i| t.counter(i)).collect();
            t.decay();
            for (i, &b) in before.iter().enumerate() {
                assert_eq!(t.counter(i), b >> 1, "bits {bits} i {i}");
            }
        }
    }

    #[test]
    fn default_threshold_follows_counter_bits() {
        let p = MultiHashParams { counter_bits: 6, ..Default::default() };
        assert_eq!(p.effective_threshold(), 16);
        assert_eq!(MultiHashParams::default().effective_threshold(), 4);
    }
}
