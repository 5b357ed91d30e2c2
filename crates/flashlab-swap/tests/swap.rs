//! flashlab-swap: scripted allocator decisions with exact expectations, a model-based
//! test of random swap-out / swap-in / free under every allocator and several FTLs,
//! the memory model, application models, traces and bad input.

use flashlab_config::RawSwap;
use flashlab_sim::{Settings, Ssd};
use flashlab_swap::alloc::scan::scan_swap_map;
use flashlab_swap::area::{Discard, SwapArea, CLUSTER};
use flashlab_swap::{
    trace, AllocatorKind, AppModel, BlockDev, DeviceFlags, DeviceKind, SwapError, SwapSettings, SwapSystem, Workload,
};
use flashlab_swap::{Allocator, Ref};

const SSD: DeviceFlags = DeviceFlags { solid_state: true, discardable: true };

fn get(al: &mut Allocator, a: &mut SwapArea) -> (u32, Option<Discard>) {
    al.get(a, SSD).expect("a free slot")
}

#[test]
fn linux_discards_each_unaligned_cluster_it_finds() {
    let mut a = SwapArea::new(4 * CLUSTER);
    let mut al = Allocator::new(AllocatorKind::Linux, &a);
    assert_eq!(al.swapon(&mut a, SSD), Some(Discard { start: 1, len: 4 * CLUSTER - 1 }));
    // cluster_next = 1: the first free cluster starts at slot 1 (not aligned).
    assert_eq!(get(&mut al, &mut a), (1, Some(Discard { start: 1, len: CLUSTER })));
    for s in 2..=CLUSTER {
        assert_eq!(get(&mut al, &mut a), (s, None));
    }
    assert_eq!(get(&mut al, &mut a), (CLUSTER + 1, Some(Discard { start: CLUSTER + 1, len: CLUSTER })));
    // Free slot 5 and use the cluster up: the first-free scan does not come back to 5
    // until a new cluster search fails.
    al.free(&mut a, 5, SSD);
    for s in CLUSTER + 2..=2 * CLUSTER {
        assert_eq!(get(&mut al, &mut a).0, s);
    }
    assert_eq!(get(&mut al, &mut a), (2 * CLUSTER + 1, Some(Discard { start: 2 * CLUSTER + 1, len: CLUSTER })));
    a.check().unwrap();
}

#[test]
fn none_never_discards_and_rotational_scans_from_lowest_bit() {
    let mut a = SwapArea::new(3 * CLUSTER);
    let disk = DeviceFlags { solid_state: false, discardable: false };
    let mut al = Allocator::new(AllocatorKind::None, &a);
    assert_eq!(al.swapon(&mut a, disk), None);
    a.cluster_next = 300;
    // Not solid state: the cluster search starts from lowest_bit = 1.
    assert_eq!(al.get(&mut a, disk), Some((1, None)));
    let mut al = Allocator::new(AllocatorKind::Linux, &a);
    let mut b = SwapArea::new(3 * CLUSTER);
    b.cluster_next = 300;
    assert_eq!(al.get(&mut b, disk), Some((1, None)), "no discard without SWP_DISCARDABLE");
}

#[test]
fn scan_falls_back_to_first_free_when_no_cluster_is_free() {
    let mut a = SwapArea::new(2 * CLUSTER);
    for s in 1..2 * CLUSTER {
        a.take(s);
    }
    for s in [7, 300] {
        a.free(s);
    }
    a.cluster_nr = 0;
    a.cluster_next = 100;
    let f = scan_swap_map(&mut a, true).unwrap();
    assert_eq!((f.slot, f.free_cluster), (300, None));
    a.take(300);
    assert_eq!(scan_swap_map(&mut a, true).unwrap().slot, 7);
}

