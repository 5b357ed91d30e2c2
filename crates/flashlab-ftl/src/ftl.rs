//! The page-mapped FTL: mapping tables, allocation and the host operations.

use crate::index::ClosedIndex;
use crate::{FtlError, FtlSettings, StripeOrder};
use flashlab_nand::{Cause, Geometry, Nand, OpKind, Table};
use rand::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;
use serde::Serialize;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicU32, Ordering};

/// Sentinel for "no physical page" / "no logical page".
pub const NO_PAGE: u32 = u32::MAX;
pub(crate) const NO_BLOCK: u32 = u32::MAX;

/// Role of a block in the allocator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum Role {
    Free,
    HostOpen,
    GcOpen,
    Closed,
    Victim,
    /// Holds DFTL translation pages (never a data GC candidate; see dftl.rs).
    Translation,
}

/// One NAND operation the FTL issued, for a timing engine to schedule.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FlashOp {
    pub kind: OpKind,
    pub cause: Cause,
    pub plane: u32,
    pub page: u32,
}

/// Host-level counters of the FTL.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct FtlStats {
    pub host_write_pages: u64,
    pub host_read_pages: u64,
    pub host_trim_pages: u64,
    /// Host reads of never-written (or trimmed) pages: served without a NAND read.
    pub unmapped_reads: u64,
    pub gc_runs: u64,
    pub gc_copied_pages: u64,
    /// Static wear-levelling moves (blocks whose data was moved) and pages they copied.
    pub wl_moves: u64,
    pub wl_copied_pages: u64,
    /// Hybrid schemes' merges by kind, the pages they copied, and BAST-padding's copies.
    pub merges_switch: u64,
    pub merges_partial: u64,
    pub merges_full: u64,
    pub merge_copied_pages: u64,
    pub padding_pages: u64,
    /// DFTL: translation-page reads and writes, mapping-cache lookups and hits.
    pub map_reads: u64,
    pub map_writes: u64,
    pub map_cache_lookups: u64,
    pub map_cache_hits: u64,
}

impl FtlStats {
    pub fn since(&self, e: &FtlStats) -> FtlStats {
        FtlStats {
            host_write_pages: self.host_write_pages - e.host_write_pages,
            host_read_pages: self.host_read_pages - e.host_read_pages,
            host_trim_pages: self.host_trim_pages - e.host_trim_pages,
            unmapped_reads: self.unmapped_reads - e.unmapped_reads,
            gc_runs: self.gc_runs - e.gc_runs,
            gc_copied_pages: self.gc_copied_pages - e.gc_copied_pages,
            wl_moves: self.wl_moves - e.wl_moves,
            wl_copied_pages: self.wl_copied_pages - e.wl_copied_pages,
            merges_switch: self.merges_switch - e.merges_switch,
            merges_partial: self.merges_partial - e.merges_partial,
            merges_full: self.merges_full - e.merges_full,
            merge_copied_pages: self.merge_copied_pages - e.merge_copied_pages,
            padding_pages: self.padding_pages - e.padding_pages,
            map_reads: self.map_reads - e.map_reads,
            map_writes: self.map_writes - e.map_writes,
            map_cache_lookups: self.map_cache_lookups - e.map_cache_lookups,
            map_cache_hits: self.map_cache_hits - e.map_cache_hits,
        }
    }
}

/// What a host read found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReadOutcome {
    /// Never written or trimmed: served without touching NAND.
    Unmapped,
    /// Read from `page` on `plane`; `tag` is the content tag when content is tracked.
    Mapped { plane: u32, page: u32, tag: Option<u32> },
}

