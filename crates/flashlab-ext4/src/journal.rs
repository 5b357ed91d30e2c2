//! jbd2 in ordered mode (fs/jbd2/commit.c, fs/jbd2/checkpoint.c).
//!
//! Metadata blocks dirtied by file operations join the running transaction
//! (`jbd2_journal_dirty_metadata`). A commit (`jbd2_journal_commit_transaction`)
//! waits for the transaction's ordered data (already submitted at writeback),
//! writes revoke blocks, descriptor blocks each followed by the metadata
//! blocks it tags, then — after a cache flush — the commit block (FUA).
//! Committed metadata stays dirty in memory until the flusher writes it home
//! once expired, or a checkpoint (`jbd2_log_do_checkpoint`) does when the
//! journal has no room for the next commit; the journal tail then moves
//! (`jbd2_cleanup_journal_tail`, one journal-superblock write).

use crate::error::Ext4Result;
use crate::fs::Ext4;
use crate::layout::BLOCK;
use crate::stats::Cause;
use flashlab_sim::Op;
use std::collections::{HashMap, HashSet, VecDeque};

/// Tags per descriptor block: (4096 − 12 header − 4 tail − 16 UUID) / 16
/// (`journal_tag_bytes` with csum v3).
pub const TAGS_PER_DESCRIPTOR: u64 = 254;
/// Revoke records per revoke block: (4096 − 16 header − 4 tail) / 8 (64-bit).
pub const REVOKES_PER_BLOCK: u64 = 509;

/// A committed transaction whose blocks may still need writing home.
#[derive(Debug, Clone)]
pub(crate) struct Tx {
    pub tid: u64,
    /// Journal blocks it occupies.
    pub log_blocks: u64,
    pub commit_ns: u64,
    pub blocks: Vec<u64>,
    /// Of `blocks`, those whose newest copy is this transaction's and not yet home.
    pub live: usize,
}

#[derive(Debug, Default)]
pub(crate) struct Journal {
    /// Journal block i → device block.
    pub map: Vec<u64>,
    /// Next log block to write (1..len; block 0 is the journal superblock).
    pub head: u64,
    /// Log blocks held by committed transactions not yet released.
    pub used: u64,
    /// The running transaction's id.
    pub tid: u64,
    pub running: Vec<u64>,
    in_running: HashSet<u64>,
    pub revokes: u64,
    /// Runs freed by the running transaction (allocatable after its commit).
    pub freed: Vec<(u64, u64)>,
    pub started_ns: Option<u64>,
    pub committed: VecDeque<Tx>,
    /// Block → the committed transaction holding its newest unwritten copy.
    pub cp: HashMap<u64, u64>,
    /// Blocks written home by sync or the flusher whose buffers stay on the
    /// checkpoint list (held) until the next commit cleans it
    /// (`__jbd2_journal_clean_checkpoint_list`).
    pub cp_clean: Vec<u64>,
    pub interval_ns: u64,
    pub expire_ns: u64,
    pub next_flush_ns: u64,
}

impl Journal {
    pub fn init(&mut self, runs: &[(u64, u64)], commit_s: u32, expire_s: u32) {
        self.map = runs.iter().flat_map(|&(s, n)| s..s + n).collect();
        self.head = 1;
        self.tid = 1;
        self.interval_ns = commit_s as u64 * 1_000_000_000;
        self.expire_ns = expire_s as u64 * 1_000_000_000;
        self.next_flush_ns = 5_000_000_000;
    }

    pub fn reset_running(&mut self) {
        self.running.clear();
        self.in_running.clear();
        self.revokes = 0;
        self.freed.clear();
        self.started_ns = None;
    }

    /// Log blocks of the journal (less its superblock).
    pub fn capacity(&self) -> u64 {
        self.map.len() as u64 - 1
    }

    /// `j_max_transaction_buffers`: a quarter of the journal.
    pub fn max_tx_blocks(&self) -> u64 {
        self.map.len() as u64 / 4
    }

    pub fn dirty(&mut self, block: u64) {
        if self.in_running.insert(block) {
            self.running.push(block);
        }
    }

    /// `jbd2_journal_revoke` of a freed metadata block: it leaves the
    /// running transaction and every checkpoint list.
    pub fn revoke(&mut self, block: u64) {
        if self.in_running.remove(&block) {
            self.running.retain(|&b| b != block);
        }
        self.forget_cp(block);
        self.revokes += 1;
    }

