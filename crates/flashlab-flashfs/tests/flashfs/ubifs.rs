//! The UBIFS rules flashfs follows, one test each (see docs/flashfs.md,
//! "How flashfs differs from UBIFS").

use flashlab_flashfs::*;
use flashlab_mtd::{Cause, Nand, NandSettings};
use flashlab_ubi::{Ubi, UbiSettings};

fn fs_on(blocks: u32, pages: u32, page_bytes: u32, cfg: FsSettings) -> Fs {
    let mut ubi =
        Ubi::format(Nand::new(NandSettings::small(blocks, pages, page_bytes)), UbiSettings::default()).unwrap();
    let vol = ubi.create_volume("fs", 0).unwrap();
    Fs::format(ubi, vol, cfg).unwrap()
}

fn data(n: usize, seed: u8) -> Vec<u8> {
    (0..n).map(|i| ((i as u32).wrapping_mul(2_654_435_761) >> 13) as u8 ^ seed).collect()
}

/// UBIFS's statfs of an empty volume, computed from its formula
/// (ubifs_calc_available, ubifs_reported_space, rp_size), by hand.
fn ubifs_empty_avail(main_lebs: u64, leb: u64, min_io: u64) -> u64 {
    let dark_wm = (160u64 + 4096).next_multiple_of(min_io);
    let max_idx = 28 + 20 * 8; // ubifs_idx_node_sz(c, fanout 8)
                               // Empty: the root inode (160 bytes) is the only used non-index space,
                               // the index is one LEB holding the root znode: min_idx_lebs = 2.
    let reserve = (2 + 1 + 3 + 1) * leb; // index, GC, 3 journal heads, deletions
    let dark = (main_lebs - 1) * dark_wm; // every non-index LEB
    let available = main_lebs * leb - 160 - reserve - dark;
    let reported = |b: u64| b * 4096 / (4096 + 48 + max_idx * 3 / (4 - 1));
    let rp = reported((main_lebs * leb * 5 / 100).min(5 << 20));
    (reported(available) - rp) / 4096 * 4096
}

#[test]
fn statfs_of_an_empty_volume_is_ubifs_formula_on_two_geometries() {
    for (blocks, pages, page) in [(256, 64, 2048), (512, 128, 4096)] {
        let fs = fs_on(blocks, pages, page, FsSettings::default());
        let g = fs.geometry();
        let st = fs.statfs();
        let want = ubifs_empty_avail(g.main_lebs() as u64, g.leb_bytes as u64, g.min_io as u64);
        assert_eq!(st.available_bytes, want, "{blocks}x{pages}x{page}: {st:?}");
        assert!(st.free_bytes > st.available_bytes && st.total_bytes > st.free_bytes);
    }
}

#[test]
fn commit_unmaps_obsolete_lebs() {
    let cfg = FsSettings { compression: Compression::None, journal_max_buds: 16, ..FsSettings::default() };
    let mut fs = fs_on(128, 64, 2048, cfg);
    let fd = fs.create("/big").unwrap();
    fs.write(fd, 0, &data(600_000, 1)).unwrap();
    fs.fsync(fd).unwrap();
    fs.close(fd).unwrap();
    let (e0, u0) = (fs.stats().erases, fs.stats().fs.commit_unmaps);
    fs.unlink("/big").unwrap();
    // The file was written and deleted within one journal (no commit since
    // format): its LEBs are buds. One commit (the sync's, `ubifs_sync_fs`)
    // frees them: the deleted nodes' dirt is in the LEB properties from
    // the unlink on (`ubifs_add_dirt` at journal time), and a LEB with only
    // free and dirty space is freeable whether or not it is a bud.
    let c0 = fs.stats().commits;
    fs.sync().unwrap();
    assert_eq!(fs.stats().commits, c0 + 1, "sync commits");
    let (e1, u1) = (fs.stats().erases, fs.stats().fs.commit_unmaps);
    // 600 000 bytes of data nodes (147 × 4 144 bytes: 31 per 129 024-byte
    // LEB) fill 4 LEBs whole and part of a fifth, all obsolete now: the
    // commit unmaps the 4 whole ones (ubifs_gc_start_commit) without any
    // GC; the fifth also holds the base head's or live nodes.
    assert_eq!(u1 - u0, 4, "{u0} -> {u1}");
    assert!(e1 - e0 >= u1 - u0, "each unmap is an erase: {e0} -> {e1}");
    assert_eq!(fs.stats().gc_runs, 0);
    // A second commit finds nothing more to free.
    fs.commit_now().unwrap();
    assert_eq!(fs.stats().fs.commit_unmaps, u1);
    fs.check_invariants().unwrap();
}

