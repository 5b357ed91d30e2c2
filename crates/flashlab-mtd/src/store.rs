//! Lazily allocated page contents: a page's bytes exist only once something was
//! programmed into it, and an erase drops its block's pages. Unallocated bytes read as 0xFF, so a
//! large device costs memory only for the data actually on it.
//!
//! A programmed page whose zero runs make up a good part of it is kept
//! sparse: only its other bytes are stored, as segments `offset u32 |
//! length u32 | bytes`, and the runs of at least [`MIN_ZERO_RUN`] zeros
//! between them read back as zeros. The bytes read are exactly those
//! programmed; only the memory differs. (flashfs's `elide_payload` writes data
//! payloads as zeros so that a long simulation's memory stays flat.)
//!
//! Dense pages live in a [`Slab`] (`slab.rs`): fixed page buffers in chunks of
//! one mapping each, reused across erases. A whole page programmed with bytes
//! the store mostly holds already is kept as pieces referring to them
//! (`dedup.rs`); a slab page then has several users and is given back when
//! the last one lets it go, and a slot that changes a shared page first takes
//! a copy of its own. Pieces are made only where a dense page would be memory
//! the process has never touched (no slab page waits for reuse; the kernel
//! zeroing it is what they save): always while the store's high-water mark of
//! held pages grows, and elsewhere within a budget of one search per page
//! slot; where a page given back could be reused, a dense page is cheaper than
//! the search (a device overwritten in a loop, such as `flashfs-overwrite`,
//! searches only while it first fills and for at most one device's worth of
//! pages after).
//!
//! A short program (at most half a page) into an erased page, such as a UBI
//! erase-counter or volume header, is kept as its bytes alone (a window);
//! the rest of the page reads as 0xFF, and a later program into the page
//! makes it dense.

use crate::dedup::{self, Dict, Ref};
use crate::slab::Slab;

/// Shortest zero run a sparse page leaves out.
pub(crate) const MIN_ZERO_RUN: usize = 64;

/// What one page slot holds.
#[derive(Clone)]
enum Slot {
    /// Nothing programmed since the last erase: reads as 0xFF.
    Erased,
    /// The page's bytes, in [`Slab`] page `n`.
    Dense(u32),
    /// Segments between the page's zero runs (see the module comment).
    Sparse(Box<[u8]>),
    /// Runs of other slab pages and literal runs (see `dedup.rs`).
    Pieces(Box<[u8]>),
    /// One short program into an erased page (a UBI header): its offset
    /// (`u32` LE) and bytes; every other byte reads as 0xFF.
    Window(Box<[u8]>),
}

#[derive(Clone)]
pub(crate) struct BlockStore {
    page_bytes: usize,
    pages_per_block: usize,
    /// One slot per page.
    slots: Vec<Slot>,
    /// Bytes of the sparse and window pages.
    sparse_bytes: usize,
    /// The dense pages' bytes.
    slab: Slab,
    /// Users of each slab page: the dense slot holding it, and every piece
    /// referring to it. At 0 it goes back to the slab.
    uses: Vec<u32>,
    /// Bytes of the pieces pages.
    pieces_bytes: usize,
    /// Indexed words of dense pages, for finding repeats.
    dict: Dict,
    /// Slots holding a dense or pieces page: the slab pages a store without
    /// pieces would have in use.
    held: usize,
    /// The most `held` has been: the pages such a store would have made.
    high: usize,
    /// Repeats looked for so far (`Dict::find` calls).
    finds: usize,
    /// Look for repeats on every whole-page program into an erased slot, not
    /// only into never-touched memory (tests: pieces, shared pages and their
    /// copies on write all through a run).
    search_always: bool,
    /// Where the next repeated page most likely starts (`Dict::find`).
    hint: dedup::Hint,
    /// Scratch list of the runs of a page being programmed.
    refs: Vec<Ref>,
}

fn is_zero_word(word: &[u8]) -> bool {
    u64::from_ne_bytes(word.try_into().expect("8 bytes")) == 0
}

