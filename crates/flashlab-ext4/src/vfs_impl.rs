//! The ext4 model behind the shared file-system API. Every call first maps
//! and submits the writeback run collected so far and unplugs the plugged
//! data write (io.rs); after it, the running
//! transaction's commit timer starts and a full transaction commits.

use crate::error::{Ext4Error, Ext4Result};
use crate::fs::Ext4;
use crate::layout::BLOCK;
use crate::stats::Cause;
use flashlab_vfs::{DirEntry, Errno, Fd, FileSystem, Stat, StatFs};

impl Ext4 {
    fn run<T>(&mut self, f: impl FnOnce(&mut Self) -> Ext4Result<T>) -> Ext4Result<T> {
        self.flush_pending()?;
        self.unplug()?;
        let r = f(self);
        self.tx_started();
        self.commit_if_full()?;
        r
    }

    /// `ext4_sync_file`: commit the transaction that last changed the inode
    /// (`jbd2_complete_transaction`), else wait for the data and flush the
    /// device cache (`blkdev_issue_flush`).
    fn do_fsync(&mut self, inum: u32) -> Ext4Result<()> {
        let tid = self.inode(inum)?.sync_tid;
        if tid == self.j.tid && (!self.j.running.is_empty() || !self.j.freed.is_empty()) {
            self.commit_tx(true)
        } else {
            self.wait_all();
            let d = self.flush_at(self.io.clock_ns)?;
            self.wait_until(d);
            Ok(())
        }
    }

    /// `sync_filesystem` (fs/sync.c): `ext4_sync_fs` commits and waits (or
    /// flushes the cache if there is nothing to commit), then `sync_blockdev`
    /// writes the block device's dirty buffers — every committed metadata
    /// block not yet home — and waits for them.
    fn do_sync(&mut self) -> Ext4Result<()> {
        if !self.j.running.is_empty() || !self.j.freed.is_empty() || self.j.revokes > 0 {
            self.commit_tx(true)?;
        } else {
            self.wait_all();
            let d = self.flush_at(self.io.clock_ns)?;
            self.wait_until(d);
        }
        let mut home = Vec::new();
        for i in 0..self.j.committed.len() {
            if self.j.committed[i].live > 0 {
                home.extend(self.j.take_live(i));
            }
        }
        if !home.is_empty() {
            let done = self.write_blocks(&mut home, Cause::Metadata, true)?;
            self.wait_until(done);
            self.j.cp_clean.extend_from_slice(&home);
        }
        self.j.release_tail();
        Ok(())
    }

    fn do_close(&mut self, fd: Fd) -> Ext4Result<()> {
        let inum = self.fd_inum(fd)?;
        self.fds.remove(&fd);
        let ino = self.inode_mut(inum)?;
        ino.open = ino.open.saturating_sub(1);
        if ino.open == 0 && ino.nlink == 0 {
            // The last close of an unlinked file: off the orphan list, freed.
            self.touch_super();
            self.drop_inode(inum)?;
        }
        Ok(())
    }

    fn stat_of(&self, inum: u32) -> Ext4Result<Stat> {
        let i = self.inode(inum)?;
        Ok(Stat { inum, size: i.size, is_dir: i.is_dir, nlink: i.nlink })
    }
}

/// Largest file (ext4 with 4 KiB blocks: 2^32 blocks).
pub const MAX_FILE_BYTES: u64 = (1 << 32) * BLOCK;

impl FileSystem for Ext4 {
    type Error = Ext4Error;

    fn errno(e: &Ext4Error) -> Errno {
        e.errno()
    }

    fn create(&mut self, path: &str) -> Ext4Result<Fd> {
        self.run(|fs| {
            fs.need_path(path)?;
            fs.new_inode(path, false).map(|i| fs.new_fd(i))
        })
    }

    fn open(&mut self, path: &str) -> Ext4Result<Fd> {
        self.run(|fs| {
            fs.need_path(path)?;
            let inum = fs.lookup(path)?;
            if fs.inode(inum)?.is_dir {
                return Err(Errno::EISDIR.into());
            }
            Ok(fs.new_fd(inum))
        })
    }

    fn close(&mut self, fd: Fd) -> Ext4Result<()> {
        self.run(|fs| fs.do_close(fd))
    }

    fn read(&mut self, fd: Fd, offset: u64, len: usize) -> Ext4Result<Vec<u8>> {
        self.run(|fs| fs.do_read(fd, offset, len))
    }

    fn write(&mut self, fd: Fd, offset: u64, data: &[u8]) -> Ext4Result<usize> {
        self.run(|fs| fs.do_write(fd, offset, data))
    }

    fn truncate(&mut self, path: &str, size: u64) -> Ext4Result<()> {
        self.run(|fs| {
            fs.need_path(path)?;
            let inum = fs.lookup(path)?;
            fs.set_size(inum, size)
        })
    }

