//! Checkpoints (checkpoint.c, `f2fs_write_checkpoint`), roll-forward
//! fsync (file.c `f2fs_do_sync_file`), discard of freed segments, and the
//! timers `advance_to` runs.

use crate::error::F2fsResult;
use crate::fs::{CpReason, F2fs};
use crate::io::META;
use crate::layout::{BLKS_PER_SEG, SIT_ENTRY_PER_BLOCK};
use crate::temp::LogType;

/// Summary entries in the first compacted summary page
/// ((4096 − 2 × SUM_JOURNAL_SIZE − SUM_FOOTER_SIZE) / SUMMARY_SIZE).
const SUMS_FIRST_PAGE: u32 = 439;
/// In further pages ((4096 − SUM_FOOTER_SIZE) / SUMMARY_SIZE).
const SUMS_PER_PAGE: u32 = 584;
/// `SIT_JOURNAL_ENTRIES`: dirty SIT entries the CP's summary journal holds.
const SIT_JOURNAL_ENTRIES: usize = 6;

impl F2fs {
    /// `npages_for_summary_flush`: data summaries compacted into 1 or 2
    /// pages when they fit, else one page per data log.
    fn data_summary_blocks(&self) -> u64 {
        let n: u32 = LogType::DATA.iter().map(|t| self.sm.cur[*t as usize].off.min(BLKS_PER_SEG)).sum();
        if n <= SUMS_FIRST_PAGE {
            1
        } else if n - SUMS_FIRST_PAGE <= SUMS_PER_PAGE {
            2
        } else {
            3
        }
    }

    /// Writes block `off` of a two-copy metadata area (SIT, NAT) at the copy
    /// not in use (`__start_sit_addr` / `current_nat_addr` alternate).
    fn write_meta_pair(&mut self, base: u32, off: u32) -> F2fsResult<u64> {
        let seg = off / BLKS_PER_SEG;
        let copy = (self.cp_ver % 2) as u32;
        let blk = base + (seg * 2 + copy) * BLKS_PER_SEG + off % BLKS_PER_SEG;
        self.io.write(META, blk as u64)?;
        self.stats.checkpoint_blocks_written += 1;
        Ok(blk as u64)
    }

    /// `f2fs_write_checkpoint`: `block_operations` (dirty dentry pages,
    /// then every dirty node), wait for all writes, flush the dirty NAT
    /// and SIT entries (into the CP's journals when few), write the CP pack
    /// with a cache flush before and FUA on its last block, then free the
    /// prefree segments (discarding them) and take the new bitmaps.
    pub(crate) fn checkpoint(&mut self, why: CpReason) -> F2fsResult<()> {
        self.flush_dents()?;
        self.write_dirty_nodes()?;
        let orphans = self.inodes.values().filter(|i| i.nlink == 0).count() as u64;
        self.io.wait_all()?;
        let nids = self.nm.nat_dirty_list.clone();
        let nat_blocks = self.nm.checkpoint();
        self.meta_nat_flushed(&nids, nat_blocks.is_empty());
        for b in nat_blocks {
            let at = self.write_meta_pair(self.lay.nat_blkaddr, b)?;
            self.meta_nat_written(b, at);
        }
        let sit = std::mem::take(&mut self.sm.sit_dirty_list);
        if sit.len() > SIT_JOURNAL_ENTRIES {
            let mut blocks: Vec<u32> = sit.iter().map(|s| s / SIT_ENTRY_PER_BLOCK).collect();
            blocks.sort_unstable();
            blocks.dedup();
            for b in blocks {
                self.write_meta_pair(self.lay.sit_blkaddr, b)?;
            }
        }
        self.sm.sit_dirty_list = sit;
        // CP pack: cp page, data summaries, orphan blocks, then the last cp page.
        let body = 1 + self.data_summary_blocks() + orphans.div_ceil(1020);
        let start = self.lay.cp_blkaddr as u64 + (self.cp_ver % 2) * BLKS_PER_SEG as u64;
        for b in start..start + body {
            self.io.write(META, b)?;
        }
        self.io.flush()?;
        self.io.write(META, start + body)?;
        self.io.flush()?;
        self.stats.checkpoint_blocks_written += body + 1;
        let freed = self.sm.checkpoint();
        self.discard(&freed)?;
        self.cp_ver += 1;
        self.dirty_since_cp = false;
        self.last_cp_ns = self.io.clock_ns;
        self.stats.checkpoints += 1;
        match why {
            CpReason::Sync => self.stats.checkpoints_sync += 1,
            CpReason::Fsync => self.stats.checkpoints_fsync += 1,
            CpReason::Interval => self.stats.checkpoints_interval += 1,
            CpReason::Gc => self.stats.checkpoints_gc += 1,
        }
        Ok(())
    }

