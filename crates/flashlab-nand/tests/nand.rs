use flashlab_nand::*;
use proptest::prelude::*;

fn small() -> Geometry {
    Geometry {
        channels: 1,
        chips_per_channel: 1,
        dies_per_chip: 1,
        planes_per_die: 2,
        blocks_per_plane: 4,
        pages_per_block: 8,
        page_bytes: 2048,
    }
}

#[test]
fn program_invalidate_erase_cycle() {
    let mut n = Nand::new(small());
    assert_eq!(n.block_state(3), BlockState::Free);
    let p0 = n.program_next(3, Cause::Host);
    let p1 = n.program_next(3, Cause::Gc);
    assert_eq!((p0, p1), (24, 25));
    assert_eq!(n.block_state(3), BlockState::Open);
    assert_eq!(n.page_state(p0), PageState::Valid);
    assert_eq!(n.page_state(26), PageState::Free);
    n.invalidate(p0);
    assert_eq!(n.page_state(p0), PageState::Invalid);
    assert_eq!(n.valid_count(3), 1);
    n.invalidate(p1);
    n.erase(3, Cause::Gc);
    assert_eq!(n.erase_count(3), 1);
    assert_eq!(n.page_state(p0), PageState::Free);
    assert_eq!(n.counters().get(OpKind::Program, Cause::Host), 1);
    assert_eq!(n.counters().get(OpKind::Program, Cause::Gc), 1);
    assert_eq!(n.counters().total(OpKind::Erase), 1);
    n.check_all().unwrap();
}

#[test]
#[should_panic(expected = "out-of-order program")]
fn out_of_order_program_panics() {
    let mut n = Nand::new(small());
    n.program(2, Cause::Host);
}

#[test]
#[should_panic(expected = "valid pages")]
fn erase_with_valid_pages_panics() {
    let mut n = Nand::new(small());
    n.program_next(0, Cause::Host);
    n.erase(0, Cause::Gc);
}

#[test]
#[should_panic(expected = "not valid")]
fn double_invalidate_panics() {
    let mut n = Nand::new(small());
    let p = n.program_next(0, Cause::Host);
    n.invalidate(p);
    n.invalidate(p);
}

#[test]
#[should_panic(expected = "full block")]
fn program_of_full_block_panics() {
    let mut n = Nand::new(small());
    for _ in 0..9 {
        n.program_next(1, Cause::Host);
    }
}

proptest! {
    /// Random legal operation sequences keep every block consistent with a simple oracle.
    #[test]
    fn random_ops_keep_invariants(ops in proptest::collection::vec((0u32..8, 0u8..3), 1..400)) {
        let geo = small();
        let mut n = Nand::new(geo);
        let mut oracle: Vec<Vec<PageState>> = vec![vec![PageState::Free; 8]; 8];
        for (b, op) in ops {
            let blk = &mut oracle[b as usize];
            match op {
                0 => if let Some(off) = blk.iter().position(|s| *s == PageState::Free) {
                    n.program(b * 8 + off as u32, Cause::Host);
                    blk[off] = PageState::Valid;
                },
                1 => if let Some(off) = blk.iter().position(|s| *s == PageState::Valid) {
                    n.invalidate(b * 8 + off as u32);
                    blk[off] = PageState::Invalid;
                },
                _ => if blk.iter().all(|s| *s != PageState::Valid) {
                    n.erase(b, Cause::Gc);
                    blk.iter_mut().for_each(|s| *s = PageState::Free);
                },
            }
            n.check_block(b).unwrap();
            for (off, s) in oracle[b as usize].iter().enumerate() {
                prop_assert_eq!(n.page_state(b * 8 + off as u32), *s);
            }
        }
    }
}

