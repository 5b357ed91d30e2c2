//! Mapping units shared by the block-mapped schemes (`block`, `bast`, `bast-padding`,
//! `fast`): a unit is `ftl.superblock_blocks` blocks at the same offset in consecutive
//! planes (seed 004, Choi & Shin: "4 physical blocks act as one"); its page at position
//! `k` lives in member block `k % S`, page `k / S`, so consecutive positions spread over
//! the planes. Logical unit `lbn` holds logical pages `lbn * U .. (lbn + 1) * U` (U = S ×
//! pages per block) at offsets `0..U`.
//!
//! The core keeps exact logical→physical and physical→logical page tables for reads,
//! strict checks and merges (the simulator's bookkeeping); the RAM a real controller
//! would need is [`Units::mapping_ram_bytes`] of each scheme. As in a real hybrid FTL
//! (Kim et al. 2002 §3: a block map for data units, page maps for log blocks only), a
//! page at its home offset of its logical unit's data unit needs no stored location:
//! its `l2p` entry may be [`HOME`] (its page is `page_at(data[lbn], k)`, [`Units::lookup`])
//! and the `p2l` entries of a data unit's pages are not kept (the owner of position `k`
//! of logical unit `lbn`'s data unit is `lbn * U + k`). A merge in bulk
//! ([`Units::copy_range`]) then writes no reverse-map entry and no map entry for pages
//! that were already home. `p2l` holds the logical page of every valid page outside
//! data units (log blocks; FAST reads it to find an RW log block's logical units).
//!
//! BAST's in-order log blocks (Kim et al. 2002 §3.2: a log block whose page `k` holds
//! offset `k` is switch- or partial-merged into the next data unit) are laid out by
//! offset too: while a logical unit has one ([`Units::olog`]), its pages there are
//! [`HOME`] as well, and [`Units::lookup`] resolves a `HOME` entry to the in-order log's
//! page at the offset when that page is valid (it holds that logical page: the log is
//! in order and at most one copy of a page is valid), else to the data unit's. So
//! padding copies and the log's own writes store no location, and when the log becomes
//! the data unit every entry is already home. A log that goes out of order first gets
//! its pages' locations stored ([`Units::end_in_order_log`]). Every NAND operation is
//! logged with its [`Cause`] like the page FTL's, so a timing engine schedules merge
//! copies as read→program migrations (copyback when both ends share a die).

use crate::ftl::{FlashOp, FtlStats, ReadOutcome, NO_PAGE};
use crate::moves::MergeMoves;
use crate::{FtlError, FtlSettings};
use flashlab_nand::{Cause, Geometry, Nand, OpKind};
use rand::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;
use std::collections::VecDeque;

mod bulk;
pub(crate) use bulk::Stored;
mod check;
mod divide;
mod prefetch;
mod prefill;
mod word;

/// "No unit" / "no log slot".
pub(crate) const NONE: u32 = u32::MAX;
/// An `l2p` entry: the page is at its home offset of its logical unit's data unit.
pub(crate) const HOME: u32 = u32::MAX - 1;

/// One logical unit's state. A merge or a host write reads and writes several of these
/// fields of the same logical unit; kept as separate arrays they were as many cold cache
/// lines a request (issue 22 target 5, "s12-hybrid": ≈ 34 L1 misses a BAST request).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C, align(16))]
pub(crate) struct Logical {
    /// Its data unit (NONE before its first write or after a whole trim).
    pub data: u32,
    /// Its in-order log unit, whose pages are [`HOME`] (NONE if none; see the top).
    pub olog: u32,
    /// Its valid pages, wherever they are.
    pub valid: u32,
    /// The scheme's log slot of it (BAST: its log block's slot; FAST: its SW log
    /// block's slot; NONE if none; unused by block mapping).
    pub slot: u32,
}

impl Logical {
    const EMPTY: Logical = Logical { data: NONE, olog: NONE, valid: 0, slot: NONE };
}

