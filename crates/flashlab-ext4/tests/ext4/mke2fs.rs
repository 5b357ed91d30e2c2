//! The model's mkfs against e2fsprogs' own: every group's bitmaps and inode
//! table, and after mkfs each group's free blocks and the journal's blocks,
//! with and without flex_bg. The live test runs `mkfs.ext4` on a sparse
//! file and reads `dumpe2fs` (it skips, saying why, where e2fsprogs is
//! missing); the fixed test holds figures mke2fs 1.47.0 printed.

use crate::{settings, ssd};
use flashlab_ext4::{Content, Ext4, Ext4Settings, Layout};
use std::process::Command;

/// One group as dumpe2fs prints it.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
struct Group {
    block_bitmap: u64,
    inode_bitmap: u64,
    inode_table: u64,
    free_blocks: u64,
}

fn number_after(line: &str, key: &str) -> Option<u64> {
    let rest = line.split(key).nth(1)?.trim_start();
    rest.split(|c: char| !c.is_ascii_digit()).next()?.parse().ok()
}

fn parse_dumpe2fs(text: &str) -> Vec<Group> {
    let mut groups: Vec<Group> = Vec::new();
    for line in text.lines() {
        let t = line.trim();
        if t.starts_with("Group ") && t.contains("(Blocks ") {
            groups.push(Group::default());
        }
        let Some(g) = groups.last_mut() else { continue };
        if let Some(b) = number_after(t, "Block bitmap at ") {
            g.block_bitmap = b;
        } else if let Some(b) = number_after(t, "Inode bitmap at ") {
            g.inode_bitmap = b;
        } else if let Some(b) = number_after(t, "Inode table at ") {
            g.inode_table = b;
        } else if t.contains(" free blocks, ") {
            g.free_blocks = t.split(' ').next().and_then(|w| w.parse().ok()).unwrap_or(0);
        }
    }
    groups
}

fn tool_missing() -> Option<String> {
    for t in ["mkfs.ext4", "dumpe2fs", "debugfs"] {
        let found = Command::new("sh").args(["-c", &format!("command -v {t}")]).output().map(|o| o.status.success());
        if !found.unwrap_or(false) {
            return Some(format!("{t} is not installed (e2fsprogs)"));
        }
    }
    None
}

