//! The JFFS2 baseline behind the shared file API ([`FileSystem`]), so the
//! file workloads of `flashlab fs bench` run on it.
//!
//! As Linux JFFS2 does, a write goes to flash at once (`jffs2_write_end` →
//! `jffs2_write_inode_range`), buffered only in the NAND write buffer, which
//! fsync and sync flush padded to a page (`jffs2_flush_wbuf_pad`); so it runs
//! without the page cache. Space is reserved as `jffs2_reserve_space` does
//! (free plus dirty space above `resv_blocks_write` erase blocks) and statfs
//! reports the same figure (`jffs2_statfs`).
//!
//! Differences from Linux JFFS2, beyond those of the baseline itself (see the
//! module above): data nodes always hold a whole 4 KiB page (a partial write
//! rewrites the page with the old bytes merged in, where JFFS2 writes just the
//! range and resolves overlaps in its fragment tree); directory entries are
//! keyed by the full path (the baseline's flat name space), so renaming a
//! non-empty directory is refused with EINVAL; the file size and truncation
//! are kept in memory (JFFS2 stores `isize` in every inode node), so they do
//! not survive a remount.

use super::{Jffs2, NodeRef, DT_DIR, DT_REG};
use flashlab_mtd::MtdError;
use flashlab_vfs::{DirEntry, Errno, Fd, FileSystem, Stat, StatFs};
use thiserror::Error;

/// JFFS2's largest file: its raw inode node holds 32-bit offsets and sizes, and
/// `jffs2_do_fill_super` sets `s_maxbytes = 0xFFFFFFFF`.
const JFFS2_MAX_FILE_BYTES: u64 = u32::MAX as u64;

const PAGE: u64 = 4096;
/// The root directory's inode number (JFFS2's too).
const ROOT: u32 = 1;

/// A failed call on the JFFS2 baseline.
#[derive(Debug, Error)]
pub enum Jffs2Error {
    #[error("{0:?}")]
    Errno(Errno),
    #[error("flash: {0}")]
    Io(#[from] MtdError),
}

impl From<Errno> for Jffs2Error {
    fn from(e: Errno) -> Self {
        Jffs2Error::Errno(e)
    }
}

type R<T> = Result<T, Jffs2Error>;

/// `(parent, name)` of an absolute path; EINVAL for a relative or empty one.
fn split(path: &str) -> R<(&str, &str)> {
    let i = path.rfind('/').ok_or(Errno::EINVAL)?;
    let (parent, name) = (&path[..i], &path[i + 1..]);
    if !path.starts_with('/') || name.is_empty() {
        return Err(Errno::EINVAL.into());
    }
    if name.len() > crate::NAME_MAX {
        return Err(Errno::ENAMETOOLONG.into());
    }
    Ok((if parent.is_empty() { "/" } else { parent }, name))
}

impl Jffs2 {
    /// Every ancestor of `path` exists and is a directory (path walk).
    fn check_parent(&self, path: &str) -> R<()> {
        let mut end = 0;
        while let Some(i) = path[end + 1..].find('/') {
            end += 1 + i;
            match self.dirents.get(&path[..end]) {
                None => return Err(Errno::ENOENT.into()),
                Some((ino, _, _)) if !self.is_dir(*ino) => return Err(Errno::ENOTDIR.into()),
                Some(_) => {}
            }
        }
        Ok(())
    }

    fn lookup(&self, path: &str) -> R<u32> {
        if path == "/" {
            return Ok(ROOT);
        }
        split(path)?;
        self.check_parent(path)?;
        self.dirents.get(path).map(|(ino, _, _)| *ino).ok_or_else(|| Errno::ENOENT.into())
    }

    fn is_dir(&self, ino: u32) -> bool {
        ino == ROOT || self.dirs.contains(&ino)
    }

    fn fd_ino(&self, fd: Fd) -> R<u32> {
        self.fds.get(&fd).copied().ok_or_else(|| Errno::EBADF.into())
    }

    /// A new entry at `path` (its parent must be a directory).
    fn new_entry(&mut self, path: &str, dir: bool) -> R<u32> {
        split(path)?;
        self.check_parent(path)?;
        if self.dirents.contains_key(path) {
            return Err(Errno::EEXIST.into());
        }
        self.reserve(path.len() as u64 + 64)?;
        let ino = self.next_ino;
        self.next_ino += 1;
        self.write_dirent(path, ino, if dir { DT_DIR } else { DT_REG })?;
        if dir {
            self.dirs.insert(ino);
        }
        self.sizes.insert(ino, 0);
        Ok(ino)
    }

