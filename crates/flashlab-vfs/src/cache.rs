//! The page cache: file pages in memory, clean or dirty, in front of a
//! [`FileSystem`]. Writes dirty pages (after budgeting them with the file
//! system, as UBIFS's `write_begin` does); reads fill clean pages; dirty
//! pages reach the file system only at writeback (`writeback.rs`). Data of
//! a file deleted before writeback is dropped and never reaches flash.
//!
//! Pages live in 4 KiB frames (`frames.rs`: equal pages share their bytes); each
//! inode's page map (`pagemap.rs`) finds a page's frame and says which pages
//! are dirty, and the clean pages wait for reclaim in a list threaded through
//! per-frame arrays (`lru.rs`).

use crate::frames::Frames;
use crate::lru::{IntMap, Lru, PageKey};
use crate::pagemap::FileMap;
use crate::readahead::{self, RaRead, RaState};
use crate::settings::CacheSettings;
use crate::types::{DirEntry, Errno, Fd, FileSystem, Stat, StatFs, TailToken, PAGE_BYTES};
use serde::Serialize;
use std::collections::BTreeSet;

const PAGE: usize = PAGE_BYTES as usize;
/// budget.c: rounds `make_free_space` repeats after the first.
const MAX_MKSPC_RETRIES: u32 = 3;
/// budget.c: dirty pages `shrink_liability` writes back per round.
const NR_TO_WRITE: u64 = 16;
/// GC/commit progress one reservation may take (see `reserve`).
const MAX_SPACE_AGAIN: u32 = 4;
/// Folios `filemap_get_read_batch` returns at most (`PAGEVEC_SIZE`).
const READ_BATCH: u64 = 31;

/// How a page missing from the cache gets its bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fill {
    /// Read from the file system.
    Read,
    /// Zeros (beyond the file's end; `write_begin` does not read it).
    Zero,
    /// Nothing: the caller overwrites all of it before anything reads it.
    Overwritten,
}

/// What a `make_free_space` achieved.
enum Progress {
    /// Writeback shrank the liability.
    Shrunk,
    /// The file system's GC or commit made space.
    Space,
    None,
}

/// What the page cache did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct CacheStats {
    /// Pages written back, by reason.
    pub pages_written_periodic: u64,
    pub pages_written_background: u64,
    pub pages_written_fsync: u64,
    pub pages_written_sync: u64,
    pub pages_written_pressure: u64,
    /// Inode writes at writeback.
    pub inodes_written: u64,
    /// Dirty pages dropped because their file was deleted or truncated
    /// before writeback (never reached the file system).
    pub dirty_pages_dropped: u64,
    pub page_hits: u64,
    pub page_misses: u64,
    pub clean_evictions: u64,
    /// Read-ahead windows read (synchronous and asynchronous) and the
    /// pages they brought in.
    pub readahead_windows: u64,
    pub readahead_pages: u64,
}

/// Why pages are written back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Reason {
    Periodic,
    Background,
    Fsync,
    Sync,
    Pressure,
}

/// A cached inode.
#[derive(Debug, Clone, Default)]
pub(crate) struct CInode {
    /// Size as the application sees it (`i_size`).
    pub size: u64,
    /// Size last written to the file system (UBIFS's `synced_i_size`).
    pub synced_size: u64,
    /// The inode itself is dirty (size or times changed).
    pub dirty: bool,
    /// When the inode first became dirty (`inode->dirtied_when`).
    pub dirtied_ns: Option<u64>,
    pub open: u32,
    pub unlinked: bool,
    /// Every cached page (clean or dirty): index → (frame, dirty).
    pub pages: FileMap,
}

/// Linux's page cache over a file system.
pub struct PageCache<F: FileSystem> {
    pub(crate) fs: F,
    pub(crate) cfg: CacheSettings,
    pub(crate) now_ns: u64,
    pub(crate) next_flush_ns: u64,
    frames: Frames,
    frame_count: usize,
    free: Vec<usize>,
    /// Clean pages by last use (for reclaim).
    lru: Lru,
    pub(crate) inodes: IntMap<u32, CInode>,
    /// `(dirtied_ns, inode)` of every cached inode whose `dirtied_ns` is set,
    /// oldest first: the order writeback takes them in (the kernel keeps
    /// dirty inodes on `wb->b_dirty` by `dirtied_when` the same way), so
    /// that finding the oldest does not walk every cached inode.
    pub(crate) dirty_order: BTreeSet<(u64, u32)>,
    fds: IntMap<Fd, u32>,
    /// Read-ahead state of each open file (`file->f_ra`).
    ra: IntMap<Fd, RaState>,
    /// Frames holding a page marked `PG_readahead`.
    marked: Vec<bool>,
    pub(crate) dirty_pages: u64,
    pub(crate) stats: CacheStats,
}

