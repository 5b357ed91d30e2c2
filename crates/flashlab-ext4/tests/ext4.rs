use flashlab_ext4::{content_tag, Cause, Content, Ext4, Ext4Settings, Layout, Req, FLUSH_BLOCK};
use flashlab_sim::{Op, Ssd};
use flashlab_vfs::{CacheSettings, Errno, FileSystem, PageCache};

#[path = "ext4/meta.rs"]
mod meta;
#[path = "ext4/mke2fs.rs"]
mod mke2fs;
#[path = "ext4/oracle.rs"]
mod oracle;

/// An SSD of `mib` MiB logical capacity (4 KiB pages, half spare).
pub fn ssd(mib: u64, timed: bool) -> Ssd {
    let per_plane = mib * 2 * 256 / 128 / 4;
    let sets = [
        "device.channels=2".to_string(),
        "device.chips_per_channel=1".into(),
        "device.dies_per_chip=2".into(),
        "device.planes_per_die=1".into(),
        "device.page_bytes=4096".into(),
        "device.pages_per_block=128".into(),
        "device.spare_factor=0.5".into(),
        format!("device.blocks_per_plane={per_plane}"),
        format!("timing.enabled={timed}"),
    ];
    let s = flashlab_config::load("", "test", &sets).unwrap().1;
    assert_eq!(s.ftl.logical_pages * s.page_bytes(), mib << 20);
    Ssd::new(s).unwrap()
}

fn settings(f: impl FnOnce(&mut Ext4Settings)) -> Ext4Settings {
    let mut s = Ext4Settings::default();
    f(&mut s);
    s
}

/// mke2fs -O ^flex_bg: each group holds its own bitmaps and table.
fn no_flex() -> Ext4Settings {
    settings(|s| s.flex_bg_groups = 1)
}

/// A timed 1 GiB file system without flex_bg whose metadata stays cached.
fn timed_no_flex_all_cached() -> Ext4 {
    let s = settings(|s| {
        s.metadata_reads = false;
        s.flex_bg_groups = 1;
    });
    Ext4::format(ssd(1024, true), s).unwrap()
}

#[test]
fn layout_of_a_4_gib_file_system_without_flex_bg() {
    let l = Layout::new(4 << 30, &no_flex()).unwrap();
    assert_eq!((l.blocks, l.blocks_per_group, l.groups), (1 << 20, 32768, 32));
    assert_eq!((l.inodes_per_group, l.itable_blocks, l.gdt_blocks, l.rsv_gdt_blocks), (8192, 512, 1, 511));
    // Group 0: superblock 0, GDT 1, reserved GDT 2..=512, then the bitmaps and the table.
    assert_eq!((l.block_bitmap(0), l.inode_bitmap(0), l.inode_table(0), l.meta_blocks_in(0)), (513, 514, 515, 1027));
    assert_eq!((l.block_bitmap(1), l.inode_table(1)), (32768 + 513, 32768 + 515));
    // Group 2 has no superblock backup (sparse_super), group 9 = 3² has.
    assert_eq!((l.block_bitmap(2), l.meta_blocks_in(2)), (65536, 514));
    assert_eq!(l.block_bitmap(9), 9 * 32768 + 513);
    assert!(!l.has_super(6) && l.has_super(25) && l.has_super(49) && l.has_super(27));
    assert_eq!((l.resv_clusters, l.root_reserved_blocks), (4096, 52428));
    assert_eq!(l.inode_block(12), 515);
    assert_eq!(l.inode_block(8192 + 17), 32768 + 515 + 1);
}

#[test]
fn small_last_group_is_dropped_and_tiny_devices_are_refused() {
    let s = Ext4Settings::default();
    let l = Layout::new((128 << 20) + (1 << 20), &s).unwrap();
    assert_eq!((l.groups, l.blocks, l.inodes_per_group), (1, 32768, 8192));
    // 2 MiB more is a group of 512 blocks, more than its 280 metadata blocks + 50.
    let l = Layout::new((128 << 20) + (2 << 20), &s).unwrap();
    assert_eq!((l.groups, l.blocks, l.inodes_per_group, l.rsv_gdt_blocks), (2, 33280, 4160, 16));
    assert!(Layout::new(64 << 10, &s).unwrap_err().contains("too small"));
}