    /// TRIMs of the freed segments, one per contiguous run
    /// (`f2fs_clear_prefree_segments` → `f2fs_issue_discard`).
    fn discard(&mut self, segs: &[u32]) -> F2fsResult<()> {
        if !self.cfg.discard {
            return Ok(());
        }
        let mut i = 0;
        while i < segs.len() {
            let mut j = i + 1;
            while j < segs.len() && segs[j] == segs[j - 1] + 1 {
                j += 1;
            }
            let len = (j - i) as u64 * BLKS_PER_SEG as u64;
            self.io.trim(self.dev_blk(segs[i] * BLKS_PER_SEG), len)?;
            self.stats.discarded_blocks += len;
            i = j;
        }
        Ok(())
    }

    /// `f2fs_do_sync_file` after the page cache wrote the file's pages and
    /// inode: a checkpoint when the inode or its parent is not yet
    /// checkpointed (or is a directory or hard-linked); otherwise only the
    /// file's dirty direct nodes and inode, with the fsync mark
    /// (`f2fs_fsync_node_pages`), then a cache flush — recovery rolls
    /// forward from them.
    pub(crate) fn do_fsync(&mut self, ino: u32) -> F2fsResult<()> {
        let (need_cp, nodes) = {
            let i = self.ino(ino)?;
            let parent_new = self.inodes.get(&i.parent).is_some_and(|p| p.created_cp == self.cp_ver);
            let need = i.is_dir || i.nlink != 1 || i.created_cp == self.cp_ver || parent_new;
            let nodes: Vec<u32> = std::iter::once(ino).chain(i.dnodes.iter().copied()).filter(|&n| n != 0).collect();
            (need, nodes)
        };
        if need_cp {
            if self.dirty_since_cp || self.nm.dirty_count() > 0 || !self.dirty_dents.is_empty() {
                self.checkpoint(CpReason::Fsync)?;
            }
        } else {
            self.io.wait_all()?;
            for nid in nodes {
                if self.nm.is_dirty(nid) {
                    self.write_node(nid, false)?;
                    self.stats.fsync_node_blocks_written += 1;
                }
            }
            self.io.flush()?;
            self.stats.roll_forward_fsyncs += 1;
        }
        self.ino_mut(ino)?.need_ipu = false;
        Ok(())
    }

    /// Runs the timers due by `now_ns`: the background cleaner's wake-ups
    /// and the periodic checkpoint (`f2fs_balance_fs_bg`: `cp_interval`
    /// elapsed, or prefree segments past 5 % of the main area).
    pub(crate) fn run_timers(&mut self, now_ns: u64) -> F2fsResult<()> {
        if self.cfg.bg_gc {
            while self.next_gc_ns <= now_ns {
                let t = self.next_gc_ns;
                self.bg_gc_tick(t)?;
            }
        }
        self.io.advance(now_ns);
        let interval = self.cfg.cp_interval_s as u64 * 1_000_000_000;
        let due = self.io.clock_ns >= self.last_cp_ns + interval;
        let excess_prefree = self.sm.prefree_segments() as u64 * 100 >= 5 * self.lay.segment_count_main as u64;
        if self.dirty_since_cp && (due || excess_prefree) {
            self.checkpoint(CpReason::Interval)?;
        }
        Ok(())
    }
}
