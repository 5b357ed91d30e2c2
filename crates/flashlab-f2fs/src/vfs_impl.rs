//! The F2FS model behind the shared file-system API, with the page
//! cache's hooks: `writepage` is `f2fs_write_data_page`, `write_inode`
//! dirties the inode page (`f2fs_write_inode`), `fsync_begin` sets
//! `FI_NEED_IPU` as `f2fs_do_sync_file` does, page reservations are
//! counted against the user blocks (`inc_valid_block_count`).

use crate::error::{F2fsError, F2fsResult};
use crate::fs::{CpReason, F2fs};
use flashlab_vfs::{DirEntry, Errno, Fd, FileSystem, Stat, StatFs};

impl F2fs {
    /// Runs a call; in strict mode the invariants are checked after it.
    fn run<T>(&mut self, f: impl FnOnce(&mut F2fs) -> F2fsResult<T>) -> F2fsResult<T> {
        let r = f(self);
        if self.cfg.strict {
            self.check()?;
        }
        r
    }

    /// `f2fs_sync_fs`: a checkpoint if anything changed.
    pub fn sync(&mut self) -> F2fsResult<()> {
        if self.dirty_since_cp || self.nm.dirty_count() > 0 || !self.dirty_dents.is_empty() {
            self.checkpoint(CpReason::Sync)?;
        }
        self.io.flush()
    }

    pub fn fsync(&mut self, fd: Fd) -> F2fsResult<()> {
        let ino = self.fd_ino(fd)?;
        self.do_fsync(ino)
    }

    /// Moves the clock to `now_ns` and runs the timers due.
    pub fn advance_to(&mut self, now_ns: u64) -> F2fsResult<()> {
        self.run_timers(now_ns)
    }
}

impl FileSystem for F2fs {
    type Error = F2fsError;

    fn errno(e: &F2fsError) -> Errno {
        e.errno()
    }

    fn create(&mut self, path: &str) -> F2fsResult<Fd> {
        self.run(|fs| {
            fs.need_path(path)?;
            F2fs::create(fs, path)
        })
    }

    fn open(&mut self, path: &str) -> F2fsResult<Fd> {
        self.run(|fs| {
            fs.need_path(path)?;
            F2fs::open(fs, path)
        })
    }

    fn close(&mut self, fd: Fd) -> F2fsResult<()> {
        self.run(|fs| F2fs::close(fs, fd))
    }

    fn read(&mut self, fd: Fd, offset: u64, len: usize) -> F2fsResult<Vec<u8>> {
        self.run(|fs| F2fs::read(fs, fd, offset, len))
    }

    fn write(&mut self, fd: Fd, offset: u64, data: &[u8]) -> F2fsResult<usize> {
        self.run(|fs| F2fs::write(fs, fd, offset, data))
    }

    fn truncate(&mut self, path: &str, size: u64) -> F2fsResult<()> {
        self.run(|fs| {
            fs.need_path(path)?;
            F2fs::truncate(fs, path, size)
        })
    }

    fn ftruncate(&mut self, fd: Fd, size: u64) -> F2fsResult<()> {
        self.run(|fs| F2fs::ftruncate(fs, fd, size))
    }

    fn unlink(&mut self, path: &str) -> F2fsResult<()> {
        self.run(|fs| {
            fs.need_path(path)?;
            F2fs::unlink(fs, path)
        })
    }

    fn mkdir(&mut self, path: &str) -> F2fsResult<()> {
        self.run(|fs| {
            fs.need_path(path)?;
            F2fs::mkdir(fs, path)
        })
    }

    fn rmdir(&mut self, path: &str) -> F2fsResult<()> {
        self.run(|fs| {
            fs.need_path(path)?;
            F2fs::rmdir(fs, path)
        })
    }

    fn rename(&mut self, from: &str, to: &str) -> F2fsResult<()> {
        self.run(|fs| {
            fs.need_path(from)?;
            fs.need_path(to)?;
            F2fs::rename(fs, from, to)
        })
    }

    fn readdir(&mut self, path: &str) -> F2fsResult<Vec<DirEntry>> {
        self.need_path(path)?;
        self.need_readdir(path)?;
        F2fs::readdir(self, path)
    }

    fn stat(&mut self, path: &str) -> F2fsResult<Stat> {
        self.need_path(path)?;
        F2fs::stat(self, path)
    }

    fn fstat(&mut self, fd: Fd) -> F2fsResult<Stat> {
        F2fs::fstat(self, fd)
    }

    fn fsync(&mut self, fd: Fd) -> F2fsResult<()> {
        self.run(|fs| F2fs::fsync(fs, fd))
    }

    fn sync(&mut self) -> F2fsResult<()> {
        self.run(F2fs::sync)
    }

    fn statfs(&self) -> StatFs {
        F2fs::statfs(self)
    }

    fn commit(&mut self) -> F2fsResult<()> {
        self.run(|fs| fs.checkpoint(CpReason::Sync))
    }

    fn writepage(&mut self, inum: u32, index: u64, data: &[u8]) -> F2fsResult<()> {
        self.run(|fs| fs.writepage_ino(inum, index, data))
    }

    fn write_inode(&mut self, inum: u32, size: u64) -> F2fsResult<()> {
        self.run(|fs| fs.write_inode_size(inum, size))
    }

    fn fsync_begin(&mut self, inum: u32, dirty_pages: u64) {
        let min = self.cfg.min_fsync_blocks as u64;
        if let Some(i) = self.inodes.get_mut(&inum) {
            i.need_ipu = dirty_pages <= min;
        }
    }

    fn reserve_pages(&mut self, pages: u64) -> F2fsResult<()> {
        if self.used_blocks() + self.reserved_pages + pages > self.lay.user_block_count {
            self.stats.enospc += 1;
            return Err(Errno::ENOSPC.into());
        }
        self.reserved_pages += pages;
        Ok(())
    }

    fn release_pages(&mut self, pages: u64) {
        self.reserved_pages = self.reserved_pages.saturating_sub(pages);
    }

    fn device_busy_ns(&self) -> u64 {
        self.io.waited_ns
    }

    fn fs_clock_ns(&self) -> Option<u64> {
        Some(self.io.clock_ns)
    }

    /// `drop_caches`: clean node, NAT and dentry pages, clean NAT entries
    /// and unpinned inodes leave the caches.
    fn drop_caches(&mut self) -> F2fsResult<()> {
        self.io.submit_all()?;
        self.meta_drop_clean();
        Ok(())
    }

    fn advance_to(&mut self, now_ns: u64) -> F2fsResult<()> {
        self.run(|fs| F2fs::advance_to(fs, now_ns))
    }
}