#[test]
fn next_valid_scans_across_words() {
    let geo = Geometry { pages_per_block: 100, ..small() };
    let mut n = Nand::new(geo);
    let pages: Vec<u32> = (0..100).map(|_| n.program_next(1, Cause::Host)).collect();
    for (i, &p) in pages.iter().enumerate() {
        if i != 3 && i != 70 && i != 99 {
            n.invalidate(p);
        }
    }
    assert_eq!(n.next_valid(1, 0), Some(103));
    assert_eq!(n.next_valid(1, 4), Some(170));
    assert_eq!(n.next_valid(1, 71), Some(199));
    assert_eq!(n.next_valid(0, 0), None);
    n.invalidate(199);
    assert_eq!(n.next_valid(1, 71), None);
}

proptest! {
    /// `program_span` (GC's migration runs) leaves the state and counters of as many
    /// `program_next` calls, from any write pointer, across 64-page bitmap words.
    #[test]
    fn program_span_equals_repeated_program_next(ppb in 1u32..200, before in 0u32..200, n in 0u32..200, block in 0u32..4) {
        let before = before % (ppb + 1);
        let n = n % (ppb - before + 1);
        let geo = Geometry { pages_per_block: ppb, ..small() };
        let (mut a, mut b) = (Nand::new(geo), Nand::new(geo));
        for _ in 0..before {
            a.program_next(block, Cause::Host);
            b.program_next(block, Cause::Host);
        }
        a.program_span(block, n, Cause::Gc);
        for _ in 0..n {
            b.program_next(block, Cause::Gc);
        }
        prop_assert_eq!(a.write_pointer(block), b.write_pointer(block));
        prop_assert_eq!(a.valid_count(block), b.valid_count(block));
        prop_assert_eq!(a.counters(), b.counters());
        for p in 0..geo.pages() {
            prop_assert_eq!(a.page_state(p), b.page_state(p));
        }
        a.check_all().unwrap();
    }
}

#[test]
#[should_panic(expected = "program of 3 pages")]
fn program_span_beyond_the_block_panics() {
    let mut n = Nand::new(small());
    n.program_next(1, Cause::Host);
    n.program_next(1, Cause::Host);
    n.program_next(1, Cause::Host);
    n.program_next(1, Cause::Host);
    n.program_next(1, Cause::Host);
    n.program_next(1, Cause::Host);
    n.program_span(1, 3, Cause::Gc);
}

proptest! {
    /// `program_offsets` (merge copies in bulk) leaves the state and counters of
    /// `skip_to` + `program_next` per offset, from any write pointer, across bitmap words.
    #[test]
    fn program_offsets_equals_skip_and_program_next(ppb in 1u32..200, before in 0u32..200,
                                                    picks in proptest::collection::vec(any::<bool>(), 0..200), block in 0u32..4) {
        let before = before % (ppb + 1);
        let offs: Vec<u32> = (before..ppb).zip(&picks).filter(|(_, &p)| p).map(|(o, _)| o).collect();
        let geo = Geometry { pages_per_block: ppb, ..small() };
        let (mut a, mut b) = (Nand::new(geo), Nand::new(geo));
        for _ in 0..before {
            a.program_next(block, Cause::Host);
            b.program_next(block, Cause::Host);
        }
        a.program_offsets(block, &offs, Cause::Merge);
        for &o in &offs {
            b.skip_to(block, o);
            b.program_next(block, Cause::Merge);
        }
        prop_assert_eq!(a.write_pointer(block), b.write_pointer(block));
        prop_assert_eq!(a.valid_count(block), b.valid_count(block));
        prop_assert_eq!(a.counters(), b.counters());
        for p in 0..geo.pages() {
            prop_assert_eq!(a.page_state(p), b.page_state(p));
        }
        a.check_all().unwrap();
    }
}

