//! The block-mapped schemes (block, bast, bast-padding, fast) through the `Mapping`
//! interface: exact merge costs on hand-built sequences (docs/mapping.md), seed 004's
//! padding pattern, and a model-based test per scheme.

use flashlab_ftl::*;
use flashlab_nand::{Cause, Geometry, OpCounters, OpKind};
use proptest::prelude::*;
use std::collections::HashMap;

/// One channel, chip and die with `planes` planes of 16 blocks of `ppb` pages.
fn geo(planes: u32, ppb: u32) -> Geometry {
    Geometry {
        channels: 1,
        chips_per_channel: 1,
        dies_per_chip: 1,
        planes_per_die: planes,
        blocks_per_plane: 16,
        pages_per_block: ppb,
        page_bytes: 2048,
    }
}

/// A scheme over `geo(planes, ppb)` with 8 logical units of `sb` blocks each.
fn ftl(scheme: Scheme, planes: u32, ppb: u32, sb: u32, log_blocks: u32) -> Ftl {
    ftl_with(scheme, planes, ppb, sb, log_blocks, LogVictim::Lru)
}

fn ftl_with(scheme: Scheme, planes: u32, ppb: u32, sb: u32, log_blocks: u32, log_victim: LogVictim) -> Ftl {
    ftl_seq(scheme, planes, ppb, sb, log_blocks, log_victim, 1)
}

fn ftl_seq(scheme: Scheme, planes: u32, ppb: u32, sb: u32, log_blocks: u32, log_victim: LogVictim, seq: u32) -> Ftl {
    Ftl::new(geo(planes, ppb), settings(scheme, ppb, sb, log_blocks, log_victim, seq)).unwrap()
}

fn settings(scheme: Scheme, ppb: u32, sb: u32, log_blocks: u32, log_victim: LogVictim, seq: u32) -> FtlSettings {
    FtlSettings {
        logical_pages: 8 * (sb * ppb) as u64,
        free_blocks_min: 2,
        victim: VictimPolicy::Greedy,
        external_victim: None,
        stripe: StripeOrder::default(),
        separate_gc_frontier: true,
        host_streams: 1,
        gc_streams: 1,
        trigger: Trigger::Threshold,
        background_max_valid: 1.0,
        placement: None,
        wear: WearLevelling::default(),
        strict: true,
        track_content: true,
        seed: 3,
        mapping: MappingSettings {
            scheme,
            log_blocks,
            log_victim,
            fast_seq_log_blocks: seq,
            superblock_blocks: sb,
            ..MappingSettings::default()
        },
    }
}

fn write_all(f: &mut Ftl, lpns: impl IntoIterator<Item = u64>) {
    lpns.into_iter().for_each(|l| f.write(l).unwrap());
}

/// (reads, programs, erases) since `then`, and programs of `cause`.
fn delta(f: &Ftl, then: &OpCounters) -> (u64, u64, u64) {
    let d = f.nand().counters().since(then);
    (d.total(OpKind::Read), d.total(OpKind::Program), d.total(OpKind::Erase))
}

fn merges(f: &Ftl) -> (u64, u64, u64) {
    let s = f.stats();
    (s.merges_switch, s.merges_partial, s.merges_full)
}

/// Check 1: sequential whole-unit overwrites under bast and fast only switch-merge,
/// WAF exactly 1.0, one unit erase per overwritten unit (superblocks too).
#[test]
fn sequential_overwrites_only_switch() {
    for scheme in [Scheme::Bast, Scheme::BastPadding, Scheme::Fast] {
        for (planes, sb) in [(1, 1), (4, 4), (4, 2)] {
            let mut f = ftl(scheme, planes, 4, sb, 3);
            let n = f.settings().logical_pages;
            for _ in 0..3 {
                write_all(&mut f, 0..n);
            }
            let c = f.nand().counters();
            assert_eq!(c.total(OpKind::Program), 3 * n, "{scheme:?} sb {sb}: WAF 1.0");
            assert_eq!(c.total(OpKind::Read), 0);
            assert_eq!(merges(&f), (16, 0, 0), "{scheme:?} sb {sb}: two overwrites of 8 units");
            assert_eq!(c.total(OpKind::Erase), 16 * sb as u64, "{scheme:?}: one unit erase per switch");
            f.check_invariants().unwrap();
        }
    }
}

