//! DFTL (Gupta, Kim & Urgaonkar, ASPLOS 2009): page mapping whose map lives on flash in
//! translation pages, `page_bytes / ftl.map_entry_bytes` entries each, with a cached
//! mapping table ([`Cmt`], `ftl.map_cache_entries` entries) and a global translation
//! directory (GTD: translation page → its physical page) in RAM.
//!
//! Data blocks are a wrapped [`PageFtl`]: its allocation, GC victim, trigger, placement
//! and wear-levelling policies apply unchanged. Translation pages live in translation
//! blocks taken on demand from the same per-plane free pools (the plane with the fewest
//! translation blocks, so each plane keeps room for its striped share of the data; data GC
//! first frees one more than the plane's reserve if needed) and returned to them when erased. A translation block has role `Translation`: never in
//! the data GC's candidate index, and the translation GC only looks at its own blocks.
//!
//! Rules (paper §3; `ftl.dftl_variant` selects the reference implementation's variant,
//! docs/mapping.md "DFTL" has the table):
//! - A lookup that misses the CMT loads the entry: first evict (below), then read its
//!   translation page (one NAND read, `Cause::Mapping`) unless the GTD says that page was
//!   never written (every entry unmapped). `wiscsim`: the whole page's entries are loaded.
//! - Evicting a dirty entry rewrites its translation page: read the valid copy (not in
//!   `flashsim-cpp`), program the new copy at the translation frontier, invalidate the
//!   old one, point the GTD at the new one. The paper's lazy batch update also cleans every
//!   other dirty cached entry of that page (not in `flashsim-c`).
//! - Data GC (§3.3): a moved page's entry is updated in the CMT when cached (made dirty);
//!   otherwise its translation page is rewritten, once per page for all of a batch's
//!   moved entries that share it.
//! - Translation GC: when a new translation block brings their number above
//!   2·⌈translation pages / pages per block⌉ + 1 (at most half of their pages valid), the
//!   translation block with the fewest valid pages (greedy) is copied into the new block
//!   and erased (copies and erase are map traffic, `Cause::Mapping`). With that bound the
//!   victim has fewer valid pages than a block holds, so the copies fit.

mod pool;
mod prefill;

use crate::cmt::{Cmt, PageOf};
use crate::ftl::{Role, NO_BLOCK};
use crate::{DftlVariant, FlashOp, FtlError, FtlSettings, FtlStats, GcStep, Mapping, PageFtl, ReadOutcome, NO_PAGE};
use flashlab_nand::{Cause, Geometry, Nand, OpKind, PageState};

/// The DFTL mapping scheme. See the module docs.
pub struct DftlFtl {
    pub(crate) d: PageFtl,
    variant: DftlVariant,
    /// Map entries per translation page.
    epp: u64,
    page_of: PageOf,
    /// GTD: per translation page, its valid physical copy (NO_PAGE: never written).
    gtd: Vec<u32>,
    /// Per logical page: the entry its translation page's valid copy holds. Kept in
    /// strict mode only (for the checks; nothing else depends on it), else empty.
    flash_map: Vec<u32>,
    cmt: Cmt,
    /// Translation frontier block and every translation block (frontier included).
    t_open: u32,
    t_blocks: Vec<u32>,
    t_limit: usize,
    /// Translation blocks per plane.
    t_count: Vec<u32>,
    moved: Vec<u32>,
    /// Translation pages the moved pages of one batch touch, in order of first touch (a
    /// scratch buffer: [`Cmt::split_moved`] says how many), and per translation page the
    /// batch that last touched it.
    touched: Vec<u32>,
    /// Moved pages whose entry is cached (a scratch buffer like `touched`).
    cached: Vec<u32>,
    stamp: Vec<u32>,
    epoch: u32,
    strict_ops: u64,
    /// Host writes go through `PageFtl::write_plain` (the same state; checked when made
    /// and when the op log is switched).
    plain: bool,
}