proptest! {
    /// `valid_words` reads a range's bits as `page_state` says, across bitmap words;
    /// `program_words` of those words into another block equals `program_offsets` of
    /// the same offsets (state, counters and the count returned).
    #[test]
    fn program_words_equals_program_offsets(ppb in 1u32..200, valid in proptest::collection::vec(any::<bool>(), 0..200),
                                            lo in 0u32..200, hi in 0u32..200, before in 0u32..200, src in 0u32..4, dst in 0u32..4) {
        prop_assume!(src != dst);
        let geo = Geometry { pages_per_block: ppb, ..small() };
        let (lo, hi) = { let (x, y) = (lo % (ppb + 1), hi % (ppb + 1)); (x.min(y), x.max(y)) };
        let before = before % (lo + 1);
        let (mut a, mut b) = (Nand::new(geo), Nand::new(geo));
        for n in [&mut a, &mut b] {
            n.program_span(src, ppb, Cause::Host);
            for o in 0..ppb {
                if !valid.get(o as usize).copied().unwrap_or(true) {
                    n.invalidate(src * ppb + o);
                }
            }
            n.program_span(dst, before, Cause::Host);
        }
        let mut words = Vec::new();
        a.valid_words(src, lo, hi, &mut words);
        prop_assert_eq!(words.len() as u32, (hi - lo).div_ceil(64));
        let offs: Vec<u32> = (lo..hi).filter(|&o| b.page_state(src * ppb + o) == PageState::Valid).collect();
        for o in lo..hi {
            let bit = words[((o - lo) / 64) as usize] >> ((o - lo) % 64) & 1 == 1;
            prop_assert_eq!(bit, offs.contains(&o));
        }
        let n = a.program_words(dst, lo, &words, Cause::Merge);
        b.program_offsets(dst, &offs, Cause::Merge);
        prop_assert_eq!(n as usize, offs.len());
        prop_assert_eq!(a.write_pointer(dst), b.write_pointer(dst));
        prop_assert_eq!(a.valid_count(dst), b.valid_count(dst));
        prop_assert_eq!(a.counters(), b.counters());
        for p in 0..geo.pages() {
            prop_assert_eq!(a.page_state(p), b.page_state(p));
        }
        a.check_all().unwrap();
    }
}

#[test]
#[should_panic(expected = "program of offsets 1..=3")]
fn program_words_behind_the_write_pointer_panics() {
    let mut n = Nand::new(small());
    n.program_span(1, 2, Cause::Host);
    n.program_words(1, 1, &[0b101], Cause::Merge);
}

#[test]
#[should_panic(expected = "not ascending")]
fn program_offsets_out_of_order_panics() {
    let mut n = Nand::new(small());
    n.program_offsets(1, &[2, 5, 4], Cause::Merge);
}

#[test]
#[should_panic(expected = "program of offsets 1..=3")]
fn program_offsets_behind_the_write_pointer_panics() {
    let mut n = Nand::new(small());
    n.program_span(1, 2, Cause::Host);
    n.program_offsets(1, &[1, 3], Cause::Merge);
}

proptest! {
    /// `invalidate_range` leaves the state of `invalidate` on each valid page of the range
    /// and counts them, across bitmap words.
    #[test]
    fn invalidate_range_equals_invalidating_each_valid_page(ppb in 1u32..200, valid in proptest::collection::vec(any::<bool>(), 0..200),
                                                           lo in 0u32..200, hi in 0u32..200, block in 0u32..4) {
        let geo = Geometry { pages_per_block: ppb, ..small() };
        let (mut a, mut b) = (Nand::new(geo), Nand::new(geo));
        let wp = (valid.len() as u32).min(ppb);
        for n in [&mut a, &mut b] {
            n.program_span(block, wp, Cause::Host);
            for (o, _) in valid.iter().enumerate().filter(|(_, &v)| !v).take(wp as usize) {
                if (o as u32) < wp {
                    n.invalidate(block * ppb + o as u32);
                }
            }
        }
        let (lo, hi) = { let (x, y) = (lo % (ppb + 1), hi % (ppb + 1)); (x.min(y), x.max(y)) };
        let got = a.invalidate_range(block, lo, hi);
        let mut want = 0;
        for o in lo..hi {
            if b.page_state(block * ppb + o) == PageState::Valid {
                b.invalidate(block * ppb + o);
                want += 1;
            }
        }
        prop_assert_eq!(got, want);
        prop_assert_eq!(a.valid_count(block), b.valid_count(block));
        for p in 0..geo.pages() {
            prop_assert_eq!(a.page_state(p), b.page_state(p));
        }
        a.check_all().unwrap();
    }
}