/// Check 2, BAST: switch, partial and full merges cost exactly their formulas.
#[test]
fn bast_merge_costs() {
    // Partial: the log of unit 0 holds offsets 0, 1 in order; reclaiming it (pool of
    // one) copies offsets 2, 3 from the data unit and erases it: 2 reads, 2 programs, 1 erase.
    let mut f = ftl(Scheme::Bast, 1, 4, 1, 1);
    write_all(&mut f, 0..8);
    write_all(&mut f, [0, 1]);
    let then = *f.nand().counters();
    f.write(4).unwrap(); // unit 1 needs the only log block
    assert_eq!(delta(&f, &then), (2, 2 + 1, 1));
    assert_eq!(merges(&f), (0, 1, 0));
    assert_eq!(f.stats().merge_copied_pages, 2);

    // Full: the log holds offsets 1, 0 (out of order): a free unit receives the newest
    // copy of all 4 pages; data and log are erased: 4 reads, 4 programs, 2 erases.
    let mut f = ftl(Scheme::Bast, 1, 4, 1, 1);
    write_all(&mut f, 0..8);
    write_all(&mut f, [1, 0]);
    let then = *f.nand().counters();
    f.write(4).unwrap();
    assert_eq!(delta(&f, &then), (4, 4 + 1, 2));
    assert_eq!(merges(&f), (0, 0, 1));

    // Full at once when the log fills out of order (offsets 1, 0, 2, 3).
    let mut f = ftl(Scheme::Bast, 1, 4, 1, 1);
    write_all(&mut f, 0..4);
    let then = *f.nand().counters();
    write_all(&mut f, [1, 0, 2, 3]);
    assert_eq!(delta(&f, &then), (4, 4 + 4, 2));
    assert_eq!(merges(&f), (0, 0, 1));

    // Switch: the log fills in order: no copy, the data unit is erased.
    let mut f = ftl(Scheme::Bast, 1, 4, 1, 1);
    write_all(&mut f, 0..4);
    let then = *f.nand().counters();
    write_all(&mut f, 0..4);
    assert_eq!(delta(&f, &then), (0, 4, 1));
    assert_eq!(merges(&f), (1, 0, 0));
}

/// Check 2, superblocks: a full merge of a 4-block unit erases the programmed blocks
/// of both units and copies every valid page.
#[test]
fn superblock_full_merge_cost() {
    let mut f = ftl(Scheme::Bast, 4, 4, 4, 1);
    write_all(&mut f, 0..32);
    write_all(&mut f, [5, 3]);
    let then = *f.nand().counters();
    f.write(16).unwrap();
    // 16 valid pages copied; the data unit's 4 blocks and the log's 2 programmed blocks erased.
    assert_eq!(delta(&f, &then), (16, 16 + 1, 4 + 2));
    assert_eq!(merges(&f), (0, 0, 1));
}

/// Check 2, FAST: reclaiming the full random log block full-merges every unit with a
/// valid page in it (Σ v_i reads and programs), erasing those data units and the log block.
#[test]
fn fast_merge_costs() {
    let mut f = ftl(Scheme::Fast, 1, 4, 1, 2); // 1 sequential + 1 random log block
    write_all(&mut f, 0..8);
    write_all(&mut f, [1, 6, 3, 5]); // the random log block is full
    let then = *f.nand().counters();
    f.write(2).unwrap();
    assert_eq!(delta(&f, &then), (8, 8 + 1, 3));
    assert_eq!(merges(&f), (0, 0, 2));

    // Sequential log: offset 0 starts it, 1 continues; a new offset 0 elsewhere
    // reclaims it by a partial merge (copies 2, 3; erases the data unit).
    let mut f = ftl(Scheme::Fast, 1, 4, 1, 2);
    write_all(&mut f, 0..8);
    write_all(&mut f, [0, 1]);
    let then = *f.nand().counters();
    f.write(4).unwrap();
    assert_eq!(delta(&f, &then), (2, 2 + 1, 1));
    assert_eq!(merges(&f), (0, 1, 0));
}

/// Check 2, block mapping: rewriting a page copies the unit's other valid pages.
#[test]
fn block_rewrite_cost() {
    let mut f = ftl(Scheme::Block, 1, 4, 1, 1);
    write_all(&mut f, [0, 2, 3]);
    let then = *f.nand().counters();
    f.write(2).unwrap();
    assert_eq!(delta(&f, &then), (2, 2 + 1, 1));
    assert_eq!(merges(&f), (0, 0, 1));
    // Offset 1 was skipped (written after 0 and before 2 never): writing it now rewrites.
    f.write(1).unwrap();
    assert_eq!(f.stats().merge_copied_pages, 2 + 3);
}

