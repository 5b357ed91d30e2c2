//! The file API: paths, directories, files, handles.

use crate::codec::DataFields;
use crate::compress::{compress, compress_shrunk_tail, decompress, Compression};
use crate::error::{Errno, FsError, FsResult};
use crate::fs::{Fd, Fs};
use crate::hot::Class;
use crate::key::{Key, KIND_DATA, KIND_DENT};
use crate::node::{
    DataNode, DentNode, InoNode, Loc, Node, COMPR_ELIDED, DATA_NODE_BYTES, DENT_NODE_BYTES, INO_NODE_BYTES,
    TRUN_NODE_BYTES,
};
use flashlab_vfs::TailToken;

use flashlab_ubi::Ubi;

/// Bytes per data block.
pub const BLOCK: u64 = 4096;
/// Largest file size: UBIFS's `key_max_inode_size` for its simple key
/// format (fs/ubifs/key.h: `UBIFS_S_KEY_BLOCK_BITS` = 29 bits of block
/// number, times `UBIFS_BLOCK_SIZE`), 2 TiB, which `ubifs_fill_super` makes
/// `s_maxbytes`. (Until the fourteenth session it was 4 GiB, and seed 002's
/// 4.7 GB large file failed with EFBIG at full size.)
pub const MAX_FILE_BYTES: u64 = (1 << 29) * BLOCK;
/// Longest name.
pub const NAME_MAX: usize = 255;

pub use flashlab_vfs::{DirEntry, Stat, StatFs};

fn split(path: &str) -> FsResult<Vec<&[u8]>> {
    if !path.starts_with('/') {
        return Err(Errno::EINVAL.into());
    }
    let parts: Vec<&[u8]> = path.split('/').filter(|c| !c.is_empty()).map(str::as_bytes).collect();
    for p in &parts {
        if p.len() > NAME_MAX {
            return Err(Errno::ENAMETOOLONG.into());
        }
        if *p == b"." || *p == b".." {
            return Err(Errno::EINVAL.into());
        }
    }
    Ok(parts)
}

impl Fs {
    /// Runs one operation between `enter` and `leave`.
    pub(crate) fn run<T>(&mut self, f: impl FnOnce(&mut Fs) -> FsResult<T>) -> FsResult<T> {
        self.enter()?;
        let r = f(self);
        self.leave(r)
    }

    fn enter(&mut self) -> FsResult<()> {
        if self.broken {
            return Err(Errno::EIO.into());
        }
        Ok(())
    }

    /// Marks the FS unusable after a flash failure, runs a requested
    /// background commit (UBIFS's `ubifs_bg_thread` runs it as soon as it is
    /// woken, here right after the operation that asked for it), and runs
    /// strict checks.
    fn leave<T>(&mut self, r: FsResult<T>) -> FsResult<T> {
        match &r {
            Err(FsError::Io(_)) | Err(FsError::Corrupt(_)) => self.broken = true,
            _ => {}
        }
        let r = match r {
            Ok(v) if self.bg_commit && !self.broken => {
                self.counters.bg_commits += 1;
                self.commit().map(|_| v)
            }
            r => r,
        };
        if self.cfg.strict && !self.broken {
            self.check_invariants()?;
        }
        r
    }

    pub(crate) fn inode(&mut self, inum: u32) -> FsResult<InoNode> {
        if let Some(i) = self.inodes.get(&inum) {
            return Ok(i.clone());
        }
        let loc = self.idx_lookup(&Key::ino(inum)).ok_or(Errno::ENOENT)?;
        match self.read_node(loc)? {
            Node::Ino(i) if i.inum == inum => {
                self.inodes.insert(inum, i.clone());
                Ok(i)
            }
            _ => Err(FsError::Corrupt(format!("inode {inum}"))),
        }
    }

    /// Looks a name up in a directory: (inum, is_dir).
    /// A cached entry costs no read (`names.rs`); one read from flash is
    /// cached. As `ubifs_lookup` → `ubifs_iget`, the inode a name leads to is
    /// read too unless cached (a dentry holds its inode).
    pub(crate) fn lookup(&mut self, dir: u32, name: &[u8]) -> FsResult<Option<(u32, bool)>> {
        let key = Key::dent(dir, name);
        let named = match self.cached_name(&key) {
            Some(named) => named,
            None => {
                let Some(loc) = self.idx_lookup(&key) else { return Ok(None) };
                let named = match self.read_node(loc)? {
                    Node::Dent(d) if d.name == name => (d.target, d.is_dir),
                    _ => return Err(FsError::Corrupt("directory entry".into())),
                };
                self.cache_name(&key, named);
                named
            }
        };
        self.inode(named.0)?;
        Ok(Some(named))
    }