impl<F: FileSystem> PageCache<F> {
    /// A cache over `fs` at simulated time `now_ns`.
    pub fn new(fs: F, cfg: CacheSettings, now_ns: u64) -> Self {
        let next_flush_ns = now_ns + cfg.writeback_interval_ns();
        Self {
            fs,
            cfg,
            now_ns,
            next_flush_ns,
            frames: Frames::default(),
            frame_count: 0,
            free: Vec::new(),
            lru: Lru::new(),
            inodes: IntMap::default(),
            dirty_order: BTreeSet::new(),
            fds: IntMap::default(),
            ra: IntMap::default(),
            marked: Vec::new(),
            dirty_pages: 0,
            stats: CacheStats::default(),
        }
    }

    /// The file system underneath.
    pub fn inner(&self) -> &F {
        &self.fs
    }

    pub fn inner_mut(&mut self) -> &mut F {
        &mut self.fs
    }

    /// Writes every dirty page and inode back (as unmount's
    /// `sync_filesystem` does) and returns the file system.
    pub fn into_inner(mut self) -> Result<F, (F, F::Error)> {
        match self.sync() {
            Ok(()) => Ok(self.fs),
            Err(e) => Err((self.fs, e)),
        }
    }

    /// Drops the cache without writing anything (a power cut).
    pub fn into_inner_lost(self) -> F {
        self.fs
    }

    pub fn stats(&self) -> &CacheStats {
        &self.stats
    }

    /// Simulated time (ns).
    pub fn now_ns(&self) -> u64 {
        self.now_ns
    }

    /// Dirty pages in the cache.
    pub fn dirty_page_count(&self) -> u64 {
        self.dirty_pages
    }

    /// Lets simulated time pass without file operations (the flusher runs).
    pub fn idle_until(&mut self, now_ns: u64) -> Result<(), F::Error> {
        while self.next_flush_ns <= now_ns {
            self.now_ns = self.now_ns.max(self.next_flush_ns);
            self.periodic()?;
        }
        self.now_ns = self.now_ns.max(now_ns);
        self.fs.advance_to(self.now_ns)
    }

    /// Start of a call: CPU time passes, then whatever the flusher and the
    /// file system's timers have due.
    fn enter(&mut self, bytes: usize) -> Result<u64, F::Error> {
        let cpu = self.cfg.cpu_ns_per_call + (bytes as u64).div_ceil(1024) * self.cfg.cpu_ns_per_kib;
        let t = self.now_ns + cpu;
        self.idle_until(t)?;
        Ok(self.fs.device_busy_ns())
    }

    /// End of a call: the caller waited for the device time it used. A call
    /// that waited returns no earlier than the file system's clock: when the
    /// flusher's writeback left the file system's clock ahead (the device
    /// busy with it), an fsync or a read waits behind that work too.
    fn leave<T>(&mut self, dev0: u64, r: Result<T, F::Error>) -> Result<T, F::Error> {
        let waited = self.fs.device_busy_ns().saturating_sub(dev0);
        self.now_ns += waited;
        if waited > 0 {
            if let Some(t) = self.fs.fs_clock_ns() {
                self.now_ns = self.now_ns.max(t);
            }
        }
        r
    }

    fn fd_inum(&self, fd: Fd) -> Result<u32, F::Error> {
        self.fds.get(&fd).copied().ok_or(Errno::EBADF.into())
    }

    /// The cached inode of an open file (created from the file system's view).
    fn track(&mut self, fd: Fd) -> Result<u32, F::Error> {
        let st = self.fs.fstat(fd)?;
        self.fds.insert(fd, st.inum);
        self.ra.insert(fd, RaState::default());
        let ino = self.inodes.entry(st.inum).or_insert_with(|| CInode {
            size: st.size,
            synced_size: st.size,
            ..Default::default()
        });
        ino.open += 1;
        Ok(st.inum)
    }

    // ---- pages ----

    /// (frame, dirty) of a cached page.
    #[inline]
    fn page(&self, key: PageKey) -> Option<(usize, bool)> {
        self.inodes.get(&key.0)?.pages.get(key.1)
    }

    /// A use of the page: a clean page becomes the most recently used.
    fn touch(&mut self, key: PageKey) {
        if let Some((f, dirty)) = self.page(key) {
            self.touch_frame(f, key, dirty);
        }
    }

