//! The NAND array: per-block write pointers, valid counts and erase counts, and a
//! per-page validity bitmap. A page is *free* at or beyond its block's write
//! pointer, *valid* when its bit is set, and *invalid* otherwise.

use crate::{Cause, Geometry, OpCounters, OpKind, Table};

mod words;

/// The fields of a block's `blk` record.
const WP: usize = 0;
const VALID: usize = 1;

/// State of one physical page.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PageState {
    Free,
    Valid,
    Invalid,
}

/// Programming state of one block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BlockState {
    /// Erased, no page programmed.
    Free,
    /// Some but not all pages programmed.
    Open,
    /// Every page programmed.
    Full,
}

/// A walk over the valid pages of one block in ascending order ([`Nand::valid_cursor`],
/// [`Nand::next_valid_at`]): the current bitmap word is kept, so each step is a
/// bit-scan instead of [`Nand::next_valid`]'s recomputation from the block's start.
/// The block's own validity bits must not change during the walk (GC migrates a
/// victim's pages and invalidates them all at once afterwards).
#[derive(Clone, Copy, Debug)]
pub struct ValidCursor {
    /// The unvisited valid bits of the bitmap word that starts at page `base`.
    word: u64,
    base: u32,
    /// One past the block's last programmed page.
    end: u32,
}

/// A NAND device's state. See the crate docs for addressing.
#[derive(Clone, Debug)]
pub struct Nand {
    geo: Geometry,
    ppb: u32,
    /// log2(pages per block) when it is a power of two, else u32::MAX (divide).
    ppb_shift: u32,
    /// log2(blocks per plane) when it is a power of two, else u32::MAX.
    bpp_shift: u32,
    /// Per block, its write pointer and valid count side by side (`[WP]`, `[VALID]`):
    /// every program, invalidation and erase touches both, so one cache line holds
    /// what an operation on the block reads and writes (issue 22 target 5: a merge
    /// touches three or four cold blocks).
    blk: Table<[u32; 2]>,
    erase_count: Table<u32>,
    valid_bits: Table<u64>,
    counters: OpCounters,
}

impl Nand {
    /// An erased device. The geometry must have been validated.
    pub fn new(geo: Geometry) -> Self {
        let blocks = geo.blocks() as usize;
        let pages = geo.pages() as usize;
        Nand {
            geo,
            ppb: geo.pages_per_block,
            bpp_shift: if geo.blocks_per_plane.is_power_of_two() {
                geo.blocks_per_plane.trailing_zeros()
            } else {
                u32::MAX
            },
            ppb_shift: if geo.pages_per_block.is_power_of_two() {
                geo.pages_per_block.trailing_zeros()
            } else {
                u32::MAX
            },
            blk: Table::new([0, 0], blocks),
            erase_count: Table::new(0, blocks),
            valid_bits: Table::new(0, pages.div_ceil(64)),
            counters: OpCounters::default(),
        }
    }

    pub fn geometry(&self) -> &Geometry {
        &self.geo
    }
    pub fn counters(&self) -> &OpCounters {
        &self.counters
    }
    #[inline]
    pub fn block_of(&self, page: u32) -> u32 {
        if self.ppb_shift != u32::MAX {
            page >> self.ppb_shift
        } else {
            page / self.ppb
        }
    }
    /// Plane index of a block (a shift when blocks per plane is a power of two).
    #[inline]
    pub fn plane_of_block(&self, block: u32) -> u32 {
        if self.bpp_shift != u32::MAX {
            block >> self.bpp_shift
        } else {
            block / self.geo.blocks_per_plane
        }
    }
    #[inline]
    pub fn first_page(&self, block: u32) -> u32 {
        block * self.ppb
    }
    #[inline]
    pub fn valid_count(&self, block: u32) -> u32 {
        self.blk[block as usize][VALID]
    }
    #[inline]
    pub fn write_pointer(&self, block: u32) -> u32 {
        self.blk[block as usize][WP]
    }
    #[inline]
    pub fn erase_count(&self, block: u32) -> u32 {
        self.erase_count[block as usize]
    }
    pub fn erase_counts(&self) -> &[u32] {
        &self.erase_count
    }
    #[inline]
    fn bit(&self, page: u32) -> bool {
        self.valid_bits[(page >> 6) as usize] >> (page & 63) & 1 == 1
    }