pub(crate) struct Units {
    pub s: FtlSettings,
    pub geo: Geometry,
    pub nand: Nand,
    /// Blocks per unit (S), pages per block, pages per unit (U), plane groups.
    pub sb: u32,
    pub ppb: u32,
    pub upp: u32,
    pub groups: u32,
    /// S, the plane groups and U as divisors (shifts where powers of two).
    by_sb: divide::Divisor,
    by_groups: divide::Divisor,
    by_upp: divide::Divisor,
    /// Logical page → physical page, [`HOME`] or `NO_PAGE` ([`Units::lookup`] resolves).
    l2p: Vec<u32>,
    /// Physical page → logical page for valid pages outside data units (see the top).
    pub p2l: Vec<u32>,
    tags: Vec<u32>,
    /// Logical unit → its state ([`Logical`]: data unit, in-order log, valid pages, the
    /// scheme's log slot), one record so a request touches one line per logical unit.
    pub lu: Vec<Logical>,
    /// Unit → next position to program (positions below it are programmed or skipped).
    pub fill: Vec<u32>,
    free: Vec<VecDeque<u32>>,
    next_group: u32,
    pub stats: FtlStats,
    ops: Vec<FlashOp>,
    record_ops: bool,
    /// Log one-word merges as [`MergeMoves`] (`crate::moves`) in `merge_moves`.
    compact_merges: bool,
    merge_moves: Vec<MergeMoves>,
    pub rng: Xoshiro256PlusPlus,
    /// Host pages written so far (the logical clock of LRU and FIFO log victims).
    pub clock: u64,
    next_tag: u32,
    strict_ops: u64,
    /// Scratch words of a bulk copy's destination offsets and its (offset, old page)
    /// list of pages from log blocks ([`Units::copy_range`]).
    words: Vec<u64>,
    logged: Vec<(u32, u32)>,
    /// Scratch list of a bulk copy's (position, map entry) with stored locations.
    found: Vec<(u32, u32)>,
    /// Position, old and new page of each copy of a recorded bulk copy, for the op log.
    moves: Vec<(u32, u32, u32)>,
    /// Merge copies in bulk (default) or page by page (the reference path).
    bulk_copies: bool,
    /// A unit is one block whose pages fit in one bitmap word: bulk copies take the
    /// one-word path (`units/word.rs`), chosen here once per run.
    one_word: bool,
}

impl Units {
    /// The caller (config) validated that S divides the planes and that the units hold
    /// the logical space plus the scheme's log blocks and one merge destination.
    pub fn new(geo: Geometry, s: FtlSettings) -> Result<Self, FtlError> {
        let sb = s.mapping.superblock_blocks.max(1);
        if !geo.planes().is_multiple_of(sb) {
            return Err(FtlError::Mapping(format!(
                "ftl.superblock_blocks = {sb} does not divide the {} planes",
                geo.planes()
            )));
        }
        let (groups, ppb, bpp) = (geo.planes() / sb, geo.pages_per_block, geo.blocks_per_plane);
        let upp = sb * ppb;
        let units = groups * bpp;
        let lbns = s.logical_pages.div_ceil(upp as u64) as u32;
        assert!(geo.pages() < HOME, "page numbers must stay below the HOME marker");
        if lbns >= units {
            return Err(FtlError::Mapping(format!(
                "the logical space needs {lbns} mapping units of the device's {units}: raise device.spare_factor"
            )));
        }
        // Free units of each group in block order; allocation rotates over the groups.
        let free = (0..groups).map(|g| (0..bpp).map(|b| b * groups + g).collect()).collect();
        let nand = Nand::new(geo);
        Ok(Units {
            one_word: sb == 1 && nand.one_word_blocks(),
            nand,
            sb,
            ppb,
            upp,
            groups,
            by_sb: divide::Divisor::new(sb),
            by_groups: divide::Divisor::new(groups),
            by_upp: divide::Divisor::new(upp),
            l2p: vec![NO_PAGE; s.logical_pages as usize],
            p2l: vec![NO_PAGE; geo.pages() as usize],
            tags: if s.track_content { vec![0; geo.pages() as usize] } else { Vec::new() },
            lu: vec![Logical::EMPTY; lbns as usize],
            fill: vec![0; units as usize],
            free,
            next_group: 0,
            stats: FtlStats::default(),
            ops: Vec::new(),
            record_ops: false,
            compact_merges: false,
            merge_moves: Vec::new(),
            rng: Xoshiro256PlusPlus::seed_from_u64(s.seed),
            clock: 0,
            next_tag: 0,
            strict_ops: 0,
            words: Vec::new(),
            logged: Vec::new(),
            found: Vec::new(),
            moves: Vec::new(),
            bulk_copies: true,
            geo,
            s,
        })
    }

