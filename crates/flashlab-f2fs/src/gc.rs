//! Cleaning (gc.c): foreground greedy cleaning when free sections run out
//! (`f2fs_balance_fs` → `f2fs_gc(FG_GC)`), background cost-benefit
//! cleaning on an idle timer (`gc_thread_func`), both moving a victim
//! section's valid blocks (`do_garbage_collect`: data to the cold data
//! log, nodes to their own logs) after reading them.

use crate::error::F2fsResult;
use crate::fs::{CpReason, F2fs, Src};
use crate::layout::BLKS_PER_SEG;
use crate::seg::NONE;
use crate::temp::{DataWrite, LogType};
use flashlab_vfs::Errno;

/// Victim selection (`gc_mode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Victim {
    /// Fewest valid blocks (`GC_GREEDY`, foreground).
    Greedy,
    /// `get_cb_cost` (background).
    CostBenefit,
}

impl F2fs {
    /// Valid blocks of section `sec` (`get_valid_blocks(…, true)`).
    fn sec_valid(&self, sec: u32) -> u32 {
        let s0 = sec * self.sm.segs_per_sec;
        (s0..s0 + self.sm.segs_per_sec).map(|s| self.sm.valid[s as usize] as u32).sum()
    }

    /// A section cleaning may take: in use, not open by a log
    /// (`sec_usage_check`), some block invalid, some still valid.
    fn is_candidate(&self, sec: u32) -> bool {
        let s0 = sec * self.sm.segs_per_sec;
        let segs = s0..s0 + self.sm.segs_per_sec;
        if segs.clone().any(|s| self.sm.open[s as usize]) || segs.clone().all(|s| self.sm.free[s as usize]) {
            return false;
        }
        let v = self.sec_valid(sec);
        v > 0 && v < self.lay.blks_per_sec()
    }

    /// `get_cb_cost`: `UINT_MAX − 100·(100 − u)·age / (100 + u)` with u the
    /// utilisation and age the section's mtime scaled between the oldest
    /// and newest (`sit_i->min_mtime`, `max_mtime`).
    fn cb_cost(&self, sec: u32, min_m: u64, max_m: u64) -> u64 {
        let s0 = sec * self.sm.segs_per_sec;
        let n = self.sm.segs_per_sec as u64;
        let mtime = (s0..s0 + self.sm.segs_per_sec).map(|s| self.sm.mtime[s as usize]).sum::<u64>() / n;
        let u = self.sec_valid(sec) as u64 * 100 / self.lay.blks_per_sec() as u64;
        let age = if max_m > min_m { 100 - 100 * (mtime.clamp(min_m, max_m) - min_m) / (max_m - min_m) } else { 0 };
        u32::MAX as u64 - (100 * (100 - u) * age / (100 + u))
    }

    /// `get_victim_by_default`: the candidate section of least cost.
    pub(crate) fn select_victim(&self, how: Victim) -> Option<u32> {
        let secs = self.lay.section_count;
        let (min_m, max_m) = (0..self.sm.segs)
            .filter(|&s| !self.sm.free[s as usize])
            .map(|s| self.sm.mtime[s as usize])
            .fold((u64::MAX, 0), |(a, b), m| (a.min(m), b.max(m)));
        (0..secs).filter(|&s| self.is_candidate(s)).min_by_key(|&s| match how {
            Victim::Greedy => self.sec_valid(s) as u64,
            Victim::CostBenefit => self.cb_cost(s, min_m, max_m),
        })
    }