proptest! {
    /// A `ValidCursor` walk (and `for_each_valid_at`) visits exactly the pages a chain of `next_valid` calls does,
    /// whatever the block size (bitmap words shared between blocks when it is below 64),
    /// write pointer, invalidated pages and starting offset; neighbouring blocks' bits
    /// in the same words are never reported.
    #[test]
    fn a_valid_cursor_walk_equals_next_valid(
        ppb in 1u32..200, wps in proptest::collection::vec(0u32..200, 8), holes in proptest::collection::vec(any::<u64>(), 8),
        block in 0u32..8, from in 0u32..200,
    ) {
        let geo = Geometry { pages_per_block: ppb, ..small() };
        let mut n = Nand::new(geo);
        for b in 0..8 {
            let wp = wps[b as usize] % (ppb + 1);
            n.program_span(b, wp, Cause::Host);
            for o in 0..wp {
                if holes[b as usize] >> (o % 64) & 1 == 1 {
                    n.invalidate(n.first_page(b) + o);
                }
            }
        }
        let from = from % (ppb + 1);
        let mut want = Vec::new();
        let mut f = from;
        while let Some(p) = n.next_valid(block, f) {
            want.push(p);
            f = p - n.first_page(block) + 1;
        }
        let mut c = n.valid_cursor(block, from);
        let mut got = Vec::new();
        while let Some(p) = n.next_valid_at(&mut c) {
            got.push(p);
        }
        prop_assert_eq!(&got, &want);
        let mut each = Vec::new();
        n.for_each_valid_at(n.valid_cursor(block, from), |p| each.push(p));
        prop_assert_eq!(each, want);
    }
}

proptest! {
    /// `take_words` equals `valid_words` then `invalidate_range` of the same range (the
    /// words ORed into ones that carry bits of pages from elsewhere, state, counts, the
    /// count returned), across bitmap words; `is_valid` agrees with `page_state`.
    #[test]
    fn take_words_equals_valid_words_and_invalidate_range(ppb in 1u32..200, valid in proptest::collection::vec(any::<bool>(), 0..200),
                                                          lo in 0u32..200, hi in 0u32..200, extra in any::<u64>(), block in 0u32..4) {
        let geo = Geometry { pages_per_block: ppb, ..small() };
        let (lo, hi) = { let (x, y) = (lo % (ppb + 1), hi % (ppb + 1)); (x.min(y), x.max(y)) };
        let (mut a, mut b) = (Nand::new(geo), Nand::new(geo));
        let wp = (valid.len() as u32).min(ppb);
        for n in [&mut a, &mut b] {
            n.program_span(block, wp, Cause::Host);
            for o in 0..wp {
                if !valid[o as usize] {
                    n.invalidate(block * ppb + o);
                }
            }
        }
        for p in 0..geo.pages() {
            prop_assert_eq!(a.is_valid(p), a.page_state(p) == PageState::Valid);
        }
        let mut want = Vec::new();
        b.valid_words(block, lo, hi, &mut want);
        // Bits of pages moved from elsewhere: only where the range holds no valid page.
        let mut words: Vec<u64> = want.iter().enumerate().map(|(i, &v)| {
            let in_range = if i + 1 < want.len() || (hi - lo) % 64 == 0 { u64::MAX } else { (1u64 << ((hi - lo) % 64)) - 1 };
            extra.rotate_left(i as u32) & !v & in_range
        }).collect();
        let from_elsewhere = words.clone();
        let got = a.take_words(block, lo, hi, &mut words);
        let count = b.invalidate_range(block, lo, hi);
        prop_assert_eq!(got, count);
        for (i, w) in words.iter().enumerate() {
            prop_assert_eq!(*w, want[i] | from_elsewhere[i]);
        }
        prop_assert_eq!(a.valid_count(block), b.valid_count(block));
        for p in 0..geo.pages() {
            prop_assert_eq!(a.page_state(p), b.page_state(p));
        }
        a.check_all().unwrap();
    }
}