impl DftlFtl {
    /// Build DFTL over an erased device; errors when the spare cannot hold the
    /// translation blocks beside the data GC's reserve.
    pub fn new(geo: Geometry, s: FtlSettings) -> Result<Self, FtlError> {
        let m = &s.mapping;
        let epp = (geo.page_bytes / m.map_entry_bytes.max(1)).max(1) as u64;
        let tpages = s.logical_pages.div_ceil(epp);
        let ppb = geo.pages_per_block as u64;
        let t_limit = 2 * tpages.div_ceil(ppb) as usize + 1;
        let planes = geo.planes() as u64;
        // Per plane: its share of the data, GC's reserve and frontiers, its share of the
        // translation blocks (spread evenly: see `pool_block`).
        let data = s.logical_pages.div_ceil(planes * ppb);
        let per_plane = s.free_blocks_min as u64 + s.host_streams as u64 + s.gc_streams as u64 + 1;
        let need = data + per_plane + (t_limit as u64 + 1).div_ceil(planes);
        if need > geo.blocks_per_plane as u64 {
            return Err(FtlError::Mapping(format!(
                "ftl.mapping = \"dftl\": {} translation pages need up to {} translation blocks, which the spare \
                 blocks cannot hold beside GC's reserve ({} blocks per plane needed, {} exist); raise \
                 device.spare_factor or lower ftl.map_entry_bytes",
                tpages,
                t_limit + 1,
                need,
                geo.blocks_per_plane
            )));
        }
        let capacity = m.map_cache_entries.clamp(1, s.logical_pages.max(1)) as u32;
        let segmented = matches!(m.dftl_variant, DftlVariant::Paper | DftlVariant::FlashsimC);
        let cmt = Cmt::new(s.logical_pages, capacity, epp as u32, segmented);
        let variant = m.dftl_variant;
        let (logical, strict) = (s.logical_pages as usize, s.strict);
        let mut d = PageFtl::new(geo, s);
        d.moved = Some(Vec::new());
        let plain = d.plain_writes_apply_with_moved_list();
        // Free blocks and plane numbers below 2^24 (NARROW_FREE bits), translation
        // blocks per plane (at most `t_limit + 1`) below 2^16.
        Ok(DftlFtl {
            d,
            variant,
            epp,
            page_of: PageOf::new(epp),
            gtd: vec![NO_PAGE; tpages as usize],
            flash_map: if strict { vec![NO_PAGE; logical] } else { Vec::new() },
            cmt,
            t_open: NO_BLOCK,
            t_blocks: Vec::new(),
            t_limit,
            t_count: vec![0; planes as usize],
            moved: Vec::new(),
            touched: Vec::new(),
            cached: Vec::new(),
            stamp: vec![0; tpages as usize],
            epoch: 0,
            strict_ops: 0,
            plain,
        })
    }

    pub fn settings(&self) -> &FtlSettings {
        &self.d.s
    }
    /// Map entries per translation page.
    pub fn entries_per_translation_page(&self) -> u64 {
        self.epp
    }
    /// Entries now in the cached mapping table.
    pub fn cached_entries(&self) -> usize {
        self.cmt.len()
    }
    /// Blocks now holding translation pages.
    pub fn translation_blocks(&self) -> usize {
        self.t_blocks.len()
    }

    #[inline]
    fn check_range(&self, lpn: u64) -> Result<(), FtlError> {
        let capacity = self.d.s.logical_pages;
        if lpn >= capacity {
            return Err(FtlError::OutOfRange { lpn, capacity });
        }
        Ok(())
    }

    /// Find `lpn`'s entry in the CMT, loading it (clean) on a miss.
    #[inline]
    fn lookup_entry(&mut self, lpn: u64) -> Result<(), FtlError> {
        self.d.stats.map_cache_lookups += 1;
        if self.cmt.contains(lpn) {
            self.d.stats.map_cache_hits += 1;
            self.cmt.touch(lpn);
            return Ok(());
        }
        self.load(lpn, false)
    }

