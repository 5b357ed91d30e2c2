//! Strict-mode invariants (e2fsck's passes, in memory): no block owned
//! twice, every used block owned (fixed metadata, the journal, an inode's
//! extents or extent-tree blocks, or freed by the running transaction),
//! free counts equal to the bitmaps, inode bitmap equal to the live inodes,
//! every inode reachable with the right link count, directory blocks'
//! entry bytes, the journal's accounting.

use crate::bits::Bits;
use crate::error::{Ext4Error, Ext4Result};
use crate::fs::Ext4;
use crate::layout::{BLOCK, FIRST_INO, ROOT_INO};
use std::collections::HashMap;

fn bad(msg: String) -> Ext4Error {
    Ext4Error::Invariant(msg)
}

impl Ext4 {
    /// Checks every invariant; the error names the first broken one.
    pub fn check(&self) -> Ext4Result<()> {
        self.check_blocks()?;
        self.check_inodes()?;
        self.check_tree()?;
        self.check_journal()
    }

    fn check_blocks(&self) -> Ext4Result<()> {
        let lay = &self.lay;
        let mut own = Bits::new(lay.blocks);
        let mut claim = |s: u64, n: u64, what: &dyn Fn() -> String| -> Ext4Result<()> {
            if s + n > lay.blocks {
                return Err(bad(format!("{} at {s}+{n} lies past the last block {}", what(), lay.blocks)));
            }
            for b in s..s + n {
                if own.get(b) {
                    return Err(bad(format!("block {b} owned twice (again by {})", what())));
                }
                own.set(b);
            }
            Ok(())
        };
        for (s, n) in lay.fixed_extents() {
            claim(s, n, &|| format!("fixed metadata at {s}+{n} (group {})", lay.group_of(s)))?;
        }
        for &(s, n) in &self.journal_runs {
            claim(s, n, &|| "the journal".into())?;
        }
        if let Some(b) = self.resize_dind {
            claim(b, 1, &|| "the resize inode's block".into())?;
        }
        for (&inum, ino) in &self.inodes {
            for e in &ino.extents {
                claim(e.pblk, e.len as u64, &|| format!("inode {inum} extent at {}", e.lblk))?;
            }
            for &b in ino.leaves.iter().chain(&ino.index) {
                claim(b, 1, &|| format!("inode {inum} extent-tree block"))?;
            }
        }
        for &(s, n) in &self.j.freed {
            claim(s, n, &|| "blocks freed by the running transaction".into())?;
        }
        for (s, n) in self.lg.extents() {
            claim(s, n, &|| "a locality-group preallocation".into())?;
        }
        for g in 0..lay.groups {
            let (s, e) = (lay.group_start(g), lay.group_end(g));
            if let Some(b) = (s..e).find(|&b| own.get(b) != self.bmap.get(b)) {
                let used = self.bmap.get(b);
                return Err(bad(format!(
                    "block {b}: bitmap says {}, but it is {}owned",
                    if used { "used" } else { "free" },
                    if used { "not " } else { "" }
                )));
            }
            // Preallocated blocks are taken in the allocator's bitmap, free on disk.
            let free = (e - s) - self.bmap.count_ones(s, e) + self.lg_free_in(g);
            if free != self.bfree[g as usize] {
                return Err(bad(format!(
                    "group {g}: {} free blocks counted, {free} in the bitmap and preallocations",
                    self.bfree[g as usize]
                )));
            }
        }
        Ok(())
    }

