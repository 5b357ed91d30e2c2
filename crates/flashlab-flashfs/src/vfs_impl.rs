//! flashfs behind the shared file-system API ([`flashlab_vfs::FileSystem`]),
//! with the hooks the page cache's writeback uses: one data node per page
//! (`ubifs_writepage` → `do_writepage`), the inode node (`ubifs_write_inode`),
//! and space budgeting of dirty pages (`ubifs_budget_space` for a new page).

use crate::api::BLOCK;
use crate::error::{Errno, FsError, FsResult};
use crate::fs::Fs;
use crate::hot::Class;
use crate::key::Key;
use flashlab_vfs::{DirEntry, Fd, FileSystem, Stat, StatFs, TailToken};

/// nandsim's delays (drivers/mtd/nand/raw/nandsim.c: `access_delay` 25 µs,
/// `programm_delay` 200 µs, `erase_delay` 2 ms): the device time a call
/// waits for under the page cache's simulated clock.
pub(crate) const READ_NS: u64 = 25_000;
const PROGRAM_NS: u64 = 200_000;
const ERASE_NS: u64 = 2_000_000;

/// The device time of the operations counted in `s` at nandsim's delays.
pub(crate) fn nandsim_busy_ns(s: &flashlab_mtd::MtdStats) -> u64 {
    s.pages_read.total() * READ_NS + s.pages_programmed.total() * PROGRAM_NS + s.erases.total() * ERASE_NS
}

/// The device time so far: nandsim's delays on raw NAND, the SSD's latencies
/// on block2mtd.
pub(crate) fn device_busy_ns(nand: &flashlab_mtd::Nand) -> u64 {
    match nand.block2mtd() {
        Some(b) => b.stats().busy_ns,
        None => nandsim_busy_ns(nand.stats()),
    }
}

impl Fs {
    /// Bytes budgeted per dirty page: the largest data node.
    fn page_budget_bytes(&self) -> u64 {
        self.geo.max_node_bytes() as u64
    }

    fn do_writepage(&mut self, inum: u32, index: u64, data: &[u8], tail: Option<TailToken>) -> FsResult<()> {
        if data.is_empty() {
            return Ok(());
        }
        if data.len() as u64 > BLOCK || index >= crate::api::MAX_FILE_BYTES / BLOCK {
            return Err(Errno::EINVAL.into());
        }
        let ino = self.inode(inum)?;
        // The page cache writes the inode first when a page lies past the
        // size on flash (`ubifs_writepage`), so no data node is ever past it.
        if ino.is_dir
            || index * BLOCK + data.len() as u64 > ino.size.max(index * BLOCK + BLOCK)
            || index * BLOCK >= ino.size
        {
            return Err(Errno::EINVAL.into());
        }
        let b = index as u32;
        let key = Key::data(inum, b);
        let h = self.pick_head(Class::Data, std::slice::from_ref(&key), &[]);
        let loc = self.journal_write_block(h, inum, b, data, tail)?;
        self.idx_set(h, &key, loc);
        self.counters.ops += 1;
        Ok(())
    }

    fn do_write_inode(&mut self, inum: u32, size: u64) -> FsResult<()> {
        if size > crate::api::MAX_FILE_BYTES {
            return Err(Errno::EFBIG.into());
        }
        // `ubifs_write_inode` (writeback) budgets nothing: UBIFS took the
        // inode's budget when it was dirtied (`ubifs_write_begin`'s
        // `dirtied_ino`); here the dirty pages' budget covers it.
        let ino = crate::node::InoNode { size, ..self.inode(inum)? };
        self.write_inode(&ino)?;
        self.counters.ops += 1;
        Ok(())
    }
}

impl FileSystem for Fs {
    type Error = FsError;
    const MAKE_FREE_SPACE: bool = true;

    fn errno(e: &FsError) -> Errno {
        e.errno()
    }

    fn create(&mut self, path: &str) -> FsResult<Fd> {
        Fs::create(self, path)
    }

    fn open(&mut self, path: &str) -> FsResult<Fd> {
        Fs::open(self, path)
    }

    fn close(&mut self, fd: Fd) -> FsResult<()> {
        Fs::close(self, fd)
    }

    fn read(&mut self, fd: Fd, offset: u64, len: usize) -> FsResult<Vec<u8>> {
        Fs::read(self, fd, offset, len)
    }

    fn write(&mut self, fd: Fd, offset: u64, data: &[u8]) -> FsResult<usize> {
        Fs::write(self, fd, offset, data)
    }

    fn truncate(&mut self, path: &str, size: u64) -> FsResult<()> {
        Fs::truncate(self, path, size)
    }

    fn ftruncate(&mut self, fd: Fd, size: u64) -> FsResult<()> {
        Fs::ftruncate(self, fd, size)
    }

    fn unlink(&mut self, path: &str) -> FsResult<()> {
        Fs::unlink(self, path)
    }