/// Whether each aligned 8-byte word of `page` is zero.
fn zero_words(page: &[u8]) -> Vec<bool> {
    page.chunks_exact(8).map(is_zero_word).collect()
}

/// Zero words among the 32 aligned 8-byte words of a 256-byte chunk. The
/// fixed-size array lets the compiler unroll and vectorise the count (no
/// length check per word; `as_chunks` would say the same but is newer than
/// the workspace's MSRV, 1.87).
fn zero_words_256(chunk: &[u8; 256]) -> usize {
    let mut zeros = 0;
    for i in 0..32 {
        let w = [
            chunk[8 * i],
            chunk[8 * i + 1],
            chunk[8 * i + 2],
            chunk[8 * i + 3],
            chunk[8 * i + 4],
            chunk[8 * i + 5],
            chunk[8 * i + 6],
            chunk[8 * i + 7],
        ];
        zeros += (u64::from_ne_bytes(w) == 0) as usize;
    }
    zeros
}

/// Whether at least half of `page`'s aligned 8-byte words are zero
/// (`zero words * 16 >= page.len()`). Counts 32 words at a time and stops as
/// soon as the answer is sure: a page of data with few zeros is rejected
/// after a little over half of it.
fn enough_zero_words(page: &[u8]) -> bool {
    let need = page.len().div_ceil(16);
    if need == 0 {
        return true;
    }
    let words = page.len() / 8;
    let mut zeros = 0;
    for (i, chunk) in page.chunks(256).enumerate() {
        zeros += match <&[u8; 256]>::try_from(chunk) {
            Ok(whole) => zero_words_256(whole),
            Err(_) => chunk.chunks_exact(8).filter(|w| is_zero_word(w)).count(),
        };
        let left = words.saturating_sub((i + 1) * 32);
        if zeros >= need {
            return true;
        }
        if zeros + left < need {
            return false;
        }
    }
    false
}

/// Runs of zero words covering at least [`MIN_ZERO_RUN`] bytes, as byte
/// ranges (start, end).
fn zero_runs(words: &[bool]) -> Vec<(usize, usize)> {
    let mut runs = Vec::new();
    let mut i = 0;
    while i < words.len() {
        if !words[i] {
            i += 1;
            continue;
        }
        let start = i;
        while i < words.len() && words[i] {
            i += 1;
        }
        if (i - start) * 8 >= MIN_ZERO_RUN {
            runs.push((start * 8, i * 8));
        }
    }
    runs
}

/// The sparse form of `page` (segments between the zero runs), if it is at
/// most half the page's size.
fn encode_sparse(page: &[u8]) -> Option<Box<[u8]>> {
    // Most pages of real data fail this count (no allocation) before any
    // run is traced.
    if !enough_zero_words(page) {
        return None;
    }
    let runs = zero_runs(&zero_words(page));

    let zeros: usize = runs.iter().map(|(a, b)| b - a).sum();
    if zeros < page.len() / 2 + 8 * (runs.len() + 1) {
        return None;
    }
    let mut out = Vec::with_capacity(page.len() - zeros + 8 * (runs.len() + 1));
    let seg = |from: usize, to: usize, out: &mut Vec<u8>| {
        if to > from {
            out.extend_from_slice(&(from as u32).to_le_bytes());
            out.extend_from_slice(&((to - from) as u32).to_le_bytes());
            out.extend_from_slice(&page[from..to]);
        }
    };
    let mut at = 0;
    for (a, b) in runs {
        seg(at, a, &mut out);
        at = b;
    }
    seg(at, page.len(), &mut out);
    Some(out.into_boxed_slice())
}

/// A window page: `src` at byte `off`, 0xFF elsewhere.
fn encode_window(off: usize, src: &[u8]) -> Box<[u8]> {
    let mut enc = Vec::with_capacity(4 + src.len());
    enc.extend_from_slice(&(off as u32).to_le_bytes());
    enc.extend_from_slice(src);
    enc.into_boxed_slice()
}

