//! A fixed-capacity open-addressing hash map from `u64` keys to `u32` values.
//!
//! Linear probing over flat arrays, backward-shift deletion (no tombstones), no
//! resizing: the capacity is a power of two at least twice the maximum number of live
//! entries, so the load factor never exceeds one half. Deterministic: the hash is a
//! seeded mixer, never a random state.

use crate::hash::mix64;

/// Marks an empty slot in `values`.
const EMPTY: u32 = u32::MAX;

/// One slot: key and value side by side, so a probe touches one cache line.
#[derive(Clone, Copy, Debug)]
struct Slot {
    key: u64,
    value: u32,
}

const VACANT: Slot = Slot { key: 0, value: EMPTY };

/// Fixed-capacity `u64 -> u32` map; values must be `< u32::MAX`.
#[derive(Clone, Debug)]
pub struct FlatMap {
    slots: Vec<Slot>,
    mask: usize,
    seed: u64,
    len: usize,
}

impl FlatMap {
    /// A map able to hold `max_entries` live entries at load factor <= 1/2.
    pub fn with_max_entries(max_entries: usize, seed: u64) -> Self {
        let slots = (max_entries.max(1) * 2).next_power_of_two();
        FlatMap { slots: vec![VACANT; slots], mask: slots - 1, seed, len: 0 }
    }

    /// Number of live entries.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Bytes of the slot arrays.
    pub fn memory_bytes(&self) -> usize {
        self.slots.len() * std::mem::size_of::<Slot>()
    }

    #[inline(always)]
    fn home(&self, key: u64) -> usize {
        (mix64(key ^ self.seed) >> 32) as usize & self.mask
    }

    /// `Ok(slot)` holding `key`, or `Err(slot)`: the empty slot where it would go.
    #[inline]
    fn find(&self, key: u64) -> Result<usize, usize> {
        let mut slot = self.home(key);
        loop {
            let Slot { key: k, value } = self.slots[slot];
            if value == EMPTY {
                return Err(slot);
            }
            if k == key {
                return Ok(slot);
            }
            slot = (slot + 1) & self.mask;
        }
    }

    /// The value of `key`, if present.
    #[inline]
    pub fn get(&self, key: u64) -> Option<u32> {
        self.find(key).ok().map(|slot| self.slots[slot].value)
    }

    /// Inserts or overwrites `key`. The caller keeps the live count within capacity.
    #[inline]
    pub fn insert(&mut self, key: u64, value: u32) {
        debug_assert!(value != EMPTY);
        match self.find(key) {
            Ok(slot) => self.slots[slot].value = value,
            Err(slot) => {
                debug_assert!(self.len < self.slots.len() / 2 + 1, "FlatMap over capacity");
                self.slots[slot] = Slot { key, value };
                self.len += 1;
            }
        }
    }

    /// Adds `delta` to the value of `key` (absent counts as 0); returns the new value.
    /// A result of 0 removes the entry.
    #[inline]
    pub fn add(&mut self, key: u64, delta: i64) -> u32 {
        let (slot, old) = match self.find(key) {
            Ok(slot) => (Some(slot), i64::from(self.slots[slot].value)),
            Err(_) => (None, 0),
        };
        let new = (old + delta) as u32;
        match (slot, new) {
            (Some(s), 0) => self.remove_slot(s),
            (Some(s), v) => self.slots[s].value = v,
            (None, 0) => {}
            (None, v) => self.insert(key, v),
        }
        new
    }

    /// Removes `key`; returns its value if it was present.
    #[inline]
    pub fn remove(&mut self, key: u64) -> Option<u32> {
        let slot = self.find(key).ok()?;
        let value = self.slots[slot].value;
        self.remove_slot(slot);
        Some(value)
    }

    /// Backward-shift deletion: later entries of the probe run move into the hole.
    fn remove_slot(&mut self, mut hole: usize) {
        self.len -= 1;
        let mut next = (hole + 1) & self.mask;
        while self.slots[next].value != EMPTY {
            let home = self.home(self.slots[next].key);
            // Move `next` into `hole` unless its home lies cyclically in (hole, next].
            if (next.wrapping_sub(home) & self.mask) >= (next.wrapping_sub(hole) & self.mask) {
                self.slots[hole] = self.slots[next];
                hole = next;
            }
            next = (next + 1) & self.mask;
        }
        self.slots[hole] = VACANT;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    #[test]
    fn matches_std_hashmap_under_churn() {
        let mut map = FlatMap::with_max_entries(64, 9);
        let mut model: HashMap<u64, u32> = HashMap::new();
        let mut x = 12345u64;
        for step in 0..200_000u32 {
            x = mix64(x);
            let key = x % 97; // small key space forces long probe runs and deletions
            if model.len() < 64 && x & 1 == 0 {
                map.insert(key, step);
                model.insert(key, step);
            } else {
                assert_eq!(map.remove(key), model.remove(&key));
            }
            assert_eq!(map.len(), model.len());
            let probe = mix64(x) % 97;
            assert_eq!(map.get(probe), model.get(&probe).copied());
        }
    }

    #[test]
    fn add_counts_and_removes_at_zero() {
        let mut map = FlatMap::with_max_entries(4, 1);
        assert_eq!(map.add(7, 1), 1);
        assert_eq!(map.add(7, 1), 2);
        assert_eq!(map.add(7, -2), 0);
        assert_eq!(map.get(7), None);
        assert_eq!(map.len(), 0);
    }
}