    /// Hint that `page` will be invalidated soon: prefetch its bitmap word.
    #[inline]
    pub fn prefetch(&self, page: u32) {
        if let Some(w) = self.valid_bits.get((page >> 6) as usize) {
            prefetch_line(w);
        }
    }

    /// Hint that a page of `block` will be invalidated soon: prefetch its valid count.
    #[inline]
    pub fn prefetch_block(&self, block: u32) {
        if let Some(v) = self.blk.get(block as usize) {
            prefetch_line(v);
        }
    }

    /// Hint that `block` will be read or changed soon as a whole (a merge's source or
    /// destination): prefetch its bitmap word (the first, for blocks of several words)
    /// and its write pointer and valid count.
    #[inline]
    pub fn prefetch_block_lines(&self, block: u32) {
        let first = block as usize * self.ppb as usize;
        if let (Some(w), Some(r)) = (self.valid_bits.get(first >> 6), self.blk.get(block as usize)) {
            prefetch_line(w);
            prefetch_line(r);
        }
    }

    /// State of one page.
    pub fn page_state(&self, page: u32) -> PageState {
        let b = self.block_of(page);
        if page - self.first_page(b) >= self.blk[b as usize][WP] {
            PageState::Free
        } else if self.bit(page) {
            PageState::Valid
        } else {
            PageState::Invalid
        }
    }

    pub fn block_state(&self, block: u32) -> BlockState {
        match self.blk[block as usize][WP] {
            0 => BlockState::Free,
            w if w == self.ppb => BlockState::Full,
            _ => BlockState::Open,
        }
    }

    /// Program the next page of `block`; returns its page id. Panics if the block is full.
    #[inline]
    pub fn program_next(&mut self, block: u32, cause: Cause) -> u32 {
        let b = block as usize;
        let wp = self.blk[b][WP];
        assert!(wp < self.ppb, "NAND: program of full block {block}");
        let page = block * self.ppb + wp;
        self.blk[b][WP] = wp + 1;
        self.blk[b][VALID] += 1;
        self.valid_bits[(page >> 6) as usize] |= 1u64 << (page & 63);
        self.counters.add(OpKind::Program, cause, 1);
        page
    }

    /// Program the first `n` pages of the erased `block` at once: the state and counters
    /// of `n` calls of [`Self::program_next`] (a bulk sequential prefill).
    pub fn program_run(&mut self, block: u32, n: u32, cause: Cause) {
        assert!(self.blk[block as usize][WP] == 0, "NAND: bulk program of block {block}, which is not erased");
        self.program_span(block, n, cause);
    }

    /// Program the next `n` pages of `block` at once: the state and counters of `n`
    /// calls of [`Self::program_next`] (GC's migration runs). Panics if fewer than `n`
    /// pages are free.
    pub fn program_span(&mut self, block: u32, n: u32, cause: Cause) {
        let b = block as usize;
        let wp = self.blk[b][WP];
        assert!(n <= self.ppb - wp, "NAND: program of {n} pages into block {block} at page {wp}");
        self.blk[b][WP] = wp + n;
        self.blk[b][VALID] += n;
        let (mut page, end) = (block * self.ppb + wp, block * self.ppb + wp + n);
        while page < end {
            let (lo, run) = (page & 63, (end - page).min(64 - (page & 63)));
            let ones = if run == 64 { u64::MAX } else { ((1u64 << run) - 1) << lo };
            self.valid_bits[(page >> 6) as usize] |= ones;
            page += run;
        }
        self.counters.add(OpKind::Program, cause, n as u64);
    }

    /// Program the pages of `block` at offsets `offs` (strictly ascending, the first at
    /// or beyond the write pointer) and leave the ones between them skipped: the state
    /// and counters of [`Self::skip_to`] + [`Self::program_next`] per offset, with the
    /// write pointer, valid count and counters updated once (merge copies in bulk).
    pub fn program_offsets(&mut self, block: u32, offs: &[u32], cause: Cause) {
        let (Some(&lo), Some(&hi)) = (offs.first(), offs.last()) else { return };
        let b = block as usize;
        assert!(
            lo >= self.blk[b][WP] && hi < self.ppb,
            "NAND: program of offsets {lo}..={hi} into block {block} at page {}",
            self.blk[b][WP]
        );
        let first = block * self.ppb;
        let mut prev = None;
        for &o in offs {
            assert!(prev < Some(o), "NAND: program offsets of block {block} not ascending at {o}");
            prev = Some(o);
            let page = first + o;
            self.valid_bits[(page >> 6) as usize] |= 1u64 << (page & 63);
        }
        self.blk[b][WP] = hi + 1;
        self.blk[b][VALID] += offs.len() as u32;
        self.counters.add(OpKind::Program, cause, offs.len() as u64);
    }

