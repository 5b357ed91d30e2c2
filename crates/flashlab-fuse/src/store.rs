//! Sparse contents of a byte-addressed device: fixed-size chunks kept in one flat arena,
//! found through a map from chunk number to arena slot. A chunk never written (or whose
//! every byte was trimmed) is not stored and reads as zeros.

use std::collections::HashMap;

/// Bytes per stored chunk (the granularity of the sparse map, not the SSD's page size).
pub const CHUNK_BYTES: usize = 4096;

/// The stored contents of a device of `len` bytes.
#[derive(Clone, Debug, Default)]
pub struct SparseStore {
    len: u64,
    slots: HashMap<u64, u32>,
    arena: Vec<u8>,
    free: Vec<u32>,
}

impl SparseStore {
    /// An all-zero device of `len` bytes.
    pub fn new(len: u64) -> SparseStore {
        SparseStore { len, ..SparseStore::default() }
    }

    /// Device size in bytes.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// True for a zero-byte device.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Chunks holding data.
    pub fn stored_chunks(&self) -> u64 {
        self.slots.len() as u64
    }

    /// Copy `buf.len()` bytes at `offset` into `buf`. The range must lie inside the device.
    pub fn read(&self, offset: u64, buf: &mut [u8]) {
        assert!(offset + buf.len() as u64 <= self.len, "read past the end");
        let mut done = 0;
        while done < buf.len() {
            let pos = offset + done as u64;
            let (chunk, within) = (pos / CHUNK_BYTES as u64, (pos % CHUNK_BYTES as u64) as usize);
            let n = (CHUNK_BYTES - within).min(buf.len() - done);
            match self.slots.get(&chunk) {
                Some(&s) => buf[done..done + n].copy_from_slice(&self.chunk(s)[within..within + n]),
                None => buf[done..done + n].fill(0),
            }
            done += n;
        }
    }

    /// Store `data` at `offset`. The range must lie inside the device.
    pub fn write(&mut self, offset: u64, data: &[u8]) {
        assert!(offset + data.len() as u64 <= self.len, "write past the end");
        let mut done = 0;
        while done < data.len() {
            let pos = offset + done as u64;
            let (chunk, within) = (pos / CHUNK_BYTES as u64, (pos % CHUNK_BYTES as u64) as usize);
            let n = (CHUNK_BYTES - within).min(data.len() - done);
            let s = self.slot(chunk);
            self.chunk_mut(s)[within..within + n].copy_from_slice(&data[done..done + n]);
            done += n;
        }
    }

    /// Make `len` bytes at `offset` read as zeros; whole chunks are released.
    pub fn trim(&mut self, offset: u64, len: u64) {
        assert!(offset + len <= self.len, "trim past the end");
        let end = offset + len;
        let mut pos = offset;
        while pos < end {
            let (chunk, within) = (pos / CHUNK_BYTES as u64, (pos % CHUNK_BYTES as u64) as usize);
            let n = (CHUNK_BYTES as u64 - within as u64).min(end - pos) as usize;
            if n == CHUNK_BYTES {
                if let Some(s) = self.slots.remove(&chunk) {
                    self.free.push(s);
                }
            } else if let Some(&s) = self.slots.get(&chunk) {
                self.chunk_mut(s)[within..within + n].fill(0);
            }
            pos += n as u64;
        }
    }

    /// Every stored chunk as (chunk number, contents), in chunk order.
    pub fn chunks(&self) -> Vec<(u64, &[u8])> {
        let mut v: Vec<(u64, &[u8])> = self.slots.iter().map(|(&c, &s)| (c, self.chunk(s))).collect();
        v.sort_unstable_by_key(|&(c, _)| c);
        v
    }

    /// Store one whole chunk (used when loading an image). `chunk` must lie inside the device.
    pub fn put_chunk(&mut self, chunk: u64, data: &[u8; CHUNK_BYTES]) {
        let s = self.slot(chunk);
        self.chunk_mut(s).copy_from_slice(data);
    }

    fn slot(&mut self, chunk: u64) -> u32 {
        if let Some(&s) = self.slots.get(&chunk) {
            return s;
        }
        let s = match self.free.pop() {
            Some(s) => {
                self.chunk_mut(s).fill(0);
                s
            }
            None => {
                self.arena.resize(self.arena.len() + CHUNK_BYTES, 0);
                (self.arena.len() / CHUNK_BYTES - 1) as u32
            }
        };
        self.slots.insert(chunk, s);
        s
    }

    fn chunk(&self, s: u32) -> &[u8] {
        &self.arena[s as usize * CHUNK_BYTES..(s as usize + 1) * CHUNK_BYTES]
    }

    fn chunk_mut(&mut self, s: u32) -> &mut [u8] {
        &mut self.arena[s as usize * CHUNK_BYTES..(s as usize + 1) * CHUNK_BYTES]
    }
}