#[test]
fn mkfs_places_root_lost_found_and_the_journal_in_the_middle() {
    let fs = Ext4::format(ssd(1024, false), no_flex()).unwrap();
    let l = fs.layout();
    assert_eq!((l.groups, l.rsv_gdt_blocks, l.meta_blocks_in(0)), (8, 127, 643));
    // Middle block 131072 is in group 4, which has the most free blocks of 3..=5.
    assert_eq!(fs.journal_extents(), &[(131_586, 32254), (164_483, 514)]);
    assert_eq!(fs.extents_of(2), vec![(0, 643, 1)]);
    assert_eq!(fs.extents_of(11), vec![(0, 644, 4)]);
    fs.check().unwrap();
    assert_eq!(fs.stats().blocks_written(), 0);
}

fn req(cause: Cause, block: u64, blocks: u64) -> Req {
    Req { cause, op: Op::Write, block, blocks }
}

fn flush() -> Req {
    Req { cause: Cause::Journal, op: Op::Write, block: FLUSH_BLOCK, blocks: 0 }
}

#[test]
fn fsync_writes_data_then_descriptor_and_metadata_then_the_commit_block() {
    // Metadata all cached (the cold-cache reads are tested in ext4/meta.rs).
    let mut fs = timed_no_flex_all_cached();
    fs.record_requests(true);
    let fd = fs.create("/f").unwrap();
    fs.write(fd, 0, &[7u8; 8192]).unwrap();
    let t0 = fs.now_ns();
    assert_eq!(t0, 0, "the data write was submitted without waiting");
    fs.fsync(fd).unwrap();
    assert!(fs.now_ns() > t0, "fsync waits for the device");
    // Data (a small file) from the locality group's first preallocation, at
    // group 0's first free order-9 buddy, 1024;
    // the transaction holds inode bitmap 130, GDT 1, inode table 131, root's
    // directory block 643 and block bitmap 129: descriptor + 5 blocks at the
    // journal's head, a cache flush, the commit block (FUA), a flush.
    assert_eq!(
        fs.record_requests(false),
        vec![
            req(Cause::Data, 1024, 2),
            req(Cause::Journal, 131_587, 6),
            flush(),
            req(Cause::Journal, 131_593, 1),
            flush()
        ]
    );
    let st = fs.stats();
    assert_eq!((st.data_blocks_written, st.journal_blocks_written, st.commits, st.commits_forced), (2, 7, 1, 1));
    // Nothing new: a second fsync only flushes the device cache.
    fs.record_requests(true);
    fs.fsync(fd).unwrap();
    assert_eq!(fs.record_requests(false), vec![flush()]);
    fs.check().unwrap();
}

fn cached(fs: Ext4) -> PageCache<Ext4> {
    PageCache::new(fs, CacheSettings::default(), 0)
}

#[test]
fn delayed_allocation_places_files_in_their_directory_group() {
    let mut c = cached(Ext4::format(ssd(1024, false), no_flex()).unwrap());
    c.mkdir("/d").unwrap();
    let d = c.stat("/d").unwrap().inum;
    let g = c.inner().layout().group_of_inode(d);
    let mut files = Vec::new();
    for (i, pages) in [64u64, 3, 100].into_iter().enumerate() {
        let fd = c.create(&format!("/d/f{i}")).unwrap();
        // Written in 4 KiB pieces, interleaved with nothing: delalloc maps each file at writeback.
        for p in 0..pages {
            c.write(fd, p * 4096, &[i as u8 + 1; 4096]).unwrap();
        }
        files.push((c.fstat(fd).unwrap().inum, pages));
        c.close(fd).unwrap();
    }
    assert_eq!(c.inner().stats().blocks_allocated, 1, "only the directory block before writeback");
    c.sync().unwrap();
    let fs = c.inner();
    let first = fs.layout().inode_table(g) + fs.layout().itable_blocks;
    assert_eq!(fs.extents_of(d), vec![(0, first, 1)]);
    // Each file is closed and written up to its size (no normalisation): the
    // 64-page one takes the group's first free order-6 buddy; the 3-page one is
    // small (the locality group's new 512-block preallocation, at the group's
    // first free order-9 buddy); the 100-page one is no power of two (first fit
    // of 100 blocks: after the 64-page file).
    let f0 = (first + 1).next_multiple_of(64);
    // Orlov puts /d in group 6: half-MD4 of "d" with the default seed, mod 8
    // groups, then the emptiest group from there (all are empty).
    assert_eq!((g, first), (6, 197122));
    for ((inum, pages), at) in files.into_iter().zip([f0, (first + 1).next_multiple_of(512), f0 + 64]) {
        assert_eq!(fs.layout().group_of_inode(inum), g, "a file lives in its parent's group");
        assert_eq!(fs.extents_of(inum), vec![(0, at, pages as u32)]);
    }
    assert_eq!(fs.stats().data_blocks_written, 167);
    fs.check().unwrap();
}