    pub fn units(&self) -> u32 {
        self.fill.len() as u32
    }
    pub fn lbns(&self) -> u32 {
        self.lu.len() as u32
    }
    /// Logical unit and offset of a logical page.
    #[inline]
    pub fn split(&self, lpn: u64) -> (u32, u32) {
        let (lbn, k) = self.by_upp.div_rem(lpn);
        (lbn as u32, k as u32)
    }
    /// Logical pages in logical unit `lbn` (the last one may be short).
    #[inline]
    pub fn lbn_pages(&self, lbn: u32) -> u32 {
        (self.s.logical_pages - lbn as u64 * self.upp as u64).min(self.upp as u64) as u32
    }
    #[inline]
    pub fn group_of(&self, unit: u32) -> u32 {
        self.by_groups.div_rem32(unit).1
    }
    /// Member block `m` of `unit`.
    #[inline]
    pub fn block(&self, unit: u32, m: u32) -> u32 {
        let (b, g) = self.by_groups.div_rem32(unit);
        (g * self.sb + m) * self.geo.blocks_per_plane + b
    }
    /// NAND page of position `k` of `unit`.
    #[inline]
    pub fn page_at(&self, unit: u32, k: u32) -> u32 {
        let (j, m) = self.by_sb.div_rem32(k);
        self.block(unit, m) * self.ppb + j
    }
    /// Valid pages of a unit.
    pub fn unit_valid(&self, unit: u32) -> u32 {
        (0..self.sb).map(|m| self.nand.valid_count(self.block(unit, m))).sum()
    }
    /// Take a free unit, from group `hint` if it has one (merge destinations stay in the
    /// planes of their source so copies can use copyback), else the next group in turn.
    pub fn alloc(&mut self, hint: Option<u32>) -> Result<u32, FtlError> {
        if let Some(u) = hint.and_then(|g| self.free[g as usize].pop_front()) {
            return Ok(u);
        }
        for _ in 0..self.groups {
            let g = self.next_group;
            self.next_group = (g + 1) % self.groups;
            if let Some(u) = self.free[g as usize].pop_front() {
                return Ok(u);
            }
        }
        Err(FtlError::Mapping("no free mapping unit is left: raise device.spare_factor or lower ftl.log_blocks".into()))
    }

    /// Erase every programmed member block of `unit` (it holds no valid page) and free it.
    pub fn erase_unit(&mut self, unit: u32, cause: Cause) {
        // `block(unit, m)` with the division by the group count done once.
        let (i, g) = self.by_groups.div_rem32(unit);
        if self.sb == 1 {
            // One block (`block(unit, 0)`): no member loop.
            self.erase_block(g * self.geo.blocks_per_plane + i, cause);
        } else {
            for m in 0..self.sb {
                self.erase_block((g * self.sb + m) * self.geo.blocks_per_plane + i, cause);
            }
        }
        debug_assert_eq!(self.unit_valid(unit), 0);
        self.fill[unit as usize] = 0;
        self.free[g as usize].push_back(unit);
    }

    /// Erase `block` (a member of a unit being erased) if it is programmed.
    #[inline]
    fn erase_block(&mut self, block: u32, cause: Cause) {
        if self.nand.write_pointer(block) > 0 {
            self.nand.erase(block, cause);
            self.log(OpKind::Erase, cause, block * self.ppb);
        }
    }