    fn touch_frame(&mut self, f: usize, key: PageKey, dirty: bool) {
        if dirty {
            self.lru.unlink(f);
        } else {
            self.lru.push_back(f, key);
        }
    }

    /// A free frame, its read-ahead mark cleared.
    fn frame(&mut self) -> Result<usize, F::Error> {
        let f = self.take_frame()?;
        if f >= self.marked.len() {
            self.marked.resize(f + 1, false);
        }
        self.marked[f] = false;
        Ok(f)
    }

    /// A free frame: a new one while memory lasts, else a reclaimed clean
    /// page; with no clean page, the oldest dirty inode is written back
    /// first (memory pressure).
    fn take_frame(&mut self) -> Result<usize, F::Error> {
        if let Some(f) = self.free.pop() {
            return Ok(f);
        }
        if (self.frame_count as u64) < self.cfg.memory_pages() {
            self.frame_count += 1;
            return Ok(self.frames.push());
        }
        if self.lru.is_empty() {
            self.write_back_oldest(Reason::Pressure)?;
        }
        let Some((f, key)) = self.lru.pop_front() else { return Err(Errno::ENOSPC.into()) };
        if let Some(ino) = self.inodes.get_mut(&key.0) {
            ino.pages.remove(key.1);
        }
        self.stats.clean_evictions += 1;
        Ok(f)
    }

    fn frame_mut(&mut self, f: usize) -> &mut [u8] {
        self.frames.page_mut(f)
    }

    /// Frame `f` holds `data` (at most a page), zeros after it.
    fn fill_frame(&mut self, f: usize, data: &[u8]) {
        if data.len() == PAGE {
            self.frames.set_page(f, data);
        } else {
            let fr = self.frame_mut(f);
            fr[..data.len()].copy_from_slice(data);
            fr[data.len()..].fill(0);
        }
    }

    /// Writeback of one page: its first `valid` bytes go to the file
    /// system (nothing for a page not cached or `valid` = 0).
    pub(crate) fn writepage_cached(&mut self, key: PageKey, valid: usize) -> Result<(), F::Error> {
        let Some((f, _)) = self.page(key) else { return Ok(()) };
        if valid == 0 {
            return Ok(());
        }
        let fs = &mut self.fs;
        let tail = self.frames.tail_token(f);
        self.frames.with_page(f, |page| fs.writepage_tail(key.0, key.1, &page[..valid], tail))
    }

    /// Marks a dirty page clean (after writeback).
    pub(crate) fn mark_clean(&mut self, key: (u32, u64)) {
        if self.inodes.get_mut(&key.0).is_some_and(|i| i.pages.set_dirty(key.1, false)) {
            self.dirty_pages -= 1;
            self.fs.release_pages(1);
        }
        self.touch(key);
    }

    /// Drops a page (truncate, delete); a dirty one never reaches flash.
    fn drop_page(&mut self, key: (u32, u64)) {
        if let Some((f, dirty)) = self.inodes.get_mut(&key.0).and_then(|i| i.pages.remove(key.1)) {
            if dirty {
                self.dirty_pages -= 1;
                self.stats.dirty_pages_dropped += 1;
                self.fs.release_pages(1);
            }
            self.lru.unlink(f);
            self.free.push(f);
        }
    }

    /// Drops every page of `inum` at or beyond page `from`.
    fn drop_pages_from(&mut self, inum: u32, from: u64) {
        let Some(ino) = self.inodes.get(&inum) else { return };
        for index in ino.pages.indices_from(from) {
            self.drop_page((inum, index));
        }
    }

    /// Forgets a deleted inode and its pages.
    fn forget(&mut self, inum: u32) {
        self.drop_pages_from(inum, 0);
        if let Some(t) = self.inodes.remove(&inum).and_then(|i| i.dirtied_ns) {
            self.dirty_order.remove(&(t, inum));
        }
    }

    /// Page `index` of the file behind `fd` (read from the file system
    /// unless cached or `fill` says otherwise); returns its frame.
    fn get_page(&mut self, fd: Fd, inum: u32, index: u64, fill: Fill) -> Result<usize, F::Error> {
        let key = (inum, index);
        let Some(ino) = self.inodes.get(&inum) else { return Err(Errno::EBADF.into()) };
        if let Some((f, dirty)) = ino.pages.get(index) {
            self.stats.page_hits += 1;
            self.touch_frame(f, key, dirty);
            return Ok(f);
        }
        let data = match fill {
            Fill::Read => self.fs.read(fd, index * PAGE_BYTES, PAGE)?,
            _ => Vec::new(),
        };
        self.stats.page_misses += u64::from(fill == Fill::Read);
        let f = self.frame()?;
        // A page the write covers whole gets its bytes from `copy_in`.
        if fill != Fill::Overwritten {
            self.fill_frame(f, &data);
        }
        if let Some(ino) = self.inodes.get_mut(&inum) {
            ino.pages.insert(index, f);
        }
        self.touch_frame(f, key, false);
        Ok(f)
    }