/// mkfs.ext4 with the model's settings on a sparse file of `mib` MiB:
/// dumpe2fs's groups and the journal inode's blocks as runs.
fn mke2fs(mib: u64, s: &Ext4Settings) -> (Vec<Group>, Vec<(u64, u64)>) {
    let path =
        std::env::temp_dir().join(format!("flashlab-mke2fs-{}-{mib}-{}.img", std::process::id(), s.flex_bg_groups));
    let f = std::fs::File::create(&path).unwrap();
    f.set_len(mib << 20).unwrap();
    drop(f);
    let p = path.to_str().unwrap();
    let bpg = (s.group_mib as u64 * 256).to_string();
    let ratio = (s.inode_ratio_kib as u64 * 1024).to_string();
    let flex = s.flex_bg_groups.to_string();
    let journal = format!("size={}", s.journal_mib);
    let reserved = s.reserved_percent.to_string();
    let mut args = vec!["-F", "-q", "-t", "ext4", "-b", "4096", "-I", "256", "-i", &ratio, "-m", &reserved];
    args.extend(["-g", &bpg, "-J", &journal, "-E", "nodiscard"]);
    if s.flex_bg_groups > 1 {
        args.extend(["-G", &flex]);
    } else {
        args.extend(["-O", "^flex_bg"]);
    }
    args.push(p);
    let run = |cmd: &str, a: &[&str]| {
        let o = Command::new(cmd).args(a).output().unwrap();
        assert!(o.status.success(), "{cmd} {a:?}: {}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    run("mkfs.ext4", &args);
    let groups = parse_dumpe2fs(&run("dumpe2fs", &[p]));
    let mut journal: Vec<(u64, u64)> = Vec::new();
    for b in run("debugfs", &["-R", "blocks <8>", p]).split_whitespace().map(|w| w.parse::<u64>().unwrap()) {
        match journal.last_mut() {
            Some(r) if r.0 + r.1 == b => r.1 += 1,
            _ => journal.push((b, 1)),
        }
    }
    let _ = std::fs::remove_file(&path);
    (groups, journal)
}

fn model_groups(l: &Layout) -> Vec<Group> {
    (0..l.groups)
        .map(|g| Group {
            block_bitmap: l.block_bitmap(g),
            inode_bitmap: l.inode_bitmap(g),
            inode_table: l.inode_table(g),
            free_blocks: 0,
        })
        .collect()
}

fn without_free(v: &[Group]) -> Vec<Group> {
    v.iter().map(|g| Group { free_blocks: 0, ..g.clone() }).collect()
}

#[test]
fn mkfs_lays_out_groups_and_the_journal_as_mke2fs_does() {
    if let Some(why) = tool_missing() {
        println!("skipped: {why}");
        return;
    }
    // (MiB, group MiB, inode ratio KiB, groups per flex, journal MiB); the
    // third spills a flex group's tables over group 1's superblock backup.
    let cases = [
        (512, 128, 16, 16, 16),
        (512, 128, 16, 1, 16),
        (1024, 16, 4, 16, 16),
        (2048, 16, 16, 8, 32),
        (16000, 128, 16, 16, 64),
    ];
    for (mib, group_mib, ratio, flex, journal_mib) in cases {
        let s = settings(|s| {
            s.group_mib = group_mib;
            s.inode_ratio_kib = ratio;
            s.flex_bg_groups = flex;
            s.journal_mib = journal_mib;
            s.content = Content::None;
        });
        let what = format!("{mib} MiB, {group_mib} MiB groups, flex {flex}");
        let (kernel, journal) = mke2fs(mib, &s);
        let l = Layout::new(mib << 20, &s).unwrap();
        assert_eq!(without_free(&kernel), model_groups(&l), "{what}: bitmaps and inode tables");
        if mib > 2048 {
            continue; // the SSD for a full mkfs would be large; the layout is what differs with size
        }
        let fs = Ext4::format(ssd(mib, false), s.clone()).unwrap();
        assert_eq!(fs.journal_extents(), &journal[..], "{what}: the journal's blocks");
        let free: Vec<u64> = (0..l.groups).map(|g| fs.group_free_blocks(g)).collect();
        assert_eq!(free, kernel.iter().map(|g| g.free_blocks).collect::<Vec<_>>(), "{what}: free blocks per group");
    }
}

#[test]
fn flex_bg_layout_of_a_16000_mib_file_system_is_mke2fs_s() {
    // dumpe2fs of `mkfs.ext4 -F -q` (1.47.0, defaults: flex_bg 16) on 16000 MiB.
    let l = Layout::new(16000 << 20, &Ext4Settings::default()).unwrap();
    assert_eq!((l.groups, l.flex_groups, l.gdt_blocks, l.rsv_gdt_blocks), (125, 16, 2, 1024));
    let at = |g: u32| (l.block_bitmap(g), l.inode_bitmap(g), l.inode_table(g));
    assert_eq!(at(0), (1027, 1043, 1059));
    assert_eq!(at(1).2, 1571);
    assert_eq!(at(15).2, 8739);
    assert_eq!(at(16), (524288, 524304, 524320));
    assert_eq!(at(17), (524289, 524305, 524832));
    assert_eq!((at(49).0, at(49).2), (1572865, 1573408));
    assert_eq!((at(63).0, at(63).2), (1572879, 1580576));
    // The last flex group (112..=124) keeps its tables contiguous: offsets of 13.
    assert_eq!((at(124).0, at(124).2), (3670028, 3676186));
    assert_eq!(l.data_blocks_in(16), 24544);
    assert_eq!(l.data_blocks_in(17), 32768);
    assert!(!l.may_be_block_uninit(16) && l.may_be_block_uninit(17) && !l.may_be_block_uninit(124));
}
