//! Whole pages that repeat bytes the store already holds, kept as pieces: runs
//! that refer to the bytes of a dense page in the [`Slab`] and literal runs in
//! between. The bytes read are exactly those programmed; only the memory
//! differs (a file system writing the same data over and over, as IOZone's
//! records and its filler do, no longer makes the kernel hand out and zero a
//! fresh page for every copy). The store uses them only for memory it has
//! never touched (see `store.rs`).
//!
//! Matches are found through a dictionary of indexed words: every
//! [`STRIDE`]-th aligned 8-byte word of each dense page the store indexes
//! (word → page, offset; all-zero and all-one words are left out, as erased
//! and elided bytes repeat everywhere). A new page looks its words up one by
//! one and, where the indexed page still holds that word (the entry is checked
//! against the page's bytes, so a stale or colliding entry costs a comparison,
//! never a wrong byte), extends the match forwards and backwards. A repeat
//! whose bytes sit at the same offset modulo 8 as an earlier copy is found
//! within [`STRIDE`] words of where it starts (flashfs, like UBIFS, aligns its
//! nodes to 8 bytes).
//!
//! Encoding of a page's pieces, in page order, covering it whole: records of
//! `len u32 | page u32 | offset u32`; a record whose page is [`LITERAL`] is
//! followed by its `len` bytes, any other refers to bytes `offset .. offset +
//! len` of slab page `page`, which the store keeps alive and unchanged while
//! referred to (its use count, copy on write).

use crate::slab::Slab;

/// Shortest run a piece refers to instead of holding.
pub(crate) const MIN_REF: usize = 64;

/// The page field of a literal record.
pub(crate) const LITERAL: u32 = u32::MAX;

/// Bytes of a record's header.
const REC: usize = 12;

/// Odd multiplier of the word hash (Fibonacci hashing).
const K: u64 = 0x9E37_79B9_7F4A_7C15;

fn hash(w: u64) -> u64 {
    w.wrapping_mul(K)
}

/// Every how many words of a dense page one is indexed.
const STRIDE: usize = 8;

/// Whether `w` may be indexed: not all zeros or all ones.
#[inline]
fn indexable(w: u64) -> bool {
    w != 0 && w != u64::MAX
}

#[inline]
fn word(bytes: &[u8], i: usize) -> u64 {
    u64::from_le_bytes(bytes[i * 8..i * 8 + 8].try_into().expect("8 bytes"))
}

fn u32_at(enc: &[u8], i: usize) -> usize {
    u32::from_le_bytes(enc[i..i + 4].try_into().expect("4 bytes")) as usize
}

/// Bytes compared at a time (one `bcmp` call) while they agree; the block
/// that differs is then searched word by word.
const CMP_BLOCK: usize = 256;

/// Little-endian word at byte `i` of `b`.
#[inline]
fn word_at(b: &[u8], i: usize) -> u64 {
    u64::from_le_bytes(b[i..i + 8].try_into().expect("8 bytes"))
}

