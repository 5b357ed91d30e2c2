//! Sorting one data-GC batch's moved pages for DFTL's map update (Gupta et al. 2009,
//! §3.3): the cached ones are updated in RAM; the others' translation pages are
//! rewritten, once per page per batch. One tight loop over the membership bitmap, its
//! table accesses unchecked behind one range check of the whole batch (see
//! [`Cmt::split_moved`]).

use super::{Cmt, PageOf};
use crate::ftl::prefetch_ptr;

impl Cmt {
    /// Sort one data-GC batch's moved pages: a cached one goes to `cached` (its entry is
    /// updated in RAM; its `slot_of` line is prefetched); for the others, their
    /// translation page goes to `touched` the first time the batch touches it
    /// (`stamp[t] == epoch` marks it). Returns `(n, m)`: the translation pages are
    /// `touched[..n]`, in order of first touch, and the cached pages `cached[..m]`, in
    /// batch order (both scratch buffers, grown to the batch's length and never shrunk).
    /// The bitmap's words were prefetched by the page FTL's GC
    /// (`DftlFtl::with_bits_lent`). Specialised once per batch for a shift or a division
    /// ([`PageOf`]), and kept out of `drain` (one call per batch) so that its loop has
    /// the registers to itself.
    ///
    /// Panics if a moved page is past the bitmap or its translation page past `stamp`
    /// (a moved page is a logical page, so neither happens).
    #[inline(never)]
    pub(crate) fn split_moved(
        &self,
        moved: &[u32],
        stamp: &mut [u32],
        epoch: u32,
        touched: &mut Vec<u32>,
        cached: &mut Vec<u32>,
    ) -> (usize, usize) {
        let len = moved.len();
        for out in [&mut *touched, &mut *cached] {
            if out.len() < len {
                out.resize(len, 0);
            }
        }
        // One vectorised pass instead of a bounds check per page and table.
        if len == 0 {
            return (0, 0);
        }
        // A fold over values (not references), which the compiler vectorises.
        let max = moved.iter().copied().fold(0, u32::max);
        let PageOf { epp, shift } = self.page_of;
        let bits = &self.cached[..];
        // `page_of` is non-decreasing in the logical page, so `max`'s translation page is
        // the largest of the batch.
        assert!(
            ((max >> 6) as usize) < bits.len() && (self.page_of.of(max as u64) as usize) < stamp.len(),
            "CMT: moved page {max} outside the map"
        );
        let slot_of = self.slot_of.as_ptr();
        let (touched, cached) = (touched.as_mut_ptr(), cached.as_mut_ptr());
        // SAFETY: every moved page `l <= max`, so `l >> 6 <= max >> 6 < bits.len()` and its
        // translation page `page(l) <= page(max) < stamp.len()` (the closures below are
        // `PageOf::of`, non-decreasing); `n` and `m` count pages already seen, so both
        // are below `len`, which `touched` and `cached` reach (resized above), and they
        // are distinct allocations from `moved`, `stamp` and the bitmap (`&mut`).
        // Exercised by `split_moved_sorts_a_batch_as_the_plain_rule_does` (shift and
        // division) and every DFTL test with data GC, also under `scripts/sanitize`.
        unsafe {
            if shift != u32::MAX {
                split_with(bits, slot_of, moved, stamp, epoch, touched, cached, |l| (l >> shift) as usize)
            } else {
                split_with(bits, slot_of, moved, stamp, epoch, touched, cached, |l| (l as u64 / epp) as usize)
            }
        }
    }
}

