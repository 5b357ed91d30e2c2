//! Integration tests of the page-mapped FTL.

use flashlab_ftl::*;
use flashlab_nand::{Cause, Geometry, OpKind};
use proptest::prelude::*;
use rand::{RngCore, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use std::collections::HashMap;

fn geo(planes_per_die: u32, blocks: u32, ppb: u32) -> Geometry {
    Geometry {
        channels: 2,
        chips_per_channel: 1,
        dies_per_chip: 1,
        planes_per_die,
        blocks_per_plane: blocks,
        pages_per_block: ppb,
        page_bytes: 2048,
    }
}

fn settings(g: &Geometry, spare: f64, victim: VictimPolicy) -> FtlSettings {
    FtlSettings {
        logical_pages: (g.pages() as f64 * (1.0 - spare)) as u64,
        free_blocks_min: 2,
        victim,
        stripe: StripeOrder::default(),
        separate_gc_frontier: true,
        host_streams: 2,
        gc_streams: 1,
        trigger: Trigger::Threshold,
        placement: None,
        wear: WearLevelling::default(),
        strict: true,
        track_content: true,
        seed: 7,
    }
}

#[derive(Clone, Debug)]
enum Op {
    Write(u64),
    Read(u64),
    Trim(u64),
}

fn ops(logical: u64) -> impl Strategy<Value = Vec<Op>> {
    let op = prop_oneof![
        6 => (0..logical).prop_map(Op::Write),
        2 => (0..logical).prop_map(Op::Read),
        1 => (0..logical).prop_map(Op::Trim),
    ];
    proptest::collection::vec(op, 1..3000)
}

fn policies() -> impl Strategy<Value = VictimPolicy> {
    prop_oneof![
        Just(VictimPolicy::Greedy),
        Just(VictimPolicy::Fifo),
        Just(VictimPolicy::Random),
        (1u32..5).prop_map(|d| VictimPolicy::DChoices { d }),
        Just(VictimPolicy::CostBenefit),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// Model-based: a read returns the tag of the last write; trims unmap; every
    /// invariant holds throughout (strict mode) and at the end.
    #[test]
    fn reads_return_last_write(victim in policies(), ops in ops(150)) {
        let g = geo(2, 12, 8);
        let s = settings(&g, 0.25, victim);
        let logical = s.logical_pages;
        let mut ftl = PageFtl::new(g, s);
        let mut model: HashMap<u64, u32> = HashMap::new();
        for op in ops {
            match op {
                Op::Write(l) => { let l = l % logical; ftl.write_stream(l, (l % 2) as u32).unwrap(); model.insert(l, ftl.last_tag()); }
                Op::Trim(l) => { let l = l % logical; ftl.trim(l).unwrap(); model.remove(&l); }
                Op::Read(l) => {
                    let l = l % logical;
                    match (ftl.read(l).unwrap(), model.get(&l)) {
                        (ReadOutcome::Unmapped, None) => {}
                        (ReadOutcome::Mapped { tag, .. }, Some(&t)) => prop_assert_eq!(tag, Some(t)),
                        (got, want) => prop_assert!(false, "lpn {}: got {:?}, model {:?}", l, got, want),
                    }
                }
            }
        }
        ftl.check_invariants().unwrap();
        let n = ftl.nand().counters();
        prop_assert_eq!(n.total(OpKind::Program), ftl.stats().host_write_pages + ftl.stats().gc_copied_pages);
        prop_assert_eq!(n.get(OpKind::Erase, Cause::Gc), ftl.stats().gc_runs);
    }
}

#[test]
fn stripe_order_visits_channels_first() {
    let g = Geometry {
        channels: 2,
        chips_per_channel: 2,
        dies_per_chip: 1,
        planes_per_die: 2,
        blocks_per_plane: 8,
        pages_per_block: 4,
        page_bytes: 2048,
    };
    let mut s = settings(&g, 0.5, VictimPolicy::Greedy);
    let mut ftl = PageFtl::new(g, s.clone());
    let planes: Vec<u32> = (0..8).map(|l| ftl.write(l).unwrap()).collect();
    // cwdp: channel varies fastest, then chip, then plane; plane index = (ch*2+chip)*2+plane.
    assert_eq!(planes, vec![0, 4, 2, 6, 1, 5, 3, 7]);
    s.stripe = StripeOrder::parse("pdwc").unwrap();
    let mut ftl = PageFtl::new(g, s);
    let planes: Vec<u32> = (0..8).map(|l| ftl.write(l).unwrap()).collect();
    assert_eq!(planes, vec![0, 1, 2, 3, 4, 5, 6, 7]);
    assert!(StripeOrder::parse("cwdx").is_err());
    assert!(StripeOrder::parse("cwd").is_err());
}

#[test]
fn read_of_unwritten_page_is_served_and_counted() {
    let g = geo(1, 8, 4);
    let mut ftl = PageFtl::new(g, settings(&g, 0.5, VictimPolicy::Greedy));
    assert_eq!(ftl.read(3).unwrap(), ReadOutcome::Unmapped);
    assert_eq!(ftl.stats().unmapped_reads, 1);
    assert_eq!(ftl.stats().host_read_pages, 1);
    assert_eq!(ftl.nand().counters().total(OpKind::Read), 0);
}

#[test]
fn out_of_range_is_an_error() {
    let g = geo(1, 8, 4);
    let s = settings(&g, 0.5, VictimPolicy::Greedy);
    let cap = s.logical_pages;
    let mut ftl = PageFtl::new(g, s);
    assert_eq!(ftl.write(cap), Err(FtlError::OutOfRange { lpn: cap, capacity: cap }));
}

#[test]
fn full_device_reports_no_space_not_panic() {
    let g = geo(1, 8, 4);
    let mut s = settings(&g, 0.0, VictimPolicy::Greedy);
    s.logical_pages = g.pages() as u64;
    let mut ftl = PageFtl::new(g, s);
    let err = (0..g.pages() as u64).try_for_each(|l| ftl.write(l).map(|_| ()));
    assert!(matches!(err, Err(FtlError::NoSpace { .. })), "{err:?}");
}

#[test]
fn unknown_victim_lists_valid_names() {
    let e = VictimPolicy::from_name("gredy", 2).unwrap_err().to_string();
    assert!(e.contains("\"gredy\"") && e.contains("greedy, fifo, random, d-choices, cost-benefit"), "{e}");
    assert_eq!(VictimPolicy::from_name("d-choices", 0), Err(FtlError::DChoices));
}

fn view(infos: &[(u32, u32, u64)]) -> VecView {
    VecView {
        pages_per_block: 64,
        now: 1000,
        blocks: infos.iter().map(|i| i.0).collect(),
        infos: infos.iter().map(|&(_, valid, close_time)| BlockInfo { valid, erase_count: 0, close_time }).collect(),
    }
}

#[test]
fn policies_on_hand_built_views() {
    let v = view(&[(10, 40, 100), (11, 20, 900), (12, 32, 500), (13, 60, 50)]);
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(1);
    assert_eq!(VictimPolicy::Greedy.choose(&v, &mut rng), Some(11));
    assert_eq!(VictimPolicy::Fifo.choose(&v, &mut rng), Some(13));
    // cost-benefit: (1-u)*age/(1+u): b10 = .375*900/1.625 = 207.7, b11 = .6875*100/1.3125 = 52.4,
    // b12 = .5*500/1.5 = 166.7, b13 = .0625*950/1.9375 = 30.6 -> 10.
    assert_eq!(VictimPolicy::CostBenefit.choose(&v, &mut rng), Some(10));
    // d-choices with a large d finds the minimum with overwhelming probability.
    assert_eq!(VictimPolicy::DChoices { d: 64 }.choose(&v, &mut rng), Some(11));
    let mut seen = [0u32; 4];
    for _ in 0..4000 {
        let b = VictimPolicy::Random.choose(&v, &mut rng).unwrap();
        seen[(b - 10) as usize] += 1;
    }
    assert!(seen.iter().all(|&n| (850..1150).contains(&n)), "{seen:?}");
    let empty = view(&[]);
    assert_eq!(VictimPolicy::Greedy.choose(&empty, &mut rng), None);
    assert_eq!(VictimPolicy::Random.choose(&empty, &mut rng), None);
}

/// Prefill, then `warm` and `meas` × logical capacity uniform random single-page writes.
fn steady_waf(victim: VictimPolicy, spare: f64, blocks: u32, warm: u64, meas: u64) -> f64 {
    let g = Geometry {
        channels: 1,
        chips_per_channel: 1,
        dies_per_chip: 1,
        planes_per_die: 1,
        blocks_per_plane: blocks,
        pages_per_block: 64,
        page_bytes: 4096,
    };
    let mut s = settings(&g, spare, victim);
    s.strict = false;
    s.track_content = false;
    // Logical capacity as wasim.c: round(blocks × (1 − spare)) whole blocks.
    s.logical_pages = ((blocks as f64 * (1.0 - spare)).round() as u64) * 64;
    let l = s.logical_pages;
    let mut ftl = PageFtl::new(g, s);
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(42);
    let mut uniform = move || ((rng.next_u64() as u128 * l as u128) >> 64) as u64;
    (0..l).for_each(|p| {
        ftl.write(p).unwrap();
    });
    (0..warm * l).for_each(|_| {
        ftl.write(uniform()).unwrap();
    });
    let before = *ftl.nand().counters();
    let host0 = ftl.stats().host_write_pages;
    (0..meas * l).for_each(|_| {
        ftl.write(uniform()).unwrap();
    });
    let programs = ftl.nand().counters().since(&before).total(OpKind::Program);
    programs as f64 / (ftl.stats().host_write_pages - host0) as f64
}

#[test]
fn fifo_matches_desnoyers_closed_form() {
    let (got, want) = (steady_waf(VictimPolicy::Fifo, 0.1, 16384, 4, 4), analytic::fifo_waf(0.1));
    let err = (got - want).abs() / want;
    eprintln!("FIFO WAF at spare 0.1: measured {got:.4}, closed form {want:.4}, error {:.2}%", err * 100.0);
    assert!(err < 0.02, "FIFO WAF {got} vs closed form {want}");
}

#[test]
fn greedy_matches_desnoyers_closed_form() {
    let (got, want) = (steady_waf(VictimPolicy::Greedy, 0.1, 16384, 4, 4), analytic::greedy_waf(0.1, 64));
    let err = (got - want).abs() / want;
    eprintln!("greedy WAF at spare 0.1: measured {got:.4}, closed form {want:.4}, error {:.2}%", err * 100.0);
    assert!(err < 0.02, "greedy WAF {got} vs closed form {want}");
}
