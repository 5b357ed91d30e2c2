//! The page cache's 4 KiB frames, in chunks of [`CHUNK_PAGES`]: each chunk an
//! anonymous mapping faulted in whole when it is made (`MAP_POPULATE`), so a
//! growing cache takes its memory in one system call per chunk instead of a
//! page fault per frame on first touch. A new chunk reads as zeros, as the
//! zeroed heap chunks before it did.

/// Frames per chunk (1 MiB).
pub(crate) const CHUNK_PAGES: usize = 256;
const PAGE: usize = crate::types::PAGE_BYTES as usize;

#[derive(Default)]
pub(crate) struct Frames {
    chunks: Vec<memmap2::MmapMut>,
}

impl Frames {
    /// Adds a chunk of [`CHUNK_PAGES`] zeroed frames.
    pub fn grow(&mut self) {
        let len = CHUNK_PAGES * PAGE;
        let map = memmap2::MmapOptions::new().len(len).populate().map_anon();
        self.chunks.push(map.unwrap_or_else(|e| panic!("cannot map {len} bytes of page-cache frames: {e}")));
    }

    #[inline]
    pub fn page(&self, f: usize) -> &[u8] {
        let o = (f % CHUNK_PAGES) * PAGE;
        &self.chunks[f / CHUNK_PAGES][o..o + PAGE]
    }

    #[inline]
    pub fn page_mut(&mut self, f: usize) -> &mut [u8] {
        let o = (f % CHUNK_PAGES) * PAGE;
        &mut self.chunks[f / CHUNK_PAGES][o..o + PAGE]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_start_zeroed_and_keep_what_is_written() {
        let mut fr = Frames::default();
        fr.grow();
        fr.grow();
        assert!(fr.page(CHUNK_PAGES + 3).iter().all(|&b| b == 0));
        fr.page_mut(CHUNK_PAGES - 1).fill(7);
        fr.page_mut(CHUNK_PAGES).fill(9);
        assert!(fr.page(CHUNK_PAGES - 1).iter().all(|&b| b == 7));
        assert!(fr.page(CHUNK_PAGES).iter().all(|&b| b == 9));
        assert!(fr.page(CHUNK_PAGES - 2).iter().all(|&b| b == 0));
    }
}
