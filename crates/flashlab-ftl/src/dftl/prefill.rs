//! DFTL's bulk sequential prefill: the state that writing logical pages 0, 1, …, L − 1
//! one by one through [`DftlFtl`]'s `write` leaves on an erased device, laid out at once
//! where it can be computed (the `paper` and `flashsim-cpp` rules, a CMT of at least
//! one translation page's entries, nothing per write switched on).
//!
//! Write by write (Gupta et al. 2009, §3.1): every write misses the CMT (each entry is
//! used once); once the CMT is full, the write of page `x` evicts `x − capacity`, the
//! least recently used entry, which is dirty only if it is the first of its translation
//! page `t` still cached: then the batch update writes `t` back (all of `t`'s entries
//! were written by then, as `capacity ≥` entries per page), i.e. translation page `t` is
//! programmed just before the data write of page `t·epp + capacity`. Loads read nothing:
//! a page's entries are all loaded before its translation page is first written. So
//! the data pages are [`PageFtl`]'s bulk prefill, with the translation pages' programs
//! (and the translation blocks they take from the free pools) run between its ranges
//! at those writes, and the CMT's end state built directly ([`Cmt::fill_sequential`]).

use super::DftlFtl;
use crate::{DftlVariant, FtlError, FtlStats, Mapping};

impl DftlFtl {
    /// Write logical pages `0..L` in order exactly as `L` calls of `write` would on
    /// this erased device. Returns false, having done nothing, where it cannot.
    pub fn prefill_sequential(&mut self) -> Result<bool, FtlError> {
        let moved = self.d.moved.take();
        let r = self.prefill_bulk();
        self.d.moved = moved;
        r
    }

