//! Lazily allocated page contents: a page's bytes exist only once something was
//! programmed into it, and an erase drops its block's pages. Unallocated bytes read as 0xFF, so a
//! large device costs memory only for the data actually on it.

#[derive(Clone)]
pub(crate) struct BlockStore {
    page_bytes: usize,
    pages_per_block: usize,
    /// One slot per page: a page's bytes exist once something was programmed into it.
    pages: Vec<Option<Box<[u8]>>>,
    allocated: usize,
}

impl BlockStore {
    pub fn new(blocks: u32, pages_per_block: u32, page_bytes: u32) -> Self {
        let pages = blocks as usize * pages_per_block as usize;
        BlockStore {
            page_bytes: page_bytes as usize,
            pages_per_block: pages_per_block as usize,
            pages: vec![None; pages],
            allocated: 0,
        }
    }

    /// (page slot, offset in the page) of byte `pos` of `block`.
    #[inline]
    fn locate(&self, block: u32, pos: u32) -> (usize, usize) {
        let (p, o) = (pos as usize / self.page_bytes, pos as usize % self.page_bytes);
        (block as usize * self.pages_per_block + p, o)
    }

    /// Copy `out.len()` bytes from byte `pos` of `block` (0xFF where never programmed).
    pub fn read(&self, block: u32, pos: u32, out: &mut [u8]) {
        let mut done = 0;
        while done < out.len() {
            let (slot, off) = self.locate(block, pos + done as u32);
            let n = (self.page_bytes - off).min(out.len() - done);
            match &self.pages[slot] {
                Some(pg) => out[done..done + n].copy_from_slice(&pg[off..off + n]),
                None => out[done..done + n].fill(0xFF),
            }
            done += n;
        }
    }

    /// Whether `len` bytes from `pos` of `block` are all 0xFF.
    pub fn all_erased(&self, block: u32, pos: u32, len: usize) -> bool {
        let mut buf = vec![0u8; len];
        self.read(block, pos, &mut buf);
        buf.iter().all(|&x| x == 0xFF)
    }

    /// Mutable bytes `pos .. pos + len` of `block`, which must lie in one page;
    /// allocates the page (erased) if needed.
    pub fn slice_mut(&mut self, block: u32, pos: u32, len: usize) -> &mut [u8] {
        let (slot, off) = self.locate(block, pos);
        assert!(off + len <= self.page_bytes, "store: range crosses a page boundary");
        let page = &mut self.pages[slot];
        if page.is_none() {
            *page = Some(vec![0xFF; self.page_bytes].into_boxed_slice());
            self.allocated += self.page_bytes;
        }
        &mut page.as_mut().expect("allocated above")[off..off + len]
    }

    /// Erase a block: its pages are dropped and read as 0xFF again.
    pub fn erase(&mut self, block: u32) {
        let first = block as usize * self.pages_per_block;
        for page in &mut self.pages[first..first + self.pages_per_block] {
            if page.take().is_some() {
                self.allocated -= self.page_bytes;
            }
        }
    }

    /// Bytes of page contents currently held, plus the slot table.
    pub fn allocated_bytes(&self) -> usize {
        self.allocated + self.pages.len() * std::mem::size_of::<Option<Box<[u8]>>>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_follows_programmed_blocks_only() {
        let mut s = BlockStore::new(1 << 10, 64, 2048);
        let base = s.allocated_bytes();
        let mut out = [0u8; 4];
        s.read(7, 100, &mut out);
        assert_eq!(out, [0xFF; 4]);
        assert!(s.all_erased(7, 0, 128 * 1024));
        s.slice_mut(7, 2048, 4).copy_from_slice(&[1, 2, 3, 4]);
        assert_eq!(s.allocated_bytes(), base + 2048, "only the page written is held");
        let mut across = [0u8; 8];
        s.read(7, 2044, &mut across);
        assert_eq!(across, [0xFF, 0xFF, 0xFF, 0xFF, 1, 2, 3, 4]);
        s.read(7, 2048, &mut out);
        assert_eq!(out, [1, 2, 3, 4]);
        assert!(!s.all_erased(7, 2048, 4) && s.all_erased(7, 0, 2048));
        s.erase(7);
        s.erase(7);
        assert_eq!(s.allocated_bytes(), base);
        s.read(7, 2048, &mut out);
        assert_eq!(out, [0xFF; 4]);
    }
}
