//! Lazily allocated block contents: a block's bytes exist only once something was
//! programmed into it, and an erase drops them. Unallocated bytes read as 0xFF, so a
//! large device costs memory only for the data actually on it.

#[derive(Clone)]
pub(crate) struct BlockStore {
    block_bytes: usize,
    blocks: Vec<Option<Box<[u8]>>>,
    allocated: usize,
}

impl BlockStore {
    pub fn new(blocks: u32, block_bytes: u32) -> Self {
        BlockStore { block_bytes: block_bytes as usize, blocks: vec![None; blocks as usize], allocated: 0 }
    }

    /// Copy `out.len()` bytes from byte `pos` of `block` (0xFF where never programmed).
    pub fn read(&self, block: u32, pos: u32, out: &mut [u8]) {
        match &self.blocks[block as usize] {
            Some(b) => out.copy_from_slice(&b[pos as usize..pos as usize + out.len()]),
            None => out.fill(0xFF),
        }
    }

    /// Whether `len` bytes from `pos` of `block` are all 0xFF.
    pub fn all_erased(&self, block: u32, pos: u32, len: usize) -> bool {
        self.blocks[block as usize]
            .as_ref()
            .is_none_or(|b| b[pos as usize..pos as usize + len].iter().all(|&x| x == 0xFF))
    }

    /// Mutable bytes `pos .. pos + len` of `block`, allocating the block (erased) if needed.
    pub fn slice_mut(&mut self, block: u32, pos: u32, len: usize) -> &mut [u8] {
        let slot = &mut self.blocks[block as usize];
        if slot.is_none() {
            *slot = Some(vec![0xFF; self.block_bytes].into_boxed_slice());
            self.allocated += self.block_bytes;
        }
        let b = slot.as_mut().expect("allocated above");
        &mut b[pos as usize..pos as usize + len]
    }

    /// Erase a block: its bytes are dropped and read as 0xFF again.
    pub fn erase(&mut self, block: u32) {
        if self.blocks[block as usize].take().is_some() {
            self.allocated -= self.block_bytes;
        }
    }

    /// Bytes of block contents currently held.
    pub fn allocated_bytes(&self) -> usize {
        self.allocated + self.blocks.len() * std::mem::size_of::<Option<Box<[u8]>>>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_follows_programmed_blocks_only() {
        let mut s = BlockStore::new(1 << 16, 128 * 1024);
        let base = s.allocated_bytes();
        let mut out = [0u8; 4];
        s.read(7, 100, &mut out);
        assert_eq!(out, [0xFF; 4]);
        assert!(s.all_erased(7, 0, 128 * 1024));
        s.slice_mut(7, 2048, 4).copy_from_slice(&[1, 2, 3, 4]);
        assert_eq!(s.allocated_bytes(), base + 128 * 1024);
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
