//! File data: delayed allocation at writeback, in-place overwrites, reads,
//! truncation, and the extent tree's blocks.

use crate::error::Ext4Result;
use crate::fs::{Ext4, MAX_RUN_PAGES};
use crate::layout::BLOCK;
use crate::settings::Content;
use crate::stats::Cause;
use flashlab_sim::Op;
use flashlab_vfs::{Errno, Fd};

/// `EXT4_FLEX_SIZE_DIR_ALLOC_SCHEME`.
const FLEX_SIZE_DIR_ALLOC_SCHEME: u32 = 4;

/// A 64-bit tag of a page's bytes (never 0: 0 marks a block never written).
pub fn content_tag(data: &[u8]) -> u64 {
    let mut h = [0x9e37_79b9_7f4a_7c15u64, 0xc2b2_ae3d_27d4_eb4f, 0x1656_67b1_9e37_79f9, 0x85eb_ca77_c2b2_ae63];
    let mut chunks = data.chunks_exact(32);
    for c in &mut chunks {
        for (k, w) in c.chunks_exact(8).enumerate() {
            let v = u64::from_le_bytes([w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7]]);
            h[k] = (h[k] ^ v).wrapping_mul(0x0000_0100_0000_01b3).rotate_left(29);
        }
    }
    for (k, &b) in chunks.remainder().iter().enumerate() {
        h[k % 4] = (h[k % 4] ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3);
    }
    let t = h[0] ^ h[1].rotate_left(16) ^ h[2].rotate_left(32) ^ h[3].rotate_left(48) ^ data.len() as u64;
    t.max(1)
}

impl Ext4 {
    /// `ext4_ext_find_goal`, or with no extent `ext4_inode_to_goal_block`
    /// under delalloc: the first block of the inode's group; with flex
    /// groups of at least `EXT4_FLEX_SIZE_DIR_ALLOC_SCHEME` (4) groups, of
    /// its flex group's first group for a directory and of the second for a
    /// regular file (the first is kept for directories).
    pub(crate) fn file_goal(&self, inum: u32, lblk: u64) -> u64 {
        let ino = self.inodes.get(&inum);
        if let Some(goal) = ino.and_then(|i| i.goal(lblk)) {
            return goal;
        }
        let mut g = self.lay.group_of_inode(inum);
        if self.lay.flex_groups >= FLEX_SIZE_DIR_ALLOC_SCHEME {
            g = self.lay.flex_first(g);
            if !ino.is_some_and(|i| i.is_dir) {
                g += 1;
            }
        }
        self.lay.group_start(g)
    }

    /// Matches the extent tree's blocks to the extent count (new leaves
    /// and index blocks near the data, `ext4_ext_new_meta_block`; freed
    /// ones revoked) and puts the leaf holding extent `at` in the transaction.
    pub(crate) fn fix_tree(&mut self, inum: u32, at: usize) -> Ext4Result<()> {
        let (leaves, index) = self.inode(inum)?.tree_shape();
        let have = (self.inode(inum)?.leaves.len(), self.inode(inum)?.index.len());
        for want_index in [false, true] {
            let (want, has) = if want_index { (index, have.1) } else { (leaves, have.0) };
            for _ in has..want {
                let lblk = self.inode(inum)?.extents.get(at).map_or(0, |e| e.lblk);
                let goal = self.file_goal(inum, lblk);
                let (p, _) = self.alloc_run(goal, 1)?;
                self.meta_new(p);
                let ino = self.inode_mut(inum)?;
                if want_index {
                    ino.index.push(p)
                } else {
                    ino.leaves.push(p)
                }
                self.j.dirty(p);
            }
            for _ in want..has {
                let ino = self.inode_mut(inum)?;
                let b = if want_index { ino.index.pop() } else { ino.leaves.pop() };
                if let Some(b) = b {
                    self.free_run(b, 1, true)?;
                }
            }
        }
        let ino = self.inode(inum)?;
        let leaf = ino.leaf_of(at.min(ino.extents.len().saturating_sub(1)));
        let idx = ino.index.get(at / crate::inode::BLOCK_ENTRIES / crate::inode::BLOCK_ENTRIES).copied();
        for b in [leaf, idx].into_iter().flatten() {
            self.j.dirty(b);
        }
        self.touch_inode(inum)?;
        Ok(())
    }