    fn do_write(&mut self, fd: Fd, offset: u64, data: &[u8], tail: Option<TailToken>) -> Result<usize, F::Error> {
        let inum = self.fd_inum(fd)?;
        if data.is_empty() {
            return Ok(0);
        }
        let end = offset + data.len() as u64;
        // Budget every page this write newly dirties before touching any,
        // so that ENOSPC leaves the file unchanged (UBIFS budgets page by
        // page in `ubifs_write_begin`, which can end in a short write).
        let (first, last) = (offset / PAGE_BYTES, (end - 1) / PAGE_BYTES);
        let fresh_dirty = (first..=last).filter(|i| !self.page((inum, *i)).is_some_and(|p| p.1)).count() as u64;
        self.reserve(fresh_dirty)?;
        let mut budget = fresh_dirty;
        let r = self.copy_in(fd, inum, offset, data, tail, &mut budget);
        self.fs.release_pages(budget);
        r?;
        self.balance_dirty_pages()?;
        Ok(data.len())
    }

    /// Reserves flash space for `pages` newly dirtied pages. With
    /// [`FileSystem::MAKE_FREE_SPACE`], as `ubifs_budget_space` (budget.c)
    /// does: on ENOSPC, `make_free_space`
    /// and try again while it makes progress; when it gives up, one more
    /// try ("-ENOSPC, but anyway try once again"), then ENOSPC.
    fn reserve(&mut self, pages: u64) -> Result<(), F::Error> {
        if pages == 0 {
            return Ok(());
        }
        if !F::MAKE_FREE_SPACE {
            return match self.fs.reserve_pages(pages) {
                Err(e) if F::errno(&e) == Errno::ENOSPC && self.dirty_pages > 0 => {
                    self.write_back_all(Reason::Sync)?;
                    self.fs.commit()?;
                    self.fs.reserve_pages(pages)
                }
                r => r,
            };
        }
        let mut retried = false;
        let mut again = 0;
        loop {
            let e = match self.fs.reserve_pages(pages) {
                Err(e) if F::errno(&e) == Errno::ENOSPC => e,
                r => return r,
            };
            // Writeback always shrinks the liability for real; GC and
            // commits count as progress at most MAX_SPACE_AGAIN times per
            // reservation (the file system's budget may gain only bytes).
            match self.make_free_space()? {
                Progress::Shrunk => continue,
                Progress::Space if again < MAX_SPACE_AGAIN => {
                    again += 1;
                    continue;
                }
                _ => {}
            }
            if retried {
                self.fs.no_space();
                return Err(e);
            }
            retried = true;
        }
    }

    /// `make_free_space` (budget.c): up to `MAX_MKSPC_RETRIES` + 1 rounds of
    /// `shrink_liability` (write back `NR_TO_WRITE` dirty pages, oldest
    /// inodes first: progress if the liability shrank), else the file
    /// system's `run_gc` (progress if it made space), else
    /// `ubifs_run_commit`.
    fn make_free_space(&mut self) -> Result<Progress, F::Error> {
        for _ in 0..=MAX_MKSPC_RETRIES {
            let liability = self.dirty_pages;
            self.shrink_liability(NR_TO_WRITE)?;
            if self.dirty_pages < liability {
                return Ok(Progress::Shrunk);
            }
            if self.fs.run_gc()? {
                return Ok(Progress::Space);
            }
            self.fs.run_commit()?;
        }
        Ok(Progress::None)
    }