/// Copies bytes `off .. off + out.len()` of a window page into `out`.
fn read_window(enc: &[u8], off: usize, out: &mut [u8]) {
    out.fill(0xFF);
    let from = u32::from_le_bytes(enc[..4].try_into().expect("4 bytes")) as usize;
    let bytes = &enc[4..];
    let (a, b) = (from.max(off), (from + bytes.len()).min(off + out.len()));
    if a < b {
        out[a - off..b - off].copy_from_slice(&bytes[a - from..b - from]);
    }
}

/// Copies bytes `off .. off + out.len()` of a sparse page into `out`.
fn read_sparse(enc: &[u8], off: usize, out: &mut [u8]) {
    out.fill(0);
    let end = off + out.len();
    let mut i = 0;
    while i + 8 <= enc.len() {
        let from = u32::from_le_bytes(enc[i..i + 4].try_into().expect("4 bytes")) as usize;
        let len = u32::from_le_bytes(enc[i + 4..i + 8].try_into().expect("4 bytes")) as usize;
        let (a, b) = (from.max(off), (from + len).min(end));
        if a < b {
            out[a - off..b - off].copy_from_slice(&enc[i + 8 + a - from..i + 8 + b - from]);
        }
        i += 8 + len;
    }
}

impl BlockStore {
    pub fn new(blocks: u32, pages_per_block: u32, page_bytes: u32) -> Self {
        let pages = blocks as usize * pages_per_block as usize;
        BlockStore {
            page_bytes: page_bytes as usize,
            pages_per_block: pages_per_block as usize,
            slots: vec![Slot::Erased; pages],
            sparse_bytes: 0,
            slab: Slab::new(page_bytes as usize, pages),
            uses: Vec::new(),
            pieces_bytes: 0,
            dict: Dict::new(pages, page_bytes as usize),
            held: 0,
            high: 0,
            finds: 0,
            search_always: false,
            hint: None,
            refs: Vec::new(),
        }
    }

    /// A slab page for a slot, with one user.
    fn take(&mut self) -> u32 {
        let p = self.slab.take();
        if self.uses.len() <= p as usize {
            self.uses.resize(p as usize + 1, 0);
        }
        self.uses[p as usize] = 1;
        p
    }

    /// One user of slab page `p` lets it go.
    fn release(&mut self, p: u32) {
        let u = &mut self.uses[p as usize];
        *u -= 1;
        if *u == 0 {
            self.slab.give(p);
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
            let part = &mut out[done..done + n];
            match &self.slots[slot] {
                Slot::Sparse(enc) => read_sparse(enc, off, part),
                &Slot::Dense(p) => part.copy_from_slice(&self.slab.page(p)[off..off + n]),
                Slot::Pieces(enc) => dedup::read(enc, &self.slab, off, part),
                Slot::Window(enc) => read_window(enc, off, part),
                Slot::Erased => part.fill(0xFF),
            }
            done += n;
        }
    }

    /// Bytes `pos .. pos + n` of `block` (within one page), as [`BlockStore::read`]
    /// gives them: a dense page's bytes in place, an erased or sparse page's
    /// decoded into `scratch`.
    pub fn part<'a>(&'a self, block: u32, pos: u32, n: usize, scratch: &'a mut Vec<u8>) -> &'a [u8] {
        let (slot, off) = self.locate(block, pos);
        assert!(off + n <= self.page_bytes, "store: range crosses a page boundary");
        match &self.slots[slot] {
            &Slot::Dense(p) => &self.slab.page(p)[off..off + n],
            _ => {
                scratch.resize(n, 0);
                self.read(block, pos, scratch);
                scratch
            }
        }
    }

    /// Whether `len` bytes from `pos` of `block` are all 0xFF.
    pub fn all_erased(&self, block: u32, pos: u32, len: usize) -> bool {
        let mut buf = vec![0u8; len];
        self.read(block, pos, &mut buf);
        buf.iter().all(|&x| x == 0xFF)
    }