/// Check 3: seed 004's pattern — update page p, then p+1..N−1 in order — full-merges
/// under bast and switch-merges under bast-padding, which copies pages 0..p−1.
#[test]
fn padding_turns_full_merges_into_switches() {
    let p = 3u64;
    let mut counts = Vec::new();
    for scheme in [Scheme::Bast, Scheme::BastPadding] {
        let mut f = ftl(scheme, 1, 8, 1, 2);
        write_all(&mut f, 0..64);
        for unit in 0..8u64 {
            write_all(&mut f, (p..8).map(|o| unit * 8 + o));
        }
        // The last unit's log is still open under bast; reclaim it by two more units.
        write_all(&mut f, [1, 9]);
        counts.push((merges(&f), f.stats().padding_pages, f.nand().counters().get(OpKind::Program, Cause::Padding)));
        f.check_invariants().unwrap();
    }
    let (bast, padded) = (counts[0], counts[1]);
    assert_eq!(bast.0 .0, 0, "bast: no switch merge on this pattern");
    assert!(bast.0 .2 >= 8, "bast: every updated unit full-merged: {bast:?}");
    assert_eq!(padded.0, (8, 0, 0), "bast-padding: every updated unit switch-merged (then logs of units 0, 1 open)");
    assert_eq!((padded.1, padded.2), (8 * p + 2, 8 * p + 2), "p pages padded per unit, 1 for each of the last two");
}

/// Check 3: once a padded page is written again, the log block is out of order and
/// is no longer padded.
#[test]
fn rewriting_a_padded_page_stops_padding() {
    let mut f = ftl(Scheme::BastPadding, 1, 8, 1, 2);
    write_all(&mut f, 0..8);
    f.write(2).unwrap(); // pads 0, 1
    assert_eq!(f.stats().padding_pages, 2);
    f.write(0).unwrap(); // a padded page again: out of order
    f.write(6).unwrap(); // would have padded 3..5
    assert_eq!(f.stats().padding_pages, 2);
    f.write(7).unwrap();
    f.write(4).unwrap(); // log: 0 1 2 0 6 7 4 … not in order
    f.write(5).unwrap(); // full: a full merge
    assert_eq!(merges(&f), (0, 0, 1));
}

/// A whole trimmed unit is reclaimed without copies.
#[test]
fn trimmed_units_are_reclaimed() {
    for scheme in [Scheme::Block, Scheme::Bast, Scheme::Fast] {
        let mut f = ftl(scheme, 1, 4, 1, 2);
        write_all(&mut f, 0..8);
        write_all(&mut f, [1, 0]);
        let then = *f.nand().counters();
        (0..4).for_each(|l| f.trim(l).unwrap());
        let (r, p, e) = delta(&f, &then);
        assert_eq!((r, p), (0, 0), "{scheme:?}");
        assert!(e >= 1, "{scheme:?}: the data unit is erased");
        assert_eq!(f.read(2).unwrap(), ReadOutcome::Unmapped);
        f.check_invariants().unwrap();
    }
}

#[derive(Clone, Debug)]
enum Op {
    Write(u64),
    Read(u64),
    Trim(u64),
}

fn ops() -> impl Strategy<Value = Vec<Op>> {
    let op = prop_oneof![
        6 => (0u64..1 << 20).prop_map(Op::Write),
        2 => (0u64..1 << 20).prop_map(Op::Read),
        1 => (0u64..1 << 20).prop_map(Op::Trim),
    ];
    proptest::collection::vec(op, 1..1500)
}

fn schemes() -> impl Strategy<Value = Scheme> {
    prop_oneof![Just(Scheme::Block), Just(Scheme::Bast), Just(Scheme::BastPadding), Just(Scheme::Fast)]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// Check 5, model-based: a read returns the tag of the last write, nothing after a
    /// trim; strict invariants (every valid physical page mapped exactly once) hold
    /// throughout and at the end; programs by cause add up.
    #[test]
    fn reads_return_last_write(scheme in schemes(), sb in prop_oneof![Just(1u32), Just(2)], logs in 2u32..5,
                               victim in prop_oneof![Just(LogVictim::Lru), Just(LogVictim::Fifo), Just(LogVictim::Random)],
                               seq in 1u32..4, narrow in any::<bool>(), ops in ops()) {
        let mut f = ftl_seq(scheme, 2, 4, sb, logs, victim, 1 + (seq - 1) % (logs - 1));
        // Narrow: a few units, so that logs and merges meet often.
        let logical = if narrow { 3 * (4 * sb) as u64 } else { f.settings().logical_pages };
        let mut model: HashMap<u64, u32> = HashMap::new();
        for op in ops {
            match op {
                Op::Write(l) => { let l = l % logical; f.write(l).unwrap(); model.insert(l, f.last_tag()); }
                Op::Trim(l) => { let l = l % logical; f.trim(l).unwrap(); model.remove(&l); }
                Op::Read(l) => {
                    let l = l % logical;
                    match (f.read(l).unwrap(), model.get(&l)) {
                        (ReadOutcome::Unmapped, None) => {}
                        (ReadOutcome::Mapped { tag, .. }, Some(&t)) => prop_assert_eq!(tag, Some(t)),
                        (got, want) => prop_assert!(false, "lpn {}: got {:?}, model {:?}", l, got, want),
                    }
                }
            }
        }
        f.check_invariants().unwrap();
        let c = f.nand().counters();
        let s = f.stats();
        prop_assert_eq!(c.get(OpKind::Program, Cause::Host), s.host_write_pages);
        prop_assert_eq!(c.get(OpKind::Program, Cause::Merge), s.merge_copied_pages);
        prop_assert_eq!(c.get(OpKind::Program, Cause::Padding), s.padding_pages);
        prop_assert_eq!(c.total(OpKind::Program), s.host_write_pages + s.merge_copied_pages + s.padding_pages);
    }
}

