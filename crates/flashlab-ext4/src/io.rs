//! Requests to the SSD at the file system's simulated clock.
//!
//! Writes are submitted without waiting (the block layer's asynchronous
//! `submit_bio`); a foreground submitter waits only when the device queue
//! holds `queue_depth` requests (no free tag, `blk_mq_get_tag`). The clock
//! waits for completions where Linux waits: a read, fsync, sync, a forced
//! commit, a checkpoint. Background work (kjournald's timed commit, the
//! flusher's metadata writeback) is issued at the clock but nobody waits.
//!
//! Data writes go through a plug (`blk_start_plug` in `wb_writeback`, held
//! across the inodes of a writeback pass): a write starting where the
//! plugged one ends joins it (`blk_attempt_plug_merge` tries the last
//! request), up to `MAX_REQUEST_BLOCKS`; the plug is sent before any other
//! request, device flush or file-system call (`blk_finish_plug`).

use crate::error::Ext4Result;
use crate::fs::Ext4;
use crate::layout::BLOCK;
use crate::stats::Cause;
use flashlab_sim::Op;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Longest request (blocks): the block layer splits bios at 512 KiB
/// (`max_sectors_kb`).
pub const MAX_REQUEST_BLOCKS: u64 = 128;

/// One request as sent (recorded for tests when asked).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Req {
    pub cause: Cause,
    pub op: Op,
    pub block: u64,
    pub blocks: u64,
}

/// A device cache flush, in the recorded sequence, is `blocks == 0`.
pub const FLUSH_BLOCK: u64 = u64::MAX;

#[derive(Debug, Default)]
pub(crate) struct Io {
    /// The file system's simulated clock (ns).
    pub clock_ns: u64,
    /// Time callers waited for the device (ns).
    pub busy_ns: u64,
    /// Completion times of requests in flight.
    inflight: BinaryHeap<Reverse<u64>>,
    /// Latest completion of anything submitted.
    pub last_done_ns: u64,
    pub log: Option<Vec<Req>>,
    /// Workload phases begun while recording: (name, index into `log`).
    pub marks: Vec<(String, usize)>,
    /// The plugged data write (first block, blocks).
    plug: Option<(u64, u64)>,
}

impl Ext4 {
    /// Foreground submission of `blocks` blocks from `block` (split at
    /// `MAX_REQUEST_BLOCKS`); returns the last completion.
    pub(crate) fn submit_now(&mut self, op: Op, block: u64, blocks: u64, cause: Cause) -> Ext4Result<u64> {
        self.unplug()?;
        let mut done = self.io.clock_ns;
        let mut b = block;
        while b < block + blocks {
            let n = (block + blocks - b).min(MAX_REQUEST_BLOCKS);
            self.queue_slot()?;
            done = done.max(self.submit_one(op, b, n, cause, self.io.clock_ns)?);
            b += n;
        }
        Ok(done)
    }

    /// Background submission at `at_ns` (nobody waits); returns the completion.
    pub(crate) fn submit_at(&mut self, op: Op, block: u64, blocks: u64, cause: Cause, at_ns: u64) -> Ext4Result<u64> {
        self.unplug()?;
        let mut done = at_ns;
        let mut b = block;
        while b < block + blocks {
            let n = (block + blocks - b).min(MAX_REQUEST_BLOCKS);
            done = done.max(self.submit_one(op, b, n, cause, at_ns)?);
            b += n;
        }
        Ok(done)
    }

    /// A data write into the plug: joins the plugged request when it starts
    /// where that ends (up to `MAX_REQUEST_BLOCKS`), else sends it and
    /// plugs this one.
    pub(crate) fn plug_write(&mut self, block: u64, blocks: u64) -> Ext4Result<()> {
        let (mut b, end) = (block, block + blocks);
        while b < end {
            if let Some((s, n)) = self.io.plug {
                if s + n == b && n < MAX_REQUEST_BLOCKS {
                    let add = (end - b).min(MAX_REQUEST_BLOCKS - n);
                    self.io.plug = Some((s, n + add));
                    b += add;
                    continue;
                }
                self.unplug()?;
            }
            let add = (end - b).min(MAX_REQUEST_BLOCKS);
            self.io.plug = Some((b, add));
            b += add;
        }
        Ok(())
    }