#[test]
fn top_level_directories_spread_and_subdirectories_stay_near_their_parent() {
    let mut fs = Ext4::format(ssd(1024, false), no_flex()).unwrap();
    let mut groups = std::collections::BTreeSet::new();
    for i in 0..8 {
        fs.mkdir(&format!("/top{i}")).unwrap();
        let inum = fs.stat(&format!("/top{i}")).unwrap().inum;
        groups.insert(fs.layout().group_of_inode(inum));
    }
    assert!(groups.len() >= 6, "Orlov spreads top-level directories: {groups:?}");
    fs.mkdir("/top0/sub").unwrap();
    let (p, s) = (fs.stat("/top0").unwrap().inum, fs.stat("/top0/sub").unwrap().inum);
    assert_eq!(fs.layout().group_of_inode(p), fs.layout().group_of_inode(s));
    fs.check().unwrap();
}

#[test]
fn flex_bg_spreads_top_directories_over_flex_groups_and_packs_files_into_them() {
    // 8 GiB: 64 groups, four flex groups of 16 (mke2fs's default).
    let mut c = cached(Ext4::format(ssd(8192, false), Ext4Settings::default()).unwrap());
    let flex = c.inner().layout().flex_groups;
    assert_eq!((c.inner().layout().groups, flex), (64, 16));
    let group = |c: &mut PageCache<Ext4>, path: &str| {
        let inum = c.stat(path).unwrap().inum;
        c.inner().layout().group_of_inode(inum)
    };
    let mut tops = std::collections::BTreeSet::new();
    for i in 0..4 {
        c.mkdir(&format!("/top{i}")).unwrap();
        // found_flex_bg: the first group of the chosen flex group.
        let g = group(&mut c, &format!("/top{i}"));
        assert_eq!(g % flex, 0, "/top{i} in group {g}");
        tops.insert(g);
    }
    // Flex groups 0 (root, lost+found) and 2 (the journal, in group 33) have
    // fewer free blocks than the average, so Orlov alternates between 1 and 3.
    assert_eq!(c.inner().journal_extents()[0].0 / c.inner().layout().blocks_per_group, 33);
    assert_eq!(tops.into_iter().collect::<Vec<_>>(), vec![16, 48], "Orlov spreads top-level directories");
    // A subdirectory and files stay in the parent's flex group, packed at its start.
    let g0 = group(&mut c, "/top0");
    c.mkdir("/top0/sub").unwrap();
    assert_eq!(group(&mut c, "/top0/sub"), g0);
    let fd = c.create("/top0/sub/f").unwrap();
    c.write(fd, 0, &[3u8; 32 * 4096]).unwrap();
    c.close(fd).unwrap();
    // Two small files in directories of different flex groups.
    for (path, pages) in [("/top1/a", 3u64), ("/top0/b", 2)] {
        let fd = c.create(path).unwrap();
        c.write(fd, 0, &vec![4u8; (pages * 4096) as usize]).unwrap();
        c.close(fd).unwrap();
    }
    c.sync().unwrap();
    assert_eq!(group(&mut c, "/top0/sub/f"), g0);
    let inum = |c: &mut PageCache<Ext4>, p: &str| c.stat(p).unwrap().inum;
    let (sub, f, a, b) =
        (inum(&mut c, "/top0/sub"), inum(&mut c, "/top0/sub/f"), inum(&mut c, "/top1/a"), inum(&mut c, "/top0/b"));
    let fs = c.inner();
    let l = fs.layout();
    // ext4_inode_to_goal_block: directories' blocks in the flex group's first
    // group, regular files' data from its second.
    let dir_block = fs.extents_of(sub)[0].1;
    assert_eq!(l.group_of(dir_block), g0);
    // Group 49 starts with a superblock backup (1 + 1 GDT + 1023 reserved GDT
    // blocks); the closed 32-block file's request, a power of two, takes the
    // first free order-5 buddy after it (criterion 0).
    assert_eq!((g0, l.super_blocks(g0 + 1)), (48, 1025));
    assert_eq!(fs.extents_of(f), vec![(0, l.group_start(g0 + 1) + 1056, 32)]);
    // Small files share the locality group's preallocation whatever their
    // directory: /top0/b lies right after /top1/a (as the kernel packs an
    // unpacked tree's small files).
    let ea = fs.extents_of(a);
    assert_eq!(ea.len(), 1);
    assert_eq!(fs.extents_of(b), vec![(0, ea[0].1 + 3, 2)]);
    assert_eq!(fs.stats().group_preallocations, 1);
    fs.check().unwrap();
}

