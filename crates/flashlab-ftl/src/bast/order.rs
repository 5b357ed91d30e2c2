//! The log pool's victim order kept incrementally (issue 22 target 5): under `lru` and
//! `fifo` the victim is the used slot with the smallest key (`used`, `born`), ties to
//! the lowest slot index, as `Iterator::min_by_key` over the pool picks it
//! ([`super::log_victims`]). Scanning the pool for it cost ≈ 670 instructions a merge
//! (64 slots); this list keeps the used slots sorted by `(key, index)`, so the victim is
//! its head and the one after it the next.
//!
//! Why it stays O(1): a key is the host-page clock at the time it is set, and the clock
//! never goes back, so a slot (re)inserted with the current clock has a key at least as
//! large as every key in the list. [`LogOrder::insert`] walks back from the tail only
//! past slots ordered after it, i.e. slots with an equal key and a larger index; the
//! order is exact whatever the keys are (the walk is a plain sorted insertion), the
//! clock only bounds the walk.

/// "No slot".
const NIL: u32 = u32::MAX;

/// One slot's place in the list: its key and neighbours side by side (one record, so
/// a list operation touches one line and one bounds check per slot).
#[derive(Clone, Copy, Debug)]
struct Node {
    key: u64,
    prev: u32,
    next: u32,
}

/// The used slots of a log pool in `(key, index)` order, as a doubly linked list.
pub(crate) struct LogOrder {
    nodes: Vec<Node>,
    head: u32,
    tail: u32,
}

impl LogOrder {
    pub fn new(slots: usize) -> Self {
        LogOrder { nodes: vec![Node { key: 0, prev: NIL, next: NIL }; slots], head: NIL, tail: NIL }
    }

    /// Whether slot `a` with key `ka` goes before slot `b` (in the list) in the order.
    #[inline]
    fn precedes(&self, ka: u64, a: u32, b: u32) -> bool {
        (ka, a) < (self.nodes[b as usize].key, b)
    }

    /// Add slot `s` (not in the list) with key `k` at its place.
    #[inline]
    pub fn insert(&mut self, s: usize, k: u64) {
        let s32 = s as u32;
        self.nodes[s].key = k;
        let mut at = self.tail;
        while at != NIL && self.precedes(k, s32, at) {
            at = self.nodes[at as usize].prev;
        }
        // `s` goes right after `at` (at the head when `at` is NIL).
        let nx = if at == NIL { self.head } else { self.nodes[at as usize].next };
        self.nodes[s].prev = at;
        self.nodes[s].next = nx;
        if at == NIL {
            self.head = s32;
        } else {
            self.nodes[at as usize].next = s32;
        }
        if nx == NIL {
            self.tail = s32;
        } else {
            self.nodes[nx as usize].prev = s32;
        }
    }

    /// Take slot `s` (in the list) out.
    #[inline]
    pub fn remove(&mut self, s: usize) {
        let (p, n) = (self.nodes[s].prev, self.nodes[s].next);
        if p == NIL {
            self.head = n;
        } else {
            self.nodes[p as usize].next = n;
        }
        if n == NIL {
            self.tail = p;
        } else {
            self.nodes[n as usize].prev = p;
        }
        self.nodes[s].prev = NIL;
        self.nodes[s].next = NIL;
    }

    /// Give slot `s` (in the list) the key `k`, not smaller than its old one: at the
    /// tail it stays there (its predecessor is ordered before its old key, so before
    /// the new one), else it is moved.
    #[inline]
    pub fn raise(&mut self, s: usize, k: u64) {
        debug_assert!(k >= self.nodes[s].key);
        if self.tail == s as u32 {
            self.nodes[s].key = k;
        } else {
            self.remove(s);
            self.insert(s, k);
        }
    }

    /// [`Self::raise`] slot `s` to `k` if it is in the list, else [`Self::insert`] it.
    #[inline]
    pub fn set(&mut self, s: usize, k: u64) {
        if self.nodes[s].prev != NIL || self.head == s as u32 {
            self.raise(s, k);
        } else {
            self.insert(s, k);
        }
    }

    /// The first slot and the one after it (the victim and the next victim).
    #[inline]
    pub fn first_two(&self) -> (usize, Option<usize>) {
        assert!(self.head != NIL, "a victim is chosen only from a non-empty pool");
        let n = self.nodes[self.head as usize].next;
        (self.head as usize, (n != NIL).then_some(n as usize))
    }
}

#[cfg(test)]
mod tests {
    use super::LogOrder;
    use proptest::prelude::*;

    proptest! {
        /// Against a scan: after any sequence of inserts (with keys from a clock that
        /// may stand still, so ties occur), raises and removals, the head is the
        /// `min_by_key` slot (first index among equal keys) and the second is the
        /// `min_by_key` slot of the rest.
        #[test]
        fn the_order_is_min_by_key_first_index(steps in prop::collection::vec((0usize..12, 0u64..3, 0u8..3), 1..300)) {
            let mut order = LogOrder::new(12);
            let mut keys: Vec<Option<u64>> = vec![None; 12];
            let mut clock = 0u64;
            for (s, tick, what) in steps {
                clock += tick / 2;
                match (keys[s], what) {
                    (None, 0) => { order.insert(s, clock); keys[s] = Some(clock); }
                    (None, _) => { order.set(s, clock); keys[s] = Some(clock); }
                    (Some(_), 0) => { order.remove(s); keys[s] = None; }
                    (Some(_), 1) => { order.raise(s, clock); keys[s] = Some(clock); }
                    (Some(_), _) => { order.set(s, clock); keys[s] = Some(clock); }
                }
                let oldest = |skip: Option<usize>| {
                    keys.iter().enumerate().filter(|&(i, k)| k.is_some() && Some(i) != skip).min_by_key(|&(_, k)| *k).map(|(i, _)| i)
                };
                if let Some(v) = oldest(None) {
                    prop_assert_eq!(order.first_two(), (v, oldest(Some(v))));
                }
            }
        }
    }
}
