//! The F2FS model: mkfs layout, temperature rules, checkpoints, fsync,
//! cleaning, SSR, discard, ENOSPC, settings, and a model-based property
//! test against an oracle of names, sizes and content tags.

use flashlab_f2fs::{best_overprovision, F2fs, F2fsSettings, IpuPolicy, KernelRules, Layout, LogType, MkfsTools, NONE};
use flashlab_sim::Ssd;
use flashlab_vfs::{CacheSettings, Errno, Fd, FileSystem, PageCache};

mod meta;
mod oracle;

const MIB: u64 = 1 << 20;

/// An SSD of `phys_mib` MiB of 4 KiB pages (20 % spare), counting mode unless `timed`.
pub fn ssd(phys_mib: u32, timed: bool) -> Ssd {
    let sets: Vec<String> = [
        "device.page_bytes=4096".to_string(),
        "device.channels=2".into(),
        "device.chips_per_channel=1".into(),
        "device.dies_per_chip=2".into(),
        "device.planes_per_die=1".into(),
        "device.pages_per_block=64".into(),
        format!("device.blocks_per_plane={phys_mib}"),
        format!("timing.enabled={timed}"),
        "sim.strict=true".into(),
    ]
    .to_vec();
    Ssd::new(flashlab_config::load("", "test", &sets).unwrap().1).unwrap()
}

pub fn strict() -> F2fsSettings {
    F2fsSettings { strict: true, ..Default::default() }
}

pub fn fs(phys_mib: u32, cfg: F2fsSettings) -> F2fs {
    F2fs::format(ssd(phys_mib, false), cfg).unwrap()
}

fn page(tag: u64) -> Vec<u8> {
    tag.to_le_bytes().iter().copied().cycle().take(4096).collect()
}

fn log_of_block(f: &F2fs, b: u32) -> LogType {
    assert_ne!(b, NONE);
    f.segment_log(b / 512)
}

#[test]
fn mkfs_layout_of_a_256_mib_volume() {
    let l = Layout::new(256 * MIB, 1, 1, None).unwrap();
    // Superblocks in the first 2 MiB zone; 127 segments after it.
    assert_eq!((l.segment0_blkaddr, l.segment_count), (512, 127));
    // SIT: ceil(127 / 55) = 3 blocks → 1 segment, ×2 copies. NAT: ceil(123 × 512 / 455) = 139
    // blocks → 1 segment, ×2. SSA: 121 + 1 = 122 blocks → 1 segment.
    assert_eq!((l.segment_count_ckpt, l.segment_count_sit, l.segment_count_nat, l.segment_count_ssa), (2, 2, 2, 1));
    assert_eq!((l.segment_count_main, l.section_count), (120, 120));
    assert_eq!((l.sit_blkaddr, l.nat_blkaddr, l.ssa_blkaddr, l.main_blkaddr), (1536, 2560, 3584, 4096));
    // Below 256 main segments the candidates are 10, 15, … 95 %; 20 % leaves
    // 120 − max(18, 20.4) − 2 = 97.6 segments, the most.
    assert_eq!(l.overprovision, 20.0);
    // reserved = (2 × (100 / 20 + 1) + 6) × 1 = 18; ovp = (120 − 18) × 20 / 100 = 20 (+ 18).
    assert_eq!((l.reserved_segments, l.overprov_segments), (18, 38));
    assert_eq!(l.user_block_count, (120 - 38) * 512);
}

#[test]
fn mkfs_layout_of_a_64_mib_volume() {
    let l = Layout::new(64 * MIB, 1, 1, None).unwrap();
    assert_eq!(l.segment_count, 31);
    assert_eq!((l.segment_count_sit, l.segment_count_nat, l.segment_count_ssa, l.segment_count_main), (2, 2, 1, 24));
    // 75 %: reserved (2 × (100/75 + 1) + 6) = 10.67 → 10; space 24 − 10.67 − 2 = 11.33, the most.
    assert_eq!(best_overprovision(24, 1), 75.0);
    assert_eq!((l.reserved_segments, l.overprov_segments, l.user_block_count), (10, 20, 4 * 512));
    // An explicit ratio: reserved (2 × (100/50 + 1) + 6) = 12, ovp (24 − 12) / 2 = 6 (+ 12).
    let l = Layout::new(64 * MIB, 1, 1, Some(50.0)).unwrap();
    assert_eq!((l.reserved_segments, l.overprov_segments), (12, 18));
    // Sections of 2 segments: the reserved segments double, main is whole sections.
    let l2 = Layout::new(256 * MIB, 2, 1, Some(20.0)).unwrap();
    assert_eq!((l2.segment_count_main % 2, l2.reserved_segments), (0, 36));
    assert!(Layout::new(16 * MIB, 1, 1, None).is_err(), "too small for 6 logs and reserved segments");
}