/// A page-mapped FTL. See the crate docs.
pub struct PageFtl {
    pub(crate) s: FtlSettings,
    pub(crate) geo: Geometry,
    pub(crate) nand: Nand,
    pub(crate) l2p: Table<u32>,
    /// The LPN programmed into each physical page, `NO_PAGE` for a free page. An
    /// invalidated page keeps its LPN until its block is erased (like the page's
    /// out-of-band area): only a valid page's entry is meaningful.
    pub(crate) p2l: Table<u32>,
    pub(crate) tags: Vec<u32>,
    pub(crate) role: Vec<Role>,
    pub(crate) close_time: Table<u64>,
    pub(crate) free: Vec<VecDeque<u32>>,
    /// Open (frontier) block per plane and stream: `plane * slots + stream`, host
    /// streams first, then the GC streams.
    pub(crate) open: Vec<u32>,
    pub(crate) slots: u32,
    pub(crate) placement: Option<crate::Placement>,
    /// With placement: each programmed page's temperature (at programming, then at
    /// invalidation) and each block's sum of them (seed 001's block temperature).
    pub(crate) page_temp: Vec<u8>,
    pub(crate) block_temp_sum: Vec<u32>,
    /// Per plane: host pages since the last DT-GC check, whether DT-GC
    /// asked for interruptible GC, erases since the last static wear-levelling check.
    pub(crate) consumed: Vec<u32>,
    pub(crate) bg_wanted: Vec<bool>,
    pub(crate) wl_erases: Vec<u32>,
    /// Per plane: the victim of the GC run under way (NO_BLOCK if none) and the next page offset to examine.
    pub(crate) gc_victim: Vec<u32>,
    pub(crate) gc_cursor: Vec<u32>,
    pub(crate) stripe: Vec<u32>,
    pub(crate) cursor: usize,
    pub(crate) index: ClosedIndex,
    pub(crate) rng: Xoshiro256PlusPlus,
    /// An external victim policy's error, until GC reports it.
    pub(crate) external_error: Option<String>,
    /// Host pages written so far: the logical clock of cost-benefit ages.
    pub(crate) clock: u64,
    next_tag: u32,
    pub(crate) stats: FtlStats,
    pub(crate) ops: Vec<FlashOp>,
    pub(crate) record_ops: bool,
    pub(crate) strict_ops: u64,
    /// When Some (DFTL), every logical page GC or wear levelling moved, in order, for the
    /// owner to drain (it keeps its own map of where pages are).
    pub(crate) moved: Option<Vec<u32>>,
    /// With the moved-page list (DFTL): its owner's bits per 64 logical pages (the CMT's
    /// membership and GC-dirty words, `cmt::Bits`), lent to this FTL only for the calls
    /// that may run data GC (`DftlFtl::with_bits_lent`) and empty otherwise. GC
    /// prefetches each moved page's pair with its mapping entry
    /// ([`Self::prefetch_moved_entries`]), so the owner's test of the moved pages after
    /// the run finds them cached. Read for hints only; never changed here.
    pub(crate) moved_bits: Vec<crate::cmt::Bits>,
    /// The old block the previous [`Self::prefetch_page`] call prefetched for (a hint
    /// only: the next call prefetches that block's greedy bucket neighbours). Atomic
    /// only so that the FTL stays `Sync` (Python's `Ssd` class needs it); a relaxed
    /// load/store is a plain move.
    prefetched_block: AtomicU32,
}

