//! Where DFTL takes a new translation block: from the plane with the fewest translation
//! blocks (then the most free blocks, then the lowest number), so that no plane holds
//! more than its share of them; data GC first frees one beyond the plane's reserve.

use super::DftlFtl;
use crate::FtlError;
use flashlab_nand::Geometry;

/// The narrow (`u64`) plane key: translation blocks in bits 48.., the free blocks'
/// complement in bits 24..48, the plane in bits 0..24.
const NARROW_T: u32 = 48;
const NARROW_FREE: u32 = 24;
const NARROW_MAX: u64 = (1 << NARROW_FREE) - 1;

/// Whether every part of the plane key fits the narrow key on this device: free blocks
/// (at most blocks per plane) and plane numbers below 2^24, translation blocks per plane
/// (at most `t_limit + 1`) below 2^16.
pub(super) fn narrow_keys(geo: &Geometry, t_limit: usize) -> bool {
    (geo.blocks_per_plane as u64) < NARROW_MAX
        && (geo.planes() as u64) < NARROW_MAX
        && (t_limit as u64 + 1) < 1 << (64 - NARROW_T)
}

impl DftlFtl {
    /// A free block from the plane [`Self::pool_plane`] picks; data GC first frees one
    /// beyond the plane's reserve if needed.
    pub(super) fn pool_block(&mut self) -> Result<u32, FtlError> {
        let plane = self.pool_plane(self.narrow);
        let reserve = self.d.gc_reserve();
        let mut runs = 0;
        while self.d.free[plane as usize].len() <= reserve {
            self.d.gc_once(plane)?;
            runs += 1;
            if runs > self.d.geo.blocks_per_plane {
                return Err(FtlError::NoSpace { plane });
            }
        }
        let b = self.d.take_free_block(plane, false).ok_or(FtlError::NoSpace { plane })?;
        self.t_count[plane as usize] += 1;
        Ok(b)
    }

    /// The plane with the fewest translation blocks, then the most free blocks, then the
    /// lowest number: the minimum of a key packing the three into one integer, a `u64`
    /// when `narrow` ([`narrow_keys`]: the bench's devices), else a `u128` (each part is
    /// at most a u32). One scan of the planes per new translation block.
    fn pool_plane(&self, narrow: bool) -> u32 {
        let (free, t_count) = (&self.d.free[..], &self.t_count[..]);
        if narrow {
            let key = |(p, (f, &t)): (usize, (&std::collections::VecDeque<u32>, &u32))| {
                (t as u64) << NARROW_T | (NARROW_MAX - f.len() as u64) << NARROW_FREE | p as u64
            };
            let k = free.iter().zip(t_count).enumerate().map(key).min();
            return k.map_or(0, |k| (k & NARROW_MAX) as u32);
        }
        let key = |p: usize| (t_count[p] as u128) << 64 | ((u32::MAX - free[p].len() as u32) as u128) << 32 | p as u128;
        (0..free.len()).map(key).min().map_or(0, |k| k as u32)
    }
}

#[cfg(test)]
mod tests {
    use crate::{
        DftlFtl, FtlSettings, Mapping, MappingSettings, Scheme, StripeOrder, Trigger, VictimPolicy, WearLevelling,
    };
    use flashlab_nand::Geometry;
    use rand::{Rng, SeedableRng};

    /// The narrow and the wide key pick the same plane, through random writes (data GC,
    /// translation blocks taken and collected) and with translation-block counts and
    /// free pools set by hand (ties broken by the lowest plane).
    #[test]
    fn narrow_and_wide_plane_keys_agree() {
        let geo = Geometry {
            channels: 2,
            chips_per_channel: 1,
            dies_per_chip: 2,
            planes_per_die: 2,
            blocks_per_plane: 64,
            pages_per_block: 16,
            page_bytes: 256,
        };
        let logical = 6000;
        let mapping = MappingSettings { scheme: Scheme::Dftl, map_cache_entries: 200, ..Default::default() };
        let s = FtlSettings {
            logical_pages: logical,
            free_blocks_min: 2,
            victim: VictimPolicy::Greedy,
            external_victim: None,
            stripe: StripeOrder::parse("cwdp").unwrap(),
            separate_gc_frontier: true,
            host_streams: 1,
            gc_streams: 1,
            trigger: Trigger::Threshold,
            background_max_valid: 1.0,
            placement: None,
            wear: WearLevelling::default(),
            strict: false,
            track_content: false,
            seed: 7,
            mapping,
        };
        let mut f = DftlFtl::new(geo, s).unwrap();
        assert!(f.narrow);
        let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(5);
        for i in 0..30_000 {
            f.write(rng.gen_range(0..logical)).unwrap();
            if i % 97 == 0 {
                assert_eq!(f.pool_plane(true), f.pool_plane(false));
            }
        }
        for _ in 0..200 {
            for t in f.t_count.iter_mut() {
                *t = rng.gen_range(0..3);
            }
            for q in f.d.free.iter_mut() {
                while q.len() > rng.gen_range(0..4) {
                    q.pop_back();
                }
            }
            assert_eq!(f.pool_plane(true), f.pool_plane(false));
        }
    }
}
