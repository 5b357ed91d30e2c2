//! Integration tests of the FTLs: the page-mapped FTL here, the other mapping schemes in `mapping`, DFTL in `dftl`.

mod dftl;
mod mapping;

use flashlab_ftl::analytic;
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
        external_victim: None,
        stripe: StripeOrder::default(),
        separate_gc_frontier: true,
        host_streams: 2,
        gc_streams: 1,
        trigger: Trigger::Threshold,
        background_max_valid: 1.0,
        placement: None,
        wear: WearLevelling::default(),
        strict: true,
        track_content: true,
        seed: 7,
        mapping: Default::default(),
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
        Just(VictimPolicy::Cat),
        (0.0f64..1.0).prop_map(|weight| VictimPolicy::Weco { weight }),
        (1.0f64..20.0).prop_map(|k| VictimPolicy::Wpo { k }),
    ]
}

/// Trigger, placement, wear levelling and stream counts for the model-based test.
fn options() -> impl Strategy<Value = (u8, bool, bool, u32, u32)> {
    (0u8..3, any::<bool>(), any::<bool>(), 0u32..4, 1u32..3)
}

fn apply_options(
    s: &mut FtlSettings,
    (trigger, placement, dynamic, static_wl, gc_streams): (u8, bool, bool, u32, u32),
) {
    s.trigger = match trigger {
        0 => Trigger::Threshold,
        1 => Trigger::DtGc(DtParams { check_pages: 4, ..DtParams::seed001(0.25) }),
        _ => Trigger::FreeRatio { min: Trigger::SSDSIM_FREE_RATIO },
    };
    if placement {
        s.placement = Some(flashlab_hotdata::IdentifierSpec::from_name("temperature-table").unwrap());
    }
    s.wear = WearLevelling { dynamic, static_threshold: static_wl, static_check_erases: 2 };
    s.gc_streams = gc_streams;
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// Model-based: a read returns the tag of the last write; trims unmap; every
    /// invariant holds throughout (strict mode) and at the end.
    #[test]
    fn reads_return_last_write(victim in policies(), opts in options(), ops in ops(150)) {
        let g = geo(2, 24, 8);
        let mut s = settings(&g, 0.25, victim);
        apply_options(&mut s, opts);
        let logical = s.logical_pages;
        let mut ftl = PageFtl::new(g, s);
        let mut model: HashMap<u64, u32> = HashMap::new();
        for op in ops {
            match op {
                Op::Write(l) => {
                    let l = l % logical;
                    if l.is_multiple_of(3) { ftl.write_stream(l, (l % 2) as u32).unwrap(); } else { ftl.write(l).unwrap(); }
                    model.insert(l, ftl.last_tag());
                }
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
        let st = ftl.stats();
        prop_assert_eq!(n.total(OpKind::Program), st.host_write_pages + st.gc_copied_pages + st.wl_copied_pages);
        prop_assert_eq!(n.get(OpKind::Erase, Cause::Gc), st.gc_runs);
        prop_assert_eq!(n.get(OpKind::Erase, Cause::WearLevel), st.wl_moves);
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
    assert!(
        e.contains("\"gredy\"") && e.contains("greedy, fifo, random, d-choices, cost-benefit, cat, weco, wpo"),
        "{e}"
    );
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

fn wear_view(infos: &[(u32, u32, u32)]) -> VecView {
    VecView {
        pages_per_block: 64,
        now: 1000,
        blocks: infos.iter().map(|i| i.0).collect(),
        infos: infos.iter().map(|&(_, valid, erase_count)| BlockInfo { valid, erase_count, close_time: 500 }).collect(),
    }
}

#[test]
fn wpo_weight_at_known_points() {
    assert_eq!(wpo_weight(10.0, 0), 0.0);
    assert!((wpo_weight(10.0, 10) - 2.0 / (1.0 + 1f64.exp())).abs() < 1e-12);
    assert!((wpo_weight(10.0, 10) - 0.5379).abs() < 1e-4);
    assert!(wpo_weight(10.0, 1) < 1e-4);
    assert!(wpo_weight(10.0, 1_000_000) > 0.9999);
    assert!(wpo_weight(10.0, 20) > wpo_weight(10.0, 10));
}

#[test]
fn wear_aware_policies_on_hand_built_views() {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(1);
    // block, valid, erases
    let even = wear_view(&[(1, 10, 5), (2, 40, 5), (3, 20, 5)]);
    // No spread: WPO is greedy.
    assert_eq!(VictimPolicy::Wpo { k: 10.0 }.choose(&even, &mut rng), Some(1));
    // A large spread pushes WPO towards the least-worn block even with more valid pages.
    let worn = wear_view(&[(1, 10, 500), (2, 40, 0), (3, 20, 450)]);
    assert!(wpo_weight(10.0, 500) > 0.98);
    assert_eq!(VictimPolicy::Wpo { k: 10.0 }.choose(&worn, &mut rng), Some(2));
    assert_eq!(VictimPolicy::Greedy.choose(&worn, &mut rng), Some(1));
    // WECO with weight 0 is greedy, with weight 1 is pure wear levelling.
    assert_eq!(VictimPolicy::Weco { weight: 0.0 }.choose(&worn, &mut rng), Some(1));
    assert_eq!(VictimPolicy::Weco { weight: 1.0 }.choose(&worn, &mut rng), Some(2));
    // weighted score by hand: (1 - a) * valid / 64 + a * erases / (1 + max)
    let s = weighted_score(BlockInfo { valid: 32, erase_count: 50, close_time: 0 }, 64, 99, 0.5);
    assert!((s - (0.25 + 0.25)).abs() < 1e-12);
    // CAT: u / (1 - u) / age * erases, age and erases counted from 1.
    let c = cat_score(BlockInfo { valid: 32, erase_count: 3, close_time: 99 }, 64, 199);
    assert!((c - 1.0 / 101.0 * 4.0).abs() < 1e-12);
    let cat = wear_view(&[(1, 32, 0), (2, 32, 9), (3, 60, 0)]);
    assert_eq!(VictimPolicy::Cat.choose(&cat, &mut rng), Some(1));
}

/// Uniform random writes on a small device with `victim`; checks every victim is a closed block.
#[test]
fn no_policy_ever_picks_an_open_block() {
    for victim in [
        VictimPolicy::Greedy,
        VictimPolicy::Fifo,
        VictimPolicy::Random,
        VictimPolicy::DChoices { d: 3 },
        VictimPolicy::CostBenefit,
        VictimPolicy::Cat,
        VictimPolicy::Weco { weight: 0.5 },
        VictimPolicy::Wpo { k: 10.0 },
    ] {
        let g = geo(1, 24, 8);
        let mut s = settings(&g, 0.4, victim);
        s.strict = false;
        let l = s.logical_pages;
        let mut ftl = PageFtl::new(g, s);
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(3);
        for i in 0..20_000u64 {
            let lpn = if i < l { i } else { rng.next_u64() % l };
            ftl.write(lpn).unwrap();
            for plane in 0..g.planes() {
                if let Some(b) = ftl.choose_victim(plane) {
                    assert!(!ftl.block_is_open(b), "{victim:?} picked open block {b}");
                    assert_eq!(ftl.nand().write_pointer(b), 8);
                }
            }
        }
        ftl.check_invariants().unwrap();
    }
}

#[test]
fn dt_gc_keeps_free_space_above_the_urgent_threshold() {
    let g = geo(1, 64, 16);
    let mut s = settings(&g, 0.2, VictimPolicy::Greedy);
    s.strict = false;
    let dt = DtParams { check_pages: 8, ..DtParams::seed001(0.2) };
    s.trigger = Trigger::DtGc(dt);
    let l = s.logical_pages;
    let mut ftl = PageFtl::new(g, s);
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(9);
    let mut min_margin = f64::MAX;
    for i in 0..60_000u64 {
        ftl.write(if i < l { i } else { rng.next_u64() % l }).unwrap();
        if i > 2 * l && i % 64 == 0 {
            for plane in 0..g.planes() {
                let (fp, vp, ip) = ftl.page_ratios(plane);
                let (h, _) = dt.thresholds(vp, ip);
                min_margin = min_margin.min(fp - h);
            }
        }
    }
    assert!(ftl.stats().gc_runs > 1000);
    // Checked every 8 host pages per plane: the plane may fall below H by at most that many pages.
    let slack = 8.0 / (64.0 * 16.0);
    assert!(min_margin > -slack - 1e-9, "free ratio fell {min_margin} below H");
}

/// SSDsim's trigger: GC runs only when a plane's free-page ratio is below the threshold,
/// one run per host page, so no plane falls more than one page below it.
#[test]
fn free_ratio_trigger_runs_one_gc_per_page_below_the_ratio() {
    let g = geo(1, 40, 8);
    let mut s = settings(&g, 0.3, VictimPolicy::Greedy);
    s.strict = false;
    let min = 0.2;
    s.trigger = Trigger::FreeRatio { min };
    let l = s.logical_pages;
    let mut ftl = PageFtl::new(g, s);
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(11);
    let page = 1.0 / (40.0 * 8.0);
    let ratios = |f: &PageFtl| (0..g.planes()).map(|p| f.free_page_ratio(p)).collect::<Vec<_>>();
    let (mut below, mut above) = (0, 0);
    for i in 0..20_000u64 {
        let before = ratios(&ftl);
        let runs = ftl.stats().gc_runs;
        ftl.write(if i < l { i } else { rng.next_u64() % l }).unwrap();
        let delta = ftl.stats().gc_runs - runs;
        assert!(delta <= 1, "write {i}: {delta} GC runs");
        if before.iter().all(|&r| r - page >= min - 1e-12) {
            assert_eq!(delta, 0, "write {i}: GC ran with every plane at or above the ratio: {before:?}");
            above += 1;
        } else {
            below += delta;
        }
        assert!(ratios(&ftl).iter().all(|&r| r >= min - page - 1e-12), "write {i}: {:?}", ratios(&ftl));
    }
    assert!(below > 1000 && above > 1000, "{below} {above}");
}

fn erase_spread(wear: WearLevelling) -> (u32, u64) {
    let g = Geometry {
        channels: 1,
        chips_per_channel: 1,
        dies_per_chip: 1,
        planes_per_die: 1,
        blocks_per_plane: 64,
        pages_per_block: 16,
        page_bytes: 2048,
    };
    let mut s = settings(&g, 0.2, VictimPolicy::Greedy);
    (s.strict, s.track_content, s.wear) = (false, false, wear);
    let l = s.logical_pages;
    let mut ftl = PageFtl::new(g, s);
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(5);
    (0..l).for_each(|p| {
        ftl.write(p).unwrap();
    });
    // 95 % of writes to the first 5 % of the space: the rest is cold and pins its blocks.
    let hot = l / 20;
    for _ in 0..300_000 {
        let r = rng.next_u64();
        let lpn = if r % 100 < 95 { (r >> 8) % hot } else { hot + (r >> 8) % (l - hot) };
        ftl.write(lpn).unwrap();
    }
    ftl.check_invariants().unwrap();
    let (min, max) = ftl.plane_erase_range(0);
    (max - min, ftl.stats().wl_moves)
}

#[test]
fn static_wear_levelling_bounds_the_erase_spread() {
    let (off, moves_off) = erase_spread(WearLevelling::default());
    let (on, moves_on) = erase_spread(WearLevelling { dynamic: true, static_threshold: 20, static_check_erases: 4 });
    eprintln!("erase spread: {off} without wear levelling, {on} with (threshold 20, {moves_on} moves)");
    assert_eq!(moves_off, 0);
    assert!(off > 100, "the skewed workload should wear blocks unevenly ({off})");
    assert!(moves_on > 0 && on <= 20 + 4, "spread {on} not bounded by the threshold");
}

#[test]
fn block_temperature_is_the_mean_over_valid_and_invalid_pages() {
    // One plane, 8 pages per block: the first host block fills in order.
    let g = Geometry {
        channels: 1,
        chips_per_channel: 1,
        dies_per_chip: 1,
        planes_per_die: 1,
        blocks_per_plane: 16,
        pages_per_block: 8,
        page_bytes: 2048,
    };
    let mut s = settings(&g, 0.5, VictimPolicy::Greedy);
    s.host_streams = 1;
    s.placement = Some(flashlab_hotdata::IdentifierSpec::from_name("temperature-table").unwrap());
    let mut ftl = PageFtl::new(g, s);
    // LPN 0 written three times in a row: temperatures 1, 2, 3 (recent write counts).
    for _ in 0..3 {
        ftl.write(0).unwrap();
    }
    let block = ftl.lookup(0).unwrap() / 8;
    // Pages: two invalid pages of LPN 0 (temperature at invalidation: 2, then 3) and the valid one (3).
    assert_eq!(ftl.block_temperature(block), Some((2.0 + 3.0 + 3.0) / 3.0));
    ftl.write(1).unwrap();
    assert_eq!(ftl.block_temperature(block), Some((2.0 + 3.0 + 3.0 + 1.0) / 4.0));
    ftl.check_invariants().unwrap();
    assert_eq!(ftl.block_temperature(block + 1), None, "an erased block has no temperature");
}

/// An external policy that takes the first candidate with the fewest valid pages.
struct FirstFewest(std::sync::Arc<std::sync::atomic::AtomicU64>);

impl VictimCallback for FirstFewest {
    fn choose(&mut self, plane: PlaneInfo, c: &[Candidate]) -> Result<u32, String> {
        self.0.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        assert!(c.windows(2).all(|w| w[0].valid <= w[1].valid), "greedy order");
        assert!(c.iter().all(|b| b.valid <= plane.pages_per_block && b.age <= plane.now));
        Ok(c.iter().min_by_key(|b| b.valid).expect("candidates").block)
    }
}

fn random_writes(ftl: &mut PageFtl, logical: u64, n: u32) -> Result<(), FtlError> {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(11);
    for _ in 0..n {
        ftl.write(rng.next_u64() % logical)?;
    }
    Ok(())
}

#[test]
fn external_first_fewest_is_builtin_greedy() {
    let g = geo(2, 32, 16);
    let builtin_s = settings(&g, 0.25, VictimPolicy::Greedy);
    let calls = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
    let mut external_s = builtin_s.clone();
    external_s.victim = VictimPolicy::External;
    external_s.external_victim = Some(ExternalVictim::new(Box::new(FirstFewest(calls.clone()))));
    let logical = builtin_s.logical_pages;
    let (mut a, mut b) = (PageFtl::new(g, builtin_s), PageFtl::new(g, external_s));
    random_writes(&mut a, logical, 20_000).unwrap();
    random_writes(&mut b, logical, 20_000).unwrap();
    assert!(a.stats().gc_runs > 100);
    assert_eq!(calls.load(std::sync::atomic::Ordering::Relaxed), a.stats().gc_runs);
    assert_eq!(a.stats(), b.stats());
    for l in 0..logical {
        assert_eq!(a.lookup(l), b.lookup(l), "lpn {l}");
    }
}

struct Refuse;

impl VictimCallback for Refuse {
    fn choose(&mut self, _: PlaneInfo, c: &[Candidate]) -> Result<u32, String> {
        Err(format!("refused {} candidates", c.len()))
    }
}

#[test]
fn external_policy_errors_stop_gc_with_the_message() {
    let g = geo(2, 32, 16);
    let mut s = settings(&g, 0.25, VictimPolicy::External);
    s.external_victim = Some(ExternalVictim::new(Box::new(Refuse)));
    let logical = s.logical_pages;
    let mut ftl = PageFtl::new(g, s);
    let e = random_writes(&mut ftl, logical, 20_000).unwrap_err();
    assert!(matches!(&e, FtlError::ExternalVictim(m) if m.starts_with("refused ")), "{e}");
    // Without a callback the policy cannot run either.
    let mut ftl = PageFtl::new(g, settings(&g, 0.25, VictimPolicy::External));
    let e = random_writes(&mut ftl, logical, 20_000).unwrap_err();
    assert!(e.to_string().contains("needs a callback"), "{e}");
}

proptest! {
    /// `write_plain` (the engine's loop for runs without per-write features) leaves the
    /// state, counters and results of `write` after any sequence of writes, for every
    /// victim policy and frontier layout, down to running out of space.
    #[test]
    fn plain_writes_equal_writes(
        victim in policies(), separate in any::<bool>(), planes in 1u32..3, spare in 0.08f64..0.3,
        lpns in proptest::collection::vec(any::<u64>(), 1..4000),
    ) {
        let g = geo(planes, 12, 8);
        let mut s = settings(&g, spare, victim);
        (s.strict, s.track_content, s.separate_gc_frontier, s.host_streams) = (false, false, separate, 1);
        let (mut a, mut b) = (PageFtl::new(g, s.clone()), PageFtl::new(g, s.clone()));
        prop_assert!(b.plain_writes_apply());
        for &x in &lpns {
            let lpn = x % (s.logical_pages + 1); // one past the end: the range error too
            let (ra, rb) = (a.write(lpn), b.write_plain(lpn));
            prop_assert_eq!(format!("{ra:?}"), format!("{rb:?}"));
            if ra.is_err() {
                break;
            }
        }
        prop_assert_eq!(a.stats(), b.stats());
        prop_assert_eq!(a.nand().counters(), b.nand().counters());
        prop_assert_eq!(a.nand().erase_counts(), b.nand().erase_counts());
        for l in 0..s.logical_pages {
            prop_assert_eq!(a.lookup(l), b.lookup(l));
        }
        b.check_invariants().map_err(|e| TestCaseError::fail(e.to_string()))?;
        for p in 0..g.planes() {
            prop_assert_eq!(a.free_blocks(p), b.free_blocks(p));
        }
    }
}

#[test]
fn a_per_write_feature_turns_plain_writes_off() {
    let g = geo(1, 12, 8);
    let mut s = settings(&g, 0.2, VictimPolicy::Greedy);
    (s.strict, s.track_content) = (false, false);
    let mut f = PageFtl::new(g, s.clone());
    assert!(f.plain_writes_apply());
    f.set_record_ops(true);
    assert!(!f.plain_writes_apply());
    for change in [
        |s: &mut FtlSettings| s.strict = true,
        |s: &mut FtlSettings| s.track_content = true,
        |s: &mut FtlSettings| s.trigger = Trigger::FreeRatio { min: 0.1 },
        |s: &mut FtlSettings| s.wear.static_threshold = 10,
    ] {
        let mut t = s.clone();
        change(&mut t);
        assert!(!PageFtl::new(g, t).plain_writes_apply());
    }
}
