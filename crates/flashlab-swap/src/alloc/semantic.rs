//! `semantic`: the seed's semantic-aware allocator (seed 003, §2.3), on the 2.6.34
//! area (whole-area discard at swapon as `sys_swapon` does). Slots are handed out
//! cluster by cluster, each cluster's slots in order; a new cluster is found by its
//! three rules:
//!
//! 1. merged TRIM: find [`MERGE`] consecutive wholly free clusters and discard them in
//!    one 16 MiB TRIM; they are then used one after another;
//! 2. semantic awareness: once those are used, first look for one wholly free cluster
//!    among slots already written (data the FTL still maps; the overwrite invalidates
//!    it, no TRIM needed) and reuse it; only if there is none, scan past the end of the
//!    last trimmed range (wrapping) for [`MERGE`] free clusters and trim them (rule 1);
//! 3. alignment: clusters start at multiples of 256 slots.
//!
//! Not in the seed, needed when neither rule finds a cluster: any wholly free aligned
//! cluster (nothing written in it, so no TRIM is due), else the first free slot from
//! `cluster_next` (the kernel's `checks:` scan), without TRIM.

use super::scan::first_free_from;
use crate::area::{Discard, SwapArea, CLUSTER};

/// Clusters per merged TRIM (16 × 1 MiB).
pub const MERGE: u32 = 16;

#[derive(Clone, Debug)]
pub struct SemanticAlloc {
    /// Cluster allocated from and its next slot.
    cur: Option<(u32, u32)>,
    /// Trimmed clusters not used yet: `[pool, pool_end)`.
    pool: u32,
    pool_end: u32,
    /// Cluster after the last trimmed range.
    trim_end: u32,
}

impl SemanticAlloc {
    pub fn new(_a: &SwapArea) -> Self {
        SemanticAlloc { cur: None, pool: 0, pool_end: 0, trim_end: 0 }
    }

    /// A slot, taken, and the merged discard sent for it (rule 1) if any.
    pub fn get(&mut self, a: &mut SwapArea, discardable: bool) -> Option<(u32, Option<Discard>)> {
        let mut discard = None;
        loop {
            if let Some((c, next)) = self.cur {
                if let Some(s) = (next..(c + 1) * CLUSTER).find(|&s| a.is_free(s)) {
                    a.take(s);
                    self.cur = Some((c, s + 1));
                    return Some((s, discard));
                }
                self.cur = None;
            }
            match self.next_cluster(a, discardable) {
                Next::Cluster(c, d) => {
                    self.cur = Some((c, c * CLUSTER));
                    discard = discard.or(d);
                }
                Next::None => break,
            }
        }
        let s = first_free_from(a, a.cluster_next)?;
        a.take(s);
        Some((s, discard))
    }

    fn next_cluster(&mut self, a: &mut SwapArea, discardable: bool) -> Next {
        // Rule 1: the rest of the trimmed range.
        while self.pool < self.pool_end {
            let c = self.pool;
            self.pool += 1;
            if a.cluster_free(c) {
                return Next::Cluster(c, None);
            }
        }
        let n = a.clusters();
        let from = self.cur.map_or(0, |(c, _)| c + 1);
        // Rule 2: a free cluster among written slots, reused without TRIM.
        if let Some(c) =
            (0..n).map(|i| (from + i) % n).find(|&c| a.cluster_free(c) && a.any_written(c * CLUSTER, CLUSTER))
        {
            return Next::Cluster(c, None);
        }
        // Rule 1 again: MERGE free clusters past the last trimmed range.
        if let Some(start) = self.free_run(a) {
            self.pool = start + 1;
            self.pool_end = start + MERGE;
            self.trim_end = self.pool_end % n;
            let d = discardable.then(|| Discard { start: start * CLUSTER, len: MERGE * CLUSTER });
            if let Some(d) = d {
                a.mark_discarded(d);
            }
            return Next::Cluster(start, d);
        }
        // Beyond the seed: any free aligned cluster (none written: no TRIM due).
        match (0..n).map(|i| (from + i) % n).find(|&c| a.cluster_free(c)) {
            Some(c) => Next::Cluster(c, None),
            None => Next::None,
        }
    }

    /// The first run of [`MERGE`] wholly free clusters at or after `trim_end`, wrapping.
    fn free_run(&self, a: &SwapArea) -> Option<u32> {
        let n = a.clusters();
        let mut run = 0;
        for i in 0..n + MERGE {
            let c = (self.trim_end + i) % n;
            if c == 0 && i > 0 {
                run = 0; // a run does not wrap past the end of the area
            }
            run = if a.cluster_free(c) { run + 1 } else { 0 };
            if run == MERGE {
                return Some(c + 1 - MERGE);
            }
            if i >= n && run == 0 {
                break;
            }
        }
        None
    }
}

enum Next {
    Cluster(u32, Option<Discard>),
    None,
}
