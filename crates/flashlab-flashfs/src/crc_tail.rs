//! CRC-32 of a node whose bytes after a short head repeat the last node's:
//! exactly `crc32fast::hash`, with the repeated tail's part computed once.
//!
//! IOZone writes every record from one buffer with an 8-byte stamp in
//! front, and `flashfs-overwrite` changes one byte of its block per write,
//! so their data nodes differ from the previous one in the header and the
//! payload's first bytes alone (`lz4_memo.rs` uses the same fact). The CRC
//! is still the node's own, as UBIFS computes it (`ubifs_prepare_node`,
//! `ubifs_check_node`); only the arithmetic changes.
//!
//! Why it is exact. With `update(v, B)` crc32fast's running CRC `v` carried
//! over bytes `B` (`Hasher::new_with_initial(v)`), the register is linear
//! over GF(2) in its state and the data, so `update(v, T) = L(v) ^ hash(T)`,
//! where `L` depends on `T`'s length alone: `L(v) = update(v, Z) ^ hash(Z)`
//! for `Z` that many zero bytes. Hence `hash(H ‖ T) = update(hash(H), T) =
//! L(hash(H)) ^ hash(T)`: the head's CRC, `L` (four 256-entry tables, one
//! per byte of `v`) and the tail's CRC kept with its bytes. A tail is used
//! only after its bytes compare equal to the kept ones, so a different tail
//! costs a comparison, never a wrong CRC; the unit tests check the result
//! against `crc32fast::hash` for equal, changed and differently long tails.

use crate::lz4_memo::TailId;
use std::cell::RefCell;

/// Shortest tail worth the memo (a shorter buffer is hashed directly).
const MIN_TAIL: usize = 512;

/// Tail lengths whose [`Shift`] is kept (a Shift costs 33 CRCs of its
/// length to make; data nodes come in a few payload lengths).
const SHIFTS: usize = 4;

/// `L` for tails of `len` bytes: `L(v)` as the XOR of one table entry per byte of `v`.
struct Shift {
    len: usize,
    tables: Box<[[u32; 256]; 4]>,
}

impl Shift {
    fn new(len: usize) -> Shift {
        let zeros = vec![0u8; len];
        let z = crc32fast::hash(&zeros);
        let image = |v: u32| {
            let mut h = crc32fast::Hasher::new_with_initial(v);
            h.update(&zeros);
            h.finalize() ^ z
        };
        let bits: Vec<u32> = (0..32).map(|i| image(1 << i)).collect();
        let mut tables = Box::new([[0u32; 256]; 4]);
        for (k, t) in tables.iter_mut().enumerate() {
            for b in 1..256usize {
                // Linear: the entry of `b` is the entry without its lowest
                // set bit XOR that bit's image.
                let low = b.trailing_zeros() as usize;
                t[b] = t[b & (b - 1)] ^ bits[8 * k + low];
            }
        }
        Shift { len, tables }
    }

    #[inline]
    fn apply(&self, v: u32) -> u32 {
        let t = &self.tables;
        t[0][(v & 0xFF) as usize]
            ^ t[1][((v >> 8) & 0xFF) as usize]
            ^ t[2][((v >> 16) & 0xFF) as usize]
            ^ t[3][(v >> 24) as usize]
    }
}