/// Length of the common prefix of `a` and `b`. Whole blocks by `bcmp`, then
/// 8-byte words: the first differing word's lowest differing byte (the
/// lowest set byte of the XOR of the little-endian words) ends the prefix.
fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    let n = a.len().min(b.len());
    let (a, b) = (&a[..n], &b[..n]);
    let mut i = 0;
    while i + CMP_BLOCK <= n && a[i..i + CMP_BLOCK] == b[i..i + CMP_BLOCK] {
        i += CMP_BLOCK;
    }
    while i + 8 <= n {
        let x = word_at(a, i) ^ word_at(b, i);
        if x != 0 {
            return i + (x.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    while i < n && a[i] == b[i] {
        i += 1;
    }
    i
}

/// Length of the common suffix of `a` and `b`: as [`common_prefix`] from
/// the end (the highest differing byte of the last differing word).
fn common_suffix(a: &[u8], b: &[u8]) -> usize {
    let n = a.len().min(b.len());
    let (a, b) = (&a[a.len() - n..], &b[b.len() - n..]);
    let mut i = 0;
    while i + CMP_BLOCK <= n && a[n - i - CMP_BLOCK..n - i] == b[n - i - CMP_BLOCK..n - i] {
        i += CMP_BLOCK;
    }
    while i + 8 <= n {
        let x = word_at(a, n - i - 8) ^ word_at(b, n - i - 8);
        if x != 0 {
            return i + (x.leading_zeros() / 8) as usize;
        }
        i += 8;
    }
    while i < n && a[n - i - 1] == b[n - i - 1] {
        i += 1;
    }
    i
}

/// A run of a new page found in slab page `page` at `off`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Ref {
    at: usize,
    len: usize,
    pub page: u32,
    off: usize,
}

/// Indexed word → (slab page, word in it), direct-mapped. An entry is
/// `tag << 48 | word << 32 | page`, the tag 16 bits of the word's hash; a
/// wrong hit (an empty entry, a colliding tag, a page since changed) is caught
/// by comparing the bytes.
#[derive(Clone)]
pub(crate) struct Dict {
    table: Vec<u64>,
    /// First word of an indexed page → that page (`tag << 32 | page`): a
    /// page that starts with the same bytes most likely repeats the page
    /// whole but for a few bytes (a log of equal records at the same phase).
    starts: Vec<u64>,
    /// Pages of at most 2^16 words are indexed (others are never found).
    on: bool,
    /// The runs of the last page found with a given first word (its
    /// recipe), direct-mapped by that word: a page that starts with the same
    /// word most likely lays out the same bytes around the same differing
    /// ones (a log of equal records at the same phase: the next LEB's page at
    /// the same place), so its runs are tried, each checked by comparing its
    /// bytes, before any search.
    recipes: Vec<Recipe>,
}

/// Most runs a recipe keeps.
const RECIPE_REFS: usize = 6;

/// A found page's runs (see [`Dict::recipes`]): `(at, len, page, off)` of
/// each; `n == 0` for an empty entry.
#[derive(Clone, Copy, Default)]
struct Recipe {
    first: u64,
    n: u32,
    runs: [[u32; 4]; RECIPE_REFS],
}

impl Dict {
    /// A dictionary for a device of `pages` pages of `page_bytes`: a slot per
    /// two pages, between 64 and 32 768 slots (256 KiB, to stay in cache).
    pub fn new(pages: usize, page_bytes: usize) -> Self {
        let slots = (pages / 2).next_power_of_two().clamp(64, 1 << 15);
        Dict {
            table: vec![0; slots],
            starts: vec![0; slots / 8],
            on: page_bytes / 8 <= 1 << 16,
            recipes: vec![Recipe::default(); (slots / 16).max(4)],
        }
    }

    #[inline]
    fn recipe_slot(&self, w: u64) -> usize {
        (hash(w) >> 40) as usize & (self.recipes.len() - 1)
    }

    /// The runs of the last page found that started with `src`'s first word,
    /// into `refs`, if every one of them still holds `src`'s bytes in a live
    /// page (compared whole) and they cover at least three quarters of it.
    fn try_recipe(&self, src: &[u8], slab: &Slab, live: &impl Fn(u32) -> bool, refs: &mut Vec<Ref>) -> bool {
        let w = word(src, 0);
        let r = &self.recipes[self.recipe_slot(w)];
        if r.n == 0 || r.first != w {
            return false;
        }
        let mut covered = 0;
        for &[at, len, page, off] in &r.runs[..r.n as usize] {
            let (at, len, off) = (at as usize, len as usize, off as usize);
            if !live(page) || at + len > src.len() {
                return false;
            }
            if slab.page(page).get(off..off + len) != Some(&src[at..at + len]) {
                return false;
            }
            covered += len;
        }
        if covered * 4 < src.len() * 3 {
            return false;
        }
        refs.clear();
        refs.extend(r.runs[..r.n as usize].iter().map(|&[at, len, page, off]| Ref {
            at: at as usize,
            len: len as usize,
            page,
            off: off as usize,
        }));
        true
    }

    /// Keeps `refs`, the runs just found for `src`, as the recipe of its first word.
    fn keep_recipe(&mut self, src: &[u8], refs: &[Ref]) {
        let w = word(src, 0);
        if refs.len() > RECIPE_REFS || !indexable(w) {
            return;
        }
        let s = self.recipe_slot(w);
        let r = &mut self.recipes[s];
        r.first = w;
        r.n = refs.len() as u32;
        for (d, x) in r.runs.iter_mut().zip(refs) {
            *d = [x.at as u32, x.len as u32, x.page, x.off as u32];
        }
    }

    #[inline]
    fn slot(&self, w: u64) -> usize {
        (hash(w) >> 32) as usize & (self.table.len() - 1)
    }

    #[inline]
    fn tag(w: u64) -> u64 {
        hash(w) >> 16 & 0xFFFF
    }

    /// Indexes every [`STRIDE`]-th word of `bytes`, the contents of slab page `page`.
    pub fn index(&mut self, page: u32, bytes: &[u8]) {
        if !self.on || bytes.len() < 8 {
            return;
        }
        let w = word(bytes, 0);
        let s = self.start_slot(w);
        self.starts[s] = Self::tag(w) << 32 | page as u64;
        for i in (0..bytes.len() / 8).step_by(STRIDE) {
            let w = word(bytes, i);
            if indexable(w) {
                let s = self.slot(w);
                self.table[s] = Self::tag(w) << 48 | (i as u64) << 32 | page as u64;
            }
        }
    }

    #[inline]
    fn start_slot(&self, w: u64) -> usize {
        (hash(w) >> 40) as usize & (self.starts.len() - 1)
    }

    /// The last indexed page that started with word `w` (unchecked).
    #[inline]
    fn start(&self, w: u64) -> Option<u32> {
        let e = self.starts[self.start_slot(w)];
        (e >> 32 == Self::tag(w)).then_some(e as u32)
    }

    /// Where word `w` was last indexed (unchecked): (page, byte offset).
    #[inline]
    fn get(&self, w: u64) -> Option<(u32, usize)> {
        let e = self.table[self.slot(w)];
        (e >> 48 == Self::tag(w)).then_some((e as u32, (e >> 32 & 0xFFFF) as usize * 8))
    }

    pub fn bytes(&self) -> usize {
        (self.table.len() + self.starts.len()) * 8 + self.recipes.len() * std::mem::size_of::<Recipe>()
    }

    /// The runs of `src` (a whole page of `slab`'s size, a multiple of 8
    /// bytes) found in live slab pages (`uses[p] > 0`), into `refs`; true when
    /// they cover at least three quarters of it. Gives up (false) after a
    /// quarter of the page past the last run without finding one.
    ///
    /// Before looking words up, it tries where the bytes most likely are
    /// (each guess checked by comparing, like a dictionary hit): an indexed
    /// page that starts with the same word, or else where the last page found
    /// ended (`hint`: a file system writes its log in order); a run that
    /// reaches its base page's end goes on at
    /// the start of the next slab page (the store takes fresh pages in order
    /// while it fills), and after a few differing bytes (a node header, a
    /// stamp) the page often agrees with the same base again at the same
    /// distance ([`resync`]).
    ///
    /// First of all, the recipe of a page found before with the same first
    /// word is tried ([`Dict::recipes`]); a page found by the search leaves
    /// its runs as that word's recipe.
    pub fn find(&mut self, src: &[u8], slab: &Slab, uses: &[u32], hint: &mut Hint, refs: &mut Vec<Ref>) -> bool {
        let live = |p: u32| uses.get(p as usize).is_some_and(|&u| u > 0);
        let found = if self.try_recipe(src, slab, &live, refs) {
            true
        } else {
            let found = self.search(src, slab, &live, hint.take(), refs);
            if found {
                self.keep_recipe(src, refs);
            }
            found
        };
        let n = src.len();
        *hint = refs.last().filter(|r| found && r.at + r.len == n).map(|r| {
            let end = r.off + r.len;
            if end == n {
                (r.page + 1, 0)
            } else {
                (r.page, end)
            }
        });
        found
    }

    /// The search of [`Dict::find`], from `hint` (the page found last ended
    /// there) and the dictionary.
    fn search(&self, src: &[u8], slab: &Slab, live: &impl Fn(u32) -> bool, hint: Hint, refs: &mut Vec<Ref>) -> bool {
        refs.clear();
        let n = src.len();
        let (mut done, mut covered, mut i) = (0, 0, 0);
        let mut give_up = n / 4;
        // (byte of `src`, slab page, byte of it) to try before any lookup,
        // and the one to try next if it fails at the page's start.
        let mut guess = self.start(word(src, 0)).map(|p| (0, p, 0));
        let mut other = hint.map(|(p, o)| (0, p, o));
        if guess.is_none() {
            guess = other.take();
        }
        while done < n {
            let (at, page, off) = match guess.take() {
                Some(g) => g,
                None => match self.probe(src, &mut i, give_up, live) {
                    Some(hit) => hit,
                    None => break,
                },
            };
            if !live(page) || off >= n {
                guess = other.take();
                continue;
            }
            let base = slab.page(page);
            let fwd = common_prefix(&src[at..], &base[off..]);
            let back = common_suffix(&src[done..at], &base[..off]);
            let (start, end) = (at - back, at + fwd);
            if end - start < MIN_REF && (end < n || end == start) {
                i = i.max(at / 8 + 1);
                guess = other.take();
                continue;
            }
            other = None;
            refs.push(Ref { at: start, len: end - start, page, off: off - back });
            covered += end - start;
            done = end;
            i = done.div_ceil(8);
            give_up = done + n / 4;
            guess = if off + fwd == n {
                Some((done, page + 1, 0))
            } else {
                resync(src, base, done, off + fwd).map(|(a, o)| (a, page, o))
            };
        }
        covered * 4 >= n * 3
    }

    /// Looks the words of `src` up from word `*i` on, while they start at most
    /// `give_up` bytes in: the first hit in a live page, as (byte of `src`,
    /// slab page, byte of it).
    #[inline]
    fn probe(
        &self,
        src: &[u8],
        i: &mut usize,
        give_up: usize,
        live: &impl Fn(u32) -> bool,
    ) -> Option<(usize, u32, usize)> {
        while *i < src.len() / 8 && *i * 8 <= give_up {
            let w = word(src, *i);
            *i += 1;
            if let Some((p, o)) = if indexable(w) { self.get(w) } else { None } {
                if live(p) {
                    return Some(((*i - 1) * 8, p, o));
                }
            }
        }
        None
    }
}

/// Where the page after the last one found most likely starts: (slab page,
/// byte of it).
pub(crate) type Hint = Option<(u32, usize)>;

/// Words looked at past a difference for the bytes to agree again.
const RESYNC_WORDS: usize = 16;

/// After `src` and `base` differ at `src[at]` / `base[off]`: the first
/// aligned word of `src` within [`RESYNC_WORDS`] words after it that starts
/// [`MIN_REF`] bytes equal to `base` at the same distance, as (byte of `src`,
/// byte of `base`).
fn resync(src: &[u8], base: &[u8], at: usize, off: usize) -> Option<(usize, usize)> {
    let shift = off as isize - at as isize;
    let mut q = at / 8 * 8;
    for _ in 0..RESYNC_WORDS {
        q += 8;
        let o = q as isize + shift;
        if q + MIN_REF > src.len() || o < 0 || o as usize + MIN_REF > base.len() {
            return None;
        }
        let o = o as usize;
        if src[q..q + 8] == base[o..o + 8] && common_prefix(&src[q..q + MIN_REF], &base[o..o + MIN_REF]) == MIN_REF {
            return Some((q, o));
        }
    }
    None
}

/// The pieces of `src` given its runs `refs` (in page order, not overlapping).
pub(crate) fn encode(src: &[u8], refs: &[Ref]) -> Box<[u8]> {
    // The exact size, so that the box takes the vector's buffer as it is.
    let literal: usize = src.len() - refs.iter().map(|r| r.len).sum::<usize>();
    let (mut gaps, mut end) = (0, 0);
    for r in refs {
        gaps += usize::from(r.at > end);
        end = r.at + r.len;
    }
    gaps += usize::from(src.len() > end);
    let mut out = Vec::with_capacity(literal + REC * (refs.len() + gaps));
    let rec = |out: &mut Vec<u8>, len: usize, page: u32, off: usize| {
        for v in [len as u32, page, off as u32] {
            out.extend_from_slice(&v.to_le_bytes());
        }
    };
    let mut at = 0;
    for r in refs.iter().copied().chain([Ref { at: src.len(), len: 0, page: LITERAL, off: 0 }]) {
        if r.at > at {
            rec(&mut out, r.at - at, LITERAL, 0);
            out.extend_from_slice(&src[at..r.at]);
        }
        if r.len > 0 {
            rec(&mut out, r.len, r.page, r.off);
        }
        at = r.at + r.len;
    }
    debug_assert_eq!(out.len(), out.capacity());
    out.into_boxed_slice()
}

/// Calls `visit(page)` for every slab page `enc` refers to (once per record).
pub(crate) fn for_each_ref(enc: &[u8], mut visit: impl FnMut(u32)) {
    let mut i = 0;
    while i < enc.len() {
        let (len, page) = (u32_at(enc, i), u32_at(enc, i + 4) as u32);
        i += REC;
        if page == LITERAL {
            i += len;
        } else {
            visit(page);
        }
    }
}

/// Copies bytes `off .. off + out.len()` of the page `enc` encodes into `out`.
pub(crate) fn read(enc: &[u8], slab: &Slab, off: usize, out: &mut [u8]) {
    let end = off + out.len();
    let (mut i, mut at) = (0, 0);
    while i < enc.len() && at < end {
        let (len, page, from) = (u32_at(enc, i), u32_at(enc, i + 4) as u32, u32_at(enc, i + 8));
        i += REC;
        let (a, b) = (at.max(off), (at + len).min(end));
        let src = if page == LITERAL { &enc[i..i + len] } else { &slab.page(page)[from..from + len] };
        if a < b {
            out[a - off..b - off].copy_from_slice(&src[a - at..b - at]);
        }
        if page == LITERAL {
            i += len;
        }
        at += len;
    }
}

/// `n` bytes of xorshift noise from `seed` (the store's and this module's tests).
#[cfg(test)]
pub(crate) fn noise(mut x: u64, n: usize) -> Vec<u8> {
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefix_and_suffix_lengths() {
        let a: Vec<u8> = (0..40).collect();
        let mut b = a.clone();
        b[21] = 0;
        assert_eq!(common_prefix(&a, &b), 21);
        assert_eq!(common_suffix(&a, &b), 18);
        assert_eq!(common_prefix(&a, &a[..13]), 13);
        assert_eq!(common_suffix(&a[..0], &b), 0);
        assert_eq!(common_suffix(&a[27..], &a), 13);
        // Across whole comparison blocks.
        let a: Vec<u8> = (0..400u32).map(|i| (i * 7) as u8).collect();
        for at in [0usize, 127, 128, 255, 300, 399] {
            let mut b = a.clone();
            b[at] ^= 1;
            assert_eq!((common_prefix(&a, &b), common_suffix(&a, &b)), (at, 399 - at), "at {at}");
        }
        assert_eq!((common_prefix(&a, &a), common_suffix(&a[1..], &a)), (400, 399));
        // Against a byte-by-byte count: every length to 600, differences
        // at every position of a word and across blocks, unequal lengths.
        let naive_p = |a: &[u8], b: &[u8]| a.iter().zip(b).take_while(|(x, y)| x == y).count();
        let naive_s = |a: &[u8], b: &[u8]| a.iter().rev().zip(b.iter().rev()).take_while(|(x, y)| x == y).count();
        let base = noise(3, 600);
        for len in 0..600usize {
            let a = &base[..len];
            let mut b = a.to_vec();
            if len > 0 {
                let at = (len * 37) % len;
                b[at] ^= 1 << (len % 8);
            }
            for (x, y) in [(a, &b[..]), (a, &base[..]), (&b[..], &base[len / 3..])] {
                assert_eq!(common_prefix(x, y), naive_p(x, y), "len {len}");
                assert_eq!(common_suffix(x, y), naive_s(x, y), "len {len}");
            }
        }
    }

    #[test]
    fn a_shifted_stamped_copy_is_found_and_read_back() {
        let mut slab = Slab::new(1024, 8);
        let data = noise(7u64, 2048);
        let mut dict = Dict::new(8, 1024);
        let mut uses = vec![0u32; 2];
        for p in 0..2u32 {
            let n = slab.take();
            slab.page_mut(n).copy_from_slice(&data[p as usize * 1024..][..1024]);
            dict.index(n, slab.page(n));
            uses[n as usize] = 1;
        }
        // Bytes 104..1128 of the data (across both pages), 16 bytes changed.
        let mut src = data[104..1128].to_vec();
        src[500..516].fill(0x55);
        let mut refs = Vec::new();
        assert!(dict.find(&src, &slab, &uses, &mut None, &mut refs), "{refs:?}");
        let enc = encode(&src, &refs);
        assert!(enc.len() < 256, "{} bytes", enc.len());
        let mut back = vec![0u8; 1024];
        read(&enc, &slab, 0, &mut back);
        assert_eq!(back, src);
        for (from, len) in [(0usize, 1usize), (100, 460), (499, 525), (1023, 1)] {
            let mut part = vec![0u8; len];
            read(&enc, &slab, from, &mut part);
            assert_eq!(part, src[from..from + len]);
        }
        let mut pages = Vec::new();
        for_each_ref(&enc, |p| pages.push(p));
        assert_eq!(pages.len(), refs.len());
        // A page no longer in use is not referred to.
        uses.fill(0);
        assert!(!dict.find(&src, &slab, &uses, &mut None, &mut refs) && refs.is_empty());
    }

    #[test]
    fn a_page_starting_as_one_found_before_is_tried_with_its_runs() {
        let mut slab = Slab::new(1024, 8);
        let data = noise(5u64, 2048);
        let mut dict = Dict::new(8, 1024);
        let mut uses = vec![0u32; 3];
        for p in 0..2u32 {
            let n = slab.take();
            slab.page_mut(n).copy_from_slice(&data[p as usize * 1024..][..1024]);
            dict.index(n, slab.page(n));
            uses[n as usize] = 1;
        }
        // Bytes 200..1224 with a 56-byte "header" at 400 (across the pages).
        let page = |fill: u8| {
            let mut src = data[200..1224].to_vec();
            src[400..456].fill(fill);
            src
        };
        let (mut refs, mut hint) = (Vec::new(), None);
        assert!(dict.find(&page(1), &slab, &uses, &mut hint, &mut refs));
        let first: Vec<_> = refs.iter().map(|r| (r.at, r.len, r.page, r.off)).collect();
        // Empty the dictionary's word index: only the recipe can find the
        // next page, which differs from the first in its "header" alone.
        dict.table.fill(0);
        dict.starts.fill(0);
        let src = page(2);
        assert!(dict.find(&src, &slab, &uses, &mut None, &mut refs));
        assert_eq!(refs.iter().map(|r| (r.at, r.len, r.page, r.off)).collect::<Vec<_>>(), first);
        let mut back = vec![0u8; 1024];
        read(&encode(&src, &refs), &slab, 0, &mut back);
        assert_eq!(back, src);
        // A run's bytes changed in the new page: the recipe is refused (and
        // the search, with nothing indexed, finds nothing).
        let mut other = page(3);
        other[900] ^= 0xFF;
        other[100] ^= 0xFF;
        other[700] ^= 0xFF;
        assert!(!dict.find(&other, &slab, &uses, &mut None, &mut refs));
        // A base page no longer live, or changed, is refused too.
        uses[1] = 0;
        assert!(!dict.find(&src, &slab, &uses, &mut None, &mut refs));
        uses[1] = 1;
        slab.page_mut(1)[100] ^= 1;
        assert!(!dict.find(&src, &slab, &uses, &mut None, &mut refs));
    }

    #[test]
    fn guesses_follow_the_next_page_and_resync_after_a_difference() {
        let mut slab = Slab::new(1024, 8);
        let data = noise(11u64, 2048);
        // Nothing indexed: only the hint and the guesses can find the bytes.
        let mut dict = Dict::new(8, 1024);
        let uses = vec![1u32; 2];
        for p in 0..2 {
            let n = slab.take();
            slab.page_mut(n).copy_from_slice(&data[p * 1024..][..1024]);
        }
        // Bytes 512..1536 with a 56-byte header-like difference at 700.
        let mut src = data[512..1536].to_vec();
        src[188..244].iter_mut().for_each(|b| *b ^= 0x5A);
        let (mut refs, mut hint) = (Vec::new(), Some((0, 512)));
        assert!(dict.find(&src, &slab, &uses, &mut hint, &mut refs), "{refs:?}");
        assert_eq!(refs.len(), 3, "{refs:?}");
        assert_eq!(hint, Some((1, 512)), "the next page goes on where this one ended");
        let enc = encode(&src, &refs);
        let mut back = vec![0u8; 1024];
        read(&enc, &slab, 0, &mut back);
        assert_eq!(back, src);
        // A wrong hint costs a comparison, not a wrong byte (the page's
        // recipe forgotten, else it would find the page again).
        dict.recipes.fill(Recipe::default());
        let mut hint = Some((1, 0));
        assert!(!dict.find(&src, &slab, &uses, &mut hint, &mut refs) && hint.is_none());
        // A page starting as an indexed page does is found from its first
        // word alone, whatever the hint.
        let mut dict = Dict::new(8, 1024);
        dict.index(0, slab.page(0));
        let mut src = data[..1024].to_vec();
        src[300..356].iter_mut().for_each(|b| *b ^= 0xA5);
        let mut hint = Some((1, 0));
        assert!(dict.find(&src, &slab, &uses, &mut hint, &mut refs), "{refs:?}");
        assert_eq!((refs.len(), hint), (2, Some((1, 0))), "{refs:?}");
        let mut back = vec![0u8; 1024];
        read(&encode(&src, &refs), &slab, 0, &mut back);
        assert_eq!(back, src);
    }
}
