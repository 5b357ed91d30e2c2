//! A JFFS2-style baseline, as far as seed 002 describes it: every erase
//! block is a small log of nodes (data and directory entries); mount scans
//! the whole device and builds an in-memory skeleton of every node; GC and
//! wear levelling choose blocks partly at random. It runs directly on the
//! raw NAND (no UBI) and exists to compare mount cost and memory against
//! UBI + flashfs. Flat namespace, whole-file writes; no power-cut recovery
//! beyond CRC checks (not a full JFFS2).
//!
//! Node: `0 magic u16 0x1985 | 2 type u16 | 4 totlen u32 | 8 ino u32 |
//! 12 version u32 | 16 offset u32 (data) or 0 | 20 len u32 | 24 crc u32`
//! then payload (data bytes, or `target ino u32 + name`), 4-byte aligned.
//! A directory entry's `offset` field holds its type (JFFS2's `d_type`:
//! `DT_REG` or `DT_DIR`). [`vfs`] puts the baseline behind the shared file API.

mod vfs;

pub use vfs::Jffs2Error;

use crate::compress::{compress, decompress, Compression};
use flashlab_mtd::{Cause, MtdError, Nand};
use flashlab_vfs::Fd;
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use std::collections::{HashMap, HashSet};

const MAGIC: u16 = 0x1985;
const T_DATA: u16 = 1;
const T_DIRENT: u16 = 2;
const HDR: usize = 28;
/// Directory-entry types (`d_type`), kept in the entry node's offset field.
pub(crate) const DT_REG: u32 = 8;
pub(crate) const DT_DIR: u32 = 4;
/// Bytes Linux JFFS2 keeps per node (`struct jffs2_raw_node_ref`).
pub const REF_BYTES: usize = 16;
/// Bytes per inode cache entry and per directory entry (plus the name).
pub const INODE_BYTES: usize = 40;
pub const DIRENT_BYTES: usize = 40;

#[derive(Debug, Clone, Copy)]
struct NodeRef {
    block: u32,
    offs: u32,
    len: u32,
    version: u32,
    file_offs: u32,
}

#[derive(Debug, Clone, Default)]
struct BlockInfo {
    written: u32,
    dirty: u32,
}

/// Counters of the baseline.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct Jffs2Stats {
    pub mount_nand_ops: u64,
    pub mount_pages_read: u64,
    pub gc_runs: u64,
    pub wear_level_picks: u64,
}

/// Bytes of nodes appended, by kind (the page padding of buffer flushes
/// left out): what `fs bench` reports as the file system's writes.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct Jffs2Writes {
    pub data_bytes: u64,
    pub dirent_bytes: u64,
    /// Nodes moved by GC.
    pub gc_bytes: u64,
}

/// The mounted baseline file system.
pub struct Jffs2 {
    nand: Nand,
    rng: Xoshiro256PlusPlus,
    blocks: Vec<BlockInfo>,
    cur: Option<u32>,
    wbuf: Vec<u8>,
    data: HashMap<u32, Vec<NodeRef>>,
    dirents: HashMap<String, (u32, u32, NodeRef)>,
    next_ino: u32,
    version: u32,
    compression: Compression,
    in_gc: bool,
    pub stats: Jffs2Stats,
    pub writes: Jffs2Writes,
    /// Directory inodes (from `DT_DIR` entries).
    dirs: HashSet<u32>,
    /// File sizes (in memory only; see [`vfs`]).
    sizes: HashMap<u32, u64>,
    fds: HashMap<Fd, u32>,
    next_fd: u64,
}

fn crc(b: &[u8]) -> u32 {
    crc32fast::hash(b)
}

