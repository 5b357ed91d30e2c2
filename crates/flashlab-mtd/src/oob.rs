//! The out-of-band bytes of a [`crate::Nand`], kept inverted so that an erased
//! area (all 0xFF) is all zeros in memory: the table is allocated zeroed
//! (`vec![0; n]`, i.e. `calloc`, whose large blocks are fresh mappings the
//! kernel fills on first touch), and a device whose OOB is never written
//! (UBI and flashfs only read the bad-block marker) never touches it. An
//! erase clears a block's bytes only if something was written there since.
//! What reads return is exactly the bytes a plain 0xFF-initialised table
//! would hold (test below).

#[derive(Clone)]
pub(crate) struct Oob {
    /// `!byte` of every OOB byte.
    inv: Vec<u8>,
    /// OOB bytes per erase block.
    per_block: usize,
    /// Whether a block's bytes may differ from 0xFF.
    written: Vec<bool>,
}

impl Oob {
    /// `blocks` blocks of `per_block` OOB bytes, all erased (0xFF).
    pub fn new(blocks: usize, per_block: usize) -> Self {
        Oob { inv: vec![0; blocks * per_block], per_block, written: vec![false; blocks] }
    }

    pub fn len(&self) -> usize {
        self.inv.len()
    }

    fn block_of(&self, i: usize) -> usize {
        i / self.per_block.max(1)
    }

    /// Byte `i`.
    #[cfg(test)]
    pub fn get(&self, i: usize) -> u8 {
        !self.inv[i]
    }

    /// The first byte of `block`'s OOB (its first page's bad-block marker).
    /// A block not written since its erase reads 0xFF without its bytes
    /// being touched: the marker is checked on every program and on the
    /// mount's scan of every block, and one page of the table per block
    /// would otherwise be mapped in by the kernel only to read 0xFF.
    pub fn marker(&self, block: usize) -> u8 {
        if !self.written[block] {
            return 0xFF;
        }
        !self.inv[block * self.per_block]
    }

    /// Bytes `at .. at + out.len()` into `out`.
    pub fn read(&self, at: usize, out: &mut [u8]) {
        let n = out.len();
        if n > 0 && (self.block_of(at)..=self.block_of(at + n - 1)).all(|b| !self.written[b]) {
            assert!(at + n <= self.inv.len(), "OOB read past the table");
            out.fill(0xFF);
            return;
        }
        for (o, v) in out.iter_mut().zip(&self.inv[at..at + n]) {
            *o = !v;
        }
    }

    /// Byte `i` ANDed with `v` (a program clears bits only).
    pub fn and(&mut self, i: usize, v: u8) {
        self.inv[i] |= !v;
        let b = self.block_of(i);
        self.written[b] = true;
    }

    /// Byte `i` set to `v`.
    pub fn set(&mut self, i: usize, v: u8) {
        self.inv[i] = !v;
        let b = self.block_of(i);
        self.written[b] = true;
    }

    /// Every byte of `block` back to 0xFF.
    pub fn erase_block(&mut self, block: usize) {
        if std::mem::take(&mut self.written[block]) {
            let at = block * self.per_block;
            self.inv[at..at + self.per_block].fill(0);
        }
    }

    /// Every byte, as stored on the device.
    pub fn bytes(&self) -> Vec<u8> {
        self.inv.iter().map(|v| !v).collect()
    }

    /// Replaces every byte (same length).
    pub fn restore(&mut self, bytes: &[u8]) {
        assert_eq!(bytes.len(), self.inv.len(), "OOB table size");
        for (d, s) in self.inv.iter_mut().zip(bytes) {
            *d = !s;
        }
        let per = self.per_block.max(1);
        for (b, w) in self.written.iter_mut().enumerate() {
            *w = self.inv[(b * per).min(self.inv.len())..((b + 1) * per).min(self.inv.len())].iter().any(|&v| v != 0);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_as_a_plain_table_that_starts_erased() {
        let (blocks, per) = (5usize, 12usize);
        let mut o = Oob::new(blocks, per);
        let mut plain = vec![0xFFu8; blocks * per];
        let mut x = 7u32;
        for step in 0..400 {
            x = x.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            let i = (x >> 8) as usize % plain.len();
            let v = (x >> 20) as u8;
            match step % 7 {
                0 => {
                    o.set(i, v);
                    plain[i] = v;
                }
                1 => {
                    let b = i / per;
                    o.erase_block(b);
                    plain[b * per..(b + 1) * per].fill(0xFF);
                }
                _ => {
                    o.and(i, v);
                    plain[i] &= v;
                }
            }
            assert_eq!(o.get(i), plain[i]);
            let b = i / per;
            assert_eq!(o.marker(b), plain[b * per], "block {b}'s first byte");
        }
        let mut all = vec![0u8; plain.len()];
        o.read(0, &mut all);
        assert_eq!((all.clone(), o.bytes(), o.len()), (plain.clone(), plain.clone(), plain.len()));
        // Block by block and across two blocks: written ones read their
        // bytes, erased ones 0xFF without the table.
        o.erase_block(2);
        plain[2 * per..3 * per].fill(0xFF);
        for (at, n) in (0..blocks).map(|b| (b * per, per)).chain([(per + 3, per), (2 * per + 1, 4)]) {
            let mut part = vec![0u8; n];
            o.read(at, &mut part);
            assert_eq!(part, plain[at..at + n], "bytes {at}..{}", at + n);
        }
        let mut r = Oob::new(blocks, per);
        r.restore(&plain);
        assert_eq!(r.bytes(), plain);
        for b in 0..blocks {
            r.erase_block(b);
        }
        assert!(r.bytes().iter().all(|&v| v == 0xFF) && r.written.iter().all(|w| !w));
    }
}