/// `ubifs_sync_fs` (super.c): sync(2) syncs the write buffers and runs
/// `ubifs_run_commit`, which commits unless `nothing_to_commit`.
#[test]
fn sync_commits_unless_nothing_changed() {
    let cfg = FsSettings { compression: Compression::None, page_cache: false, ..FsSettings::default() };
    let mut fs = fs_on(256, 64, 2048, cfg);
    let fd = fs.create("/a").unwrap();
    fs.write(fd, 0, &data(10_000, 1)).unwrap();
    let (c0, (e0, log0, meta0)) = (fs.stats().commits, nand_counts(fs.ubi().nand()));
    fs.sync().unwrap();
    let (c1, (e1, log1, meta1)) = (fs.stats().commits, nand_counts(fs.ubi().nand()));
    // One commit: the commit-start page in the next log LEB, the master in
    // both master LEBs, and `ubifs_log_post_commit` unmaps the log LEB of
    // format's commit (the same figures as the unmount's commit).
    assert_eq!((c1 - c0, e1 - e0, log1 - log0, meta1 - meta0), (1, 1, 1, 2));
    assert_eq!(fs.wbuf_bytes().iter().sum::<usize>(), 0, "every write buffer synced");
    // Nothing written since: `nothing_to_commit`, so sync writes nothing.
    let p1 = fs.stats().pages_programmed_total;
    fs.sync().unwrap();
    assert_eq!((fs.stats().commits, fs.stats().pages_programmed_total, fs.stats().erases), (c1, p1, e1));
    // A read changes nothing either; a write does.
    assert_eq!(fs.read(fd, 0, 10).unwrap(), data(10, 1));
    fs.sync().unwrap();
    assert_eq!(fs.stats().commits, c1);
    fs.write(fd, 0, &data(10, 2)).unwrap();
    fs.sync().unwrap();
    assert_eq!(fs.stats().commits, c1 + 1);
}

/// Bytes a rename leaves in the base head's write buffer, after a sync.
fn rename_bytes(fs: &mut Fs, from: &str, to: &str) -> usize {
    fs.sync().unwrap();
    assert_eq!(fs.wbuf_bytes()[0], 0);
    fs.rename(from, to).unwrap();
    fs.wbuf_bytes()[0]
}

/// `ubifs_jnl_rename` (journal.c) writes one group to the base head: the
/// new entry, the deletion entry of the old name, the replaced target's
/// inode, the old directory's inode and, when moving, the new directory's;
/// `do_rename` (dir.c) then marks the renamed inode dirty (ctime), which
/// writeback writes (`ubifs_jnl_write_inode`). Node sizes: an entry with a
/// one-letter name 56 + 1 + NUL → 64 bytes, an inode 160.
#[test]
fn rename_writes_the_inodes_ubifs_jnl_rename_writes() {
    let cfg = FsSettings { compression: Compression::None, page_cache: false, ..FsSettings::default() };
    let mut fs = fs_on(256, 64, 2048, cfg);
    for (p, seed) in [("/a", 3), ("/c", 4)] {
        let fd = fs.create(p).unwrap();
        fs.write(fd, 0, &data(100, seed)).unwrap();
        fs.close(fd).unwrap();
    }
    fs.mkdir("/d").unwrap();
    fs.mkdir("/e").unwrap();
    let fd = fs.create("/d/x").unwrap();
    fs.close(fd).unwrap();
    // Same directory, no target: 2 entries, the directory, the renamed inode.
    assert_eq!(rename_bytes(&mut fs, "/a", "/b"), 64 + 64 + 160 + 160);
    // Replacing /c: + the target's inode (nlink 0).
    assert_eq!(rename_bytes(&mut fs, "/b", "/c"), 64 + 64 + 160 + 160 + 160);
    // Moving between directories: both directories' inodes.
    assert_eq!(rename_bytes(&mut fs, "/d/x", "/e/y"), 64 + 64 + 160 + 160 + 160);
    // Each entry and inode above is in the index once; the replaced file
    // and the old names are gone.
    assert_eq!(fs.readdir("/").unwrap().len(), 3);
    assert!(fs.stat("/a").is_err() && fs.stat("/b").is_err() && fs.stat("/d/x").is_err());
    let fd = fs.open("/c").unwrap();
    assert_eq!(fs.read(fd, 0, 200).unwrap(), data(100, 3));
    assert!(fs.stat("/e/y").is_ok());
    fs.check_invariants().unwrap();
}

