//! Space budgeting: an operation is admitted only if the space it may need
//! (its nodes, plus the tail of a LEB per journal-head switch) fits in what GC can reclaim after
//! keeping the reserve for GC itself and for writing the dirty index at the
//! next commit. Deletions may use part of the reserve. So a full file
//! system answers ENOSPC up front and never runs out mid-operation.

use crate::error::{Errno, FsResult};
use crate::fs::{Fs, Lprops, F_BUD, F_INDEX, GC, HEADS};
use crate::node::HDR;

impl Fs {
    /// Upper bound of bytes of one index node.
    fn max_znode_bytes(&self) -> u32 {
        (HDR as u32 + 5 + self.cfg.fanout * (22 + 48)).next_multiple_of(8)
    }

    /// Empty LEBs to keep for writing the dirty index at commit.
    pub(crate) fn idx_reserve_lebs(&self) -> u32 {
        let zn = self.tnc.live_count() as u32;
        // Index nodes the budgeted dirty pages may still dirty when they are
        // written back (UBIFS's `idx_growth`, `calc_idx_growth`: one index
        // node per new page, counted into `ubifs_calc_min_idx_lebs`).
        let growth = (self.reserved_bytes / self.geo.max_node_bytes() as u64) as u32;
        let dirty = self.tnc.dirty_count() as u32 + growth;

        let bytes = (dirty + zn / 4 + 2 * self.tnc.height() as u32 + 8) * self.max_znode_bytes();
        bytes.div_ceil(self.geo.leb_bytes - self.geo.min_io).max(1)
    }

    /// Bytes that journal writes can still get (free LEBs, head tails,
    /// reclaimable dirty space): the table's running total, corrected for
    /// the few LEBs a head sits on.
    pub(crate) fn reclaimable_bytes(&self) -> u64 {
        let mut total = self.lp.total_reclaimable();
        // `head_lebs` with each LEB's first head: what `leb_reclaimable`
        // gives for a LEB under a head (it is never empty there), without
        // looking the head up again (this runs on every write's budget).
        let mut seen = [u32::MAX; HEADS + 1];
        for (i, h) in self.heads.iter().chain(std::iter::once(&self.idx_head)).enumerate() {
            let Some(l) = h.lnum else { continue };
            if !self.geo.is_main(l) || seen[..i].contains(&l) {
                continue;
            }
            seen[i] = l;
            // The index head is not a journal head: its LEB counts as any other.
            let under_head = self.non_empty_reclaimable(self.lp[l as usize], (i < HEADS).then_some(i));
            debug_assert_eq!(under_head, self.leb_reclaimable(l));
            total = total - self.lp.base_reclaimable(l) + under_head;
        }
        total
    }

    /// [`Fs::reclaimable_bytes`] by a scan of every LEB (strict checks).
    pub(crate) fn reclaimable_bytes_scan(&self) -> u64 {
        (self.geo.main_first..self.geo.leb_count).map(|l| self.leb_reclaimable(l)).sum()
    }

    /// Distinct LEBs under a journal head or the index head.
    pub(crate) fn head_lebs(&self) -> impl Iterator<Item = u32> {
        let mut out = [None; HEADS + 1];
        for (i, h) in self.heads.iter().chain(std::iter::once(&self.idx_head)).enumerate() {
            out[i] = h.lnum.filter(|l| self.geo.is_main(*l) && !out[..i].contains(&Some(*l)));
        }
        out.into_iter().flatten()
    }

    /// Bytes journal writes can get from LEB `l`.
    fn leb_reclaimable(&self, l: u32) -> u64 {
        if self.is_empty_leb(l) {
            return self.geo.leb_bytes as u64;
        }
        let head = self.heads.iter().position(|h| h.lnum == Some(l));
        self.non_empty_reclaimable(self.lp[l as usize], head)
    }

    /// [`Fs::leb_reclaimable`] of a LEB that is not empty, with properties `p`,
    /// under journal head `head` (the first holding it) or none.
    fn non_empty_reclaimable(&self, p: Lprops, head: Option<usize>) -> u64 {
        let io = self.geo.min_io;
        match head {
            Some(GC) => 0,
            Some(_) => p.free.saturating_sub(io) as u64,
            None if p.flags & (F_BUD | F_INDEX) != 0 => 0,
            None => (p.free + p.dirty).saturating_sub(io) as u64,
        }
    }

    /// LEBs the budget keeps back (`ubifs_calc_available`, budget.c): the
    /// index's, GC's own LEB, one per journal head ("different write types
    /// go to different heads") and, except for a deletion, the LEB kept for
    /// deletions.
    fn reserve_bytes(&self, deletion: bool) -> u64 {
        let jheads = (GC + 1) as u32 + self.hot_heads_in_use();
        let lebs = self.idx_reserve_lebs() + 1 + jheads + if deletion { 0 } else { 1 };
        lebs as u64 * self.geo.leb_bytes as u64
    }

    /// Admits an operation writing `node_bytes` (`ubifs_budget_space`,
    /// budget.c): when it does not fit, `make_free_space` and try again
    /// while that makes progress; when it gives up, one more try, then
    /// ENOSPC.
    ///
    /// After an ENOSPC, further non-deletion requests fail at once until a
    /// deletion is admitted or budgeted pages are released (UBIFS's
    /// `c->bi.nospace`, set by `ubifs_budget_space`, cleared by
    /// `ubifs_release_budget`).
    pub(crate) fn budget(&mut self, node_bytes: u64, deletion: bool) -> FsResult<()> {
        if self.nospace && !deletion {
            self.counters.enospc += 1;
            return Err(Errno::ENOSPC.into());
        }
        let r = self.budget_space(node_bytes, deletion);
        self.nospace = r.is_err() && !deletion;
        if is_enospc(&r) {
            self.counters.enospc += 1;
        }
        r
    }

