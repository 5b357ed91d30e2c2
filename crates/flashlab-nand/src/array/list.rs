//! Invalidating a list of pages at once (issue 22 target 5): DFTL's batch update
//! rewrites one translation page per page a data-GC batch touches (Gupta et al.,
//! ASPLOS 2009, §3.3), each rewrite invalidating the page's old copy, anywhere in the
//! translation blocks. [`Nand::invalidate_pages`] takes the batch's old copies as one
//! list, so the tables are looked up once instead of per page.

use super::Nand;

impl Nand {
    /// Mark each page of `pages` invalid, in order: the state of [`Nand::invalidate`]
    /// on each in turn (and its panic on a page that is not valid, a repeated one
    /// included).
    pub fn invalidate_pages(&mut self, pages: &[u32]) {
        if self.ppb_shift != u32::MAX {
            let shift = self.ppb_shift;
            self.invalidate_each(pages, |p| p >> shift);
        } else {
            let ppb = self.ppb;
            self.invalidate_each(pages, |p| p / ppb);
        }
    }

    /// [`Self::invalidate_pages`]'s loop with the block of a page given by `block_of`.
    #[inline(always)]
    fn invalidate_each(&mut self, pages: &[u32], block_of: impl Fn(u32) -> u32) {
        let (bits, valid) = (&mut self.valid_bits[..], &mut self.valid[..]);
        for &page in pages {
            let (w, m) = (&mut bits[(page >> 6) as usize], 1u64 << (page & 63));
            assert!(*w & m != 0, "NAND: invalidate of page {page}, which is not valid");
            *w &= !m;
            valid[block_of(page) as usize] -= 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::{Cause, Geometry, Nand, PageState};

    fn geo(pages_per_block: u32) -> Geometry {
        Geometry {
            channels: 1,
            chips_per_channel: 1,
            dies_per_chip: 1,
            planes_per_die: 2,
            blocks_per_plane: 4,
            pages_per_block,
            page_bytes: 4096,
        }
    }

    /// Every block programmed full, then the same pages invalidated one by one in one
    /// device and as a list in the other: the same state (shift and division).
    #[test]
    fn a_list_leaves_the_state_of_one_invalidate_per_page() {
        for ppb in [64, 48, 100] {
            let (mut one, mut list) = (Nand::new(geo(ppb)), Nand::new(geo(ppb)));
            for b in 0..8 {
                for _ in 0..ppb {
                    one.program_next(b, Cause::Host);
                    list.program_next(b, Cause::Host);
                }
            }
            let pages: Vec<u32> = (0..8 * ppb).filter(|p| p % 3 == 0 || p % 7 == 1).rev().collect();
            pages.iter().for_each(|&p| one.invalidate(p));
            list.invalidate_pages(&pages);
            assert_eq!(format!("{one:?}"), format!("{list:?}"), "{ppb} pages per block");
            for b in 0..8 {
                assert_eq!(one.valid_count(b), list.valid_count(b));
            }
            assert_eq!(list.page_state(3 * 5), PageState::Invalid);
            assert_eq!(list.page_state(2), PageState::Valid);
        }
    }

    #[test]
    #[should_panic(expected = "not valid")]
    fn a_repeated_page_panics_as_a_second_invalidate_does() {
        let mut n = Nand::new(geo(64));
        n.program_next(0, Cause::Host);
        n.program_next(0, Cause::Host);
        n.invalidate_pages(&[1, 0, 1]);
    }
}
