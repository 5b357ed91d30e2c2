//! Garbage collection: per-plane trigger, victim choice through the policy, valid-page
//! migration to the GC frontier, erase.

use crate::ftl::{FlashOp, Role, NO_BLOCK};
use crate::victim::{BlockInfo, BlockView, VictimPolicy, VictimSelector};
use crate::{Candidate, PlaneInfo};
use crate::{DtParams, FtlError, GcRequest, PageFtl, Trigger};
use flashlab_nand::{Cause, OpKind, ValidCursor};

/// What one GC step did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GcStep {
    /// One valid page was migrated.
    Migrated,
    /// The victim (block id) had no valid page left and was erased.
    Erased(u32),
    /// No GC run under way and no block worth collecting.
    Idle,
}

/// The view of one plane's candidates that the FTL hands to its policy.
pub(crate) struct PlaneView<'a> {
    ftl: &'a PageFtl,
    plane: u32,
    oldest: Option<u32>,
}

impl BlockView for PlaneView<'_> {
    fn pages_per_block(&self) -> u32 {
        self.ftl.geo.pages_per_block
    }
    fn now(&self) -> u64 {
        self.ftl.clock
    }
    fn candidates(&self) -> &[u32] {
        &self.ftl.index.lists[self.plane as usize]
    }
    fn info(&self, block: u32) -> BlockInfo {
        BlockInfo {
            valid: self.ftl.nand.valid_count(block),
            erase_count: self.ftl.nand.erase_count(block),
            close_time: self.ftl.close_time[block as usize],
        }
    }
    fn min_valid(&self) -> Option<u32> {
        if self.ftl.index.has_buckets() {
            return self.ftl.index.min_valid(self.plane);
        }
        self.candidates().iter().copied().min_by_key(|&b| self.info(b).valid)
    }
    fn erase_range(&self) -> (u32, u32) {
        self.ftl.plane_erase_range(self.plane)
    }
    fn oldest(&self) -> Option<u32> {
        if self.ftl.index.has_fifo() {
            return self.oldest;
        }
        self.candidates().iter().copied().min_by_key(|&b| (self.info(b).close_time, b))
    }
}

impl PageFtl {
    /// Run GC in `plane` until it has `free_blocks_min` free blocks (blocking GC).
    #[inline]
    pub(crate) fn collect(&mut self, plane: u32) -> Result<(), FtlError> {
        if let Trigger::DtGc(p) = self.s.trigger {
            self.consumed[plane as usize] += 1;
            if self.consumed[plane as usize] >= p.check_pages {
                self.consumed[plane as usize] = 0;
                self.dt_check(plane, &p)?;
            }
        }
        if let Trigger::FreeRatio { min } = self.s.trigger {
            self.ratio_check(plane, min)?;
        }
        self.collect_to_reserve(plane)?;
        if self.s.wear.static_threshold > 0 {
            self.static_wear_level(plane)?;
            self.collect_to_reserve(plane)?;
        }
        Ok(())
    }

    /// SSDsim's `gc hard threshold` (pagemap.c `get_ppn` queues one GC_UNINTERRUPT node
    /// per page written while the plane's free pages are below the ratio;
    /// `uninterrupt_gc` collects the block with the most invalid pages, or nothing when
    /// no block has an invalid page): one blocking run of one victim.
    fn ratio_check(&mut self, plane: u32, min: f64) -> Result<(), FtlError> {
        if self.free_page_ratio(plane) >= min {
            return Ok(());
        }
        let view = PlaneView { ftl: self, plane, oldest: None };
        match view.min_valid() {
            Some(b) if self.nand.valid_count(b) < self.geo.pages_per_block => self.gc_once(plane).map(|_| ()),
            _ => Ok(()),
        }
    }

    /// Blocking GC until `plane` has its reserve of free blocks.
    pub(crate) fn collect_to_reserve(&mut self, plane: u32) -> Result<(), FtlError> {
        let min = self.gc_reserve();
        let mut runs = 0u32;
        while self.free[plane as usize].len() < min {
            self.gc_once(plane)?;
            runs += 1;
            if runs > self.geo.blocks_per_plane {
                return Err(FtlError::NoSpace { plane });
            }
        }
        Ok(())
    }

    /// Free blocks a plane keeps: `free_blocks_min`, plus one per GC stream beyond the
    /// first (one victim's migration may open a new frontier block in every GC stream).
    #[inline]
    pub(crate) fn gc_reserve(&self) -> usize {
        let extra = if self.s.separate_gc_frontier { self.s.gc_streams.saturating_sub(1) } else { 0 };
        (self.s.free_blocks_min + extra) as usize
    }

