//! Metadata reads on a cold cache (`meta.rs`): what ext4 reads at first use
//! after mount and after `drop_caches`, request by request, on a 1 GiB file
//! system (8 groups; group 0: block bitmap 129, inode bitmap 130, inode
//! table 131; root's directory block 643; the journal in groups 4–5).

use super::{settings, ssd};
use flashlab_ext4::{Cause, Ext4, Req};
use flashlab_vfs::FileSystem;

fn reads(log: &[Req]) -> Vec<(u64, u64)> {
    log.iter().filter(|r| r.cause == Cause::MetaRead).map(|r| (r.block, r.blocks)).collect()
}

fn put(fs: &mut Ext4, path: &str, bytes: usize) {
    let f = fs.create(path).unwrap();
    fs.write(f, 0, &vec![1u8; bytes]).unwrap();
    fs.close(f).unwrap();
}

/// Writes everything home and lets a later commit clean the checkpoint
/// list, so that `drop_caches` finds the buffers clean and unheld.
fn settle(fs: &mut Ext4) {
    fs.sync().unwrap();
    let z = fs.create("/settle").unwrap();
    fs.fsync(z).unwrap();
    fs.close(z).unwrap();
    fs.unlink("/settle").unwrap();
    fs.sync().unwrap();
    fs.commit().unwrap();
    fs.drop_caches().unwrap();
}

#[test]
fn first_use_after_mount_reads_directory_bitmaps_and_prefetches() {
    let mut fs = Ext4::format(ssd(1024, true), settings(|s| s.flex_bg_groups = 1)).unwrap();
    fs.record_requests(true);
    // Lookup of a new name scans root's directory; the inode bitmap of
    // group 0 (initialised by mkfs: root, lost+found) is read; the new
    // inode's table block was read at mount with root's.
    let fd = fs.create("/f").unwrap();
    assert_eq!(reads(&fs.record_requests(true)), vec![(643, 1), (130, 1)]);
    // Writeback: the goal group's bitmap; the goal (block 0) is taken, so
    // mballoc prefetches the bitmaps of the other initialised groups with
    // free blocks (5: the journal's tail; 7: the last group), then first fit.
    fs.write(fd, 0, &[7u8; 8192]).unwrap();
    fs.fsync(fd).unwrap();
    let log = fs.record_requests(true);
    assert_eq!(reads(&log), vec![(129, 1), (163_969, 1), (229_505, 1)]);
    assert_eq!(log.iter().position(|r| r.cause == Cause::Data), Some(3), "the reads come before the data");
    // A top-level directory goes to an empty group (Orlov): its bitmaps are
    // BLOCK_UNINIT / INODE_UNINIT, computed in memory, not read.
    fs.mkdir("/d").unwrap();
    for i in 0..3 {
        put(&mut fs, &format!("/d/x{i}"), 4096);
    }
    assert_eq!(reads(&fs.record_requests(true)), vec![]);
    fs.close(fd).unwrap();
    assert_eq!((fs.stats().metadata_blocks_read, fs.stats().metadata_read_requests), (5, 5));
}

#[test]
fn drop_caches_makes_lookups_stats_and_frees_read_again() {
    let mut fs = Ext4::format(ssd(1024, true), settings(|s| s.flex_bg_groups = 1)).unwrap();
    fs.mkdir("/d").unwrap();
    for i in 0..3 {
        put(&mut fs, &format!("/d/x{i}"), 4096);
    }
    let (d, x0) = (fs.stat("/d").unwrap().inum, fs.stat("/d/x0").unwrap().inum);
    let g = (d - 1) / fs.layout().inodes_per_group;
    let (bb, ib, it) = (fs.layout().block_bitmap(g), fs.layout().inode_bitmap(g), fs.layout().inode_table(g));
    let dir_block = fs.extents_of(d)[0].1;
    settle(&mut fs);
    fs.record_requests(true);
    // Root's block is still cached (the settling commit journaled it); /d's
    // inode, then its directory block; x0's inode shares /d's table block.
    fs.stat("/d/x0").unwrap();
    assert_eq!(reads(&fs.record_requests(true)), vec![(it, 1), (dir_block, 1)]);
    fs.stat("/d/x0").unwrap();
    fs.stat("/d/x2").unwrap();
    assert_eq!(reads(&fs.record_requests(true)), vec![], "cached now");
    // rm: freeing x1's block loads the group's block bitmap, freeing the
    // inode its inode bitmap (both initialised by the first allocations).
    fs.unlink("/d/x1").unwrap();
    assert_eq!(reads(&fs.record_requests(true)), vec![(bb, 1), (ib, 1)]);
    assert_eq!(x0, d + 1);
}

