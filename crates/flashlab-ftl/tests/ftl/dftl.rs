//! DFTL: the cached mapping table, translation pages and their garbage collection.

use super::{apply_options, options, Op};
use flashlab_ftl::*;
use flashlab_nand::{Cause, Geometry, OpKind};
use proptest::prelude::*;
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use std::collections::HashMap;

fn dgeo(planes: u32, blocks: u32, ppb: u32, page_bytes: u32) -> Geometry {
    Geometry {
        channels: 1,
        chips_per_channel: 1,
        dies_per_chip: 1,
        planes_per_die: planes,
        blocks_per_plane: blocks,
        pages_per_block: ppb,
        page_bytes,
    }
}

fn dsettings(_g: &Geometry, logical: u64, scheme: Scheme, cache: u64, variant: DftlVariant) -> FtlSettings {
    FtlSettings {
        logical_pages: logical,
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
        mapping: MappingSettings { scheme, map_cache_entries: cache, dftl_variant: variant, ..Default::default() },
    }
}

const VARIANTS: [DftlVariant; 4] =
    [DftlVariant::Paper, DftlVariant::FlashsimC, DftlVariant::FlashsimCpp, DftlVariant::Wiscsim];

/// NAND operations of one kind and cause.
fn nand(f: &Ftl, kind: OpKind, cause: Cause) -> u64 {
    f.nand().counters().get(kind, cause)
}

/// Write, read or trim every op of a uniform random sequence over `logical` pages.
fn run_random(f: &mut Ftl, logical: u64, n: usize, seed: u64) {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    for _ in 0..n {
        let l = rng.gen_range(0..logical);
        match rng.gen_range(0..10) {
            0..=5 => f.write(l).unwrap(),
            6..=8 => {
                let _ = f.read(l).unwrap();
            }
            _ => f.trim(l).unwrap(),
        }
    }
}

#[test]
fn a_cache_holding_the_whole_map_behaves_like_page_mapping() {
    let g = dgeo(2, 32, 16, 2048);
    let logical = 800;
    let mut page = Ftl::new(g, dsettings(&g, logical, Scheme::Page, 0, DftlVariant::Paper)).unwrap();
    let mut dftl = Ftl::new(g, dsettings(&g, logical, Scheme::Dftl, logical, DftlVariant::Paper)).unwrap();
    for l in 0..logical {
        page.write(l).unwrap();
        dftl.write(l).unwrap();
    }
    let warm = *dftl.stats();
    assert_eq!((warm.map_cache_lookups, warm.map_cache_hits), (logical, 0));
    run_random(&mut page, logical, 20_000, 9);
    run_random(&mut dftl, logical, 20_000, 9);
    let after = dftl.stats().since(&warm);
    assert_eq!(after.map_cache_hits, after.map_cache_lookups, "every lookup after warm-up hits");
    assert_eq!((dftl.stats().map_reads, dftl.stats().map_writes), (0, 0));
    for (kind, cause) in [(OpKind::Program, Cause::Host), (OpKind::Program, Cause::Gc), (OpKind::Erase, Cause::Gc)] {
        assert_eq!(nand(&dftl, kind, cause), nand(&page, kind, cause), "{kind:?} {cause:?}");
    }
    assert!(nand(&page, OpKind::Erase, Cause::Gc) > 0, "the run collected garbage");
    assert_eq!(nand(&dftl, OpKind::Program, Cause::Mapping), 0);
    dftl.check_invariants().unwrap();
}

/// DFTL's host writes through `write_plain` (no op log, strict checks or content tags)
/// leave the state of its general path (taken while the op log is on).
#[test]
fn plain_host_writes_equal_the_logged_path() {
    let g = dgeo(4, 48, 16, 256);
    let logical = 2000;
    for variant in VARIANTS {
        let mut s = dsettings(&g, logical, Scheme::Dftl, 150, variant);
        (s.strict, s.track_content) = (false, false);
        let (mut plain, mut logged) = (Ftl::new(g, s.clone()).unwrap(), Ftl::new(g, s).unwrap());
        logged.set_record_ops(true);
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(5);
        for i in 0..30_000u64 {
            let l = if i < logical { i } else { rng.gen_range(0..logical) };
            plain.write(l).unwrap();
            logged.write(l).unwrap();
            logged.take_ops().for_each(drop);
        }
        assert_eq!(plain.stats(), logged.stats(), "{variant:?}");
        assert_eq!(plain.nand().counters(), logged.nand().counters(), "{variant:?}");
        assert!((0..logical).all(|l| plain.lookup(l) == logged.lookup(l)), "{variant:?}");
        assert!(plain.stats().map_writes > 0 && nand(&plain, OpKind::Erase, Cause::Gc) > 0);
        plain.check_invariants().unwrap();
    }
}