    fn forget_cp(&mut self, block: u64) {
        if let Some(tid) = self.cp.remove(&block) {
            if let Some(t) = self.tx_mut(tid) {
                t.live -= 1;
            }
        }
    }

    fn tx_mut(&mut self, tid: u64) -> Option<&mut Tx> {
        let first = self.committed.front()?.tid;
        self.committed.get_mut((tid - first) as usize)
    }

    /// Journal blocks the running transaction needs.
    pub fn needed(&self) -> u64 {
        let n = self.running.len() as u64;
        self.revokes.div_ceil(REVOKES_PER_BLOCK) + n.div_ceil(TAGS_PER_DESCRIPTOR) + n + 1
    }

    /// Drops committed transactions at the tail with nothing left to write home.
    pub fn release_tail(&mut self) {
        while self.committed.front().is_some_and(|t| t.live == 0) {
            let t = self.committed.pop_front().unwrap_or_else(|| unreachable!());
            self.used -= t.log_blocks;
        }
    }

    /// Live blocks of transaction `t` (index), removed from the checkpoint lists.
    pub(crate) fn take_live(&mut self, i: usize) -> Vec<u64> {
        let tid = self.committed[i].tid;
        let blocks = std::mem::take(&mut self.committed[i].blocks);
        let live: Vec<u64> = blocks.into_iter().filter(|b| self.cp.get(b) == Some(&tid)).collect();
        for b in &live {
            self.cp.remove(b);
        }
        self.committed[i].live = 0;
        live
    }

    /// Device blocks of log positions `from..from+n` (wrapping past the end to block 1).
    fn log_blocks(&self, from: u64, n: u64) -> Vec<u64> {
        let cap = self.capacity();
        (0..n).map(|k| self.map[(1 + (from - 1 + k) % cap) as usize]).collect()
    }
}

impl Ext4 {
    /// Commits the running transaction. `fg`: the caller waits for it
    /// (fsync, sync, a full transaction); else kjournald does (timer).
    pub(crate) fn commit_tx(&mut self, fg: bool) -> Ext4Result<()> {
        if self.j.running.is_empty() && self.j.freed.is_empty() && self.j.revokes == 0 {
            return Ok(());
        }
        self.j.cp_clean.clear();
        let need = self.j.needed();
        self.make_room(need, fg)?;
        let blocks = std::mem::take(&mut self.j.running);
        let n = blocks.len() as u64;
        // Log: revoke blocks, then per descriptor its tagged metadata copies.
        let log = self.j.log_blocks(self.j.head, need);
        let body = &log[..(need - 1) as usize];
        let t0 = self.io.clock_ns;
        let mut done = self.write_log(body, fg, t0)?;
        // Ordered data and the log must be on the device before the commit
        // block: wait, flush the cache (REQ_PREFLUSH), write it with FUA.
        done = done.max(self.io.last_done_ns);
        let f = self.flush_at(done)?;
        let cb = self.submit_at(Op::Write, log[(need - 1) as usize], 1, Cause::Journal, f)?;
        let end = self.flush_at(cb)?;
        if fg {
            self.wait_all();
            self.wait_until(end);
        }
        // Checkpoint lists: each block's newest copy is this transaction's
        // (`__jbd2_journal_insert_checkpoint`, dropping the older entry).
        let tid = self.j.tid;
        for &b in &blocks {
            if let Some(old) = self.j.cp.insert(b, tid) {
                if let Some(t) = self.j.tx_mut(old) {
                    t.live -= 1;
                }
            }
        }
        self.j.committed.push_back(Tx { tid, log_blocks: need, commit_ns: end, live: n as usize, blocks });
        self.j.used += need;
        let cap = self.j.capacity();
        self.j.head = 1 + (self.j.head - 1 + need) % cap;
        // Blocks freed by the transaction are allocatable (and discarded).
        let freed = std::mem::take(&mut self.j.freed);
        for &(s, l) in &freed {
            self.release_run(s, l);
        }
        if self.s.discard {
            self.discard(&freed, fg, end)?;
        }
        self.j.release_tail();
        self.j.tid += 1;
        self.j.reset_running();
        self.stats.commits += 1;
        self.stats.commits_forced += fg as u64;
        if self.s.strict {
            self.check()?;
        }
        Ok(())
    }

