//! Results: NAND pages programmed by cause, erases, GC runs, commits,
//! index nodes written, mount cost, erase-count distribution.

use crate::fs::Fs;
use flashlab_mtd::{Cause, CauseCounts};
use serde::Serialize;

/// Counters kept by the file system.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct FsCounters {
    pub ops: u64,
    pub commits: u64,
    pub index_nodes_written: u64,
    pub gc_runs: u64,
    pub gc_moved_nodes: u64,
    pub replayed_buds: u64,
    pub dropped_dangling: u64,
    pub orphans_deleted: u64,
    pub enospc: u64,
    /// ENOSPC found after admission (a budgeting bug if non-zero).
    pub enospc_late: u64,
    /// Commits that failed (the file system then needs a remount).
    pub failed_commits: u64,
    /// NAND operations of the last mount (flashfs part, UBI attach excluded).
    pub mount_ops: u64,
    /// Index updates committed: distinct keys whose index entry changed,
    /// summed over commits (seed 000's count).
    pub index_updates: u64,
    /// The same, data keys only.
    pub index_updates_data: u64,
    /// Operations (groups) written to a hot or a cold journal head.
    pub hot_writes: u64,
    pub cold_writes: u64,
    /// Hot writes forced by a key already in the delayed hot journal.
    pub sticky_hot_writes: u64,
    /// Commits that committed the hot journal / only the cold journals
    /// (delayed hot commit on).
    pub hot_commits: u64,
    pub cold_only_commits: u64,
    /// Pages GC read from victims (whole written part without the validity
    /// bitmap, valid pages only with it).
    pub gc_pages_read: u64,
    /// Freeable LEBs (every node obsolete) unmapped for reuse because no
    /// erased LEB was left (UBIFS returns these from its GC).
    pub freeable_reclaims: u64,
    /// Commits run in the background (journal past 13/16 of its size).
    pub bg_commits: u64,
    /// Freeable LEBs unmapped by commits (`ubifs_gc_start_commit` and
    /// `ubifs_gc_end_commit`).
    pub commit_unmaps: u64,
    /// Empty LEBs taken for index nodes.
    pub index_lebs_taken: u64,
    /// Commits that appended only the changed LPT nodes, and commits that
    /// rewrote the whole LPT into the other area.
    pub lpt_incremental_commits: u64,
    pub lpt_full_commits: u64,
}

/// Erase-count distribution over good PEBs.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct EraseDistribution {
    pub min: u64,
    pub max: u64,
    pub mean: f64,
    pub stddev: f64,
    /// PEB counts in 8 equal-width buckets from min to max.
    pub histogram: Vec<u64>,
}

/// Everything item 6 of the issue asks for.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Stats {
    /// Pages programmed by cause (data, base, index, lpt, log, gc,
    /// wear_level, scrub, ubi_header, fastmap, meta, mount, other).
    pub pages_programmed: CauseCounts,
    pub pages_programmed_total: u64,
    pub pages_read_total: u64,
    pub erases: u64,
    pub gc_runs: u64,
    pub commits: u64,
    pub index_nodes_written: u64,
    /// NAND operations of UBI attach plus flashfs mount.
    pub mount_nand_ops: u64,
    pub attach_nand_ops: u64,
    pub attach_mode: String,
    pub wl_moves: u64,
    pub scrubs: u64,
    pub erase_counts: EraseDistribution,
    pub fs: FsCounters,
}

/// Summary of erase counts.
pub fn distribution(ecs: &[u64]) -> EraseDistribution {
    if ecs.is_empty() {
        return EraseDistribution::default();
    }
    let (min, max) = (*ecs.iter().min().unwrap_or(&0), *ecs.iter().max().unwrap_or(&0));
    let n = ecs.len() as f64;
    let mean = ecs.iter().sum::<u64>() as f64 / n;
    let var = ecs.iter().map(|e| (*e as f64 - mean).powi(2)).sum::<f64>() / n;
    let mut histogram = vec![0u64; 8];
    let w = ((max - min) as f64 / 8.0).max(1e-9);
    for e in ecs {
        let b = (((*e - min) as f64 / w) as usize).min(7);
        histogram[b] += 1;
    }
    EraseDistribution { min, max, mean, stddev: var.sqrt(), histogram }
}

impl Fs {
    /// Counters of the whole stack since the device was created.
    pub fn stats(&self) -> Stats {
        let m = self.ubi.nand().stats();
        let u = self.ubi.stats();
        Stats {
            pages_programmed: m.pages_programmed.clone(),
            pages_programmed_total: m.pages_programmed.total(),
            pages_read_total: m.pages_read.total(),
            erases: m.erases.total(),
            gc_runs: self.counters.gc_runs,
            commits: self.counters.commits,
            index_nodes_written: self.counters.index_nodes_written,
            mount_nand_ops: u.attach_ops + self.counters.mount_ops,
            attach_nand_ops: u.attach_ops,
            attach_mode: u.attach_mode.clone(),
            wl_moves: u.wl_moves,
            scrubs: u.scrubs,
            erase_counts: distribution(&self.ubi.erase_counters()),
            fs: self.counters.clone(),
        }
    }

    /// Pages programmed for one cause.
    pub fn pages_programmed(&self, c: Cause) -> u64 {
        self.ubi.nand().stats().pages_programmed.get(c)
    }
}