    fn resolve(&mut self, path: &str) -> FsResult<(u32, bool)> {
        let mut cur = (1u32, true);
        for c in split(path)? {
            if !cur.1 {
                return Err(Errno::ENOTDIR.into());
            }
            cur = self.lookup(cur.0, c)?.ok_or(Errno::ENOENT)?;
        }
        Ok(cur)
    }

    fn resolve_parent(&mut self, path: &str) -> FsResult<(u32, Vec<u8>)> {
        let parts = split(path)?;
        let (name, dirs) = parts.split_last().ok_or(Errno::EINVAL)?;
        let mut cur = (1u32, true);
        for c in dirs {
            cur = self.lookup(cur.0, c)?.ok_or(Errno::ENOENT)?;
            if !cur.1 {
                return Err(Errno::ENOTDIR.into());
            }
        }
        Ok((cur.0, name.to_vec()))
    }

    /// Removes every key of an inode (an operation written to head `h`).
    pub(crate) fn purge(&mut self, h: usize, inum: u32) {
        for (k, _) in self.idx_range(&Key::first(inum, 0), &Key::first(inum + 1, 0)) {
            self.idx_del(h, &k);
        }
        self.note_range(h, inum, 0);
        self.inodes.remove(&inum);
    }

    /// Removes data blocks at or beyond `size` (an operation written to head `h`).
    pub(crate) fn remove_blocks_from(&mut self, h: usize, inum: u32, size: u64) {
        let first = size.div_ceil(BLOCK) as u32;
        for (k, _) in self.idx_range(&Key::data(inum, first), &Key::first(inum, KIND_DATA + 1)) {
            self.idx_del(h, &k);
        }
        self.note_range(h, inum, first);
    }

    fn new_inode(&mut self, path: &str, is_dir: bool) -> FsResult<u32> {
        let (parent, name) = self.resolve_parent(path)?;
        if self.lookup(parent, &name)?.is_some() {
            return Err(Errno::EEXIST.into());
        }
        self.budget((2 * INO_NODE_BYTES + DENT_NODE_BYTES + 8 + name.len()) as u64, false)?;
        let inum = self.highest_inum + 1;
        self.highest_inum = inum;
        let ino = InoNode { inum, nlink: 1, size: 0, is_dir };
        let dent = DentNode { parent, name: name.clone(), target: inum, is_dir };
        // ubifs_jnl_update (journal.c): the entry, the new inode and the
        // parent directory's inode (its size and times change), one group.
        let pino = self.inode(parent)?;
        let keys = [Key::ino(inum), Key::dent(parent, &name), Key::ino(parent)];
        let h = self.pick_head(Class::Meta, &keys, &[]);
        let locs = self.journal_write(h, &[Node::Ino(ino.clone()), Node::Dent(dent), Node::Ino(pino)])?;
        self.idx_set(h, &keys[0], locs[0]);
        self.idx_set(h, &keys[1], locs[1]);
        self.idx_set(h, &keys[2], locs[2]);
        // `d_instantiate`: the new name is in the dentry cache.
        self.cache_name(&keys[1], (inum, is_dir));
        self.inodes.insert(inum, ino);
        self.counters.ops += 1;
        Ok(inum)
    }

    /// Creates an empty file and opens it.
    pub fn create(&mut self, path: &str) -> FsResult<Fd> {
        self.enter()?;
        let r = self.new_inode(path, false).map(|inum| self.new_fd(inum));
        self.leave(r)
    }

    /// Creates a directory.
    pub fn mkdir(&mut self, path: &str) -> FsResult<()> {
        self.enter()?;
        let r = self.new_inode(path, true).map(|_| ());
        self.leave(r)
    }

    fn new_fd(&mut self, inum: u32) -> Fd {
        let fd = Fd(self.next_fd);
        self.next_fd += 1;
        self.fds.insert(fd, inum);
        fd
    }

    /// Opens an existing file.
    pub fn open(&mut self, path: &str) -> FsResult<Fd> {
        self.enter()?;
        let r = self
            .resolve(path)
            .and_then(|(inum, dir)| if dir { Err(Errno::EISDIR.into()) } else { Ok(self.new_fd(inum)) });
        self.leave(r)
    }

    fn fd_inum(&self, fd: Fd) -> FsResult<u32> {
        self.fds.get(&fd).copied().ok_or(Errno::EBADF.into())
    }

    /// Closes a handle; the last close of an unlinked file deletes it.
    pub fn close(&mut self, fd: Fd) -> FsResult<()> {
        self.enter()?;
        let r = self.do_close(fd);
        self.leave(r)
    }