#[test]
fn fsync_of_inode_a_leaves_the_head_holding_only_b_unsynced() {
    let mut fs = fs_on(128, 64, 2048, FsSettings { compression: Compression::None, ..FsSettings::default() });
    let a = fs.create("/a").unwrap();
    let b = fs.create("/b").unwrap();
    fs.write(a, 0, &data(5000, 1)).unwrap();
    fs.write(b, 0, &data(5000, 2)).unwrap();
    fs.sync().unwrap();
    // B: an overwrite in place, one data node in the data head's buffer.
    fs.write(b, 0, &data(100, 3)).unwrap();
    // A: grows by truncation, an inode node in the base head's buffer.
    fs.ftruncate(a, 9000).unwrap();
    let (d0, b0) = (fs.pages_programmed(Cause::Data), fs.pages_programmed(Cause::Base));
    fs.fsync(a).unwrap();
    let (d1, b1) = (fs.pages_programmed(Cause::Data), fs.pages_programmed(Cause::Base));
    assert_eq!(d1, d0, "the data head holds only B's node: not synced");
    assert_eq!(b1, b0 + 1, "the base head holds A's inode: synced");
    fs.fsync(b).unwrap();
    assert_eq!(fs.pages_programmed(Cause::Data), d1 + 1);
}

#[test]
fn background_commit_starts_at_13_16_of_the_journal() {
    let mut fs = fs_on(256, 64, 2048, FsSettings { journal_max_buds: 16, ..FsSettings::default() });
    let (_, bg, max) = fs.journal_bytes();
    assert_eq!((bg, max), (16 * 129_024 * 13 / 16, 16 * 129_024));
    let fd = fs.create("/f").unwrap();
    let chunk = data(64 * 1024, 9);
    let mut before = fs.stats().fs.commits;
    for i in 0..200u64 {
        let (used, _, _) = fs.journal_bytes();
        fs.write(fd, i * chunk.len() as u64, &chunk).unwrap();
        let c = fs.stats().fs;
        if c.commits > before {
            assert_eq!(c.bg_commits, 1, "the first commit is the background one");
            assert!(used >= bg - 129_024 && used < max, "committed at {used} of {max} (mark {bg})");
            return;
        }
        before = c.commits;
    }
    panic!("no commit");
}

#[test]
fn ubifs_default_journal_is_5_percent_less_the_log() {
    // 4 096 LEBs of 128 KiB (nandsim 512 MiB): 204 journal LEBs, 9 of them log.
    assert_eq!(flashlab_flashfs::ubifs_default_journal(4096, 131_072, 2048), (9, 195));
    // A small volume: the minimum journal, three buds.
    assert_eq!(flashlab_flashfs::ubifs_default_journal(60, 126_976, 2048), (3, 3));
}

/// Erases and page programs (by cause) of the NAND underneath.
fn nand_counts(nand: &flashlab_mtd::Nand) -> (u64, u64, u64) {
    let st = nand.stats();
    (st.erases.total(), st.pages_programmed.get(Cause::Log), st.pages_programmed.get(Cause::Meta))
}

