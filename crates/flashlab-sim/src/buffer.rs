//! An optional DRAM write buffer with LRU replacement, in flat arrays (an index-linked
//! list plus a hash map from logical page to slot). Writes land in the buffer; when it
//! is full the least recently used page is flushed to flash. Reads that hit are served
//! from DRAM. Lookups never iterate the map, so the run stays deterministic.

use std::collections::HashMap;
use std::hash::BuildHasherDefault;

type Map = HashMap<u64, u32, BuildHasherDefault<std::collections::hash_map::DefaultHasher>>;
const NIL: u32 = u32::MAX;

/// What a buffered write did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Buffered {
    /// The page was already buffered (an overwrite absorbed in DRAM).
    Hit,
    /// Stored in a free slot.
    Stored,
    /// Stored after evicting this logical page, which must now be written to flash.
    Evicted(u64),
}

#[derive(Clone, Debug)]
pub(crate) struct WriteBuffer {
    slot_of: Map,
    lpn: Vec<u64>,
    prev: Vec<u32>,
    next: Vec<u32>,
    /// Most recently used.
    head: u32,
    /// Least recently used.
    tail: u32,
    free: Vec<u32>,
}

impl WriteBuffer {
    pub fn new(pages: usize) -> Self {
        WriteBuffer {
            slot_of: Map::with_capacity_and_hasher(pages, Default::default()),
            lpn: vec![0; pages],
            prev: vec![NIL; pages],
            next: vec![NIL; pages],
            head: NIL,
            tail: NIL,
            free: (0..pages as u32).rev().collect(),
        }
    }

    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.slot_of.len()
    }

    fn unlink(&mut self, s: u32) {
        let (p, n) = (self.prev[s as usize], self.next[s as usize]);
        if p == NIL {
            self.head = n
        } else {
            self.next[p as usize] = n
        }
        if n == NIL {
            self.tail = p
        } else {
            self.prev[n as usize] = p
        }
    }

    fn push_front(&mut self, s: u32) {
        self.prev[s as usize] = NIL;
        self.next[s as usize] = self.head;
        if self.head != NIL {
            self.prev[self.head as usize] = s;
        }
        self.head = s;
        if self.tail == NIL {
            self.tail = s;
        }
    }

    /// A read: true (and the page becomes most recent) if it is buffered.
    pub fn read(&mut self, lpn: u64) -> bool {
        let Some(&s) = self.slot_of.get(&lpn) else { return false };
        self.unlink(s);
        self.push_front(s);
        true
    }

    /// A write of `lpn`.
    pub fn write(&mut self, lpn: u64) -> Buffered {
        if self.read(lpn) {
            return Buffered::Hit;
        }
        let (slot, outcome) = match self.free.pop() {
            Some(s) => (s, Buffered::Stored),
            None => {
                let s = self.tail;
                self.unlink(s);
                let old = self.lpn[s as usize];
                self.slot_of.remove(&old);
                (s, Buffered::Evicted(old))
            }
        };
        self.lpn[slot as usize] = lpn;
        self.slot_of.insert(lpn, slot);
        self.push_front(slot);
        outcome
    }

    /// Take out the least recently used page (a flush drains the buffer this way).
    pub fn pop_lru(&mut self) -> Option<u64> {
        let s = self.tail;
        if s == NIL {
            return None;
        }
        let lpn = self.lpn[s as usize];
        self.remove(lpn);
        Some(lpn)
    }

    /// Drop `lpn` (trimmed); true if it was buffered.
    pub fn remove(&mut self, lpn: u64) -> bool {
        let Some(s) = self.slot_of.remove(&lpn) else { return false };
        self.unlink(s);
        self.free.push(s);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lru_eviction_order() {
        let mut b = WriteBuffer::new(3);
        assert_eq!(b.write(1), Buffered::Stored);
        assert_eq!(b.write(2), Buffered::Stored);
        assert_eq!(b.write(3), Buffered::Stored);
        assert_eq!(b.write(1), Buffered::Hit);
        assert_eq!(b.write(4), Buffered::Evicted(2));
        assert!(b.read(3));
        assert_eq!(b.write(5), Buffered::Evicted(1));
        assert!(b.remove(4));
        assert!(!b.remove(4));
        assert_eq!(b.write(6), Buffered::Stored);
        assert_eq!(b.write(7), Buffered::Evicted(3));
        assert_eq!(b.len(), 3);
        assert_eq!((b.pop_lru(), b.pop_lru(), b.pop_lru(), b.pop_lru()), (Some(5), Some(6), Some(7), None));
        assert_eq!(b.write(8), Buffered::Stored);
    }

    #[test]
    fn matches_a_naive_lru_model() {
        let mut b = WriteBuffer::new(8);
        let mut model: Vec<u64> = Vec::new();
        let mut x = 12345u64;
        for _ in 0..20_000 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let lpn = (x >> 33) % 20;
            let got = b.write(lpn);
            let want = if let Some(i) = model.iter().position(|&l| l == lpn) {
                model.remove(i);
                Buffered::Hit
            } else if model.len() == 8 {
                Buffered::Evicted(model.pop().unwrap())
            } else {
                Buffered::Stored
            };
            model.insert(0, lpn);
            assert_eq!(got, want);
        }
    }
}