/// A few words of a tail (at least [`MIN_TAIL`] bytes) mixed: equal tails have equal keys.
#[inline]
fn key_of(t: &[u8]) -> u64 {
    let w = |i: usize| u64::from_le_bytes(t[i..i + 8].try_into().expect("8 bytes"));
    let n = t.len();
    let k = w(0) ^ w(n / 2).rotate_left(21) ^ w(n - 8).rotate_left(42) ^ n as u64;
    k.wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

/// The last tail seen (its key), and once it was seen twice in a row, its
/// bytes and CRC; the [`Shift`]s of the last few tail lengths kept.
pub(crate) struct TailCrc {
    key: u64,
    /// Whether `tail` holds the bytes of the tail with key `key`.
    kept: bool,
    tail: Vec<u8>,
    /// The LZ4 tail memo's id of `tail`'s bytes, if one was given with them.
    kept_id: Option<TailId>,
    tail_crc: u32,
    /// `shifts[shift]` is for `tail.len()` while `kept`.
    shifts: Vec<Shift>,
    shift: usize,
}

impl TailCrc {
    pub(crate) const fn new() -> TailCrc {
        TailCrc { key: 0, kept: false, tail: Vec::new(), kept_id: None, tail_crc: 0, shifts: Vec::new(), shift: 0 }
    }

    /// Exactly `crc32fast::hash(data)`; `data[head..]` is the part that may
    /// repeat the last call's.
    ///
    /// `id`, if given, is the LZ4 tail memo's id of `data[head..]`'s bytes
    /// (`lz4_memo::TailId`): a kept tail known by the same id is equal to it
    /// without a comparison.
    pub(crate) fn hash(&mut self, data: &[u8], head: usize, id: Option<TailId>) -> u32 {
        if data.len() < head + MIN_TAIL {
            return crc32fast::hash(data);
        }
        let (h, t) = data.split_at(head);
        if id.is_some() && id == self.kept_id && self.kept && self.tail.len() == t.len() {
            debug_assert!(self.tail[..] == *t, "an id names one tail's bytes");
            return self.shifts[self.shift].apply(crc32fast::hash(h)) ^ self.tail_crc;
        }
        let key = key_of(t);
        if key == self.key && self.kept && self.tail[..] == *t {
            debug_assert_eq!(self.shifts[self.shift].len, t.len());
            if id.is_some() {
                // Compared equal: the id names the kept bytes too.
                self.kept_id = id;
            }
            return self.shifts[self.shift].apply(crc32fast::hash(h)) ^ self.tail_crc;
        }
        if key != self.key {
            // Seen once: remember the key only (no copy for tails that do
            // not repeat, such as the filler's blocks).
            self.key = key;
            self.kept = false;
        } else if !self.kept {
            self.keep(t, id);
        } else {
            // Same key, other bytes: wait for a second sight of these.
            self.kept = false;
        }
        crc32fast::hash(data)
    }

    fn keep(&mut self, t: &[u8], id: Option<TailId>) {
        self.kept_id = id;
        self.tail.clear();
        self.tail.extend_from_slice(t);
        self.tail_crc = crc32fast::hash(t);
        self.shift = match self.shifts.iter().position(|s| s.len == t.len()) {
            Some(i) => i,
            None if self.shifts.len() < SHIFTS => {
                self.shifts.push(Shift::new(t.len()));
                self.shifts.len() - 1
            }
            None => {
                // Replace the one after the last used, round robin.
                let i = (self.shift + 1) % SHIFTS;
                self.shifts[i] = Shift::new(t.len());
                i
            }
        };
        self.kept = true;
    }
}

thread_local! {
    /// The last data node's payload tail (scratch state only: every CRC is
    /// exactly `crc32fast::hash`'s).
    static DATA_TAIL: RefCell<TailCrc> = const { RefCell::new(TailCrc::new()) };
}

/// `crc32fast::hash(data)` through this thread's [`TailCrc`]: `data[head..]`
/// may repeat the last call's.
/// `id` as [`TailCrc::hash`]'s.
pub(crate) fn hash_with_tail(data: &[u8], head: usize, id: Option<TailId>) -> u32 {
    DATA_TAIL.with(|m| m.borrow_mut().hash(data, head, id))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data_crc_test::noise;

    #[test]
    fn the_shift_is_crc32_over_zeros() {
        for len in [1usize, 7, 64, 513, 4088] {
            let s = Shift::new(len);
            let zeros = vec![0u8; len];
            for v in [0u32, 1, 0x8000_0000, 0xDEAD_BEEF, u32::MAX] {
                let mut h = crc32fast::Hasher::new_with_initial(v);
                h.update(&zeros);
                assert_eq!(s.apply(v), h.finalize() ^ crc32fast::hash(&zeros), "len {len} v {v:#x}");
            }
        }
    }

    #[test]
    fn stamped_records_hash_as_crc32fast() {
        let base = noise(9, 4096 + 48);
        let mut memo = TailCrc::new();
        let mut hits = 0;
        for i in 0..50u64 {
            let mut b = base.clone();
            b[..16].copy_from_slice(&[i.to_le_bytes(), (i * 77).to_le_bytes()].concat());
            let was_kept = memo.kept;
            assert_eq!(memo.hash(&b, 48, None), crc32fast::hash(&b), "record {i}");
            hits += usize::from(was_kept && memo.kept);
        }
        assert!(hits >= 47, "the tail is kept after two sights: {hits}");
        // A changed tail byte, in the middle or at either end, with the same key
        // words or not; a shorter and a longer tail; a head too short to memo.
        for at in [48usize, 60, 2000, 2096, 4136, 4143] {
            let mut b = base.clone();
            b[at] ^= 0x10;
            assert_eq!(memo.hash(&b, 48, None), crc32fast::hash(&b), "byte {at} changed");
            assert_eq!(memo.hash(&base, 48, None), crc32fast::hash(&base));
            assert_eq!(memo.hash(&base, 48, None), crc32fast::hash(&base));
        }
        for len in [48 + 512, 48 + 1000, base.len(), 48 + 600, 48 + 700, 48 + 800, 48 + 1000] {
            for _ in 0..3 {
                assert_eq!(memo.hash(&base[..len], 48, None), crc32fast::hash(&base[..len]), "len {len}");
            }
        }
        assert_eq!(memo.shifts.len(), SHIFTS, "one Shift per length, the oldest replaced");
        assert_eq!(memo.hash(&base[..100], 48, None), crc32fast::hash(&base[..100]));
        // Tails named by an id: hashed as crc32fast, kept under the id, and
        // a tail with another id (or none) compared as before.
        let mut other = base.clone();
        other[3000] ^= 4;
        let (five, six) = (TailId::new(5), TailId::new(6));
        for (b, id) in [(&base, five), (&base, five), (&base, five), (&other, six), (&other, six)] {
            let mut b = b.clone();
            b[..16].fill(id.map_or(0, |i| i.get()) as u8);
            assert_eq!(memo.hash(&b, 48, id), crc32fast::hash(&b));
        }
        assert_eq!(memo.kept_id, six);
        assert_eq!(memo.hash(&other, 48, six), crc32fast::hash(&other));
        assert_eq!(memo.hash(&base, 48, None), crc32fast::hash(&base));
        // Alternating tails of equal keys but different bytes never mix up.
        let mut other = base.clone();
        other[1000] ^= 1;
        for _ in 0..6 {
            assert_eq!(memo.hash(&base, 48, None), crc32fast::hash(&base));
            assert_eq!(memo.hash(&other, 48, None), crc32fast::hash(&other));
        }
    }
}
