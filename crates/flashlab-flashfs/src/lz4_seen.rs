//! [`finds_no_match`](crate::lz4_probe::finds_no_match)'s answer for a block probed before, kept by content.
//!
//! The answer depends on the block's bytes alone, so a block equal to one
//! probed earlier has that block's answer. Workloads write the same blocks
//! again and again: `workload/prefill.rs`'s filler files are one 1 MiB chunk
//! repeated (256 distinct 4 KiB blocks, each probed in full ≈ 20 times per
//! IOZone run before this memo), file copies and backups repeat whole files.
//!
//! The memo is a small set-associative table of whole blocks: a key of a
//! few of the block's words picks a set, and a candidate is used only after
//! its bytes compared equal to the block's in full, so a stale or colliding
//! entry costs a comparison, never a wrong answer. Entries live in one
//! zero-allocated buffer, so only the entries used take the process's memory.

/// The longest block kept (flashfs's data block); longer ones are probed.
pub(crate) const SLOT: usize = 4096;
/// Blocks per set.
const WAYS: usize = 4;
/// Sets of the default table (a power of two): 2 048 blocks, 8 MiB of
/// address space, of which only the entries used are touched (the filler's
/// 256 blocks fill a set past its ways with a chance of ≈ 1 in 10 000).
const SETS: usize = 512;

/// The key of a block's content: its length and four of its words mixed.
/// Equal blocks have equal keys.
fn key_of(data: &[u8]) -> u64 {
    let n = data.len();
    let w = |i: usize| u64::from_le_bytes(data[i..i + 8].try_into().expect("8 bytes"));
    let k = w(0) ^ w(8).rotate_left(17) ^ w((n / 2) & !7).rotate_left(31) ^ w(n - 8).rotate_left(47);
    (k ^ n as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

pub(crate) struct SeenBlocks {
    sets: usize,
    /// Per entry: its key, its length (0: empty) and the probe's answer.
    keys: Vec<u64>,
    lens: Vec<u16>,
    answers: Vec<bool>,
    /// Per set: the way replaced next (first in, first out).
    next: Vec<u8>,
    /// Entry `e`'s bytes at `e * SLOT`.
    bytes: Vec<u8>,
}

impl SeenBlocks {
    /// An empty memo; its table is made on first use.
    pub(crate) const fn new() -> SeenBlocks {
        SeenBlocks::with_sets(SETS)
    }

    /// An empty memo of `sets` sets (a power of two; tests use small ones).
    pub(crate) const fn with_sets(sets: usize) -> SeenBlocks {
        SeenBlocks {
            sets,
            keys: Vec::new(),
            lens: Vec::new(),
            answers: Vec::new(),
            next: Vec::new(),
            bytes: Vec::new(),
        }
    }

    /// Whether `data` (16 bytes to [`SLOT`]) can be kept here.
    fn fits(data: &[u8]) -> bool {
        (16..=SLOT).contains(&data.len())
    }

    /// The set `data` belongs to, and its key; the table is made on first use.
    fn set_of(&mut self, data: &[u8]) -> (usize, u64) {
        if self.keys.is_empty() {
            let entries = self.sets * WAYS;
            self.keys = vec![0; entries];
            self.lens = vec![0; entries];
            self.answers = vec![false; entries];
            self.next = vec![0; self.sets];
            self.bytes = vec![0; entries * SLOT];
        }
        let key = key_of(data);
        ((key >> 32) as usize & (self.sets - 1), key)
    }

    /// [`finds_no_match`](crate::lz4_probe::finds_no_match)`(data)` if a block equal to `data` was put here
    /// (and not replaced since).
    pub(crate) fn get(&mut self, data: &[u8]) -> Option<bool> {
        if !Self::fits(data) {
            return None;
        }
        let n = data.len();
        let (set, key) = self.set_of(data);
        (set * WAYS..(set + 1) * WAYS)
            .find(|&e| self.keys[e] == key && self.lens[e] as usize == n && self.bytes[e * SLOT..e * SLOT + n] == *data)
            .map(|e| self.answers[e])
    }

    /// Keeps `answer`, which must be [`finds_no_match`](crate::lz4_probe::finds_no_match)`(data)`, for `data`
    /// (in place of the oldest block of its set).
    pub(crate) fn put(&mut self, data: &[u8], answer: bool) {
        if !Self::fits(data) {
            return;
        }
        let n = data.len();
        let (set, key) = self.set_of(data);
        let way = self.next[set] as usize;
        self.next[set] = ((way + 1) % WAYS) as u8;
        let e = set * WAYS + way;
        self.keys[e] = key;
        self.lens[e] = n as u16;
        self.answers[e] = answer;
        self.bytes[e * SLOT..e * SLOT + n].copy_from_slice(data);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lz4_probe::finds_no_match;
    use crate::lz4_probe::tests::block;
    use proptest::prelude::*;

    /// The memo's answer, or the probe's (then kept), as `TailMemo` asks.
    fn answer(memo: &mut SeenBlocks, data: &[u8]) -> bool {
        memo.get(data).unwrap_or_else(|| {
            let a = finds_no_match(data);
            memo.put(data, a);
            a
        })
    }

    proptest! {
        /// Blocks drawn again and again from a pool (some changed in one
        /// byte), through a memo of one set (four entries: blocks collide
        /// and are replaced): every answer is the probe's.
        #[test]
        fn the_memo_answers_as_the_probe(
            pool in proptest::collection::vec(block(), 1..12),
            draws in proptest::collection::vec((any::<usize>(), proptest::option::of((any::<usize>(), any::<u8>()))), 1..60),
        ) {
            let mut memo = SeenBlocks::with_sets(1);
            for (i, change) in draws {
                let mut b = pool[i % pool.len()].clone();
                if let (Some((at, v)), false) = (change, b.is_empty()) {
                    let at = at % b.len();
                    b[at] = v;
                }
                prop_assert_eq!(answer(&mut memo, &b), finds_no_match(&b), "len {}", b.len());
            }
        }
    }

    #[test]
    fn a_repeated_chunk_is_answered_from_the_memo() {
        let chunk = crate::lz4_probe::tests::noise(1 << 20, 24);
        let mut memo = SeenBlocks::new();
        for _ in 0..3 {
            for b in chunk.chunks(SLOT) {
                assert_eq!(answer(&mut memo, b), finds_no_match(b));
            }
        }
        let held = memo.lens.iter().filter(|&&l| l > 0).count();
        assert_eq!(held, 256, "every block of the chunk is kept");
        assert!(chunk.chunks(SLOT).all(|b| memo.get(b) == Some(finds_no_match(b))));
        // Equal words at the keyed places, different bytes elsewhere: a miss, not a wrong answer.
        let mut z = vec![0u8; SLOT];
        assert!(!answer(&mut memo, &z));
        z[100..104].copy_from_slice(&[1, 2, 3, 4]);
        assert_eq!(answer(&mut memo, &z), finds_no_match(&z));
    }
}