    /// `ext4_writepage`'s share under delayed allocation: the page joins
    /// the run being collected; the run is mapped and submitted as a whole
    /// when it ends (`ext4_writepages`).
    pub(crate) fn do_writepage(&mut self, inum: u32, index: u64, data: &[u8]) -> Ext4Result<()> {
        if data.len() as u64 > BLOCK {
            return Err(Errno::EINVAL.into());
        }
        if self.inode(inum)?.is_dir {
            return Err(Errno::EISDIR.into());
        }
        let p = &self.pending;
        let n = p.tags.len();
        if n > 0 && (p.inum != inum || p.first + n as u64 != index || n >= MAX_RUN_PAGES) {
            self.flush_pending()?;
        }
        if self.pending.tags.is_empty() {
            self.pending.inum = inum;
            self.pending.first = index;
        }
        let tag = match self.s.content {
            Content::None => 1,
            _ => content_tag(data),
        };
        self.pending.tags.push(tag);
        if self.s.content == Content::Bytes {
            let b = &mut self.pending.bytes;
            let at = b.len();
            b.resize(at + BLOCK as usize, 0);
            b[at..at + data.len()].copy_from_slice(data);
        }
        Ok(())
    }

    /// `mpage_map_and_submit_extent`: unmapped pages of the run get blocks
    /// (contiguous ones as one allocation at the file's goal); then the
    /// run is written in place, one request per physically contiguous piece.
    pub(crate) fn flush_pending(&mut self) -> Ext4Result<()> {
        if self.pending.tags.is_empty() {
            return Ok(());
        }
        let inum = self.pending.inum;
        let first = self.pending.first;
        let tags = std::mem::take(&mut self.pending.tags);
        let bytes = std::mem::take(&mut self.pending.bytes);
        let n = tags.len() as u64;
        if !self.inodes.contains_key(&inum) {
            return Ok(());
        }
        let mut l = first;
        while l < first + n {
            self.need_extent_path(inum, l)?;
            let (p, cnt) = self.inode(inum)?.map_run(l, first + n - l);
            if p.is_none() {
                let mut k = l;
                while k < l + cnt {
                    let goal = self.file_goal(inum, k);
                    let (pb, got) = self.alloc_data_run(inum, k, goal, l + cnt - k)?;
                    let at = self.inode_mut(inum)?.insert(k, pb, got as u32);
                    self.fix_tree(inum, at)?;
                    k += got;
                }
            }
            l += cnt;
        }
        let mut l = first;
        while l < first + n {
            let (p, cnt) = self.inode(inum)?.map_run(l, first + n - l);
            let p = p.ok_or(Errno::EIO)?;
            self.plug_write(p, cnt)?;
            for k in 0..cnt {
                let i = (l - first + k) as usize;
                match self.s.content {
                    Content::Tags => self.tags[(p + k) as usize] = tags[i],
                    Content::Bytes => {
                        let page = &bytes[i * BLOCK as usize..(i + 1) * BLOCK as usize];
                        self.bytes.insert(p + k, page.into());
                    }
                    Content::None => {}
                }
            }
            l += cnt;
        }
        // A writeback that filled the transaction commits it at once.
        self.commit_if_full()
    }

    /// Frees the blocks of `inum` from byte `size` on (`ext4_truncate` →
    /// `ext4_ext_remove_space`).
    pub(crate) fn truncate_blocks(&mut self, inum: u32, size: u64) -> Ext4Result<()> {
        let from = size.div_ceil(BLOCK);
        if self.pending.inum == inum && !self.pending.tags.is_empty() {
            let keep = from.saturating_sub(self.pending.first) as usize;
            self.pending.tags.truncate(keep);
            if self.s.content == Content::Bytes {
                self.pending.bytes.truncate(keep * BLOCK as usize);
            }
        }
        self.need_extent_tail(inum, from)?;
        let ino = self.inode_mut(inum)?;
        let is_dir = ino.is_dir;
        let freed = ino.cut_from(from);
        let last = ino.extents.len().saturating_sub(1);
        for &(s, l) in &freed {
            self.free_run(s, l, is_dir)?;
        }
        self.fix_tree(inum, last)?;
        if self.s.content == Content::Bytes && !size.is_multiple_of(BLOCK) {
            if let Some(p) = self.inode(inum)?.map(size / BLOCK) {
                if let Some(b) = self.bytes.get_mut(&p) {
                    b[(size % BLOCK) as usize..].fill(0);
                }
            }
        }
        Ok(())
    }

    /// `ext4_setattr` with a new size: shrinking frees blocks (the inode is
    /// on the orphan list meanwhile: the superblock joins the transaction).
    pub(crate) fn set_size(&mut self, inum: u32, size: u64) -> Ext4Result<()> {
        let ino = self.inode(inum)?;
        if ino.is_dir {
            return Err(Errno::EISDIR.into());
        }
        if size < ino.size {
            self.touch_super();
            self.truncate_blocks(inum, size)?;
        }
        self.inode_mut(inum)?.size = size;
        self.touch_inode(inum)?;
        Ok(())
    }