    /// Load missing `lpn`'s entry into the CMT, clean or already `dirty` (a write's).
    #[cold]
    fn load(&mut self, lpn: u64, dirty: bool) -> Result<(), FtlError> {
        let t = self.page_of.of(lpn);
        if self.variant == DftlVariant::Wiscsim {
            let end = ((t + 1) * self.epp).min(self.d.s.logical_pages);
            for other in t * self.epp..end {
                if other == lpn || self.cmt.contains(other) {
                    continue;
                }
                self.cache(other, false)?;
            }
        }
        self.cache(lpn, dirty)?;
        let page = self.gtd[t as usize];
        if page != NO_PAGE {
            self.map_read(page);
        }
        Ok(())
    }

    #[inline]
    fn map_read(&mut self, page: u32) {
        self.d.nand.read(page, Cause::Mapping);
        self.d.log(OpKind::Read, Cause::Mapping, page);
        self.d.stats.map_reads += 1;
    }

    /// Insert missing `lpn` into the CMT, evicting first when it is full (a dirty victim
    /// is written back first). The victim's slot goes straight to the new entry: the
    /// state of an eviction to the free stack and an insert from it (see
    /// [`Cmt::take_victim`], [`Cmt::replace`]). Inlined into `load`, its only caller
    /// (one call instead of two per miss).
    #[inline(always)]
    fn cache(&mut self, lpn: u64, dirty: bool) -> Result<(), FtlError> {
        if !self.cmt.is_full() {
            self.cmt.insert(lpn, dirty);
            return Ok(());
        }
        if let Some((v, s)) = self.cmt.replace(lpn, dirty) {
            if let Err(e) = self.write_back(v) {
                self.cmt.release(s);
                return Err(e);
            }
            self.cmt.put(s, lpn, dirty);
        }
        Ok(())
    }

    /// Write evicted dirty entry `v` back to its translation page (with the batch update).
    fn write_back(&mut self, v: u64) -> Result<(), FtlError> {
        let t = self.page_of.of(v);
        self.set_flash(v);
        if self.variant != DftlVariant::FlashsimC {
            if !self.flash_map.is_empty() {
                let (fm, l2p) = (&mut self.flash_map, &self.d.l2p);
                self.cmt.each_dirty(t, |l| fm[l as usize] = l2p[l as usize]);
            }
            self.cmt.clean_page(t);
        }
        self.rewrite(t)
    }

    /// Record that `lpn`'s translation page now holds its current entry (strict mode).
    #[inline]
    fn set_flash(&mut self, lpn: u64) {
        if let Some(f) = self.flash_map.get_mut(lpn as usize) {
            *f = self.d.l2p[lpn as usize];
        }
    }

    /// Program a new copy of translation page `t` (its content: `flash_map`), reading
    /// the old copy first except in `flashsim-cpp`.
    fn rewrite(&mut self, t: u64) -> Result<(), FtlError> {
        self.t_room()?;
        let old = self.gtd[t as usize];
        if old != NO_PAGE {
            if self.variant != DftlVariant::FlashsimCpp {
                self.map_read(old);
            }
            self.d.nand.invalidate(old);
            self.d.p2l[old as usize] = NO_PAGE;
        }
        self.t_program(t);
        Ok(())
    }

    /// Program translation page `t` at the frontier (which has room) and point the GTD at it.
    fn t_program(&mut self, t: u64) {
        let page = self.d.nand.program_next(self.t_open, Cause::Mapping);
        self.d.log(OpKind::Program, Cause::Mapping, page);
        self.d.stats.map_writes += 1;
        self.d.p2l[page as usize] = t as u32;
        self.gtd[t as usize] = page;
    }

    /// Make sure the translation frontier has a free page: open a block from the free
    /// pool, then reclaim a translation block if there are too many.
    fn t_room(&mut self) -> Result<(), FtlError> {
        if self.t_open != NO_BLOCK && self.d.nand.write_pointer(self.t_open) < self.d.geo.pages_per_block {
            return Ok(());
        }
        let b = self.pool_block()?;
        self.d.role[b as usize] = Role::Translation;
        self.t_blocks.push(b);
        self.t_open = b;
        if self.t_blocks.len() > self.t_limit {
            self.t_gc();
        }
        Ok(())
    }