    #[inline]
    fn log(&mut self, kind: OpKind, cause: Cause, page: u32) {
        if self.record_ops {
            let plane = self.plane_of(page);
            self.ops.push(FlashOp { kind, cause, plane, page });
        }
    }

    /// The plane of `page` (of any value: a caller may ask for a block it then never names).
    #[inline]
    fn plane_of(&self, page: u32) -> u32 {
        page / self.ppb / self.geo.blocks_per_plane
    }

    /// Program `lpn` at position `k` of `unit` (skipping unwritten positions before it).
    #[inline]
    fn program(&mut self, unit: u32, k: u32, lpn: u64, cause: Cause) -> u32 {
        let lbn = self.split(lpn).0 as usize;
        let page = self.place(unit, k, lpn, cause);
        self.set_placed(unit, lpn, lbn, page);
        self.lu[lbn].valid += 1;
        page
    }

    /// [`Self::program`]'s NAND program, op log, reverse-map entry and fill: all but
    /// the map entry and the logical unit's valid count.
    #[inline]
    fn place(&mut self, unit: u32, k: u32, lpn: u64, cause: Cause) -> u32 {
        debug_assert!(k >= self.fill[unit as usize] && k < self.upp);
        let (j, m) = self.by_sb.div_rem32(k);
        let block = self.block(unit, m);
        if self.nand.write_pointer(block) < j {
            self.nand.skip_to(block, j);
        }
        let page = self.nand.program_next(block, cause);
        debug_assert_eq!(page, self.page_at(unit, k));
        self.log(OpKind::Program, cause, page);
        self.p2l[page as usize] = lpn as u32;
        self.fill[unit as usize] = k + 1;
        page
    }

    /// The map entry of `lpn` (of logical unit `lbn`), just placed at `page` of `unit`.
    #[inline]
    fn set_placed(&mut self, unit: u32, lpn: u64, lbn: usize, page: u32) {
        // In place in the data unit or the in-order log: home (kept canonical so merges
        // find no stored entry).
        let l = &self.lu[lbn];
        self.l2p[lpn as usize] = if unit == l.data || unit == l.olog { HOME } else { page };
    }

    /// A host trim of `lpn`: counted and unmapped. Returns its logical unit when that
    /// unit is now wholly trimmed but still has a data unit, which the scheme reclaims
    /// without copies ([`Units::drop_data`], after its own log blocks of that unit).
    pub fn trim_page(&mut self, lpn: u64) -> Result<Option<u32>, FtlError> {
        self.check_range(lpn)?;
        self.stats.host_trim_pages += 1;
        self.unmap(lpn);
        let lbn = self.split(lpn).0;
        let whole = self.lu[lbn as usize].data != NONE && self.lu[lbn as usize].valid == 0;
        Ok(whole.then_some(lbn))
    }

    /// Erase the data unit of wholly trimmed logical unit `lbn` and forget it.
    pub fn drop_data(&mut self, lbn: u32) {
        self.erase_unit(self.lu[lbn as usize].data, Cause::Merge);
        self.lu[lbn as usize].data = NONE;
    }

    /// `lpn`, which lives at its home offset of its data unit, keeps no stored location.
    pub fn set_home(&mut self, lpn: u64) {
        debug_assert_eq!(self.lookup(lpn), {
            let (lbn, k) = self.split(lpn);
            self.page_at(self.lu[lbn as usize].data, k)
        });
        self.l2p[lpn as usize] = HOME;
    }

    /// Drop the mapping of `lpn`, invalidating its page.
    #[inline]
    pub fn unmap(&mut self, lpn: u64) {
        let old = self.lookup(lpn);
        if old != NO_PAGE {
            self.nand.invalidate(old);
            // A home page's reverse-map entry is not kept (see the top) and no one reads an
            // invalid page's (FAST's prefetch hint reads RW log pages', never home):
            // clearing it would only touch a cold line of `p2l`.
            if self.l2p[lpn as usize] != HOME {
                self.p2l[old as usize] = NO_PAGE;
            }
            self.l2p[lpn as usize] = NO_PAGE;
            let lbn = self.split(lpn).0 as usize;
            self.lu[lbn].valid -= 1;
        }
    }

