//! Seed 000's optimisations: hot/cold journal heads, delayed hot-journal
//! commit, validity bitmap. Correctness (model, power cuts) with every
//! switch on, the worked example, and the GC read saving.

use flashlab_flashfs::powercut::{run_campaign, CampaignSettings};
use flashlab_flashfs::*;
use flashlab_hotdata::{IdentifierSpec, MultiHashParams};
use flashlab_mtd::{Nand, NandSettings};
use flashlab_ubi::{Ubi, UbiSettings};

fn fs_on(nand: NandSettings, cfg: FsSettings) -> Fs {
    let mut ubi = Ubi::format(Nand::new(nand), UbiSettings::default()).unwrap();
    let vol = ubi.create_volume("fs", 0).unwrap();
    Fs::format(ubi, vol, cfg).unwrap()
}

/// A multi-hash table that calls a key hot from its second write on.
fn eager() -> IdentifierSpec {
    IdentifierSpec::MultiHash(MultiHashParams {
        counters: 256,
        hot_threshold: Some(2),
        decay_period_writes: 400,
        ..MultiHashParams::default()
    })
}

/// A journal of 16 buds: these tests are about the hot/cold heads and the
/// delayed hot commit, which need a journal larger than UBIFS's default for
/// a 64-block test device (3 buds).
fn base() -> FsSettings {
    FsSettings { journal_max_buds: 16, ..Default::default() }
}

fn all_on() -> FsSettings {
    FsSettings {
        hot_journals: true,
        delayed_hot_commit_every: 2,
        lpt_validity_bitmap: true,
        hot_identifier: eager(),
        ..base()
    }
}

/// Seed 000, figures 7 and 8: four cold and four hot blocks are written,
/// checkpoint 1, three hot blocks are overwritten, checkpoint 2. Returns
/// the data-index updates committed at each checkpoint.
fn worked_example(cfg: FsSettings) -> (u64, u64) {
    let cfg = FsSettings { compression: Compression::None, ..cfg };
    let mut fs = fs_on(NandSettings::small(64, 64, 2048), cfg);
    let fd = fs.create("/f").unwrap();
    let block = |b: u64, v: u8| (b * 4096, vec![v; 4096]);
    for b in 0..8 {
        let (off, d) = block(b, 1);
        fs.write(fd, off, &d).unwrap();
    }
    // Blocks 0..4 become hot (written often), 4..8 stay cold.
    for round in 0..4 {
        for b in 0..4 {
            let (off, d) = block(b, 2 + round);
            fs.write(fd, off, &d).unwrap();
        }
    }
    fs.commit_all().unwrap();
    let u0 = fs.stats().fs.index_updates_data;
    for b in 0..8 {
        let (off, d) = block(b, 10);
        fs.write(fd, off, &d).unwrap();
    }
    fs.commit_now().unwrap();
    let u1 = fs.stats().fs.index_updates_data;
    for b in [0, 1, 3] {
        let (off, d) = block(b, 11);
        fs.write(fd, off, &d).unwrap();
    }
    fs.commit_now().unwrap();
    let u2 = fs.stats().fs.index_updates_data;
    fs.check_invariants().unwrap();
    (u1 - u0, u2 - u1)
}

#[test]
fn worked_example_baseline_commits_11_index_updates() {
    assert_eq!(worked_example(base()), (8, 3));
    let hot_only = FsSettings { hot_journals: true, ..base() };
    assert_eq!(worked_example(hot_only), (8, 3), "hot/cold heads alone do not delay");
}

#[test]
fn worked_example_delayed_hot_commit_commits_8() {
    let delayed = FsSettings { delayed_hot_commit_every: 2, ..base() };
    assert_eq!(worked_example(delayed), (4, 4));
    let all = FsSettings { hot_journals: true, delayed_hot_commit_every: 2, ..base() };
    assert_eq!(worked_example(all), (4, 4));
}