#[test]
fn open_files_and_dirty_buffers_stay_cached() {
    let mut fs = Ext4::format(ssd(1024, true), settings(|_| {})).unwrap();
    fs.mkdir("/d").unwrap();
    put(&mut fs, "/d/a", 4096);
    let fd = fs.open("/d/a").unwrap();
    settle(&mut fs);
    fs.record_requests(true);
    // The open file and its directory stay in the inode cache; reading its
    // data needs no metadata; its dentry is cached (no directory read).
    fs.read(fd, 0, 4096).unwrap();
    fs.stat("/d/a").unwrap();
    assert_eq!(reads(&fs.record_requests(true)), vec![]);
    // Dirty buffers (a transaction not yet written home) are never dropped.
    put(&mut fs, "/d/b", 4096);
    fs.commit().unwrap();
    fs.drop_caches().unwrap();
    fs.record_requests(true);
    fs.stat("/d/b").unwrap();
    assert_eq!(reads(&fs.record_requests(true)), vec![]);
}

#[test]
fn readdir_reads_every_block_and_inodes_come_with_the_table_readahead() {
    let mut fs = Ext4::format(ssd(1024, true), settings(|s| s.flex_bg_groups = 1)).unwrap();
    fs.mkdir("/d").unwrap();
    // 300 names of 40 bytes: 48-byte entries, 85 a block → 4 directory blocks.
    let names: Vec<String> = (0..300).map(|i| format!("/d/{i:0>40}")).collect();
    for n in &names {
        put(&mut fs, n, 0);
    }
    let d = fs.stat("/d").unwrap().inum;
    let g = (d - 1) / fs.layout().inodes_per_group;
    let it = fs.layout().inode_table(g);
    let dir: Vec<(u64, u64, u32)> = fs.extents_of(d);
    assert_eq!(dir.iter().map(|e| e.2 as u64).sum::<u64>(), 4);
    settle(&mut fs);
    fs.record_requests(true);
    assert_eq!(fs.readdir("/d").unwrap().len(), 300);
    let got = reads(&fs.record_requests(true));
    // /d's inode: table blocks from the table's start (/d is its first
    // inode) through the used part — 301 inodes of 256 bytes, 16 a block:
    // blocks 0..=18 — then the four directory blocks.
    assert_eq!(got[0], (it, 19));
    assert_eq!(got[1..].iter().map(|r| r.1).sum::<u64>(), 4);
    // Every stat (du -s) now finds its inode's block cached.
    for n in &names {
        fs.stat(n).unwrap();
    }
    assert_eq!(reads(&fs.record_requests(true)), vec![]);
    // inode_readahead_blks = 0: only the inode's own block.
    let mut fs = Ext4::format(
        ssd(1024, true),
        settings(|s| {
            s.inode_readahead_blks = 0;
            s.flex_bg_groups = 1;
        }),
    )
    .unwrap();
    fs.mkdir("/d").unwrap();
    for n in names.iter().take(40) {
        put(&mut fs, n, 0);
    }
    settle(&mut fs);
    fs.record_requests(true);
    fs.stat(&names[39]).unwrap();
    let got = reads(&fs.record_requests(true));
    assert_eq!(got[0], (it, 1), "/d's inode");
    assert_eq!(got.last(), Some(&(it + 2, 1)), "inode 40 of the group: table block 2");
}

#[test]
fn metadata_reads_off_reads_no_metadata() {
    let mut fs = Ext4::format(ssd(1024, true), settings(|s| s.metadata_reads = false)).unwrap();
    fs.record_requests(true);
    fs.mkdir("/d").unwrap();
    for i in 0..20 {
        put(&mut fs, &format!("/d/x{i}"), 8192);
    }
    settle(&mut fs);
    fs.readdir("/d").unwrap();
    fs.unlink("/d/x3").unwrap();
    assert_eq!(reads(&fs.record_requests(false)), vec![]);
    assert_eq!(fs.stats().metadata_blocks_read, 0);
}
