//! Multiple Bloom filters (after Park and Du, MSST 2011).
//!
//! `V` Bloom filters of `m` bits share `k` hash functions. A write sets the key's bits
//! in the current filter. With `frequency_capture` (Park and Du's frequency
//! mechanism), a write whose key the current filter already holds is recorded instead
//! in the newest filter that does not hold it yet, so the number of filters holding a
//! key reflects how often it was written as well as when. Every `decay_period_writes`
//! writes the oldest filter is cleared and becomes the current one (round robin).
//!
//! Hotness is recency weighted: the filter of age `a` (0 = current) weighs
//! `(V - a) / V`; a block is hot when the summed weight of the filters holding it is at
//! least `hot_threshold`.

use serde::{Deserialize, Serialize};

use crate::error::{check_range, HotDataError};
use crate::hash::{derive_seeds, mix64, reduce};
use crate::HotDataIdentifier;

const KIND: &str = "multi-bloom";

/// Largest supported number of hash functions per filter.
pub const MAX_BLOOM_HASHES: usize = 16;

/// Parameters of [`MultiBloom`]; every field has a default.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct MultiBloomParams {
    /// `V`: number of Bloom filters (1..=32). Default 4.
    pub filters: u32,
    /// `m`: bits per filter (8..=2^32). Default 4096 (chosen by us: with `V = 4` the
    /// same 2 KiB as the default multi-hash table).
    pub filter_bits: u64,
    /// `k`: hash functions per filter (1..=16). Default 2.
    pub hash_functions: u32,
    /// Writes between two filter rotations (>= 1). Default 1250 (chosen by us:
    /// `V x 1250 = 5000` writes of history, the multi-hash decay period).
    pub decay_period_writes: u64,
    /// Hot when the recency-weighted filter count is at least this (0 < t <= (V+1)/2).
    /// Default 2.0 (chosen by us).
    pub hot_threshold: f64,
    /// Record repeated writes in further filters (Park and Du's frequency capture).
    /// Default true.
    pub frequency_capture: bool,
}

impl Default for MultiBloomParams {
    fn default() -> Self {
        MultiBloomParams {
            filters: 4,
            filter_bits: 4096,
            hash_functions: 2,
            decay_period_writes: 1250,
            hot_threshold: 2.0,
            frequency_capture: true,
        }
    }
}

impl MultiBloomParams {
    /// Checks every field against its valid range.
    pub fn validate(&self) -> Result<(), HotDataError> {
        check_range(KIND, "filters", self.filters, 1, 32)?;
        check_range(KIND, "filter_bits", self.filter_bits, 8, 1 << 32)?;
        check_range(KIND, "hash_functions", self.hash_functions, 1, 16)?;
        check_range(KIND, "decay_period_writes", self.decay_period_writes, 1, u64::MAX)?;
        let max_weight = f64::from(self.filters + 1) / 2.0;
        let t = self.hot_threshold;
        if !(t > 0.0 && t <= max_weight) {
            let expected = format!("in (0, {max_weight}] (the total weight of all filters)");
            return Err(HotDataError::invalid(KIND, "hot_threshold", expected, t));
        }
        Ok(())
    }
}

/// `V` Bloom filters in one flat bit array, rotated round robin.
#[derive(Clone, Debug)]
pub struct MultiBloom {
    bits: Vec<u64>,
    words_per_filter: usize,
    filter_bits: usize,
    filters: usize,
    seeds: [u64; MAX_BLOOM_HASHES],
    k: usize,
    current: usize,
    decay_period: u64,
    since_decay: u64,
    /// The threshold in units of `1/V`: hot when the summed `V - age` reaches it.
    threshold_units: usize,
    frequency_capture: bool,
}