    /// Copies `data` into the page cache at `offset` (pages budgeted:
    /// `budget`; `tail`: the writer's token of `data` after its head, which
    /// names the first page's tail where that page is whole).
    fn copy_in(
        &mut self,
        fd: Fd,
        inum: u32,
        offset: u64,
        data: &[u8],
        tail: Option<TailToken>,
        budget: &mut u64,
    ) -> Result<(), F::Error> {
        let end = offset + data.len() as u64;
        let mut pos = offset;
        while pos < end {
            let size = self.inodes.get(&inum).map_or(0, |i| i.size);
            let index = pos / PAGE_BYTES;
            let (s, e) = ((pos % PAGE_BYTES) as usize, ((end - index * PAGE_BYTES).min(PAGE_BYTES)) as usize);
            // write_begin reads the page unless it is all overwritten or
            // lies beyond the file's end.
            let fill = if s == 0 && e == PAGE {
                Fill::Overwritten
            } else if index * PAGE_BYTES >= size {
                Fill::Zero
            } else {
                Fill::Read
            };
            let f = self.dirty_page(fd, inum, index, fill, budget)?;
            let src = &data[(pos - offset) as usize..(pos - offset) as usize + e - s];
            if e - s == PAGE {
                match tail {
                    Some(t) if pos == offset => self.frames.set_page_from(f, src, t),
                    _ => self.frames.set_page(f, src),
                }
            } else {
                self.frame_mut(f)[s..e].copy_from_slice(src);
            }
            pos = index * PAGE_BYTES + e as u64;
            // write_end, page by page (generic_perform_write): i_size grows
            // and the inode (size, mtime: file_update_time) becomes dirty,
            // so writeback in the middle of a long write sees each copied
            // page inside the file.
            let now = self.now_ns;
            if let Some(ino) = self.inodes.get_mut(&inum) {
                ino.size = ino.size.max(pos);
                ino.dirty = true;
                note_dirtied(&mut self.dirty_order, ino, inum, now);
            }
        }
        Ok(())
    }

    /// Makes page `index` present and dirty; a page that was clean takes
    /// one of the write's `budget` pages (or, if writeback cleaned it in the
    /// meantime, a reservation of its own). Returns its frame.
    fn dirty_page(&mut self, fd: Fd, inum: u32, index: u64, fill: Fill, budget: &mut u64) -> Result<usize, F::Error> {
        let was_dirty = self.page((inum, index)).is_some_and(|p| p.1);
        if !was_dirty {
            if *budget > 0 {
                *budget -= 1;
            } else {
                self.reserve(1)?;
            }
        }
        let r = self.get_page(fd, inum, index, fill);
        if r.is_err() && !was_dirty {
            self.fs.release_pages(1);
        }
        let f = r?;
        let now = self.now_ns;
        if let Some(ino) = self.inodes.get_mut(&inum) {
            if ino.pages.set_dirty(index, true) {
                self.dirty_pages += 1;
            }
            note_dirtied(&mut self.dirty_order, ino, inum, now);
        }
        self.lru.unlink(f);
        Ok(f)
    }

    /// `filemap_read`: page by page from the cache; a missing page starts
    /// a synchronous read-ahead (`page_cache_sync_ra`), the last page of
    /// each cached batch (`filemap_get_read_batch`, at most `READ_BATCH`
    /// pages) an asynchronous one when it carries the read-ahead mark
    /// (`filemap_readahead`); `prev_pos` is left just past the read.
    fn do_read(&mut self, fd: Fd, offset: u64, len: usize, out: &mut Vec<u8>) -> Result<(), F::Error> {
        out.clear();
        let inum = self.fd_inum(fd)?;
        let size = self.inodes.get(&inum).map_or(0, |i| i.size);
        let end = (offset + len as u64).min(size);
        out.reserve(end.saturating_sub(offset) as usize);
        // "last_index": the page after the read, as asked (not clipped).
        let last = (offset + len as u64).div_ceil(PAGE_BYTES);
        let mut pos = offset;
        while pos < end {
            let index = pos / PAGE_BYTES;
            if self.page((inum, index)).is_none() {
                self.sync_readahead(fd, inum, index, last - index)?;
            }
            // Read the page alone if read-ahead did not (it is off).
            let f = self.get_page(fd, inum, index, Fill::Read)?;
            // (frame, dirty) of each page of the batch, found once.
            let mut batch = [(0usize, false); READ_BATCH as usize];
            batch[0] = (f, false);
            let mut len = 1;
            if let Some(ino) = self.inodes.get(&inum) {
                while index + (len as u64) < last && len < batch.len() {
                    match ino.pages.get(index + len as u64) {
                        Some(p) => batch[len] = p,
                        None => break,
                    }
                    len += 1;
                }
            }
            let tail = index + len as u64 - 1;
            let start_async = self.marked[batch[len - 1].0];
            self.marked[batch[len - 1].0] = false;
            for (k, &(f, dirty)) in batch[..len].iter().enumerate() {
                let i = index + k as u64;
                if pos >= end {
                    break;
                }
                if k > 0 {
                    self.stats.page_hits += 1;
                    self.touch_frame(f, (inum, i), dirty);
                }
                let s = (pos % PAGE_BYTES) as usize;
                let e = ((end - i * PAGE_BYTES).min(PAGE_BYTES)) as usize;
                self.frames.append(f, s, e, out);
                pos = i * PAGE_BYTES + e as u64;
            }
            // The kernel starts it before copying, with the batch pinned;
            // here the batch is copied first so that the new window's
            // frames cannot reclaim a batch page.
            if start_async {
                self.async_readahead(fd, inum, tail, last - tail)?;
            }
        }
        if let Some(ra) = self.ra.get_mut(&fd) {
            if pos > offset {
                ra.prev_pos = Some(pos);
            }
        }
        Ok(())
    }