/// Zipf(θ) sampler over `n` items by inverse CDF (item 0 most popular).
struct Zipf(Vec<f64>);

impl Zipf {
    fn new(n: usize, theta: f64) -> Self {
        let mut acc = 0.0;
        let mut cdf: Vec<f64> = (1..=n)
            .map(|i| {
                acc += 1.0 / (i as f64).powf(theta);
                acc
            })
            .collect();
        cdf.iter_mut().for_each(|c| *c /= acc);
        Zipf(cdf)
    }
    fn sample(&self, rng: &mut impl Rng) -> u64 {
        let u: f64 = rng.gen();
        self.0.partition_point(|&c| c < u).min(self.0.len() - 1) as u64
    }
}

#[test]
fn on_zipf_hit_ratio_rises_and_map_traffic_falls_with_cache_size() {
    let g = dgeo(2, 64, 32, 256);
    let logical = 3000;
    let zipf = Zipf::new(logical as usize, 0.9);
    let mut last: Option<(f64, u64)> = None;
    for cache in [64, 256, 1024, 2048] {
        let mut f = Ftl::new(g, dsettings(&g, logical, Scheme::Dftl, cache, DftlVariant::Paper)).unwrap();
        (0..logical).for_each(|l| f.write(l).unwrap());
        let warm = *f.stats();
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(5);
        // A fixed permutation spreads the popular pages over translation pages.
        for _ in 0..30_000 {
            let l = zipf.sample(&mut rng) * 7919 % logical;
            if rng.gen_bool(0.7) {
                f.write(l).unwrap()
            } else {
                {
                    let _ = f.read(l).unwrap();
                }
            }
        }
        let st = f.stats().since(&warm);
        let hit = st.map_cache_hits as f64 / st.map_cache_lookups as f64;
        let traffic = st.map_reads + st.map_writes;
        if let Some((h, t)) = last {
            assert!(hit > h, "cache {cache}: hit ratio {hit} not above {h}");
            assert!(traffic < t, "cache {cache}: map traffic {traffic} not below {t}");
        }
        last = Some((hit, traffic));
        f.check_invariants().unwrap();
    }
}

/// 2 entries per translation page (8-byte pages, 4-byte entries), a CMT of 2 entries.
fn tiny(variant: DftlVariant) -> Ftl {
    let g = dgeo(1, 16, 4, 8);
    Ftl::new(g, dsettings(&g, 16, Scheme::Dftl, 2, variant)).unwrap()
}

#[test]
fn hand_built_sequence_gives_the_map_traffic_of_each_variant() {
    // W0 W1 W2 R0 R0 W3 W1 W0 W2; lpns 0,1 share translation page 0, lpns 2,3 page 1.
    // The traces (docs/mapping.md, "DFTL") give (hits, map reads, map writes):
    let want = [(2, 6, 4), (2, 7, 5), (1, 5, 4), (3, 6, 4)];
    for (variant, (hits, reads, writes)) in VARIANTS.into_iter().zip(want) {
        let mut f = tiny(variant);
        for (w, l) in
            [(true, 0), (true, 1), (true, 2), (false, 0), (false, 0), (true, 3), (true, 1), (true, 0), (true, 2)]
        {
            if w {
                f.write(l).unwrap()
            } else {
                {
                    let _ = f.read(l).unwrap();
                }
            }
        }
        let st = f.stats();
        assert_eq!(st.map_cache_lookups, 9, "{variant:?}");
        assert_eq!((st.map_cache_hits, st.map_reads, st.map_writes), (hits, reads, writes), "{variant:?}");
        assert_eq!(nand(&f, OpKind::Read, Cause::Mapping), reads, "{variant:?}");
        assert_eq!(nand(&f, OpKind::Program, Cause::Mapping), writes, "{variant:?}");
        assert_eq!(nand(&f, OpKind::Program, Cause::Host), 7);
        f.check_invariants().unwrap();
    }
}

