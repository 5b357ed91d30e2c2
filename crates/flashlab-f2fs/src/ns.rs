//! The POSIX-like calls (namei.c, file.c, inode.c): names in dentry
//! blocks, inodes as nodes, truncation freeing blocks and nodes, eviction
//! of unlinked inodes at their last close (orphans meanwhile).

use crate::error::{F2fsError, F2fsResult};
use crate::fs::{is_cold_name, F2fs, Inode, Src, NAME_LEN};
use crate::layout::BLOCK_BYTES;
use crate::node::{self, ROOT_INO};
use crate::seg::NONE;
use crate::temp::{DataWrite, NodeKind};
use flashlab_vfs::{DirEntry, Errno, Fd, Stat, StatFs};

fn split(path: &str) -> F2fsResult<Vec<&str>> {
    if !path.starts_with('/') {
        return Err(Errno::EINVAL.into());
    }
    let parts: Vec<&str> = path.split('/').filter(|p| !p.is_empty()).collect();
    if parts.iter().any(|p| p.len() > NAME_LEN) {
        return Err(Errno::ENAMETOOLONG.into());
    }
    if parts.iter().any(|p| *p == "." || *p == "..") {
        return Err(Errno::EINVAL.into());
    }
    Ok(parts)
}

impl F2fs {
    fn walk(&self, parts: &[&str]) -> F2fsResult<u32> {
        let mut cur = ROOT_INO;
        for p in parts {
            let d = self.ino(cur)?;
            if !d.is_dir {
                return Err(Errno::ENOTDIR.into());
            }
            cur = d.entries.get(*p).ok_or(Errno::ENOENT)?.0;
        }
        Ok(cur)
    }

    pub(crate) fn lookup(&self, path: &str) -> F2fsResult<u32> {
        self.walk(&split(path)?)
    }

