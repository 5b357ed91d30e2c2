//! [`finds_no_match`] for a block that differs from the previous one only in
//! its first [`HEAD`] bytes, answered from a summary of the shared tail.
//!
//! IOZone writes every record from one buffer with an 8-byte stamp at its
//! front (`workload/iozone.rs`), so the data nodes of its phases share
//! everything past byte 8; many writers stamp headers the same way. The
//! probe's work on such a block is almost all on the tail, which the previous
//! block already had.
//!
//! Why the summary decides exactly as the replay does. The replay visits a
//! fixed list of positions (it depends only on the length until the first
//! match): 1, 2, …, with the step growing by one every 32 misses. At a visited
//! position `p` with word `w` in slot `s`, the candidate is the last earlier
//! visited position in slot `s`, or position 0 if there is none (the table
//! starts at zero), and there is a match when the candidate's word is `w`.
//! Split the visited positions into the head's, `1..HEAD` (all visited, the
//! step is 1 for the first 32), and the tail's, `HEAD..`: a tail position's
//! word lies wholly in the tail, so its word and slot are the same in every
//! block with this tail. Then:
//! - a tail position with an earlier tail position in its slot has the last
//!   of those as candidate whatever the head is: whether any of them matches
//!   is a property of the tail ([`Summary::internal_match`]);
//! - the first tail position in slot `s` has as candidate the last head
//!   position in slot `s` (word `u`): a match iff its word is `u`; or, with no
//!   head position in `s`, position 0: a match iff its word is word 0, which
//!   needs `s` to be word 0's slot;
//! - the head positions themselves are replayed as usual (seven of them).
//!
//! So the summary keeps, per slot, the word of the first tail position in it,
//! and whether the tail matches internally. The property test below checks
//! [`TailMemo::probe`] against [`finds_no_match`] on blocks sharing
//! tails, with heads copied from the tail so that head and tail words collide.

use crate::lz4_probe::{finds_no_match, replayed, slot, word, MFLIMIT, SKIP_SHIFT, TABLE};
use crate::lz4_seen::SeenBlocks;
use flashlab_vfs::TailToken;

/// Bytes at the front of a block that may differ from the previous block's
/// (those a page cache's `TailToken` leaves out).
pub(crate) const HEAD: usize = flashlab_vfs::TAIL_HEAD;
/// Blocks shorter than this are probed directly (the head must be visited
/// whole, and short blocks are cheap).
const MIN_BLOCK: usize = 64;
/// Slots per word of the occupancy bitmap.
const BITS: usize = 64;

/// The tail's part of the replay: per slot, the first tail word in it.
struct Summary {
    internal_match: bool,
    first_word: Box<[u32]>,
    has_first: Box<[u64]>,
}

impl Summary {
    fn new() -> Summary {
        Summary { internal_match: false, first_word: vec![0; TABLE].into(), has_first: vec![0; TABLE / BITS].into() }
    }

    fn first(&self, s: usize) -> Option<u32> {
        (self.has_first[s / BITS] >> (s % BITS) & 1 == 1).then(|| self.first_word[s])
    }

    /// Replays the tail positions of `data` alone (rarely: once per new tail).
    fn build(&mut self, data: &[u8]) {
        self.has_first.fill(0);
        let mut last = vec![0u32; TABLE];
        self.internal_match = false;
        for p in visited(data.len()).filter(|&p| p >= HEAD) {
            let w = word(data, p);
            let s = slot(w);
            if self.first(s).is_none() {
                self.first_word[s] = w;
                self.has_first[s / BITS] |= 1 << (s % BITS);
            } else if last[s] == w {
                self.internal_match = true;
            }
            last[s] = w;
        }
    }
}

/// The positions the replay visits in a block of `n` bytes, in order, as
/// long as it finds no match (`finds_no_match`'s loop).
fn visited(n: usize) -> impl Iterator<Item = usize> {
    let end = n - MFLIMIT;
    let mut misses = 1usize << SKIP_SHIFT;
    let mut next = 1usize;
    std::iter::from_fn(move || {
        let cur = next;
        next += misses >> SKIP_SHIFT;
        misses += 1;
        (cur <= end).then_some(cur)
    })
}