#[test]
fn a_writeback_pass_merges_small_files_packed_together_into_one_request() {
    let mut c = cached(Ext4::format(ssd(1024, false), settings(|s| s.metadata_reads = false)).unwrap());
    for d in ["/x", "/y", "/z"] {
        c.mkdir(d).unwrap();
    }
    c.sync().unwrap();
    for (i, path) in ["/x/a", "/y/b", "/z/c", "/x/d"].into_iter().enumerate() {
        let fd = c.create(path).unwrap();
        c.write(fd, 0, &vec![i as u8 + 1; (i + 1) * 4096]).unwrap();
        c.close(fd).unwrap();
    }
    c.inner_mut().record_requests(true);
    c.sync().unwrap();
    let log = c.inner_mut().record_requests(false);
    // The four files (1 + 2 + 3 + 4 blocks) lie back to back in the locality
    // group's preallocation and leave in one plugged request, before the commit.
    let data: Vec<&Req> = log.iter().filter(|r| r.cause == Cause::Data).collect();
    assert_eq!(data.len(), 1, "{log:?}");
    assert_eq!(data[0].blocks, 10);
    assert_eq!(log[0], *data[0], "data first (ordered mode)");
    c.inner().check().unwrap();
}

#[test]
fn content_tags_follow_the_pages_written_back() {
    let mut c = cached(Ext4::format(ssd(256, false), settings(|s| s.content = Content::Tags)).unwrap());
    let fd = c.create("/f").unwrap();
    let a: Vec<u8> = (0..4096u32).map(|i| (i * 7) as u8).collect();
    c.write(fd, 0, &a).unwrap();
    c.write(fd, 4096, &a[..100]).unwrap();
    let inum = c.fstat(fd).unwrap().inum;
    c.fsync(fd).unwrap();
    assert_eq!(c.inner().page_tag(inum, 0), Some(content_tag(&a)));
    assert_eq!(c.inner().page_tag(inum, 1), Some(content_tag(&a[..100])));
    assert_ne!(content_tag(&a), content_tag(&a[..100]));
}

#[test]
fn timer_commits_after_five_seconds_and_expired_metadata_goes_home() {
    let mut c = cached(Ext4::format(ssd(256, true), Ext4Settings::default()).unwrap());
    c.mkdir("/d").unwrap();
    c.idle_until(4_000_000_000).unwrap();
    assert_eq!(c.inner().stats().commits, 0);
    c.idle_until(6_000_000_000).unwrap();
    let st = c.inner().stats().clone();
    assert_eq!((st.commits, st.commits_forced, st.metadata_blocks_written), (1, 0, 0));
    c.idle_until(40_000_000_000).unwrap();
    let st = c.inner().stats().clone();
    assert!(st.metadata_blocks_written > 0, "the flusher wrote the committed metadata home: {st:?}");
    assert_eq!(st.checkpoint_blocks_written, 0);
    c.inner().check().unwrap();
}