    /// Ask the policy for a victim in `plane`. An external policy's error is kept in
    /// `external_error` (the caller turns it into [`FtlError::ExternalVictim`]).
    pub fn choose_victim(&mut self, plane: u32) -> Option<u32> {
        if matches!(self.s.victim, VictimPolicy::External) {
            return self.choose_external(plane);
        }
        let oldest = self.index.oldest(plane);
        let mut rng = self.rng.clone();
        let view = PlaneView { ftl: self, plane, oldest };
        let v = self.s.victim.choose(&view, &mut rng);
        self.rng = rng;
        v
    }

    /// Ask the external callback, with the plane's candidates in greedy order.
    fn choose_external(&mut self, plane: u32) -> Option<u32> {
        let Some(cb) = self.s.external_victim.clone() else {
            self.external_error = Some("gc.victim = external needs a callback (library API only)".into());
            return None;
        };
        let mut blocks = Vec::new();
        self.index.greedy_order(plane, &mut blocks);
        if blocks.is_empty() {
            return None;
        }
        let cands: Vec<Candidate> = blocks
            .iter()
            .map(|&b| Candidate {
                block: b,
                valid: self.nand.valid_count(b),
                erase_count: self.nand.erase_count(b),
                age: self.clock.saturating_sub(self.close_time[b as usize]),
                temperature: self.block_temperature(b),
            })
            .collect();
        let info = PlaneInfo { plane, pages_per_block: self.geo.pages_per_block, now: self.clock };
        match cb.choose(info, &cands) {
            Ok(b) => Some(b),
            Err(e) => {
                self.external_error = Some(e);
                None
            }
        }
    }

    /// Finish the GC run in progress in `plane`, or run a whole new one. Returns the victim.
    pub fn gc_once(&mut self, plane: u32) -> Result<u32, FtlError> {
        let mut victim = self.gc_victim[plane as usize];
        if victim == NO_BLOCK {
            victim = self.start_gc(plane)?.ok_or(FtlError::NoSpace { plane })?;
        }
        // The same work as repeated gc_step calls, in one tight loop with the victim's
        // page-state bookkeeping done once for the whole block.
        let from = self.gc_cursor[plane as usize];
        self.prefetch_moved_entries(victim, from);
        let moved = match self.placement {
            // Without placement every migrated page goes to the same slot.
            None => self.migrate_runs(plane, victim, from, self.gc_slot(0))?,
            Some(_) => self.migrate_each(plane, victim, from)?,
        };
        self.nand.count(OpKind::Read, Cause::Gc, moved);
        self.nand.invalidate_block(victim);
        self.stats.gc_copied_pages += moved;
        self.erase_free(plane, victim, Cause::Gc);
        self.after_erase(plane)?;

        self.gc_victim[plane as usize] = NO_BLOCK;
        self.prefetch_next_victim(plane);
        Ok(victim)
    }

    /// Bring in the reverse-map entries and validity bits of the block greedy would
    /// collect next in `plane` (a hint only: no state changes). By the next GC run, some
    /// host writes later, [`Self::prefetch_moved_entries`] finds them cached and waits
    /// only for the `l2p` entries; without this it waited for the victim's `p2l` lines
    /// first (19 % of `counting-wasim`'s samples).
    #[inline]
    fn prefetch_next_victim(&self, plane: u32) {
        let Some(block) = self.index.min_valid(plane) else { return };
        let first = self.nand.first_page(block) as usize;
        let entries = &self.p2l[first..first + self.geo.pages_per_block as usize];
        // One prefetch per 64-byte line (16 entries), and the last entry's line.
        entries.iter().step_by(16).chain(entries.last()).for_each(crate::ftl::prefetch);
        self.nand.prefetch(first as u32);
    }

    /// Move the valid pages of `victim` from offset `from` one by one, each to the GC
    /// frontier of its temperature class (placement). Returns how many moved.
    fn migrate_each(&mut self, plane: u32, victim: u32, mut from: u32) -> Result<u64, FtlError> {
        let first = self.nand.first_page(victim);
        let mut moved = 0;
        while let Some(page) = self.nand.next_valid(victim, from) {
            from = page - first + 1;
            let lpn = self.p2l[page as usize];
            self.p2l[page as usize] = crate::NO_PAGE;
            self.log(OpKind::Read, Cause::Gc, page);
            let new = self.append(plane, lpn, self.gc_slot(lpn), Cause::Gc)?;
            self.after_move(page, new, lpn);
            moved += 1;
        }
        Ok(moved)
    }