/// Names the bytes of a tail [`TailMemo`] kept: the memo takes a new id
/// each time its kept bytes change and never reuses one, so two blocks given
/// the same id by one memo have equal bytes after their first [`HEAD`]
/// (`crc_tail.rs` uses this instead of comparing the tail again).
/// Non-zero, so that `Option<TailId>` is one word.
pub(crate) type TailId = std::num::NonZeroU64;

/// The last block's tail, and its summary once a second block shared it.
pub(crate) struct TailMemo {
    tail: Vec<u8>,
    /// The id of `tail`'s bytes.
    id: TailId,
    /// The page cache's token of `tail`'s bytes, if one came with them
    /// (`flashlab_vfs::TailToken`: equal tokens, equal bytes).
    token: Option<TailToken>,
    summary: Option<Summary>,
    /// A summary's tables, kept for the next tail.
    spare: Option<Summary>,
    /// Blocks with a new tail: answered from an equal block probed before.
    seen: SeenBlocks,
}

impl TailMemo {
    pub(crate) const fn new() -> TailMemo {
        TailMemo { tail: Vec::new(), id: TailId::MIN, token: None, summary: None, spare: None, seen: SeenBlocks::new() }
    }

    /// Exactly [`finds_no_match`]`(data)`.
    #[cfg(test)]
    pub(crate) fn finds_no_match(&mut self, data: &[u8]) -> bool {
        self.probe(data, None).0
    }

    /// Exactly [`finds_no_match`]`(data)`, and the id of the kept tail where
    /// `data[HEAD..]` equals it on return (compared here, or just copied).
    /// `token`, if given, is the page cache's token of `data[HEAD..]`: a
    /// kept tail of the same length known by it is equal without a compare.
    pub(crate) fn probe(&mut self, data: &[u8], token: Option<TailToken>) -> (bool, Option<TailId>) {
        let n = data.len();
        if !replayed(n) || n < MIN_BLOCK {
            return (finds_no_match(data), None);
        }
        if !self.same_tail(data, token) {
            // A block equal to one probed before is answered as that one
            // was; the tail and its summary stay as they are (they still
            // describe each other), so no copy of the tail is made.
            if let Some(answer) = self.seen.get(data) {
                return (answer, None);
            }
            self.tail.clear();
            self.tail.extend_from_slice(&data[HEAD..]);
            self.id = self.id.checked_add(1).expect("fewer than 2^64 tails");
            self.token = token;
            self.spare = self.summary.take().or(self.spare.take());
            let answer = finds_no_match(data);
            self.seen.put(data, answer);
            return (answer, Some(self.id));
        }
        let summary = match &mut self.summary {
            Some(s) => s,
            s => {
                let mut new = self.spare.take().unwrap_or_else(Summary::new);
                new.build(data);
                s.insert(new)
            }
        };
        (no_match_with(summary, data), Some(self.id))
    }

    /// Whether `data[HEAD..]` equals the kept tail: by the token, else by
    /// comparing (which, where equal, makes `token` name the kept tail too).
    #[inline]
    fn same_tail(&mut self, data: &[u8], token: Option<TailToken>) -> bool {
        if self.tail.len() + HEAD != data.len() {
            return false;
        }
        if token.is_some() && token == self.token {
            debug_assert!(self.tail[..] == data[HEAD..], "a token names one tail's bytes");
            return true;
        }
        if self.tail[..] != data[HEAD..] {
            return false;
        }
        if token.is_some() {
            self.token = token;
        }
        true
    }
}

