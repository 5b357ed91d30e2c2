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
    let mut fs = fs_on(128, 64, 2048, FsSettings { compression: Compression::None, ..FsSettings::default() });
    let fd = fs.create("/big").unwrap();
    fs.write(fd, 0, &data(600_000, 1)).unwrap();
    fs.fsync(fd).unwrap();
    fs.close(fd).unwrap();
    fs.commit_all().unwrap();
    let (e0, u0) = (fs.stats().erases, fs.stats().fs.commit_unmaps);
    fs.unlink("/big").unwrap();
    fs.sync().unwrap();
    // The deleted nodes' space counts as dirty in the LEB properties from
    // this commit on; the next commit finds those LEBs freeable.
    fs.commit_now().unwrap();
    fs.commit_now().unwrap();
    let (e1, u1) = (fs.stats().erases, fs.stats().fs.commit_unmaps);
    // 600 000 bytes fill at least four 124 KiB LEBs, all obsolete now: the
    // commit unmaps them (ubifs_gc_start_commit) without any GC.
    assert!(u1 - u0 >= 4, "{u0} -> {u1}");
    assert!(e1 - e0 >= u1 - u0, "each unmap is an erase: {e0} -> {e1}");
    assert_eq!(fs.stats().gc_runs, 0);
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
