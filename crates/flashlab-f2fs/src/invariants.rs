//! Strict-mode invariants: every valid block in the SIT is reachable
//! from exactly one inode or node through the NAT, and vice versa; no
//! block is owned twice; the SSA names each block's owner; per-segment
//! valid counts, free and prefree counts agree with the bitmaps.

use crate::error::{F2fsError, F2fsResult};
use crate::fs::F2fs;
use crate::layout::BLKS_PER_SEG;
use crate::seg::NONE;
use crate::temp::LogType;

fn bad(msg: String) -> F2fsError {
    F2fsError::Invariant(msg)
}

impl F2fs {
    /// Checks every invariant; the error says which one failed and where.
    pub fn check(&self) -> F2fsResult<()> {
        let sm = &self.sm;
        let n = sm.segs as usize * BLKS_PER_SEG as usize;
        let mut seen = vec![false; n];
        let mut claim = |b: u32, what: &str| -> F2fsResult<()> {
            if b as usize >= n {
                return Err(bad(format!("{what} points at block {b} past the main area")));
            }
            if std::mem::replace(&mut seen[b as usize], true) {
                return Err(bad(format!("block {b} allocated twice ({what})")));
            }
            if !sm.is_valid(b) {
                return Err(bad(format!("{what} points at block {b}, invalid in the SIT")));
            }
            Ok(())
        };
        let mut nodes = 0u64;
        for (&ino, i) in &self.inodes {
            for (k, &b) in i.blocks.iter().enumerate().filter(|(_, b)| **b != NONE) {
                claim(b, &format!("inode {ino} block {k}"))?;
                if sm.owner[b as usize] != ino || sm.ofs[b as usize] as usize != k {
                    return Err(bad(format!("SSA of block {b} does not name inode {ino} block {k}")));
                }
                let t = LogType::from_u8(sm.seg_type[(b / BLKS_PER_SEG) as usize]);
                if !t.is_data() {
                    return Err(bad(format!("data block {b} of inode {ino} in a {t:?} segment")));
                }
            }
            let nids = i.dnodes.iter().chain(i.inds.iter()).copied().chain([i.dind, ino]).filter(|&x| x != 0);
            for nid in nids {
                nodes += 1;
                if self.nm.kind[nid as usize] == 0 {
                    return Err(bad(format!("inode {ino} refers to free node {nid}")));
                }
                if self.nm.owner[nid as usize] != ino {
                    return Err(bad(format!("node {nid} of inode {ino} owned by {}", self.nm.owner[nid as usize])));
                }
                let b = self.nm.addr[nid as usize];
                if b != NONE {
                    claim(b, &format!("NAT entry of node {nid}"))?;
                    if sm.owner[b as usize] != nid
                        || LogType::from_u8(sm.seg_type[(b / BLKS_PER_SEG) as usize]).is_data()
                    {
                        return Err(bad(format!("SSA of node block {b} does not name node {nid}")));
                    }
                }
            }
        }
        if nodes != self.nm.valid_nodes {
            return Err(bad(format!("{nodes} nodes reachable, NAT counts {}", self.nm.valid_nodes)));
        }
        let mut total = 0u64;
        let (mut free, mut prefree) = (0u32, 0u32);
        for s in 0..sm.segs {
            let su = s as usize;
            let w = su * BLKS_PER_SEG as usize / 64;
            let bits: u32 = sm.map[w..w + BLKS_PER_SEG as usize / 64].iter().map(|x| x.count_ones()).sum();
            if bits != sm.valid[su] as u32 {
                return Err(bad(format!("segment {s}: SIT count {} but {bits} bits", sm.valid[su])));
            }
            let reached = (s * BLKS_PER_SEG..(s + 1) * BLKS_PER_SEG).filter(|&b| seen[b as usize]).count() as u32;
            if reached != bits {
                return Err(bad(format!("segment {s}: {bits} valid blocks, {reached} reachable")));
            }
            total += bits as u64;
            if sm.free[su] {
                free += 1;
                if bits != 0 || sm.open[su] {
                    return Err(bad(format!("free segment {s} holds {bits} valid blocks or is open")));
                }
            }
            prefree += u32::from(sm.is_prefree(s));
        }
        if total != sm.valid_total {
            return Err(bad(format!("{total} valid blocks, counter {}", sm.valid_total)));
        }
        if free != sm.free_segs || prefree != sm.prefree {
            return Err(bad(format!("free/prefree {free}/{prefree}, counters {}/{}", sm.free_segs, sm.prefree)));
        }
        let free_secs = (0..self.lay.section_count)
            .filter(|&c| (c * sm.segs_per_sec..(c + 1) * sm.segs_per_sec).all(|s| sm.free[s as usize]))
            .count() as u32;
        if free_secs != sm.free_secs {
            return Err(bad(format!("{free_secs} free sections, counter {}", sm.free_secs)));
        }
        for (t, c) in sm.cur.iter().enumerate() {
            if c.seg != NONE && (!sm.open[c.seg as usize] || sm.seg_type[c.seg as usize] != t as u8) {
                return Err(bad(format!("log {t}'s segment {} not open or of another type", c.seg)));
            }
        }
        if self.used_blocks() > self.lay.user_block_count {
            return Err(bad(format!("{} blocks used, {} user blocks", self.used_blocks(), self.lay.user_block_count)));
        }
        Ok(())
    }
}