    /// `blk_finish_plug`: the plugged data write goes to the device.
    pub(crate) fn unplug(&mut self) -> Ext4Result<()> {
        if let Some((s, n)) = self.io.plug.take() {
            self.submit_now(Op::Write, s, n, Cause::Data)?;
        }
        Ok(())
    }

    fn submit_one(&mut self, op: Op, block: u64, n: u64, cause: Cause, at: u64) -> Ext4Result<u64> {
        let c = self.ssd.submit(op, block * BLOCK, n * BLOCK, at)?;
        let done = c.done_ns.unwrap_or(at);
        self.io.inflight.push(Reverse(done));
        self.io.last_done_ns = self.io.last_done_ns.max(done);
        self.stats.count(cause, n);
        if let Some(log) = self.io.log.as_mut() {
            log.push(Req { cause, op, block, blocks: n });
        }
        Ok(done)
    }

    /// Waits (charged) until a queue slot is free.
    fn queue_slot(&mut self) -> Ext4Result<()> {
        let now = self.io.clock_ns;
        while self.io.inflight.peek().is_some_and(|r| r.0 <= now) {
            self.io.inflight.pop();
        }
        if self.io.inflight.len() >= self.s.queue_depth as usize {
            let Reverse(t) = self.io.inflight.pop().unwrap_or(Reverse(now));
            self.wait_until(t);
        }
        Ok(())
    }

    /// The clock waits until `t` (the caller is charged).
    pub(crate) fn wait_until(&mut self, t: u64) {
        if t > self.io.clock_ns {
            self.io.busy_ns += t - self.io.clock_ns;
            self.io.clock_ns = t;
        }
    }

    /// Waits for everything in flight (`filemap_fdatawait` / jbd2's waits).
    pub(crate) fn wait_all(&mut self) {
        self.wait_until(self.io.last_done_ns);
        self.io.inflight.clear();
    }

    /// A device cache flush (`REQ_PREFLUSH`) issued at `at_ns`; returns its completion.
    pub(crate) fn flush_at(&mut self, at_ns: u64) -> Ext4Result<u64> {
        self.unplug()?;
        let done = self.ssd.flush(at_ns)?.unwrap_or(at_ns).max(at_ns);
        self.io.last_done_ns = self.io.last_done_ns.max(done);
        self.stats.device_flushes += 1;
        if let Some(log) = self.io.log.as_mut() {
            log.push(Req { cause: Cause::Journal, op: Op::Write, block: FLUSH_BLOCK, blocks: 0 });
        }
        Ok(done)
    }

    /// Writes `blocks` (any order) where they live, coalescing neighbours;
    /// foreground (charged, waited) or background at the clock.
    pub(crate) fn write_blocks(&mut self, blocks: &mut [u64], cause: Cause, fg: bool) -> Ext4Result<u64> {
        blocks.sort_unstable();
        let mut done = self.io.clock_ns;
        let mut i = 0;
        while i < blocks.len() {
            let mut j = i + 1;
            while j < blocks.len() && blocks[j] == blocks[j - 1] + 1 {
                j += 1;
            }
            let n = (j - i) as u64;
            let d = if fg {
                self.submit_now(Op::Write, blocks[i], n, cause)?
            } else {
                self.submit_at(Op::Write, blocks[i], n, cause, self.io.clock_ns)?
            };
            done = done.max(d);
            i = j;
        }
        Ok(done)
    }

    /// Starts recording every request sent (for tests); returns what was recorded so far.
    pub fn record_requests(&mut self, on: bool) -> Vec<Req> {
        let old = self.io.log.take().unwrap_or_default();
        self.io.log = on.then(Vec::new);
        old
    }

    /// Notes that workload phase `name` begins at the current end of the
    /// request log (only while recording).
    pub fn mark_phase(&mut self, name: &str) {
        if let Some(log) = &self.io.log {
            self.io.marks.push((name.to_string(), log.len()));
        }
    }

    /// The phases marked since recording began, as (name, index of the
    /// phase's first request in the recorded log); takes them.
    pub fn take_phase_marks(&mut self) -> Vec<(String, usize)> {
        std::mem::take(&mut self.io.marks)
    }
}