fn encode(ntype: u16, ino: u32, version: u32, offs: u32, payload: &[u8]) -> Vec<u8> {
    let tot = HDR + payload.len();
    let mut b = Vec::with_capacity(tot.next_multiple_of(4));
    b.extend_from_slice(&MAGIC.to_le_bytes());
    b.extend_from_slice(&ntype.to_le_bytes());
    b.extend_from_slice(&(tot as u32).to_le_bytes());
    for v in [ino, version, offs, payload.len() as u32] {
        b.extend_from_slice(&v.to_le_bytes());
    }
    b.extend_from_slice(&[0; 4]);
    b.extend_from_slice(payload);
    let c = crc(&b[..24]) ^ crc(payload);
    b[24..28].copy_from_slice(&c.to_le_bytes());
    b.resize(tot.next_multiple_of(4), 0xFF);
    b
}

struct Parsed<'a> {
    ntype: u16,
    ino: u32,
    version: u32,
    offs: u32,
    payload: &'a [u8],
    len: u32,
}

fn parse(b: &[u8]) -> Option<Parsed<'_>> {
    if b.len() < HDR || u16::from_le_bytes([b[0], b[1]]) != MAGIC {
        return None;
    }
    let u = |i: usize| u32::from_le_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]);
    let tot = u(4) as usize;
    if tot < HDR || tot > b.len() || HDR + u(20) as usize != tot {
        return None;
    }
    let payload = &b[HDR..tot];
    if crc(&b[..24]) ^ crc(payload) != u(24) {
        return None;
    }
    let ntype = u16::from_le_bytes([b[2], b[3]]);
    Some(Parsed { ntype, ino: u(8), version: u(12), offs: u(16), payload, len: tot.next_multiple_of(4) as u32 })
}

impl Jffs2 {
    /// Erases every block (keeping bad ones) and returns an empty FS.
    pub fn format(mut nand: Nand, seed: u64, compression: Compression) -> Result<Jffs2, MtdError> {
        for b in 0..nand.settings().blocks {
            if !nand.is_bad(b)? {
                nand.erase(b, Cause::Meta)?;
            }
        }
        Ok(Self::empty(nand, seed, compression))
    }

    fn empty(nand: Nand, seed: u64, compression: Compression) -> Jffs2 {
        let n = nand.settings().blocks as usize;
        Jffs2 {
            nand,
            rng: Xoshiro256PlusPlus::seed_from_u64(seed),
            blocks: vec![BlockInfo::default(); n],
            cur: None,
            wbuf: Vec::new(),
            data: HashMap::new(),
            dirents: HashMap::new(),
            next_ino: 2,
            version: 1,
            compression,
            in_gc: false,
            stats: Jffs2Stats::default(),
            writes: Jffs2Writes::default(),
            dirs: HashSet::new(),
            sizes: HashMap::new(),
            fds: HashMap::new(),
            next_fd: 0,
        }
    }

    fn block_bytes(&self) -> u32 {
        self.nand.settings().block_bytes()
    }

    fn page(&self) -> u32 {
        self.nand.settings().page_bytes
    }

    /// Host memory of the in-memory skeleton (Linux-like sizes).
    pub fn memory_bytes(&self) -> usize {
        let refs: usize = self.data.values().map(|v| v.len()).sum::<usize>() + self.dirents.len();
        let names: usize = self.dirents.keys().map(|k| k.len()).sum();
        refs * REF_BYTES
            + self.data.len() * INODE_BYTES
            + self.dirents.len() * DIRENT_BYTES
            + names
            + self.blocks.len() * 24
    }

    pub fn nand(&self) -> &Nand {
        &self.nand
    }

    /// Flushes the write buffer and returns the device.
    pub fn unmount(mut self) -> Result<Nand, MtdError> {
        self.flush()?;
        Ok(self.nand)
    }

    /// Mounts by scanning every page of every good block.
    pub fn mount(nand: Nand, seed: u64, compression: Compression) -> Result<Jffs2, MtdError> {
        let ops0 = nand.stats().ops;
        let reads0 = nand.stats().pages_read.total();
        let mut fs = Self::empty(nand, seed, compression);
        let mut buf = vec![0u8; fs.block_bytes() as usize];
        for b in 0..fs.blocks.len() as u32 {
            if fs.nand.is_bad(b)? {
                continue;
            }
            fs.nand.read(b, 0, &mut buf, Cause::Mount)?;
            fs.blocks[b as usize].written = fs.scan_block(b, &buf);
        }
        fs.finish_scan();
        fs.stats.mount_nand_ops = fs.nand.stats().ops - ops0;
        fs.stats.mount_pages_read = fs.nand.stats().pages_read.total() - reads0;
        Ok(fs)
    }