/// Unmount as Linux runs it on UBIFS: `generic_shutdown_super` →
/// `sync_filesystem` → `ubifs_sync_fs` (sync the write buffers, then
/// `ubifs_run_commit`, which writes nothing when `nothing_to_commit`), then
/// `ubifs_put_super` (sync the write buffers, `ubifs_write_master` with the
/// clean flags). Where the erases of the commit come from, in order
/// (`do_commit`, commit.c):
/// - `ubifs_gc_start_commit`: every freeable non-index LEB (all free or
///   dirty) is unmapped — none here: nothing was deleted or overwritten;
/// - `ubifs_log_start_commit`: the commit-start node goes to the next log
///   LEB, unmapped first — it is not mapped (the last commit's
///   `ubifs_log_post_commit` unmapped every log LEB but its own);
/// - the index nodes are appended to the index head LEB and the LPT nodes
///   after the last commit's in the LPT area — no LEB is entered;
/// - no orphans, so the orphan area is not written
///   (`ubifs_orphan_end_commit`);
/// - the master node takes one more page of each master LEB, far from full
///   (`ubifs_write_master` unmaps them only when full);
/// - `ubifs_log_post_commit` unmaps the log LEBs from the old tail up to
///   the new one: the one LEB that held format's commit-start node and the
///   references written since — **1 erase**;
/// - `ubifs_gc_end_commit`: no index LEB became free.
///
/// `ubifs_put_super`'s master write: one page in each master LEB, no erase.
#[test]
fn unmount_erases_as_ubifs() {
    let cfg = FsSettings { compression: Compression::None, page_cache: false, ..FsSettings::default() };
    let mut fs = fs_on(256, 64, 2048, cfg.clone());
    let fd = fs.create("/a").unwrap();
    fs.write(fd, 0, &data(10_000, 1)).unwrap();
    fs.fsync(fd).unwrap();
    fs.close(fd).unwrap();
    let (e0, log0, meta0) = nand_counts(fs.ubi().nand());
    let ubi = fs.unmount().unwrap();
    let (e1, log1, meta1) = nand_counts(ubi.nand());
    assert_eq!(e1 - e0, 1, "one erase: the previous commit's log LEB");
    assert_eq!(ubi.nand().stats().erases.get(Cause::Log), 2, "format's and the unmount's log LEB");
    assert_eq!(log1 - log0, 1, "one commit-start page (with the references of the open heads)");
    assert_eq!(meta1 - meta0, 4, "the commit's master and put_super's, in both master LEBs");

    // A clean master: the mount replays nothing and does not commit; it
    // only marks the master dirty on flash (mount_ubifs), one page per
    // master LEB, and appends to the LPT where the last commit stopped.
    let fs = Fs::mount(Ubi::attach(ubi.into_nand(), UbiSettings::default()).unwrap(), 0, cfg.clone()).unwrap();
    let (e2, log2, meta2) = nand_counts(fs.ubi().nand());
    assert_eq!((e2 - e1, log2 - log1, meta2 - meta1), (0, 0, 2));
    assert_eq!(fs.stats().commits, 0);
    assert_eq!(fs.stats().fs.index_lebs_taken, 0);

    // Nothing changed since: `nothing_to_commit`, so the unmount writes
    // only put_super's master, and erases nothing.
    let ubi = fs.unmount().unwrap();
    let (e3, log3, meta3) = nand_counts(ubi.nand());
    assert_eq!((e3 - e2, log3 - log2, meta3 - meta2), (0, 0, 2));

    // The data is all there after a third mount.
    let mut fs = Fs::mount(Ubi::attach(ubi.into_nand(), UbiSettings::default()).unwrap(), 0, cfg).unwrap();
    let fd = fs.open("/a").unwrap();
    assert_eq!(fs.read(fd, 0, 20_000).unwrap(), data(10_000, 1));
    fs.check_invariants().unwrap();
}

/// A commit right before the unmount leaves nothing to commit: no erase, no
/// log write, only put_super's master (one page per master LEB).
#[test]
fn unmount_after_a_commit_writes_only_the_master() {
    let cfg = FsSettings { compression: Compression::None, page_cache: false, ..FsSettings::default() };
    let mut fs = fs_on(256, 64, 2048, cfg);
    let fd = fs.create("/a").unwrap();
    fs.write(fd, 0, &data(30_000, 2)).unwrap();
    fs.close(fd).unwrap();
    fs.commit_all().unwrap();
    let (e0, log0, meta0) = nand_counts(fs.ubi().nand());
    let ubi = fs.unmount().unwrap();
    let (e1, log1, meta1) = nand_counts(ubi.nand());
    assert_eq!((e1 - e0, log1 - log0, meta1 - meta0), (0, 0, 2));
}

/// Pages programmed per cause (data, base, log, UBI headers) and erases.
fn journal_counts(fs: &Fs) -> [u64; 5] {
    let st = fs.stats();
    let p = |c| st.pages_programmed.get(c);
    [p(Cause::Data), p(Cause::Base), p(Cause::Log), p(Cause::UbiHeader), st.erases]
}

