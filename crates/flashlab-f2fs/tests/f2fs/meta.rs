//! Node, NAT and dentry reads on a cold cache (`meta.rs`): what F2FS reads
//! at first use after mount and after `drop_caches`.

use super::{fs, strict};
use flashlab_f2fs::{F2fs, F2fsSettings, KernelRules, ADDRS_PER_INODE};
use flashlab_vfs::FileSystem;

/// (node, NAT, dentry) blocks read so far.
fn reads(f: &F2fs) -> (u64, u64, u64) {
    let s = f.stats();
    (s.node_blocks_read, s.nat_blocks_read, s.dentry_blocks_read)
}

fn put(f: &mut F2fs, path: &str, blocks: usize) {
    let fd = FileSystem::create(f, path).unwrap();
    if blocks > 0 {
        FileSystem::write(f, fd, 0, &vec![3u8; blocks * 4096]).unwrap();
    }
    FileSystem::close(f, fd).unwrap();
}

/// Everything written and checkpointed, then the caches dropped.
fn cold(f: &mut F2fs) {
    FileSystem::sync(f).unwrap();
    f.drop_caches().unwrap();
}

#[test]
fn first_lookup_after_mount_reads_roots_dentry_block() {
    let mut f = fs(256, strict());
    put(&mut f, "/f", 0);
    // The root inode was read at mount; the new name's lookup reads root's
    // only dentry block; the new inode is created in memory.
    assert_eq!(reads(&f), (0, 0, 1));
    put(&mut f, "/g", 0);
    assert_eq!(reads(&f), (0, 0, 1), "cached now");
}

#[test]
fn stat_after_drop_caches_reads_the_inodes_and_the_dentry_block() {
    let mut f = fs(256, strict());
    FileSystem::mkdir(&mut f, "/d").unwrap();
    for i in 0..3 {
        put(&mut f, &format!("/d/x{i}"), 1);
    }
    cold(&mut f);
    let r0 = reads(&f);
    // Root's inode page (a directory's dentry pages are mapped through its
    // node: the read extent cache is for regular files only) and dentry
    // block (names /d), /d's inode, /d's dentry block, x0's inode. Five NAT
    // entries changed at the checkpoint: they sit in its NAT journal (≤ 38),
    // so no NAT block is read.
    FileSystem::stat(&mut f, "/d/x0").unwrap();
    let r1 = reads(&f);
    assert_eq!((r1.0 - r0.0, r1.1 - r0.1, r1.2 - r0.2), (3, 0, 2));
    FileSystem::stat(&mut f, "/d/x1").unwrap();
    let r2 = reads(&f);
    assert_eq!((r2.0 - r1.0, r2.1 - r1.1, r2.2 - r1.2), (1, 0, 0), "one node per inode, no readahead");
}

/// `du`: readdir, then a stat of every entry, after `drop_caches`.
fn du(kernel: KernelRules) -> [(u64, u64, u64); 2] {
    let mut f = fs(256, F2fsSettings { kernel, ..strict() });
    FileSystem::mkdir(&mut f, "/d").unwrap();
    // 100 files: more NAT changes than the journal holds (38), so the
    // checkpoint writes NAT blocks and later lookups read one.
    for i in 0..100 {
        put(&mut f, &format!("/d/{i:03}"), 0);
    }
    cold(&mut f);
    let r0 = reads(&f);
    let names = FileSystem::readdir(&mut f, "/d").unwrap();
    assert_eq!(names.len(), 100);
    assert_eq!(f.inode_of("/d").unwrap().1.dent_slots.len(), 1);
    let r1 = reads(&f);
    for n in &names {
        FileSystem::stat(&mut f, &format!("/d/{}", n.name)).unwrap();
    }
    let r2 = reads(&f);
    [(r1.0 - r0.0, r1.1 - r0.1, r1.2 - r0.2), (r2.0 - r1.0, r2.1 - r1.1, r2.2 - r1.2)]
}

#[test]
fn du_reads_one_node_per_file_read_ahead_by_readdir_today_not_in_linux_3_8() {
    // readdir: root's inode page (after the NAT block holding every nid
    // here) and dentry block, /d's inode and its dentry block; today's
    // `readdir_ra` then reads the 100 inode pages ahead, so every stat finds
    // its inode cached.
    assert_eq!(du(KernelRules::Current), [(102, 1, 2), (0, 0, 0)]);
    // Linux 3.8 had no readdir_ra: one synchronous node read per stat.
    assert_eq!(du(KernelRules::Linux3_8), [(2, 1, 2), (100, 0, 0)]);
}

#[test]
fn reading_a_large_file_reads_its_direct_nodes_and_open_files_stay() {
    let mut f = fs(256, strict());
    let blocks = ADDRS_PER_INODE as usize + 10;
    put(&mut f, "/big", blocks);
    let fd = FileSystem::open(&mut f, "/big").unwrap();
    cold(&mut f);
    let r0 = reads(&f);
    // The open inode stays in the inode cache but its node page is dropped
    // (f2fs copies the inode and releases the page): the read needs it and
    // the direct node holding blocks past the inode's 923 addresses.
    FileSystem::read(&mut f, fd, 0, blocks * 4096).unwrap();
    let r1 = reads(&f);
    assert_eq!((r1.0 - r0.0, r1.2 - r0.2), (2, 0));
    FileSystem::stat(&mut f, "/big").unwrap();
    assert_eq!(reads(&f), r1, "the open inode's dentry is cached");
}

#[test]
fn metadata_reads_off_reads_nothing() {
    let mut f = fs(256, F2fsSettings { metadata_reads: false, ..strict() });
    FileSystem::mkdir(&mut f, "/d").unwrap();
    for i in 0..50 {
        put(&mut f, &format!("/d/{i}"), 2);
    }
    cold(&mut f);
    FileSystem::readdir(&mut f, "/d").unwrap();
    FileSystem::stat(&mut f, "/d/7").unwrap();
    FileSystem::unlink(&mut f, "/d/8").unwrap();
    assert_eq!(reads(&f), (0, 0, 0));
}