    fn scan_block(&mut self, b: u32, buf: &[u8]) -> u32 {
        let page = self.page() as usize;
        let mut pos = 0usize;
        let mut end = 0usize;
        while pos + HDR <= buf.len() {
            match parse(&buf[pos..]) {
                Some(p) => {
                    self.add_scanned(b, pos as u32, &p);
                    pos += p.len as usize;
                    end = pos;
                }
                None => pos = (pos + 1).next_multiple_of(page),
            }
        }
        end.next_multiple_of(page) as u32
    }

    fn add_scanned(&mut self, b: u32, offs: u32, p: &Parsed) {
        self.version = self.version.max(p.version + 1);
        self.next_ino = self.next_ino.max(p.ino + 1);
        let r = NodeRef { block: b, offs, len: p.len, version: p.version, file_offs: p.offs };
        if p.ntype == T_DATA {
            self.data.entry(p.ino).or_default().push(r);
        } else if p.ntype == T_DIRENT && p.payload.len() >= 4 {
            let target = u32::from_le_bytes([p.payload[0], p.payload[1], p.payload[2], p.payload[3]]);
            let name = String::from_utf8_lossy(&p.payload[4..]).into_owned();
            let newer = self.dirents.get(&name).is_none_or(|(_, v, _)| p.version > *v);
            if newer {
                self.dirents.insert(name, (target, p.version, r));
            }
        }
    }

    /// Drops obsolete nodes from the skeleton and accounts dirty space.
    fn finish_scan(&mut self) {
        let dead: Vec<String> = self.dirents.iter().filter(|(_, (t, _, _))| *t == 0).map(|(k, _)| k.clone()).collect();
        for k in dead {
            self.dirents.remove(&k);
        }
        self.dirs = self.dirents.values().filter(|(_, _, r)| r.file_offs == DT_DIR).map(|(t, _, _)| *t).collect();
        let live: HashSet<u32> = self.dirents.values().map(|(t, _, _)| *t).collect();
        self.data.retain(|ino, _| live.contains(ino));
        for refs in self.data.values_mut() {
            refs.sort_by_key(|r| (r.file_offs, std::cmp::Reverse(r.version)));
            refs.dedup_by_key(|r| r.file_offs);
        }
        let mut live_bytes = vec![0u32; self.blocks.len()];
        for r in self.data.values().flatten().chain(self.dirents.values().map(|(_, _, r)| r)) {
            live_bytes[r.block as usize] += r.len;
        }
        for (i, b) in self.blocks.iter_mut().enumerate() {
            b.dirty = b.written.saturating_sub(live_bytes[i]);
        }
    }

    fn flush(&mut self) -> Result<(), MtdError> {
        let Some(b) = self.cur else { return Ok(()) };
        if self.wbuf.is_empty() {
            return Ok(());
        }
        let page = self.page() as usize;
        let mut w = std::mem::take(&mut self.wbuf);
        w.resize(w.len().next_multiple_of(page), 0xFF);
        let offs = self.blocks[b as usize].written;
        self.nand.program(b, offs, &w, Cause::Data)?;
        self.blocks[b as usize].written += w.len() as u32;
        Ok(())
    }

    fn free_blocks(&self) -> Vec<u32> {
        (0..self.blocks.len() as u32)
            .filter(|b| self.blocks[*b as usize].written == 0 && Some(*b) != self.cur)
            .collect()
    }