fn delta(a: [u64; 5], b: [u64; 5]) -> [u64; 5] {
    std::array::from_fn(|i| b[i] - a[i])
}

/// A scripted workload against what UBIFS writes for it, derived by hand
/// from the kernel (2 KiB pages, 64 pages per block; UBI's EC and VID
/// headers share the first page here, a 129 024-byte LEB of 63 pages —
/// nandsim without sub-pages gives 62; no compression). Each phase ends with fsync, so
/// under Linux's page cache the same nodes reach the journal as here
/// (`ubifs_writepage` writes the inode first when a page lies past the
/// synced size, then the data nodes; `ubifs_fsync` syncs the write buffers
/// holding the inode). Node sizes: inode 160, entry 56 + name + NUL
/// aligned to 8 (a one-letter name: 64), data 48 + bytes. Columns: data,
/// base, log pages, UBI header pages, erases.
#[test]
fn scripted_workload_programs_erases_and_commits_match_ubifs() {
    let cfg = FsSettings { compression: Compression::None, page_cache: false, ..FsSettings::default() };
    let mut fs = fs_on(256, 64, 2048, cfg);
    assert_eq!(fs.geometry().leb_bytes, 129_024);
    // After format the base head holds the root inode (one synced page);
    // the data head is not open; format committed once.
    let c0 = journal_counts(&fs);
    let commits0 = fs.stats().commits;

    // 1. Sequential write of 40 blocks to a new file, then fsync.
    // Base: create = entry 64 + inode 160 + parent inode 160
    // (ubifs_jnl_update), then the inode with the new size: 544 bytes, one
    // page at fsync. Data: 40 nodes of 4 144 bytes. The first takes an
    // empty LEB: a reference node in the log (one page, `ubifs_add_bud_to_log`)
    // and UBI's VID header. A LEB holds 31 nodes (128 464 bytes; the 560
    // left are less than a node): 62 full pages while writing, and the
    // write buffer's 1 488 bytes padded into page 63 when the 32nd node
    // needs a new bud (`reserve_space` syncs the old buffer): log page and
    // VID header again. The last 9 nodes (37 296 bytes): 18 full pages and
    // one padded at fsync. Data 63 + 19 = 82.
    let fd = fs.create("/s").unwrap();
    fs.write(fd, 0, &data(40 * 4096, 1)).unwrap();
    fs.fsync(fd).unwrap();
    fs.close(fd).unwrap();
    let c1 = journal_counts(&fs);
    assert_eq!(delta(c0, c1), [82, 1, 2, 2, 0], "sequential write");

    // 2. Small-file appends, fsync after each: 10 × 150 bytes.
    // Each append: the inode (size grew, 160 bytes, base) and one data
    // node of 48 + the block so far (≤ 1 548 bytes, data); the fsync pads
    // and programs both buffers: one page each. The first base page also
    // carries the create (384 bytes). The data LEB has 44 pages left: no
    // new bud, no log write.
    let fd = fs.create("/t").unwrap();
    for i in 0..10u64 {
        fs.write(fd, i * 150, &data(150, 2 + i as u8)).unwrap();
        fs.fsync(fd).unwrap();
    }
    fs.close(fd).unwrap();
    let c2 = journal_counts(&fs);
    assert_eq!(delta(c1, c2), [10, 10, 0, 0, 0], "append + fsync");

    // 3. Create, write two blocks, fsync, append a block, fsync, delete.
    // Base: 544 bytes (create + inode) → 1 page; the append's inode → 1
    // page; the unlink (deletion entry 64, inode with nlink 0, parent inode:
    // 384 bytes) stays in the buffer. Data: 2 × 4 144 = 8 288 bytes → 4
    // full pages + 1 at fsync; then 4 144 → 2 full pages + 1 at fsync.
    let fd = fs.create("/u").unwrap();
    fs.write(fd, 0, &data(8192, 20)).unwrap();
    fs.fsync(fd).unwrap();
    fs.write(fd, 8192, &data(4096, 21)).unwrap();
    fs.fsync(fd).unwrap();
    fs.close(fd).unwrap();
    fs.unlink("/u").unwrap();
    let c3 = journal_counts(&fs);
    assert_eq!(delta(c2, c3), [8, 2, 0, 0, 0], "create/append/delete");

    // No commit so far: the journal (3 buds) is far below 13/16 of its
    // size, the log has room.
    assert_eq!(fs.stats().commits - commits0, 0);

    // 4. Unmount: ubifs_sync_fs programs the base buffer (the unlink's 384
    // bytes: 1 page) and commits: one commit-start page in the next log
    // LEB; `ubifs_gc_start_commit` finds no freeable LEB (the deleted
    // file's nodes share their LEBs with live ones and open heads);
    // `ubifs_log_post_commit` unmaps the previous log LEB: 1 erase.
    let e3 = c3[4];
    let base3 = fs.stats().pages_programmed.get(Cause::Base);
    let ubi = fs.unmount().unwrap();
    let st = ubi.nand().stats();
    assert_eq!(st.pages_programmed.get(Cause::Base) - base3, 1);
    assert_eq!(st.pages_programmed.get(Cause::Log) - c3[2], 1, "one commit");
    assert_eq!(st.erases.total() - e3, 1);
}