#[test]
fn translation_blocks_are_collected_and_ops_are_logged_in_order() {
    let mut f = tiny(DftlVariant::Paper);
    f.set_record_ops(true);
    let mut logged: HashMap<(OpKind, Cause), u64> = HashMap::new();
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(1);
    for _ in 0..3000 {
        f.write(rng.gen_range(0..16)).unwrap();
        for op in f.take_ops() {
            *logged.entry((op.kind, op.cause)).or_default() += 1;
        }
    }
    f.check_invariants().unwrap();
    for kind in [OpKind::Read, OpKind::Program, OpKind::Erase] {
        let c = nand(&f, kind, Cause::Mapping);
        assert_eq!(logged.get(&(kind, Cause::Mapping)).copied().unwrap_or(0), c, "{kind:?}");
    }
    assert!(nand(&f, OpKind::Erase, Cause::Mapping) > 0, "translation GC erased translation blocks");
    assert!(nand(&f, OpKind::Erase, Cause::Gc) > 0, "data GC ran too");
    let st = f.stats();
    assert_eq!(nand(&f, OpKind::Program, Cause::Mapping), st.map_writes);
    assert_eq!(nand(&f, OpKind::Read, Cause::Mapping), st.map_reads);
}

#[test]
fn a_spare_too_small_for_translation_blocks_is_an_error() {
    let g = dgeo(1, 8, 4, 8);
    let Err(e) = Ftl::new(g, dsettings(&g, 24, Scheme::Dftl, 4, DftlVariant::Paper)) else { panic!("accepted") };
    assert!(e.to_string().contains("translation blocks"), "{e}");
}

fn dftl_ops(logical: u64) -> impl Strategy<Value = Vec<Op>> {
    let op = prop_oneof![
        6 => (0..logical).prop_map(Op::Write),
        2 => (0..logical).prop_map(Op::Read),
        1 => (0..logical).prop_map(Op::Trim),
    ];
    proptest::collection::vec(op, 1..2500)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 32, ..ProptestConfig::default() })]

    /// Model-based, every variant, small caches and 8-entry translation pages: a read
    /// returns the tag of the last write, nothing after a trim; strict invariants hold
    /// throughout (data pages mapped once through flash map + CMT, GTD at the valid copies).
    #[test]
    fn dftl_reads_return_last_write(
        v in 0usize..4, cache in 1u64..40, opts in options(), ops in dftl_ops(200)
    ) {
        let g = dgeo(2, 32, 8, 32);
        let mut s = dsettings(&g, 200, Scheme::Dftl, cache, VARIANTS[v]);
        apply_options(&mut s, opts);
        let mut f = Ftl::new(g, s).unwrap();
        let mut model: HashMap<u64, u32> = HashMap::new();
        for op in ops {
            match op {
                Op::Write(l) => { f.write(l).unwrap(); model.insert(l, f.last_tag()); }
                Op::Trim(l) => { f.trim(l).unwrap(); model.remove(&l); }
                Op::Read(l) => match (f.read(l).unwrap(), model.get(&l)) {
                    (ReadOutcome::Unmapped, None) => {}
                    (ReadOutcome::Mapped { tag, .. }, Some(&t)) => prop_assert_eq!(tag, Some(t)),
                    (got, want) => prop_assert!(false, "lpn {}: got {:?}, model {:?}", l, got, want),
                },
            }
        }
        f.check_invariants().unwrap();
        let st = *f.stats();
        prop_assert_eq!(nand(&f, OpKind::Program, Cause::Mapping), st.map_writes);
        prop_assert_eq!(nand(&f, OpKind::Read, Cause::Mapping), st.map_reads);
        prop_assert!(st.map_cache_hits <= st.map_cache_lookups);
    }
}