    /// Reads (waiting for the device) the mapped blocks of the range.
    pub(crate) fn do_read(&mut self, fd: Fd, offset: u64, len: usize) -> Ext4Result<Vec<u8>> {
        let inum = self.fd_inum(fd)?;
        let size = self.inode(inum)?.size;
        let end = (offset + len as u64).min(size);
        if end <= offset {
            return Ok(Vec::new());
        }
        let mut out = vec![0u8; (end - offset) as usize];
        let (b0, b1) = (offset / BLOCK, end.div_ceil(BLOCK));
        let mut l = b0;
        let mut done = self.io.clock_ns;
        while l < b1 {
            self.need_extent_path(inum, l)?;
            let (p, cnt) = self.inode(inum)?.map_run(l, b1 - l);
            if let Some(p) = p {
                done = done.max(self.submit_now(Op::Read, p, cnt, Cause::Read)?);
                if self.s.content == Content::Bytes {
                    for k in 0..cnt {
                        let Some(src) = self.bytes.get(&(p + k)) else { continue };
                        let bstart = (l + k) * BLOCK;
                        let (s, e) = (bstart.max(offset), (bstart + BLOCK).min(end));
                        out[(s - offset) as usize..(e - offset) as usize]
                            .copy_from_slice(&src[(s - bstart) as usize..(e - bstart) as usize]);
                    }
                }
            }
            l += cnt;
        }
        self.wait_until(done);
        Ok(out)
    }

    /// A write without a page cache above: each page is written back at once.
    pub(crate) fn do_write(&mut self, fd: Fd, offset: u64, data: &[u8]) -> Ext4Result<usize> {
        let inum = self.fd_inum(fd)?;
        if data.is_empty() {
            return Ok(0);
        }
        let end = offset.checked_add(data.len() as u64).ok_or(Errno::EFBIG)?;
        if end > crate::MAX_FILE_BYTES {
            return Err(Errno::EFBIG.into());
        }
        let (first, last) = (offset / BLOCK, (end - 1) / BLOCK);
        self.reserve(last - first + 1)?;
        let r = self.write_pages(fd, inum, offset, data);
        self.reserved = self.reserved.saturating_sub(last - first + 1);
        r.map(|_| data.len())
    }

    fn write_pages(&mut self, fd: Fd, inum: u32, offset: u64, data: &[u8]) -> Ext4Result<()> {
        let end = offset + data.len() as u64;
        let old = self.inode(inum)?.size;
        let size = old.max(end);
        self.inode_mut(inum)?.size = size;
        self.touch_inode(inum)?;
        let mut pos = offset;
        while pos < end {
            let index = pos / BLOCK;
            let valid = (size - index * BLOCK).min(BLOCK) as usize;
            let covers = pos.is_multiple_of(BLOCK) && end - pos >= valid as u64;
            let mut page = if covers || index * BLOCK >= old {
                vec![0u8; valid]
            } else {
                let mut v = self.do_read(fd, index * BLOCK, BLOCK as usize)?;
                v.resize(valid, 0);
                v
            };
            let s = (pos - index * BLOCK) as usize;
            let e = ((end - index * BLOCK).min(BLOCK)) as usize;
            page[s..e].copy_from_slice(&data[(pos - offset) as usize..(pos - offset) as usize + e - s]);
            self.do_writepage(inum, index, &page)?;
            pos = index * BLOCK + e as u64;
        }
        self.flush_pending()
    }

    /// `ext4_da_reserve_space`: delayed-allocation pages are counted against
    /// the free blocks less the reserved pool (`ext4_claim_free_clusters`);
    /// on ENOSPC with frees waiting for a commit, commit and try again
    /// (`ext4_should_retry_alloc`).
    pub(crate) fn reserve(&mut self, pages: u64) -> Ext4Result<()> {
        if !self.can_reserve(pages) && self.pending_free_blocks() > 0 {
            self.flush_pending()?;
            self.commit_tx(true)?;
        }
        if !self.can_reserve(pages) {
            return Err(Errno::ENOSPC.into());
        }
        self.reserved += pages;
        Ok(())
    }

    fn can_reserve(&self, pages: u64) -> bool {
        let used = self.reserved + self.pending.tags.len() as u64 + pages + self.lay.resv_clusters;
        self.free_blocks() >= used
    }
}