/// Ask the CPU to bring the cache line holding `x` in (no effect elsewhere).
#[inline(always)]
pub(crate) fn prefetch<T>(x: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: prefetching is a hint with no architectural effect; any address is allowed.
    unsafe {
        std::arch::x86_64::_mm_prefetch(x as *const T as *const i8, std::arch::x86_64::_MM_HINT_T0);
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = x;
}

/// [`prefetch`] of an address that need not point into anything (e.g. an index past a
/// table, computed without a bounds check): a prefetch never faults.
#[inline(always)]
pub(crate) fn prefetch_ptr<T>(p: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: prefetching is a hint with no architectural effect; any address is allowed.
    unsafe {
        std::arch::x86_64::_mm_prefetch(p as *const i8, std::arch::x86_64::_MM_HINT_T0);
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// Planes in the order consecutive allocations visit them.
pub(crate) fn stripe_sequence(geo: &Geometry, order: StripeOrder) -> Vec<u32> {
    let dims = |c: u8| match c {
        b'c' => geo.channels,
        b'w' => geo.chips_per_channel,
        b'd' => geo.dies_per_chip,
        _ => geo.planes_per_die,
    };
    (0..geo.planes())
        .map(|mut i| {
            let mut a = flashlab_nand::PlaneAddr { channel: 0, chip: 0, die: 0, plane: 0 };
            for &c in &order.0 {
                let v = i % dims(c);
                i /= dims(c);
                match c {
                    b'c' => a.channel = v,
                    b'w' => a.chip = v,
                    b'd' => a.die = v,
                    _ => a.plane = v,
                }
            }
            geo.plane_index(a)
        })
        .collect()
}

impl PageFtl {
    /// Build an FTL over an erased device. The caller validated the geometry and
    /// that the logical capacity leaves room for GC.
    pub fn new(geo: Geometry, s: FtlSettings) -> Self {
        let (planes, bpp) = (geo.planes(), geo.blocks_per_plane);
        let free = (0..planes).map(|p| (p * bpp..(p + 1) * bpp).collect()).collect();
        let slots = s.host_streams + if s.separate_gc_frontier { s.gc_streams } else { 0 };
        let placement = s.placement.as_ref().map(|spec| {
            let id =
                spec.build(s.seed ^ 0x706c_6163_656d_656e, s.logical_pages).expect("validated placement identifier");
            crate::Placement::new(id, s.host_streams, s.gc_streams)
        });
        let index = ClosedIndex::new(planes, bpp, geo.pages_per_block, s.victim.needs_buckets(), s.victim.needs_fifo());
        PageFtl {
            nand: Nand::new(geo),
            l2p: Table::new(NO_PAGE, s.logical_pages as usize),
            p2l: Table::new(NO_PAGE, geo.pages() as usize),
            tags: if s.track_content { vec![0; geo.pages() as usize] } else { Vec::new() },
            role: vec![Role::Free; geo.blocks() as usize],
            close_time: Table::new(0, geo.blocks() as usize),
            free,
            open: vec![NO_BLOCK; (planes * slots) as usize],
            slots,
            page_temp: if placement.is_some() { vec![0; geo.pages() as usize] } else { Vec::new() },
            block_temp_sum: if placement.is_some() { vec![0; geo.blocks() as usize] } else { Vec::new() },
            placement,
            consumed: vec![0; planes as usize],
            bg_wanted: vec![false; planes as usize],
            wl_erases: vec![0; planes as usize],
            gc_victim: vec![NO_BLOCK; planes as usize],
            gc_cursor: vec![0; planes as usize],
            stripe: stripe_sequence(&geo, s.stripe),
            cursor: 0,
            index,
            rng: Xoshiro256PlusPlus::seed_from_u64(s.seed),
            external_error: None,
            clock: 0,
            next_tag: 0,
            stats: FtlStats::default(),
            ops: Vec::new(),
            record_ops: false,
            strict_ops: 0,
            moved: None,
            moved_bits: Vec::new(),
            prefetched_block: AtomicU32::new(NO_BLOCK),
            geo,
            s,
        }
    }

    pub fn settings(&self) -> &FtlSettings {
        &self.s
    }
    pub fn nand(&self) -> &Nand {
        &self.nand
    }
    pub fn stats(&self) -> &FtlStats {
        &self.stats
    }
    pub fn logical_pages(&self) -> u64 {
        self.s.logical_pages
    }
    /// Log every NAND operation issued from now on (drain with [`Self::take_ops`]).
    pub fn set_record_ops(&mut self, on: bool) {
        self.record_ops = on;
    }
    /// The operations logged since the last call.
    pub fn take_ops(&mut self) -> std::vec::Drain<'_, FlashOp> {
        self.ops.drain(..)
    }
    /// Seed 001's block temperature: the mean temperature of its valid and invalid pages
    /// (free pages excluded); None without placement or for an erased block.
    pub fn block_temperature(&self, block: u32) -> Option<f64> {
        let programmed = self.nand.write_pointer(block);
        (!self.block_temp_sum.is_empty() && programmed > 0)
            .then(|| self.block_temp_sum[block as usize] as f64 / programmed as f64)
    }

    /// Whether `block` is a write frontier (open for host or GC writes).
    pub fn block_is_open(&self, block: u32) -> bool {
        matches!(self.role[block as usize], Role::HostOpen | Role::GcOpen)
    }

    /// Free blocks in a plane.
    pub fn free_blocks(&self, plane: u32) -> usize {
        self.free[plane as usize].len()
    }
    /// The plane the next striped allocation goes to.
    pub fn next_stripe_plane(&self) -> u32 {
        self.stripe[self.cursor]
    }
    /// Physical page of a logical page, if mapped.
    pub fn lookup(&self, lpn: u64) -> Option<u32> {
        self.l2p.get(lpn as usize).copied().filter(|&p| p != NO_PAGE)
    }
    /// Bytes of FTL and NAND state (mapping tables, per-block arrays, queues).
    pub fn memory_bytes(&self) -> usize {
        let blocks = self.role.len();
        self.l2p.len() * 4
            + self.p2l.len() * 4
            + self.tags.len() * 4
            + blocks * (1 + 8 + 4 + 12)
            + self.nand.memory_bytes()
    }

    #[inline]
    pub(crate) fn log(&mut self, kind: OpKind, cause: Cause, page: u32) {
        if self.record_ops {
            let plane = self.nand.plane_of_block(self.nand.block_of(page));
            self.ops.push(FlashOp { kind, cause, plane, page });
        }
    }

    #[inline]
    fn check_range(&self, lpn: u64) -> Result<(), FtlError> {
        if lpn >= self.s.logical_pages {
            return Err(FtlError::OutOfRange { lpn, capacity: self.s.logical_pages });
        }
        Ok(())
    }

    /// Hint that `lpn` will be accessed soon: prefetch its mapping entry.
    #[inline]
    pub fn prefetch_map(&self, lpn: u64) {
        if let Some(e) = self.l2p.get(lpn as usize) {
            prefetch(e);
        }
    }

    /// Hint that `lpn` will be overwritten soon: prefetch its physical page's state
    /// (call after [`Self::prefetch_map`] had time to bring the mapping entry in).
    #[inline]
    pub fn prefetch_page(&self, lpn: u64) {
        if let Some(&page) = self.l2p.get(lpn as usize) {
            if page != NO_PAGE {
                if self.placement.is_some() {
                    // Placement reads the old page's LPN for its temperature.
                    prefetch(&self.p2l[page as usize]);
                }
                self.nand.prefetch(page);
                // The old block's counters and greedy bucket links (random accesses
                // once the per-block arrays outgrow the caches, as in `scale-4tib`).
                let block = self.nand.block_of(page);
                self.nand.prefetch_block(block);
                self.index.prefetch(block);
                // One write later (its entry has arrived by now): the blocks it is
                // linked to, whose entries its bucket move rewrites.
                let previous = self.prefetched_block.load(Ordering::Relaxed);
                self.prefetched_block.store(block, Ordering::Relaxed);
                self.index.prefetch_neighbours(previous);
            }
        }
    }

    /// Write one logical page to the next plane of the stripe sequence.
    #[inline]
    pub fn write(&mut self, lpn: u64) -> Result<u32, FtlError> {
        let stream = match &mut self.placement {
            Some(p) if lpn < self.s.logical_pages => p.host_class(lpn).min(self.s.host_streams - 1),
            _ => 0,
        };
        self.write_stream(lpn, stream)
    }

    /// Write one logical page to host write stream `stream` (placement by temperature:
    /// each stream has its own frontier block per plane) on the next plane of the stripe.
    #[inline]
    pub fn write_stream(&mut self, lpn: u64, stream: u32) -> Result<u32, FtlError> {
        let plane = self.stripe[self.cursor];
        self.cursor += 1;
        if self.cursor == self.stripe.len() {
            self.cursor = 0;
        }
        self.write_to(lpn, plane, stream).map(|_| plane)
    }

    /// Write one logical page to a chosen plane and stream (dynamic allocation by a timing engine).
    pub fn write_to(&mut self, lpn: u64, plane: u32, stream: u32) -> Result<(), FtlError> {
        self.check_range(lpn)?;
        if stream >= self.s.host_streams {
            return Err(FtlError::Stream { stream, streams: self.s.host_streams });
        }
        self.unmap(lpn);
        self.clock += 1;
        self.stats.host_write_pages += 1;
        let page = self.append(plane, lpn as u32, stream, Cause::Host)?;
        if self.s.track_content {
            self.next_tag = self.next_tag.wrapping_add(1);
            self.tags[page as usize] = self.next_tag;
        }
        self.collect(plane)?;
        self.strict_check(lpn)
    }

    /// Read one logical page.
    pub fn read(&mut self, lpn: u64) -> Result<ReadOutcome, FtlError> {
        self.check_range(lpn)?;
        self.stats.host_read_pages += 1;
        let page = self.l2p[lpn as usize];
        if page == NO_PAGE {
            self.stats.unmapped_reads += 1;
            return Ok(ReadOutcome::Unmapped);
        }
        self.nand.read(page, Cause::Host);
        self.log(OpKind::Read, Cause::Host, page);
        let tag = self.s.track_content.then(|| self.tags[page as usize]);
        let plane = self.nand.plane_of_block(self.nand.block_of(page));
        Ok(ReadOutcome::Mapped { plane, page, tag })
    }

    /// Trim (discard) one logical page.
    pub fn trim(&mut self, lpn: u64) -> Result<(), FtlError> {
        self.check_range(lpn)?;
        self.stats.host_trim_pages += 1;
        self.unmap(lpn);
        self.strict_check(lpn)
    }

    /// The tag the last host write of `lpn` carried (content tracking only).
    pub fn last_tag(&self) -> u32 {
        self.next_tag
    }

    /// Drop the mapping of `lpn`, invalidating its physical page.
    #[inline]
    fn unmap(&mut self, lpn: u64) {
        let old = self.l2p[lpn as usize];
        if old != NO_PAGE {
            self.l2p[lpn as usize] = NO_PAGE;
            self.invalidate_page(old);
        }
    }

    #[inline]
    pub(crate) fn invalidate_page(&mut self, page: u32) {
        if let Some(p) = &self.placement {
            // An invalid page keeps its LPN's temperature at invalidation.
            let (t, old) = (p.temperature(self.p2l[page as usize] as u64), self.page_temp[page as usize]);
            let b = self.nand.block_of(page) as usize;
            self.block_temp_sum[b] = self.block_temp_sum[b] + t as u32 - old as u32;
            self.page_temp[page as usize] = t;
        }
        // `p2l[page]` keeps the LPN until the block is erased (`erase_free`), as a
        // page's out-of-band area does: clearing it here cost a random line per host
        // write at `scale-4tib` (s9-scale).
        self.nand.invalidate(page);
        let block = self.nand.block_of(page);
        if self.index.has_buckets() {
            self.rebucket(block);
        }
    }

    /// A closed block that lost a valid page moves down one greedy bucket. Whether it
    /// is closed is read from its index entry (a block is `Role::Closed` exactly while
    /// it is in the closed index: `close_block` files it, `start_gc` and wear
    /// levelling's `move_block` take it out), not from `role`: one random line fewer
    /// per host write once the per-block arrays outgrow the caches (`scale-4tib`).
    #[inline]
    fn rebucket(&mut self, block: u32) {
        let plane = self.nand.plane_of_block(block);
        self.index.on_invalidate(plane, block, self.nand.valid_count(block));
    }

    /// The frontier slot a page migrated by GC goes to: its temperature class among
    /// the GC streams, or among the host streams without a separate GC frontier.
    #[inline]
    pub(crate) fn gc_slot(&self, lpn: u32) -> u32 {
        let class = self.placement.as_ref().map_or(0, |p| p.gc_class(lpn as u64));
        if self.s.separate_gc_frontier {
            self.s.host_streams + class.min(self.s.gc_streams - 1)
        } else {
            class.min(self.s.host_streams - 1)
        }
    }

    /// Program `lpn` at frontier `stream` of `plane` (host streams first, then GC's);
    /// returns the physical page.
    #[inline(always)]
    pub(crate) fn append(&mut self, plane: u32, lpn: u32, stream: u32, cause: Cause) -> Result<u32, FtlError> {
        let slot = (plane * self.slots + stream) as usize;
        let mut block = self.open[slot];
        if block == NO_BLOCK || self.nand.write_pointer(block) == self.geo.pages_per_block {
            block = self.open_block(plane, slot, stream)?;
        }
        let page = self.nand.program_next(block, cause);
        if let Some(p) = &self.placement {
            let t = p.temperature(lpn as u64);
            self.page_temp[page as usize] = t;
            self.block_temp_sum[block as usize] += t as u32;
        }
        self.log(OpKind::Program, cause, page);
        self.p2l[page as usize] = lpn;
        self.l2p[lpn as usize] = page;
        Ok(page)
    }

    /// Close the full frontier in `slot` (if any) and open a free block in its place.
    #[cold]
    #[inline(never)]
    pub(crate) fn open_block(&mut self, plane: u32, slot: usize, stream: u32) -> Result<u32, FtlError> {
        let old = self.open[slot];
        if old != NO_BLOCK {
            self.close_block(plane, old);
            self.open[slot] = NO_BLOCK;
        }
        let block = self.take_free_block(plane, stream >= self.s.host_streams).ok_or(FtlError::NoSpace { plane })?;
        debug_assert_eq!(self.nand.write_pointer(block), 0);
        self.role[block as usize] = if stream >= self.s.host_streams { Role::GcOpen } else { Role::HostOpen };
        self.open[slot] = block;
        Ok(block)
    }

    fn close_block(&mut self, plane: u32, block: u32) {
        self.role[block as usize] = Role::Closed;
        self.close_time[block as usize] = self.clock;
        self.index.insert(plane, block, self.nand.valid_count(block));
    }
}