    /// The budget of a deletion: an unlink or rmdir (`ubifs_unlink`,
    /// `ubifs_rmdir`, dir.c) or a truncation to zero (`do_truncation`,
    /// file.c). When `ubifs_budget_space` answers ENOSPC the operation goes
    /// ahead unbudgeted ("budgeted = 0"), so that a full file system can
    /// always be emptied, and, having deleted something, clears the
    /// "no space" flag (`c->bi.nospace = 0`).
    pub(crate) fn budget_deletion(&mut self, node_bytes: u64) -> FsResult<()> {
        let r = self.budget_space(node_bytes, true);
        self.nospace = false;
        if is_enospc(&r) {
            return Ok(());
        }
        r
    }

    fn budget_space(&mut self, node_bytes: u64, deletion: bool) -> FsResult<()> {
        let mut retried = false;
        let mut again = 0;
        loop {
            if self.budget_fits(node_bytes, deletion) {
                return Ok(());
            }
            // flashfs's guard: UBIFS's arithmetic makes every EAGAIN a real
            // gain; flashfs's may gain a few bytes per GC or commit, so at
            // most MAX_SPACE_AGAIN of them per operation.
            if again < MAX_SPACE_AGAIN && self.make_free_space()? {
                again += 1;
                continue;
            }
            if !retried {
                // "-ENOSPC, but anyway try once again"
                retried = true;
                continue;
            }
            return Err(Errno::ENOSPC.into());
        }
    }

    /// Whether an operation writing `node_bytes` fits the budget now
    /// (`do_budget_space`'s test, in flashfs's arithmetic).
    pub(crate) fn budget_fits(&self, node_bytes: u64, deletion: bool) -> bool {
        let maxn = self.geo.max_node_bytes() as u64;
        let switches = node_bytes / (self.geo.leb_bytes as u64 - maxn) + 2;
        let need = node_bytes + switches * maxn + self.geo.min_io as u64;
        self.headroom(deletion) >= need as i64
    }

    /// Bytes the budget can still hand out: reclaimable space less the
    /// reserves and the space promised to dirty pages (UBIFS's liability).
    fn headroom(&self, deletion: bool) -> i64 {
        self.reclaimable_bytes() as i64 - self.reserve_bytes(deletion) as i64 - self.reserved_bytes as i64
    }

    /// `make_free_space` (budget.c) with nothing to write back (the page
    /// cache runs its own `shrink_liability` first, `flashlab-vfs`): up to
    /// `MAX_MKSPC_RETRIES` + 1 rounds of `run_gc`, and when GC cannot help,
    /// `ubifs_run_commit`. True when space was made (try again).
    pub(crate) fn make_free_space(&mut self) -> FsResult<bool> {
        for _ in 0..=MAX_MKSPC_RETRIES {
            if self.run_gc()? {
                return Ok(true);
            }
            self.space_commit()?;
        }
        Ok(false)
    }

    /// `run_gc` (budget.c → `ubifs_garbage_collect(c, 1)`): true when it
    /// made space the budget counts. One difference first: UBIFS's budget
    /// counts the free and dirty space of every LEB at once, buds of the
    /// open journal included; flashfs's counts a bud's only after the
    /// commit that ends it. So when closed buds hold such space, the commit
    /// that makes it count comes before any GC (UBIFS needs no work for it).
    /// GC then frees one LEB; it counts as progress only if the budget
    /// gained by it (flashfs's budget counts dirty space as available less
    /// `min_io` per LEB where UBIFS subtracts dark space, so a freed LEB may
    /// gain nothing here).
    pub(crate) fn run_gc(&mut self) -> FsResult<bool> {
        let before = self.headroom(false);
        if self.closed_buds_hold_space() {
            self.space_commit()?;
            if self.headroom(false) > before {
                return Ok(true);
            }
        }
        // A victim whose live nodes need a new GC-head LEB costs the budget
        // that LEB (flashfs does not count the GC head's free space), so
        // only a victim that fits the GC head can gain: GC only then.
        if !self.gc_victim_fits_head() {
            return Ok(false);
        }
        Ok(self.gc_once()? && self.headroom(false) > before)
    }

    /// Whether a bud no head writes to has free or dirty space beyond a
    /// page (which the budget counts once a commit ends the bud).
    fn closed_buds_hold_space(&self) -> bool {
        let io = self.geo.min_io;
        (self.geo.main_first..self.geo.leb_count).any(|l| {
            let p = self.lp[l as usize];
            p.flags & F_BUD != 0 && p.free + p.dirty > io && !self.heads.iter().any(|h| h.lnum == Some(l))
        })
    }

    /// The commit of `make_free_space`: `ubifs_run_commit` (nothing when
    /// there is nothing to commit); with a delayed hot journal holding buds,
    /// a full commit, since hot buds become reclaimable only then.
    pub(crate) fn space_commit(&mut self) -> FsResult<()> {
        if self.nothing_to_commit() {
            return Ok(());
        }
        if self.hot.buds.is_empty() {
            self.run_commit()
        } else {
            self.commit_full()
        }
    }
}

fn is_enospc(r: &FsResult<()>) -> bool {
    matches!(r, Err(e) if e.errno() == Errno::ENOSPC)
}

/// budget.c: how many more times `make_free_space` repeats its round.
const MAX_MKSPC_RETRIES: u32 = 3;
/// Space-making retries one operation may take (flashfs's guard, see
/// `budget_space`); the page cache keeps the same bound.
const MAX_SPACE_AGAIN: u32 = 4;