    /// Puts `new` into `slot`; the slab pages the old contents used are let go.
    fn set_slot(&mut self, slot: usize, new: Slot) {
        match &new {
            Slot::Sparse(enc) | Slot::Window(enc) => self.sparse_bytes += enc.len(),
            Slot::Pieces(enc) => {
                self.pieces_bytes += enc.len();
                self.held += 1;
            }
            Slot::Dense(_) => self.held += 1,
            Slot::Erased => {}
        }
        match std::mem::replace(&mut self.slots[slot], new) {
            Slot::Dense(p) => {
                self.held -= 1;
                self.release(p);
            }
            Slot::Sparse(enc) | Slot::Window(enc) => self.sparse_bytes -= enc.len(),
            Slot::Pieces(enc) => {
                self.held -= 1;
                self.pieces_bytes -= enc.len();
                dedup::for_each_ref(&enc, |p| self.release(p));
            }
            Slot::Erased => {}
        }
        self.high = self.high.max(self.held);
    }

    /// Mutable bytes `pos .. pos + len` of `block`, which must lie in one page;
    /// allocates the page (erased) or expands a sparse one if needed.
    pub fn slice_mut(&mut self, block: u32, pos: u32, len: usize) -> &mut [u8] {
        let (slot, off) = self.locate(block, pos);
        assert!(off + len <= self.page_bytes, "store: range crosses a page boundary");
        let p = match self.slots[slot] {
            Slot::Dense(p) if self.uses[p as usize] == 1 => p,
            _ => self.expand(slot),
        };
        &mut self.slab.page_mut(p)[off..off + len]
    }

    /// Gives a slot a dense page of its own with the same bytes: an erased,
    /// sparse or pieces slot, or a dense one whose page others refer to.
    fn expand(&mut self, slot: usize) -> u32 {
        let p = self.take();
        match &self.slots[slot] {
            Slot::Sparse(enc) => read_sparse(enc, 0, self.slab.page_mut(p)),
            Slot::Pieces(enc) => {
                let mut page = vec![0u8; self.page_bytes];
                dedup::read(enc, &self.slab, 0, &mut page);
                self.slab.page_mut(p).copy_from_slice(&page);
            }
            &Slot::Dense(from) => self.slab.copy(from, p),
            Slot::Window(enc) => read_window(enc, 0, self.slab.page_mut(p)),
            Slot::Erased => self.slab.page_mut(p).fill(0xFF),
        }
        self.set_slot(slot, Slot::Dense(p));
        p
    }

    /// Programs whole page `slot`, erased, with `src` as pieces if the store
    /// holds most of its bytes already; false if it does not.
    fn program_pieces(&mut self, slot: usize, src: &[u8]) -> bool {
        if !src.len().is_multiple_of(8) {
            return false;
        }
        self.finds += 1;
        if !self.dict.find(src, &self.slab, &self.uses, &mut self.hint, &mut self.refs) {
            return false;
        }
        let enc = dedup::encode(src, &self.refs);
        for r in &self.refs {
            self.uses[r.page as usize] += 1;
        }
        self.set_slot(slot, Slot::Pieces(enc));
        true
    }

    /// Programs `src` at byte `pos` of `block` (within one page): each byte
    /// ANDed into the stored one, as NAND programming clears bits only; then
    /// [`BlockStore::compact`]. Into a page never programmed since its erase the
    /// bytes are copied straight in (0xFF & b = b), with no erased fill first.
    pub fn program(&mut self, block: u32, pos: u32, src: &[u8]) {
        let (slot, off) = self.locate(block, pos);
        if matches!(self.slots[slot], Slot::Erased) && off + src.len() <= self.page_bytes {
            if src.len() * 2 <= self.page_bytes {
                self.set_slot(slot, Slot::Window(encode_window(off, src)));
                return;
            }
            let fresh = self.takes_fresh_memory() || self.search_always;
            if fresh && src.len() == self.page_bytes && self.program_pieces(slot, src) {
                return;
            }
            let p = self.take();
            let page = self.slab.page_mut(p);
            page[..off].fill(0xFF);
            page[off..off + src.len()].copy_from_slice(src);
            page[off + src.len()..].fill(0xFF);
            self.set_slot(slot, Slot::Dense(p));
            if fresh {
                self.dict.index(p, self.slab.page(p));
            }
        } else {
            for (d, s) in self.slice_mut(block, pos, src.len()).iter_mut().zip(src) {
                *d &= *s;
            }
        }
        self.compact(block, pos);
    }

