//! Sorting one data-GC batch's moved pages for DFTL's map update (Gupta et al. 2009,
//! §3.3): the cached ones are updated in RAM (marked GC-dirty beside their cached bit);
//! the others' translation pages are rewritten, once per page per batch. One tight loop
//! over the bits, its table accesses unchecked behind one range check of the whole
//! batch (see [`Cmt::split_moved`]).

use super::{Bits, Cmt, PageOf, CACHED, GC_DIRTY};

impl Cmt {
    /// Sort one data-GC batch's moved pages: a cached one is marked dirty (its GC-dirty
    /// bit, in the word pair whose cached bit was tested: its slot is not touched); for
    /// the others, their translation page goes to `touched` the first time the batch
    /// touches it (`stamp[t] == epoch` marks it). Returns `n`: the translation pages are
    /// `touched[..n]`, in order of first touch. `touched` and `cached` (the cached pages,
    /// marked after the loop) are scratch buffers, grown to the batch's length and never
    /// shrunk. The bits were prefetched by the page FTL's GC (`DftlFtl::with_bits_lent`).
    /// Specialised once per batch for a shift or a division ([`PageOf`]), and kept out of
    /// `drain` (one call per batch) so that its loop has the registers to itself.
    ///
    /// Panics if a moved page is past the bits or its translation page past `stamp`
    /// (a moved page is a logical page, so neither happens).
    #[inline(never)]
    pub(crate) fn split_moved(
        &mut self,
        moved: &[u32],
        stamp: &mut [u32],
        epoch: u32,
        touched: &mut Vec<u32>,
        cached: &mut Vec<u32>,
    ) -> usize {
        let len = moved.len();
        for out in [&mut *touched, &mut *cached] {
            if out.len() < len {
                out.resize(len, 0);
            }
        }
        // One vectorised pass instead of a bounds check per page and table.
        if len == 0 {
            return 0;
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
        let (touched, out) = (touched.as_mut_ptr(), cached.as_mut_ptr());
        // SAFETY: every moved page `l <= max`, so `l >> 6 <= max >> 6 < bits.len()` and its
        // translation page `page(l) <= page(max) < stamp.len()` (the closures below are
        // `PageOf::of`, non-decreasing); `n` and `m` count pages already seen, so both
        // are below `len`, which `touched` and `cached` reach (resized above), and they
        // are distinct allocations from `moved`, `stamp` and the bits (`&mut`).
        // Exercised by `split_moved_sorts_a_batch_as_the_plain_rule_does` (shift and
        // division) and every DFTL test with data GC, also under `scripts/sanitize`.
        let (n, m) = unsafe {
            if shift != u32::MAX {
                split_with(bits, moved, stamp, epoch, touched, out, |l| (l >> shift) as usize)
            } else {
                split_with(bits, moved, stamp, epoch, touched, out, |l| (l as u64 / epp) as usize)
            }
        };
        // The marks in a loop of their own (a tenth of the batch, their words just read):
        // in the split's loop the mask took registers and instructions from every page.
        for &l in &cached[..m] {
            self.cached[(l >> 6) as usize][GC_DIRTY] |= 1 << (l & 63);
        }
        n
    }
}

/// [`Cmt::split_moved`]'s loop with the translation page given by `page`. The
/// first-touch test has no branch: every uncached page's translation page is written at
/// `touched[n]` and `n` advances only on a first touch (about half of them in the bench,
/// so a branch there was mispredicted about every other page); the cached test keeps its
/// branch (13 % taken in the bench), and a cached page goes to `cached[m]`. (A version
/// with no branch at all, selects and both outputs written at every page, took 40
/// instructions per page against 24: s10-dftl.) Returns `(n, m)`.
///
/// # Safety
/// Every `l` of `moved`: `l >> 6 < bits.len()` and `page(l) < stamp.len()`; `touched`
/// and `cached` valid for `moved.len()` writes each and aliasing nothing else passed.
#[inline(always)]
unsafe fn split_with(
    bits: &[Bits],
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
        let w = unsafe { bits.get_unchecked((l >> 6) as usize)[CACHED] };
        if w >> (l & 63) & 1 != 0 {
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
    /// moved pages become dirty (and no other page changes); the others' translation
    /// pages once each, in order of first touch within the batch; their stamps set to
    /// the batch's epoch. Pages are cleaned (batch updates) and entries replaced between
    /// batches, so marks are made, cleared and dropped with their entries. The scratch
    /// buffer is reused across batches of every length (longer and shorter).
    #[test]
    fn split_moved_sorts_a_batch_as_the_plain_rule_does() {
        for epp in [8u32, 5, 64, 100] {
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
            let mut marked = 0;
            for epoch in 1..300u32 {
                let mut moved: Vec<u32> = (0..next() % 120).map(|_| (next() % logical) as u32).collect();
                if epoch % 7 == 0 {
                    // The last logical page: the bounds' edge.
                    moved.push(logical as u32 - 1);
                }
                let want: Vec<bool> =
                    (0..logical).map(|l| c.is_dirty(l) || (c.contains(l) && moved.contains(&(l as u32)))).collect();
                let n = c.split_moved(&moved, &mut stamp, epoch, &mut touched, &mut cached);
                for l in 0..logical {
                    assert_eq!(c.is_dirty(l), want[l as usize], "batch {epoch}, lpn {l}");
                }
                marked += moved.iter().filter(|&&l| c.contains(l as u64)).count();
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
                c.check().unwrap();
                // A batch update of one page cleans exactly its entries.
                let t = next() % stamp.len() as u64;
                let before: Vec<bool> = (0..logical).map(|l| c.is_dirty(l)).collect();
                c.clean_page(t);
                for l in 0..logical {
                    assert_eq!(c.is_dirty(l), before[l as usize] && l / epp as u64 != t, "clean {t}, lpn {l}");
                }
                // An entry replaced: the victim's mark goes with it; the new entry is clean.
                let l = next() % logical;
                if !c.contains(l) {
                    let (v, _, s) = c.take_victim();
                    c.put(s, l, false);
                    assert!(!c.is_dirty(v) && !c.is_dirty(l));
                }
                c.check().unwrap();
            }
            assert!(marked > 100, "cached moved pages: {marked}");
        }
    }

    /// A moved page past the map is refused before any unchecked access.
    #[test]
    #[should_panic(expected = "outside the map")]
    fn split_moved_refuses_a_page_outside_the_map() {
        // 300 pages: the bits have 5 word pairs (320 pages), so page 310 passes their
        // bound but not the stamps' (38 translation pages of 8).
        let mut c = Cmt::new(300, 40, 8, true);
        let mut stamp = vec![0u32; 38];
        c.split_moved(&[3, 310], &mut stamp, 1, &mut Vec::new(), &mut Vec::new());
    }
}
