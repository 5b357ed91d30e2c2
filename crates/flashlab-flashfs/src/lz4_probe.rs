//! Whether `lz4_flex::block::compress` would find no match in a block, computed
//! without encoding it.
//!
//! `compress` keeps a compressed payload only when it is shorter than the data
//! (the model's `ubifs_compress` rule). When the LZ4 encoder finds no match, its
//! output is one literal run (`handle_last_literals` from byte 0): a token,
//! the length's extra bytes and every input byte, i.e. longer than the input, so
//! the block is stored plain. Random data, as IOZone writes, almost never matches,
//! and then the encoder's work (an 8 KiB hash table allocated and zeroed on the
//! heap, a zeroed output buffer 10 % larger than the block, the literal copy) is
//! thrown away.
//!
//! [`finds_no_match`] replays exactly the match search of lz4_flex 0.11's
//! `compress_internal` for a block without dictionary (`HashTable4KU16`, the table
//! it uses for inputs shorter than 65 535 bytes): the same hash of each 4-byte
//! word, the same 4 096-entry table of 16-bit positions starting at zero, the same
//! skip acceleration (`INCREASE_STEPSIZE_BITSHIFT`) and end (`MFLIMIT`). Up to its
//! first match the encoder writes nothing and its search depends only on this
//! state, so "no match here" is "no match there". On the first match it answers
//! `false` and the caller runs the real encoder; the test below checks both
//! directions against lz4_flex's output.

/// `MFLIMIT`: the last match starts at least this many bytes before the end.
pub(crate) const MFLIMIT: usize = 12;
/// `LZ4_MIN_LENGTH`: shorter inputs are one literal run without any search.
const MIN_LENGTH: usize = MFLIMIT + 1;
/// `INCREASE_STEPSIZE_BITSHIFT`: the step grows by one every 32 misses.
pub(crate) const SKIP_SHIFT: usize = 5;
/// `HashTable4KU16` entries; its index is the 16-bit hash shifted right by 4.
pub(crate) const TABLE: usize = 4096;

/// The 4-byte word at `at` (lz4_flex's `get_batch`, native endian).
#[inline(always)]
pub(crate) fn word(data: &[u8], at: usize) -> u32 {
    u32::from_ne_bytes(data[at..at + 4].try_into().expect("4 bytes"))
}

/// `HashTable4KU16`'s slot of a word: `hash` (Knuth's multiplier, top 16 bits),
/// then `>> HASHTABLE_BIT_SHIFT_4K`.
#[inline(always)]
pub(crate) fn slot(word: u32) -> usize {
    (word.wrapping_mul(2_654_435_761) >> 16) as usize >> 4
}

/// Whether [`finds_no_match`] replays the encoder for a block of `n` bytes
/// (shorter blocks skip the search, longer ones use another table).
pub(crate) fn replayed(n: usize) -> bool {
    (MIN_LENGTH..u16::MAX as usize).contains(&n)
}

/// True when lz4_flex's block encoder would find no match in `data`, so that
/// its output would be longer than `data`; false when it would find one, or
/// when `data` is outside the replayed case (shorter than `MIN_LENGTH`, or too
/// long for the 16-bit table): then ask the encoder.
pub(crate) fn finds_no_match(data: &[u8]) -> bool {
    let n = data.len();
    if !replayed(n) {
        return false;
    }
    // Position 0 is put into the table (its value, 0, is the table's initial one).
    let mut table = [0u16; TABLE];
    let end = n - MFLIMIT;
    let mut misses = 1usize << SKIP_SHIFT;
    let mut next = 1usize;
    loop {
        let step = misses >> SKIP_SHIFT;
        misses += 1;
        let cur = next;
        next += step;
        if cur > end {
            return true;
        }
        let w = word(data, cur);
        let h = slot(w);
        let candidate = table[h] as usize;
        table[h] = cur as u16;
        // Every position is below 65 535, so the candidate is always within
        // `MAX_DISTANCE` and inside the input: the encoder compares the words.
        if word(data, candidate) == w {
            return false;
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use proptest::prelude::*;

    /// lz4_flex's output for `data` if it is one literal run of all of `data`.
    fn literal_run(n: usize) -> usize {
        1 + if n >= 15 { (n - 15) / 255 + 1 } else { 0 } + n
    }

    pub(crate) fn agrees(data: &[u8]) -> Result<(), TestCaseError> {
        let out = lz4_flex::block::compress(data);
        let all_literals = out.len() == literal_run(data.len()) && out.ends_with(data);
        if finds_no_match(data) {
            prop_assert!(all_literals, "probe says no match, encoder emitted {} bytes for {}", out.len(), data.len());
            prop_assert!(out.len() >= data.len());
        } else if (MIN_LENGTH..u16::MAX as usize).contains(&data.len()) {
            prop_assert!(!all_literals, "probe found a match the encoder did not use");
        }
        Ok(())
    }

    /// Bytes from a small alphabet repeat often (matches), a large one rarely.
    /// `len` bytes of xorshift64 noise from the tests' fixed seed, each byte the state
    /// shifted right by `shift` (the tests' one noise generator).
    pub(crate) fn noise(len: usize, shift: u32) -> Vec<u8> {
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        (0..len)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                (x >> shift) as u8
            })
            .collect()
    }

    pub(crate) fn block() -> impl Strategy<Value = Vec<u8>> {
        (0usize..5000, any::<u64>(), 1u32..=256, 0usize..4).prop_map(|(len, seed, alphabet, copies)| {
            let mut x = seed | 1;
            let mut v: Vec<u8> = (0..len)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    ((x >> 32) as u32 % alphabet) as u8
                })
                .collect();
            // A few copied runs: matches the skip acceleration may or may not reach.
            for c in 0..copies {
                if len > 64 {
                    let from = (seed as usize >> (8 * c)) % (len - 32);
                    let to = (seed as usize >> (8 * c + 4)) % (len - 32);
                    let run: Vec<u8> = v[from..from + 8].to_vec();
                    v[to..to + 8].copy_from_slice(&run);
                }
            }
            v
        })
    }

    proptest! {
        #[test]
        fn the_probe_answers_as_the_encoder(data in block()) {
            agrees(&data)?;
        }
    }

    #[test]
    fn fixed_cases_agree() {
        let random = noise(4096, 0);
        assert!(finds_no_match(&random), "random 4 KiB blocks have no match");
        let mut with_copy = random.clone();
        with_copy.copy_within(10..30, 40);
        for d in [&random[..], &with_copy, &[0u8; 4096], &[7u8; 13], &[7u8; 12], &random[..13], &random[..14]] {
            agrees(d).unwrap();
        }
        assert!(!finds_no_match(&[0u8; 4096]));
    }
}