    /// Greedy translation GC: copy the valid pages of the translation block with the fewest
    /// into the (fresh) frontier and return it to its plane's free pool.
    fn t_gc(&mut self) {
        let open = self.t_open;
        // The least (valid pages, block) key, in one plain loop (keys are distinct).
        let mut best = (u64::MAX, usize::MAX);
        for (i, &b) in self.t_blocks.iter().enumerate() {
            let k = (self.d.nand.valid_count(b) as u64) << 32 | b as u64;
            if b != open && k < best.0 {
                best = (k, i);
            }
        }
        if best.1 == usize::MAX {
            return;
        }
        let (i, victim) = (best.1, self.t_blocks[best.1]);
        self.t_blocks.swap_remove(i);
        if self.d.record_ops {
            self.t_gc_logged(victim);
        } else {
            // The same state and counters as the logged loop, with the copies programmed
            // into the frontier as one run (they fit: see the module docs).
            let open = self.t_open;
            let base = self.d.nand.first_page(open) + self.d.nand.write_pointer(open);
            let n = t_gc_run(&mut self.d.p2l, &mut self.gtd, &self.d.nand, victim, base);
            self.d.nand.invalidate_block(victim);
            self.d.nand.count(OpKind::Read, Cause::Mapping, n as u64);
            self.d.stats.map_reads += n as u64;
            self.d.nand.program_span(open, n, Cause::Mapping);
            self.d.stats.map_writes += n as u64;
        }
        let plane = self.d.nand.plane_of_block(victim);
        self.t_count[plane as usize] -= 1;
        self.d.erase_free(plane, victim, Cause::Mapping);
    }

    /// [`Self::t_gc`]'s copies with the op log: per valid page of `victim`, in order, the
    /// read of it, then the program of its copy at the frontier.
    fn t_gc_logged(&mut self, victim: u32) {
        let first = self.d.nand.first_page(victim);
        let mut from = 0;
        while let Some(page) = self.d.nand.next_valid(victim, from) {
            from = page - first + 1;
            let t = self.d.p2l[page as usize];
            self.map_read(page);
            self.d.nand.invalidate(page);
            self.d.p2l[page as usize] = NO_PAGE;
            self.t_program(t as u64);
        }
    }

    /// Run `f` (a call that may run data GC) on the page FTL with the CMT's membership
    /// bitmap lent to it as `PageFtl::moved_bits`: GC's prefetch pass brings in the
    /// moved pages' words of it, a migration run before [`Cmt::split_moved`] tests them
    /// (without, that test waited on them: a quarter of `drain`'s samples). `f` gets the
    /// page FTL only, so it cannot reach the CMT while the bitmap is away.
    #[inline(always)]
    pub(crate) fn with_bits_lent<R>(&mut self, f: impl FnOnce(&mut PageFtl) -> R) -> R {
        self.cmt.swap_bits(&mut self.d.moved_bits);
        let r = f(&mut self.d);
        self.cmt.swap_bits(&mut self.d.moved_bits);
        r
    }

    /// Bring the map up to date with the pages data GC and wear levelling moved.
    #[inline(never)]
    fn drain(&mut self) -> Result<(), FtlError> {
        loop {
            let Some(m) = self.d.moved.as_mut() else { return Ok(()) };
            if m.is_empty() {
                return Ok(());
            }
            std::mem::swap(m, &mut self.moved);
            self.next_epoch();
            let mut touched = std::mem::take(&mut self.touched);
            // Marks the cached pages' entries dirty (the rewrites below touch no CMT state
            // — translation GC and data GC for a translation block move pages, which come
            // back to this loop —, so marking them first leaves the same state).
            let n = self.cmt.split_moved(&self.moved, &mut self.stamp, self.epoch, &mut touched, &mut self.cached);
            if !self.flash_map.is_empty() {
                for i in 0..self.moved.len() {
                    let lpn = self.moved[i] as u64;
                    if !self.cmt.contains(lpn) {
                        self.set_flash(lpn);
                    }
                }
            }
            self.moved.clear();
            // The rewrites' tables need no prefetch: the GTD (4 bytes per translation
            // page) and the old copies' reverse-map entries and valid bits (in at most
            // `t_limit` translation blocks) stay cached.
            let r = self.rewrite_all(&touched[..n]);
            self.touched = touched;
            r?;
        }
    }