/// Under the page cache, a refused reservation runs `make_free_space` as
/// `ubifs_budget_space` does (budget.c): `shrink_liability` writes back
/// `NR_TO_WRITE` = 16 dirty pages (whole inodes, oldest first) and the
/// reservation is tried again after each step that shrank the liability;
/// only when writeback cannot help does the file system GC and commit.
/// Writing a page back turns its budget (a maximal data node) into a data
/// node in a bud, which neither UBIFS's budget nor flashfs's gains much
/// from, so near full the liability drains step by step and then one commit
/// makes room for many more writes: far fewer commits than writes, one
/// ENOSPC at the end, every accepted file intact.
#[test]
fn page_cache_near_full_makes_free_space_as_ubifs() {
    let cfg = FsSettings { compression: Compression::None, ..FsSettings::default() };
    let fs = fs_on(64, 64, 2048, cfg);
    let mut c = PageCache::<Fs>::wrap(fs);
    let mut files = 0u32;
    let commits0 = c.inner().stats().commits;
    loop {
        let path = format!("/f{files}");
        let fd = c.create(&path).unwrap();
        let r = c.write(fd, 0, &data(4096, files as u8));
        c.close(fd).unwrap();
        match r {
            Ok(_) => files += 1,
            Err(e) => {
                assert_eq!(e.errno(), Errno::ENOSPC);
                break;
            }
        }
    }
    let st = c.stats().clone();
    assert!(st.pages_written_pressure > 0 && st.pages_written_background == 0, "{st:?}");
    assert_eq!(st.pages_written_pressure, st.inodes_written, "one-page inodes, written whole: {st:?}");
    let commits = c.inner().stats().commits - commits0;
    assert!(files > 1000, "the volume takes {files} files");
    assert!(commits * 16 < files as u64, "{commits} commits for {files} files");
    assert_eq!(c.inner().stats().fs.enospc, 1, "one refused write");
    c.sync().unwrap_or_else(|e| panic!("{e}: {:?} {:?}", c.inner().stats().fs, c.stats()));
    for i in (0..files).step_by(97) {
        let fd = c.open(&format!("/f{i}")).unwrap();
        assert_eq!(c.read(fd, 0, 8192).unwrap(), data(4096, i as u8));
        c.close(fd).unwrap();
    }
    c.inner_mut().check_invariants().unwrap();
}

/// A full volume can always be emptied: `ubifs_unlink` and `ubifs_rmdir`
/// (dir.c) go ahead without a budget when `ubifs_budget_space` answers
/// ENOSPC ("budgeted = 0"), and so does a truncation to zero
/// (`do_truncation`, file.c). Under the page cache, with dirty pages still
/// holding budget, every file of a volume filled to ENOSPC is removed, the
/// journal never runs out mid-operation, and the freed space takes new
/// files that survive a sync.
#[test]
fn a_full_volume_under_the_page_cache_can_be_emptied() {
    for pages in [1usize, 4, 16, 64] {
        empty_a_full_volume(pages);
    }
}