    /// Move the valid pages of `victim` from offset `from` to frontier `slot` in runs:
    /// each run fills the frontier block as far as it goes (or takes the rest of the
    /// victim) and programs it with one NAND call. The same state, counters and op log
    /// as [`Self::migrate_each`] with a fixed slot: a frontier that fills up is replaced
    /// only when the next page needs room, as [`Self::append`] does. Returns how many moved.
    fn migrate_runs(&mut self, plane: u32, victim: u32, from: u32, slot: u32) -> Result<u64, FtlError> {
        let ppb = self.geo.pages_per_block;
        let open = (plane * self.slots + slot) as usize;
        let mut moved = 0u64;
        // The victim's bits do not change until `invalidate_block` after the loop.
        let mut cur = self.nand.valid_cursor(victim, from);
        // The moved-page list (DFTL) does not need the general loop: a run's pages are
        // the reverse-map entries it just wrote, in order.
        let plain = !self.record_ops && !self.s.track_content;
        let mut next = self.nand.next_valid_at(&mut cur);
        while let Some(mut page) = next {
            let mut block = self.open[open];
            if block == NO_BLOCK || self.nand.write_pointer(block) == ppb {
                block = self.open_block(plane, open, slot)?;
            }
            let wp = self.nand.write_pointer(block);
            let base = self.nand.first_page(block) + wp;
            if plain {
                let n;
                (n, next) = move_run(&mut self.p2l, &mut self.l2p, &self.nand, &mut cur, page, base, ppb - wp);
                self.nand.program_span(block, n, Cause::Gc);
                if let Some(m) = &mut self.moved {
                    m.extend_from_slice(&self.p2l[base as usize..(base + n) as usize]);
                }
                moved += n as u64;
                continue;
            }
            let mut n = 0;
            loop {
                let (lpn, new) = (self.p2l[page as usize], base + n);
                self.p2l[page as usize] = crate::NO_PAGE;
                self.p2l[new as usize] = lpn;
                self.l2p[lpn as usize] = new;
                if self.record_ops {
                    self.ops.push(FlashOp { kind: OpKind::Read, cause: Cause::Gc, plane, page });
                    self.ops.push(FlashOp { kind: OpKind::Program, cause: Cause::Gc, plane, page: new });
                }
                self.after_move(page, new, lpn);
                n += 1;
                next = self.nand.next_valid_at(&mut cur);
                match next {
                    Some(p) if n < ppb - wp => page = p,
                    _ => break,
                }
            }
            self.nand.program_span(block, n, Cause::Gc);
            moved += n as u64;
        }
        Ok(moved)
    }

    /// A migrated page's content tag and the moved-page list follow it.
    #[inline(always)]
    fn after_move(&mut self, page: u32, new: u32, lpn: u32) {
        if self.s.track_content {
            self.tags[new as usize] = self.tags[page as usize];
        }
        if let Some(m) = &mut self.moved {
            m.push(lpn);
        }
    }

    /// Bring in the mapping entries of the pages of `victim` from offset `from` that GC
    /// is about to move: each is a random access to `l2p` that the migration loop would
    /// otherwise wait for one at a time (a hint only: no state changes). With a lent
    /// [`Self::moved_bits`] (DFTL) also each page's pair of words of it, in a loop of its own
    /// (page mapping's loop is unchanged).
    #[inline]
    fn prefetch_moved_entries(&self, victim: u32, from: u32) {
        let mut cur = self.nand.valid_cursor(victim, from);
        if !self.moved_bits.is_empty() {
            return self.prefetch_moved_entries_and_bits(cur);
        }
        while let Some(page) = self.nand.next_valid_at(&mut cur) {
            if let Some(e) = self.l2p.get(self.p2l[page as usize] as usize) {
                crate::ftl::prefetch(e);
            }
        }
    }