    fn do_close(&mut self, fd: Fd) -> FsResult<()> {
        let inum = self.fds.remove(&fd).ok_or(Errno::EBADF)?;
        if self.fds.values().any(|i| *i == inum) || !self.orphans.contains(&inum) {
            return Ok(());
        }
        self.budget(INO_NODE_BYTES as u64, true)?;
        let ino = InoNode { nlink: 0, ..self.inode(inum)? };
        let h = self.pick_head(Class::Meta, &[Key::ino(inum)], &[inum]);
        let loc = self.journal_write(h, &[Node::Ino(ino)])?[0];
        self.obsolete(loc);
        self.purge(h, inum);
        self.orphans.remove(&inum);
        Ok(())
    }

    /// Reads up to `len` bytes at `offset`.
    pub fn read(&mut self, fd: Fd, offset: u64, len: usize) -> FsResult<Vec<u8>> {
        self.enter()?;
        let r = self.do_read(fd, offset, len);
        self.leave(r)
    }

    fn do_read(&mut self, fd: Fd, offset: u64, len: usize) -> FsResult<Vec<u8>> {
        let inum = self.fd_inum(fd)?;
        let size = self.inode(inum)?.size;
        let end = (offset + len as u64).min(size);
        let mut out = Vec::with_capacity(end.saturating_sub(offset) as usize + BLOCK as usize);
        // The TNC leaf of the last block: the next block's key is most
        // likely in it (nothing changes the TNC during the read).
        let mut leaf = None;
        let mut pos = offset;
        while pos < end {
            let b = (pos / BLOCK) as u32;
            let s = (pos % BLOCK) as usize;
            let e = ((end - b as u64 * BLOCK).min(BLOCK)) as usize;
            // The whole block goes to the end of `out`, then its part before
            // the read is moved out of the way (none for aligned reads).
            let at = out.len();
            self.append_block(inum, b, size, &mut out, &mut leaf)?;
            if s > 0 {
                out.copy_within(at + s..at + e, at);
            }
            out.truncate(at + e - s);
            pos = b as u64 * BLOCK + e as u64;
        }
        Ok(out)
    }

    /// One 4 KiB block, zero-filled past its data and past `size`.
    fn read_block(&mut self, inum: u32, b: u32, size: u64) -> FsResult<Vec<u8>> {
        let mut block = Vec::with_capacity(BLOCK as usize);
        self.append_block(inum, b, size, &mut block, &mut None)?;
        Ok(block)
    }

    /// Appends block `b` (4 KiB, zero-filled past its data and past `size`)
    /// to `out`: the data node's bytes are copied once, from the node read.
    /// `leaf`: the TNC cursor of `Tnc::lookup_near`.
    fn append_block(
        &mut self,
        inum: u32,
        b: u32,
        size: u64,
        out: &mut Vec<u8>,
        leaf: &mut Option<usize>,
    ) -> FsResult<()> {
        let at = out.len();
        self.read_old_block(inum, b, out, leaf)?;
        out.resize(at + BLOCK as usize, 0);
        let valid = size.saturating_sub(b as u64 * BLOCK).min(BLOCK) as usize;
        out[at + valid..].fill(0);
        Ok(())
    }

    /// Reads and checks block `b`'s data node, if it has one, as `read_node`
    /// would (flash read, header and CRC, payload decompressed), and appends
    /// its bytes (at most a block) to `out`.
    fn read_old_block(&mut self, inum: u32, b: u32, out: &mut Vec<u8>, leaf: &mut Option<usize>) -> FsResult<()> {
        let Some(loc) = self.idx_lookup_near(&Key::data(inum, b), leaf) else { return Ok(()) };
        let mut buf = std::mem::take(&mut self.node_buf);
        buf.resize(loc.len as usize, 0);
        let chk_crc = self.must_chk_data_crc();
        let r = self
            .read_bytes_into(loc.lnum, loc.offs, &mut buf)
            .and_then(|()| Self::check_data_node(inum, b, loc, &buf, chk_crc, out));
        self.node_buf = buf;
        r
    }

    /// Whether a data node read through the index has its CRC checked:
    /// `ubifs_check_node` (fs/ubifs/io.c) skips it for a data node when
    /// `!must_chk_crc && c->no_chk_data_crc && !c->mounting &&
    /// !c->remounting_rw`; `ubifs_read_node` (file reads, `do_readpage` →
    /// `read_block` → `ubifs_tnc_read_node`) passes `must_chk_crc` = 0,
    /// `no_chk_data_crc` is the default (`alloc_ubifs_info`; mount option
    /// `chk_data_crc` clears it), and `ubifs_ro_mode` clears it after an
    /// error (here `broken`). Scans (GC, replay: `ubifs_scan_a_node`) check
    /// always, through `parse_hdr`.
    pub(crate) fn must_chk_data_crc(&self) -> bool {
        self.cfg.chk_data_crc || self.mounting || self.broken
    }