/// Check 6: the hand-worked trace of docs/mapping.md (FlashSim-style rules on paper)
/// gives the same merge counts and NAND totals in the simulator.
#[test]
fn docs_trace_agrees_with_the_hand_count() {
    let trace = [0, 1, 2, 3, 4, 5, 6, 7, 0, 1, 2, 3, 5, 4, 8, 9, 10, 11, 9, 0, 1, 12, 12, 16, 16];
    // (scheme, log blocks, (switch, partial, full), copies, (reads, programs, erases))
    let expect = [(Scheme::Bast, 2, (1, 1, 2), 10, (10, 35, 6)), (Scheme::Fast, 2, (1, 3, 0), 5, (5, 30, 4))];
    for (scheme, logs, m, copies, nand) in expect {
        let mut f = ftl(scheme, 1, 4, 1, logs);
        write_all(&mut f, trace);
        assert_eq!(merges(&f), m, "{scheme:?}");
        assert_eq!(f.stats().merge_copied_pages, copies, "{scheme:?}");
        assert_eq!(delta(&f, &OpCounters::default()), nand, "{scheme:?}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// Merge copies in bulk (`crates/flashlab-ftl/src/units/bulk.rs`) leave exactly the
    /// state of the per-page copies (`set_bulk_copies(false)`): every mapping, content
    /// tag, page state, block pointer, valid and erase count, the counters and the
    /// statistics, and when recorded the same op log; blocks of 4, 64 and 96 pages
    /// (bitmap words crossed), 1 or 2 blocks a unit (one block of 4 or 64 pages takes
    /// the one-word path, `units/word.rs`). The bulk path keeps home pages as `HOME`
    /// map entries without reverse-map entries; the per-page path stores every page's
    /// location, so lookups are compared along the way, too. BAST's in-order log blocks
    /// (`HOME` entries there too) and the merges' `Stored` hints are on the bulk path;
    /// LRU and FIFO victims come from the kept order (`bast/order.rs`).
    #[test]
    fn bulk_copies_equal_per_page_copies(scheme in schemes(), sb in prop_oneof![Just(1u32), Just(2)],
                                         ppb in prop_oneof![Just(4u32), Just(64), Just(96)], logs in 2u32..5,
                                         victim in prop_oneof![Just(LogVictim::Lru), Just(LogVictim::Fifo)],
                                         narrow in any::<bool>(), record in any::<bool>(), compact in any::<bool>(),
                                         ops in ops()) {
        let (mut bulk, mut per_page) =
            (ftl_with(scheme, 2, ppb, sb, logs, victim), ftl_with(scheme, 2, ppb, sb, logs, victim));
        per_page.set_bulk_copies(false);
        bulk.set_record_ops(record);
        per_page.set_record_ops(record);
        // One-word merges logged as `MergeMoves` (`crates/flashlab-ftl/src/moves.rs`):
        // expanded, the same op log.
        bulk.set_merge_moves(compact);
        let mut moves = Vec::new();
        let logical = if narrow { 3 * (ppb * sb) as u64 } else { bulk.settings().logical_pages };
        for (i, op) in ops.into_iter().enumerate() {
            if i % 64 == 63 {
                // Home entries (`units.rs`) resolve to the pages the reference maps.
                for l in 0..logical {
                    prop_assert_eq!(bulk.lookup(l), per_page.lookup(l), "lpn {} after {} ops", l, i);
                }
            }
            let mut logs = Vec::new();
            for f in [&mut bulk, &mut per_page] {
                match op {
                    Op::Write(l) => f.write(l % logical).unwrap(),
                    Op::Trim(l) => f.trim(l % logical).unwrap(),
                    Op::Read(l) => { f.read(l % logical).unwrap(); }
                }
                f.take_merge_moves(&mut moves);
                let ops = f.take_ops().collect::<Vec<FlashOp>>();
                prop_assert!(moves.is_empty() || compact && ops.iter().any(|o| o.as_merge_moves().is_some()));
                logs.push(expand_merge_moves(&ops, &moves));
            }
            prop_assert_eq!(&logs[0], &logs[1]);
        }
        prop_assert_eq!(bulk.nand().counters(), per_page.nand().counters());
        prop_assert_eq!(bulk.stats(), per_page.stats());
        for l in 0..bulk.settings().logical_pages {
            prop_assert_eq!(bulk.lookup(l), per_page.lookup(l));
            prop_assert_eq!(bulk.read(l).unwrap(), per_page.read(l).unwrap());
        }
        let (a, b) = (bulk.nand(), per_page.nand());
        for blk in 0..a.geometry().blocks() {
            prop_assert_eq!((a.write_pointer(blk), a.valid_count(blk), a.erase_count(blk)),
                            (b.write_pointer(blk), b.valid_count(blk), b.erase_count(blk)));
        }
        for p in 0..a.geometry().pages() {
            prop_assert_eq!(a.page_state(p), b.page_state(p));
        }
        bulk.check_invariants().unwrap();
        per_page.check_invariants().unwrap();
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 32, ..ProptestConfig::default() })]

    /// The bulk sequential prefill of the block-mapped schemes (`units/prefill.rs`)
    /// leaves the state of writing logical pages `0..L` one by one (a short last
    /// logical unit too), and the two stay equal under the same random writes, trims
    /// and reads after it (every lookup, page state, block pointer and count, counter
    /// and statistic, the invariants).
    #[test]
    fn bulk_prefill_equals_writes_in_order(scheme in schemes(), sb in prop_oneof![Just(1u32), Just(2)],
                                           ppb in prop_oneof![Just(4u32), Just(96)], logs in 2u32..5,
                                           short in 0u64..5, ops in ops()) {
        let mut s = settings(scheme, ppb, sb, logs, LogVictim::Lru, 1);
        (s.strict, s.track_content) = (false, false);
        s.logical_pages -= short;
        let (mut bulk, mut each) = (Ftl::new(geo(2, ppb), s.clone()).unwrap(), Ftl::new(geo(2, ppb), s).unwrap());
        prop_assert!(bulk.prefill_sequential().unwrap());
        let l = each.settings().logical_pages;
        for lpn in 0..l {
            each.write(lpn).unwrap();
        }
        prop_assert!(!bulk.prefill_sequential().unwrap(), "only on a fresh FTL");
        for (i, op) in std::iter::once(None).chain(ops.into_iter().map(Some)).enumerate() {
            for f in [&mut bulk, &mut each] {
                match op {
                    Some(Op::Write(x)) => f.write(x % l).unwrap(),
                    Some(Op::Trim(x)) => f.trim(x % l).unwrap(),
                    Some(Op::Read(x)) => { f.read(x % l).unwrap(); }
                    None => {}
                }
            }
            if i % 50 == 0 {
                prop_assert_eq!(bulk.nand().counters(), each.nand().counters());
                prop_assert_eq!(bulk.stats(), each.stats());
                for lpn in 0..l {
                    prop_assert_eq!(bulk.lookup(lpn), each.lookup(lpn), "lpn {} after {} ops", lpn, i);
                }
                let (a, b) = (bulk.nand(), each.nand());
                for blk in 0..a.geometry().blocks() {
                    prop_assert_eq!((a.write_pointer(blk), a.valid_count(blk), a.erase_count(blk)),
                                    (b.write_pointer(blk), b.valid_count(blk), b.erase_count(blk)));
                }
                bulk.check_invariants().unwrap();
            }
        }
        prop_assert_eq!(bulk.nand().counters(), each.nand().counters());
        prop_assert_eq!(bulk.stats(), each.stats());
        for lpn in 0..l {
            prop_assert_eq!(bulk.read(lpn).unwrap(), each.read(lpn).unwrap());
        }
        let (a, b) = (bulk.nand(), each.nand());
        for p in 0..a.geometry().pages() {
            prop_assert_eq!(a.page_state(p), b.page_state(p));
        }
        bulk.check_invariants().unwrap();
        each.check_invariants().unwrap();
    }
}