#[test]
fn a_full_journal_is_checkpointed() {
    let s = settings(|s| {
        s.journal_mib = 4;
        s.metadata_expire_s = 0;
        s.group_mib = 8;
        s.strict = true;
    });
    let mut fs = Ext4::format(ssd(256, false), s).unwrap();
    for i in 0..400 {
        let fd = fs.create(&format!("/f{i}")).unwrap();
        fs.write(fd, 0, &[1; 4096]).unwrap();
        fs.fsync(fd).unwrap();
        fs.close(fd).unwrap();
    }
    let st = fs.stats();
    assert!(st.checkpoints > 0 && st.checkpoint_blocks_written > 0, "{st:?}");
    assert_eq!(st.metadata_blocks_written, 0);
    assert_eq!(st.commits, 400);
    fs.check().unwrap();
}

#[test]
fn discard_trims_freed_extents_after_the_commit() {
    let mut fs = Ext4::format(ssd(256, false), settings(|s| s.discard = true)).unwrap();
    let fd = fs.create("/f").unwrap();
    fs.write(fd, 0, &[3; 40960]).unwrap();
    fs.close(fd).unwrap();
    fs.sync().unwrap();
    let inum = fs.stat("/f").unwrap().inum;
    let ext = fs.extents_of(inum);
    assert_eq!(ext.len(), 1);
    let before = fs.free_blocks();
    fs.record_requests(true);
    fs.unlink("/f").unwrap();
    assert_eq!(fs.free_blocks(), before, "freed blocks wait for the commit");
    fs.sync().unwrap();
    assert_eq!(fs.free_blocks(), before + 10);
    let trims: Vec<Req> = fs.record_requests(false).into_iter().filter(|r| r.op == Op::Trim).collect();
    assert_eq!(trims, vec![Req { cause: Cause::Discard, op: Op::Trim, block: ext[0].1, blocks: 10 }]);
    fs.check().unwrap();
}

#[test]
fn filling_the_file_system_is_enospc_not_a_panic() {
    let s = settings(|s| {
        s.journal_mib = 4;
        s.group_mib = 8;
    });
    let mut c = cached(Ext4::format(ssd(64, false), s).unwrap());
    let fd = c.create("/big").unwrap();
    let chunk = vec![9u8; 65536];
    let mut off = 0u64;
    let err = loop {
        match c.write(fd, off, &chunk) {
            Ok(_) => off += chunk.len() as u64,
            Err(e) => break e,
        }
        assert!(off < 64 << 20, "never ENOSPC");
    };
    assert_eq!(err.errno(), Errno::ENOSPC);
    c.sync().unwrap();
    c.inner().check().unwrap();
    let free = c.statfs().free_bytes;
    assert!(free < 4 << 20, "nearly full: {free}");
    c.close(fd).unwrap();
    c.unlink("/big").unwrap();
    c.sync().unwrap();
    assert!(c.statfs().free_bytes > 40 << 20);
    c.inner().check().unwrap();
}

#[test]
fn running_out_of_inodes_is_enospc() {
    let s = settings(|s| {
        s.journal_mib = 4;
        s.group_mib = 4;
        s.inode_ratio_kib = 1024;
    });
    let mut fs = Ext4::format(ssd(64, false), s).unwrap();
    // 64 inodes by the ratio, rounded up to 16 per group (one inode-table block) × 16 groups.
    assert_eq!(fs.layout().inodes(), 256);
    let mut made = 0;
    let err = loop {
        match fs.create(&format!("/f{made}")) {
            Ok(fd) => fs.close(fd).unwrap(),
            Err(e) => break e,
        }
        made += 1;
    };
    assert_eq!((err.errno(), made), (Errno::ENOSPC, 256 - 11));
    fs.check().unwrap();
    fs.unlink("/f0").unwrap();
    fs.create("/again").unwrap();
    fs.check().unwrap();
}

