//! Ground truth of hot data for the reproduction of seed 000, and the
//! `oracle` labelling built from it.
//!
//! A data write (one data node entering the journal) is *truly hot* when
//! its data dies — the same block of the same inode is written again, or
//! truncated or deleted — within `window` further data writes. The window
//! is the journal's capacity in data nodes (see [`crate::Fs::hot_window_writes`]):
//! data that dies within it can die before its bud is committed, which is
//! what the delayed hot commit and the hot journals exploit.
//!
//! The tracker runs from [`crate::Fs::hot_truth_start`] on. Each write of a
//! block gets a version (0 for the first write since the start, then 1, 2, ...),
//! so a run can record the truly hot `(inode, block, version)` triples and a
//! second run of the same workload can label exactly those writes hot: the
//! `oracle`, perfect knowledge of future rewrites and deletions.

use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;

/// Truly hot writes of a run, as packed `(inode, block, version)` triples.
pub type HotSet = Arc<HashSet<u64>>;

/// Packs a write's identity; `None` past the packing range (inodes < 2^32,
/// blocks < 2^20, versions < 2^12), which the oracle then labels cold.
fn pack(inum: u32, block: u32, version: u32) -> Option<u64> {
    (block < 1 << 20 && version < 1 << 12).then_some((inum as u64) << 32 | (block as u64) << 12 | version as u64)
}

#[derive(Debug, Clone, Copy)]
struct Live {
    seq: u64,
    version: u32,
    hot: bool,
}

/// Accuracy counters of the labels against the truth (data writes only).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct HotTruthCounts {
    /// Data writes since the start, and those labelled hot (written to a hot head).
    pub data_writes: u64,
    pub hot_labelled: u64,
    /// Writes whose fate is known: died, or lived `window` writes.
    pub decided: u64,
    /// Decided writes that died within the window (truly hot).
    pub truly_hot: u64,
    /// Decided writes labelled hot, and those of them truly hot.
    pub hot_decided: u64,
    pub hot_correct: u64,
    /// The window in data writes.
    pub window_writes: u64,
}

impl HotTruthCounts {
    /// Share of data writes labelled hot.
    pub fn hot_write_share(&self) -> f64 {
        ratio(self.hot_labelled, self.data_writes)
    }

    /// Share of the decided hot labels that were truly hot (NaN when nothing was labelled hot).
    pub fn hot_precision(&self) -> f64 {
        ratio(self.hot_correct, self.hot_decided)
    }

    /// Share of the truly hot writes labelled hot.
    pub fn hot_recall(&self) -> f64 {
        ratio(self.hot_correct, self.truly_hot)
    }

    /// Share of the decided writes that were truly hot.
    pub fn truly_hot_share(&self) -> f64 {
        ratio(self.truly_hot, self.decided)
    }
}

fn ratio(a: u64, b: u64) -> f64 {
    if b == 0 {
        f64::NAN
    } else {
        a as f64 / b as f64
    }
}

/// The tracker.
#[derive(Debug, Clone, Default)]
pub(crate) struct HotTruth {
    window: u64,
    seq: u64,
    live: BTreeMap<(u32, u32), Live>,
    counts: HotTruthCounts,
    /// Collects the truly hot writes (for a later oracle run).
    record: Option<HashSet<u64>>,
    /// Labels writes in this set hot (the oracle).
    pub oracle: Option<HotSet>,
}

impl HotTruth {
    pub fn new(window: u64, record: bool, oracle: Option<HotSet>) -> HotTruth {
        HotTruth {
            window: window.max(1),
            record: record.then(HashSet::new),
            oracle,
            counts: HotTruthCounts { window_writes: window.max(1), ..Default::default() },
            ..Default::default()
        }
    }

    /// The oracle's label for the next write of `(inum, block)`, if an oracle is set.
    pub fn oracle_label(&self, inum: u32, block: u32) -> Option<bool> {
        let set = self.oracle.as_ref()?;
        let v = self.live.get(&(inum, block)).map_or(0, |l| l.version + 1);
        Some(pack(inum, block, v).is_some_and(|p| set.contains(&p)))
    }