    fn mkdir(&mut self, path: &str) -> FsResult<()> {
        Fs::mkdir(self, path)
    }

    fn rmdir(&mut self, path: &str) -> FsResult<()> {
        Fs::rmdir(self, path)
    }

    fn rename(&mut self, from: &str, to: &str) -> FsResult<()> {
        Fs::rename(self, from, to)
    }

    fn readdir(&mut self, path: &str) -> FsResult<Vec<DirEntry>> {
        Fs::readdir(self, path)
    }

    fn stat(&mut self, path: &str) -> FsResult<Stat> {
        Fs::stat(self, path)
    }

    fn fstat(&mut self, fd: Fd) -> FsResult<Stat> {
        Fs::fstat(self, fd)
    }

    fn fsync(&mut self, fd: Fd) -> FsResult<()> {
        Fs::fsync(self, fd)
    }

    fn sync(&mut self) -> FsResult<()> {
        Fs::sync(self)
    }

    fn statfs(&self) -> StatFs {
        Fs::statfs(self)
    }

    /// Unused dentries, LNC entries and inodes leave (`names.rs`); the page
    /// cache above drops its clean pages itself.
    fn drop_caches(&mut self) -> FsResult<()> {
        self.drop_unused_caches();
        Ok(())
    }

    fn commit(&mut self) -> FsResult<()> {
        self.commit_now()
    }

    fn writepage(&mut self, inum: u32, index: u64, data: &[u8]) -> FsResult<()> {
        self.run(|fs| fs.do_writepage(inum, index, data, None))
    }

    fn writepage_tail(&mut self, inum: u32, index: u64, data: &[u8], tail: Option<TailToken>) -> FsResult<()> {
        self.run(|fs| fs.do_writepage(inum, index, data, tail))
    }

    fn write_inode(&mut self, inum: u32, size: u64) -> FsResult<()> {
        self.run(|fs| fs.do_write_inode(inum, size))
    }

    /// The test of `ubifs_budget_space` only: the page cache runs
    /// `make_free_space` (its `shrink_liability`, then [`Fs::run_gc`] and
    /// the commit below) and retries.
    fn reserve_pages(&mut self, pages: u64) -> FsResult<()> {
        let bytes = pages * self.page_budget_bytes();
        self.run(|fs| {
            // `c->bi.nospace` (set when a reservation failed for good,
            // cleared by any release) fails at once, as in ubifs_budget_space.
            if fs.nospace || !fs.budget_fits(bytes, false) {
                return Err(Errno::ENOSPC.into());
            }
            fs.reserved_bytes += bytes;
            Ok(())
        })
    }

    fn no_space(&mut self) {
        self.counters.enospc += 1;
        self.nospace = true;
    }

    fn run_gc(&mut self) -> FsResult<bool> {
        self.run(|fs| fs.run_gc())
    }

    fn run_commit(&mut self) -> FsResult<()> {
        self.run(|fs| fs.space_commit())
    }

    fn release_pages(&mut self, pages: u64) {
        self.nospace = false;
        self.reserved_bytes = self.reserved_bytes.saturating_sub(pages * self.page_budget_bytes());
    }

    fn device_busy_ns(&self) -> u64 {
        device_busy_ns(self.ubi.nand())
    }

    fn advance_to(&mut self, now_ns: u64) -> FsResult<()> {
        Fs::advance_to(self, now_ns)
    }
}

/// A file system that stores on flashfs: flashfs itself, or flashfs under
/// the page cache. Drivers (benchmarks, the power-cut campaign) are generic
/// over it and pick one with `FsSettings::page_cache`.
pub trait OnFlash: FileSystem<Error = FsError> {
    /// Wraps a mounted flashfs.
    fn wrap(fs: Fs) -> Self;
    /// The flashfs underneath.
    fn flash(&self) -> &Fs;
    fn flash_mut(&mut self) -> &mut Fs;
    /// Drops everything in memory above flashfs (a power cut).
    fn into_flash_lost(self) -> Fs;
}

impl OnFlash for Fs {
    fn wrap(fs: Fs) -> Self {
        fs
    }

    fn flash(&self) -> &Fs {
        self
    }

    fn flash_mut(&mut self) -> &mut Fs {
        self
    }

    fn into_flash_lost(self) -> Fs {
        self
    }
}

impl OnFlash for flashlab_vfs::PageCache<Fs> {
    fn wrap(fs: Fs) -> Self {
        let (cfg, now) = (fs.cfg.cache.clone(), fs.now_ns());
        flashlab_vfs::PageCache::new(fs, cfg, now)
    }

    fn flash(&self) -> &Fs {
        self.inner()
    }

    fn flash_mut(&mut self) -> &mut Fs {
        self.inner_mut()
    }

    fn into_flash_lost(self) -> Fs {
        self.into_inner_lost()
    }
}
