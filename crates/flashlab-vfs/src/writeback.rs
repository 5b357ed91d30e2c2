//! Writeback, as Linux's flusher does it (fs/fs-writeback.c,
//! mm/page-writeback.c), with UBIFS's page-write rule:
//! - periodic flush every `dirty_writeback_centisecs` (`wb_workfn` →
//!   `wb_check_old_data_flush`): inodes dirty for longer than
//!   `dirty_expire_centisecs` are written back, oldest first;
//! - background flush (`wb_check_background_flush`, started by
//!   `balance_dirty_pages` once dirty pages pass the background threshold):
//!   oldest inodes first until dirty pages are below it again; a writer past
//!   `dirty_ratio` is throttled until then (one device here, so the same
//!   work, done before the writer continues);
//! - memory pressure: with no clean page left to reclaim, the oldest dirty
//!   inode is written back;
//! - one inode (`writeback_single_inode`): its dirty pages in index order
//!   (`do_writepages`), then the inode if still dirty (`write_inode`). A
//!   page at or past the size last written makes UBIFS write the inode
//!   first (`ubifs_writepage`), so a file grown by many writes costs one
//!   inode write.

use crate::cache::{PageCache, Reason};
use crate::types::{FileSystem, PAGE_BYTES};

impl<F: FileSystem> PageCache<F> {
    /// Dirty inodes that can be written back, oldest first (by
    /// `dirtied_ns`, then inode number).
    fn dirty_inodes(&self, older_than_ns: Option<u64>) -> Vec<u32> {
        self.writable_dirty(older_than_ns).collect()
    }

