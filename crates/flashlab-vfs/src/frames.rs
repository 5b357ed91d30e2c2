//! The page cache's 4 KiB frames. A frame is the cache's unit of memory
//! (what `memory_mib` counts, what reclaim and the LRU move); its bytes live
//! in a buffer, and frames whose pages hold the same bytes share one buffer
//! (copy on write). Only the buffers take the process's memory: filler files
//! written from one repeated chunk, for instance, are cached in as many
//! buffers as the chunk has pages. Which frames exist, and everything the
//! model computes from them, is unchanged; only where their bytes are kept.
//!
//! Buffers come in chunks of [`CHUNK_PAGES`], each an anonymous mapping
//! faulted in whole when it is made (`MAP_POPULATE`), so that growing takes
//! one system call per chunk instead of a page fault per buffer. A buffer
//! no frame uses any more is reused before a new one is made.
//!
//! A frame may also share a buffer whose page differs from its own only in
//! the first [`HEAD`] bytes, keeping those bytes itself (IOZone's records are
//! one buffer with an 8-byte stamp in front, as `lz4_memo.rs` notes); such a
//! frame's page is put together when it is read ([`Frames::append`]),
//! changed ([`Frames::page_mut`]) or written back ([`Frames::with_page`]:
//! its head in the buffer for the call).
//!
//! Each buffer carries a [`TailToken`] naming its bytes after the head: a
//! new one, from a process-wide counter, whenever they may change (a page
//! copied in by [`Frames::set_page`], any [`Frames::page_mut`]), so equal
//! tokens mean equal bytes; writeback hands a frame's token to the file
//! system with its page ([`Frames::tail_token`]).
//!
//! Sharing is found through two small direct-mapped tables from a key of a
//! few of a page's words (the whole page's, and the words after the head)
//! to a buffer that held those bytes when it was entered; the bytes are
//! always compared in full before a buffer is shared, so a stale or
//! colliding entry costs a comparison, never a wrong page.

use crate::types::{new_tail_token as new_token, TailToken, TAIL_HEAD};

/// Buffers per chunk (1 MiB).
pub(crate) const CHUNK_PAGES: usize = 256;
const PAGE: usize = crate::types::PAGE_BYTES as usize;
/// Bytes at a page's start a frame may hold instead of its buffer's (the
/// bytes a buffer's [`TailToken`] does not cover).
const HEAD: usize = TAIL_HEAD;
/// No buffer: the frame reads as zeros.
const NONE: u32 = u32::MAX;
/// Slots of the content table (a power of two).
const SLOTS: usize = 4096;
static ZERO: [u8; PAGE] = [0; PAGE];

pub(crate) struct Frames {
    chunks: Vec<memmap2::MmapMut>,
    /// Frame → its buffer (`NONE`: all zeros).
    of: Vec<u32>,
    /// Buffer → frames using it.
    refs: Vec<u32>,
    /// Buffer → the token of its bytes after the head.
    tokens: Vec<TailToken>,
    /// Buffers no frame uses.
    spare: Vec<u32>,
    /// Content key → (key, buffer) of a page entered with it.
    table: Vec<(u64, u32)>,
    /// The same for the key of the bytes after the head.
    tails: Vec<(u64, u32)>,
    /// Frame → whether its first [`HEAD`] bytes are `head[f]`, not its buffer's.
    mixed: Vec<bool>,
    head: Vec<[u8; HEAD]>,
    /// The last page set from a writer's token ([`Frames::set_page_from`]):
    /// (that token, the buffer holding its tail, the buffer's token then).
    last_from: (TailToken, u32, TailToken),
}

impl Default for Frames {
    fn default() -> Self {
        Self {
            chunks: Vec::new(),
            of: Vec::new(),
            refs: Vec::new(),
            tokens: Vec::new(),
            spare: Vec::new(),
            table: vec![(0, NONE); SLOTS],
            tails: vec![(0, NONE); SLOTS],
            mixed: Vec::new(),
            head: Vec::new(),
            last_from: (0, NONE, 0),
        }
    }
}