#[test]
#[should_panic(expected = "valid and moved from elsewhere")]
fn take_words_of_a_page_also_moved_from_elsewhere_panics() {
    let mut n = Nand::new(small());
    n.program_span(1, 3, Cause::Host);
    n.take_words(1, 0, 3, &mut [0b010]);
}

proptest! {
    /// The one-word forms (`block_bits`, `take_bits`, `program_bits`) leave the state,
    /// counters and results of the word-list forms with `lo = 0` and one word, on every
    /// geometry where a block fits in one bitmap word (blocks not word-aligned too).
    #[test]
    fn bits_forms_equal_word_forms(shift in 0u32..7, valid in proptest::collection::vec(any::<bool>(), 0..64),
                                   lo in 0u32..65, hi in 0u32..65, extra in any::<u64>(), before in 0u32..65,
                                   src in 0u32..4, dst in 0u32..4) {
        prop_assume!(src != dst);
        let ppb = 1u32 << shift;
        let geo = Geometry { pages_per_block: ppb, ..small() };
        let (lo, hi) = { let (x, y) = (lo % (ppb + 1), hi % (ppb + 1)); (x.min(y), x.max(y)) };
        let (mut a, mut b) = (Nand::new(geo), Nand::new(geo));
        prop_assert!(a.one_word_blocks());
        let wp = (valid.len() as u32).min(ppb);
        for n in [&mut a, &mut b] {
            n.program_span(src, wp, Cause::Host);
            for o in 0..wp {
                if !valid[o as usize] {
                    n.invalidate(src * ppb + o);
                }
            }
        }
        let mut all = Vec::new();
        b.valid_words(src, 0, ppb, &mut all);
        prop_assert_eq!(a.block_bits(src), all[0]);
        let mask = if hi == lo { 0 } else { (u64::MAX >> (64 - (hi - lo))) << lo };
        let moved = extra & mask & !all[0];
        let (mut a2, mut b2) = (Nand::new(geo), Nand::new(geo));
        for n in [&mut a2, &mut b2] {
            n.program_span(src, wp, Cause::Host);
            for o in 0..wp {
                if !valid[o as usize] {
                    n.invalidate(src * ppb + o);
                }
            }
            n.program_span(dst, before.min(lo), Cause::Host);
        }
        let (got, taken) = a2.take_bits_counted(src, mask, moved);
        prop_assert_eq!(taken, got.count_ones());
        let mut words = vec![0u64; (hi - lo).div_ceil(64) as usize];
        if !words.is_empty() {
            words[0] = moved >> lo;
        }
        let count = b2.take_words(src, lo, hi, &mut words);
        prop_assert_eq!(got.count_ones(), count);
        prop_assert_eq!((got | moved) >> lo, words.first().copied().unwrap_or(0));
        let n = a2.program_bits_counted(dst, got | moved, taken + moved.count_ones(), Cause::Merge);
        let m = b2.program_words(dst, lo, &words, Cause::Merge);
        prop_assert_eq!(n, m);
        prop_assert_eq!(a2.counters(), b2.counters());
        for blk in [src, dst] {
            prop_assert_eq!((a2.write_pointer(blk), a2.valid_count(blk)), (b2.write_pointer(blk), b2.valid_count(blk)));
        }
        for p in 0..geo.pages() {
            prop_assert_eq!(a2.page_state(p), b2.page_state(p));
        }
    }
}

#[test]
#[cfg(debug_assertions)]
#[should_panic(expected = "span bitmap words")]
fn bits_forms_on_wide_blocks_panic() {
    let n = Nand::new(Geometry { pages_per_block: 96, ..small() });
    n.block_bits(0);
}