    /// `page_cache_sync_ra` on a miss at page `index` of a read of `req`
    /// pages (nothing when read-ahead is off: the page is read alone).
    fn sync_readahead(&mut self, fd: Fd, inum: u32, index: u64, req: u64) -> Result<(), F::Error> {
        self.readahead(fd, inum, index, req, false)
    }

    /// `page_cache_async_ra` from the marked page `index`.
    fn async_readahead(&mut self, fd: Fd, inum: u32, index: u64, req: u64) -> Result<(), F::Error> {
        self.readahead(fd, inum, index, req, true)
    }

    fn readahead(&mut self, fd: Fd, inum: u32, index: u64, req: u64, marked: bool) -> Result<(), F::Error> {
        let max = self.cfg.read_ahead_pages();
        let Some(mut ra) = self.ra.get(&fd).copied().filter(|_| max > 0) else { return Ok(()) };
        let pages = self.inodes.get(&inum).map(|i| &i.pages);
        let r = readahead::ondemand(&mut ra, max, index, req, marked, |i| pages.is_some_and(|p| p.contains(i)));
        self.ra.insert(fd, ra);
        match r {
            Some(r) => self.read_window(fd, inum, r),
            None => Ok(()),
        }
    }

    /// `do_page_cache_ra` → `page_cache_ra_unbounded`: the window clipped to
    /// the page holding the file's last byte; each run of pages not cached
    /// is one read of the file system (`read_pages`); the page at
    /// `nr - lookahead` gets the mark if this window brings it in.
    fn read_window(&mut self, fd: Fd, inum: u32, r: RaRead) -> Result<(), F::Error> {
        let size = self.inodes.get(&inum).map_or(0, |i| i.size);
        if size == 0 || r.start > (size - 1) / PAGE_BYTES {
            return Ok(());
        }
        let nr = r.nr.min((size - 1) / PAGE_BYTES - r.start + 1);
        let mark = (r.lookahead > 0 && r.lookahead <= nr).then(|| r.start + nr - r.lookahead);
        self.stats.readahead_windows += 1;
        let mut i = r.start;
        while i < r.start + nr {
            if self.page((inum, i)).is_some() {
                i += 1;
                continue;
            }
            let run = (i..r.start + nr).take_while(|j| self.page((inum, *j)).is_none()).count() as u64;
            self.read_run(fd, inum, i, run, mark)?;
            i += run;
        }
        Ok(())
    }

    /// Reads pages `[first, first + n)` in one call and caches them clean.
    fn read_run(&mut self, fd: Fd, inum: u32, first: u64, n: u64, mark: Option<u64>) -> Result<(), F::Error> {
        let data = self.fs.read(fd, first * PAGE_BYTES, (n * PAGE_BYTES) as usize)?;
        self.stats.page_misses += n;
        self.stats.readahead_pages += n;
        for k in 0..n {
            let index = first + k;
            let at = ((k * PAGE_BYTES) as usize).min(data.len());
            let page = &data[at..(at + PAGE).min(data.len())];
            let f = self.frame()?;
            self.fill_frame(f, page);
            if let Some(ino) = self.inodes.get_mut(&inum) {
                ino.pages.insert(index, f);
            }
            self.touch_frame(f, (inum, index), false);
            self.marked[f] = mark == Some(index);
        }
        Ok(())
    }

    /// truncate_setsize: pages past the new end are dropped, the tail of
    /// the last page is zeroed; then the file system truncates (UBIFS
    /// writes the truncation at once, `do_truncation`).
    fn truncate_inum(&mut self, inum: u32, size: u64) {
        self.drop_pages_from(inum, size.div_ceil(PAGE_BYTES));
        if !size.is_multiple_of(PAGE_BYTES) {
            if let Some((f, _)) = self.page((inum, size / PAGE_BYTES)) {
                self.frame_mut(f)[(size % PAGE_BYTES) as usize..].fill(0);
            }
        }
        if let Some(ino) = self.inodes.get_mut(&inum) {
            ino.size = size;
            ino.synced_size = size;
        }
    }