    /// Whether a dense page taken now would be memory the process has never
    /// touched (no slab page waits for reuse), and a search for repeats is
    /// due there: always where a store without pieces would grow too (`held`
    /// at its high-water mark), and elsewhere (pieces pages erased give no
    /// slab page back) within a budget of one search per page slot over the
    /// store's life, so that a device overwritten in a loop stops searching
    /// once it has paid for about one device's worth of them.
    fn takes_fresh_memory(&self) -> bool {
        !self.slab.has_free() && (self.held == self.high || self.finds < self.slots.len())
    }

    /// Keeps the page holding byte `pos` of `block` sparse if its zero runs
    /// make that at most half its size (after a program).
    pub fn compact(&mut self, block: u32, pos: u32) {
        let (slot, _) = self.locate(block, pos);
        let Slot::Dense(p) = self.slots[slot] else { return };
        if let Some(enc) = encode_sparse(self.slab.page(p)) {
            self.set_slot(slot, Slot::Sparse(enc));
        }
    }

    /// Erase a block: its pages are dropped and read as 0xFF again.
    pub fn erase(&mut self, block: u32) {
        let first = block as usize * self.pages_per_block;
        for slot in first..first + self.pages_per_block {
            self.set_slot(slot, Slot::Erased);
        }
    }

    /// Whether page slot `slot` holds bytes (was programmed since its last erase).
    pub fn holds(&self, slot: usize) -> bool {
        !matches!(self.slots[slot], Slot::Erased)
    }

    /// Bytes of the page buffers given back by erases and compactions, kept for reuse.
    #[cfg(test)]
    pub fn pooled_bytes(&self) -> usize {
        self.slab.free_bytes()
    }

    /// Bytes of page contents held (dense pages in use or kept for reuse, sparse
    /// and pieces pages), plus the slot table, the use counts and the dictionary.
    pub fn allocated_bytes(&self) -> usize {
        self.slab.made_bytes()
            + self.sparse_bytes
            + self.pieces_bytes
            + self.slots.len() * std::mem::size_of::<Slot>()
            + self.uses.len() * 4
            + self.dict.bytes()
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
        assert_eq!(s.allocated_bytes(), base + 2048 + 4, "only the page written is held (and its use count)");
        assert_eq!(s.pooled_bytes(), 0);
        let mut across = [0u8; 8];
        s.read(7, 2044, &mut across);
        assert_eq!(across, [0xFF, 0xFF, 0xFF, 0xFF, 1, 2, 3, 4]);
        s.read(7, 2048, &mut out);
        assert_eq!(out, [1, 2, 3, 4]);
        assert!(!s.all_erased(7, 2048, 4) && s.all_erased(7, 0, 2048));
        s.erase(7);
        s.erase(7);
        assert_eq!(s.pooled_bytes(), 2048, "the erased page's buffer is kept for reuse");
        assert_eq!(s.allocated_bytes(), base + 2048 + 4);
        s.slice_mut(9, 0, 1)[0] = 0;
        assert_eq!((s.pooled_bytes(), s.allocated_bytes()), (0, base + 2048 + 4), "and reused");
        s.read(7, 2048, &mut out);
        assert_eq!(out, [0xFF; 4]);
    }

