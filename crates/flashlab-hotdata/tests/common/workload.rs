//! Seeded synthetic write streams shared by the tests, the bench and the example.

use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

/// Every `HOT_STRIDE`-th LBA is in the hot set (5 % of the space).
pub const HOT_STRIDE: u64 = 20;

/// Is `lba` in the hot set of [`hot_cold`]?
pub fn is_hot_lba(lba: u64) -> bool {
    lba.is_multiple_of(HOT_STRIDE)
}

/// `n` writes over `0..logical_blocks`: a share `hot_traffic` of them goes uniformly to
/// the hot set (LBAs divisible by 20, 5 % of the space), the rest uniformly to the
/// other LBAs.
pub fn hot_cold(seed: u64, n: usize, logical_blocks: u64, hot_traffic: f64) -> Vec<u64> {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let hot_count = logical_blocks.div_ceil(HOT_STRIDE);
    (0..n)
        .map(|_| {
            if rng.gen_bool(hot_traffic) {
                rng.gen_range(0..hot_count) * HOT_STRIDE
            } else {
                loop {
                    let lba = rng.gen_range(0..logical_blocks);
                    if !is_hot_lba(lba) {
                        break lba;
                    }
                }
            }
        })
        .collect()
}