    /// [`Self::dirty_inodes`] as an iterator over the dirty order: the
    /// inodes whose `dirtied_ns` is set, oldest first, that are not unlinked
    /// and hold a dirty page or are dirty themselves.
    fn writable_dirty(&self, older_than_ns: Option<u64>) -> impl Iterator<Item = u32> + '_ {
        let cut = older_than_ns.unwrap_or(u64::MAX);
        self.dirty_order.iter().take_while(move |(t, _)| *t <= cut).map(|(_, n)| *n).filter(|n| {
            let i = &self.inodes[n];
            !i.unlinked && (i.dirty || i.pages.dirty_count() > 0)
        })
    }

    /// Checks the dirty order against the cached inodes: it holds exactly
    /// `(dirtied_ns, inode)` of each inode with `dirtied_ns` set, and the
    /// writable inodes it gives are those a sort of every cached inode
    /// gives (the walk it replaced). For tests.
    #[doc(hidden)]
    pub fn check_dirty_order(&self) -> Result<(), String> {
        let mut want: Vec<(u64, u32)> = self.inodes.iter().filter_map(|(n, i)| i.dirtied_ns.map(|t| (t, *n))).collect();
        want.sort_unstable();
        if !want.iter().eq(self.dirty_order.iter()) {
            return Err(format!("dirty order {:?}, inodes say {want:?}", self.dirty_order));
        }
        let walk: Vec<u32> = want
            .iter()
            .filter(|(_, n)| {
                let i = &self.inodes[n];
                !i.unlinked && (i.dirty || i.pages.dirty_count() > 0)
            })
            .map(|(_, n)| *n)
            .collect();
        let got = self.dirty_inodes(None);
        if got != walk {
            return Err(format!("writable dirty inodes {got:?}, a walk gives {walk:?}"));
        }
        Ok(())
    }

    /// The oldest inode [`Self::dirty_inodes`] would give.
    fn oldest_dirty(&self) -> Option<u32> {
        self.writable_dirty(None).next()
    }

    /// The periodic flush (kupdate): expired inodes, then the background
    /// check.
    pub(crate) fn periodic(&mut self) -> Result<(), F::Error> {
        self.next_flush_ns += self.cfg.writeback_interval_ns();
        // The flusher issues its writeback when it wakes, not at the file
        // system's last call: its clock moves to the wake-up first.
        self.fs.advance_to(self.now_ns)?;
        if let Some(cut) = self.now_ns.checked_sub(self.cfg.expire_ns()) {
            for inum in self.dirty_inodes(Some(cut)) {
                self.write_back_inode(inum, Reason::Periodic)?;
            }
        }
        self.background()
    }

    /// `balance_dirty_pages` after a write.
    pub(crate) fn balance_dirty_pages(&mut self) -> Result<(), F::Error> {
        self.background()
    }

    /// Background writeback while dirty pages exceed the background threshold.
    fn background(&mut self) -> Result<(), F::Error> {
        let thresh = self.cfg.background_thresh_pages();
        if self.dirty_pages <= thresh {
            return Ok(());
        }
        // Oldest first until under the threshold. Writing an inode back
        // takes it out of the dirty order and changes no other inode, so
        // taking the oldest each time visits the inodes in the order a
        // list made before the loop would (without building that list on
        // every write).
        while self.dirty_pages > thresh {
            let Some(inum) = self.oldest_dirty() else { break };
            self.write_back_inode(inum, Reason::Background)?;
        }
        Ok(())
    }

    /// Writes back the oldest dirty inode (memory pressure).
    pub(crate) fn write_back_oldest(&mut self, why: Reason) -> Result<(), F::Error> {
        if let Some(inum) = self.oldest_dirty() {
            self.write_back_inode(inum, why)?;
        }
        Ok(())
    }

    /// `shrink_liability` (budget.c → `writeback_inodes_sb_nr`): writes back
    /// whole dirty inodes, oldest first, until `nr_to_write` pages are
    /// written (an inode's pages are written together, as
    /// `writeback_sb_inodes` does).
    pub(crate) fn shrink_liability(&mut self, nr_to_write: u64) -> Result<(), F::Error> {
        let goal = self.dirty_pages.saturating_sub(nr_to_write);
        while self.dirty_pages > goal {
            let Some(inum) = self.oldest_dirty() else { break };
            self.write_back_inode(inum, Reason::Pressure)?;
        }
        Ok(())
    }

    /// Writes back every dirty inode, oldest first.
    pub(crate) fn write_back_all(&mut self, why: Reason) -> Result<(), F::Error> {
        for inum in self.dirty_inodes(None) {
            self.write_back_inode(inum, why)?;
        }
        Ok(())
    }

    /// `writeback_single_inode` with `ubifs_writepage`'s rule.
    pub(crate) fn write_back_inode(&mut self, inum: u32, why: Reason) -> Result<(), F::Error> {
        let Some(ino) = self.inodes.get(&inum) else { return Ok(()) };
        if ino.unlinked {
            return Ok(());
        }
        let mut pages = Vec::new();
        ino.pages.dirty_indices(&mut pages);
        for index in pages {
            let (size, synced, dirty) = {
                let i = &self.inodes[&inum];
                (i.size, i.synced_size, i.dirty)
            };
            // ubifs_writepage: a page (or the page straddling i_size) that
            // reaches past the size on flash needs the inode written first.
            let valid = size.saturating_sub(index * PAGE_BYTES).min(PAGE_BYTES) as usize;
            if dirty && index * PAGE_BYTES + valid as u64 > synced {
                self.write_inode_now(inum)?;
            }
            self.writepage_cached((inum, index), valid)?;
            self.mark_clean((inum, index));
            self.count(why);
        }
        if self.inodes.get(&inum).is_some_and(|i| i.dirty) {
            self.write_inode_now(inum)?;
        }
        if let Some(t) = self.inodes.get_mut(&inum).and_then(|i| i.dirtied_ns.take()) {
            self.dirty_order.remove(&(t, inum));
        }
        Ok(())
    }

    fn write_inode_now(&mut self, inum: u32) -> Result<(), F::Error> {
        let size = self.inodes[&inum].size;
        self.fs.write_inode(inum, size)?;
        if let Some(i) = self.inodes.get_mut(&inum) {
            i.dirty = false;
            i.synced_size = size;
        }
        self.stats.inodes_written += 1;
        Ok(())
    }

    fn count(&mut self, why: Reason) {
        let s = &mut self.stats;
        match why {
            Reason::Periodic => s.pages_written_periodic += 1,
            Reason::Background => s.pages_written_background += 1,
            Reason::Fsync => s.pages_written_fsync += 1,
            Reason::Sync => s.pages_written_sync += 1,
            Reason::Pressure => s.pages_written_pressure += 1,
        }
    }
}