    fn ftruncate(&mut self, fd: Fd, size: u64) -> Ext4Result<()> {
        self.run(|fs| {
            let inum = fs.fd_inum(fd)?;
            fs.set_size(inum, size)
        })
    }

    fn unlink(&mut self, path: &str) -> Ext4Result<()> {
        self.run(|fs| {
            fs.need_path(path)?;
            fs.do_unlink(path)
        })
    }

    fn mkdir(&mut self, path: &str) -> Ext4Result<()> {
        self.run(|fs| {
            fs.need_path(path)?;
            fs.new_inode(path, true).map(|_| ())
        })
    }

    fn rmdir(&mut self, path: &str) -> Ext4Result<()> {
        self.run(|fs| {
            fs.need_path(path)?;
            fs.do_rmdir(path)
        })
    }

    fn rename(&mut self, from: &str, to: &str) -> Ext4Result<()> {
        self.run(|fs| {
            fs.need_path(from)?;
            fs.need_path(to)?;
            fs.do_rename(from, to)
        })
    }

    fn readdir(&mut self, path: &str) -> Ext4Result<Vec<DirEntry>> {
        self.run(|fs| {
            fs.need_path(path)?;
            fs.need_readdir(path)?;
            fs.do_readdir(path)
        })
    }

    fn stat(&mut self, path: &str) -> Ext4Result<Stat> {
        self.run(|fs| {
            fs.need_path(path)?;
            fs.lookup(path).and_then(|i| fs.stat_of(i))
        })
    }

    fn fstat(&mut self, fd: Fd) -> Ext4Result<Stat> {
        self.run(|fs| fs.fd_inum(fd).and_then(|i| fs.stat_of(i)))
    }

    fn fsync(&mut self, fd: Fd) -> Ext4Result<()> {
        self.run(|fs| fs.fd_inum(fd).and_then(|i| fs.do_fsync(i)))
    }

    fn sync(&mut self) -> Ext4Result<()> {
        self.run(|fs| fs.do_sync())
    }

    /// `ext4_statfs`: free less delayed-allocation reservations; available
    /// less the root reserve and ext4's reserved pool.
    fn statfs(&self) -> StatFs {
        let overhead: u64 =
            (0..self.lay.groups).map(|g| self.lay.meta_blocks_in(g)).sum::<u64>() + self.j.map.len() as u64;
        let free = (self.free_blocks() + self.pending_free_blocks())
            .saturating_sub(self.reserved + self.pending.tags.len() as u64);
        let avail = free.saturating_sub(self.lay.root_reserved_blocks + self.lay.resv_clusters);
        let empty =
            (0..self.lay.groups).filter(|&g| self.bfree[g as usize] == self.lay.data_blocks_in(g)).count() as u32;
        StatFs {
            block_bytes: BLOCK,
            total_bytes: (self.lay.blocks - overhead) * BLOCK,
            available_bytes: avail * BLOCK,
            free_bytes: free * BLOCK,
            leb_bytes: (self.lay.blocks_per_group * BLOCK).min(u32::MAX as u64) as u32,
            main_lebs: self.lay.groups,
            empty_lebs: empty,
        }
    }

    fn commit(&mut self) -> Ext4Result<()> {
        self.run(|fs| fs.commit_tx(true))
    }

    fn writepage(&mut self, inum: u32, index: u64, data: &[u8]) -> Ext4Result<()> {
        self.do_writepage(inum, index, data)
    }

    fn write_inode(&mut self, inum: u32, size: u64) -> Ext4Result<()> {
        let ino = self.inode_mut(inum)?;
        if ino.is_dir {
            return Err(Errno::EISDIR.into());
        }
        ino.size = size;
        self.touch_inode(inum)?;
        self.tx_started();
        Ok(())
    }

    fn reserve_pages(&mut self, pages: u64) -> Ext4Result<()> {
        self.reserve(pages)
    }

    fn release_pages(&mut self, pages: u64) {
        self.reserved = self.reserved.saturating_sub(pages);
    }

    fn device_busy_ns(&self) -> u64 {
        self.io.busy_ns
    }

    fn fs_clock_ns(&self) -> Option<u64> {
        Some(self.io.clock_ns)
    }

    /// `drop_caches`: the pending writeback run goes out first (its pages
    /// are the cache's), then every clean metadata buffer and unpinned inode.
    fn drop_caches(&mut self) -> Ext4Result<()> {
        self.run(|fs| {
            fs.meta_drop_clean();
            Ok(())
        })
    }

    fn advance_to(&mut self, now_ns: u64) -> Ext4Result<()> {
        self.run(|fs| {
            fs.io.clock_ns = fs.io.clock_ns.max(now_ns);
            fs.run_timers()
        })
    }
}