fn empty_a_full_volume(pages: usize) {
    let cfg = FsSettings { compression: Compression::None, ..FsSettings::default() };
    let mut c = PageCache::<Fs>::wrap(fs_on(64, 64, 2048, cfg));
    c.mkdir("/d").unwrap();
    let mut files = 0u32;
    loop {
        let r = c.create(&format!("/d/f{files}")).and_then(|fd| {
            let r = c.write(fd, 0, &data(4096 * pages, files as u8));
            c.close(fd).and(r)
        });
        match r {
            Ok(_) => files += 1,
            Err(e) => {
                assert_eq!(e.errno(), Errno::ENOSPC);
                break;
            }
        }
    }
    // One file truncated to zero (allowed) and one shrunk to a page's half.
    assert_eq!(c.inner().stats().fs.enospc_late, 0, "{pages}-page files: no write-back ran out of space");
    c.truncate("/d/f0", 0).unwrap_or_else(|e| panic!("truncate to 0 near full: {e}"));
    for i in 0..=files {
        // The last name exists only if its create was admitted.
        match c.unlink(&format!("/d/f{i}")) {
            Err(e) if i == files && e.errno() == Errno::ENOENT => {}
            r => r.unwrap_or_else(|e| panic!("{pages}-page files: unlink /d/f{i} of {files}: {e}")),
        }
    }
    c.rmdir("/d").unwrap();
    assert_eq!(c.inner().stats().fs.enospc_late, 0);
    c.inner_mut().check_invariants().unwrap();
    for i in 0..files / 2 {
        let fd = c.create(&format!("/g{i}")).unwrap();
        c.write(fd, 0, &data(4096, i as u8)).unwrap_or_else(|e| panic!("refill {i}: {e}"));
        c.close(fd).unwrap();
    }
    c.sync().unwrap();
    c.inner_mut().check_invariants().unwrap();
    for i in (0..files / 2).step_by(31) {
        let fd = c.open(&format!("/g{i}")).unwrap();
        assert_eq!(c.read(fd, 0, 8192).unwrap(), data(4096, i as u8));
        c.close(fd).unwrap();
    }
}

/// Budgeted pages leave room for the index nodes their write-back dirties
/// (`idx_growth`): files of mixed sizes written, rewritten and removed at
/// random on a nearly full volume under the page cache never make the
/// journal run out of space mid-operation, on two geometries.
#[test]
fn write_back_near_full_never_runs_out_of_space() {
    for (blocks, page_bytes) in [(64, 2048), (48, 4096)] {
        let cfg = FsSettings { compression: Compression::None, ..FsSettings::default() };
        let mut c = PageCache::<Fs>::wrap(fs_on(blocks, 64, page_bytes, cfg));
        let mut x = 0x9E37_79B9_7F4A_7C15u64 ^ blocks as u64;
        let (mut refused, mut done) = (0, 0);
        for step in 0..3000u32 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let name = format!("/f{}", x % 120);
            let r = if x.is_multiple_of(11) {
                c.unlink(&name).or_else(|e| if e.errno() == Errno::ENOENT { Ok(()) } else { Err(e) })
            } else {
                let pages = 1 + (x >> 8) as usize % 16;
                c.open(&name).or_else(|_| c.create(&name)).and_then(|fd| {
                    let r = c.write(fd, ((x >> 16) % 8) * 4096, &data(4096 * pages, step as u8));
                    c.close(fd).and(r.map(|_| ()))
                })
            };
            match r {
                Ok(()) => done += 1,
                Err(e) if e.errno() == Errno::ENOSPC => refused += 1,
                Err(e) => panic!("step {step}: {e}"),
            }
            assert_eq!(c.inner().stats().fs.enospc_late, 0, "{blocks}x{page_bytes}: step {step} ran out mid-operation");
        }
        eprintln!("{blocks}x{page_bytes}: {refused} refused, {done} done");
        assert!(
            refused > 50 && done > 1000,
            "{blocks}x{page_bytes}: near full for long: {refused} refused, {done} done"
        );
        c.sync().unwrap();
        c.inner_mut().check_invariants().unwrap();
    }
}