/// The key of a page's content: four of its words mixed (the first two,
/// the middle one and the last one). Equal pages have equal keys.
#[inline]
fn key_of(p: &[u8]) -> u64 {
    let w = |i: usize| u64::from_le_bytes(p[i..i + 8].try_into().expect("8 bytes"));
    let k = w(0) ^ w(8).rotate_left(17) ^ w(PAGE / 2).rotate_left(31) ^ w(PAGE - 8).rotate_left(47);
    k.wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

/// The key of the bytes after the head: equal tails have equal keys.
#[inline]
fn tail_key_of(p: &[u8]) -> u64 {
    let w = |i: usize| u64::from_le_bytes(p[i..i + 8].try_into().expect("8 bytes"));
    let k = w(HEAD) ^ w(HEAD + 8).rotate_left(13) ^ w(PAGE / 2).rotate_left(29) ^ w(PAGE - 8).rotate_left(43);
    k.wrapping_mul(0xD6E8_FEB8_6659_FD93)
}

/// Slot of `key` in a table.
#[inline]
fn slot(key: u64) -> usize {
    (key >> 52) as usize % SLOTS
}

impl Frames {
    /// Adds a frame reading as zeros; returns its number.
    pub fn push(&mut self) -> usize {
        self.of.push(NONE);
        self.mixed.push(false);
        self.head.push([0; HEAD]);
        self.of.len() - 1
    }

    /// Buffers made so far (the process's page-cache memory, in pages).
    #[cfg(test)]
    pub fn buffers(&self) -> usize {
        self.refs.len()
    }

    fn buf(&self, b: u32) -> &[u8] {
        let b = b as usize;
        let o = (b % CHUNK_PAGES) * PAGE;
        &self.chunks[b / CHUNK_PAGES][o..o + PAGE]
    }

    fn buf_mut(&mut self, b: u32) -> &mut [u8] {
        let b = b as usize;
        let o = (b % CHUNK_PAGES) * PAGE;
        &mut self.chunks[b / CHUNK_PAGES][o..o + PAGE]
    }

    /// Buffer `to` takes buffer `from`'s bytes.
    fn copy_buf(&mut self, from: u32, to: u32) {
        let (from, to) = (from as usize, to as usize);
        let (cf, ct) = (from / CHUNK_PAGES, to / CHUNK_PAGES);
        let (of, ot) = ((from % CHUNK_PAGES) * PAGE, (to % CHUNK_PAGES) * PAGE);
        if cf == ct {
            self.chunks[cf].copy_within(of..of + PAGE, ot);
        } else {
            let (a, b) = self.chunks.split_at_mut(cf.max(ct));
            let (src, dst) = if cf < ct { (&a[cf][..], &mut b[0][..]) } else { (&b[0][..], &mut a[ct][..]) };
            dst[ot..ot + PAGE].copy_from_slice(&src[of..of + PAGE]);
        }
    }

    /// A buffer no frame uses (its bytes unspecified), with one reference.
    fn new_buf(&mut self) -> u32 {
        let b = match self.spare.pop() {
            Some(b) => b,
            None => {
                let b = self.refs.len();
                if b.is_multiple_of(CHUNK_PAGES) {
                    let len = CHUNK_PAGES * PAGE;
                    let map = memmap2::MmapOptions::new().len(len).populate().map_anon();
                    self.chunks
                        .push(map.unwrap_or_else(|e| panic!("cannot map {len} bytes of page-cache frames: {e}")));
                }
                self.refs.push(0);
                self.tokens.push(0);
                b as u32
            }
        };
        self.refs[b as usize] = 1;
        b
    }

    /// Frame `f` lets go of its buffer (kept while another frame uses it).
    fn release(&mut self, f: usize) {
        self.mixed[f] = false;
        let b = std::mem::replace(&mut self.of[f], NONE);
        if b != NONE {
            self.refs[b as usize] -= 1;
            if self.refs[b as usize] == 0 {
                self.spare.push(b);
            }
        }
    }

    /// Frame `f`'s buffer's bytes (its page unless it is mixed).
    #[inline]
    fn plain(&self, f: usize) -> &[u8] {
        match self.of[f] {
            NONE => &ZERO,
            b => self.buf(b),
        }
    }

    /// Calls `visit` with frame `f`'s bytes in place (writeback hands them
    /// to the file system). A mixed frame's head is put into its buffer for
    /// the call and the buffer's own first bytes back after it, so no copy
    /// of the page is made; the other frames sharing the buffer are not
    /// read meanwhile (`visit` has no access to them: `self` is borrowed).
    #[inline]
    pub fn with_page<R>(&mut self, f: usize, visit: impl FnOnce(&[u8]) -> R) -> R {
        if !self.mixed[f] {
            return visit(self.plain(f));
        }
        let head = self.head[f];
        let page = self.buf_mut(self.of[f]);
        let own: [u8; HEAD] = page[..HEAD].try_into().expect("HEAD bytes");
        page[..HEAD].copy_from_slice(&head);
        let r = visit(page);
        page[..HEAD].copy_from_slice(&own);
        r
    }

    /// The token of frame `f`'s bytes after the head (None: it reads as zeros).
    #[inline]
    pub fn tail_token(&self, f: usize) -> Option<TailToken> {
        match self.of[f] {
            NONE => None,
            b => Some(self.tokens[b as usize]),
        }
    }

    /// Appends bytes `s..e` of frame `f`'s page to `out`.
    #[inline]
    pub fn append(&self, f: usize, s: usize, e: usize, out: &mut Vec<u8>) {
        let at = out.len();
        out.extend_from_slice(&self.plain(f)[s..e]);
        if self.mixed[f] && s < HEAD {
            let h = HEAD.min(e);
            out[at..at + h - s].copy_from_slice(&self.head[f][s..h]);
        }
    }

    /// Frame `f`'s bytes, as a new vector (tests).
    #[cfg(test)]
    pub fn read(&self, f: usize) -> Vec<u8> {
        let mut out = Vec::new();
        self.append(f, 0, PAGE, &mut out);
        out
    }

    /// Frame `f`'s bytes, to change: a buffer of its own, holding what the
    /// frame held (copied if it was shared, zeros if it had none).
    /// The buffer takes a new token: the caller may change any byte.
    pub fn page_mut(&mut self, f: usize) -> &mut [u8] {
        let old = self.of[f];
        if old != NONE && self.refs[old as usize] == 1 {
            if std::mem::take(&mut self.mixed[f]) {
                let h = self.head[f];
                self.buf_mut(old)[..HEAD].copy_from_slice(&h);
            }
            self.tokens[old as usize] = new_token();
            return self.buf_mut(old);
        }
        let b = self.new_buf();
        if old == NONE {
            self.buf_mut(b).fill(0);
        } else {
            // Shared: `f`'s reference moves to the copy, the others keep it.
            self.refs[old as usize] -= 1;
            self.copy_buf(old, b);
            if std::mem::take(&mut self.mixed[f]) {
                let h = self.head[f];
                self.buf_mut(b)[..HEAD].copy_from_slice(&h);
            }
        }
        self.of[f] = b;
        self.tokens[b as usize] = new_token();
        self.buf_mut(b)
    }

    /// Frame `f` becomes the page `data` (all of it): a buffer that already
    /// holds these bytes is shared, else one that holds them after the head
    /// (`f` keeps the head), else `f` gets a buffer of its own.
    pub fn set_page(&mut self, f: usize, data: &[u8]) {
        assert_eq!(data.len(), PAGE, "set_page takes a whole page");
        let key = key_of(data);
        let (k, cand) = self.table[slot(key)];
        if k == key && cand != NONE && self.refs[cand as usize] > 0 && self.buf(cand) == data {
            self.share(f, cand);
            self.mixed[f] = false;
            return;
        }
        let tkey = tail_key_of(data);
        let (k, cand) = self.tails[slot(tkey)];
        if k == tkey && cand != NONE && self.refs[cand as usize] > 0 && self.buf(cand)[HEAD..] == data[HEAD..] {
            self.share_tail(f, cand, data);
            return;
        }
        let old = self.of[f];
        let b = if old != NONE && self.refs[old as usize] == 1 {
            self.mixed[f] = false;
            old
        } else {
            self.release(f);
            let b = self.new_buf();
            self.of[f] = b;
            b
        };
        self.buf_mut(b).copy_from_slice(data);
        self.tokens[b as usize] = new_token();
        self.table[slot(key)] = (key, b);
        self.tails[slot(tkey)] = (tkey, b);
    }

    /// [`Frames::set_page`] where `from`, the writer's token, names
    /// `data[HEAD..]`'s bytes (`FileSystem::write_tail`): the buffer that
    /// took the last such page holds them, without a compare, if the writer
    /// gave the same token and the buffer is in use and unchanged since (its
    /// own token the same).
    pub fn set_page_from(&mut self, f: usize, data: &[u8], from: TailToken) {
        let (t, b, bt) = self.last_from;
        if t == from && b != NONE && self.refs[b as usize] > 0 && self.tokens[b as usize] == bt {
            debug_assert!(self.buf(b)[HEAD..] == data[HEAD..], "a token names one tail's bytes");
            self.share_tail(f, b, data);
            return;
        }
        self.set_page(f, data);
        let b = self.of[f];
        self.last_from = (from, b, self.tokens[b as usize]);
    }

    /// Frame `f` becomes `data`, whose bytes after the head buffer `b`
    /// holds (and which holds at least one reference).
    fn share_tail(&mut self, f: usize, b: u32, data: &[u8]) {
        self.share(f, b);
        if self.refs[b as usize] == 1 {
            // Its own buffer: the head goes in place.
            self.buf_mut(b)[..HEAD].copy_from_slice(&data[..HEAD]);
            self.mixed[f] = false;
        } else {
            self.head[f].copy_from_slice(&data[..HEAD]);
            self.mixed[f] = true;
        }
    }

    /// Frame `f` uses buffer `b` (which holds at least one reference).
    fn share(&mut self, f: usize, b: u32) {
        if self.of[f] != b {
            self.release(f);
            self.of[f] = b;
            self.refs[b as usize] += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn frames_start_zeroed_and_keep_what_is_written() {
        let mut fr = Frames::default();
        for _ in 0..2 * CHUNK_PAGES {
            fr.push();
        }
        assert!(fr.read(CHUNK_PAGES + 3).iter().all(|&b| b == 0));
        fr.page_mut(CHUNK_PAGES - 1).fill(7);
        fr.page_mut(CHUNK_PAGES).fill(9);
        assert!(fr.read(CHUNK_PAGES - 1).iter().all(|&b| b == 7));
        assert!(fr.read(CHUNK_PAGES).iter().all(|&b| b == 9));
        assert!(fr.read(CHUNK_PAGES - 2).iter().all(|&b| b == 0));
        assert!(fr.page_mut(CHUNK_PAGES - 2).iter().all(|&b| b == 0));
    }

    #[test]
    fn equal_pages_share_a_buffer_until_one_changes() {
        let mut fr = Frames::default();
        let page: Vec<u8> = (0..PAGE).map(|i| (i * 7 % 251) as u8).collect();
        for f in 0..100 {
            fr.push();
            fr.set_page(f, &page);
        }
        assert_eq!(fr.buffers(), 1);
        fr.page_mut(5)[100] ^= 1;
        assert_eq!(fr.buffers(), 2);
        assert_eq!(fr.read(4), page);
        assert_ne!(fr.read(5), page);
        // Stamped copies share the buffer too, each keeping its head.
        for f in 100..200 {
            fr.push();
            let mut p = page.clone();
            p[..8].copy_from_slice(&(f as u64 * 0x0101_0101).to_le_bytes());
            fr.set_page(f, &p);
        }
        assert_eq!(fr.buffers(), 2, "they share the first page's buffer");
        for f in 100..200 {
            let mut want = page.clone();
            want[..8].copy_from_slice(&(f as u64 * 0x0101_0101).to_le_bytes());
            assert!(fr.with_page(f, |p| p == &want[..]), "frame {f}");
            let mut part = Vec::new();
            fr.append(f, 3, 20, &mut part);
            assert_eq!(part, &want[3..20]);
        }
        fr.page_mut(150)[9] ^= 1;
        assert_eq!(fr.buffers(), 3);
        assert_eq!(fr.read(4), page);
        assert_eq!(fr.read(150)[..8], (150u64 * 0x0101_0101).to_le_bytes());
    }

    #[derive(Debug, Clone)]
    enum Op {
        /// set_page(frame, one of a few pages, with a byte changed or not)
        Set(usize, u8, Option<(usize, u8)>),
        /// page_mut(frame)[at] = v
        Poke(usize, usize, u8),
        /// page_mut(frame).fill(v) (what a read into the frame does)
        Fill(usize, u8),
        /// set_page_from(frame, one of a few pages with this head, its token)
        From(usize, u8, u64),
    }

    fn op() -> impl Strategy<Value = Op> {
        let at = prop_oneof![0usize..16, PAGE / 2 - 8..PAGE / 2 + 8, PAGE - 16..PAGE];
        prop_oneof![
            (0usize..24, 0u8..4, proptest::option::of((at.clone(), any::<u8>())))
                .prop_map(|(f, p, c)| Op::Set(f, p, c)),
            (0usize..24, at, any::<u8>()).prop_map(|(f, a, v)| Op::Poke(f, a, v)),
            (0usize..24, 0u8..3).prop_map(|(f, v)| Op::Fill(f, v)),
            (0usize..24, 0u8..4, 0u64..3).prop_map(|(f, p, h)| Op::From(f, p, h)),
        ]
    }

    proptest! {
        /// Against frames that each own a plain array: every frame reads
        /// what was last written to it, whatever was shared.
        #[test]
        fn shared_frames_read_as_private_ones(ops in proptest::collection::vec(op(), 1..200)) {
            let mut fr = Frames::default();
            let mut oracle = vec![vec![0u8; PAGE]; 24];
            let mut tails = std::collections::HashMap::new();
            for _ in 0..24 {
                fr.push();
            }
            // A writer's token per page it writes (the tails never change).
            let from: Vec<u64> = (0..4).map(|_| crate::types::new_tail_token()).collect();
            let page_of = |p: u8| -> Vec<u8> { (0..PAGE).map(|i| (i as u8).wrapping_mul(p | 1).wrapping_add(p)).collect() };
            for o in ops {
                match o {
                    Op::Set(f, p, change) => {
                        let mut page = page_of(p);
                        if let Some((a, v)) = change {
                            page[a] = v;
                        }
                        fr.set_page(f, &page);
                        oracle[f] = page;
                    }
                    Op::From(f, p, h) => {
                        let mut page = page_of(p);
                        page[..HEAD].copy_from_slice(&(h * 0x0101_0101).to_le_bytes());
                        fr.set_page_from(f, &page, from[p as usize]);
                        oracle[f] = page;
                    }
                    Op::Poke(f, a, v) => {
                        fr.page_mut(f)[a] = v;
                        oracle[f][a] = v;
                    }
                    Op::Fill(f, v) => {
                        fr.page_mut(f).fill(v);
                        oracle[f].fill(v);
                    }
                }
                // In place, each frame's head put in and taken out again
                // (the frames after it, sharing its buffer, still read
                // their own bytes); a token names one tail for the whole run.
                for (f, want) in oracle.iter().enumerate() {
                    if let Some(t) = fr.tail_token(f) {
                        let tail = tails.entry(t).or_insert_with(|| want[HEAD..].to_vec());
                        prop_assert!(tail[..] == want[HEAD..], "frame {} token {}", f, t);
                    }
                    prop_assert!(fr.with_page(f, |p| p == &want[..]), "frame {}", f);
                    let mut part = vec![1u8];
                    fr.append(f, f % 11, PAGE - f, &mut part);
                    prop_assert_eq!(&part[1..], &want[f % 11..PAGE - f]);
                }
                prop_assert!(fr.buffers() <= 24 + 1);
            }
        }
    }
}