    #[test]
    fn sparse_pages_read_back_exactly_and_hold_less() {
        let mut s = BlockStore::new(4, 4, 2048);
        let base = s.allocated_bytes();
        // A node header, a zero payload, another header, then erased bytes.
        let mut page = vec![0u8; 2048];
        page[..40].fill(0xA5);
        page[1000..1030].fill(0x3C);
        page[1100] = 7;
        page[1500..].fill(0xFF);
        s.slice_mut(1, 2048, 2048).copy_from_slice(&page);
        s.compact(1, 2048);
        let held = s.allocated_bytes() - s.pooled_bytes() - base;
        assert!(matches!(s.slots[5], Slot::Sparse(_)) && held < 700, "held {held}");
        let mut back = vec![0u8; 2048];
        s.read(1, 2048, &mut back);
        assert_eq!(back, page);
        for (from, len) in [(0usize, 40usize), (30, 1000), (1020, 90), (1499, 2), (2047, 1)] {
            let mut part = vec![0u8; len];
            s.read(1, 2048 + from as u32, &mut part);
            assert_eq!(part, page[from..from + len], "bytes {from}..+{len}");
        }
        // Programming into a sparse page expands it first.
        s.slice_mut(1, 2048 + 1800, 8).copy_from_slice(&[1; 8]);
        page[1800..1808].fill(1);
        s.read(1, 2048, &mut back);
        assert_eq!(back, page);
        // Random bytes stay dense.
        let mut x = 1u32;
        let noise: Vec<u8> = (0..2048)
            .map(|_| {
                x = x.wrapping_mul(1664525).wrapping_add(1013904223);
                (x >> 24) as u8 | 1
            })
            .collect();
        s.slice_mut(2, 0, 2048).copy_from_slice(&noise);
        s.compact(2, 0);
        assert!(matches!(s.slots[8], Slot::Dense(_)));
        s.erase(1);
        s.erase(2);
        assert_eq!(s.allocated_bytes() - s.pooled_bytes() - s.uses.len() * 4, base);
    }

    #[test]
    fn short_programs_into_erased_pages_hold_only_their_bytes() {
        const PB: usize = 2048;
        let mut s = BlockStore::new(2, 4, PB as u32);
        let hdr: Vec<u8> = (0..64u8).map(|i| i.wrapping_mul(37) ^ 0x5A).collect();
        s.program(0, 0, &hdr);
        s.program(0, PB as u32 + 100, &hdr);
        assert!(matches!(s.slots[0], Slot::Window(_)) && matches!(s.slots[1], Slot::Window(_)));
        assert_eq!((s.slab.made_bytes(), s.held), (0, 0), "no slab page, not held");
        let mut page = vec![0xFFu8; 2 * PB];
        page[..64].copy_from_slice(&hdr);
        page[PB + 100..PB + 164].copy_from_slice(&hdr);
        let mut back = vec![0u8; 2 * PB];
        s.read(0, 0, &mut back);
        assert_eq!(back, page);
        let (mut scratch, mut part) = (Vec::new(), vec![0u8; 70]);
        part.copy_from_slice(s.part(0, PB as u32 + 98, 70, &mut scratch));
        assert_eq!(&part[..], &page[PB + 98..PB + 168]);
        // A second program into the page ANDs into its bytes (it goes dense).
        s.program(0, 32, &[0x0F; 64]);
        for b in &mut page[32..96] {
            *b &= 0x0F;
        }
        s.read(0, 0, &mut back);
        assert_eq!(back, page);
        assert!(matches!(s.slots[0], Slot::Dense(_)));
        s.erase(0);
        assert_eq!((s.sparse_bytes, s.held), (0, 0));
        assert!(s.all_erased(0, 0, 2 * PB));
    }