    /// `resv_blocks_write` of `jffs2_calc_trigger_levels`: 2 blocks for
    /// deletions plus 2 % of the flash plus 100 bytes per block, in blocks.
    fn resv_blocks_write(&self) -> u64 {
        let (sector, blocks) = (self.block_bytes() as u64, self.blocks.len() as u64);
        let flash = sector * blocks;
        2 + (flash / 50 + blocks * 100).div_ceil(sector)
    }

    /// Free plus dirty bytes (`c->free_size + c->dirty_size`).
    fn free_and_dirty(&self) -> u64 {
        let sector = self.block_bytes() as u64;
        let used: u64 = self.blocks.iter().map(|b| b.written.saturating_sub(b.dirty) as u64).sum();
        (sector * self.blocks.len() as u64).saturating_sub(used + self.wbuf.len() as u64)
    }

    fn avail(&self) -> u64 {
        self.free_and_dirty().saturating_sub(self.resv_blocks_write() * self.block_bytes() as u64)
    }

    /// `jffs2_reserve_space` for a normal write: ENOSPC below the reserve.
    fn reserve(&self, bytes: u64) -> R<()> {
        if bytes > self.avail() {
            return Err(Errno::ENOSPC.into());
        }
        Ok(())
    }

    fn page_ref(&self, ino: u32, index: u64) -> Option<NodeRef> {
        let refs = self.data.get(&ino)?;
        let off = (index * PAGE) as u32;
        refs.binary_search_by_key(&off, |r| r.file_offs).ok().map(|i| refs[i])
    }

    /// Page `index` of `ino` as stored (shorter than a page at the end; empty for a hole).
    fn read_page(&mut self, ino: u32, index: u64) -> R<Vec<u8>> {
        match self.page_ref(ino, index) {
            Some(r) => Ok(self.read_data_node(r)?.unwrap_or_default()),
            None => Ok(Vec::new()),
        }
    }

    /// Writes page `index` of `ino` as one data node; the older node of that page becomes dirty.
    fn write_page(&mut self, ino: u32, index: u64, content: &[u8]) -> R<()> {
        self.reserve(content.len() as u64 + 64)?;
        let off = (index * PAGE) as u32;
        let r = self.append_data(ino, off, content).map_err(no_space)?;
        let refs = self.data.entry(ino).or_default();
        match refs.binary_search_by_key(&off, |r| r.file_offs) {
            Ok(i) => {
                let old = std::mem::replace(&mut refs[i], r);
                self.obsolete(old);
            }
            Err(i) => refs.insert(i, r),
        }
        Ok(())
    }

    /// Drops the data nodes at or past `size` and cuts the last page.
    fn cut(&mut self, ino: u32, size: u64) -> R<()> {
        let old = self.sizes.get(&ino).copied().unwrap_or(0);
        if size < old {
            let keep = size.div_ceil(PAGE) * PAGE;
            let refs = self.data.entry(ino).or_default();
            let at = refs.partition_point(|r| (r.file_offs as u64) < keep);
            for r in refs.split_off(at) {
                self.obsolete(r);
            }
            if !size.is_multiple_of(PAGE) {
                let mut page = self.read_page(ino, size / PAGE)?;
                if page.len() as u64 > size % PAGE {
                    page.truncate((size % PAGE) as usize);
                    self.write_page(ino, size / PAGE, &page)?;
                }
            }
        }
        self.sizes.insert(ino, size);
        Ok(())
    }

    fn stat_ino(&self, ino: u32) -> Stat {
        let dir = self.is_dir(ino);
        Stat {
            inum: ino,
            size: self.sizes.get(&ino).copied().unwrap_or(0),
            is_dir: dir,
            nlink: if dir { 2 } else { 1 },
        }
    }

    fn children(&self, path: &str) -> impl Iterator<Item = (&str, u32)> + '_ {
        let prefix = if path == "/" { "/".to_string() } else { format!("{path}/") };
        self.dirents.iter().filter_map(move |(k, (ino, _, _))| {
            let rest = k.strip_prefix(prefix.as_str())?;
            (!rest.contains('/')).then_some((rest, *ino))
        })
    }
}