impl MultiBloom {
    /// Builds empty filters; the `k` hash seeds derive from `seed`.
    pub fn new(params: &MultiBloomParams, seed: u64) -> Result<Self, HotDataError> {
        params.validate()?;
        let words_per_filter = (params.filter_bits as usize).div_ceil(64);
        let k = params.hash_functions as usize;
        let mut seeds = [0u64; MAX_BLOOM_HASHES];
        seeds[..k].copy_from_slice(&derive_seeds(seed, k));
        Ok(MultiBloom {
            bits: vec![0; words_per_filter * params.filters as usize],
            words_per_filter,
            filter_bits: params.filter_bits as usize,
            filters: params.filters as usize,
            seeds,
            k,
            current: 0,
            decay_period: params.decay_period_writes,
            since_decay: 0,
            threshold_units: threshold_units(params.hot_threshold, params.filters),
            frequency_capture: params.frequency_capture,
        })
    }

    /// Writes the `k` bit positions of `lba` into `pos` (length `k`).
    #[inline(always)]
    fn fill_positions(&self, lba: u64, pos: &mut [usize]) {
        for (p, &seed) in pos.iter_mut().zip(&self.seeds) {
            *p = reduce(mix64(lba ^ seed), self.filter_bits);
        }
    }

    /// Calls `f` with the positions of `lba`, kept in a local buffer (never copied).
    #[inline(always)]
    fn with_positions<R>(&self, lba: u64, f: impl FnOnce(&Self, &[usize]) -> R) -> R {
        let mut buf = [0usize; MAX_BLOOM_HASHES];
        let pos = &mut buf[..self.k];
        self.fill_positions(lba, pos);
        f(self, pos)
    }

    /// 1 when `filter` has every bit of `pos` set, else 0 (branch free: the answers
    /// are data dependent and would mispredict).
    #[inline(always)]
    fn holds(&self, filter: usize, pos: &[usize]) -> u64 {
        let base = filter * self.words_per_filter;
        pos.iter().fold(1, |acc, &p| acc & (self.bits[base + p / 64] >> (p % 64))) & 1
    }

    #[inline(always)]
    fn set(&mut self, filter: usize, pos: &[usize]) {
        let base = filter * self.words_per_filter;
        for &p in pos {
            self.bits[base + p / 64] |= 1 << (p % 64);
        }
    }

    /// Filter index of age `age` (0 = current, `< V`).
    #[inline(always)]
    fn filter_of_age(&self, age: usize) -> usize {
        match self.current.checked_sub(age) {
            Some(f) => f,
            None => self.current + self.filters - age,
        }
    }

    /// Bit `a` is set when the filter of age `a` holds every position.
    #[inline(always)]
    fn held_by_age(&self, pos: &[usize]) -> u64 {
        (0..self.filters).fold(0, |mask, a| mask | self.holds(self.filter_of_age(a), pos) << a)
    }

    /// Summed `V - age` over the ages in `held` (the recency weight times `V`).
    #[inline(always)]
    fn weight_units(&self, held: u64) -> usize {
        (0..self.filters).map(|a| (held >> a & 1) as usize * (self.filters - a)).sum()
    }

    /// Ages (0 = current) of the filters holding `lba`.
    pub fn ages_holding(&self, lba: u64) -> Vec<usize> {
        let held = self.with_positions(lba, |s, pos| s.held_by_age(pos));
        (0..self.filters).filter(|&a| held >> a & 1 != 0).collect()
    }

    /// Recency-weighted number of filters holding `lba`.
    pub fn weighted_count(&self, lba: u64) -> f64 {
        let held = self.with_positions(lba, |s, pos| s.held_by_age(pos));
        self.weight_units(held) as f64 / self.filters as f64
    }

    /// Records a write whose positions are `pos` and whose held mask is `held`;
    /// returns the held mask afterwards (ages shift if the filters rotated).
    #[inline(always)]
    fn record_held(&mut self, pos: &[usize], mut held: u64) -> u64 {
        let age = if self.frequency_capture { (!held).trailing_zeros() as usize } else { 0 };
        if age < self.filters {
            self.set(self.filter_of_age(age), pos);
            held |= 1 << age;
        }
        self.since_decay += 1;
        if self.since_decay >= self.decay_period {
            self.since_decay = 0;
            self.rotate();
            held = (held << 1) & ((1 << self.filters) - 1);
        }
        held
    }