#[test]
fn settings_default_off_and_parse() {
    let d = FsSettings::default();
    assert!(!d.hot_journals && d.delayed_hot_commit_every == 0 && !d.lpt_validity_bitmap);
    let s: FsSettings = serde_json::from_str(
        r#"{"hot_journals": true, "hot_head_mapping": "shared-hot", "delayed_hot_commit_every": 3,
            "hot_journal_max_buds": 4, "lpt_validity_bitmap": true,
            "hot_identifier": {"kind": "two-level-lru"}, "hot_identifier_seed": 9}"#,
    )
    .unwrap();
    assert_eq!(s.hot_head_mapping, HotHeadMapping::SharedHot);
    s.validate().unwrap();
    assert!(serde_json::from_str::<FsSettings>(r#"{"hot_journal": true}"#).is_err());
}

/// Overwrites parts of three files on a nearly full device; returns stats.
fn gc_workload(cfg: FsSettings) -> (Stats, Fs) {
    let cfg = FsSettings { compression: Compression::None, strict: false, ..cfg };
    let mut fs = fs_on(NandSettings::small(40, 16, 2048), cfg);
    let fds: Vec<Fd> = (0..3).map(|i| fs.create(&format!("/f{i}")).unwrap()).collect();
    for fd in &fds {
        fs.write(*fd, 0, &vec![7u8; 80_000]).unwrap();
    }
    let mut x = 12345u32;
    for n in 0..600u32 {
        x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
        let f = (x >> 8) as usize % 3;
        let off = ((x >> 12) as u64 % 19) * 4096 + (x as u64 % 3) * 1000;
        if let Err(e) = fs.write(fds[f], off, &vec![(n % 251) as u8; 3000]) {
            panic!("{n}: {e} {:?} {}", fs.stats().fs, fs.debug_lprops());
        }
        if n % 101 == 0 {
            fs.check_invariants().unwrap();
        }
    }
    (fs.stats(), fs)
}

#[test]
fn validity_bitmap_lets_gc_read_fewer_pages() {
    let (without, _) = gc_workload(base());
    let (with, mut fs) = gc_workload(FsSettings { lpt_validity_bitmap: true, ..base() });
    eprintln!("without {:?}\nwith {:?}", without.fs, with.fs);
    assert!(without.gc_runs > 5 && with.gc_runs > 5);
    let per_run = |s: &Stats| s.fs.gc_pages_read as f64 / s.gc_runs as f64;
    assert!(per_run(&with) < per_run(&without), "{} vs {}", per_run(&with), per_run(&without));
    fs.check_invariants().unwrap();
    let bitmap = fs.validity_bitmap(fs.geometry().main_first);
    assert_eq!(bitmap.len(), 1);
}

#[test]
fn every_switch_alone_and_together_keeps_data() {
    let variants = [
        FsSettings { hot_journals: true, hot_identifier: eager(), ..base() },
        FsSettings { delayed_hot_commit_every: 2, hot_identifier: eager(), ..base() },
        FsSettings { lpt_validity_bitmap: true, ..base() },
        FsSettings { hot_head_mapping: HotHeadMapping::SharedHot, ..all_on() },
        FsSettings { hot_head_mapping: HotHeadMapping::HotDataOnly, delayed_hot_commit_every: 3, ..all_on() },
        all_on(),
    ];
    for cfg in variants {
        eprintln!("{cfg:?}");
        let (st, mut fs) = gc_workload(cfg.clone());
        fs.sync().unwrap();
        let ubi = Ubi::attach(fs.into_ubi().into_nand(), UbiSettings::default()).unwrap();
        let mut fs = Fs::mount(ubi, 0, cfg.clone()).unwrap();
        fs.check_invariants().unwrap();
        assert_eq!(fs.stat("/f1").unwrap().size, 80_000);
        if cfg.delay_on() {
            assert!(st.fs.cold_only_commits > 0 && st.fs.hot_commits > 0, "{:?}", st.fs);
        }
        if cfg.classify_on() {
            assert!(st.fs.hot_writes > 0 && st.fs.cold_writes > 0, "{:?}", st.fs);
        }
    }
}

fn campaign(fs: FsSettings, prefill: (u32, u32), ops: u32, k: u64) -> flashlab_flashfs::Stats {
    let s = CampaignSettings {
        flash: NandSettings::small(32, 16, 2048),
        fs,
        workload_ops: ops,
        every_k_ops: k,
        workload_seed: 21,
        max_file_bytes: 16_000,
        prefill_bytes: prefill.0,
        prefill_dead_bytes: prefill.1,
        ..CampaignSettings::default()
    };
    let t = std::time::Instant::now();
    let r = run_campaign(&s);
    eprintln!("{r:?} in {:?}", t.elapsed());
    assert_eq!(r.panics, 0, "{:?}", r.failures);
    assert_eq!(r.lost_fsynced_bytes, 0, "{:?}", r.failures);
    assert_eq!(r.invariant_violations, 0, "{:?}", r.failures);
    assert_eq!(r.cut_points, r.recoveries);
    assert!(r.cut_points > 500);
    let st = r.workload_stats.unwrap();
    assert!(st.fs.hot_writes > 0, "{:?}", st.fs);
    assert!(st.fs.cold_only_commits >= 3, "the delay must be exercised: {:?}", st.fs);
    st
}

#[test]
fn powercut_campaign_all_optimisations_on() {
    campaign(FsSettings { journal_max_buds: 8, hot_journal_max_buds: 8, ..all_on() }, (0, 0), 500, 1);
}

#[test]
fn powercut_campaign_all_optimisations_on_with_gc() {
    // Without the page cache: every write goes to the journal at once.
    // An aged volume (partly dirty prefill LEBs): 9 GC runs, 4 ENOSPC.
    let fs = FsSettings { hot_journal_max_buds: 6, page_cache: false, ..all_on() };
    let st = campaign(fs, (110_000, 80_000), 400, 2);
    assert!(st.gc_runs > 0 && st.fs.enospc > 0, "GC and ENOSPC near full: {:?}", st.fs);
}

#[test]
fn powercut_campaign_delayed_commit_alone() {
    let fs = FsSettings {
        delayed_hot_commit_every: 3,
        journal_max_buds: 8,
        hot_journal_max_buds: 6,
        hot_identifier: eager(),
        compression: Compression::Zstd,
        ..base()
    };
    campaign(fs, (100_000, 0), 650, 2);
}

mod model_based {
    use super::*;
    use flashlab_flashfs::model::*;
    use proptest::prelude::*;

    fn op() -> impl Strategy<Value = Op> {
        let p = 0..PATHS.len();
        prop_oneof![
            3 => p.clone().prop_map(Op::Create),
            1 => p.clone().prop_map(Op::Mkdir),
            8 => (p.clone(), 0u32..20_000, 1u32..9_000, any::<u8>()).prop_map(|(path, off, len, byte)| Op::Write { path, off, len, byte }),
            2 => (p.clone(), 0u32..20_000).prop_map(|(path, size)| Op::Truncate { path, size }),
            2 => p.clone().prop_map(Op::Unlink),
            1 => p.clone().prop_map(Op::Rmdir),
            2 => (p.clone(), p.clone()).prop_map(|(a, b)| Op::Rename(a, b)),
            1 => p.clone().prop_map(Op::Hold),
            1 => Just(Op::CloseAll),
            1 => p.clone().prop_map(Op::Fsync),
            2 => Just(Op::Commit),
            2 => p.clone().prop_map(Op::Check),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 24, failure_persistence: None, ..ProptestConfig::default() })]

        #[test]
        fn matches_reference_fs_with_all_switches(ops in proptest::collection::vec(op(), 1..120), every in 2u32..4, crash in any::<bool>()) {
            let cfg = FsSettings { strict: true, delayed_hot_commit_every: every, journal_max_buds: 4, ..all_on() };
            let mut fs = fs_on(NandSettings::small(64, 16, 2048), cfg.clone());
            let mut model = ModelFs::default();
            let (mut held_fs, mut held_m) = (Vec::new(), Vec::new());
            for (i, op) in ops.iter().enumerate() {
                let got = apply_fs(&mut fs, &mut held_fs, op).unwrap();
                if got == Err(Errno::ENOSPC) {
                    continue;
                }
                let want = apply_model(&mut model, &mut held_m, op);
                prop_assert_eq!(got, want, "op {} {:?}", i, op);
            }
            let ubi = if crash { fs.sync().unwrap(); fs.into_ubi() } else { fs.unmount().unwrap() };
            let ubi = Ubi::attach(ubi.into_nand(), UbiSettings::default()).unwrap();
            let mut fs = Fs::mount(ubi, 0, cfg).unwrap();
            fs.check_invariants().unwrap();
            held_fs.clear();
            held_m.clear();
            for p in 0..PATHS.len() {
                let got = apply_fs(&mut fs, &mut held_fs, &Op::Check(p)).unwrap();
                prop_assert_eq!(got, apply_model(&mut model, &mut held_m, &Op::Check(p)));
            }
        }
    }
}