    /// [`Self::rewrite`] each translation page of `ts` in turn (each appears once), with
    /// the frontier's programs of a run that fits in it as one NAND call: the same state,
    /// counters and op log (read of the old copy, program of the new, per page; a full
    /// frontier replaced, and translation GC run, just before the page that needs room).
    fn rewrite_all(&mut self, ts: &[u32]) -> Result<(), FtlError> {
        let ppb = self.d.geo.pages_per_block;
        let read_old = self.variant != DftlVariant::FlashsimCpp;
        let mut i = 0;
        while i < ts.len() {
            self.t_room()?;
            let open = self.t_open;
            let wp = self.d.nand.write_pointer(open);
            let n = ((ppb - wp) as usize).min(ts.len() - i);
            let base = self.d.nand.first_page(open) + wp;
            let reads = if self.d.record_ops {
                self.rewrite_logged(&ts[i..i + n], base, read_old)
            } else {
                let old = rewrite_run(&mut self.d.p2l, &mut self.gtd, &mut self.d.nand, &ts[i..i + n], base);
                if read_old {
                    old
                } else {
                    0
                }
            };
            self.d.nand.count(OpKind::Read, Cause::Mapping, reads);
            self.d.stats.map_reads += reads;
            self.d.nand.program_span(open, n as u32, Cause::Mapping);
            self.d.stats.map_writes += n as u64;
            i += n;
        }
        Ok(())
    }

    /// [`rewrite_run`] with the op log: per page the read of the old copy (unless
    /// `!read_old`), then the program of the new. Returns the reads.
    fn rewrite_logged(&mut self, ts: &[u32], base: u32, read_old: bool) -> u64 {
        let mut reads = 0u64;
        for (k, &t) in ts.iter().enumerate() {
            let (old, new) = (self.gtd[t as usize], base + k as u32);
            if old != NO_PAGE {
                if read_old {
                    reads += 1;
                    self.d.log(OpKind::Read, Cause::Mapping, old);
                }
                self.d.nand.invalidate(old);
                self.d.p2l[old as usize] = NO_PAGE;
            }
            self.d.log(OpKind::Program, Cause::Mapping, new);
            self.d.p2l[new as usize] = t;
            self.gtd[t as usize] = new;
        }
        reads
    }

    /// A fresh batch number (stamps restart from zero when the counter wraps).
    fn next_epoch(&mut self) {
        self.epoch = self.epoch.wrapping_add(1);
        if self.epoch == 0 {
            self.stamp.fill(0);
            self.epoch = 1;
        }
    }

    #[inline]
    fn after_op(&mut self, lpn: u64) -> Result<(), FtlError> {
        if self.d.moved.as_ref().is_some_and(|m| !m.is_empty()) {
            self.drain()?;
        }
        if !self.d.s.strict {
            return Ok(());
        }
        self.check_entry(lpn).map_err(FtlError::Invariant)?;
        self.strict_ops += 1;
        if self.strict_ops >= self.d.p2l.len() as u64 / 8 {
            self.strict_ops = 0;
            Mapping::check_invariants(self)?;
        }
        Ok(())
    }

    /// A logical page's entry is in RAM (cached and dirty) or its translation page agrees.
    fn check_entry(&self, lpn: u64) -> Result<(), String> {
        let Some(&f) = self.flash_map.get(lpn as usize) else { return Ok(()) };
        let l = self.d.l2p[lpn as usize];
        if !self.cmt.is_dirty(lpn) && f != l {
            return Err(format!("lpn {lpn}: translation page says {f}, the map {l}, and no dirty cached entry"));
        }
        Ok(())
    }

