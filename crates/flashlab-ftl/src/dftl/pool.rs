//! Where DFTL takes a new translation block: from the plane with the fewest translation
//! blocks (then the most free blocks, then the lowest number), so that no plane holds
//! more than its share of them; data GC first frees one beyond the plane's reserve.

use super::DftlFtl;
use crate::FtlError;

impl DftlFtl {
    /// A free block from the plane [`Self::pool_plane`] picks; data GC first frees one
    /// beyond the plane's reserve if needed.
    pub(super) fn pool_block(&mut self) -> Result<u32, FtlError> {
        let plane = self.pool_plane();
        let reserve = self.d.gc_reserve();
        let mut runs = 0;
        while self.d.free[plane as usize].len() <= reserve {
            self.with_bits_lent(|d| d.gc_once(plane))?;
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
    /// lowest number: one scan of the planes per new translation block, for the least
    /// key (translation blocks, complement of the free blocks) packed into a `u64`, the
    /// first plane kept on ties (a select per plane, which the compiler does not turn
    /// into the SSE2 emulation of 64-bit compares that a plain `min` becomes).
    fn pool_plane(&self) -> u32 {
        // Every key is below u64::MAX (a plane holds far fewer than u32::MAX translation
        // blocks), so the first plane always replaces the start value.
        let mut best = (u64::MAX, 0u32);
        for (p, (f, &t)) in self.d.free.iter().zip(&self.t_count).enumerate() {
            let k = (t as u64) << 32 | (u32::MAX - f.len() as u32) as u64;
            if k < best.0 {
                best = (k, p as u32);
            }
        }
        best.1
    }
}

#[cfg(test)]
mod tests {
    use crate::{
        DftlFtl, FtlSettings, Mapping, MappingSettings, Scheme, StripeOrder, Trigger, VictimPolicy, WearLevelling,
    };
    use flashlab_nand::Geometry;
    use rand::{Rng, SeedableRng};

    fn reference(f: &DftlFtl) -> u32 {
        let key = |p: usize| {
            let free = f.d.free[p].len() as u32;
            ((f.t_count[p] as u128) << 64 | ((u32::MAX - free) as u128) << 32 | p as u128, p as u32)
        };
        (0..f.d.free.len()).map(key).min().unwrap().1
    }

    fn small() -> (Geometry, FtlSettings) {
        let geo = Geometry {
            channels: 2,
            chips_per_channel: 1,
            dies_per_chip: 2,
            planes_per_die: 2,
            blocks_per_plane: 64,
            pages_per_block: 16,
            page_bytes: 256,
        };
        let logical: u64 = 6000;
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
        (geo, s)
    }

    /// The plane choice equals the minimum of the full (translation blocks, −free blocks,
    /// plane) key, through random writes (data GC, translation blocks taken and
    /// collected) and with translation-block counts and free pools set by hand (ties
    /// broken by the lowest plane).
    #[test]
    fn the_plane_with_fewest_translation_blocks_then_most_free_blocks_is_chosen() {
        let (geo, s) = small();
        let logical = s.logical_pages;
        let mut f = DftlFtl::new(geo, s).unwrap();
        let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(5);
        for i in 0..30_000 {
            f.write(rng.gen_range(0..logical)).unwrap();
            if i % 97 == 0 {
                assert_eq!(f.pool_plane(), reference(&f));
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
            assert_eq!(f.pool_plane(), reference(&f));
        }
    }

    /// The CMT's membership bitmap is lent to the page FTL only inside
    /// `with_bits_lent` (data GC's prefetch pass sees it there), and is back in the CMT
    /// after every write, with and without the op log, through data GC, translation GC
    /// and `gc_step`; page mapping never has one.
    #[test]
    fn the_cmt_bitmap_is_lent_to_gc_only_for_the_call() {
        let (geo, s) = small();
        let logical = s.logical_pages;
        let words = (logical as usize).div_ceil(64);
        let mut f = DftlFtl::new(geo, s.clone()).unwrap();
        assert!(f.d.moved_bits.is_empty());
        assert_eq!(f.with_bits_lent(|d| d.moved_bits.len()), words);
        let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(3);
        for i in 0..20_000 {
            f.set_record_ops(i % 2 == 0);
            f.write(rng.gen_range(0..logical)).unwrap();
            f.take_ops();
            if i % 1000 == 0 {
                f.gc_step(rng.gen_range(0..geo.planes())).unwrap();
            }
            assert!(f.d.moved_bits.is_empty(), "write {i}");
        }
        assert!(f.d.stats.gc_copied_pages > 0, "data GC ran");
        assert!(f.translation_blocks() > 0);
        f.check_invariants().unwrap();
        assert_eq!(f.with_bits_lent(|d| d.moved_bits.len()), words);
        let page = crate::PageFtl::new(geo, FtlSettings { mapping: MappingSettings::default(), ..s });
        assert!(page.moved_bits.is_empty());
    }
}