    /// `read_node`'s checks of the data node `bytes` read from `loc` (header,
    /// the CRC if `chk_crc`, payload decompressed), with the payload read in
    /// place rather than copied; its bytes (at most a block) are appended to
    /// `out`.
    fn check_data_node(inum: u32, b: u32, loc: Loc, bytes: &[u8], chk_crc: bool, out: &mut Vec<u8>) -> FsResult<()> {
        let d = match crate::codec::parse_data_ref(bytes, chk_crc) {
            Some((h, d)) if h.len == loc.len => d,
            _ => return Err(not_a_data_node(bytes, loc)),
        };
        if d.compr & COMPR_ELIDED != 0 {
            let at = out.len();
            out.resize(at + (d.size as usize).min(BLOCK as usize), 0);
            elided_filler(inum, b, &mut out[at..]);
            return Ok(());
        }
        let c = Compression::from_code(d.compr).ok_or(FsError::Corrupt("compression".into()))?;
        let bad = || FsError::Corrupt("payload".into());
        let data = match c {
            Compression::None if d.payload.len() == d.size as usize => d.payload,
            Compression::None => return Err(bad()),
            _ => &decompress(c, d.payload, d.size as usize).ok_or_else(bad)?[..],
        };
        out.extend_from_slice(&data[..data.len().min(BLOCK as usize)]);
        Ok(())
    }

    pub(crate) fn data_node(&self, inum: u32, b: u32, bytes: &[u8]) -> Node {
        let (c, payload) = compress(self.cfg.compression, bytes);
        let (compr, payload) = if self.cfg.elide_payload {
            (c.code() | COMPR_ELIDED, vec![0; payload.len()])
        } else {
            (c.code(), payload)
        };
        Node::Data(DataNode { inum, block: b, size: bytes.len() as u32, compr, payload })
    }

    /// Journals block `b`'s data node holding `bytes` to head `h`: the node
    /// [`Fs::data_node`] builds, encoded straight into the head's write
    /// buffer (`journal_write_data`) from `bytes` themselves where
    /// `compress` would store them as they are, else from the compressed
    /// payload, with no `DataNode` nor copy of the bytes of its own
    /// (`ubifs_jnl_write_data`, fs/ubifs/journal.c, compresses into the
    /// node it writes).
    ///
    /// `page_tail`: the page cache's token of `bytes` after the first
    /// `lz4_memo::HEAD` (`flashlab_vfs::TailToken`), where it gave one.
    pub(crate) fn journal_write_block(
        &mut self,
        h: usize,
        inum: u32,
        b: u32,
        bytes: &[u8],
        page_tail: Option<TailToken>,
    ) -> FsResult<Loc> {
        if self.cfg.elide_payload {
            let node = self.data_node(inum, b, bytes);
            return Ok(self.journal_write(h, &[node])?[0]);
        }
        let size = bytes.len() as u32;
        match compress_shrunk_tail(self.cfg.compression, bytes, page_tail) {
            (Some((c, p)), _) => self
                .journal_write_data(h, DataFields { inum, block: b, size, compr: c.code(), payload: &p, tail: None }),
            (None, tail) => {
                self.journal_write_data(h, DataFields { inum, block: b, size, compr: 0, payload: bytes, tail })
            }
        }
    }

    /// Writes `data` at `offset`; returns the bytes written.
    pub fn write(&mut self, fd: Fd, offset: u64, data: &[u8]) -> FsResult<usize> {
        self.enter()?;
        let r = self.do_write(fd, offset, data);
        self.leave(r)
    }