    #[inline(always)]
    fn record_and_weigh(&mut self, lba: u64) -> usize {
        let mut buf = [0usize; MAX_BLOOM_HASHES];
        let pos = &mut buf[..self.k];
        self.fill_positions(lba, pos);
        let held = self.held_by_age(pos);
        let held = self.record_held(pos, held);
        self.weight_units(held)
    }

    /// Clears the oldest filter and makes it the current one.
    pub fn rotate(&mut self) {
        self.current = if self.current + 1 == self.filters { 0 } else { self.current + 1 };
        let base = self.current * self.words_per_filter;
        self.bits[base..base + self.words_per_filter].fill(0);
    }
}

/// `t x V` rounded up (with a little slack for decimal thresholds such as 0.75), >= 1.
fn threshold_units(threshold: f64, filters: u32) -> usize {
    (threshold * f64::from(filters) - 1e-9).ceil().max(1.0) as usize
}

impl HotDataIdentifier for MultiBloom {
    #[inline]
    fn record_write(&mut self, lba: u64) {
        self.record_and_weigh(lba);
    }

    #[inline]
    fn is_hot(&self, lba: u64) -> bool {
        let held = self.with_positions(lba, |s, pos| s.held_by_age(pos));
        self.weight_units(held) >= self.threshold_units
    }

    #[inline]
    fn record_and_query(&mut self, lba: u64) -> bool {
        self.record_and_weigh(lba) >= self.threshold_units
    }

    /// The recency-weighted filter count.
    fn temperature(&self, lba: u64) -> Option<f64> {
        Some(self.weighted_count(lba))
    }

    fn memory_bytes(&self) -> usize {
        self.filters * self.filter_bits.div_ceil(8)
    }

    fn name(&self) -> &'static str {
        KIND
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Large filters, so that false positives do not blur the checks.
    fn bloom(frequency_capture: bool) -> MultiBloom {
        let p =
            MultiBloomParams { filter_bits: 1 << 16, decay_period_writes: 10, frequency_capture, ..Default::default() };
        MultiBloom::new(&p, 5).unwrap()
    }

    #[test]
    fn frequency_capture_spills_repeated_writes_to_older_filters() {
        let mut b = bloom(true);
        b.record_write(7);
        assert_eq!(b.ages_holding(7), vec![0]);
        assert_eq!(b.weighted_count(7), 1.0);
        assert!(!b.is_hot(7));
        b.record_write(7);
        b.record_write(7);
        assert_eq!(b.ages_holding(7), vec![0, 1, 2]);
        assert_eq!(b.weighted_count(7), 2.25); // (4 + 3 + 2) / 4
        assert!(b.is_hot(7));
    }

    #[test]
    fn without_capture_only_the_current_filter_records() {
        let mut b = bloom(false);
        for _ in 0..3 {
            b.record_write(7);
        }
        assert_eq!(b.ages_holding(7), vec![0]);
    }

    #[test]
    fn rotation_ages_and_finally_forgets() {
        let mut b = bloom(false);
        b.record_write(7); // write 1 of the first period
        (0..9).for_each(|i| b.record_write(1000 + i)); // write 10 rotates
        assert_eq!(b.ages_holding(7), vec![1]);
        assert_eq!(b.weighted_count(7), 0.75);
        (0..20).for_each(|i| b.record_write(2000 + i));
        assert_eq!(b.ages_holding(7), vec![3]);
        (0..10).for_each(|i| b.record_write(3000 + i));
        assert!(b.ages_holding(7).is_empty());
        assert_eq!(b.memory_bytes(), 4 * 8192);
    }

    #[test]
    fn record_and_query_tracks_rotation() {
        let mut a = bloom(true);
        let mut b = bloom(true);
        for i in 0..500u64 {
            let lba = i % 7;
            a.record_write(lba);
            assert_eq!(b.record_and_query(lba), a.is_hot(lba), "write {i}");
        }
    }

    #[test]
    fn threshold_units_round_up() {
        assert_eq!(threshold_units(2.0, 4), 8);
        assert_eq!(threshold_units(0.75, 4), 3);
        assert_eq!(threshold_units(1.0 / 3.0, 3), 1);
        assert_eq!(threshold_units(1e-12, 4), 1);
    }
}