    /// Program `page`, which must be the next free page of its block.
    #[inline]
    pub fn program(&mut self, page: u32, cause: Cause) {
        let b = self.block_of(page) as usize;
        let off = page - b as u32 * self.ppb;
        assert!(
            off == self.blk[b][WP],
            "NAND: out-of-order program of block {b} page {off} (next free page is {})",
            self.blk[b][WP]
        );
        self.blk[b][WP] = off + 1;
        self.blk[b][VALID] += 1;
        self.valid_bits[(page >> 6) as usize] |= 1u64 << (page & 63);
        self.counters.add(OpKind::Program, cause, 1);
    }

    /// Leave the pages of `block` from its write pointer up to offset `to` erased and
    /// unusable until the next erase (NAND programs a block's pages in ascending order:
    /// a block-mapped FTL that writes page offset `to` first skips the ones before it).
    pub fn skip_to(&mut self, block: u32, to: u32) {
        let b = block as usize;
        assert!(to >= self.blk[b][WP] && to <= self.ppb, "NAND: skip of block {block} back to page {to}");
        self.blk[b][WP] = to;
    }

    /// Mark a valid page invalid (its logical page was overwritten, trimmed or moved).
    #[inline]
    pub fn invalidate(&mut self, page: u32) {
        assert!(self.bit(page), "NAND: invalidate of page {page}, which is not valid");
        self.valid_bits[(page >> 6) as usize] &= !(1u64 << (page & 63));
        let b = self.block_of(page) as usize;
        self.blk[b][VALID] -= 1;
    }

    /// Mark the valid pages of `block` at offsets `lo..hi` invalid at once; returns how
    /// many there were (the state of [`Self::invalidate`] on each of them).
    pub fn invalidate_range(&mut self, block: u32, lo: u32, hi: u32) -> u32 {
        assert!(lo <= hi && hi <= self.ppb, "NAND: invalidate of pages {lo}..{hi} of block {block}");
        let first = self.first_page(block);
        let (mut p, end) = (first + lo, first + hi);
        let mut n = 0;
        while p < end {
            let bits = (end - p).min(64 - (p & 63));
            let mask = if bits == 64 { u64::MAX } else { ((1u64 << bits) - 1) << (p & 63) };
            let w = &mut self.valid_bits[(p >> 6) as usize];
            n += (*w & mask).count_ones();
            *w &= !mask;
            p += bits;
        }
        self.blk[block as usize][VALID] -= n;
        n
    }

    /// Mark every valid page of `block` invalid at once (its data was moved elsewhere).
    pub fn invalidate_block(&mut self, block: u32) {
        let first = self.first_page(block);
        let end = first + self.blk[block as usize][WP];
        let mut p = first;
        while p < end {
            let bits = (end - p).min(64 - (p & 63));
            let mask = if bits == 64 { u64::MAX } else { ((1u64 << bits) - 1) << (p & 63) };
            self.valid_bits[(p >> 6) as usize] &= !mask;
            p += bits;
        }
        self.blk[block as usize][VALID] = 0;
    }

    /// Read a page (reads of free or invalid pages are allowed and counted; ask
    /// [`Nand::page_state`] for what the page holds).
    #[inline]
    pub fn read(&mut self, page: u32, cause: Cause) {
        debug_assert!(page < self.geo.pages());
        self.counters.add(OpKind::Read, cause, 1);
    }

    /// Erase a whole block. Panics if it still holds valid pages (data would be lost).
    pub fn erase(&mut self, block: u32, cause: Cause) {
        let b = block as usize;
        assert!(self.blk[b][VALID] == 0, "NAND: erase of block {block} with {} valid pages", self.blk[b][VALID]);
        let first = self.first_page(block);
        for p in first..first + self.blk[b][WP] {
            debug_assert!(!self.bit(p));
        }
        self.blk[b][WP] = 0;
        self.erase_count[b] += 1;
        self.counters.add(OpKind::Erase, cause, 1);
    }