    /// [`Self::prefetch_moved_entries`] with the moved pages' words of
    /// [`Self::moved_bits`]: DFTL's `split_moved` tests them a whole migration run later.
    #[inline(never)]
    fn prefetch_moved_entries_and_bits(&self, cur: ValidCursor) {
        // Addresses without bounds checks (a prefetch never faults; a valid page's
        // reverse-map entry is a logical page anyway): fewer live lengths in the loop.
        // The walk a word at a time with the table bases in registers: 19 instructions
        // per page with the cursor's `next_valid_at` and the reverse map reached through
        // `self` (s16-dftl).
        let (bits, l2p, p2l) = (self.moved_bits.as_ptr(), self.l2p.as_ptr(), &self.p2l[..]);
        self.nand.for_each_valid_at(cur, |page| {
            let lpn = p2l[page as usize] as usize;
            crate::ftl::prefetch_ptr(l2p.wrapping_add(lpn));
            crate::ftl::prefetch_ptr(bits.wrapping_add(lpn >> 6));
        });
    }

    /// Whether preemptible GC should work in `plane`: a run is under way, or the plane
    /// has fewer than `background_free_blocks` free blocks.
    #[inline]
    pub fn wants_background_gc(&self, plane: u32, background_free_blocks: u32) -> bool {
        self.gc_in_progress(plane)
            || match self.s.trigger {
                Trigger::Threshold | Trigger::FreeRatio { .. } => {
                    self.free[plane as usize].len() < background_free_blocks as usize
                }
                Trigger::DtGc(_) => self.bg_wanted[plane as usize],
            }
    }

    /// Free, valid and invalid page ratios of a plane.
    pub fn page_ratios(&self, plane: u32) -> (f64, f64, f64) {
        let total = (self.geo.blocks_per_plane as u64 * self.geo.pages_per_block as u64) as f64;
        let bpp = self.geo.blocks_per_plane;
        let valid: u64 = (plane * bpp..(plane + 1) * bpp).map(|b| self.nand.valid_count(b) as u64).sum();
        let fp = self.free_page_ratio(plane);
        let vp = valid as f64 / total;
        (fp, vp, (1.0 - fp - vp).max(0.0))
    }

    /// Share of a plane's pages that are free: free blocks and the unwritten pages of
    /// its open blocks (SSDsim's `plane.free_page`).
    pub fn free_page_ratio(&self, plane: u32) -> f64 {
        let ppb = self.geo.pages_per_block as u64;
        let total = (self.geo.blocks_per_plane as u64 * ppb) as f64;
        let p = plane as usize;
        let slots = &self.open[p * self.slots as usize..(p + 1) * self.slots as usize];
        let open_free: u64 =
            slots.iter().filter(|&&b| b != NO_BLOCK).map(|&b| ppb - self.nand.write_pointer(b) as u64).sum();
        (self.free[p].len() as u64 * ppb + open_free) as f64 / total
    }

    /// DT-GC's check: collect now below H, ask for interruptible GC below T.
    fn dt_check(&mut self, plane: u32, p: &DtParams) -> Result<(), FtlError> {
        let mut runs = 0;
        loop {
            let (fp, vp, ip) = self.page_ratios(plane);
            match p.request(fp, vp, ip) {
                GcRequest::Urgent if runs < self.geo.blocks_per_plane => {
                    self.gc_once(plane)?;
                    runs += 1;
                }
                req => {
                    self.bg_wanted[plane as usize] = req != GcRequest::None;
                    return Ok(());
                }
            }
        }
    }

    /// After an erase: DT-GC re-evaluates the plane; static wear levelling may act.
    fn after_erase(&mut self, plane: u32) -> Result<(), FtlError> {
        if let Trigger::DtGc(p) = self.s.trigger {
            let (fp, vp, ip) = self.page_ratios(plane);
            self.bg_wanted[plane as usize] = p.request(fp, vp, ip) != GcRequest::None;
        }
        self.wl_count_erase(plane);
        Ok(())
    }

    /// Whether a GC run is under way in `plane` (a victim partly migrated).
    pub fn gc_in_progress(&self, plane: u32) -> bool {
        self.gc_victim[plane as usize] != NO_BLOCK
    }

    /// One step of GC in `plane`: start a run if none is under way, then migrate one
    /// valid page of the victim, or erase it when none is left. Preemptible GC runs
    /// these steps in idle time and yields to the host between them.
    pub fn gc_step(&mut self, plane: u32) -> Result<GcStep, FtlError> {
        let mut victim = self.gc_victim[plane as usize];
        if victim == NO_BLOCK {
            if !self.background_victim_worth_it(plane) {
                return Ok(GcStep::Idle);
            }
            match self.start_gc(plane)? {
                Some(v) => victim = v,
                None => return Ok(GcStep::Idle),
            }
        }
        let cursor = self.gc_cursor[plane as usize];
        match self.nand.next_valid(victim, cursor) {
            Some(page) => {
                self.gc_cursor[plane as usize] = page - self.nand.first_page(victim) + 1;
                self.migrate(plane, page, Cause::Gc)?;
                Ok(GcStep::Migrated)
            }
            None => {
                self.erase_free(plane, victim, Cause::Gc);
                self.gc_victim[plane as usize] = NO_BLOCK;
                self.after_erase(plane)?;
                Ok(GcStep::Erased(victim))
            }
        }
    }