#[test]
fn mkfs_of_f2fs_tools_1_1_gives_seed_004s_reserved_and_overprovision() {
    // A 4 GiB volume: 2047 segments after the superblock zone; SIT 2 × 1, NAT 2 × 5
    // (ceil(2043 × 512 / 455) = 2299 blocks → 5 segments), SSA ceil(2034 / 512) = 4:
    // 2047 − 2 − 2 − 10 − 4 = 2029 main segments.
    let l = Layout::with_tools(4096 * MIB, 1, 1, None, MkfsTools::V1_1).unwrap();
    assert_eq!(l.segment_count_main, 2029);
    // -o 5 (the default): reserved (100 / 5 + 5) = 25 segments = 50 MB; overprovision
    // (2029 − 25) × 5 / 100 = 100 (+ 25) = 125 segments = 250 MB: Table 2 of seed 004.
    assert_eq!((l.overprovision, l.reserved_segments, l.overprov_segments), (5.0, 25, 125));
    assert_eq!(l.user_block_count, (2029 - 125) * 512);
    // Integer arithmetic as atoi and C division: -o 7 → 100 / 7 = 14, + 5 = 19 reserved.
    let l = Layout::with_tools(4096 * MIB, 2, 1, Some(7.0), MkfsTools::V1_1).unwrap();
    assert_eq!(l.reserved_segments, 38);
    // Today's rule on the same volume differs (best ratio, 2 × (100 / ovp + 1) + 6).
    let now = Layout::new(4096 * MIB, 1, 1, Some(5.0)).unwrap();
    assert_eq!((now.reserved_segments, now.overprov_segments), (48, 147));
    // A fractional -o is refused under 1.1 (atoi), naming the key.
    let s: F2fsSettings = toml::from_str("mkfs_tools = \"1.1\"\noverprovision_ratio = 2.5").unwrap();
    assert!(s.validate().unwrap_err().to_string().starts_with("fs.f2fs.overprovision_ratio: must be a whole"), "{s:?}");
    let e = toml::from_str::<F2fsSettings>("kernel = \"2.6\"").unwrap_err().to_string();
    assert!(e.contains("3.8"), "{e}");
}

/// Random 4 KiB overwrites of a file filling `fill_pct` % of the user blocks, then the stats.
fn random_overwrites(cfg: F2fsSettings, fill_pct: u64, rounds: u64) -> (F2fs, flashlab_f2fs::F2fsStats) {
    let mut f = fs(160, cfg);
    let n = f.layout().user_block_count * fill_pct / 100;
    let fd = f.create("/f").unwrap();
    for k in 0..n {
        f.write(fd, k * 4096, &page(k)).unwrap();
    }
    f.sync().unwrap();
    let mut x = 99u64;
    for i in 0..rounds * n {
        x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        f.write(fd, ((x >> 33) % n) * 4096, &page(i)).unwrap();
    }
    f.sync().unwrap();
    f.check().unwrap();
    let s = f.stats().clone();
    (f, s)
}