    /// The first valid page of `block` at or after offset `from`, as a page id.
    #[inline]
    pub fn next_valid(&self, block: u32, from: u32) -> Option<u32> {
        let first = self.first_page(block);
        let (mut p, end) = (first + from, first + self.blk[block as usize][WP]);
        while p < end {
            let word = self.valid_bits[(p >> 6) as usize] >> (p & 63);
            if word != 0 {
                let q = p + word.trailing_zeros();
                return (q < end).then_some(q);
            }
            p = (p | 63) + 1;
        }
        None
    }

    /// Start a walk over the valid pages of `block` at or after offset `from`.
    #[inline]
    pub fn valid_cursor(&self, block: u32, from: u32) -> ValidCursor {
        let first = self.first_page(block);
        let (p, end) = (first + from, first + self.blk[block as usize][WP]);
        let word = if p < end { self.valid_bits[(p >> 6) as usize] & (u64::MAX << (p & 63)) } else { 0 };
        ValidCursor { word, base: p & !63, end }
    }

    /// The next valid page of a [`ValidCursor`]'s walk (what [`Self::next_valid`] from
    /// one past the previous page gives).
    #[inline(always)]
    pub fn next_valid_at(&self, c: &mut ValidCursor) -> Option<u32> {
        loop {
            if c.word != 0 {
                let q = c.base + c.word.trailing_zeros();
                c.word &= c.word - 1;
                return (q < c.end).then_some(q);
            }
            c.base += 64;
            if c.base >= c.end {
                return None;
            }
            c.word = self.valid_bits[(c.base >> 6) as usize];
        }
    }

    /// Call `f` on each page the rest of walk `c` visits, in order (what
    /// [`Self::next_valid_at`] gives until `None`): one inner loop per bitmap word, its
    /// bits past the write pointer masked off once, so a page costs a count of trailing
    /// zeros and a clear of the lowest bit (a hint loop's worth of work: s16-dftl).
    #[inline(always)]
    pub fn for_each_valid_at(&self, c: ValidCursor, mut f: impl FnMut(u32)) {
        let ValidCursor { mut word, mut base, end } = c;
        loop {
            // Pages `base..end` of this word (none when a walk starts past the end).
            let live = end.saturating_sub(base);
            if live < 64 {
                word &= (1u64 << live) - 1;
            }
            while word != 0 {
                f(base + word.trailing_zeros());
                word &= word - 1;
            }
            base += 64;
            if base >= end {
                return;
            }
            word = self.valid_bits[(base >> 6) as usize];
        }
    }

    /// Count an operation that does not change page state (e.g. a mapping-table access).
    pub fn count(&mut self, kind: OpKind, cause: Cause, n: u64) {
        self.counters.add(kind, cause, n);
    }

    /// Recount one block: valid count equals the bitmap, no bit beyond the write
    /// pointer, free + valid + invalid = pages per block.
    pub fn check_block(&self, block: u32) -> Result<(), String> {
        let b = block as usize;
        let (wp, first) = (self.blk[b][WP], self.first_page(block));
        if wp > self.ppb {
            return Err(format!("block {block}: write pointer {wp} beyond {} pages", self.ppb));
        }
        let valid = (first..first + wp).filter(|&p| self.bit(p)).count() as u32;
        if valid != self.blk[b][VALID] {
            return Err(format!("block {block}: valid count {} but {valid} valid bits", self.blk[b][VALID]));
        }
        if let Some(p) = (first + wp..first + self.ppb).find(|&p| self.bit(p)) {
            return Err(format!("block {block}: free page {} marked valid", p - first));
        }
        let free = self.ppb - wp;
        let invalid = wp - valid;
        debug_assert_eq!(free + valid + invalid, self.ppb);
        Ok(())
    }

    /// Check every block.
    pub fn check_all(&self) -> Result<(), String> {
        (0..self.geo.blocks()).try_for_each(|b| self.check_block(b))
    }

    /// Bytes of state per physical page (for memory accounting).
    pub fn memory_bytes(&self) -> usize {
        self.blk.len() * 12 + self.valid_bits.len() * 8
    }
}

/// Ask the CPU to bring the cache line holding `x` in (no effect elsewhere).
#[inline(always)]
fn prefetch_line<T>(x: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: prefetching is a hint with no architectural effect; `x` is a valid reference.
    unsafe {
        std::arch::x86_64::_mm_prefetch(x as *const T as *const i8, std::arch::x86_64::_MM_HINT_T0)
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = x;
}