    fn check_inodes(&self) -> Ext4Result<()> {
        let lay = &self.lay;
        let ipg = lay.inodes_per_group as u64;
        for g in 0..lay.groups {
            let (s, e) = (g as u64 * ipg + 1, (g as u64 + 1) * ipg + 1);
            let mut used = 0u32;
            let mut dirs = 0u32;
            for i in s..e {
                let set = self.imap.get(i);
                let live = self.inodes.get(&(i as u32));
                let reserved = i < FIRST_INO as u64 && !matches!(i as u32, ROOT_INO);
                if set != (live.is_some() || reserved) {
                    return Err(bad(format!(
                        "inode {i}: bitmap {} but {}",
                        set,
                        if live.is_some() { "live" } else { "free" }
                    )));
                }
                used += set as u32;
                dirs += live.is_some_and(|x| x.is_dir) as u32;
            }
            if self.ifree[g as usize] != lay.inodes_per_group - used {
                return Err(bad(format!(
                    "group {g}: {} free inodes counted, {} in the bitmap",
                    self.ifree[g as usize],
                    lay.inodes_per_group - used
                )));
            }
            if self.ndirs[g as usize] != dirs {
                return Err(bad(format!("group {g}: {} directories counted, {dirs} found", self.ndirs[g as usize])));
            }
        }
        for (&inum, ino) in &self.inodes {
            let mut end = 0;
            for e in &ino.extents {
                if e.len == 0 || e.lblk < end {
                    return Err(bad(format!("inode {inum}: extents out of order or empty at {}", e.lblk)));
                }
                end = e.lend();
            }
            if !ino.is_dir && end > ino.size.div_ceil(BLOCK) {
                return Err(bad(format!("inode {inum}: block {} mapped past its size {}", end - 1, ino.size)));
            }
            let (l, i) = ino.tree_shape();
            if (l, i) != (ino.leaves.len(), ino.index.len()) {
                return Err(bad(format!(
                    "inode {inum}: {} extents need {l} leaves and {i} index blocks, has {} and {}",
                    ino.extents.len(),
                    ino.leaves.len(),
                    ino.index.len()
                )));
            }
        }
        Ok(())
    }

    /// Reachability and link counts, directory block bytes.
    fn check_tree(&self) -> Ext4Result<()> {
        let mut links: HashMap<u32, u32> = HashMap::new();
        let mut seen = vec![ROOT_INO];
        let mut stack = vec![ROOT_INO];
        links.insert(ROOT_INO, 2);
        while let Some(d) = stack.pop() {
            let ino = self.inode(d)?;
            let dir = ino.dir.as_deref().ok_or_else(|| bad(format!("inode {d} is a directory without entries")))?;
            if dir.used.len() as u64 != ino.mapped_blocks() || ino.size != dir.used.len() as u64 * BLOCK {
                return Err(bad(format!(
                    "directory {d}: {} blocks of entries, {} mapped, size {}",
                    dir.used.len(),
                    ino.mapped_blocks(),
                    ino.size
                )));
            }
            let mut bytes = vec![0u32; dir.used.len()];
            if let Some(b) = bytes.first_mut() {
                *b = 24;
            }
            for (name, &(child, blk)) in &dir.entries {
                bytes[blk as usize] += (8 + name.len() as u32 + 3) & !3;
                let c =
                    self.inode(child).map_err(|_| bad(format!("entry {name} in {d} names a free inode {child}")))?;
                if c.is_dir {
                    *links.entry(d).or_default() += 1;
                    links.insert(child, 2);
                    if seen.contains(&child) {
                        return Err(bad(format!("directory {child} linked twice")));
                    }
                    seen.push(child);
                    stack.push(child);
                } else {
                    *links.entry(child).or_default() += 1;
                }
            }
            if bytes != dir.used {
                return Err(bad(format!("directory {d}: entry bytes per block {bytes:?}, recorded {:?}", dir.used)));
            }
        }
        for (&inum, ino) in &self.inodes {
            let n = links.get(&inum).copied().unwrap_or(0);
            if n != ino.nlink {
                return Err(bad(format!("inode {inum}: nlink {} but {n} links found", ino.nlink)));
            }
            if n == 0 && ino.open == 0 {
                return Err(bad(format!("inode {inum}: unreachable and not open")));
            }
        }
        Ok(())
    }

    fn check_journal(&self) -> Ext4Result<()> {
        let j = &self.j;
        let used: u64 = j.committed.iter().map(|t| t.log_blocks).sum();
        if used != j.used || used > j.capacity() {
            return Err(bad(format!("journal: {used} log blocks held, {} counted, capacity {}", j.used, j.capacity())));
        }
        for t in &j.committed {
            let live = t.blocks.iter().filter(|b| j.cp.get(b) == Some(&t.tid)).count();
            if live != t.live {
                return Err(bad(format!("transaction {}: {} live blocks counted, {live} found", t.tid, t.live)));
            }
        }
        if j.cp.values().any(|tid| !j.committed.iter().any(|t| t.tid == *tid)) {
            return Err(bad("journal: a checkpoint entry names a released transaction".into()));
        }
        Ok(())
    }
}