#[test]
fn linux_3_8_rules_recycle_below_the_overprovision_sections_and_never_update_in_place() {
    let k38 = F2fsSettings {
        kernel: KernelRules::Linux3_8,
        mkfs_tools: MkfsTools::V1_1,
        ipu_policy: IpuPolicy::Force,
        overprovision_ratio: 40.0,
        strict: true,
        ..Default::default()
    };
    let (f, s) = random_overwrites(k38.clone(), 80, 2);
    let l = f.layout().clone();
    // -o 40: reserved 100 / 40 + 5 = 7, overprovision (56 − 7) × 40 % + 7 = 26 segments.
    assert_eq!((l.segment_count_main, l.reserved_segments, l.overprov_segments), (56, 7, 26));
    // 3.8's need_SSR (free sections < 26) holds well before today's (free ≤ pending + 2 × 7).
    assert!(s.ssr_segments > 0, "{s:?}");
    // need_inplace_update is never true in 3.8, whatever ipu_policy says.
    assert_eq!(s.ipu_blocks_written, 0, "{s:?}");
    // Today's rules with ipu_policy = force update every rewrite in place.
    let now = F2fsSettings { kernel: KernelRules::Current, ..k38 };
    let (_, s2) = random_overwrites(now, 80, 2);
    assert!(s2.ipu_blocks_written > 0, "{s2:?}");
}

#[test]
fn temperature_rules_pick_the_log_of_each_block() {
    use flashlab_f2fs::NodeKind::*;
    use flashlab_f2fs::{LogType as L, NodeKind};
    let _: NodeKind = Inode;
    assert_eq!(L::for_node(Inode, true), L::HotNode);
    assert_eq!(L::for_node(Direct, true), L::HotNode);
    assert_eq!(L::for_node(Inode, false), L::WarmNode);
    assert_eq!(L::for_node(Direct, false), L::WarmNode);
    assert_eq!(L::for_node(Indirect, false), L::ColdNode);
    assert_eq!(L::for_node(Indirect, true), L::ColdNode);

    let mut f = fs(160, strict());
    f.mkdir("/d").unwrap();
    let fd = f.create("/d/f").unwrap();
    let cold = f.create("/d/movie.mp4").unwrap();
    // Blocks 0, 923 (first direct node) and 923 + 2 × 1018 (under the first indirect node).
    for k in [0u64, 923, 923 + 2 * 1018] {
        f.write(fd, k * 4096, &page(k + 1)).unwrap();
    }
    f.write(cold, 0, &page(7)).unwrap();
    f.sync().unwrap();
    let (ino, i) = f.inode_of("/d/f").unwrap();
    let (dino, d) = f.inode_of("/d").unwrap();
    assert_eq!(log_of_block(&f, i.blocks[0]), L::WarmData);
    assert_eq!(log_of_block(&f, d.blocks[0]), L::HotData, "directory entries");
    assert_eq!(log_of_block(&f, f.node_block(ino)), L::WarmNode, "a file's inode");
    assert_eq!(log_of_block(&f, f.node_block(dino)), L::HotNode, "a directory's inode");
    assert_eq!(log_of_block(&f, f.node_block(i.dnodes[0])), L::WarmNode, "a file's direct node");
    assert_eq!(log_of_block(&f, f.node_block(i.inds[0])), L::ColdNode, "an indirect node");
    let (_, c) = f.inode_of("/d/movie.mp4").unwrap();
    assert_eq!(log_of_block(&f, c.blocks[0]), L::ColdData, "a cold-marked file");
    f.check().unwrap();
}

#[test]
fn fsync_checkpoints_a_new_file_then_rolls_forward() {
    let mut f = fs(160, strict());
    let fd = f.create("/a").unwrap();
    f.write(fd, 0, &page(1)).unwrap();
    f.fsync(fd).unwrap();
    let s = f.stats().clone();
    assert_eq!((s.checkpoints_fsync, s.roll_forward_fsyncs), (1, 0));
    f.write(fd, 4096, &page(2)).unwrap();
    f.fsync(fd).unwrap();
    let s = f.stats().clone();
    assert_eq!((s.checkpoints_fsync, s.roll_forward_fsyncs), (1, 1));
    // Only the inode (the block is in the inode's own addresses) with the fsync mark.
    assert_eq!(s.fsync_node_blocks_written, 1);
}