    fn do_write(&mut self, fd: Fd, offset: u64, data: &[u8]) -> FsResult<usize> {
        let inum = self.fd_inum(fd)?;
        let end = offset + data.len() as u64;
        if end > MAX_FILE_BYTES {
            return Err(Errno::EFBIG.into());
        }
        if data.is_empty() {
            return Ok(0);
        }
        let blocks = (end - 1) / BLOCK - offset / BLOCK + 1;
        self.budget(blocks * (BLOCK + DATA_NODE_BYTES as u64) + INO_NODE_BYTES as u64, false)?;
        let mut ino = self.inode(inum)?;
        let old_size = ino.size;
        let new_size = old_size.max(end);
        if new_size != old_size {
            // The size goes first: a commit in the middle of this write must
            // never see data blocks beyond the inode's size.
            ino.size = new_size;
            self.write_inode(&ino)?;
        }
        let mut pos = offset;
        while pos < end {
            let b = (pos / BLOCK) as u32;
            let s = (pos % BLOCK) as usize;
            let e = ((end - b as u64 * BLOCK).min(BLOCK)) as usize;
            let src = &data[(pos - offset) as usize..(pos - offset) as usize + e - s];
            let whole = e - s == BLOCK as usize;
            // The whole block is new, so its old node is not read: as
            // `ubifs_write_begin` (fs/ubifs/file.c) skips `do_readpage` for
            // a page the write covers whole ("We change whole page so no
            // need to load it"). `idx_set` below obsoletes the old node by
            // the length the index holds, as `ubifs_tnc_add` does, without
            // reading it either.
            let partial = if whole {
                None
            } else {
                let mut block = self.read_block(inum, b, old_size)?;
                block[s..e].copy_from_slice(src);
                let valid = new_size.saturating_sub(b as u64 * BLOCK).min(BLOCK) as usize;
                block.truncate(valid);
                Some(block)
            };
            let key = Key::data(inum, b);
            let h = self.pick_head(Class::Data, std::slice::from_ref(&key), &[]);
            let loc = self.journal_write_block(h, inum, b, partial.as_deref().unwrap_or(src), None)?;
            self.idx_set(h, &key, loc);
            pos = b as u64 * BLOCK + e as u64;
        }
        self.counters.ops += 1;
        Ok(data.len())
    }

    pub(crate) fn write_inode(&mut self, ino: &InoNode) -> FsResult<()> {
        let key = Key::ino(ino.inum);
        let h = self.pick_head(Class::Meta, std::slice::from_ref(&key), &[]);
        let loc = self.journal_write(h, &[Node::Ino(ino.clone())])?[0];
        self.idx_set(h, &key, loc);
        self.inodes.insert(ino.inum, ino.clone());
        Ok(())
    }

    /// Sets a file's size (by path).
    pub fn truncate(&mut self, path: &str, size: u64) -> FsResult<()> {
        self.enter()?;
        let r = self.resolve(path).and_then(
            |(inum, dir)| {
                if dir {
                    Err(Errno::EISDIR.into())
                } else {
                    self.do_truncate(inum, size)
                }
            },
        );
        self.leave(r)
    }

    /// Sets a file's size (by handle).
    pub fn ftruncate(&mut self, fd: Fd, size: u64) -> FsResult<()> {
        self.enter()?;
        let r = self.fd_inum(fd).and_then(|inum| self.do_truncate(inum, size));
        self.leave(r)
    }

    fn do_truncate(&mut self, inum: u32, size: u64) -> FsResult<()> {
        if size > MAX_FILE_BYTES {
            return Err(Errno::EFBIG.into());
        }
        let mut ino = self.inode(inum)?;
        let old = ino.size;
        if size == old {
            return Ok(());
        }
        let bytes = BLOCK + (DATA_NODE_BYTES + TRUN_NODE_BYTES + INO_NODE_BYTES) as u64;
        if size == 0 {
            self.budget_deletion(bytes)?;
        } else {
            self.budget(bytes, size < old)?;
        }
        let mut nodes = Vec::new();
        let edge = size.min(old);
        let b = (edge / BLOCK) as u32;
        if edge % BLOCK != 0 && self.idx_lookup(&Key::data(inum, b)).is_some() {
            let block = self.read_block(inum, b, edge)?;
            nodes.push(self.data_node(inum, b, &block[..(edge % BLOCK) as usize]));
        }
        if size < old {
            nodes.insert(0, Node::Trun { inum, old_size: old, new_size: size });
        }
        ino.size = size;
        nodes.push(Node::Ino(ino.clone()));
        let keys: Vec<Key> = nodes.iter().filter_map(Node::key).collect();
        let range: &[u32] = if size < old { &[inum] } else { &[] };
        let h = self.pick_head(Class::Meta, &keys, range);
        let locs = self.journal_write(h, &nodes)?;
        self.apply_truncate(h, &nodes, &locs, inum, size, old);
        self.inodes.insert(inum, ino);
        self.counters.ops += 1;
        Ok(())
    }

    fn apply_truncate(&mut self, h: usize, nodes: &[Node], locs: &[Loc], inum: u32, size: u64, old: u64) {
        if size < old {
            self.remove_blocks_from(h, inum, size);
        }
        for (n, l) in nodes.iter().zip(locs) {
            match n.key() {
                Some(k) => self.idx_set(h, &k, *l),
                None => self.obsolete(*l),
            }
        }
    }

    /// Removes a file name; an open file lives on as an orphan until closed.
    pub fn unlink(&mut self, path: &str) -> FsResult<()> {
        self.enter()?;
        let r = self.remove_entry(path, false);
        self.leave(r)
    }