    /// Whether the block the policy would pick now is at most `background_max_valid` valid.
    fn background_victim_worth_it(&mut self, plane: u32) -> bool {
        let limit = (self.s.background_max_valid * self.geo.pages_per_block as f64).floor() as u32;
        let rng = self.rng.clone();
        let pick = self.choose_victim(plane);
        self.rng = rng;
        // An external policy's error must reach start_gc, which reports it.
        pick.is_some_and(|v| self.nand.valid_count(v) <= limit) || self.external_error.is_some()
    }

    /// Choose and claim a victim; `None` when no block is worth collecting.
    fn start_gc(&mut self, plane: u32) -> Result<Option<u32>, FtlError> {
        let Some(victim) = self.choose_victim(plane) else {
            return match self.external_error.take() {
                Some(e) => Err(FtlError::ExternalVictim(e)),
                None => Ok(None),
            };
        };
        if self.nand.valid_count(victim) == self.geo.pages_per_block && self.s.victim.needs_buckets() {
            return Ok(None);
        }
        self.index.remove(plane, victim);
        self.role[victim as usize] = Role::Victim;
        self.stats.gc_runs += 1;
        self.gc_victim[plane as usize] = victim;
        self.gc_cursor[plane as usize] = 0;
        Ok(Some(victim))
    }

    /// Move one valid page to the GC frontier of `plane`.
    pub(crate) fn migrate(&mut self, plane: u32, page: u32, cause: Cause) -> Result<(), FtlError> {
        let lpn = self.p2l[page as usize];
        self.nand.read(page, cause);
        self.log(OpKind::Read, cause, page);
        self.nand.invalidate(page);
        self.p2l[page as usize] = crate::NO_PAGE;
        let new = self.append(plane, lpn, self.gc_slot(lpn), cause)?;
        if self.s.track_content {
            self.tags[new as usize] = self.tags[page as usize];
        }
        if let Some(m) = &mut self.moved {
            m.push(lpn);
        }
        self.stats.gc_copied_pages += 1;
        Ok(())
    }

    /// Erase `block` and return it to the plane's free list. Its pages' `p2l` entries
    /// are cleared here, in one pass over the block's lines (GC has just read them),
    /// not one by one as pages are invalidated.
    pub(crate) fn erase_free(&mut self, plane: u32, block: u32, cause: Cause) {
        let first = self.nand.first_page(block);
        let pages = first as usize..(first + self.geo.pages_per_block) as usize;
        self.p2l[pages].fill(crate::NO_PAGE);
        self.nand.erase(block, cause);
        if !self.block_temp_sum.is_empty() {
            self.block_temp_sum[block as usize] = 0;
        }
        self.log(OpKind::Erase, cause, first);
        self.role[block as usize] = Role::Free;
        self.free[plane as usize].push_back(block);
    }
}

/// One run of [`PageFtl::migrate_runs`] without an op log or content tags (the caller
/// copies a moved-page list from the run's new reverse-map entries): move the cursor's
/// pages from `page` on to `base`, `base + 1`, … until `room` pages have moved or the
/// victim has none left. Returns how many moved and the next valid page. The tables are parameters (not reached through `self`), so the
/// compiler knows the stores into them change nothing else the loop reads.
#[inline]
fn move_run(
    p2l: &mut [u32],
    l2p: &mut [u32],
    nand: &flashlab_nand::Nand,
    cur: &mut flashlab_nand::ValidCursor,
    mut page: u32,
    base: u32,
    room: u32,
) -> (u32, Option<u32>) {
    let mut n = 0;
    loop {
        // The victim's entry stays until `erase_free` clears the block's entries.
        let (lpn, new) = (p2l[page as usize], base + n);
        p2l[new as usize] = lpn;
        l2p[lpn as usize] = new;
        n += 1;
        let next = nand.next_valid_at(cur);
        match next {
            Some(p) if n < room => page = p,
            _ => return (n, next),
        }
    }
}