/// Running out of erase blocks mid-GC (the baseline's `append`) is ENOSPC.
fn no_space(e: MtdError) -> Jffs2Error {
    match e {
        MtdError::BadAddress { block: 0, offs: 0, len: 0 } => Errno::ENOSPC.into(),
        e => e.into(),
    }
}

impl FileSystem for Jffs2 {
    type Error = Jffs2Error;

    fn errno(e: &Jffs2Error) -> Errno {
        match e {
            Jffs2Error::Errno(e) => *e,
            Jffs2Error::Io(_) => Errno::EIO,
        }
    }

    fn create(&mut self, path: &str) -> R<Fd> {
        let ino = self.new_entry(path, false)?;
        self.open_ino(ino)
    }

    fn open(&mut self, path: &str) -> R<Fd> {
        let ino = self.lookup(path)?;
        if self.is_dir(ino) {
            return Err(Errno::EISDIR.into());
        }
        self.open_ino(ino)
    }

    fn close(&mut self, fd: Fd) -> R<()> {
        self.fds.remove(&fd).map(|_| ()).ok_or_else(|| Errno::EBADF.into())
    }

    fn read(&mut self, fd: Fd, offset: u64, len: usize) -> R<Vec<u8>> {
        let ino = self.fd_ino(fd)?;
        let size = self.sizes.get(&ino).copied().unwrap_or(0);
        let end = (offset + len as u64).min(size);
        let mut out = Vec::with_capacity(end.saturating_sub(offset) as usize);
        let mut pos = offset;
        while pos < end {
            let (index, within) = (pos / PAGE, (pos % PAGE) as usize);
            let n = ((index + 1) * PAGE).min(end) - pos;
            let mut page = self.read_page(ino, index)?;
            page.resize(PAGE as usize, 0);
            out.extend_from_slice(&page[within..within + n as usize]);
            pos += n;
        }
        Ok(out)
    }

    fn write(&mut self, fd: Fd, offset: u64, data: &[u8]) -> R<usize> {
        let ino = self.fd_ino(fd)?;
        if offset + data.len() as u64 > JFFS2_MAX_FILE_BYTES {
            return Err(Errno::EFBIG.into());
        }
        let size = self.sizes.get(&ino).copied().unwrap_or(0);
        let (mut pos, end) = (offset, offset + data.len() as u64);
        while pos < end {
            let (index, within) = (pos / PAGE, (pos % PAGE) as usize);
            let n = (((index + 1) * PAGE).min(end) - pos) as usize;
            let src = &data[(pos - offset) as usize..][..n];
            let page = if n as u64 == PAGE {
                src.to_vec()
            } else {
                // jffs2_write_begin reads a page it only partly overwrites.
                let mut p = if index * PAGE < size { self.read_page(ino, index)? } else { Vec::new() };
                p.resize(p.len().max(within + n), 0);
                p[within..within + n].copy_from_slice(src);
                p
            };
            self.write_page(ino, index, &page)?;
            self.sizes.insert(ino, size.max(pos + n as u64));
            pos += n as u64;
        }
        Ok(data.len())
    }

    fn truncate(&mut self, path: &str, size: u64) -> R<()> {
        let ino = self.lookup(path)?;
        if self.is_dir(ino) {
            return Err(Errno::EISDIR.into());
        }
        self.cut(ino, size)
    }

    fn ftruncate(&mut self, fd: Fd, size: u64) -> R<()> {
        let ino = self.fd_ino(fd)?;
        self.cut(ino, size)
    }

    fn unlink(&mut self, path: &str) -> R<()> {
        let ino = self.lookup(path)?;
        if self.is_dir(ino) {
            return Err(Errno::EISDIR.into());
        }
        self.delete(path)?;
        self.sizes.remove(&ino);
        Ok(())
    }

    fn mkdir(&mut self, path: &str) -> R<()> {
        self.new_entry(path, true).map(|_| ())
    }

    fn rmdir(&mut self, path: &str) -> R<()> {
        let ino = self.lookup(path)?;
        if !self.is_dir(ino) {
            return Err(Errno::ENOTDIR.into());
        }
        if ino == ROOT {
            return Err(Errno::EINVAL.into());
        }
        if self.children(path).next().is_some() {
            return Err(Errno::ENOTEMPTY.into());
        }
        self.write_dirent(path, 0, DT_DIR)?;
        self.dirs.remove(&ino);
        self.sizes.remove(&ino);
        Ok(())
    }