    /// Removes an empty directory.
    pub fn rmdir(&mut self, path: &str) -> FsResult<()> {
        self.enter()?;
        let r = self.remove_entry(path, true);
        self.leave(r)
    }

    fn dir_is_empty(&self, inum: u32) -> bool {
        self.idx_range(&Key::first(inum, KIND_DENT), &Key::first(inum, KIND_DENT + 1)).is_empty()
    }

    fn remove_entry(&mut self, path: &str, dir: bool) -> FsResult<()> {
        let (parent, name) = self.resolve_parent(path)?;
        let (inum, is_dir) = self.lookup(parent, &name)?.ok_or(Errno::ENOENT)?;
        match (dir, is_dir) {
            (false, true) => return Err(Errno::EISDIR.into()),
            (true, false) => return Err(Errno::ENOTDIR.into()),
            (true, true) if !self.dir_is_empty(inum) => return Err(Errno::ENOTEMPTY.into()),
            _ => {}
        }
        self.budget_deletion((DENT_NODE_BYTES + 8 + 2 * INO_NODE_BYTES + name.len()) as u64)?;
        let ino = InoNode { nlink: 0, ..self.inode(inum)? };
        let del = DentNode { parent, name: name.clone(), target: 0, is_dir };
        // ubifs_jnl_update with deletion: the deletion entry, the inode
        // (nlink 0) and the parent directory's inode, one group; the
        // inode's deletion at its last close adds nothing more when no
        // commit came between (ubifs_jnl_delete_inode's fast path).
        let pino = self.inode(parent)?;
        let h = self.pick_head(Class::Meta, &[Key::dent(parent, &name), Key::ino(inum), Key::ino(parent)], &[inum]);
        let locs = self.journal_write(h, &[Node::Dent(del), Node::Ino(ino.clone()), Node::Ino(pino)])?;
        self.idx_del(h, &Key::dent(parent, &name));
        self.obsolete(locs[0]);
        self.idx_set(h, &Key::ino(parent), locs[2]);
        self.drop_link(h, ino, locs[1]);
        self.counters.ops += 1;
        Ok(())
    }

    /// The inode lost its only link: delete it, or keep it as an orphan.
    fn drop_link(&mut self, h: usize, ino: InoNode, loc: Loc) {
        if self.fds.values().any(|i| *i == ino.inum) {
            self.idx_set(h, &Key::ino(ino.inum), loc);
            self.inodes.insert(ino.inum, ino.clone());
            self.orphans.insert(ino.inum);
        } else {
            self.obsolete(loc);
            self.purge(h, ino.inum);
        }
    }

    /// Renames, replacing a compatible target (an empty directory or a file).
    pub fn rename(&mut self, from: &str, to: &str) -> FsResult<()> {
        self.enter()?;
        let r = self.do_rename(from, to);
        self.leave(r)
    }

    fn is_ancestor(&mut self, dir: u32, path: &str) -> FsResult<bool> {
        let parts = split(path)?;
        let mut cur = 1u32;
        for c in parts {
            if cur == dir {
                return Ok(true);
            }
            match self.lookup(cur, c)? {
                Some((i, true)) => cur = i,
                _ => return Ok(false),
            }
        }
        Ok(cur == dir)
    }

