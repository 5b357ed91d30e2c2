//! The TNC's znodes in flat arrays. Znode `n` owns the entry slots
//! `n * cap .. n * cap + cap` (`cap` = fan-out + 1: a znode holds one entry
//! more than the fan-out between an insert and its split), as UBIFS's
//! `struct ubifs_znode` holds its `zbranch[]` inline (fs/ubifs/ubifs.h)
//! rather than behind a pointer. A key is searched as one packed word
//! (inum, kind, sub and whether it has a name); the name (directory
//! entries only) sits in a parallel array and is compared only when the
//! packed words are equal. No per-znode heap vector.

use std::cmp::Ordering;

use crate::key::Key;
use crate::node::Loc;

/// A branch: a leaf node on flash or a child znode in the arena.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Br {
    Leaf(Loc),
    Child(usize),
}

/// A znode's header; its entries live in the arena's slot arrays.
#[derive(Debug, Clone, Copy)]
pub struct Znode {
    pub level: u8,
    /// Entries in use (UBIFS's `child_cnt`).
    cnt: u8,
    live: bool,
    /// Bytes of the entries' names (for the index node's length).
    name_bytes: u16,
    pub dirty: bool,
    /// Location of the committed copy (None while dirty or never written).
    pub loc: Option<Loc>,
}

impl Znode {
    /// Entries in use (UBIFS's `child_cnt`).
    pub fn child_cnt(&self) -> usize {
        self.cnt as usize
    }
}

/// `(inum, kind, sub, has name)` in one word, ordered as [`Key`]'s order up
/// to the name: keys without a name (flag 0) come before keys with one and
/// the same fields, as the empty name sorts first.
pub fn pack(k: &Key) -> u128 {
    (k.inum as u128) << 41 | (k.kind as u128) << 33 | (k.sub as u128) << 1 | !k.name.is_empty() as u128
}

/// A search key: the packed word and the name.
#[derive(Debug, Clone, Copy)]
pub struct SKey<'a> {
    pub p: u128,
    pub name: &'a [u8],
}

impl<'a> SKey<'a> {
    pub fn of(k: &'a Key) -> SKey<'a> {
        SKey { p: pack(k), name: &k.name }
    }

    fn named(&self) -> bool {
        self.p & 1 == 1
    }
}

/// The znodes and their entries.
#[derive(Debug, Clone)]
pub struct Arena {
    cap: usize,
    pub hdr: Vec<Znode>,
    keys: Vec<u128>,
    names: Vec<Box<[u8]>>,
    brs: Vec<Br>,
    free: Vec<usize>,
}

impl Arena {
    pub fn new(cap: usize) -> Arena {
        Arena { cap, hdr: Vec::new(), keys: Vec::new(), names: Vec::new(), brs: Vec::new(), free: Vec::new() }
    }

    fn base(&self, n: usize) -> usize {
        n * self.cap
    }

    pub fn is_live(&self, n: usize) -> bool {
        self.hdr.get(n).is_some_and(|z| z.live)
    }

    /// A new znode without entries: the last released slot, else a new one
    /// (the order the old `Vec<Option<Znode>>` arena gave indices in).
    pub fn alloc(&mut self, level: u8, dirty: bool, loc: Option<Loc>) -> usize {
        let z = Znode { level, cnt: 0, live: true, name_bytes: 0, dirty, loc };
        if let Some(n) = self.free.pop() {
            self.hdr[n] = z;
            n
        } else {
            self.hdr.push(z);
            let len = self.hdr.len() * self.cap;
            self.keys.resize(len, 0);
            self.names.resize_with(len, Default::default);
            self.brs.resize(len, Br::Child(0));
            self.hdr.len() - 1
        }
    }

    /// Frees znode `n`'s slot (its names' memory too); returns its header.
    pub fn release(&mut self, n: usize) -> Option<Znode> {
        let z = self.hdr[n];
        if !z.live {
            return None;
        }
        let b = self.base(n);
        self.names[b..b + z.child_cnt()].iter_mut().for_each(|x| *x = Default::default());
        self.hdr[n].live = false;
        self.hdr[n].cnt = 0;
        self.hdr[n].name_bytes = 0;
        self.free.push(n);
        Some(z)
    }

    /// As `binary_search_by(|e| e.key.cmp(key))` over znode `n`'s entries.
    #[inline]
    pub fn search(&self, n: usize, k: &SKey) -> Result<usize, usize> {
        let b = self.base(n);
        let len = self.hdr[n].child_cnt();
        let ks = &self.keys[b..b + len];
        let mut j = ks.partition_point(|&x| x < k.p);
        if !k.named() {
            return if j < len && ks[j] == k.p { Ok(j) } else { Err(j) };
        }
        // Equal packed words are ordered by name (hash collisions).
        while j < len && ks[j] == k.p && *self.names[b + j] < *k.name {
            j += 1;
        }
        if j < len && ks[j] == k.p && *self.names[b + j] == *k.name {
            Ok(j)
        } else {
            Err(j)
        }
    }

    /// Entry `j` of znode `n` against `k` (as `entry_key.cmp(key)`).
    pub fn cmp_at(&self, n: usize, j: usize, k: &SKey) -> Ordering {
        let e = self.base(n) + j;
        self.keys[e].cmp(&k.p).then_with(|| if k.named() { (*self.names[e]).cmp(k.name) } else { Ordering::Equal })
    }

    /// The entry whose range holds `k` (the first one if `k` is below all).
    pub fn child_pos(&self, n: usize, k: &SKey) -> usize {
        match self.search(n, k) {
            Ok(i) => i,
            Err(0) => 0,
            Err(i) => i - 1,
        }
    }

