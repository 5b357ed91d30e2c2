//! A flat bitmap with word-at-a-time searches (the block and inode bitmaps).

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Bits {
    words: Vec<u64>,
}

impl Bits {
    pub fn new(n: u64) -> Bits {
        Bits { words: vec![0; n.div_ceil(64) as usize] }
    }

    pub fn get(&self, i: u64) -> bool {
        self.words[(i / 64) as usize] >> (i % 64) & 1 == 1
    }

    pub fn set(&mut self, i: u64) {
        self.words[(i / 64) as usize] |= 1 << (i % 64);
    }

    pub fn clear(&mut self, i: u64) {
        self.words[(i / 64) as usize] &= !(1 << (i % 64));
    }

    pub fn set_range(&mut self, start: u64, len: u64) {
        for i in start..start + len {
            self.set(i);
        }
    }

    pub fn clear_range(&mut self, start: u64, len: u64) {
        for i in start..start + len {
            self.clear(i);
        }
    }

    /// First clear bit in `from..to`.
    pub fn next_zero(&self, from: u64, to: u64) -> Option<u64> {
        let mut i = from;
        while i < to {
            let w = self.words[(i / 64) as usize] | ((1u64 << (i % 64)) - 1);
            if w != u64::MAX {
                let b = (i / 64) * 64 + (!w).trailing_zeros() as u64;
                return (b < to).then_some(b);
            }
            i = (i / 64 + 1) * 64;
        }
        None
    }

    /// First set bit in `from..to` (or `to`).
    pub fn next_one(&self, from: u64, to: u64) -> u64 {
        let mut i = from;
        while i < to {
            let w = self.words[(i / 64) as usize] & !((1u64 << (i % 64)) - 1);
            if w != 0 {
                return ((i / 64) * 64 + w.trailing_zeros() as u64).min(to);
            }
            i = (i / 64 + 1) * 64;
        }
        to
    }

    /// Set bits in `from..to`.
    pub fn count_ones(&self, from: u64, to: u64) -> u64 {
        (from..to).filter(|&i| self.get(i)).count() as u64
    }
}