    fn prefill_bulk(&mut self) -> Result<bool, FtlError> {
        let l = self.d.s.logical_pages;
        let (cap, epp) = (self.cmt.capacity() as u64, self.epp);
        let fresh = self.cmt.len() == 0 && self.t_blocks.is_empty() && *Mapping::stats(self) == FtlStats::default();
        let rules = matches!(self.variant, DftlVariant::Paper | DftlVariant::FlashsimCpp);
        if !fresh || !rules || cap < epp || cap > l || !self.flash_map.is_empty() || !self.d.bulk_prefill_applies() {
            return Ok(false);
        }
        // Translation pages written back during the prefill, the blocks they take, and
        // room for them beside each plane's data blocks and GC reserve (the fewest-first
        // choice of `pool_block` spreads them evenly while none is erased).
        let written = if l > cap { (l - cap - 1) / epp + 1 } else { 0 };
        let t_blocks = written.div_ceil(self.d.geo.pages_per_block as u64);
        let planes = self.d.geo.planes() as u64;
        let reserve = self.d.gc_reserve() as u64;
        let fits = (0..self.d.stripe.len() as u64).all(|i| {
            let plane = self.d.stripe[i as usize] as usize;
            self.d.prefill_blocks_of(i) + t_blocks.div_ceil(planes) + reserve <= self.d.free[plane].len() as u64
        });
        if !fits || t_blocks > self.t_limit as u64 {
            return Ok(false);
        }
        let mut done = 0;
        for t in 0..written {
            // Before the data write of `x`: the eviction of `t`'s first entry writes `t` back.
            let x = t * epp + cap;
            self.d.prefill_blocks(done, x)?;
            done = x;
            self.rewrite(t)?;
        }
        self.d.prefill_blocks(done, l)?;
        self.d.prefill_finish();
        self.d.stats.map_cache_lookups += l;
        self.cmt.fill_sequential(l, written);
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use crate::{
        DftlFtl, DftlVariant, FtlSettings, Mapping, MappingSettings, Scheme, StripeOrder, Trigger, VictimPolicy,
        WearLevelling,
    };
    use flashlab_nand::Geometry;

    fn geo(page_bytes: u32) -> Geometry {
        Geometry {
            channels: 2,
            chips_per_channel: 1,
            dies_per_chip: 2,
            planes_per_die: 2,
            blocks_per_plane: 64,
            pages_per_block: 16,
            page_bytes,
        }
    }

    fn settings(logical_pages: u64, cache: u64, variant: DftlVariant, stripe: &str) -> FtlSettings {
        FtlSettings {
            logical_pages,
            free_blocks_min: 2,
            victim: VictimPolicy::Greedy,
            external_victim: None,
            stripe: StripeOrder::parse(stripe).unwrap(),
            separate_gc_frontier: true,
            host_streams: 1,
            gc_streams: 1,
            trigger: Trigger::Threshold,
            background_max_valid: 1.0,
            placement: None,
            wear: WearLevelling { dynamic: true, ..Default::default() },
            strict: false,
            track_content: false,
            seed: 7,
            mapping: MappingSettings {
                scheme: Scheme::Dftl,
                map_cache_entries: cache,
                dftl_variant: variant,
                ..Default::default()
            },
        }
    }

    /// The whole observable state, as text.
    fn state(f: &DftlFtl) -> String {
        let d = &f.d;
        format!(
            "{:?} {:?} {:?} {:?} {:?} {:?} {:?} {:?} {:?} {} {:?} {} | {:?} {:?} {} {:?} {:?} {:?}",
            d.l2p,
            d.p2l,
            d.role,
            d.close_time,
            d.free,
            d.open,
            d.index,
            d.nand,
            d.stats,
            d.clock,
            d.gc_victim,
            d.cursor,
            f.gtd,
            f.cmt,
            f.t_open,
            f.t_blocks,
            f.t_count,
            f.moved
        )
    }

    #[test]
    fn bulk_prefill_leaves_the_write_by_write_state() {
        // 8 planes x 64 blocks x 16 pages; entries per translation page 64 (256-byte
        // pages), 50 (200: a division, not a shift) or 16; CMTs from one page's entries up.
        let cases = [
            (256, 6000, 64, DftlVariant::Paper, "cwdp"),
            (256, 6000, 200, DftlVariant::Paper, "cwdp"),
            (200, 5999, 333, DftlVariant::Paper, "pdwc"),
            (256, 6001, 1000, DftlVariant::FlashsimCpp, "cwdp"),
            (64, 6000, 100, DftlVariant::Paper, "dpcw"),
            (256, 100, 100, DftlVariant::Paper, "cwdp"),
        ];
        for (page_bytes, l, cache, variant, stripe) in cases {
            let s = settings(l, cache, variant, stripe);
            let mut bulk = DftlFtl::new(geo(page_bytes), s.clone()).unwrap();
            let mut one = DftlFtl::new(geo(page_bytes), s).unwrap();
            let what = format!("{page_bytes}-byte pages, L = {l}, CMT {cache}, {variant:?}, {stripe}");
            assert!(bulk.prefill_sequential().unwrap(), "bulk prefill applies: {what}");
            for lpn in 0..l {
                one.write(lpn).unwrap();
            }
            assert_eq!(state(&bulk), state(&one), "{what}");
            // And the same from there on: data GC, batch updates and translation GC included.
            let mut x = 7u64;
            for _ in 0..30_000 {
                x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
                let lpn = (x >> 33) % l;
                bulk.write(lpn).unwrap();
                one.write(lpn).unwrap();
            }
            assert_eq!(state(&bulk), state(&one), "{what}, after random writes");
            bulk.check_invariants().unwrap();
        }
    }

    #[test]
    fn bulk_prefill_declines_what_it_cannot_lay_out() {
        let fresh = |cache, variant| DftlFtl::new(geo(256), settings(6000, cache, variant, "cwdp")).unwrap();
        // A CMT smaller than a translation page's entries; the variants whose write-backs differ.
        assert!(!fresh(63, DftlVariant::Paper).prefill_sequential().unwrap());
        assert!(!fresh(200, DftlVariant::FlashsimC).prefill_sequential().unwrap());
        assert!(!fresh(200, DftlVariant::Wiscsim).prefill_sequential().unwrap());
        let mut used = fresh(200, DftlVariant::Paper);
        used.write(5).unwrap();
        assert!(!used.prefill_sequential().unwrap(), "a written device");
        let mut strict = settings(6000, 200, DftlVariant::Paper, "cwdp");
        strict.strict = true;
        assert!(!DftlFtl::new(geo(256), strict).unwrap().prefill_sequential().unwrap());
    }
}