    /// The parent directory and the last name of `path`.
    fn parent_of<'p>(&self, path: &'p str) -> F2fsResult<(u32, &'p str)> {
        let parts = split(path)?;
        let (last, dirs) = parts.split_last().ok_or(Errno::EEXIST)?;
        let dir = self.walk(dirs)?;
        if !self.ino(dir)?.is_dir {
            return Err(Errno::ENOTDIR.into());
        }
        Ok((dir, last))
    }

    fn new_fd(&mut self, ino: u32) -> Fd {
        self.next_fd += 1;
        self.fds.insert(self.next_fd, ino);
        if let Some(i) = self.inodes.get_mut(&ino) {
            i.open += 1;
        }
        Fd(self.next_fd)
    }

    pub(crate) fn fd_ino(&self, fd: Fd) -> F2fsResult<u32> {
        self.fds.get(&fd.0).copied().ok_or(F2fsError::Errno(Errno::EBADF))
    }

    /// `f2fs_new_inode` + `f2fs_add_link`.
    fn make(&mut self, path: &str, is_dir: bool) -> F2fsResult<u32> {
        let (dir, name) = self.parent_of(path)?;
        if self.ino(dir)?.entries.contains_key(name) {
            return Err(Errno::EEXIST.into());
        }
        self.check_space(1 + u64::from(is_dir))?;
        let ino = self.nm.alloc(NodeKind::Inode, None).ok_or(Errno::ENOSPC)?;
        let inode = Inode {
            is_dir,
            nlink: if is_dir { 2 } else { 1 },
            parent: dir,
            cold: !is_dir && is_cold_name(name),
            created_cp: self.cp_ver,
            ..Default::default()
        };
        self.inodes.insert(ino, inode);
        if is_dir {
            self.init_dir(ino);
            self.ino_mut(dir)?.nlink += 1;
        }
        self.add_entry(dir, name, ino)?;
        Ok(ino)
    }

    pub fn create(&mut self, path: &str) -> F2fsResult<Fd> {
        self.balance_fs()?;
        let ino = self.make(path, false)?;
        Ok(self.new_fd(ino))
    }

    pub fn open(&mut self, path: &str) -> F2fsResult<Fd> {
        let ino = self.lookup(path)?;
        if self.ino(ino)?.is_dir {
            return Err(Errno::EISDIR.into());
        }
        Ok(self.new_fd(ino))
    }

    pub fn close(&mut self, fd: Fd) -> F2fsResult<()> {
        let ino = self.fds.remove(&fd.0).ok_or(Errno::EBADF)?;
        let gone = match self.inodes.get_mut(&ino) {
            Some(i) => {
                i.open -= 1;
                i.open == 0 && i.nlink == 0
            }
            None => false,
        };
        if gone {
            self.evict(ino)?;
        }
        Ok(())
    }

    pub fn mkdir(&mut self, path: &str) -> F2fsResult<()> {
        self.balance_fs()?;
        self.make(path, true).map(|_| ())
    }

    /// Frees an inode's data blocks and nodes (`f2fs_evict_inode` →
    /// `f2fs_truncate` → `f2fs_remove_inode_page`).
    fn evict(&mut self, ino: u32) -> F2fsResult<()> {
        self.truncate_blocks(ino, 0)?;
        let i = self.inodes.remove(&ino).ok_or(Errno::ENOENT)?;
        for nid in i.dnodes.iter().chain(i.inds.iter()).copied().chain([i.dind, ino]) {
            if nid != 0 && self.nm.kind[nid as usize] != 0 {
                let old = self.nm.free(nid);
                if old != NONE {
                    self.sm.invalidate(old);
                }
            }
        }
        self.dirty_dents.retain(|(d, _)| *d != ino);
        self.dirty_since_cp = true;
        Ok(())
    }

    /// Frees blocks at and past file block `from`, and the nodes that
    /// then hold none (`f2fs_truncate_blocks` → `f2fs_truncate_inode_blocks`).
    pub(crate) fn truncate_blocks(&mut self, ino: u32, from: u64) -> F2fsResult<()> {
        let i = self.ino_mut(ino)?;
        let gone: Vec<(u64, u32)> = i
            .blocks
            .iter()
            .enumerate()
            .skip(from as usize)
            .filter(|(_, b)| **b != NONE)
            .map(|(k, b)| (k as u64, *b))
            .collect();
        i.blocks.truncate(from as usize);
        for (k, b) in gone {
            self.sm.invalidate(b);
            let h = self.holder_nid(ino, k, false)?;
            self.dirty_node(h)?;
        }
        // Direct nodes wholly past the end, then indirect nodes with no child left.
        let i = self.ino_mut(ino)?;
        let first_k =
            (0..i.dnodes.len() as u32).find(|&k| node::first_block_of(k) >= from).unwrap_or(i.dnodes.len() as u32);
        let mut freed: Vec<u32> = i.dnodes.drain(first_k as usize..).filter(|&n| n != 0).collect();
        let first_j =
            (0..i.inds.len() as u32).find(|&j| node::first_direct_of(j) >= first_k).unwrap_or(i.inds.len() as u32);
        freed.extend(i.inds.drain(first_j as usize..).filter(|&n| n != 0));
        if i.inds.len() <= 2 && i.dind != 0 {
            freed.push(std::mem::replace(&mut i.dind, 0));
        }
        let has_parent_changes = !freed.is_empty();
        for nid in freed {
            let old = self.nm.free(nid);
            if old != NONE {
                self.sm.invalidate(old);
            }
        }
        if has_parent_changes {
            // The parents' pointers changed: the inode and the remaining indirect nodes.
            self.dirty_node(ino)?;
            let inds = self.ino(ino)?.inds.clone();
            for n in inds.into_iter().filter(|&n| n != 0) {
                self.dirty_node(n)?;
            }
        }
        self.dirty_since_cp = true;
        Ok(())
    }

    /// `f2fs_setattr(ATTR_SIZE)`: blocks past the end are freed; a partial
    /// last page is zeroed and rewritten (`truncate_partial_data_page`).
    pub(crate) fn truncate_ino(&mut self, ino: u32, size: u64) -> F2fsResult<()> {
        if self.ino(ino)?.is_dir {
            return Err(Errno::EISDIR.into());
        }
        if size.div_ceil(BLOCK_BYTES) > node::MAX_FILE_BLOCKS {
            return Err(Errno::EFBIG.into());
        }
        self.balance_fs()?;
        let old = self.ino(ino)?.size;
        if size < old {
            self.truncate_blocks(ino, size.div_ceil(BLOCK_BYTES))?;
            let tail = size % BLOCK_BYTES;
            let last = size / BLOCK_BYTES;
            let b = self.ino(ino)?.blocks.get(last as usize).copied().unwrap_or(NONE);
            if tail != 0 && b != NONE {
                let mut page = self.content.load(b);
                page.truncate(tail as usize);
                self.write_data_block(ino, last, Src::Data(&page), DataWrite::Normal)?;
            }
        }
        self.ino_mut(ino)?.size = size;
        self.dirty_node(ino)?;
        self.dirty_since_cp = true;
        Ok(())
    }

    pub fn truncate(&mut self, path: &str, size: u64) -> F2fsResult<()> {
        let ino = self.lookup(path)?;
        self.truncate_ino(ino, size)
    }

    pub fn ftruncate(&mut self, fd: Fd, size: u64) -> F2fsResult<()> {
        let ino = self.fd_ino(fd)?;
        self.truncate_ino(ino, size)
    }

    /// Drops a link to `ino`; the inode goes when no link and no open file remain.
    fn drop_link(&mut self, ino: u32) -> F2fsResult<()> {
        let i = self.ino_mut(ino)?;
        i.nlink = if i.is_dir { 0 } else { i.nlink.saturating_sub(1) };
        let gone = i.nlink == 0 && i.open == 0;
        if gone {
            self.evict(ino)?;
        } else {
            self.dirty_node(ino)?;
        }
        Ok(())
    }

    pub fn unlink(&mut self, path: &str) -> F2fsResult<()> {
        let (dir, name) = self.parent_of(path)?;
        let ino = self.ino(dir)?.entries.get(name).ok_or(Errno::ENOENT)?.0;
        if self.ino(ino)?.is_dir {
            return Err(Errno::EISDIR.into());
        }
        self.balance_fs()?;
        self.remove_entry(dir, name)?;
        self.drop_link(ino)
    }

    pub fn rmdir(&mut self, path: &str) -> F2fsResult<()> {
        let (dir, name) =
            self.parent_of(path).map_err(|e| if e.errno() == Errno::EEXIST { Errno::EINVAL.into() } else { e })?;
        let ino = self.ino(dir)?.entries.get(name).ok_or(Errno::ENOENT)?.0;
        let i = self.ino(ino)?;
        if !i.is_dir {
            return Err(Errno::ENOTDIR.into());
        }
        if !i.entries.is_empty() {
            return Err(Errno::ENOTEMPTY.into());
        }
        self.balance_fs()?;
        self.remove_entry(dir, name)?;
        self.ino_mut(dir)?.nlink -= 1;
        self.drop_link(ino)
    }

    /// `f2fs_rename`: the entry moves; a replaced target is unlinked.
    pub fn rename(&mut self, from: &str, to: &str) -> F2fsResult<()> {
        let (sdir, sname) =
            self.parent_of(from).map_err(|e| if e.errno() == Errno::EEXIST { Errno::EINVAL.into() } else { e })?;
        let src = self.ino(sdir)?.entries.get(sname).ok_or(Errno::ENOENT)?.0;
        let (ddir, dname) =
            self.parent_of(to).map_err(|e| if e.errno() == Errno::EEXIST { Errno::EINVAL.into() } else { e })?;
        let src_dir = self.ino(src)?.is_dir;
        if src_dir {
            // No directory into itself or below it.
            let mut d = ddir;
            loop {
                if d == src {
                    return Err(Errno::EINVAL.into());
                }
                if d == ROOT_INO {
                    break;
                }
                d = self.ino(d)?.parent;
            }
        }
        let target = self.ino(ddir)?.entries.get(dname).map(|e| e.0);
        if target == Some(src) {
            return Ok(());
        }
        if let Some(t) = target {
            let ti = self.ino(t)?;
            match (src_dir, ti.is_dir) {
                (true, false) => return Err(Errno::ENOTDIR.into()),
                (false, true) => return Err(Errno::EISDIR.into()),
                (true, true) if !ti.entries.is_empty() => return Err(Errno::ENOTEMPTY.into()),
                _ => {}
            }
        }
        self.balance_fs()?;
        if let Some(t) = target {
            self.remove_entry(ddir, dname)?;
            if self.ino(t)?.is_dir {
                self.ino_mut(ddir)?.nlink -= 1;
            }
            self.drop_link(t)?;
        }
        self.remove_entry(sdir, sname)?;
        self.add_entry(ddir, dname, src)?;
        if src_dir && sdir != ddir {
            self.ino_mut(sdir)?.nlink -= 1;
            self.ino_mut(ddir)?.nlink += 1;
        }
        let s = self.ino_mut(src)?;
        s.parent = ddir;
        self.dirty_node(src)?;
        Ok(())
    }

    pub fn readdir(&self, path: &str) -> F2fsResult<Vec<DirEntry>> {
        let ino = self.lookup(path)?;
        let d = self.ino(ino)?;
        if !d.is_dir {
            return Err(Errno::ENOTDIR.into());
        }
        Ok(d.entries
            .iter()
            .map(|(n, (i, _))| DirEntry {
                name: n.clone(),
                inum: *i,
                is_dir: self.inodes.get(i).is_some_and(|x| x.is_dir),
            })
            .collect())
    }

    fn stat_of(&self, ino: u32) -> F2fsResult<Stat> {
        let i = self.ino(ino)?;
        Ok(Stat { inum: ino, size: i.size, is_dir: i.is_dir, nlink: i.nlink })
    }

    pub fn stat(&self, path: &str) -> F2fsResult<Stat> {
        self.stat_of(self.lookup(path)?)
    }

    pub fn fstat(&self, fd: Fd) -> F2fsResult<Stat> {
        self.stat_of(self.fd_ino(fd)?)
    }

    /// `f2fs_statfs`.
    pub fn statfs(&self) -> StatFs {
        let total = self.lay.block_count - self.lay.segment0_blkaddr as u64;
        let ovp = self.lay.overprov_segments as u64 * crate::layout::BLKS_PER_SEG as u64;
        let used = self.used_blocks();
        let free = total.saturating_sub(used + ovp);
        let avail = self.lay.user_block_count.saturating_sub(used + self.reserved_pages);
        StatFs {
            block_bytes: BLOCK_BYTES,
            total_bytes: total * BLOCK_BYTES,
            available_bytes: avail * BLOCK_BYTES,
            free_bytes: free * BLOCK_BYTES,
            leb_bytes: (crate::layout::BLKS_PER_SEG as u64 * BLOCK_BYTES) as u32,
            main_lebs: self.lay.segment_count_main,
            empty_lebs: self.sm.free_segs,
        }
    }

    /// Reads through the file system (page-cache misses): holes read as
    /// zeros; contiguous blocks in one request, waited for.
    pub fn read(&mut self, fd: Fd, offset: u64, len: usize) -> F2fsResult<Vec<u8>> {
        let ino = self.fd_ino(fd)?;
        let size = self.ino(ino)?.size;
        let end = (offset + len as u64).min(size);
        if offset >= end {
            return Ok(Vec::new());
        }
        let (first, last) = (offset / BLOCK_BYTES, (end - 1) / BLOCK_BYTES);
        self.need_dnodes(ino, first, last)?;
        let blocks: Vec<u32> =
            (first..=last).map(|k| self.inodes[&ino].blocks.get(k as usize).copied().unwrap_or(NONE)).collect();
        let mut run: Option<(u64, u64)> = None;
        let mut done = 0u64;
        for &b in blocks.iter().filter(|b| **b != NONE) {
            let d = self.dev_blk(b);
            run = match run {
                Some((s, n)) if s + n == d && n < self.cfg.max_bio_blocks as u64 => Some((s, n + 1)),
                Some((s, n)) => {
                    done = done.max(self.io.read(s, n)?);
                    Some((d, 1))
                }
                None => Some((d, 1)),
            };
            self.stats.data_blocks_read += 1;
        }
        if let Some((s, n)) = run {
            self.io.submit_all()?;
            done = done.max(self.io.read(s, n)?);
        }
        self.io.wait_for(done);
        let mut out = Vec::with_capacity((end - offset) as usize);
        for (k, &b) in (first..=last).zip(&blocks) {
            let s = if k == first { (offset % BLOCK_BYTES) as usize } else { 0 };
            let e = ((end - k * BLOCK_BYTES).min(BLOCK_BYTES)) as usize;
            if b == NONE {
                out.resize(out.len() + e - s, 0);
            } else {
                self.content.append(b, s, e, &mut out);
            }
        }
        Ok(out)
    }

    /// A write without the page cache: each page read-modified-written at once.
    pub fn write(&mut self, fd: Fd, offset: u64, data: &[u8]) -> F2fsResult<usize> {
        let ino = self.fd_ino(fd)?;
        let end = offset + data.len() as u64;
        if end.div_ceil(BLOCK_BYTES) > node::MAX_FILE_BLOCKS {
            return Err(Errno::EFBIG.into());
        }
        let mut pos = offset;
        while pos < end {
            let k = pos / BLOCK_BYTES;
            let size = self.ino(ino)?.size;
            let b = self.ino(ino)?.blocks.get(k as usize).copied().unwrap_or(NONE);
            let mut page = if b == NONE { vec![0u8; BLOCK_BYTES as usize] } else { self.content.load(b) };
            let s = (pos % BLOCK_BYTES) as usize;
            let e = ((end - k * BLOCK_BYTES).min(BLOCK_BYTES)) as usize;
            page[s..e].copy_from_slice(&data[(pos - offset) as usize..(pos - offset) as usize + e - s]);
            let new_size = size.max(k * BLOCK_BYTES + e as u64);
            let valid = (new_size - k * BLOCK_BYTES).min(BLOCK_BYTES) as usize;
            self.write_inode_size(ino, new_size)?;
            self.writepage_ino(ino, k, &page[..valid])?;
            pos = k * BLOCK_BYTES + e as u64;
        }
        Ok(data.len())
    }

    /// `f2fs_write_inode`: the inode page becomes dirty (no I/O).
    pub(crate) fn write_inode_size(&mut self, ino: u32, size: u64) -> F2fsResult<()> {
        if size.div_ceil(BLOCK_BYTES) > node::MAX_FILE_BLOCKS {
            return Err(Errno::EFBIG.into());
        }
        let i = self.ino_mut(ino)?;
        if i.is_dir {
            return Err(Errno::EISDIR.into());
        }
        i.size = size;
        self.dirty_node(ino)?;
        self.dirty_since_cp = true;
        Ok(())
    }

    /// `f2fs_write_data_page` of page `index` (bytes below i_size).
    pub(crate) fn writepage_ino(&mut self, ino: u32, index: u64, data: &[u8]) -> F2fsResult<()> {
        let i = self.ino(ino)?;
        if i.is_dir || data.len() as u64 > BLOCK_BYTES || index * BLOCK_BYTES >= i.size.max(1) {
            return Err(Errno::EINVAL.into());
        }
        if data.is_empty() {
            return Ok(());
        }
        self.balance_fs()?;
        self.write_data_block(ino, index, Src::Data(data), DataWrite::Normal)
    }
}