    /// A host write of `lpn` to position `k` of `unit`.
    #[inline]
    pub fn host_program(&mut self, unit: u32, k: u32, lpn: u64) {
        // [`Self::unmap`] then [`Self::program`], with the logical unit found once, the
        // map entry written once and its valid count changed only if `lpn` was unmapped
        // (the unmap's −1 and the program's +1 cancel): the same state.
        let (lbn, o) = self.split(lpn);
        let e = self.l2p[lpn as usize];
        let old = self.resolve(e, lbn, o);
        if old != NO_PAGE {
            self.nand.invalidate(old);
            // See `unmap`: a home page's reverse-map entry is not kept.
            if e != HOME {
                self.p2l[old as usize] = NO_PAGE;
            }
        }
        self.clock += 1;
        self.stats.host_write_pages += 1;
        let page = self.place(unit, k, lpn, Cause::Host);
        self.set_placed(unit, lpn, lbn as usize, page);
        self.lu[lbn as usize].valid += (old == NO_PAGE) as u32;
        if self.s.track_content {
            self.next_tag = self.next_tag.wrapping_add(1);
            self.tags[page as usize] = self.next_tag;
        }
    }

    /// Move the newest copy of `lpn` (if any) to position `k` of `unit`: a read and a
    /// program of `cause`, logged back to back so a timing engine sees one migration.
    /// Returns whether a page was copied.
    #[inline]
    pub fn copy(&mut self, lpn: u64, unit: u32, k: u32, cause: Cause) -> bool {
        let old = self.lookup(lpn);
        if old == NO_PAGE {
            return false;
        }
        self.nand.read(old, cause);
        self.log(OpKind::Read, cause, old);
        self.unmap(lpn);
        let page = self.program(unit, k, lpn, cause);
        if self.s.track_content {
            self.tags[page as usize] = self.tags[old as usize];
        }
        true
    }

    /// Copy the newest copy of every page of `lbn` at offsets `from..` into `unit` at
    /// the same offsets; returns the pages copied (merge traffic). `stored`: where the
    /// range's stored map entries are ([`Units::copy_range`]).
    pub fn copy_rest(&mut self, lbn: u32, unit: u32, from: u32, stored: Stored) -> u64 {
        let n = self.copy_range(lbn, unit, (from, self.lbn_pages(lbn)), Cause::Merge, stored);
        self.stats.merge_copied_pages += n;
        n
    }

    pub fn read(&mut self, lpn: u64) -> Result<ReadOutcome, FtlError> {
        self.check_range(lpn)?;
        self.stats.host_read_pages += 1;
        let page = self.lookup(lpn);
        if page == NO_PAGE {
            self.stats.unmapped_reads += 1;
            return Ok(ReadOutcome::Unmapped);
        }
        self.nand.read(page, Cause::Host);
        self.log(OpKind::Read, Cause::Host, page);
        let tag = self.s.track_content.then(|| self.tags[page as usize]);
        Ok(ReadOutcome::Mapped { plane: page / self.ppb / self.geo.blocks_per_plane, page, tag })
    }

    /// The physical page of `lpn`, `NO_PAGE` if unmapped (resolves [`HOME`]: the
    /// in-order log's page at the offset if valid, else the data unit's; see the top).
    #[inline]
    pub fn lookup(&self, lpn: u64) -> u32 {
        let e = self.l2p[lpn as usize];
        if e != HOME {
            return e;
        }
        let (lbn, k) = self.split(lpn);
        self.resolve(e, lbn, k)
    }

    /// The physical page of map entry `e` of offset `k` of logical unit `lbn` (see
    /// [`Self::lookup`]).
    #[inline(always)]
    fn resolve(&self, e: u32, lbn: u32, k: u32) -> u32 {
        if e != HOME {
            return e;
        }
        let log = self.lu[lbn as usize].olog;
        // Positions at or beyond its fill are not programmed (a host write's own case).
        if log != NONE && k < self.fill[log as usize] {
            let page = self.page_at(log, k);
            if self.nand.is_valid(page) {
                return page;
            }
        }
        self.page_at(self.lu[lbn as usize].data, k)
    }