/// `s_maxbytes` is UBIFS's `key_max_inode_size` (29-bit block numbers times
/// 4 KiB = 2 TiB): a file grows past 4 GiB (seed 002's 4.7 GB large file) and
/// a write or truncate past 2 TiB fails with EFBIG.
#[test]
fn files_grow_past_4_gib_up_to_ubifs_key_limit() {
    let mut fs = fs_on(128, 64, 2048, FsSettings::default());
    let fd = fs.create("/big").unwrap();
    let at = 5u64 << 30;
    fs.write(fd, at, &data(4096, 3)).unwrap();
    assert_eq!(fs.read(fd, at, 4096).unwrap(), data(4096, 3));
    assert_eq!(fs.fstat(fd).unwrap().size, at + 4096);
    assert_eq!(MAX_FILE_BYTES, (1u64 << 29) * 4096);
    let past = fs.write(fd, MAX_FILE_BYTES - 4095, &data(4096, 4)).unwrap_err();
    assert_eq!(past.errno(), flashlab_vfs::Errno::EFBIG, "{past:?}");
    let t = fs.ftruncate(fd, MAX_FILE_BYTES + 1).unwrap_err();
    assert_eq!(t.errno(), flashlab_vfs::Errno::EFBIG, "{t:?}");
    fs.write(fd, MAX_FILE_BYTES - 4096, &data(4096, 5)).unwrap();
    assert_eq!(fs.fstat(fd).unwrap().size, MAX_FILE_BYTES);
}

/// The dentry cache and UBIFS's leaf node cache (`tnc_read_node_nm`,
/// `lnc_add`, `lnc_free`; src/names.rs): an entry is read from flash once,
/// the names an operation makes are cached, and `drop_caches` frees all but
/// what open files pin.
#[test]
fn names_are_read_once_until_drop_caches() {
    use flashlab_vfs::FileSystem;
    for strict in [false, true] {
        let mut fs = fs_on(128, 64, 2048, FsSettings { strict, ..FsSettings::default() });
        fs.mkdir("/a").unwrap();
        fs.mkdir("/a/b").unwrap();
        for n in ["x", "y", "z"] {
            let fd = fs.create(&format!("/a/b/{n}")).unwrap();
            fs.close(fd).unwrap();
        }
        fs.sync().unwrap();
        let reads = |fs: &Fs| fs.ubi().nand().stats().pages_read.total();
        let check = |fs: &mut Fs, what: &str, op: &dyn Fn(&mut Fs), more: bool| {
            let r = reads(fs);
            op(fs);
            // strict mode reads every node after each call: only the
            // non-strict run counts.
            if !strict {
                assert_eq!(reads(fs) > r, more, "{what}");
            }
        };
        check(
            &mut fs,
            "names made here are cached",
            &|fs| {
                fs.stat("/a/b/x").unwrap();
            },
            false,
        );
        FileSystem::drop_caches(&mut fs).unwrap();
        check(
            &mut fs,
            "after a drop the entries and the inode are read",
            &|fs| {
                fs.stat("/a/b/x").unwrap();
            },
            true,
        );
        check(
            &mut fs,
            "then they are cached",
            &|fs| {
                fs.stat("/a/b/x").unwrap();
            },
            false,
        );
        check(
            &mut fs,
            "readdir reads the entries not cached",
            &|fs| {
                fs.readdir("/a/b").unwrap();
            },
            true,
        );
        check(
            &mut fs,
            "and then none",
            &|fs| {
                fs.readdir("/a/b").unwrap();
            },
            false,
        );
        let (y, z) = (fs.stat("/a/b/y").unwrap(), fs.stat("/a/b/z").unwrap());
        check(&mut fs, "unlinking a cached name reads nothing", &|fs| fs.unlink("/a/b/y").unwrap(), false);
        assert_eq!(fs.stat("/a/b/y").unwrap_err().errno(), flashlab_vfs::Errno::ENOENT);
        check(&mut fs, "a rename caches the new name", &|fs| fs.rename("/a/b/z", "/a/w").unwrap(), false);
        check(&mut fs, "the new name is known", &|fs| assert_eq!(fs.stat("/a/w").unwrap().inum, z.inum), false);
        assert!(fs.stat("/a/b/z").is_err() && y.inum != z.inum);
        let fd = fs.open("/a/w").unwrap();
        FileSystem::drop_caches(&mut fs).unwrap();
        check(
            &mut fs,
            "an open file pins its entry and directories",
            &|fs| {
                fs.stat("/a/w").unwrap();
            },
            false,
        );
        check(
            &mut fs,
            "other names were dropped",
            &|fs| {
                fs.stat("/a/b/x").unwrap();
            },
            true,
        );
        fs.close(fd).unwrap();
        fs.sync().unwrap();
    }
}