/// The replay of `data` whose tail `summary` describes (see the module text).
fn no_match_with(summary: &Summary, data: &[u8]) -> bool {
    let w0 = word(data, 0);
    // The head's positions: (slot, last word) of each slot they touch.
    let mut head = [(usize::MAX, 0u32); HEAD - 1];
    for (i, p) in (1..HEAD).enumerate() {
        let w = word(data, p);
        let s = slot(w);
        let candidate = head[..i].iter().rev().find(|e| e.0 == s).map_or(w0, |e| e.1);
        if candidate == w {
            return false;
        }
        head[i] = (s, w);
    }
    if summary.internal_match {
        return false;
    }
    // The first tail position of each slot, against the head's last word there.
    for (i, &(s, _)) in head.iter().enumerate() {
        let last = head[i..].iter().rev().find(|e| e.0 == s).map_or(0, |e| e.1);
        if summary.first(s) == Some(last) {
            return false;
        }
    }
    let s0 = slot(w0);
    !(head.iter().all(|e| e.0 != s0) && summary.first(s0) == Some(w0))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lz4_probe::tests::{agrees, block};
    use proptest::prelude::*;

    /// Blocks sharing `base`'s tail, their heads random or copied from the
    /// tail (head words then equal tail words, or word 0 does).
    fn heads(base: &[u8], seeds: &[u64]) -> Vec<Vec<u8>> {
        seeds
            .iter()
            .map(|&seed| {
                let mut b = base.to_vec();
                match seed % 4 {
                    0 => b[..HEAD].copy_from_slice(&seed.to_le_bytes()),
                    1 => {
                        let from = HEAD + (seed >> 8) as usize % (b.len() - 2 * HEAD);
                        b.copy_within(from..from + HEAD, 0);
                    }
                    2 => {
                        let from = HEAD + (seed >> 8) as usize % (b.len() - 2 * HEAD);
                        let at = (seed >> 40) as usize % 4;
                        b.copy_within(from..from + 4, at);
                    }
                    _ => {}
                }
                b
            })
            .collect()
    }

    proptest! {
        // Head–tail collisions are rare in random blocks: many cases.
        #![proptest_config(ProptestConfig::with_cases(2000))]
        #[test]
        fn the_memo_answers_as_the_probe(base in block(), seeds in proptest::collection::vec(any::<u64>(), 1..8)) {
            let mut memo = TailMemo::new();
            if base.len() < 2 * HEAD + 8 {
                prop_assert_eq!(memo.finds_no_match(&base), finds_no_match(&base));
                return Ok(());
            }
            for b in heads(&base, &seeds) {
                prop_assert_eq!(memo.finds_no_match(&b), finds_no_match(&b), "len {}", b.len());
                agrees(&b)?;
            }
        }
    }

    #[test]
    fn equal_tails_share_an_id_and_a_page_token_stands_for_the_compare() {
        let base = crate::lz4_probe::tests::noise(4096, 7);
        let mut other = base.clone();
        other[2000] ^= 1;
        let mut memo = TailMemo::new();
        let stamped = |b: &[u8], i: u64| {
            let mut b = b.to_vec();
            b[..HEAD].copy_from_slice(&i.to_le_bytes());
            b
        };
        let (a, id) = memo.probe(&stamped(&base, 1), None);
        assert_eq!(a, finds_no_match(&stamped(&base, 1)));
        let id = id.expect("a copied tail has an id");
        for i in 2..6 {
            let b = stamped(&base, i);
            assert_eq!(memo.probe(&b, Some(40)), (finds_no_match(&b), Some(id)), "record {i}");
        }
        // Another tail under another token: compared, copied, a new id; then
        // known by its token (the debug assertion checks the bytes); a
        // shorter block under the same token is not taken for it.
        let b = stamped(&other, 9);
        let (_, id2) = memo.probe(&b, Some(41));
        assert!(id2.is_some_and(|i| i != id));
        assert_eq!(memo.probe(&stamped(&other, 10), Some(41)).1, id2, "known by the token");
        let short = &stamped(&other, 11)[..4000];
        assert_eq!(memo.probe(short, Some(41)).0, finds_no_match(short));
        assert_ne!(memo.probe(&stamped(&base, 12), Some(41)).1, id2);
    }

    #[test]
    fn iozone_like_records_hit_the_summary() {
        let base = crate::lz4_probe::tests::noise(4096, 24);
        let mut memo = TailMemo::new();
        for i in 0..2000u64 {
            let mut b = base.clone();
            b[..8].copy_from_slice(&((i * 4096) ^ (i << 40)).to_le_bytes());
            assert_eq!(memo.finds_no_match(&b), finds_no_match(&b));
        }
        assert!(memo.summary.is_some());
        // A head equal to a later word: the summary must find the match.
        let mut b = base.clone();
        b.copy_within(1000..1008, 0);
        assert_eq!(memo.finds_no_match(&b), finds_no_match(&b));
        let z = vec![0u8; 4096];
        assert!(!memo.finds_no_match(&z) && !memo.finds_no_match(&z));
    }
}