    /// After a name was removed: the inode is gone unless still open.
    fn unlinked(&mut self, inum: u32) {
        let open = match self.inodes.get_mut(&inum) {
            Some(ino) => {
                ino.unlinked = true;
                ino.open
            }
            None => return,
        };
        if open == 0 {
            self.forget(inum);
        }
    }

    /// Inode number of a regular file at `path`, if any.
    fn file_inum(&mut self, path: &str) -> Option<u32> {
        self.fs.stat(path).ok().filter(|s| !s.is_dir).map(|s| s.inum)
    }

    fn with_size(&self, mut st: Stat) -> Stat {
        if let Some(ino) = self.inodes.get(&st.inum) {
            st.size = ino.size;
        }
        st
    }
}

impl<F: FileSystem> FileSystem for PageCache<F> {
    type Error = F::Error;
    const MAKE_FREE_SPACE: bool = F::MAKE_FREE_SPACE;

    fn errno(e: &F::Error) -> Errno {
        F::errno(e)
    }

    fn create(&mut self, path: &str) -> Result<Fd, F::Error> {
        let d = self.enter(0)?;
        let r = self.fs.create(path).and_then(|fd| self.track(fd).map(|_| fd));
        self.leave(d, r)
    }

    fn open(&mut self, path: &str) -> Result<Fd, F::Error> {
        let d = self.enter(0)?;
        let r = self.fs.open(path).and_then(|fd| self.track(fd).map(|_| fd));
        self.leave(d, r)
    }

    fn close(&mut self, fd: Fd) -> Result<(), F::Error> {
        let d = self.enter(0)?;
        let r = self.do_close(fd);
        self.leave(d, r)
    }

    fn read(&mut self, fd: Fd, offset: u64, len: usize) -> Result<Vec<u8>, F::Error> {
        let mut out = Vec::new();
        self.read_into(fd, offset, len, &mut out)?;
        Ok(out)
    }

    fn read_into(&mut self, fd: Fd, offset: u64, len: usize, out: &mut Vec<u8>) -> Result<(), F::Error> {
        let d = self.enter(len)?;
        let r = self.do_read(fd, offset, len, out);
        self.leave(d, r)
    }

    fn write(&mut self, fd: Fd, offset: u64, data: &[u8]) -> Result<usize, F::Error> {
        let d = self.enter(data.len())?;
        let r = self.do_write(fd, offset, data, None);
        self.leave(d, r)
    }

    fn write_tail(&mut self, fd: Fd, offset: u64, data: &[u8], tail: Option<TailToken>) -> Result<usize, F::Error> {
        let d = self.enter(data.len())?;
        let r = self.do_write(fd, offset, data, tail);
        self.leave(d, r)
    }

    fn truncate(&mut self, path: &str, size: u64) -> Result<(), F::Error> {
        let d = self.enter(0)?;
        let inum = self.file_inum(path);
        let r = self.fs.truncate(path, size);
        if let (Ok(()), Some(i)) = (&r, inum) {
            self.truncate_inum(i, size);
        }
        self.leave(d, r)
    }

    fn ftruncate(&mut self, fd: Fd, size: u64) -> Result<(), F::Error> {
        let d = self.enter(0)?;
        let r = self.fd_inum(fd).and_then(|i| self.fs.ftruncate(fd, size).map(|_| i));
        let r = r.map(|i| self.truncate_inum(i, size));
        self.leave(d, r)
    }

    fn unlink(&mut self, path: &str) -> Result<(), F::Error> {
        let d = self.enter(0)?;
        let inum = self.file_inum(path);
        let r = self.fs.unlink(path);
        if let (Ok(()), Some(i)) = (&r, inum) {
            self.unlinked(i);
        }
        self.leave(d, r)
    }

    fn mkdir(&mut self, path: &str) -> Result<(), F::Error> {
        let d = self.enter(0)?;
        let r = self.fs.mkdir(path);
        self.leave(d, r)
    }

    fn rmdir(&mut self, path: &str) -> Result<(), F::Error> {
        let d = self.enter(0)?;
        let r = self.fs.rmdir(path);
        self.leave(d, r)
    }

    fn rename(&mut self, from: &str, to: &str) -> Result<(), F::Error> {
        let d = self.enter(0)?;
        let (src, target) = (self.file_inum(from), self.file_inum(to));
        let r = self.fs.rename(from, to);
        if let (Ok(()), Some(t)) = (&r, target) {
            if Some(t) != src {
                self.unlinked(t);
            }
        }
        self.leave(d, r)
    }

