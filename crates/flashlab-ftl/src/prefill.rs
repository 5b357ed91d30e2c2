//! Bulk sequential prefill for page mapping (issue 22): the state that writing logical
//! pages 0, 1, …, L − 1 one by one leaves on an erased device, laid out a block at a
//! time. The per-block events (a frontier closing, a free block taken) run through the
//! same functions, in the same order and at the same logical clock as write by write;
//! only the per-page work (program, both mapping entries, counters) is batched.

use crate::ftl::{PageFtl, NO_BLOCK};
use crate::{FtlError, Trigger};
use flashlab_nand::Cause;

impl PageFtl {
    /// Write logical pages `0..L` in order exactly as `L` calls of [`PageFtl::write`] would
    /// on this erased device. Returns false, having done nothing, where the state could
    /// differ: a feature that acts per write (placement, content tracking, strict checks,
    /// operation logging, the DT-GC or free-ratio triggers, static wear levelling), a device
    /// already written, or a plane that would fall below its GC reserve before the end.
    pub fn prefill_sequential(&mut self) -> Result<bool, FtlError> {
        if !self.bulk_prefill_applies() {
            return Ok(false);
        }
        self.prefill_blocks(0, self.s.logical_pages)?;
        self.prefill_finish();
        Ok(true)
    }

    /// The part of the bulk prefill whose blocks are opened by the writes of logical
    /// pages `from..to` (a block is opened by the write of its first page and
    /// programmed whole then: its later pages touch no other state). Called for
    /// consecutive ranges from 0 (DFTL takes translation blocks between them, at the
    /// write where write by write would), then [`Self::prefill_finish`].
    pub(crate) fn prefill_blocks(&mut self, from: u64, to: u64) -> Result<(), FtlError> {
        let l = self.s.logical_pages;
        let to = to.min(l);
        if from >= to {
            return Ok(());
        }
        let ppb = self.geo.pages_per_block as u64;
        let p = self.stripe.len() as u64;
        let per_round = ppb * p;
        // Round m holds logical pages [m·ppb·p, (m+1)·ppb·p): the i-th plane of the stripe
        // takes i, i + p, i + 2p, … of them, into one block opened at the first.
        for m in from / per_round..to.div_ceil(per_round) {
            for i in 0..p {
                let first = m * per_round + i;
                if first < from {
                    continue;
                }
                if first >= to {
                    break;
                }
                let plane = self.stripe[i as usize];
                // The write of `first` counts itself on the clock before it appends.
                self.clock = first + 1;
                let block = self.open_block(plane, (plane * self.slots) as usize, 0)?;
                let n = (l - first).div_ceil(p).min(ppb) as u32;
                let base = self.nand.first_page(block);
                self.nand.program_run(block, n, Cause::Host);
                for k in 0..n {
                    let lpn = first + k as u64 * p;
                    self.p2l[(base + k) as usize] = lpn as u32;
                    self.l2p[lpn as usize] = base + k;
                }
            }
        }
        Ok(())
    }

    /// The end of the bulk prefill: clock, host-write count and stripe cursor after `L` writes.
    pub(crate) fn prefill_finish(&mut self) {
        let (l, p) = (self.s.logical_pages, self.stripe.len() as u64);
        self.clock = l;
        self.stats.host_write_pages = l;
        self.cursor = (l % p) as usize;
    }

    /// Blocks the bulk prefill opens in the `i`-th plane of the stripe.
    pub(crate) fn prefill_blocks_of(&self, i: u64) -> u64 {
        let (l, ppb, p) = (self.s.logical_pages, self.geo.pages_per_block as u64, self.stripe.len() as u64);
        let pages = if i < l { (l - i).div_ceil(p) } else { 0 };
        pages.div_ceil(ppb)
    }

