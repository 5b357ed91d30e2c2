//! The file-system API: handles, attributes, error numbers and the trait.

/// Bytes per page of the page cache (and per data block of the file systems).
pub const PAGE_BYTES: u64 = 4096;

/// Bytes at a page's start that a [`TailToken`] does not cover.
pub const TAIL_HEAD: usize = 8;

/// Names the bytes of a page written back after its first [`TAIL_HEAD`]
/// ([`FileSystem::writepage_tail`]): the page cache gives a page's buffer a
/// new token, never one given before in the process, whenever those bytes
/// may change, so two pages written back with the same token and of the
/// same length are equal from byte [`TAIL_HEAD`] on.
pub type TailToken = u64;

/// The next [`TailToken`] (unique in the process, whichever cache, writer or
/// thread takes it).
static NEXT_TAIL_TOKEN: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

/// A [`TailToken`] given out never before: the page cache's for its
/// buffers, a writer's for a buffer it writes again and again
/// ([`FileSystem::write_tail`]), taken anew whenever those bytes change.
#[inline]
pub fn new_tail_token() -> TailToken {
    NEXT_TAIL_TOKEN.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

/// POSIX-like error numbers of the file API.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Errno {
    ENOENT,
    EEXIST,
    ENOSPC,
    ENOTEMPTY,
    ENOTDIR,
    EISDIR,
    EINVAL,
    EBADF,
    ENAMETOOLONG,
    EFBIG,
    EIO,
    EROFS,
}

/// An open file handle.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Fd(pub u64);

/// `stat` result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stat {
    pub inum: u32,
    pub size: u64,
    pub is_dir: bool,
    pub nlink: u32,
}

/// One `readdir` entry.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct DirEntry {
    pub name: String,
    pub inum: u32,
    pub is_dir: bool,
}

/// `statfs` result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StatFs {
    pub block_bytes: u64,
    pub total_bytes: u64,
    /// Bytes an unprivileged user may still write (`f_bavail`).
    pub available_bytes: u64,
    /// Bytes free including the root-reserved pool (`f_bfree`).
    pub free_bytes: u64,
    pub leb_bytes: u32,
    pub main_lebs: u32,
    pub empty_lebs: u32,
}

/// A file system the page cache (or a workload) can drive.
///
/// Paths are absolute (`/a/b`). The first group of calls is the POSIX-like
/// API; the second the inode-level hooks a page cache above uses for
/// writeback (Linux's `address_space_operations.writepage` and
/// `super_operations.write_inode`), space budgeting of dirty pages (UBIFS's
/// `ubifs_budget_space` at `write_begin`) and time.
pub trait FileSystem {
    type Error: std::error::Error + From<Errno>;

    /// The errno a POSIX caller would see for `e`.
    fn errno(e: &Self::Error) -> Errno;

    fn create(&mut self, path: &str) -> Result<Fd, Self::Error>;
    fn open(&mut self, path: &str) -> Result<Fd, Self::Error>;
    fn close(&mut self, fd: Fd) -> Result<(), Self::Error>;
    fn read(&mut self, fd: Fd, offset: u64, len: usize) -> Result<Vec<u8>, Self::Error>;
    /// [`FileSystem::read`]'s bytes into `out`, replacing what it held (its
    /// contents are unspecified after an error): a caller reading in a loop
    /// keeps one buffer instead of a new vector per call. The same call for
    /// the model (what it counts, charges and changes).
    fn read_into(&mut self, fd: Fd, offset: u64, len: usize, out: &mut Vec<u8>) -> Result<(), Self::Error> {
        *out = self.read(fd, offset, len)?;
        Ok(())
    }
    fn write(&mut self, fd: Fd, offset: u64, data: &[u8]) -> Result<usize, Self::Error>;
    /// [`write`](Self::write), with the writer's [`TailToken`] of `data`'s
    /// bytes after the first [`TAIL_HEAD`] (two writes with the same token
    /// have equal bytes there, up to the shorter's end): a page cache may
    /// know a page equal to one it holds without comparing. Default: `write`.
    fn write_tail(&mut self, fd: Fd, offset: u64, data: &[u8], _tail: Option<TailToken>) -> Result<usize, Self::Error> {
        self.write(fd, offset, data)
    }
    fn truncate(&mut self, path: &str, size: u64) -> Result<(), Self::Error>;
    fn ftruncate(&mut self, fd: Fd, size: u64) -> Result<(), Self::Error>;
    fn unlink(&mut self, path: &str) -> Result<(), Self::Error>;
    fn mkdir(&mut self, path: &str) -> Result<(), Self::Error>;
    fn rmdir(&mut self, path: &str) -> Result<(), Self::Error>;
    fn rename(&mut self, from: &str, to: &str) -> Result<(), Self::Error>;
    fn readdir(&mut self, path: &str) -> Result<Vec<DirEntry>, Self::Error>;
    fn stat(&mut self, path: &str) -> Result<Stat, Self::Error>;
    fn fstat(&mut self, fd: Fd) -> Result<Stat, Self::Error>;
    /// Makes the file's data and attributes durable.
    fn fsync(&mut self, fd: Fd) -> Result<(), Self::Error>;
    /// Makes everything durable.
    fn sync(&mut self) -> Result<(), Self::Error>;
    fn statfs(&self) -> StatFs;
    /// A file-system checkpoint now (flashfs: a journal commit).
    fn commit(&mut self) -> Result<(), Self::Error>;