    fn settle(&mut self, inum: u32, block: u32, l: Live, died_at: Option<u64>) {
        let hot = died_at.is_some_and(|d| d - l.seq <= self.window);
        self.counts.decided += 1;
        self.counts.truly_hot += hot as u64;
        self.counts.hot_decided += l.hot as u64;
        self.counts.hot_correct += (l.hot && hot) as u64;
        if let (true, Some(set)) = (hot, self.record.as_mut()) {
            set.extend(pack(inum, block, l.version));
        }
    }

    /// One data write of `(inum, block)`, labelled `hot`.
    pub fn write(&mut self, inum: u32, block: u32, hot: bool) {
        self.seq += 1;
        self.counts.data_writes += 1;
        self.counts.hot_labelled += hot as u64;
        let version = match self.live.get(&(inum, block)).copied() {
            Some(old) => {
                self.settle(inum, block, old, Some(self.seq));
                old.version.saturating_add(1)
            }
            None => 0,
        };
        self.live.insert((inum, block), Live { seq: self.seq, version, hot });
    }

    /// Blocks `first..` of `inum` are deleted (truncation, inode deletion).
    pub fn kill_from(&mut self, inum: u32, first: u32) {
        let dead: Vec<((u32, u32), Live)> =
            self.live.range((inum, first)..=(inum, u32::MAX)).map(|(k, v)| (*k, *v)).collect();
        for (k, l) in dead {
            self.live.remove(&k);
            self.settle(k.0, k.1, l, Some(self.seq));
        }
    }

    /// The counters, with every live write older than the window counted as
    /// decided (not hot); younger ones stay undecided.
    pub fn counts(&self) -> HotTruthCounts {
        let mut c = self.counts;
        for l in self.live.values().filter(|l| self.seq - l.seq >= self.window) {
            c.decided += 1;
            c.hot_decided += l.hot as u64;
        }
        c
    }

    /// The truly hot writes recorded so far.
    pub fn recorded(&self) -> Option<HotSet> {
        self.record.as_ref().map(|s| Arc::new(s.clone()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rewrites_within_the_window_are_hot_and_precision_counts_labels() {
        let mut t = HotTruth::new(3, true, None);
        t.write(1, 0, true); // seq 1: rewritten at seq 3 -> hot, labelled hot
        t.write(2, 0, true); // seq 2: never dies -> decided cold once 3 writes old
        t.write(1, 0, false); // seq 3: dies by deletion at seq 7 (4 > 3) -> cold
        t.write(3, 0, false); // seq 4
        t.write(3, 1, false); // seq 5
        t.write(4, 0, false); // seq 6
        t.write(4, 1, false); // seq 7
        t.kill_from(1, 0);
        t.kill_from(3, 1); // (3,1) written at 5, deleted at 7 -> hot, labelled cold
        let c = t.counts();
        assert_eq!(c.data_writes, 7);
        assert_eq!(c.hot_labelled, 2);
        assert_eq!(c.truly_hot, 2);
        assert_eq!(c.hot_correct, 1);
        // (2,0) [age 5], (3,0) [age 3] decided by age; (4,0) [1], (4,1) [0] not yet.
        assert_eq!(c.decided, 5);
        assert_eq!(c.hot_decided, 2);
        assert_eq!(c.hot_precision(), 0.5);
        assert_eq!(c.hot_recall(), 0.5);
        let rec = t.recorded().unwrap();
        assert_eq!(rec.len(), 2);
        assert!(rec.contains(&pack(1, 0, 0).unwrap()) && rec.contains(&pack(3, 1, 0).unwrap()));
    }

    #[test]
    fn the_oracle_labels_exactly_the_recorded_versions() {
        let set: HotSet = Arc::new([pack(1, 0, 1).unwrap()].into_iter().collect());
        let mut t = HotTruth::new(10, false, Some(set));
        assert_eq!(t.oracle_label(1, 0), Some(false)); // version 0
        t.write(1, 0, false);
        assert_eq!(t.oracle_label(1, 0), Some(true)); // version 1
        t.write(1, 0, true);
        assert_eq!(t.oracle_label(1, 0), Some(false)); // version 2
        assert_eq!(HotTruth::new(10, false, None).oracle_label(1, 0), None);
    }
}
