//! Free space as UBIFS reports it (`ubifs_statfs`, super.c →
//! `ubifs_get_free_space_nolock`, budget.c): the main area less the used
//! space of non-index LEBs, less the reserves — the index's worst case
//! (`ubifs_calc_min_idx_lebs`: thrice the index, plus one LEB), the GC LEB,
//! one LEB per journal head, one for deletions — less dead and dark space
//! (`ubifs_calc_available`); the space budgeted for dirty pages is taken
//! off, and the rest is scaled from flash bytes to file bytes
//! (`ubifs_reported_space`). `available_bytes` (`f_bavail`) also leaves the
//! root-reserved pool (`rp_size`, 5 % of the main area, at most 5 MiB, as
//! `create_default_filesystem` sets it).

use crate::api::{StatFs, BLOCK};
use crate::fs::{Fs, F_INDEX, GC};
use crate::node::DATA_NODE_BYTES;

/// UBIFS_MAX_NODE_SZ (the largest inode node: 160 + 4096 bytes of inline data).
const MAX_NODE_SZ: u64 = 160 + 4096;
/// MIN_WRITE_SZ (ubifs.h): a data node with 8 bytes of data.
const MIN_WRITE_SZ: u64 = DATA_NODE_BYTES as u64 + 8;
/// MIN_INDEX_LEBS (budget.c).
const MIN_INDEX_LEBS: u64 = 2;

/// Constants of a volume that the statfs arithmetic needs.
#[derive(Debug, Clone, Copy)]
pub struct UbifsSpace {
    pub leb: u64,
    pub dead_wm: u64,
    pub dark_wm: u64,
    pub fanout: u64,
    pub jheads: u64,
}

impl UbifsSpace {
    /// `ubifs_idx_node_sz(c, fanout)`: UBIFS_IDX_NODE_SZ (28) plus a branch
    /// (UBIFS_BRANCH_SZ 12 + an 8-byte key) per child.
    pub fn max_idx_node_sz(&self) -> u64 {
        28 + 20 * self.fanout
    }

    /// `calc_dark` (lprops.c).
    pub fn dark(&self, spc: u64) -> u64 {
        if spc < self.dark_wm {
            spc
        } else if spc - self.dark_wm < MIN_WRITE_SZ {
            spc - MIN_WRITE_SZ
        } else {
            self.dark_wm
        }
    }

    /// `ubifs_reported_space` (budget.c): flash bytes to file bytes, each
    /// 4 KiB block costing a full data node plus thrice its share of index.
    pub fn reported(&self, free: u64) -> u64 {
        let f = if self.fanout > 3 { self.fanout >> 1 } else { 2 };
        let divisor = (BLOCK + DATA_NODE_BYTES as u64) + self.max_idx_node_sz() * 3 / (f - 1);
        free * BLOCK / divisor
    }

    /// `ubifs_calc_min_idx_lebs` for an index of `idx_size` bytes.
    pub fn min_idx_lebs(&self, idx_size: u64) -> u64 {
        let idx_leb_size = self.leb - self.max_idx_node_sz();
        ((3 * idx_size).div_ceil(idx_leb_size) + 1).max(MIN_INDEX_LEBS)
    }
}

impl Fs {
    pub(crate) fn ubifs_space(&self) -> UbifsSpace {
        let (leb, io) = (self.geo.leb_bytes as u64, self.geo.min_io as u64);
        UbifsSpace {
            leb,
            dead_wm: MIN_WRITE_SZ.next_multiple_of(io),
            dark_wm: MAX_NODE_SZ.next_multiple_of(io),
            fanout: self.cfg.fanout as u64,
            jheads: (GC + 1) as u64 + self.hot_heads_in_use() as u64,
        }
    }

    /// Bytes of the index: written znodes at their size, dirty ones at the
    /// largest (UBIFS's `old_idx_sz + idx_growth + uncommitted_idx`).
    fn index_bytes(&self, sp: &UbifsSpace) -> u64 {
        let mut bytes = 0;
        for z in self.tnc.znodes() {
            let n = self.tnc.node(z);
            bytes += match (n.dirty, n.loc) {
                (false, Some(l)) => l.aligned_len() as u64,
                _ => sp.max_idx_node_sz().next_multiple_of(8),
            };
        }
        bytes
    }

    /// `ubifs_calc_available` (budget.c).
    pub(crate) fn ubifs_available(&self) -> u64 {
        let sp = self.ubifs_space();
        let min_idx = sp.min_idx_lebs(self.index_bytes(&sp));
        let (mut used, mut dead, mut dark, mut idx_lebs) = (0u64, 0u64, 0u64, 0u64);
        for l in self.geo.main_first..self.geo.leb_count {
            let p = self.lp[l as usize];
            if p.flags & F_INDEX != 0 {
                idx_lebs += 1;
                continue;
            }
            let spc = (p.free + p.dirty) as u64;
            if spc < sp.dead_wm {
                dead += spc;
            } else {
                dark += sp.dark(spc);
            }
            used += sp.leb - spc;
        }
        let main_bytes = self.geo.main_lebs() as u64 * sp.leb;
        let reserve = (min_idx + 1 + sp.jheads + 1) * sp.leb;
        let extra_idx_dark = idx_lebs.saturating_sub(min_idx) * sp.dark_wm;
        main_bytes.saturating_sub(used + reserve + dead + dark + extra_idx_dark)
    }

    /// UBIFS's `statfs`: free and available bytes, whole 4 KiB blocks.
    pub(crate) fn ubifs_statfs(&self) -> StatFs {
        let sp = self.ubifs_space();
        let main_bytes = self.geo.main_lebs() as u64 * sp.leb;
        let free = sp.reported(self.ubifs_available().saturating_sub(self.reserved_bytes));
        let rp = sp.reported((main_bytes * 5 / 100).min(5 << 20));
        // init_constants_master: the block count leaves the GC LEB, the
        // deletion LEB, the minimum index and all but one journal head.
        let blocks_lebs = (self.geo.main_lebs() as u64).saturating_sub(1 + 1 + MIN_INDEX_LEBS + sp.jheads - 1);
        let total = sp.reported(blocks_lebs * (sp.leb - sp.leb % (BLOCK + DATA_NODE_BYTES as u64)));
        let blocks = |b: u64| b / BLOCK * BLOCK;
        StatFs {
            block_bytes: BLOCK,
            total_bytes: blocks(total),
            available_bytes: blocks(free.saturating_sub(rp)),
            free_bytes: blocks(free),
            leb_bytes: self.geo.leb_bytes,
            main_lebs: self.geo.main_lebs(),
            empty_lebs: self.count_empty(),
        }
    }
}