    /// `do_garbage_collect` of one section: reads its valid blocks (one
    /// request per contiguous run, waited for), then moves each.
    pub(crate) fn clean_section(&mut self, sec: u32) -> F2fsResult<u32> {
        let s0 = sec * self.sm.segs_per_sec;
        let blocks: Vec<u32> =
            (s0 * BLKS_PER_SEG..(s0 + self.sm.segs_per_sec) * BLKS_PER_SEG).filter(|&b| self.sm.is_valid(b)).collect();
        self.io.submit_all()?;
        let mut done = 0;
        let mut i = 0;
        while i < blocks.len() {
            let mut j = i + 1;
            while j < blocks.len() && blocks[j] == blocks[j - 1] + 1 {
                j += 1;
            }
            done = done.max(self.io.read(self.dev_blk(blocks[i]), (j - i) as u64)?);
            i = j;
        }
        self.io.wait_for(done);
        self.stats.gc_blocks_read += blocks.len() as u64;
        self.sm.gc_victim_sec = sec;
        let r = self.move_blocks(&blocks);
        self.sm.gc_victim_sec = NONE;
        r?;
        Ok(blocks.len() as u32)
    }

    /// `gc_data_segment` / `gc_node_segment`: each still-valid block moves.
    fn move_blocks(&mut self, blocks: &[u32]) -> F2fsResult<()> {
        for &b in blocks {
            if !self.sm.is_valid(b) {
                continue;
            }
            let seg = b / BLKS_PER_SEG;
            let owner = self.sm.owner[b as usize];
            if LogType::from_u8(self.sm.seg_type[seg as usize]).is_data() {
                let idx = self.sm.ofs[b as usize] as u64;
                self.write_data_block(owner, idx, Src::Copy(b), DataWrite::GcMoved)?;
            } else {
                self.write_node(owner, true)?;
            }
        }
        Ok(())
    }

    /// `f2fs_balance_fs`: foreground cleaning while free sections are short;
    /// prefree segments are first turned free by a checkpoint, and a
    /// checkpoint ends the cleaning (`f2fs_gc`).
    pub(crate) fn balance_fs(&mut self) -> F2fsResult<()> {
        if !self.not_enough_free(0) {
            return Ok(());
        }
        let mut freed = 0;
        let mut checkpointed = false;
        while self.not_enough_free(freed) {
            if freed == 0 && !checkpointed && self.sm.prefree_segments() > 0 {
                self.checkpoint(CpReason::Gc)?;
                checkpointed = true;
                continue;
            }
            let Some(sec) = self.select_victim(Victim::Greedy) else {
                break;
            };
            self.clean_section(sec)?;
            self.stats.fg_gc_sections += 1;
            freed += 1;
            checkpointed = false;
        }
        if freed > 0 {
            self.checkpoint(CpReason::Gc)?;
        }
        if self.sm.free_secs == 0 {
            self.stats.enospc += 1;
            return Err(Errno::ENOSPC.into());
        }
        Ok(())
    }

    /// One wake-up of the background cleaner at `t` (`gc_thread_func`):
    /// if the device has been idle for `idle_interval`, one section is
    /// cleaned by cost-benefit; the next wake-up follows the kernel's
    /// sleep-time rules.
    pub(crate) fn bg_gc_tick(&mut self, t: u64) -> F2fsResult<()> {
        let idle = t >= self.io.last_io_ns + self.cfg.idle_interval_s as u64 * 1_000_000_000;
        let (min, max) = (self.cfg.gc_min_sleep_ms, self.cfg.gc_max_sleep_ms);
        if !idle {
            // increase_sleep_time
            self.gc_wait_ms = (self.gc_wait_ms + min).min(max);
        } else {
            self.gc_wait_ms = match self.select_victim(Victim::CostBenefit) {
                Some(sec) => {
                    self.io.advance(t);
                    self.clean_section(sec)?;
                    self.stats.bg_gc_sections += 1;
                    // decrease_sleep_time
                    self.gc_wait_ms.saturating_sub(min).max(min)
                }
                None => self.cfg.gc_no_gc_sleep_ms,
            };
        }
        self.next_gc_ns = t + self.gc_wait_ms * 1_000_000;
        Ok(())
    }

    /// Blocks of section `sec` in use (for tests).
    pub fn section_valid_blocks(&self, sec: u32) -> u32 {
        self.sec_valid(sec)
    }

    /// Whether the current segment of log `t` is being filled by SSR.
    pub fn log_is_ssr(&self, t: LogType) -> bool {
        let c = self.sm.cur[t as usize];
        c.seg != NONE && c.ssr
    }
}