#[test]
fn fsync_of_few_pages_updates_in_place_under_the_default_policy() {
    let mut c = PageCache::new(fs(160, strict()), CacheSettings::default(), 0);
    let fd = c.create("/a").unwrap();
    c.write(fd, 0, &page(1)).unwrap();
    c.fsync(fd).unwrap();
    let b0 = c.inner().inode_of("/a").unwrap().1.blocks[0];
    c.write(fd, 0, &page(2)).unwrap();
    c.fsync(fd).unwrap();
    assert_eq!(c.inner().inode_of("/a").unwrap().1.blocks[0], b0, "IPU: same block");
    assert_eq!(c.inner().stats().ipu_blocks_written, 1);
    // Writeback without fsync goes out of place.
    c.write(fd, 0, &page(3)).unwrap();
    c.sync().unwrap();
    assert_ne!(c.inner().inode_of("/a").unwrap().1.blocks[0], b0);
    let mut lfs =
        PageCache::new(fs(160, F2fsSettings { ipu_policy: IpuPolicy::None, ..strict() }), CacheSettings::default(), 0);
    let fd = lfs.create("/a").unwrap();
    lfs.write(fd, 0, &page(1)).unwrap();
    lfs.fsync(fd).unwrap();
    lfs.write(fd, 0, &page(2)).unwrap();
    lfs.fsync(fd).unwrap();
    assert_eq!(lfs.inner().stats().ipu_blocks_written, 0);
}

#[test]
fn checkpoint_every_cp_interval_and_discard_of_freed_segments() {
    let mut f = fs(160, strict());
    let fd = f.create("/a").unwrap();
    for k in 0..1024u64 {
        f.write(fd, k * 4096, &page(k)).unwrap();
    }
    f.advance_to(59_000_000_000).unwrap();
    assert_eq!(f.stats().checkpoints_interval, 0);
    f.advance_to(60_000_000_000).unwrap();
    assert_eq!(f.stats().checkpoints_interval, 1);
    f.close(fd).unwrap();
    f.unlink("/a").unwrap();
    assert_eq!(f.stats().discarded_blocks, 0);
    f.sync().unwrap();
    // The file filled two warm-data segments: the first became free and was
    // TRIMmed; the second is still the warm-data log's current segment.
    assert_eq!(f.stats().discarded_blocks, 512, "{:?}", f.stats());
    assert_eq!(f.curseg(LogType::WarmData).1, 512);
    let trims = f.ssd_mut().unwrap().result().trim_requests;
    assert!(trims >= 2, "mkfs's TRIM and the discards: {trims}");
}

#[test]
fn filling_the_volume_is_enospc_not_a_panic_and_cleaning_runs_when_nearly_full() {
    let mut f = fs(80, F2fsSettings::default());
    let user = f.layout().user_block_count;
    let fd = f.create("/big").unwrap();
    let mut k = 0u64;
    let err = loop {
        match f.write(fd, k * 4096, &page(k)) {
            Ok(_) => k += 1,
            Err(e) => break e,
        }
        assert!(k <= user, "wrote past the user blocks");
    };
    assert_eq!(err.errno(), Errno::ENOSPC);
    f.check().unwrap();
    // Free 10 % and overwrite at random: cleaning (or SSR) keeps going.
    f.ftruncate(fd, k * 4096 * 9 / 10).unwrap();
    let n = k * 9 / 10;
    let mut x = 12345u64;
    for i in 0..(4 * n) {
        x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        let blk = (x >> 33) % n;
        f.write(fd, blk * 4096, &page(i)).unwrap();
        if i % 4096 == 0 {
            f.check().unwrap();
        }
    }
    f.sync().unwrap();
    f.check().unwrap();
    let s = f.stats().clone();
    println!("nearly full, 4 × random overwrite of 90 %: {s:?}");
    assert!(s.fg_gc_sections > 0 || s.ssr_segments > 0, "{s:?}");
    assert!(s.gc_data_blocks_moved > 0 || s.ssr_segments > 0);
}