    fn rename(&mut self, from: &str, to: &str) -> R<()> {
        let ino = self.lookup(from)?;
        split(to)?;
        self.check_parent(to)?;
        let dir = self.is_dir(ino);
        if dir && (to == from || to.starts_with(&format!("{from}/"))) {
            return Err(Errno::EINVAL.into());
        }
        if from == to {
            return Ok(());
        }
        let old = self.lookup(to).ok();
        match (dir, old.map(|o| self.is_dir(o))) {
            (false, Some(true)) => return Err(Errno::EISDIR.into()),
            (true, Some(false)) => return Err(Errno::ENOTDIR.into()),
            (true, Some(true)) if self.children(to).next().is_some() => return Err(Errno::ENOTEMPTY.into()),
            _ => {}
        }
        // Entries are keyed by full path: a directory with entries cannot move.
        if dir && self.children(from).next().is_some() {
            return Err(Errno::EINVAL.into());
        }
        if let Some(old) = old {
            let (_, _, r) = self.dirents[to];
            for d in self.data.remove(&old).unwrap_or_default() {
                self.obsolete(d);
            }
            self.obsolete(r);
            self.dirs.remove(&old);
            self.sizes.remove(&old);
        }
        self.reserve(2 * (to.len() as u64 + 64))?;
        // As JFFS2's rename: the new entry first, then the old one's deletion.
        self.write_dirent(to, ino, if dir { DT_DIR } else { DT_REG })?;
        self.write_dirent(from, 0, DT_REG)?;
        Ok(())
    }

    fn readdir(&mut self, path: &str) -> R<Vec<DirEntry>> {
        let ino = self.lookup(path)?;
        if !self.is_dir(ino) {
            return Err(Errno::ENOTDIR.into());
        }
        let mut v: Vec<DirEntry> = self
            .children(path)
            .map(|(name, ino)| DirEntry { name: name.to_string(), inum: ino, is_dir: self.is_dir(ino) })
            .collect();
        v.sort();
        Ok(v)
    }

    fn stat(&mut self, path: &str) -> R<Stat> {
        let ino = self.lookup(path)?;
        Ok(self.stat_ino(ino))
    }

    fn fstat(&mut self, fd: Fd) -> R<Stat> {
        let ino = self.fd_ino(fd)?;
        Ok(self.stat_ino(ino))
    }

    fn fsync(&mut self, fd: Fd) -> R<()> {
        self.fd_ino(fd)?;
        Ok(self.flush()?)
    }

    fn sync(&mut self) -> R<()> {
        Ok(self.flush()?)
    }

    /// `jffs2_statfs`: free plus dirty space less the write reserve.
    fn statfs(&self) -> StatFs {
        let sector = self.block_bytes() as u64;
        let avail = self.avail();
        let blocks = self.blocks.len() as u32;
        let empty = self.blocks.iter().filter(|b| b.written == 0).count() as u32;
        StatFs {
            block_bytes: PAGE,
            total_bytes: sector * blocks as u64,
            available_bytes: avail,
            free_bytes: avail,
            leb_bytes: sector as u32,
            main_lebs: blocks,
            empty_lebs: empty,
        }
    }

    fn commit(&mut self) -> R<()> {
        Ok(self.flush()?)
    }

    fn writepage(&mut self, inum: u32, index: u64, data: &[u8]) -> R<()> {
        if data.len() as u64 > PAGE || self.is_dir(inum) || !self.sizes.contains_key(&inum) {
            return Err(Errno::EINVAL.into());
        }
        self.write_page(inum, index, data)
    }

    fn write_inode(&mut self, inum: u32, size: u64) -> R<()> {
        if !self.sizes.contains_key(&inum) {
            return Err(Errno::ENOENT.into());
        }
        self.sizes.insert(inum, size);
        Ok(())
    }

    /// nandsim's delays, as flashfs counts them.
    fn device_busy_ns(&self) -> u64 {
        crate::vfs_impl::device_busy_ns(&self.nand)
    }

    fn advance_to(&mut self, _now_ns: u64) -> R<()> {
        Ok(())
    }
}

impl Jffs2 {
    fn open_ino(&mut self, ino: u32) -> R<Fd> {
        self.next_fd += 1;
        let fd = Fd(self.next_fd);
        self.fds.insert(fd, ino);
        Ok(fd)
    }
}