    pub fn br(&self, n: usize, j: usize) -> Br {
        self.brs[self.base(n) + j]
    }

    pub fn child(&self, n: usize, j: usize) -> usize {
        match self.br(n, j) {
            Br::Child(c) => c,
            Br::Leaf(_) => unreachable!("leaf branch above level 0"),
        }
    }

    pub fn set_br(&mut self, n: usize, j: usize, br: Br) {
        let e = self.base(n) + j;
        self.brs[e] = br;
    }

    /// Znode `n`'s branches in order.
    pub fn brs(&self, n: usize) -> &[Br] {
        let b = self.base(n);
        &self.brs[b..b + self.hdr[n].child_cnt()]
    }

    /// Entry `j`'s key (built; for the cold paths).
    pub fn key(&self, n: usize, j: usize) -> Key {
        let e = self.base(n) + j;
        let p = self.keys[e];
        Key { inum: (p >> 41) as u32, kind: (p >> 33) as u8, sub: (p >> 1) as u32, name: self.names[e].clone() }
    }

    /// Entry `j`'s packed key and name.
    #[inline]
    pub fn key_parts(&self, n: usize, j: usize) -> (u128, Box<[u8]>) {
        let e = self.base(n) + j;
        (self.keys[e], self.names[e].clone())
    }

    pub fn set_key(&mut self, n: usize, j: usize, p: u128, name: Box<[u8]>) {
        let e = self.base(n) + j;
        let z = &mut self.hdr[n];
        z.name_bytes = z.name_bytes - self.names[e].len() as u16 + name.len() as u16;
        self.keys[e] = p;
        self.names[e] = name;
    }

    /// Bytes of znode `n`'s entries' names.
    pub fn name_bytes(&self, n: usize) -> usize {
        self.hdr[n].name_bytes as usize
    }

    /// Entry `j`'s key as `Key::encode` writes it, into `out` (which must
    /// hold it); returns its length. The name is looked at only if the key
    /// has one.
    #[inline]
    pub fn encode_key(&self, n: usize, j: usize, out: &mut [u8]) -> usize {
        let e = self.base(n) + j;
        let p = self.keys[e];
        out[0..4].copy_from_slice(&((p >> 41) as u32).to_le_bytes());
        out[4] = (p >> 33) as u8;
        out[5..9].copy_from_slice(&((p >> 1) as u32).to_le_bytes());
        if p & 1 == 0 {
            out[9] = 0;
            return 10;
        }
        let name = &self.names[e];
        out[9] = name.len() as u8;
        out[10..10 + name.len()].copy_from_slice(name);
        10 + name.len()
    }

    /// Inserts an entry at position `j` (the znode must have a free slot).
    pub fn insert_at(&mut self, n: usize, j: usize, p: u128, name: Box<[u8]>, br: Br) {
        let (b, len) = (self.base(n), self.hdr[n].child_cnt());
        assert!(len < self.cap, "znode {n} full");
        self.keys.copy_within(b + j..b + len, b + j + 1);
        self.brs.copy_within(b + j..b + len, b + j + 1);
        self.names[b + j..b + len + 1].rotate_right(1);
        self.set_key(n, j, p, name);
        self.brs[b + j] = br;
        self.hdr[n].cnt += 1;
    }

    /// Removes entry `j`; returns its branch.
    pub fn remove_at(&mut self, n: usize, j: usize) -> Br {
        let (b, len) = (self.base(n), self.hdr[n].child_cnt());
        let br = self.brs[b + j];
        self.hdr[n].name_bytes -= self.names[b + j].len() as u16;
        self.keys.copy_within(b + j + 1..b + len, b + j);
        self.brs.copy_within(b + j + 1..b + len, b + j);
        self.names[b + j..b + len].rotate_left(1);
        self.names[b + len - 1] = Default::default();
        self.hdr[n].cnt -= 1;
        br
    }

    /// Appends an entry (the znode must have a free slot).
    pub fn push(&mut self, n: usize, k: &Key, br: Br) {
        let j = self.hdr[n].child_cnt();
        self.insert_at(n, j, pack(k), k.name.clone(), br);
    }

    /// Moves entries `at..` of `n` to the empty znode `r`.
    pub fn move_tail(&mut self, n: usize, at: usize, r: usize) {
        let (b, len, rb) = (self.base(n), self.hdr[n].child_cnt(), self.base(r));
        debug_assert_eq!(self.hdr[r].cnt, 0);
        self.keys.copy_within(b + at..b + len, rb);
        self.brs.copy_within(b + at..b + len, rb);
        let mut moved = 0;
        for j in 0..len - at {
            self.names[rb + j] = std::mem::take(&mut self.names[b + at + j]);
            moved += self.names[rb + j].len() as u16;
        }
        self.hdr[r].cnt = (len - at) as u8;
        self.hdr[r].name_bytes = moved;
        self.hdr[n].cnt = at as u8;
        self.hdr[n].name_bytes -= moved;
    }

    /// Host bytes of the arrays and the names.
    pub fn memory_bytes(&self) -> usize {
        self.hdr.capacity() * std::mem::size_of::<Znode>()
            + self.keys.capacity() * 16
            + self.names.capacity() * std::mem::size_of::<Box<[u8]>>()
            + self.brs.capacity() * std::mem::size_of::<Br>()
            + self.free.capacity() * 8
            + self.names.iter().map(|x| x.len()).sum::<usize>()
    }
}