    /// Writeback of one page: `data` is page `index` of inode `inum`
    /// (the bytes below the file's size); the inode itself is not written.
    fn writepage(&mut self, inum: u32, index: u64, data: &[u8]) -> Result<(), Self::Error>;
    /// [`writepage`](Self::writepage) from the page cache, with the
    /// [`TailToken`] of `data`'s bytes after the first [`TAIL_HEAD`] where
    /// it has one: a file system that keeps the last page's tail (flashfs's
    /// LZ4 memo) may know it equal without comparing. Default: `writepage`.
    fn writepage_tail(
        &mut self,
        inum: u32,
        index: u64,
        data: &[u8],
        _tail: Option<TailToken>,
    ) -> Result<(), Self::Error> {
        self.writepage(inum, index, data)
    }
    /// Writes inode `inum` with size `size` (`write_inode`).
    fn write_inode(&mut self, inum: u32, size: u64) -> Result<(), Self::Error>;
    /// Reserves flash space for `pages` newly dirtied pages (ENOSPC if it
    /// cannot be had); default: nothing to reserve.
    fn reserve_pages(&mut self, _pages: u64) -> Result<(), Self::Error> {
        Ok(())
    }
    /// Whether a failed reservation runs UBIFS's `make_free_space`
    /// (writeback in steps, [`FileSystem::run_gc`], commits); otherwise the
    /// cache writes everything back, commits once and tries once more.
    const MAKE_FREE_SPACE: bool = false;
    /// `run_gc` (UBIFS budget.c) when a reservation failed and writeback
    /// did not shrink the liability: true when it made space the budget
    /// counts. Default: nothing to collect.
    fn run_gc(&mut self) -> Result<bool, Self::Error> {
        Ok(false)
    }
    /// The commit of `make_free_space` (`ubifs_run_commit`: nothing when
    /// there is nothing to commit). Default: [`FileSystem::commit`].
    fn run_commit(&mut self) -> Result<(), Self::Error> {
        self.commit()
    }
    /// A reservation failed for good (`ubifs_budget_space` sets
    /// `c->bi.nospace`). Default: nothing.
    fn no_space(&mut self) {}
    /// Called by fsync before it writes the file's `dirty_pages` dirty
    /// pages back (F2FS sets `FI_NEED_IPU` here); default: nothing.
    fn fsync_begin(&mut self, _inum: u32, _dirty_pages: u64) {}
    /// Returns the reservation of `pages` pages (written back or dropped).
    fn release_pages(&mut self, _pages: u64) {}
    /// Device time the file system has consumed so far (ns).
    fn device_busy_ns(&self) -> u64;
    /// Moves the file system's own clock to `now_ns` (its timers run).
    fn advance_to(&mut self, now_ns: u64) -> Result<(), Self::Error>;
    /// The caller's simulated time (ns): the page cache's clock (CPU time
    /// per call plus the device time waited for); without a cache, the
    /// device time consumed so far. Workloads time their requests with it.
    fn clock_ns(&self) -> u64 {
        self.device_busy_ns()
    }
    /// The file system's own clock, where it issues its next request, if it
    /// keeps one. Background work (the flusher's writeback waiting for a
    /// queue slot) moves it ahead of the caller's; a call that then waits for
    /// the device cannot return before it. Default: none.
    fn fs_clock_ns(&self) -> Option<u64> {
        None
    }
    /// Drops every clean cached page (`echo 3 > /proc/sys/vm/drop_caches`),
    /// so later reads reach the device; writes nothing. Default: no cache.
    fn drop_caches(&mut self) -> Result<(), Self::Error> {
        Ok(())
    }
}
