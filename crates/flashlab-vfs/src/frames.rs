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
//! Sharing is found through a small direct-mapped table from a key of a few
//! of a page's words to a buffer that held those bytes when it was entered;
//! the bytes are always compared in full before a buffer is shared, so a
//! stale or colliding entry costs a comparison, never a wrong page.

/// Buffers per chunk (1 MiB).
pub(crate) const CHUNK_PAGES: usize = 256;
const PAGE: usize = crate::types::PAGE_BYTES as usize;
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
    /// Buffers no frame uses.
    spare: Vec<u32>,
    /// Content key → (key, buffer) of a page entered with it.
    table: Vec<(u64, u32)>,
}

impl Default for Frames {
    fn default() -> Self {
        Self { chunks: Vec::new(), of: Vec::new(), refs: Vec::new(), spare: Vec::new(), table: vec![(0, NONE); SLOTS] }
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

impl Frames {
    /// Adds a frame reading as zeros; returns its number.
    pub fn push(&mut self) -> usize {
        self.of.push(NONE);
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
                b as u32
            }
        };
        self.refs[b as usize] = 1;
        b
    }

    /// Frame `f` lets go of its buffer (kept while another frame uses it).
    fn release(&mut self, f: usize) {
        let b = std::mem::replace(&mut self.of[f], NONE);
        if b != NONE {
            self.refs[b as usize] -= 1;
            if self.refs[b as usize] == 0 {
                self.spare.push(b);
            }
        }
    }

    /// Frame `f`'s bytes.
    #[inline]
    pub fn page(&self, f: usize) -> &[u8] {
        match self.of[f] {
            NONE => &ZERO,
            b => self.buf(b),
        }
    }

    /// Frame `f`'s bytes, to change: a buffer of its own, holding what the
    /// frame held (copied if it was shared, zeros if it had none).
    pub fn page_mut(&mut self, f: usize) -> &mut [u8] {
        let old = self.of[f];
        if old != NONE && self.refs[old as usize] == 1 {
            return self.buf_mut(old);
        }
        let b = self.new_buf();
        if old == NONE {
            self.buf_mut(b).fill(0);
        } else {
            // Shared: `f`'s reference moves to the copy, the others keep it.
            self.refs[old as usize] -= 1;
            self.copy_buf(old, b);
        }
        self.of[f] = b;
        self.buf_mut(b)
    }

    /// Frame `f` becomes the page `data` (all of it): a buffer that already
    /// holds these bytes is shared, else `f` gets a buffer of its own.
    pub fn set_page(&mut self, f: usize, data: &[u8]) {
        assert_eq!(data.len(), PAGE, "set_page takes a whole page");
        let key = key_of(data);
        let slot = (key >> 52) as usize % SLOTS;
        let (k, cand) = self.table[slot];
        if k == key && cand != NONE && self.refs[cand as usize] > 0 && self.buf(cand) == data {
            if self.of[f] != cand {
                self.release(f);
                self.of[f] = cand;
                self.refs[cand as usize] += 1;
            }
            return;
        }
        let old = self.of[f];
        let b = if old != NONE && self.refs[old as usize] == 1 {
            old
        } else {
            self.release(f);
            let b = self.new_buf();
            self.of[f] = b;
            b
        };
        self.buf_mut(b).copy_from_slice(data);
        self.table[slot] = (key, b);
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
        assert!(fr.page(CHUNK_PAGES + 3).iter().all(|&b| b == 0));
        fr.page_mut(CHUNK_PAGES - 1).fill(7);
        fr.page_mut(CHUNK_PAGES).fill(9);
        assert!(fr.page(CHUNK_PAGES - 1).iter().all(|&b| b == 7));
        assert!(fr.page(CHUNK_PAGES).iter().all(|&b| b == 9));
        assert!(fr.page(CHUNK_PAGES - 2).iter().all(|&b| b == 0));
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
        assert_eq!(fr.page(4), &page[..]);
        assert_ne!(fr.page(5), &page[..]);
    }

    #[derive(Debug, Clone)]
    enum Op {
        /// set_page(frame, one of a few pages, with a byte changed or not)
        Set(usize, u8, Option<(usize, u8)>),
        /// page_mut(frame)[at] = v
        Poke(usize, usize, u8),
        /// page_mut(frame).fill(v) (what a read into the frame does)
        Fill(usize, u8),
    }

    fn op() -> impl Strategy<Value = Op> {
        let at = prop_oneof![0usize..16, PAGE / 2 - 8..PAGE / 2 + 8, PAGE - 16..PAGE];
        prop_oneof![
            (0usize..24, 0u8..4, proptest::option::of((at.clone(), any::<u8>())))
                .prop_map(|(f, p, c)| Op::Set(f, p, c)),
            (0usize..24, at, any::<u8>()).prop_map(|(f, a, v)| Op::Poke(f, a, v)),
            (0usize..24, 0u8..3).prop_map(|(f, v)| Op::Fill(f, v)),
        ]
    }

    proptest! {
        /// Against frames that each own a plain array: every frame reads
        /// what was last written to it, whatever was shared.
        #[test]
        fn shared_frames_read_as_private_ones(ops in proptest::collection::vec(op(), 1..200)) {
            let mut fr = Frames::default();
            let mut oracle = vec![vec![0u8; PAGE]; 24];
            for _ in 0..24 {
                fr.push();
            }
            for o in ops {
                match o {
                    Op::Set(f, p, change) => {
                        let mut page: Vec<u8> = (0..PAGE).map(|i| (i as u8).wrapping_mul(p | 1).wrapping_add(p)).collect();
                        if let Some((a, v)) = change {
                            page[a] = v;
                        }
                        fr.set_page(f, &page);
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
                for (f, want) in oracle.iter().enumerate() {
                    prop_assert_eq!(fr.page(f), &want[..]);
                }
                prop_assert!(fr.buffers() <= 24 + 1);
            }
        }
    }
}