    fn do_rename(&mut self, from: &str, to: &str) -> FsResult<()> {
        let (fp, fname) = self.resolve_parent(from)?;
        let (inum, is_dir) = self.lookup(fp, &fname)?.ok_or(Errno::ENOENT)?;
        let (tp, tname) = self.resolve_parent(to)?;
        if is_dir && self.is_ancestor(inum, to)? {
            return Err(Errno::EINVAL.into());
        }
        let target = self.lookup(tp, &tname)?;
        if let Some((t, tdir)) = target {
            if t == inum {
                return Ok(());
            }
            match (is_dir, tdir) {
                (true, false) => return Err(Errno::ENOTDIR.into()),
                (false, true) => return Err(Errno::EISDIR.into()),
                (true, true) if !self.dir_is_empty(t) => return Err(Errno::ENOTEMPTY.into()),
                _ => {}
            }
        }
        let moved = fp != tp;
        let inodes = 2 + usize::from(target.is_some()) + usize::from(moved);
        self.budget((2 * DENT_NODE_BYTES + 16 + inodes * INO_NODE_BYTES + fname.len() + tname.len()) as u64, false)?;
        // ubifs_jnl_rename (journal.c), one group: the new entry, the
        // deletion entry of the old name, the replaced target's inode (nlink
        // dropped), the old parent's inode and, when moving between
        // directories, the new parent's inode.
        let mut nodes = vec![
            Node::Dent(DentNode { parent: tp, name: tname.clone(), target: inum, is_dir }),
            Node::Dent(DentNode { parent: fp, name: fname.clone(), target: 0, is_dir }),
        ];
        let mut keys = vec![Key::dent(tp, &tname), Key::dent(fp, &fname)];
        let mut range = Vec::new();
        if let Some((t, _)) = target {
            nodes.push(Node::Ino(InoNode { nlink: 0, ..self.inode(t)? }));
            keys.push(Key::ino(t));
            range.push(t);
        }
        let parents: &[u32] = if moved { &[fp, tp] } else { &[fp] };
        for p in parents {
            nodes.push(Node::Ino(self.inode(*p)?));
            keys.push(Key::ino(*p));
        }
        let h = self.pick_head(Class::Meta, &keys, &range);
        let locs = self.journal_write(h, &nodes)?;
        self.idx_del(h, &Key::dent(fp, &fname));
        self.idx_set(h, &keys[0], locs[0]);
        // `d_move`: the dentry now carries the new name.
        self.cache_name(&keys[0], (inum, is_dir));
        self.obsolete(locs[1]);
        let first_parent = nodes.len() - parents.len();
        for (i, p) in parents.iter().enumerate() {
            self.idx_set(h, &Key::ino(*p), locs[first_parent + i]);
        }
        if let Some(Node::Ino(i)) = target.and(nodes.get(2)) {
            self.drop_link(h, i.clone(), locs[2]);
        }
        // do_rename (dir.c) sets the renamed inode's ctime and marks it dirty
        // (`mark_inode_dirty_sync`); writeback then writes it
        // (`ubifs_write_inode` → `ubifs_jnl_write_inode`). flashfs keeps no
        // dirty inodes of its own: it writes it now.
        let ino = self.inode(inum)?;
        self.write_inode(&ino)?;
        self.counters.ops += 1;
        Ok(())
    }

    /// Lists a directory (in key order: by name hash).
    pub fn readdir(&mut self, path: &str) -> FsResult<Vec<DirEntry>> {
        self.enter()?;
        let r = self.do_readdir(path);
        self.leave(r)
    }

    fn do_readdir(&mut self, path: &str) -> FsResult<Vec<DirEntry>> {
        let (inum, dir) = self.resolve(path)?;
        if !dir {
            return Err(Errno::ENOTDIR.into());
        }
        let mut out = Vec::new();
        // `ubifs_readdir` → `ubifs_tnc_next_ent` → `tnc_read_node_nm`: an
        // entry in the LNC is not read again; one read is added to it.
        for (k, loc) in self.idx_range(&Key::first(inum, KIND_DENT), &Key::first(inum, KIND_DENT + 1)) {
            let (target, is_dir) = match self.cached_name(&k) {
                Some(named) => named,
                None => {
                    let Node::Dent(d) = self.read_node(loc)? else { return Err(FsError::Corrupt("dent".into())) };
                    self.cache_name(&k, (d.target, d.is_dir));
                    (d.target, d.is_dir)
                }
            };
            let name = String::from_utf8_lossy(&k.name).into_owned();
            out.push(DirEntry { name, inum: target, is_dir });
        }
        Ok(out)
    }

    /// File or directory attributes.
    pub fn stat(&mut self, path: &str) -> FsResult<Stat> {
        self.enter()?;
        let r = self.resolve(path).and_then(|(inum, _)| {
            let i = self.inode(inum)?;
            Ok(Stat { inum, size: i.size, is_dir: i.is_dir, nlink: i.nlink })
        });
        self.leave(r)
    }

    /// Attributes of an open file.
    pub fn fstat(&mut self, fd: Fd) -> FsResult<Stat> {
        self.enter()?;
        let r = self.fd_inum(fd).and_then(|inum| {
            let i = self.inode(inum)?;
            Ok(Stat { inum, size: i.size, is_dir: i.is_dir, nlink: i.nlink })
        });
        self.leave(r)
    }

    /// Makes the file's nodes durable: syncs the write buffers holding
    /// nodes of its inode (`ubifs_fsync` → `ubifs_sync_wbufs_by_inode`).
    pub fn fsync(&mut self, fd: Fd) -> FsResult<()> {
        self.enter()?;
        let r = self.fd_inum(fd).and_then(|inum| self.sync_heads_of(inum));
        self.leave(r)
    }

    /// Makes everything written so far durable, as `ubifs_sync_fs`
    /// (super.c) does for sync(2), syncfs(2) and unmount's
    /// `sync_filesystem`: sync every write buffer, then `ubifs_run_commit`,
    /// whose `do_commit` returns at once when `nothing_to_commit` (TNC and
    /// LPT clean: nothing written or freed since the last commit).
    pub fn sync(&mut self) -> FsResult<()> {
        self.enter()?;
        let r = self.sync_fs();
        self.leave(r)
    }