#[test]
fn settings_reject_unknown_keys_and_name_bad_fields() {
    let e = toml::from_str::<Ext4Settings>("journal_mb = 3").unwrap_err().to_string();
    assert!(e.contains("journal_mb"), "{e}");
    let s: Ext4Settings = toml::from_str("journal_mib = 64\ndiscard = true\ncontent = \"bytes\"").unwrap();
    assert_eq!((s.journal_mib, s.discard, s.content), (64, true, Content::Bytes));
    let e = settings(|s| s.group_mib = 256).validate().unwrap_err().to_string();
    assert!(e.starts_with("fs.ext4.group_mib:"), "{e}");
    let e = Ext4::format(ssd(64, false), Ext4Settings::default()).err().unwrap().to_string();
    assert!(e.contains("fs.ext4.journal_mib"), "{e}");
}

#[test]
fn data_takes_power_of_two_aligned_buddies_when_the_goal_is_taken() {
    // mballoc (ext4_mb_normalize_request, criterion 0 / ext4_mb_simple_scan_group),
    // as the kernel check showed (docs/host-fs.md): group 0's data starts at 649
    // (after root 643, lost+found 644..=647 and the resize inode's block 648, as
    // mke2fs places them); a new file's goal, the group's first block, is taken.
    let mut fs = Ext4::format(ssd(1024, false), no_flex()).unwrap();
    let mut put = |name: &str, kib: usize| {
        let fd = fs.create(name).unwrap();
        fs.write(fd, 0, &vec![5u8; kib << 10]).unwrap();
        fs.close(fd).unwrap();
    };
    // 1 MiB: a window of 256 blocks → the lowest free order-8 buddy, 768..1023.
    put("/a", 1024);
    // The next 1 MiB: no order-8 or order-9 buddy is free; the order-10 one at 1024.
    put("/b", 1024);
    // 40 KiB is a small file: the locality group's first preallocation, 512 blocks
    // at the lowest free order-9 buddy, 1536..2047; /c takes its first 10.
    put("/c", 40);
    // 100 KiB: a 128 KiB window → the order-5 buddy 672..703 (640..703 is not free).
    put("/d", 100);
    // 3 MiB: a 2 MiB window from block 0 → no order-9 or order-10 buddy is free
    // (1536..2047 is preallocated), the order-11 one at 2048; the second window
    // goes to its goal, 2560.
    put("/e", 3072);
    assert_eq!(fs.extents_of(12), vec![(0, 768, 256)]);
    assert_eq!(fs.extents_of(13), vec![(0, 1024, 256)]);
    assert_eq!(fs.extents_of(14), vec![(0, 1536, 10)]);
    assert_eq!(fs.extents_of(15), vec![(0, 672, 25)]);
    assert_eq!(fs.extents_of(16), vec![(0, 2048, 768)]);
    fs.check().unwrap();
}

#[test]
fn sync_commits_then_writes_the_committed_metadata_home() {
    // sync_filesystem: ext4_sync_fs commits, then sync_blockdev writes the block
    // device's dirty buffers (the kernel check saw them after every sync).
    let mut fs = timed_no_flex_all_cached();
    fs.record_requests(true);
    let fd = fs.create("/f").unwrap();
    fs.write(fd, 0, &[7u8; 8192]).unwrap();
    fs.sync().unwrap();
    let home = |b, n| Req { cause: Cause::Metadata, op: Op::Write, block: b, blocks: n };
    assert_eq!(
        fs.record_requests(true),
        vec![
            req(Cause::Data, 1024, 2),
            req(Cause::Journal, 131_587, 6),
            flush(),
            req(Cause::Journal, 131_593, 1),
            flush(),
            // GDT 1, block bitmap 129, inode bitmap 130, inode table 131, root's block 643.
            home(1, 1),
            home(129, 3),
            home(643, 1),
        ]
    );
    assert_eq!(fs.stats().metadata_blocks_written, 5);
    // Nothing is left: a second sync only flushes the device cache.
    fs.sync().unwrap();
    assert_eq!(fs.record_requests(false), vec![flush()]);
    fs.check().unwrap();
}