#[test]
fn semantic_merges_sixteen_aligned_clusters_then_reuses_written_ones() {
    let mut a = SwapArea::new(40 * CLUSTER);
    let mut al = Allocator::new(AllocatorKind::Semantic, &a);
    al.swapon(&mut a, SSD);
    // Rule 1 and 3: clusters 1..=16 (cluster 0 holds the header), trimmed at once, aligned.
    assert_eq!(get(&mut al, &mut a), (CLUSTER, Some(Discard { start: CLUSTER, len: 16 * CLUSTER })));
    let mut last = CLUSTER;
    for _ in 1..16 * CLUSTER {
        let (s, d) = get(&mut al, &mut a);
        assert_eq!((s, d), (last + 1, None));
        last = s;
        a.mark_written(s);
    }
    assert_eq!(last, 17 * CLUSTER - 1);
    // Free cluster 3 wholly: written free slots, reused next without TRIM (rule 2).
    for s in 3 * CLUSTER..4 * CLUSTER {
        al.free(&mut a, s, SSD);
    }
    assert_eq!(get(&mut al, &mut a), (3 * CLUSTER, None));
    for _ in 1..CLUSTER {
        get(&mut al, &mut a);
    }
    // No written free cluster: 16 more past the last trimmed range (clusters 17..=32).
    assert_eq!(get(&mut al, &mut a), (17 * CLUSTER, Some(Discard { start: 17 * CLUSTER, len: 16 * CLUSTER })));
    a.check().unwrap();
}

#[test]
fn semantic_without_sixteen_free_clusters_takes_any_aligned_free_one() {
    let mut a = SwapArea::new(8 * CLUSTER);
    let mut al = Allocator::new(AllocatorKind::Semantic, &a);
    assert_eq!(get(&mut al, &mut a), (CLUSTER, None));
}

#[test]
fn modern_hands_out_aligned_free_clusters_and_discards_on_free() {
    let mut a = SwapArea::new(4 * CLUSTER);
    let mut al = Allocator::new(AllocatorKind::LinuxModern, &a);
    assert_eq!(al.swapon(&mut a, SSD), Some(Discard { start: 1, len: 4 * CLUSTER - 1 }));
    for s in CLUSTER..3 * CLUSTER {
        assert_eq!(get(&mut al, &mut a), (s, None));
    }
    // Cluster 1 wholly freed: discarded at once, then back at the tail of the free list.
    for s in CLUSTER..2 * CLUSTER - 1 {
        assert_eq!(al.free(&mut a, s, SSD), None);
    }
    assert_eq!(al.free(&mut a, 2 * CLUSTER - 1, SSD), Some(Discard { start: CLUSTER, len: CLUSTER }));
    assert_eq!(get(&mut al, &mut a), (3 * CLUSTER, None));
    for _ in 1..CLUSTER {
        get(&mut al, &mut a);
    }
    assert_eq!(get(&mut al, &mut a), (CLUSTER, None));
    // No free cluster left: the first free slot (cluster 0 after the header).
    for _ in 1..CLUSTER {
        get(&mut al, &mut a);
    }
    assert_eq!(get(&mut al, &mut a), (1, None));
    a.check().unwrap();
}

#[test]
#[should_panic(expected = "covers slot")]
fn a_discard_over_a_slot_in_use_is_caught() {
    let mut a = SwapArea::new(2 * CLUSTER);
    a.take(10);
    a.mark_discarded(Discard { start: 1, len: 20 });
}

fn ssd_settings(sets: &[&str]) -> Settings {
    let mut all = vec![
        "device.channels=1",
        "device.chips_per_channel=1",
        "device.dies_per_chip=2",
        "device.planes_per_die=1",
        "device.blocks_per_plane=256",
        "device.pages_per_block=64",
        "sim.strict=true",
    ];
    all.extend_from_slice(sets);
    let sets: Vec<String> = all.iter().map(|s| s.to_string()).collect();
    flashlab_config::load("", "test", &sets).unwrap().1
}

fn swap_settings(kind: AllocatorKind, ram_mib: u64, swap_mib: u64, ssd: &Settings) -> SwapSettings {
    let raw = RawSwap { allocator: kind.name().into(), ram_mib, swap_mib, ..RawSwap::default() };
    SwapSettings::resolve(&raw, ssd).unwrap()
}

fn system(kind: AllocatorKind, sets: &[&str], pages: u32) -> SwapSystem {
    let ssd = ssd_settings(sets);
    let s = swap_settings(kind, 1, 24, &ssd);
    let timed = ssd.timing.is_some();
    SwapSystem::new(s, BlockDev::Ssd(Box::new(Ssd::new(ssd).unwrap())), pages, true, timed).unwrap()
}

