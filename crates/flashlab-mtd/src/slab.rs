//! The dense pages' bytes of a [`crate::store::BlockStore`]: fixed-size page
//! buffers carved out of chunks of about 2 MiB, each an anonymous mapping
//! faulted in whole when it is made (`MAP_POPULATE`). A page given back (erase,
//! compaction to the sparse form) goes to a free list and the next program
//! takes it.
//!
//! Before, every page was its own heap buffer: a device filling up grew the heap
//! page by page, and each new 4 KiB of it cost a kernel page fault on first touch
//! (≈ 33 700 faults, a quarter of `fs-iozone-flashfs`'s CPU time); a populated
//! chunk takes its pages in one system call. Huge pages (`MADV_HUGEPAGE`, as
//! `flashlab_nand::Table` does) were tried and were 1.5 × slower on this
//! case: see docs/performance.md. Contents are unaffected: every taker writes
//! the whole page before it is read.

/// One chunk of page buffers: an anonymous private mapping, populated.
struct Chunk(memmap2::MmapMut);

impl Chunk {
    fn new(len: usize) -> Self {
        let map = memmap2::MmapOptions::new().len(len).populate().map_anon();
        Chunk(map.unwrap_or_else(|e| panic!("cannot map {len} bytes of flash pages: {e}")))
    }
}

impl Clone for Chunk {
    fn clone(&self) -> Self {
        let mut c = Chunk::new(self.0.len());
        c.0.copy_from_slice(&self.0);
        c
    }
}

/// Bytes per chunk (one huge page).
const CHUNK_BYTES: usize = 2 << 20;

#[derive(Clone)]
pub(crate) struct Slab {
    page_bytes: usize,
    /// Pages per chunk.
    chunk_pages: usize,
    chunks: Vec<Chunk>,
    /// Pages handed out so far (live or free); the next new page is this one.
    made: u32,
    /// Pages given back, reused last in, first out.
    free: Vec<u32>,
}

impl Slab {
    /// A slab of `page_bytes` pages for a device of `pages` pages: chunks of
    /// [`CHUNK_BYTES`], or the whole device if it is smaller.
    pub fn new(page_bytes: usize, pages: usize) -> Self {
        let chunk_pages = (CHUNK_BYTES / page_bytes.max(1)).clamp(1, pages.max(1));
        Slab { page_bytes, chunk_pages, chunks: Vec::new(), made: 0, free: Vec::new() }
    }

    /// A page with unspecified contents: the last one given back, else a new one.
    pub fn take(&mut self) -> u32 {
        if let Some(n) = self.free.pop() {
            return n;
        }
        let n = self.made;
        if n as usize == self.chunks.len() * self.chunk_pages {
            self.chunks.push(Chunk::new(self.chunk_pages * self.page_bytes));
        }
        self.made += 1;
        n
    }

    /// Whether a page given back waits for reuse.
    pub fn has_free(&self) -> bool {
        !self.free.is_empty()
    }

    /// Gives page `n` back for reuse.
    pub fn give(&mut self, n: u32) {
        self.free.push(n);
    }

    /// (chunk, byte offset in it) of page `n`.
    #[inline]
    fn at(&self, n: u32) -> (usize, usize) {
        let n = n as usize;
        (n / self.chunk_pages, (n % self.chunk_pages) * self.page_bytes)
    }

    #[inline]
    pub fn page(&self, n: u32) -> &[u8] {
        let (c, o) = self.at(n);
        &self.chunks[c].0[o..o + self.page_bytes]
    }

    #[inline]
    pub fn page_mut(&mut self, n: u32) -> &mut [u8] {
        let (c, o) = self.at(n);
        &mut self.chunks[c].0[o..o + self.page_bytes]
    }

    /// Copies page `from`'s bytes into page `to`.
    pub fn copy(&mut self, from: u32, to: u32) {
        let ((cf, of), (ct, ot), pb) = (self.at(from), self.at(to), self.page_bytes);
        if cf == ct {
            self.chunks[cf].0.copy_within(of..of + pb, ot);
        } else {
            let (lo, hi) = self.chunks.split_at_mut(cf.max(ct));
            let (src, dst) = if cf < ct { (&lo[cf], &mut hi[0]) } else { (&hi[0], &mut lo[ct]) };
            dst.0[ot..ot + pb].copy_from_slice(&src.0[of..of + pb]);
        }
    }

    /// Bytes of the pages given back and not taken again.
    #[cfg(test)]
    pub fn free_bytes(&self) -> usize {
        self.free.len() * self.page_bytes
    }

    /// Bytes of every page handed out so far (in use or free).
    pub fn made_bytes(&self) -> usize {
        self.made as usize * self.page_bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_are_distinct_and_reused_last_in_first_out() {
        let mut s = Slab::new(512, 10_000);
        let pages: Vec<u32> = (0..5000).map(|_| s.take()).collect();
        assert_eq!(s.chunks.len(), 2, "4096 pages of 512 bytes per chunk");
        for &n in &pages {
            s.page_mut(n).fill(n as u8);
        }
        assert!(pages.iter().all(|&n| s.page(n).iter().all(|&b| b == n as u8)));
        s.give(7);
        s.give(4000);
        assert_eq!((s.free_bytes(), s.made_bytes()), (1024, 5000 * 512));
        assert_eq!((s.take(), s.take(), s.take()), (4000, 7, 5000));
        s.copy(4095, 4096);
        s.copy(4097, 4095);
        s.copy(3, 5);
        assert!(s.page(4096).iter().all(|&b| b == 4095u32 as u8));
        assert!(s.page(4095).iter().all(|&b| b == 4097u32 as u8));
        assert!(s.page(5).iter().all(|&b| b == 3));
        let small = Slab::new(4096, 3);
        assert_eq!(small.chunk_pages, 3, "a small device maps only itself");
    }
}
