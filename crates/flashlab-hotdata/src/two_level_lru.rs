//! Chang and Kuo's two-level LRU lists: a hot list and a candidate list.
//!
//! A write of a block in the hot list moves it to the hot list's MRU end. A write of a
//! block in the candidate list promotes it to the hot list's MRU end; if the hot list
//! then overflows, its LRU entry is demoted to the candidate list's MRU end. A write of
//! an unknown block inserts it at the candidate list's MRU end; if the candidate list
//! overflows its LRU entry is evicted. Hot = in the hot list.
//!
//! Both lists are doubly linked through `u32` indices into one flat node pool; a flat
//! open-addressing map finds a block's node. Every operation is O(1).

use serde::{Deserialize, Serialize};

use crate::error::{check_range, HotDataError};
use crate::flat_map::FlatMap;
use crate::HotDataIdentifier;

const KIND: &str = "two-level-lru";
const NIL: u32 = u32::MAX;
const HOT: usize = 0;
const CANDIDATE: usize = 1;

/// Parameters of [`TwoLevelLru`]; every field has a default.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
#[serde(default, deny_unknown_fields)]
pub struct TwoLevelLruParams {
    /// Capacity of the hot list (1..=2^30). Default 512 (chosen by us).
    pub hot_entries: u32,
    /// Capacity of the candidate list (1..=2^30). Default 1024 (chosen by us).
    pub candidate_entries: u32,
}

impl Default for TwoLevelLruParams {
    fn default() -> Self {
        TwoLevelLruParams { hot_entries: 512, candidate_entries: 1024 }
    }
}

impl TwoLevelLruParams {
    /// Checks every field against its valid range.
    pub fn validate(&self) -> Result<(), HotDataError> {
        check_range(KIND, "hot_entries", self.hot_entries, 1, 1 << 30)?;
        check_range(KIND, "candidate_entries", self.candidate_entries, 1, 1 << 30)
    }
}

/// Where a block currently is in a [`TwoLevelLru`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LruPlace {
    /// In the hot list.
    Hot,
    /// In the candidate list.
    Candidate,
    /// In neither list.
    Absent,
}

/// Head (MRU), tail (LRU) and length of one list.
#[derive(Clone, Copy, Debug)]
struct List {
    head: u32,
    tail: u32,
    len: u32,
    cap: u32,
}

/// Two bounded LRU lists in flat arrays.
#[derive(Clone, Debug)]
pub struct TwoLevelLru {
    lba: Vec<u64>,
    prev: Vec<u32>,
    next: Vec<u32>,
    /// Which list (HOT or CANDIDATE) each node is in.
    list_of: Vec<u8>,
    lists: [List; 2],
    map: FlatMap,
}

impl TwoLevelLru {
    /// Builds empty lists; `seed` only seeds the internal hash map.
    pub fn new(params: &TwoLevelLruParams, seed: u64) -> Result<Self, HotDataError> {
        params.validate()?;
        let cap = (params.hot_entries + params.candidate_entries) as usize;
        let list = |cap| List { head: NIL, tail: NIL, len: 0, cap };
        Ok(TwoLevelLru {
            lba: Vec::with_capacity(cap),
            prev: Vec::with_capacity(cap),
            next: Vec::with_capacity(cap),
            list_of: Vec::with_capacity(cap),
            lists: [list(params.hot_entries), list(params.candidate_entries)],
            map: FlatMap::with_max_entries(cap, seed),
        })
    }

    /// Where `lba` is now.
    pub fn place(&self, lba: u64) -> LruPlace {
        match self.map.get(lba) {
            None => LruPlace::Absent,
            Some(n) if self.list_of[n as usize] as usize == HOT => LruPlace::Hot,
            Some(_) => LruPlace::Candidate,
        }
    }

    /// The hot list, MRU first.
    pub fn hot_list(&self) -> Vec<u64> {
        self.collect(HOT)
    }

    /// The candidate list, MRU first.
    pub fn candidate_list(&self) -> Vec<u64> {
        self.collect(CANDIDATE)
    }

    fn collect(&self, which: usize) -> Vec<u64> {
        let mut out = Vec::with_capacity(self.lists[which].len as usize);
        let mut n = self.lists[which].head;
        while n != NIL {
            out.push(self.lba[n as usize]);
            n = self.next[n as usize];
        }
        out
    }

    fn unlink(&mut self, node: u32) {
        let n = node as usize;
        let which = self.list_of[n] as usize;
        let (p, x) = (self.prev[n], self.next[n]);
        match p {
            NIL => self.lists[which].head = x,
            p => self.next[p as usize] = x,
        }
        match x {
            NIL => self.lists[which].tail = p,
            x => self.prev[x as usize] = p,
        }
        self.lists[which].len -= 1;
    }

    fn push_front(&mut self, which: usize, node: u32) {
        let n = node as usize;
        let head = self.lists[which].head;
        self.prev[n] = NIL;
        self.next[n] = head;
        self.list_of[n] = which as u8;
        match head {
            NIL => self.lists[which].tail = node,
            h => self.prev[h as usize] = node,
        }
        self.lists[which].head = node;
        self.lists[which].len += 1;
    }

    /// Moves an entry to the hot list's MRU end, demoting the hot LRU on overflow.
    fn promote(&mut self, node: u32) {
        self.unlink(node);
        self.push_front(HOT, node);
        let hot = self.lists[HOT];
        if hot.len > hot.cap {
            self.unlink(hot.tail);
            self.push_front(CANDIDATE, hot.tail);
        }
    }

    /// A node for a new entry: a fresh one, or the evicted candidate LRU's.
    fn free_node(&mut self) -> u32 {
        let cand = self.lists[CANDIDATE];
        if cand.len < cand.cap {
            self.lba.push(0);
            self.prev.push(NIL);
            self.next.push(NIL);
            self.list_of.push(CANDIDATE as u8);
            return (self.lba.len() - 1) as u32;
        }
        let victim = cand.tail;
        self.unlink(victim);
        self.map.remove(self.lba[victim as usize]);
        victim
    }

    fn insert_new(&mut self, lba: u64) {
        let node = self.free_node();
        self.lba[node as usize] = lba;
        self.push_front(CANDIDATE, node);
        self.map.insert(lba, node);
    }
}

impl HotDataIdentifier for TwoLevelLru {
    #[inline]
    fn record_write(&mut self, lba: u64) {
        self.record_and_query(lba);
    }

    /// After a write the block is hot exactly when it was already listed: a listed
    /// block goes to the hot list's MRU end, a new one to the candidate list.
    #[inline]
    fn record_and_query(&mut self, lba: u64) -> bool {
        match self.map.get(lba) {
            None => {
                self.insert_new(lba);
                false
            }
            Some(node) => {
                self.promote(node);
                true
            }
        }
    }

    #[inline]
    fn is_hot(&self, lba: u64) -> bool {
        self.place(lba) == LruPlace::Hot
    }

    fn memory_bytes(&self) -> usize {
        let nodes = (self.lists[HOT].cap + self.lists[CANDIDATE].cap) as usize;
        nodes * (8 + 4 + 4 + 1) + self.map.memory_bytes()
    }

    fn name(&self) -> &'static str {
        KIND
    }
}