    fn readdir(&mut self, path: &str) -> Result<Vec<DirEntry>, F::Error> {
        let d = self.enter(0)?;
        let r = self.fs.readdir(path);
        self.leave(d, r)
    }

    fn stat(&mut self, path: &str) -> Result<Stat, F::Error> {
        let d = self.enter(0)?;
        let r = self.fs.stat(path).map(|s| self.with_size(s));
        self.leave(d, r)
    }

    fn fstat(&mut self, fd: Fd) -> Result<Stat, F::Error> {
        let d = self.enter(0)?;
        let r = self.fs.fstat(fd).map(|s| self.with_size(s));
        self.leave(d, r)
    }

    /// `vfs_fsync` → `ubifs_fsync`: `file_write_and_wait_range` writes the
    /// file's dirty pages, `write_inode` its inode; the file system then
    /// makes them durable.
    fn fsync(&mut self, fd: Fd) -> Result<(), F::Error> {
        let d = self.enter(0)?;
        let r = self.fd_inum(fd).and_then(|i| {
            let dirty = self.inodes.get(&i).map_or(0, |n| n.pages.dirty_count());
            self.fs.fsync_begin(i, dirty);
            self.write_back_inode(i, Reason::Fsync)
        });
        let r = r.and_then(|_| self.fs.fsync(fd));
        self.leave(d, r)
    }

    /// `sync_filesystem`: every dirty inode written back, then the file
    /// system's `sync_fs`.
    fn sync(&mut self) -> Result<(), F::Error> {
        let d = self.enter(0)?;
        let r = self.write_back_all(Reason::Sync).and_then(|_| self.fs.sync());
        self.leave(d, r)
    }

    fn statfs(&self) -> StatFs {
        self.fs.statfs()
    }

    fn commit(&mut self) -> Result<(), F::Error> {
        let d = self.enter(0)?;
        let r = self.fs.commit();
        self.leave(d, r)
    }

    fn writepage(&mut self, inum: u32, index: u64, data: &[u8]) -> Result<(), F::Error> {
        self.fs.writepage(inum, index, data)
    }

    fn writepage_tail(&mut self, inum: u32, index: u64, data: &[u8], tail: Option<TailToken>) -> Result<(), F::Error> {
        self.fs.writepage_tail(inum, index, data, tail)
    }

    fn write_inode(&mut self, inum: u32, size: u64) -> Result<(), F::Error> {
        self.fs.write_inode(inum, size)
    }

    fn fsync_begin(&mut self, inum: u32, dirty_pages: u64) {
        self.fs.fsync_begin(inum, dirty_pages)
    }

    fn run_gc(&mut self) -> Result<bool, F::Error> {
        self.fs.run_gc()
    }

    fn run_commit(&mut self) -> Result<(), F::Error> {
        self.fs.run_commit()
    }

    fn no_space(&mut self) {
        self.fs.no_space()
    }

    fn device_busy_ns(&self) -> u64 {
        self.fs.device_busy_ns()
    }

    fn advance_to(&mut self, now_ns: u64) -> Result<(), F::Error> {
        self.idle_until(now_ns)
    }

    fn clock_ns(&self) -> u64 {
        self.now_ns
    }

    /// `drop_caches`: every clean page leaves the cache (dirty ones stay).
    fn drop_caches(&mut self) -> Result<(), F::Error> {
        let clean: Vec<PageKey> = self.lru.keys();
        for key in clean {
            self.drop_page(key);
        }
        self.fs.drop_caches()
    }
}

impl<F: FileSystem> PageCache<F> {
    fn do_close(&mut self, fd: Fd) -> Result<(), F::Error> {
        let inum = self.fd_inum(fd)?;
        let gone = match self.inodes.get_mut(&inum) {
            Some(ino) => {
                ino.open = ino.open.saturating_sub(1);
                ino.open == 0 && ino.unlinked
            }
            None => false,
        };
        // The last close of an unlinked file deletes it (`evict` →
        // `truncate_inode_pages`): its dirty pages are dropped first.
        if gone {
            self.forget(inum);
        }
        self.fds.remove(&fd);
        self.ra.remove(&fd);
        self.fs.close(fd)
    }
}

/// `__mark_inode_dirty`: an inode becoming dirty takes its `dirtied_when`
/// (kept while it stays dirty) and its place in the writeback order.
fn note_dirtied(order: &mut BTreeSet<(u64, u32)>, ino: &mut CInode, inum: u32, now: u64) {
    if ino.dirtied_ns.is_none() {
        ino.dirtied_ns = Some(now);
        order.insert((now, inum));
    }
}