    pub(crate) fn bulk_prefill_applies(&self) -> bool {
        let s = &self.s;
        let per_write_features = s.placement.is_some()
            || self.placement.is_some()
            || s.track_content
            || s.strict
            || self.record_ops
            || self.moved.is_some()
            || !matches!(s.trigger, Trigger::Threshold)
            || s.wear.static_threshold > 0;
        let fresh = self.clock == 0
            && self.cursor == 0
            && *self.stats() == Default::default()
            && *self.nand.counters() == Default::default()
            && self.open.iter().all(|&b| b == NO_BLOCK);
        if per_write_features || !fresh {
            return false;
        }
        // GC starts when a plane's free blocks drop below the reserve; free blocks only
        // drop during the prefill, so the count at its end decides.
        (0..self.stripe.len() as u64).all(|i| {
            let plane = self.stripe[i as usize] as usize;
            let free = self.free[plane].len() as u64;
            self.prefill_blocks_of(i) + self.gc_reserve() as u64 <= free
        })
    }
}

#[cfg(test)]
mod tests {
    use crate::{FtlSettings, PageFtl, StripeOrder, Trigger, VictimPolicy, WearLevelling};
    use flashlab_nand::Geometry;

    fn settings(logical_pages: u64) -> FtlSettings {
        FtlSettings {
            logical_pages,
            free_blocks_min: 2,
            victim: VictimPolicy::Greedy,
            external_victim: None,
            stripe: StripeOrder::default(),
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
            mapping: Default::default(),
        }
    }

    fn geo() -> Geometry {
        Geometry {
            channels: 2,
            chips_per_channel: 1,
            dies_per_chip: 2,
            planes_per_die: 2,
            blocks_per_plane: 24,
            pages_per_block: 16,
            page_bytes: 4096,
        }
    }

    /// The whole observable state, as text (every part derives Debug).
    fn state(f: &PageFtl) -> String {
        format!(
            "{:?} {:?} {:?} {:?} {:?} {:?} {:?} {:?} {:?} {} {:?} {}",
            f.l2p,
            f.p2l,
            f.role,
            f.close_time,
            f.free,
            f.open,
            f.index,
            f.nand,
            f.stats,
            f.clock,
            f.gc_victim,
            f.cursor
        )
    }

    fn pair(logical_pages: u64, stripe: &str) -> (PageFtl, PageFtl) {
        let mut s = settings(logical_pages);
        s.stripe = StripeOrder::parse(stripe).unwrap();
        let (mut bulk, mut one) = (PageFtl::new(geo(), s.clone()), PageFtl::new(geo(), s));
        assert!(bulk.prefill_sequential().unwrap(), "bulk prefill applies");
        for lpn in 0..logical_pages {
            one.write(lpn).unwrap();
        }
        (bulk, one)
    }

    #[test]
    fn bulk_prefill_leaves_the_write_by_write_state() {
        // Full rounds, a partial last round, a partial last block, another stripe order.
        for (l, stripe) in [(1024, "cwdp"), (1500, "cwdp"), (1283, "pdwc"), (7, "cwdp"), (16 * 8 * 16, "dpcw")] {
            let (mut bulk, mut one) = pair(l, stripe);
            assert_eq!(state(&bulk), state(&one), "L = {l}, stripe {stripe}");
            // And the same from there on: GC included.
            let mut x = 7u64;
            for _ in 0..20_000 {
                x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
                let lpn = (x >> 33) % l;
                bulk.write(lpn).unwrap();
                one.write(lpn).unwrap();
            }
            assert_eq!(state(&bulk), state(&one), "L = {l}, after random writes");
            bulk.check_invariants().unwrap();
        }
    }

    #[test]
    fn bulk_prefill_declines_what_it_cannot_lay_out() {
        let s = settings(1024);
        let mut used = PageFtl::new(geo(), s.clone());
        used.write(3).unwrap();
        assert!(!used.prefill_sequential().unwrap(), "a written device");
        let mut strict = settings(1024);
        strict.strict = true;
        assert!(!PageFtl::new(geo(), strict).prefill_sequential().unwrap());
        // 8 planes x 24 blocks x 16 pages: 3 000 logical pages need 24 blocks in some plane,
        // leaving fewer free blocks than GC keeps.
        assert!(!PageFtl::new(geo(), settings(3000)).prefill_sequential().unwrap());
    }
}