    /// `unit`, a fresh log block of `lbn`, is in order (BAST): its pages will be home.
    pub fn start_in_order_log(&mut self, lbn: u32, unit: u32) {
        debug_assert_eq!(self.fill[unit as usize], 0);
        self.lu[lbn as usize].olog = unit;
    }

    /// `lbn`'s in-order log (if any) is merged into its data unit or erased: forget it.
    pub fn forget_in_order_log(&mut self, lbn: u32) {
        self.lu[lbn as usize].olog = NONE;
    }

    /// `lbn`'s in-order log `unit` goes out of order: its valid pages (all home) get
    /// stored locations, as any log page has, and it stops resolving `HOME` entries.
    #[inline]
    pub fn end_in_order_log(&mut self, lbn: u32, unit: u32) {
        debug_assert_eq!(self.lu[lbn as usize].olog, unit);
        self.lu[lbn as usize].olog = NONE;
        if self.fill[unit as usize] != 0 {
            self.store_log_locations(lbn, unit);
        }
    }

    /// [`Self::end_in_order_log`] of a log with programmed pages (out of line: under
    /// random writes a log goes out of order at its first write, with no page yet).
    #[inline(never)]
    fn store_log_locations(&mut self, lbn: u32, unit: u32) {
        let base = lbn as u64 * self.upp as u64;
        let mut words = std::mem::take(&mut self.words);
        for m in 0..self.sb {
            let block = self.block(unit, m);
            self.nand.valid_words(block, 0, self.nand.write_pointer(block), &mut words);
            bulk::for_each_bit(&words, |j| {
                let (lpn, page) = (base + (j * self.sb + m) as u64, block * self.ppb + j);
                debug_assert_eq!(self.l2p[lpn as usize], HOME);
                self.l2p[lpn as usize] = page;
                self.p2l[page as usize] = lpn as u32;
            });
        }
        self.words = words;
    }

    #[inline]
    pub fn check_range(&self, lpn: u64) -> Result<(), FtlError> {
        if lpn >= self.s.logical_pages {
            return Err(FtlError::OutOfRange { lpn, capacity: self.s.logical_pages });
        }
        Ok(())
    }

    pub fn last_tag(&self) -> u32 {
        self.next_tag
    }
    pub fn set_record_ops(&mut self, on: bool) {
        self.record_ops = on;
    }
    pub fn take_ops(&mut self) -> std::vec::Drain<'_, FlashOp> {
        self.ops.drain(..)
    }
    pub fn set_merge_moves(&mut self, on: bool) {
        self.compact_merges = on;
    }
    /// The [`MergeMoves`] the op log's markers name, swapped into `into` (and this
    /// list emptied): take them with the ops.
    pub fn take_merge_moves(&mut self, into: &mut Vec<MergeMoves>) {
        std::mem::swap(&mut self.merge_moves, into);
        self.merge_moves.clear();
    }
    pub fn set_bulk_copies(&mut self, on: bool) {
        self.bulk_copies = on;
    }
    pub fn prefetch_map(&self, lpn: u64) {
        if let Some(e) = self.l2p.get(lpn as usize) {
            crate::ftl::prefetch(e);
        }
    }

    /// Bytes of the simulator's state for this scheme: the main tables (the in-order
    /// log table `olog`, 4 bytes a logical unit, is left out, so the figure stays the
    /// one the golden results record).
    pub fn memory_bytes(&self) -> usize {
        (self.l2p.len() + self.p2l.len() + self.tags.len()) * 4
            + (self.lu.len() * 2 + self.fill.len() * 2) * 4
            + self.nand.memory_bytes()
    }

    /// Free units (for checks: every unit is free, a data unit or a log).
    pub fn free_units(&self) -> usize {
        self.free.iter().map(|q| q.len()).sum()
    }
}