/// Thousands of random swap-outs, swap-ins (reads and writes) and frees: every
/// swap-in finds on the SSD the content its page last swapped out (checked inside
/// the system against the SSD's content tags; strict mode checks the FTL).
#[test]
fn every_swap_in_returns_the_last_content_under_every_allocator_and_ftl() {
    for ftl in ["page", "dftl", "bast", "fast"] {
        for kind in AllocatorKind::ALL {
            let m = format!("ftl.mapping=\"{ftl}\"");
            let sets = [m.as_str(), "ftl.log_blocks=16", "ftl.map_cache_entries=256"];
            let pages = 3000;
            let mut sys = system(kind, &sets, pages);
            let mut x = 0x1234_5678u64;
            for i in 0..6000u32 {
                x = flashlab_workload::mix64(x.wrapping_add(i as u64));
                let page = (x % pages as u64) as u32;
                match (x >> 32) % 8 {
                    0 | 1 => sys.evict(page).unwrap(),
                    2 => sys.release(page).unwrap(),
                    3..=5 => sys.access(page, false).unwrap(),
                    _ => sys.access(page, true).unwrap(),
                }
                if i % 1000 == 0 {
                    sys.check_invariants().unwrap();
                }
            }
            sys.check_invariants().unwrap();
            let r = sys.result("random", pages);
            assert!(r.swap_ins > 500 && r.swap_outs > 500, "{ftl} {kind:?}: {r:?}");
            if kind == AllocatorKind::None {
                assert_eq!(r.trim_commands, 0);
            }
        }
    }
}

#[test]
fn the_content_check_catches_a_trim_over_a_slot_in_use() {
    let mut sys = system(AllocatorKind::Linux, &[], 2000);
    sys.access(7, true).unwrap();
    sys.evict(7).unwrap();
    let slot = sys.mem.slot_of[7];
    sys.dev.discard(slot, 1, 0).unwrap();
    match sys.access(7, false) {
        Err(SwapError::Content(msg)) => assert!(msg.contains("page 7"), "{msg}"),
        other => panic!("expected a content error, got {other:?}"),
    }
}

fn app(text: &str) -> AppModel {
    AppModel::from_toml(text, "app.toml").unwrap()
}

const SMALL_APP: &str = r#"
name = "small"
provenance = "test"
footprint_mib = 3
references = 20000
cpu_ns_per_reference = 1000
write_fraction = 0.5
sequential_share = 0.5
hot_fraction = 0.1
hot_share = 0.5
"#;

#[test]
fn runs_are_deterministic_and_count_their_work() {
    let ssd = ssd_settings(&["sim.strict=false"]);
    let m = app(SMALL_APP);
    let go = |kind| {
        let s = swap_settings(kind, 1, 24, &ssd);
        let dev = BlockDev::Ssd(Box::new(Ssd::new(ssd.clone()).unwrap()));
        flashlab_swap::run(&s, dev, Workload::App(&m), false, true).unwrap()
    };
    let (a, b) = (go(AllocatorKind::Linux), go(AllocatorKind::Linux));
    assert_eq!(a, b);
    assert!(a.swapping && a.swap_outs > 0 && a.swap_ins > 0 && a.trim_commands > 0);
    assert_eq!(a.references, 20000 + 3 * 256);
    let run = a.run_time_s.unwrap();
    let parts = a.cpu_time_s + a.swap_io_wait_s.unwrap() + a.trim_wait_s.unwrap();
    assert!((run - parts).abs() < 1e-6 + run * 1e-9, "run {run} = cpu + waits {parts}");
    let n = go(AllocatorKind::None);
    assert_eq!((n.trim_commands, n.swapon_trim_ms), (0, None));
    let sem = go(AllocatorKind::Semantic);
    assert!(sem.trim_commands < a.trim_commands, "semantic {} linux {}", sem.trim_commands, a.trim_commands);
}

#[test]
fn a_footprint_that_fits_in_ram_does_not_swap() {
    let ssd = ssd_settings(&[]);
    let s = swap_settings(AllocatorKind::Linux, 4, 24, &ssd);
    let m = app(SMALL_APP);
    let dev = BlockDev::Ssd(Box::new(Ssd::new(ssd).unwrap()));
    let r = flashlab_swap::run(&s, dev, Workload::App(&m), true, true).unwrap();
    assert!(!r.swapping);
    assert_eq!((r.swap_outs, r.swap_ins, r.trim_commands), (0, 0, 0));
    assert_eq!(r.run_time_s, Some(r.cpu_time_s));
}

