//! A block's validity bits as words, for merges in bulk (issue 22 target 5): a
//! block-mapped FTL's merge moves the valid pages of a range of offsets to the same
//! offsets of another block, so it can read the range's bits as words
//! ([`Nand::valid_words`], or read and invalidate them in one pass,
//! [`Nand::take_words`]) and program the destination from words
//! ([`Nand::program_words`]) instead of page by page. When a block's pages fit in one
//! bitmap word (pages per block a power of two ≤ 64, [`Nand::one_word_blocks`]), the
//! `*_bits` forms take and return that word directly ([`Nand::block_bits`],
//! [`Nand::take_bits`], [`Nand::program_bits`]): the same state and counters as the
//! word-list forms with `lo = 0` and one word.

use super::{Nand, VALID, WP};
use crate::{Cause, OpKind};

impl Nand {
    /// The validity bits of `block`'s pages at offsets `lo..hi` into `out` (cleared
    /// first): bit `i` of `out[w]` is offset `lo + 64 w + i`; `(hi − lo).div_ceil(64)`
    /// words, the bits beyond `hi` zero.
    pub fn valid_words(&self, block: u32, lo: u32, hi: u32, out: &mut Vec<u64>) {
        assert!(lo <= hi && hi <= self.ppb, "NAND: bits of pages {lo}..{hi} of block {block}");
        out.clear();
        let first = self.first_page(block);
        let (mut p, end) = (first + lo, first + hi);
        while p < end {
            let n = (end - p).min(64);
            let (w, s) = ((p >> 6) as usize, p & 63);
            let mut v = self.valid_bits[w] >> s;
            if s != 0 && s + n > 64 {
                v |= self.valid_bits[w + 1] << (64 - s);
            }
            if n < 64 {
                v &= (1u64 << n) - 1;
            }
            out.push(v);
            p += n;
        }
    }

    /// Whether `page` holds valid data (programmed and not invalidated).
    #[inline]
    pub fn is_valid(&self, page: u32) -> bool {
        self.bit(page)
    }

    /// Take the valid pages of `block` at offsets `lo..hi`: OR their bits into `words`
    /// (bit `i` of `words[w]` is offset `lo + 64 w + i`; `(hi − lo).div_ceil(64)` words,
    /// which may hold bits of pages moved from elsewhere, but none of these pages) and
    /// invalidate them: [`Self::valid_words`] then [`Self::invalidate_range`] in one
    /// pass. Returns the pages taken.
    pub fn take_words(&mut self, block: u32, lo: u32, hi: u32, words: &mut [u64]) -> u32 {
        assert!(lo <= hi && hi <= self.ppb, "NAND: bits of pages {lo}..{hi} of block {block}");
        assert_eq!(words.len(), (hi - lo).div_ceil(64) as usize, "NAND: words for pages {lo}..{hi}");
        let first = self.first_page(block);
        let (mut p, end) = (first + lo, first + hi);
        let mut taken = 0;
        for out in words.iter_mut() {
            let n = (end - p).min(64);
            let (w, s) = ((p >> 6) as usize, p & 63);
            let mask = if n == 64 { u64::MAX } else { (1u64 << n) - 1 };
            // The range's bits: `mask << s` in word w, the rest low in word w + 1.
            let mut v = (self.valid_bits[w] >> s) & mask;
            self.valid_bits[w] &= !(mask << s);
            if s != 0 && s + n > 64 {
                let hi_mask = mask >> (64 - s);
                v |= (self.valid_bits[w + 1] & hi_mask) << (64 - s);
                self.valid_bits[w + 1] &= !hi_mask;
            }
            assert!(
                v & *out == 0,
                "NAND: a page of block {block} at offsets {lo}..{hi} is valid and moved from elsewhere"
            );
            *out |= v;
            taken += v.count_ones();
            p += n;
        }
        self.blk[block as usize][VALID] -= taken;
        taken
    }

    /// Program the pages of `block` at the offsets whose bits are set in `words` (bit
    /// `i` of `words[w]` = offset `lo + 64 w + i`; the first at or beyond the write
    /// pointer) and leave the ones between them skipped: the state and counters of
    /// [`Self::program_offsets`] with those offsets. Returns the pages programmed.
    pub fn program_words(&mut self, block: u32, lo: u32, words: &[u64], cause: Cause) -> u32 {
        let Some(lw) = words.iter().rposition(|&v| v != 0) else { return 0 };
        let fw = words.iter().position(|&v| v != 0).expect("a set bit");
        let (first_off, last_off) =
            (lo + 64 * fw as u32 + words[fw].trailing_zeros(), lo + 64 * lw as u32 + 63 - words[lw].leading_zeros());
        let b = block as usize;
        assert!(
            first_off >= self.blk[b][WP] && last_off < self.ppb,
            "NAND: program of offsets {first_off}..={last_off} into block {block} at page {}",
            self.blk[b][WP]
        );
        let base = self.first_page(block) + lo;
        let mut n = 0;
        for (i, &v) in words[..=lw].iter().enumerate() {
            n += v.count_ones();
            let q = base + 64 * i as u32;
            let (w, s) = ((q >> 6) as usize, q & 63);
            self.valid_bits[w] |= v << s;
            if s != 0 && v >> (64 - s) != 0 {
                self.valid_bits[w + 1] |= v >> (64 - s);
            }
        }
        self.blk[b][WP] = last_off + 1;
        self.blk[b][VALID] += n;
        self.counters.add(OpKind::Program, cause, n as u64);
        n
    }