    /// GTD ↔ translation pages, translation blocks, and every entry through flash + CMT.
    fn check_map(&self) -> Result<(), String> {
        self.cmt.check()?;
        (0..self.flash_map.len() as u64).try_for_each(|l| self.check_entry(l))?;
        for (t, &page) in self.gtd.iter().enumerate() {
            let range = t * self.epp as usize..((t + 1) * self.epp as usize).min(self.flash_map.len());
            if page == NO_PAGE {
                if !self.flash_map.is_empty() && self.flash_map[range].iter().any(|&p| p != NO_PAGE) {
                    return Err(format!("translation page {t} never written but holds entries"));
                }
                continue;
            }
            let b = self.d.nand.block_of(page);
            let ok = self.d.role[b as usize] == Role::Translation
                && self.d.nand.page_state(page) == PageState::Valid
                && self.d.p2l[page as usize] == t as u32;
            if !ok {
                return Err(format!("GTD: translation page {t} at page {page}, which is not its valid copy"));
            }
        }
        let per_plane = |p: u32| self.t_blocks.iter().filter(|&&b| self.d.nand.plane_of_block(b) == p).count();
        if let Some(p) = (0..self.d.geo.planes()).find(|&p| per_plane(p) != self.t_count[p as usize] as usize) {
            return Err(format!(
                "plane {p}: {} translation blocks counted, {} listed",
                self.t_count[p as usize],
                per_plane(p)
            ));
        }
        let roles = self.d.role.iter().filter(|&&r| r == Role::Translation).count();
        if roles != self.t_blocks.len() || self.t_blocks.len() > self.t_limit {
            return Err(format!(
                "{roles} translation-role blocks, {} listed (limit {})",
                self.t_blocks.len(),
                self.t_limit
            ));
        }
        for &b in &self.t_blocks {
            let first = self.d.nand.first_page(b);
            let mut from = 0;
            while let Some(page) = self.d.nand.next_valid(b, from) {
                from = page - first + 1;
                let t = self.d.p2l[page as usize] as usize;
                if self.gtd.get(t) != Some(&page) {
                    return Err(format!("valid translation page {page} (of {t}) is not in the GTD"));
                }
            }
        }
        Ok(())
    }
}

/// One frontier run of [`DftlFtl::rewrite_all`] without an op log: translation pages
/// `ts` programmed at `base`, `base + 1`, …: each old copy invalidated (its reverse-map
/// entry cleared), the new copy's reverse-map entry and GTD entry set. Returns how many
/// had an old copy. The tables are parameters, so the stores into them change nothing
/// else the loop reads (as `gc.rs`'s `move_run`). (Collecting the old copies and
/// invalidating them as one list in `flashlab-nand` cost 8.5 instructions more per
/// rewrite, not less: s11-dftl.)
fn rewrite_run(p2l: &mut [u32], gtd: &mut [u32], nand: &mut Nand, ts: &[u32], base: u32) -> u64 {
    let mut old_copies = 0;
    for (k, &t) in ts.iter().enumerate() {
        let (old, new) = (gtd[t as usize], base + k as u32);
        if old != NO_PAGE {
            old_copies += 1;
            nand.invalidate(old);
            p2l[old as usize] = NO_PAGE;
        }
        p2l[new as usize] = t;
        gtd[t as usize] = new;
    }
    old_copies
}

/// [`DftlFtl::t_gc`]'s copies without an op log: each valid page of `victim`, in order,
/// moved to `base`, `base + 1`, … (reverse map and GTD; the caller invalidates the victim
/// and programs the run). Returns how many moved.
fn t_gc_run(p2l: &mut [u32], gtd: &mut [u32], nand: &Nand, victim: u32, base: u32) -> u32 {
    let mut cur = nand.valid_cursor(victim, 0);
    let mut n = 0;
    while let Some(page) = nand.next_valid_at(&mut cur) {
        let (t, new) = (p2l[page as usize], base + n);
        p2l[page as usize] = NO_PAGE;
        p2l[new as usize] = t;
        gtd[t as usize] = new;
        n += 1;
    }
    n
}