    #[test]
    fn repeated_pages_share_bytes_and_changes_copy() {
        const PB: usize = 2048;
        let mut s = BlockStore::new(4, 8, PB as u32);
        let data: Vec<u8> = (0..4 * PB as u64).map(|i| (i.wrapping_mul(0x9E37_79B9) >> 13) as u8).collect();
        // Four pages of data, then each again shifted by 48 bytes with a stamp.
        for p in 0..4 {
            s.program(0, (p * PB) as u32, &data[p * PB..(p + 1) * PB]);
        }
        let made = s.allocated_bytes();
        let mut copies = Vec::new();
        for p in 0..3 {
            let mut src = data[p * PB + 48..(p + 1) * PB + 48].to_vec();
            src[..8].copy_from_slice(&(p as u64).to_le_bytes());
            s.program(1, (p * PB) as u32, &src);
            assert!(matches!(s.slots[8 + p], Slot::Pieces(_)), "page {p}");
            copies.push(src);
        }
        assert!(s.allocated_bytes() - made < PB, "{} bytes more", s.allocated_bytes() - made);
        let mut back = vec![0u8; PB];
        for (p, src) in copies.iter().enumerate() {
            s.read(1, (p * PB) as u32, &mut back);
            assert_eq!(&back, src);
        }
        // A change to a shared page leaves the copies as they were.
        let originals: Vec<u8> = data[..PB].to_vec();
        s.program(0, 512, &[0u8; 512]);
        s.erase(0);
        for (p, src) in copies.iter().enumerate() {
            s.read(1, (p * PB) as u32, &mut back);
            assert_eq!(&back, src, "page {p} after its source changed and was erased");
        }
        s.read(0, 0, &mut back);
        assert!(back.iter().all(|&b| b == 0xFF) && originals[0] == data[0]);
        s.erase(1);
        assert!(s.uses.iter().all(|&u| u == 0));
        // With pages given back waiting (a store without pieces would reuse
        // one), a repeat is kept dense: no search.
        assert_eq!((s.held, s.high), (0, 7));
        s.program(2, 0, &copies[0]);
        assert!(matches!(s.slots[16], Slot::Dense(_)));
        s.read(2, 0, &mut back);
        assert_eq!(back, copies[0]);
    }

    #[derive(Debug, Clone)]
    enum Op {
        /// Program `len` bytes at `pos` of `block` (within one page); `zeros` makes them mostly zero.
        Program {
            block: u32,
            pos: u32,
            len: usize,
            seed: u8,
            zeros: bool,
        },
        /// Program whole page `page` of `block` with bytes `shift ..` of [`pattern`],
        /// 8 of them replaced by `stamp` at `stamp_at` (a repeat, found in the store
        /// when an earlier copy sits at the same offset modulo 8).
        Repeat {
            block: u32,
            page: u32,
            shift: usize,
            stamp: u8,
            stamp_at: usize,
        },
        Erase(u32),
        Read {
            block: u32,
            pos: u32,
            len: usize,
        },
    }

    /// Bytes of the pattern `Op::Repeat` copies from.
    const PATTERN: usize = 1024;

    /// Noise (xorshift), the same on every call.
    fn pattern() -> Vec<u8> {
        crate::dedup::noise(0x2545_F491_4F6C_DD1D, PATTERN)
    }

    fn op() -> impl proptest::strategy::Strategy<Value = Op> {
        use proptest::prelude::*;
        const PB: u32 = 256;
        prop_oneof![
            4 => (0..3u32, 0..4u32, 0..PB, 1..=PB as usize, any::<u8>(), any::<bool>()).prop_map(
                |(block, page, off, len, seed, zeros)| Op::Program {
                    block,
                    pos: page * PB + off,
                    len: len.min((PB - off) as usize),
                    seed,
                    zeros
                }
            ),
            4 => (0..3u32, 0..4u32, 0..(PATTERN - PB as usize), any::<u8>(), 0..PB as usize - 8).prop_map(
                |(block, page, shift, stamp, stamp_at)| Op::Repeat {
                    block,
                    page,
                    // Mostly at the pattern's alignment modulo 8, sometimes not.
                    shift: if shift % 5 == 0 { shift } else { shift / 8 * 8 },
                    stamp,
                    stamp_at
                }
            ),
            1 => (0..3u32).prop_map(Op::Erase),
            2 => (0..3u32, 0..4 * PB, 1..=4 * PB as usize).prop_map(|(block, pos, len)| Op::Read {
                block,
                pos,
                len: len.min((4 * PB - pos) as usize)
            }),
        ]
    }

