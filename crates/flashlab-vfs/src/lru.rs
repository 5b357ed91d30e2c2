//! The page cache's reclaim order, in flat arrays, and its integer-keyed maps:
//! - [`Lru`]: clean pages by last use, oldest first, as a doubly linked
//!   list threaded through per-frame arrays (Linux keeps the inactive list
//!   as a list through `struct page` the same way): touching, removing and
//!   reclaiming a page are O(1) and allocate nothing;
//! - [`IntMap`]: the cache's inode, fd and read-ahead maps ([`crate::idhash`]);
//!   no result depends on their iteration order (the cache walks its dirty
//!   inodes through `dirty_order`, sorted by dirtying time and inode).

pub(crate) use crate::idhash::IdMap as IntMap;

/// A page: (inode number, page index in the file).
pub(crate) type PageKey = (u32, u64);

const NIL: u32 = u32::MAX;

/// Clean pages by last use: frame numbers in a doubly linked list, oldest
/// at the head; the key of each linked frame beside it.
#[derive(Debug, Default)]
pub(crate) struct Lru {
    prev: Vec<u32>,
    next: Vec<u32>,
    key: Vec<PageKey>,
    linked: Vec<bool>,
    head: u32,
    tail: u32,
    len: usize,
}

impl Lru {
    pub fn new() -> Lru {
        Lru { head: NIL, tail: NIL, ..Lru::default() }
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Makes `f` the most recently used clean page, holding `key` (unlinks it first).
    pub fn push_back(&mut self, f: usize, key: PageKey) {
        self.unlink(f);
        if f >= self.linked.len() {
            let n = f + 1;
            self.prev.resize(n, NIL);
            self.next.resize(n, NIL);
            self.key.resize(n, (0, 0));
            self.linked.resize(n, false);
        }
        let fi = f as u32;
        self.prev[f] = self.tail;
        self.next[f] = NIL;
        match self.tail {
            NIL => self.head = fi,
            t => self.next[t as usize] = fi,
        }
        self.tail = fi;
        self.key[f] = key;
        self.linked[f] = true;
        self.len += 1;
    }

    /// Takes `f` out of the list (nothing if it is not in it).
    pub fn unlink(&mut self, f: usize) {
        if !self.linked.get(f).copied().unwrap_or(false) {
            return;
        }
        let (p, n) = (self.prev[f], self.next[f]);
        match p {
            NIL => self.head = n,
            p => self.next[p as usize] = n,
        }
        match n {
            NIL => self.tail = p,
            n => self.prev[n as usize] = p,
        }
        self.linked[f] = false;
        self.len -= 1;
    }

    /// Removes and returns the least recently used page: (frame, key).
    pub fn pop_front(&mut self) -> Option<(usize, PageKey)> {
        if self.head == NIL {
            return None;
        }
        let f = self.head as usize;
        self.unlink(f);
        Some((f, self.key[f]))
    }

    /// Keys of the clean pages, oldest first.
    pub fn keys(&self) -> Vec<PageKey> {
        let mut out = Vec::with_capacity(self.len);
        let mut f = self.head;
        while f != NIL {
            out.push(self.key[f as usize]);
            f = self.next[f as usize];
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::{BTreeMap, HashMap};

    /// The list against the structure it replaced: a map from a use stamp
    /// to the key (oldest stamp first), with the same operations.
    #[test]
    fn lru_orders_as_stamped_map() {
        let mut lru = Lru::new();
        let mut oracle: BTreeMap<u64, (usize, PageKey)> = BTreeMap::new();
        let mut stamp_of: HashMap<usize, u64> = HashMap::new();
        let mut stamp = 0u64;
        let mut x = 7u64;
        for step in 0..20_000u64 {
            x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
            let f = ((x >> 33) % 97) as usize;
            let key = (f as u32, step);
            match (x >> 60) % 4 {
                0 | 1 => {
                    lru.push_back(f, key);
                    stamp += 1;
                    if let Some(s) = stamp_of.insert(f, stamp) {
                        oracle.remove(&s);
                    }
                    oracle.insert(stamp, (f, key));
                }
                2 => {
                    lru.unlink(f);
                    if let Some(s) = stamp_of.remove(&f) {
                        oracle.remove(&s);
                    }
                }
                _ => {
                    let want = oracle.pop_first().map(|(_, v)| v);
                    if let Some((f, _)) = want {
                        stamp_of.remove(&f);
                    }
                    assert_eq!(lru.pop_front(), want, "step {step}");
                }
            }
            assert_eq!(lru.keys().len(), oracle.len());
            assert_eq!(lru.is_empty(), oracle.is_empty());
            if step % 1000 == 0 {
                assert_eq!(lru.keys(), oracle.values().map(|v| v.1).collect::<Vec<_>>());
            }
        }
    }
}
