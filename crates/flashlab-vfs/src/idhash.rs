//! Maps and sets keyed by the simulator's own integers (inode numbers, file
//! descriptors, node ids), hashed with FxHash's multiply instead of SipHash:
//! the keys are not adversarial. A user must not let a result depend on
//! such a map's iteration order (with SipHash's per-process seeds that order
//! differed between runs anyway). Shared by the page cache and the host
//! file-system models.

use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};

/// A map keyed by integers, hashed with [`IdHasher`].
pub type IdMap<K, V> = HashMap<K, V, BuildHasherDefault<IdHasher>>;
/// A set of integers (or tuples of them), hashed with [`IdHasher`].
pub type IdSet<K> = HashSet<K, BuildHasherDefault<IdHasher>>;

/// FxHash's mixing step (rustc's hasher) over the key's integers.
#[derive(Default, Clone, Copy)]
pub struct IdHasher(u64);

const SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;

impl IdHasher {
    fn add(&mut self, v: u64) {
        self.0 = (self.0.rotate_left(5) ^ v).wrapping_mul(SEED);
    }
}

impl Hasher for IdHasher {
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.add(u64::from(*b));
        }
    }
    fn write_u32(&mut self, v: u32) {
        self.add(u64::from(v));
    }
    fn write_u64(&mut self, v: u64) {
        self.add(v);
    }
    fn write_usize(&mut self, v: usize) {
        self.add(v as u64);
    }
    fn finish(&self) -> u64 {
        self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Dense keys (inode and node ids, descriptors: what these maps hold) spread over
    /// the hash's low bits (hashbrown's bucket index) and its top seven
    /// (hashbrown's tag); lookups find what was inserted.
    #[test]
    fn dense_keys_hash_apart() {
        let h = |v: u32| {
            let mut s = IdHasher::default();
            s.write_u32(v);
            s.finish()
        };
        let low: std::collections::BTreeSet<u64> = (0..4096u32).map(|v| h(v) & 0xfff).collect();
        assert_eq!(low.len(), 4096);
        let top: std::collections::BTreeSet<u64> = (0..4096u32).map(|v| h(v) >> 57).collect();
        assert_eq!(top.len(), 128);
        let m: IdMap<u32, u32> = (0..1000).map(|k| (k * 7, k)).collect();
        assert!((0..1000).all(|k| m[&(k * 7)] == k));
    }

    #[test]
    fn neighbouring_pages_spread_over_the_tag() {
        use std::hash::BuildHasher;
        let b = BuildHasherDefault::<IdHasher>::default();
        let hs: std::collections::HashSet<u64> = (0..4096u64).map(|i| b.hash_one((3u32, i)) >> 57).collect();
        // The top 7 bits (hashbrown's control byte) take many values.
        assert!(hs.len() > 64, "{}", hs.len());
    }
}
