//! Which group a new inode goes to (fs/ext4/ialloc.c): `find_group_orlov`
//! for directories, `find_group_other` for files. With flex_bg both work on
//! flex groups (`get_orlov_stats` sums a flex group's counters, as
//! `s_flex_groups` does) and pack inodes into the first groups of the
//! chosen flex group.

use crate::fs::Ext4;
use crate::layout::ROOT_INO;

/// `struct orlov_stats`: a group's (or a flex group's) counters.
#[derive(Debug, Clone, Copy)]
struct OrlovStats {
    free_inodes: u64,
    free_clusters: u64,
    used_dirs: u64,
}

impl Ext4 {
    /// `get_orlov_stats`: group `g`'s counters, or flex group `g`'s summed.
    fn orlov_stats(&self, g: u32) -> OrlovStats {
        let flex = self.lay.flex_groups;
        let first = g * flex;
        let last = (first + flex).min(self.lay.groups);
        let mut st = OrlovStats { free_inodes: 0, free_clusters: 0, used_dirs: 0 };
        for i in first as usize..last as usize {
            st.free_inodes += self.ifree[i] as u64;
            st.free_clusters += self.bfree[i];
            st.used_dirs += self.ndirs[i] as u64;
        }
        st
    }

    /// `found_flex_bg`: inodes are packed at the beginning of the flex
    /// group's inode tables — its first group with a free inode.
    fn first_group_with_inodes(&self, flex_group: u32) -> Option<u32> {
        let flex = self.lay.flex_groups;
        if flex == 1 {
            return Some(flex_group);
        }
        let first = flex_group * flex;
        (first..(first + flex).min(self.lay.groups)).find(|&g| self.ifree[g as usize] > 0)
    }

    /// `find_group_orlov`: a top-level directory (`name` given, parent the
    /// root) goes to the (flex) group with the fewest directories among
    /// those with at least average free inodes and blocks, searched from
    /// the name's half-MD4 hash with the superblock's seed; other
    /// directories (and files whose parent's flex group is full) to the
    /// first (flex) group from the parent's last allocation on that is not
    /// crowded; else the fallback.
    pub(crate) fn find_group_orlov(&self, parent: u32, name: Option<&str>) -> Option<u32> {
        let real = self.lay.groups;
        let flex = self.lay.flex_groups;
        let ngroups = real.div_ceil(flex) as u64;
        let ipg = self.lay.inodes_per_group as u64;
        let freei: u64 = self.ifree.iter().map(|&x| x as u64).sum();
        let avefreei = freei / ngroups;
        let avefreec = self.free_blocks() / ngroups;
        let ndirs: u64 = self.ndirs.iter().map(|&x| x as u64).sum();
        let parent_group = self.lay.group_of_inode(parent);
        let chosen = match name {
            Some(name) if parent == ROOT_INO => {
                // ext4fs_dirhash(DX_HASH_HALF_MD4, s_hash_seed) % ngroups.
                let seed = crate::dirhash::parse_seed(&self.s.hash_seed).unwrap_or_default();
                let start = crate::dirhash::half_md4(name.as_bytes(), seed) as u64 % ngroups;
                let mut best: Option<u64> = None;
                let mut best_ndir = ipg;
                for i in 0..ngroups {
                    let g = (start + i) % ngroups;
                    let st = self.orlov_stats(g as u32);
                    if st.free_inodes == 0
                        || st.used_dirs >= best_ndir
                        || st.free_inodes < avefreei
                        || st.free_clusters < avefreec
                    {
                        continue;
                    }
                    best = Some(g);
                    best_ndir = st.used_dirs;
                }
                best
            }
            _ => {
                // Linux ≥ 6.1 (the kernel check's): `inodes_per_group * flex_size / 16`.
                let max_dirs = ndirs / ngroups + ipg * flex as u64 / 16;
                let min_inodes = avefreei.saturating_sub(ipg * flex as u64 / 4).max(1);
                // `min_clusters` is an int: when the average is below a
                // quarter of a (flex) group it goes negative, and compared
                // with the u64 `free_clusters` it excludes every group.
                let min_clusters = avefreec.checked_sub(self.lay.blocks_per_group * flex as u64 / 4);
                let start = self.inode(parent).ok().and_then(|i| i.last_alloc_group).unwrap_or(parent_group) / flex;
                (0..ngroups).map(|i| (start as u64 + i) % ngroups).find(|&g| {
                    let st = self.orlov_stats(g as u32);
                    st.used_dirs < max_dirs
                        && st.free_inodes >= min_inodes
                        && min_clusters.is_some_and(|m| st.free_clusters >= m)
                })
            }
        };
        if let Some(g) = chosen.and_then(|g| self.first_group_with_inodes(g as u32)) {
            return Some(g);
        }
        // fallback: from the parent's group, a group with at least average
        // free inodes (over all groups), then any with a free inode.
        let avefreei = freei / real as u64;
        let from_parent = |min: u64| {
            (0..real).map(|i| (parent_group + i) % real).find(|&g| {
                let free = self.ifree[g as usize] as u64;
                free > 0 && free >= min
            })
        };
        from_parent(avefreei).or_else(|| from_parent(0))
    }

    /// `find_group_other`: with flex_bg the first group with a free inode
    /// in the parent's flex group, then in its last allocation's, else
    /// Orlov for a new flex group. Without: the parent's group if it has
    /// free inodes and blocks, else a quadratic hash search from the parent's
    /// group plus its inode number, else a linear one for a free inode.
    pub(crate) fn find_group_other(&self, parent: u32) -> Option<u32> {
        let n = self.lay.groups;
        let flex = self.lay.flex_groups;
        let parent_group = self.lay.group_of_inode(parent);
        if flex > 1 {
            let last_alloc = self.inode(parent).ok().and_then(|i| i.last_alloc_group);
            for g in std::iter::once(parent_group).chain(last_alloc) {
                if let Some(found) = self.first_group_with_inodes(g / flex) {
                    return Some(found);
                }
            }
            return self.find_group_orlov(parent, None);
        }
        let ok = |g: u32| self.ifree[g as usize] > 0 && self.bfree[g as usize] > 0;
        if ok(parent_group) {
            return Some(parent_group);
        }
        let mut g = ((parent_group as u64 + parent as u64) % n as u64) as u32;
        let mut i = 1;
        while i < n {
            g += i;
            if g >= n {
                g -= n;
            }
            if ok(g) {
                return Some(g);
            }
            i <<= 1;
        }
        (1..=n).map(|i| (parent_group + i) % n).find(|&g| self.ifree[g as usize] > 0)
    }
}