    /// Whether every block's pages lie in one bitmap word (pages per block a power of
    /// two, at most 64), so the `*_bits` forms apply.
    #[inline]
    pub fn one_word_blocks(&self) -> bool {
        self.ppb.is_power_of_two() && self.ppb <= 64
    }

    /// The bitmap word holding `block`'s bits and their shift in it.
    #[inline]
    fn block_word(&self, block: u32) -> (usize, u32) {
        // The callers choose these forms once per run ([`Self::one_word_blocks`]).
        debug_assert!(self.one_word_blocks(), "NAND: blocks of {} pages span bitmap words", self.ppb);
        let first = self.first_page(block);
        ((first >> 6) as usize, first & 63)
    }

    /// The validity bits of `block` (bit `i` = offset `i`): [`Self::valid_words`] of
    /// `0..pages per block` as one word ([`Self::one_word_blocks`] geometries only).
    #[inline]
    pub fn block_bits(&self, block: u32) -> u64 {
        let (w, s) = self.block_word(block);
        (self.valid_bits[w] >> s) & (u64::MAX >> (64 - self.ppb))
    }

    /// Take the valid pages of `block` at the offsets set in `mask` (bit `i` = offset
    /// `i`): return their bits and invalidate them, as [`Self::take_words`] with one
    /// word; `moved` (pages moved from elsewhere to these offsets) must share no bit
    /// with them ([`Self::one_word_blocks`] geometries only).
    #[inline]
    pub fn take_bits(&mut self, block: u32, mask: u64, moved: u64) -> u64 {
        self.take_bits_counted(block, mask, moved).0
    }

    /// [`Self::take_bits`], also returning how many pages it took. When they are all
    /// the block's valid pages (a merge's whole range) that is the valid count, the
    /// bitmap's popcount ([`Self::check_block`]), so no bits are counted.
    #[inline]
    pub fn take_bits_counted(&mut self, block: u32, mask: u64, moved: u64) -> (u64, u32) {
        let (w, s) = self.block_word(block);
        let all = (self.valid_bits[w] >> s) & (u64::MAX >> (64 - self.ppb));
        let v = all & mask;
        assert!(v & moved == 0, "NAND: a page of block {block} is valid and moved from elsewhere");
        self.valid_bits[w] &= !(v << s);
        let b = block as usize;
        let n = if v == all { self.blk[b][VALID] } else { v.count_ones() };
        self.blk[b][VALID] -= n;
        (v, n)
    }

    /// Program the pages of `block` at the offsets set in `bits` (bit `i` = offset `i`;
    /// the first at or beyond the write pointer), leaving those between them skipped:
    /// [`Self::program_words`] with `lo = 0` and one word ([`Self::one_word_blocks`]
    /// geometries only). Returns the pages programmed.
    #[inline]
    pub fn program_bits(&mut self, block: u32, bits: u64, cause: Cause) -> u32 {
        self.program_bits_counted(block, bits, bits.count_ones(), cause)
    }

    /// [`Self::program_bits`] with the number of set bits of `bits` given (`n`; the
    /// caller counted them as it gathered them).
    #[inline]
    pub fn program_bits_counted(&mut self, block: u32, bits: u64, n: u32, cause: Cause) -> u32 {
        debug_assert_eq!(n, bits.count_ones(), "NAND: {n} pages to program at bits {bits:#x}");
        if bits == 0 {
            return 0;
        }
        let (w, s) = self.block_word(block);
        let (first_off, last_off) = (bits.trailing_zeros(), 63 - bits.leading_zeros());
        let b = block as usize;
        assert!(
            first_off >= self.blk[b][WP] && last_off < self.ppb,
            "NAND: program of offsets {first_off}..={last_off} into block {block} at page {}",
            self.blk[b][WP]
        );
        self.valid_bits[w] |= bits << s;
        self.blk[b][WP] = last_off + 1;
        self.blk[b][VALID] += n;
        self.counters.add(OpKind::Program, cause, n as u64);
        n
    }
}