    proptest::proptest! {
        /// The early-stopping count decides as the full count does.
        #[test]
        fn enough_zero_words_is_the_full_count(
            words in proptest::collection::vec((0u32..100, 1u8..=255, 0usize..8), 0..600),
            zero_share in 0u32..=100,
            tail in 0usize..8,
        ) {
            let mut page = Vec::new();
            for (r, b, at) in words {
                let mut w = [0u8; 8];
                if r >= zero_share {
                    w[at] = b;
                }
                page.extend_from_slice(&w);
            }
            page.extend(std::iter::repeat_n(0u8, tail));
            let full = page.chunks_exact(8).filter(|w| is_zero_word(w)).count() * 16 >= page.len();
            proptest::prop_assert_eq!(enough_zero_words(&page), full);
        }

        /// `program` (pooled buffers, the direct copy into a fresh page, sparse
        /// pages, pieces of repeated pages and the pages they share, copied
        /// when changed) reads back exactly as a flat array of bytes that starts erased,
        /// ANDs every program in and goes back to 0xFF on an erase.
        #[test]
        fn programs_erases_and_reads_match_a_flat_oracle(
            ops in proptest::collection::vec(op(), 1..120),
            always in proptest::prelude::any::<bool>(),
        ) {
            const PB: usize = 256;
            let mut s = BlockStore::new(3, 4, PB as u32);
            s.search_always = always;
            let mut oracle = vec![0xFFu8; 3 * 4 * PB];
            let pattern = pattern();
            for op in ops {
                match op {
                    Op::Program { block, pos, len, seed, zeros } => {
                        let src: Vec<u8> = (0..len)
                            .map(|k| if zeros && k % 97 != 0 { 0 } else { seed.wrapping_mul(k as u8 | 1) ^ (k >> 3) as u8 })
                            .collect();
                        s.program(block, pos, &src);
                        let at = block as usize * 4 * PB + pos as usize;
                        for (d, b) in oracle[at..at + len].iter_mut().zip(&src) {
                            *d &= *b;
                        }
                    }
                    Op::Repeat { block, page, shift, stamp, stamp_at } => {
                        let mut src = pattern[shift..shift + PB].to_vec();
                        src[stamp_at..stamp_at + 8].fill(stamp);
                        let (pos, at) = (page * PB as u32, (block as usize * 4 + page as usize) * PB);
                        if !s.holds(at / PB) {
                            s.program(block, pos, &src);
                            oracle[at..at + PB].copy_from_slice(&src);
                        }
                    }
                    Op::Erase(block) => {
                        s.erase(block);
                        let at = block as usize * 4 * PB;
                        oracle[at..at + 4 * PB].fill(0xFF);
                    }
                    Op::Read { block, pos, len } => {
                        let mut out = vec![0u8; len];
                        s.read(block, pos, &mut out);
                        let at = block as usize * 4 * PB + pos as usize;
                        proptest::prop_assert_eq!(&out[..], &oracle[at..at + len]);
                        // The same bytes page by page, in place.
                        let (mut parts, mut scratch, mut p) = (Vec::new(), Vec::new(), pos as usize);
                        while p < pos as usize + len {
                            let n = (PB - p % PB).min(pos as usize + len - p);
                            parts.extend_from_slice(s.part(block, p as u32, n, &mut scratch));
                            p += n;
                        }
                        proptest::prop_assert_eq!(&parts[..], &out[..]);
                    }
                }
            }
            let mut all = vec![0u8; 4 * PB];
            for block in 0..3u32 {
                s.read(block, 0, &mut all);
                proptest::prop_assert_eq!(&all[..], &oracle[block as usize * 4 * PB..(block as usize + 1) * 4 * PB]);
            }
            proptest::prop_assert!(s.pooled_bytes() <= 3 * 4 * PB, "no more buffers than pages");
            for block in 0..3 {
                s.erase(block);
            }
            proptest::prop_assert!(s.uses.iter().all(|&u| u == 0), "every slab page let go: {:?}", s.uses);
            proptest::prop_assert_eq!((s.pieces_bytes, s.held), (0, 0));
        }
    }
}