    /// Writes log blocks (contiguous pieces as one request each).
    fn write_log(&mut self, log: &[u64], fg: bool, at: u64) -> Ext4Result<u64> {
        let mut done = at;
        let mut i = 0;
        while i < log.len() {
            let mut j = i + 1;
            while j < log.len() && log[j] == log[j - 1] + 1 {
                j += 1;
            }
            let n = (j - i) as u64;
            let d = if fg {
                self.submit_now(Op::Write, log[i], n, Cause::Journal)?
            } else {
                self.submit_at(Op::Write, log[i], n, Cause::Journal, at)?
            };
            done = done.max(d);
            i = j;
        }
        Ok(done)
    }

    /// `ext4_issue_discard` of the freed runs after the commit (`-o discard`).
    fn discard(&mut self, runs: &[(u64, u64)], fg: bool, at: u64) -> Ext4Result<()> {
        let mut done = at;
        for &(s, l) in runs {
            done = done.max(self.submit_at(Op::Trim, s, l, Cause::Discard, at)?);
        }
        if fg {
            self.wait_until(done);
        }
        Ok(())
    }

    /// `__jbd2_log_wait_for_space`: checkpoint the oldest transactions until
    /// `need` log blocks are free.
    fn make_room(&mut self, need: u64, fg: bool) -> Ext4Result<()> {
        self.j.release_tail();
        let mut moved = false;
        while self.j.capacity() - self.j.used < need && !self.j.committed.is_empty() {
            let mut live = self.j.take_live(0);
            self.write_blocks(&mut live, Cause::Checkpoint, fg)?;
            self.j.release_tail();
            self.stats.checkpoints += 1;
            moved = true;
        }
        if moved {
            // jbd2_update_log_tail: the journal superblock, after the
            // checkpointed blocks are on the device (PREFLUSH | FUA).
            let at = if fg {
                self.wait_all();
                self.io.clock_ns
            } else {
                self.io.last_done_ns
            };
            let f = self.flush_at(at)?;
            let sb = self.j.map[0];
            let d = self.submit_at(Op::Write, sb, 1, Cause::Checkpoint, f)?;
            if fg {
                self.wait_until(d);
            }
        }
        Ok(())
    }

    /// The running transaction is full (`jbd2_journal_start` finds it past
    /// `j_max_transaction_buffers`): commit it, the caller waiting.
    pub(crate) fn commit_if_full(&mut self) -> Ext4Result<()> {
        if self.j.needed() >= self.j.max_tx_blocks() {
            self.commit_tx(true)?;
        }
        Ok(())
    }

    /// Timers up to the clock: kjournald's commit `commit_interval_s` after
    /// the transaction started, and the flusher writing home metadata that
    /// has been dirty for `metadata_expire_s` (every 5 s, `wb_workfn`).
    pub(crate) fn run_timers(&mut self) -> Ext4Result<()> {
        let now = self.io.clock_ns;
        if self.j.started_ns.is_some_and(|t| t + self.j.interval_ns <= now) {
            self.commit_tx(false)?;
        }
        while self.j.next_flush_ns <= now {
            self.j.next_flush_ns += 5_000_000_000;
            if self.j.expire_ns == 0 {
                continue;
            }
            let cut = self.j.next_flush_ns.saturating_sub(5_000_000_000).saturating_sub(self.j.expire_ns);
            let mut home = Vec::new();
            for i in 0..self.j.committed.len() {
                if self.j.committed[i].commit_ns <= cut && self.j.committed[i].live > 0 {
                    home.extend(self.j.take_live(i));
                }
            }
            if !home.is_empty() {
                self.write_blocks(&mut home, Cause::Metadata, false)?;
                self.j.cp_clean.extend_from_slice(&home);
            }
            self.j.release_tail();
        }
        Ok(())
    }

    /// Marks the start of the running transaction (its commit timer).
    pub(crate) fn tx_started(&mut self) {
        if self.j.started_ns.is_none() && (!self.j.running.is_empty() || !self.j.freed.is_empty()) {
            self.j.started_ns = Some(self.io.clock_ns);
        }
    }

    /// Journal size in bytes.
    pub fn journal_bytes(&self) -> u64 {
        self.j.map.len() as u64 * BLOCK
    }
}