    /// Appends a node; returns its reference.
    fn append(&mut self, node: Vec<u8>, version: u32, file_offs: u32) -> Result<NodeRef, MtdError> {
        let room = |s: &Self, b: u32| s.block_bytes() - s.blocks[b as usize].written - s.wbuf.len() as u32;
        if self.cur.is_none_or(|b| room(self, b) < node.len() as u32) {
            self.flush()?;
            self.cur = None;
            if self.free_blocks().len() < 3 && !self.in_gc {
                self.in_gc = true;
                let r = self.gc();
                self.in_gc = false;
                r?;
            }
            let free = self.free_blocks();
            let b = *free.first().ok_or(MtdError::BadAddress { block: 0, offs: 0, len: 0 })?;
            self.cur = Some(b);
        }
        let b = self.cur.unwrap_or(0);
        let offs = self.blocks[b as usize].written + self.wbuf.len() as u32;
        let r = NodeRef { block: b, offs, len: node.len() as u32, version, file_offs };
        let n = node.len() as u64;
        match u16::from_le_bytes([node[2], node[3]]) {
            _ if self.in_gc => self.writes.gc_bytes += n,
            T_DATA => self.writes.data_bytes += n,
            _ => self.writes.dirent_bytes += n,
        }
        self.wbuf.extend_from_slice(&node);
        let page = self.page() as usize;
        if self.wbuf.len() >= page {
            let full = self.wbuf.len() / page * page;
            let chunk: Vec<u8> = self.wbuf.drain(..full).collect();
            let at = self.blocks[b as usize].written;
            self.nand.program(b, at, &chunk, Cause::Data)?;
            self.blocks[b as usize].written += full as u32;
        }
        Ok(r)
    }

    fn obsolete(&mut self, r: NodeRef) {
        self.blocks[r.block as usize].dirty += r.len;
    }

    /// Writes a whole file (4 KiB data nodes) and its directory entry.
    pub fn write_file(&mut self, name: &str, content: &[u8]) -> Result<(), MtdError> {
        let ino = match self.dirents.get(name) {
            Some((ino, _, _)) => *ino,
            None => {
                let ino = self.next_ino;
                self.next_ino += 1;
                self.write_dirent(name, ino, DT_REG)?;
                ino
            }
        };
        for old in self.data.remove(&ino).unwrap_or_default() {
            self.obsolete(old);
        }
        let mut refs = Vec::new();
        for (i, chunk) in content.chunks(4096).enumerate() {
            refs.push(self.append_data(ino, (i * 4096) as u32, chunk)?);
        }
        self.data.insert(ino, refs);
        self.sizes.insert(ino, content.len() as u64);
        Ok(())
    }

    /// Appends one data node holding `chunk` (at most a page) at file offset `off`.
    fn append_data(&mut self, ino: u32, off: u32, chunk: &[u8]) -> Result<NodeRef, MtdError> {
        let (c, payload) = compress(self.compression, chunk);
        let mut p = vec![c.code()];
        p.extend_from_slice(&(chunk.len() as u32).to_le_bytes());
        p.extend_from_slice(&payload);
        let v = self.next_version();
        self.append(encode(T_DATA, ino, v, off, &p), v, off)
    }

    fn next_version(&mut self) -> u32 {
        self.version += 1;
        self.version
    }

    /// Writes the entry `name` → `target` of type `dt` (`target` 0 deletes it).
    fn write_dirent(&mut self, name: &str, target: u32, dt: u32) -> Result<(), MtdError> {
        let mut p = target.to_le_bytes().to_vec();
        p.extend_from_slice(name.as_bytes());
        let v = self.next_version();
        let r = self.append(encode(T_DIRENT, 1, v, dt, &p), v, dt)?;
        if let Some((_, _, old)) = self.dirents.insert(name.to_string(), (target, v, r)) {
            self.obsolete(old);
        }
        if target == 0 {
            self.dirents.remove(name);
            self.obsolete(r);
        }
        Ok(())
    }

    /// Deletes a file.
    pub fn delete(&mut self, name: &str) -> Result<bool, MtdError> {
        let Some((ino, _, _)) = self.dirents.get(name).copied() else { return Ok(false) };
        self.write_dirent(name, 0, DT_REG)?;
        for r in self.data.remove(&ino).unwrap_or_default() {
            self.obsolete(r);
        }
        Ok(true)
    }

