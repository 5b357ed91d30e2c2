//! Seeded 64-bit mixers and range reduction shared by the hashed identifiers.
//!
//! Every hash function used by the crate is `mix64(key ^ seed_i)` where `mix64` is the
//! splitmix64 output function (a bijective finaliser with full avalanche) and the
//! per-function seeds `seed_i` come from a splitmix64 sequence started at the user's
//! seed. Reduction to a table of `n` entries uses the high half of a 64x64->128-bit
//! product (Lemire's multiply-shift), so `n` need not be a power of two and the
//! well-mixed high bits decide the bucket.

/// The splitmix64 increment (2^64 / golden ratio).
const GAMMA: u64 = 0x9E37_79B9_7F4A_7C15;

/// The splitmix64 output function: a bijective, well-avalanching 64-bit mixer.
#[inline(always)]
pub fn mix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(GAMMA);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Maps a well-mixed 64-bit hash to `0..n` using its high bits.
#[inline(always)]
pub fn reduce(hash: u64, n: usize) -> usize {
    ((u128::from(hash) * n as u128) >> 64) as usize
}

/// Derives `count` distinct per-function seeds from `seed` (a splitmix64 sequence).
pub fn derive_seeds(seed: u64, count: usize) -> Vec<u64> {
    let mut state = seed;
    (0..count)
        .map(|_| {
            state = state.wrapping_add(GAMMA);
            mix64(state)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reduce_stays_in_range() {
        for n in [1usize, 2, 3, 4095, 4096, 1 << 20] {
            for h in [0u64, 1, u64::MAX, u64::MAX / 2, mix64(7)] {
                assert!(reduce(h, n) < n);
            }
        }
    }

    #[test]
    fn derived_seeds_differ_and_are_deterministic() {
        let a = derive_seeds(42, 8);
        assert_eq!(a, derive_seeds(42, 8));
        for i in 0..a.len() {
            for j in i + 1..a.len() {
                assert_ne!(a[i], a[j]);
            }
        }
        assert_ne!(a, derive_seeds(43, 8));
    }
}