/// [`Cmt::split_moved`]'s loop with the translation page given by `page`. The
/// first-touch test has no branch: every uncached page's translation page is written at
/// `touched[n]` and `n` advances only on a first touch (about half of them in the bench,
/// so a branch there was mispredicted about every other page); the cached test keeps its
/// branch (13 % taken in the bench). (A version with no branch at all, selects and both
/// outputs written at every page, took 40 instructions per page against 24: s10-dftl.)
///
/// # Safety
/// Every `l` of `moved`: `l >> 6 < bits.len()` and `page(l) < stamp.len()`; `touched`
/// and `cached` valid for `moved.len()` writes each and aliasing nothing else passed.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
unsafe fn split_with(
    bits: &[u64],
    slot_of: *const u32,
    moved: &[u32],
    stamp: &mut [u32],
    epoch: u32,
    touched: *mut u32,
    cached: *mut u32,
    page: impl Fn(u32) -> usize,
) -> (usize, usize) {
    let (mut n, mut m) = (0usize, 0usize);
    for &l in moved {
        // SAFETY: the caller's bounds (see `Cmt::split_moved`).
        let w = unsafe { *bits.get_unchecked((l >> 6) as usize) };
        if w >> (l & 63) & 1 != 0 {
            prefetch_ptr(slot_of.wrapping_add(l as usize));
            // SAFETY: m < moved.len().
            unsafe { cached.add(m).write(l) };
            m += 1;
            continue;
        }
        let t = page(l);
        // SAFETY: the caller's bounds.
        let s = unsafe { stamp.get_unchecked_mut(t) };
        let first = *s != epoch;
        *s = epoch;
        // SAFETY: n < moved.len().
        unsafe { touched.add(n).write(t as u32) };
        n += first as usize;
    }
    (n, m)
}

#[cfg(test)]
mod tests {
    use super::super::Cmt;

    /// `split_moved` against the plain rule, for a shift and a division: the cached
    /// moved pages in order; the others' translation pages once each, in order of first
    /// touch within the batch; their stamps set to the batch's epoch. The scratch
    /// buffers are reused across batches of every length (longer and shorter).
    #[test]
    fn split_moved_sorts_a_batch_as_the_plain_rule_does() {
        for epp in [8u32, 5] {
            let logical = 300u64;
            let mut c = Cmt::new(logical, 40, epp, true);
            let mut stamp = vec![0u32; logical.div_ceil(epp as u64) as usize];
            let (mut touched, mut cached) = (Vec::new(), Vec::new());
            let mut x = 5u64;
            let mut next = move || {
                x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
                x >> 33
            };
            while !c.is_full() {
                let l = next() % logical;
                if !c.contains(l) {
                    c.insert(l, false);
                }
            }
            for epoch in 1..300u32 {
                let mut moved: Vec<u32> = (0..next() % 120).map(|_| (next() % logical) as u32).collect();
                if epoch % 7 == 0 {
                    // The last logical page: the bounds' edge.
                    moved.push(logical as u32 - 1);
                }
                let (n, m) = c.split_moved(&moved, &mut stamp, epoch, &mut touched, &mut cached);
                let want: Vec<u32> = moved.iter().copied().filter(|&l| c.contains(l as u64)).collect();
                assert_eq!(&cached[..m], &want[..], "batch {epoch}");
                let mut pages = Vec::new();
                for &l in moved.iter().filter(|&&l| !c.contains(l as u64)) {
                    if !pages.contains(&(l / epp)) {
                        pages.push(l / epp);
                    }
                }
                assert_eq!(&touched[..n], &pages[..], "batch {epoch}");
                assert!(pages.iter().all(|&t| stamp[t as usize] == epoch));
                assert_eq!(stamp.iter().filter(|&&s| s == epoch).count(), n);
                assert!(touched.len() >= moved.len() && cached.len() >= moved.len());
            }
        }
    }

    /// A moved page past the map is refused before any unchecked access.
    #[test]
    #[should_panic(expected = "outside the map")]
    fn split_moved_refuses_a_page_outside_the_map() {
        // 300 pages: the bitmap has 5 words (320 bits), so page 310 passes the bitmap's
        // bound but not the stamps' (38 translation pages of 8).
        let c = Cmt::new(300, 40, 8, true);
        let mut stamp = vec![0u32; 38];
        c.split_moved(&[3, 310], &mut stamp, 1, &mut Vec::new(), &mut Vec::new());
    }
}