    /// Reads a whole file.
    pub fn read_file(&mut self, name: &str) -> Result<Option<Vec<u8>>, MtdError> {
        let Some((ino, _, _)) = self.dirents.get(name).copied() else { return Ok(None) };
        let refs = self.data.get(&ino).cloned().unwrap_or_default();
        let mut out = Vec::new();
        for r in refs {
            let Some(d) = self.read_data_node(r)? else { return Ok(None) };
            out.resize(r.file_offs as usize, 0);
            out.extend_from_slice(&d);
        }
        Ok(Some(out))
    }

    /// The data of one data node (`None` if it fails its checks).
    fn read_data_node(&mut self, r: NodeRef) -> Result<Option<Vec<u8>>, MtdError> {
        let b = self.read_node(r)?;
        let Some(p) = parse(&b) else { return Ok(None) };
        let c = Compression::from_code(p.payload[0]).unwrap_or(Compression::None);
        let size = u32::from_le_bytes([p.payload[1], p.payload[2], p.payload[3], p.payload[4]]) as usize;
        Ok(Some(decompress(c, &p.payload[5..], size).unwrap_or_default()))
    }

    fn read_node(&mut self, r: NodeRef) -> Result<Vec<u8>, MtdError> {
        let written = self.blocks[r.block as usize].written;
        let mut b = vec![0u8; r.len as usize];
        // The part on flash, then the part still in the write buffer (a node
        // may straddle the last programmed page).
        let on_flash = if self.cur == Some(r.block) { written.saturating_sub(r.offs).min(r.len) } else { r.len };
        if on_flash > 0 {
            self.nand.read(r.block, r.offs, &mut b[..on_flash as usize], Cause::Data)?;
        }
        if on_flash < r.len {
            let s = (r.offs + on_flash - written) as usize;
            b[on_flash as usize..].copy_from_slice(&self.wbuf[s..s + (r.len - on_flash) as usize]);
        }
        Ok(b)
    }

    /// JFFS2's block choice: mostly the dirtiest, sometimes a random
    /// clean block (its only wear levelling).
    fn gc_victim(&mut self) -> Option<u32> {
        let cands: Vec<u32> = (0..self.blocks.len() as u32)
            .filter(|b| Some(*b) != self.cur && self.blocks[*b as usize].written > 0)
            .collect();
        if cands.is_empty() {
            return None;
        }
        if self.rng.gen_range(0..128) >= 126 {
            self.stats.wear_level_picks += 1;
            return Some(cands[self.rng.gen_range(0..cands.len())]);
        }
        cands.into_iter().max_by_key(|b| self.blocks[*b as usize].dirty)
    }

    fn gc(&mut self) -> Result<(), MtdError> {
        let Some(v) = self.gc_victim() else { return Ok(()) };
        let moved: Vec<(u32, usize)> = self
            .data
            .iter()
            .flat_map(|(ino, refs)| refs.iter().enumerate().filter(|(_, r)| r.block == v).map(move |(i, _)| (*ino, i)))
            .collect();
        let names: Vec<String> =
            self.dirents.iter().filter(|(_, (_, _, r))| r.block == v).map(|(k, _)| k.clone()).collect();
        for (ino, i) in moved {
            let r = self.data[&ino][i];
            let bytes = self.read_node(r)?;
            let nr = self.append(bytes, r.version, r.file_offs)?;
            if let Some(v) = self.data.get_mut(&ino) {
                v[i] = nr;
            }
        }
        for name in names {
            let (t, ver, r) = self.dirents[&name];
            let bytes = self.read_node(r)?;
            let nr = self.append(bytes, ver, r.file_offs)?;
            self.dirents.insert(name, (t, ver, nr));
        }
        self.flush()?;
        self.nand.erase(v, Cause::Gc)?;
        self.blocks[v as usize] = BlockInfo::default();
        self.stats.gc_runs += 1;
        Ok(())
    }
}