impl Mapping for DftlFtl {
    #[inline]
    fn write(&mut self, lpn: u64) -> Result<(), FtlError> {
        self.check_range(lpn)?;
        // `lookup_entry`, then the entry made dirty once the data page is written: on a
        // miss the entry is inserted dirty (nothing reads or cleans it before the write
        // returns), and made clean again if the write fails.
        self.d.stats.map_cache_lookups += 1;
        let hit = self.cmt.contains(lpn);
        let slot = if hit {
            self.d.stats.map_cache_hits += 1;
            self.cmt.touch(lpn)
        } else {
            self.load(lpn, true)?;
            0
        };
        let plain = self.plain;
        let r = self.with_bits_lent(|d| if plain { d.write_plain(lpn) } else { d.write(lpn) });
        if let Err(e) = r {
            if !hit {
                self.cmt.undo_dirty_insert(lpn);
            }
            return Err(e);
        }
        if hit {
            self.cmt.set_dirty_at(slot, lpn);
        }
        self.after_op(lpn)
    }
    #[inline]
    fn read(&mut self, lpn: u64) -> Result<ReadOutcome, FtlError> {
        self.check_range(lpn)?;
        self.lookup_entry(lpn)?;
        let r = self.d.read(lpn)?;
        self.after_op(lpn)?;
        Ok(r)
    }
    fn trim(&mut self, lpn: u64) -> Result<(), FtlError> {
        self.check_range(lpn)?;
        self.lookup_entry(lpn)?;
        let mapped = self.d.lookup(lpn).is_some();
        self.d.trim(lpn)?;
        if mapped {
            self.cmt.set_dirty(lpn);
        }
        self.after_op(lpn)
    }
    fn nand(&self) -> &Nand {
        &self.d.nand
    }
    fn stats(&self) -> &FtlStats {
        &self.d.stats
    }
    fn set_record_ops(&mut self, on: bool) {
        self.d.set_record_ops(on);
        self.plain = self.d.plain_writes_apply_with_moved_list();
    }
    fn take_ops(&mut self) -> std::vec::Drain<'_, FlashOp> {
        self.d.take_ops()
    }
    fn last_tag(&self) -> u32 {
        self.d.last_tag()
    }
    fn lookup(&self, lpn: u64) -> Option<u32> {
        self.d.lookup(lpn)
    }
    fn memory_bytes(&self) -> usize {
        self.d.memory_bytes() + (self.gtd.len() + self.flash_map.len()) * 4 + self.cmt.memory_bytes()
    }
    /// CMT entries of (4-byte logical page, `map_entry_bytes` physical page) and a 4-byte
    /// GTD entry per translation page.
    fn mapping_ram_bytes(&self) -> u64 {
        let entry = 4 + self.d.s.mapping.map_entry_bytes as u64;
        self.cmt.capacity() as u64 * entry + self.gtd.len() as u64 * 4
    }
    fn check_invariants(&self) -> Result<(), FtlError> {
        self.d.check_invariants()?;
        self.check_map().map_err(FtlError::Invariant)
    }
    #[inline]
    fn prefetch_map(&self, lpn: u64) {
        self.cmt.prefetch_bit(lpn);
        self.cmt.prefetch(lpn);
        self.d.prefetch_map(lpn);
    }
    #[inline]
    fn prefetch_page(&self, lpn: u64) {
        self.cmt.prefetch_slot(lpn);
        self.d.prefetch_page(lpn)
    }
    fn wants_background_gc(&self, plane: u32, background_free_blocks: u32) -> bool {
        self.d.wants_background_gc(plane, background_free_blocks)
    }
    fn gc_step(&mut self, plane: u32) -> Result<GcStep, FtlError> {
        let r = self.with_bits_lent(|d| d.gc_step(plane))?;
        self.drain()?;
        Ok(r)
    }
}