    /// `ubifs_sync_fs` (super.c): the write buffers, then a commit unless
    /// `nothing_to_commit` (commit.c).
    pub(crate) fn sync_fs(&mut self) -> FsResult<()> {
        self.sync_heads()?;
        self.run_commit()
    }

    /// Moves simulated time to `now_ns` (never backwards) and does what is
    /// due by then: write buffers whose timer expired are synced.
    pub fn advance_to(&mut self, now_ns: u64) -> FsResult<()> {
        self.enter()?;
        self.now_ns = self.now_ns.max(now_ns);
        let r = self.sync_expired_wbufs();
        self.leave(r)
    }

    /// Journal fill (UBIFS's `bud_bytes`), the background-commit mark
    /// (`bg_bud_bytes`) and the limit (`max_bud_bytes`), in bytes.
    pub fn journal_bytes(&self) -> (u64, u64, u64) {
        (self.bud_bytes(), self.bg_bud_bytes(), self.max_bud_bytes())
    }

    /// Simulated time of the file system (ns).
    pub fn now_ns(&self) -> u64 {
        self.now_ns
    }

    /// Commits the journal into the index now (a checkpoint: with the
    /// delayed hot commit, the hot journal only when it is due).
    pub fn commit_now(&mut self) -> FsResult<()> {
        self.enter()?;
        let r = self.commit();
        self.leave(r)
    }

    /// Commits the whole journal now, the hot journal included.
    pub fn commit_all(&mut self) -> FsResult<()> {
        self.enter()?;
        let r = self.commit_full();
        self.leave(r)
    }

    /// Space figures, as UBIFS's `statfs` computes them (`statfs.rs`).
    pub fn statfs(&self) -> StatFs {
        self.ubifs_statfs()
    }

    /// Unmounts as Linux does: `sync_filesystem` (→ `ubifs_sync_fs`: sync
    /// the write buffers, commit unless there is nothing to commit), then
    /// `ubifs_put_super` (sync the write buffers, rewrite the master node
    /// with the clean flag), then UBI's fastmap if enabled. Returns UBI.
    /// Open handles are dropped first (unlinked open files deleted).
    pub fn unmount(mut self) -> Result<Ubi, crate::error::MountFailure> {
        let r = self.do_unmount();
        match r {
            Ok(()) => Ok(self.ubi),
            Err(error) => Err(crate::error::MountFailure { ubi: self.ubi, error }),
        }
    }

    fn do_unmount(&mut self) -> FsResult<()> {
        self.enter()?;
        for fd in self.fds.keys().copied().collect::<Vec<_>>() {
            self.do_close(fd)?;
        }
        // ubifs_sync_fs (super.c), from generic_shutdown_super's
        // sync_filesystem: the commit makes the LPT on flash exact, so the
        // next mount need not recover anything.
        self.sync_heads()?;
        if !self.nothing_to_commit() {
            self.in_commit = true;
            let r = self.do_commit(true);
            self.in_commit = false;
            r?;
        }
        // ubifs_put_super: sync the write buffers (nothing is left in them)
        // and rewrite the master without UBIFS_MST_DIRTY and with
        // UBIFS_MST_NO_ORPHS (every orphan died at its last close above).
        self.sync_heads()?;
        let orph = if self.orphans.is_empty() { None } else { self.mst.orph };
        let m = crate::node::MstNode { clean: true, orph, highest_inum: self.highest_inum, ..self.mst.clone() };
        self.write_master(&m)?;
        self.mst = m;
        self.ubi.detach()?;
        Ok(())
    }
}

/// What a content-free data node (`elide_payload`) reads as: deterministic,
/// incompressible bytes, so a partial-block rewrite compresses as it would
/// with the (incompressible) data of the file benchmarks.
/// The error `read_node` and a data-node check give for bytes at `loc` that
/// are not a well-formed data node of `loc`'s length.
fn not_a_data_node(bytes: &[u8], loc: Loc) -> FsError {
    match crate::codec::parse_node(bytes) {
        Ok((h, _)) if h.len == loc.len => FsError::Corrupt("data node".into()),
        _ => FsError::Corrupt(format!("bad node at {}:{}", loc.lnum, loc.offs)),
    }
}

fn elided_filler(inum: u32, block: u32, out: &mut [u8]) {
    let mut x = ((inum as u64) << 32 | block as u64) ^ 0x9E37_79B9_7F4A_7C15;
    for chunk in out.chunks_mut(8) {
        x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = x;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        chunk.copy_from_slice(&z.to_le_bytes()[..chunk.len()]);
    }
}