#[test]
fn settings_refuse_unknown_keys_and_name_the_bad_field() {
    let e = toml::from_str::<F2fsSettings>("segs_per_sec = 1\nbogus = 2").unwrap_err().to_string();
    assert!(e.contains("bogus"), "{e}");
    let e = toml::from_str::<F2fsSettings>("ipu_policy = \"sometimes\"").unwrap_err().to_string();
    assert!(e.contains("fsync"), "{e}");
    let s: F2fsSettings = toml::from_str("segs_per_sec = 3").unwrap();
    assert_eq!(s.validate().unwrap_err().to_string(), "fs.f2fs.segs_per_sec: must be a power of two in 1..=512");
    let s: F2fsSettings = toml::from_str("overprovision_ratio = 120.0").unwrap();
    assert!(s.validate().unwrap_err().to_string().starts_with("fs.f2fs.overprovision_ratio"));
    let s: F2fsSettings = toml::from_str("ipu_policy = \"ssr-util\"\ncp_interval_s = 30").unwrap();
    assert_eq!((s.ipu_policy, s.cp_interval_s, s.segs_per_sec), (IpuPolicy::SsrUtil, 30, 1));
}

#[test]
fn timed_requests_advance_the_clock() {
    let mut c = PageCache::new(F2fs::format(ssd(160, true), strict()).unwrap(), CacheSettings::default(), 0);
    let fd: Fd = c.create("/a").unwrap();
    for k in 0..64u64 {
        c.write(fd, k * 4096, &page(k)).unwrap();
    }
    let t0 = c.now_ns();
    c.fsync(fd).unwrap();
    assert!(c.now_ns() > t0, "fsync waits for the device");
    assert!(c.inner().device_busy_ns() > 0);
}

/// The flusher's writeback (background, not charged to the writer) can
/// leave the file system's clock ahead of the application's; an fsync must
/// still return only after the file's data is on the device — at or after
/// the file system's clock, never before it.
#[test]
fn fsync_after_background_writeback_waits_for_the_device() {
    // 1000 dirty pages stay below the background threshold (10 % of 64 MiB)
    // until they expire (30 s): the flusher's wake-up at 35 s writes them
    // back through a queue of 2 small requests, waiting for the device
    // while the writer is not charged.
    let cfg = CacheSettings { memory_mib: 64, ..Default::default() };
    let f2 = F2fsSettings { queue_depth: 2, max_bio_blocks: 16, ..strict() };
    let mut c = PageCache::new(F2fs::format(ssd(160, true), f2).unwrap(), cfg, 0);
    let fd: Fd = c.create("/a").unwrap();
    for k in 0..1000u64 {
        c.write(fd, k * 4096, &page(k)).unwrap();
    }
    c.idle_until(35_000_000_001).unwrap();
    assert!(c.inner().now_ns() > c.now_ns(), "the flusher ran the file system's clock ahead");
    c.write(fd, 0, &page(7)).unwrap();
    c.fsync(fd).unwrap();
    assert!(
        c.now_ns() >= c.inner().now_ns(),
        "fsync returned at {} before the device was done at {}",
        c.now_ns(),
        c.inner().now_ns()
    );
}

#[test]
fn at_95_percent_utilisation_cleaning_costs_show() {
    // Through the page cache, with simulated time passing (checkpoints every 60 s),
    // random 4 KiB updates of a file filling 95 % of the user blocks.
    let f = fs(80, F2fsSettings::default());
    let n = f.layout().user_block_count * 95 / 100 - 8;
    let mut c = PageCache::new(f, CacheSettings { memory_mib: 4, ..Default::default() }, 0);
    let fd = c.create("/iozone").unwrap();
    for k in 0..n {
        c.write(fd, k * 4096, &page(k)).unwrap();
    }
    c.sync().unwrap();
    let before = c.inner().stats().clone();
    let mut x = 7u64;
    for i in 0..4 * n {
        x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        c.write(fd, ((x >> 33) % n) * 4096, &page(i)).unwrap();
        if i % 64 == 0 {
            let t = c.now_ns() + 1_000_000_000;
            c.idle_until(t).unwrap();
        }
    }
    c.sync().unwrap();
    let s = c.inner().stats().clone();
    c.inner().check().unwrap();
    let app = 4 * n;
    let fs_writes = s.fs_blocks_written() - before.fs_blocks_written();
    println!("95 %: {app} app blocks, {fs_writes} fs blocks, {s:?}");
    assert!(s.checkpoints_interval > 0);
    assert!(s.ssr_segments > 0 && s.cleaning_blocks() + s.ssa_blocks_written > 0, "{s:?}");
    assert!(fs_writes > app, "the file system writes more than the application: {fs_writes} vs {app}");
}