#[test]
fn disk_baseline_runs_the_same_model() {
    let ssd = ssd_settings(&[]);
    let mut raw = RawSwap { ram_mib: 1, swap_mib: 24, device: "disk".into(), ..RawSwap::default() };
    raw.allocator = "linux".into();
    let s = SwapSettings::resolve(&raw, &ssd).unwrap();
    assert_eq!(s.device, DeviceKind::Disk);
    let disk = flashlab_swap::disk::Disk::new(Default::default(), 24 << 20, s.slots);
    let m = app(SMALL_APP);
    let r = flashlab_swap::run(&s, BlockDev::Disk(disk), Workload::App(&m), true, true).unwrap();
    assert!(r.swapping && r.trim_commands == 0 && r.ssd_waf.is_none());
}

#[test]
fn disk_seek_and_rotation() {
    let mut d = flashlab_swap::disk::Disk::new(Default::default(), 1 << 30, 16);
    // From position 0 to 1 GiB: full stroke 16 ms + half a turn at 7200 rpm 4.1667 ms + 4 KiB at 100 MB/s 40.96 µs.
    assert_eq!(d.access(1 << 30, 4096, 0), 16_000_000 + 4_166_666 + 40_960);
    let t = d.access((1 << 30) + 4096, 4096, 0);
    assert_eq!(t, 16_000_000 + 4_166_666 + 2 * 40_960, "sequential: transfer only");
}

#[test]
fn bad_input_is_one_line_naming_the_key() {
    let ssd = ssd_settings(&[]);
    let err = |raw: RawSwap| SwapSettings::resolve(&raw, &ssd).unwrap_err().to_string();
    let e = err(RawSwap { allocator: "lru".into(), ..RawSwap::default() });
    assert_eq!(e, "swap.allocator = \"lru\": expected one of \"none\", \"linux\", \"linux-modern\", \"semantic\"");
    let e = err(RawSwap { swap_mib: 4096, ..RawSwap::default() });
    assert!(e.starts_with("swap.swap_mib = 4096: expected at most the SSD's logical capacity"), "{e}");
    let e = AppModel::from_toml("name = 1", "apps/x.toml").unwrap_err().to_string();
    assert!(e.starts_with("application model apps/x.toml:") && !e.contains('\n'), "{e}");
    let e = AppModel::from_toml(&SMALL_APP.replace("0.5\nsequential", "1.5\nsequential"), "a.toml").unwrap_err();
    assert_eq!(e.to_string(), "application model a.toml: write_fraction: expected a fraction in [0, 1]");
    let e = trace::parse("R 0x1000\nX 12\n", "t.txt").unwrap_err().to_string();
    assert!(e.starts_with("reference trace t.txt:2: expected a reference kind"), "{e}");
    let e = trace::parse(" L zz,4\n", "t.txt").unwrap_err().to_string();
    assert!(e.starts_with("reference trace t.txt:1: expected an address"), "{e}");
}

#[test]
fn lackey_and_plain_traces_parse_to_dense_pages() {
    let text = "==123== Lackey\nI  04000000,3\n L 7ff000010,8\n S 7ff000ff8,8\n M 04001000,4\n# c\nW 0x2000\nR 8192\n";
    let t = trace::parse(text, "t").unwrap();
    let pages: Vec<(u32, bool)> = t.refs.iter().map(|r| (r.page, r.write)).collect();
    assert_eq!(pages, vec![(0, false), (1, false), (1, true), (2, true), (3, true), (3, false)]);
    assert_eq!(t.pages, 4);
    let _ = Ref { page: 0, write: false };
}

#[test]
fn application_models_in_the_repository_parse() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/swap/apps");
    let mut n = 0;
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        let m = AppModel::from_toml(&std::fs::read_to_string(&p).unwrap(), &p.display().to_string()).unwrap();
        assert!(m.footprint_mib > 1024, "{}: the seed's applications need more than 1 GB", m.name);
        n += 1;
    }
    assert_eq!(n, 4);
}
