//! Hot/cold journals and the delayed hot-journal commit (seed 000).
//!
//! Every write is classified as metadata or data and, by the configured
//! hot-data identifier, as hot or cold; hot writes go to hot journal heads.
//! With the delayed commit, index changes made by nodes in the hot heads are
//! kept in an overlay instead of the index tree (TNC): a commit writes the
//! TNC (committed state plus the cold journal), and the overlay is applied
//! to the TNC only at a "hot" commit. The hot buds stay referenced in the log
//! until then, so replay after a cut still finds every hot node.
//!
//! Correctness rule ("sticky" keys): once a key is in the overlay, every
//! later change of it goes to a hot head too, and once a hot operation has
//! deleted a range of an inode (truncation, deletion), every later change of
//! that inode does; so every committed node is older than every uncommitted
//! hot node of the same key, and replay in sequence order stays correct.

use crate::fs::{Fs, BASE, DATA, HEADS, HOT_BASE, HOT_DATA};
use crate::hot_truth::{HotSet, HotTruth, HotTruthCounts};
use crate::key::{Key, KIND_DATA};
use crate::node::Loc;
use crate::settings::HotHeadMapping;
use flashlab_hotdata::{mix64, HotDataIdentifier, Identifier, IdentifierSpec, MultiHashParams};
use std::collections::{BTreeMap, HashMap, HashSet};

/// Metadata (inodes, entries, truncations) or file data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Class {
    Meta,
    Data,
}

/// Hot/cold state of a mounted file system.
#[derive(Debug, Clone, Default)]
pub(crate) struct HotState {
    pub id: Option<Identifier>,
    pub logical_blocks: u64,
    /// Index changes by uncommitted hot nodes (None = deleted).
    pub overlay: BTreeMap<Key, Option<Loc>>,
    /// Overlay keys per inode number.
    pub inums: HashMap<u32, u32>,
    /// Inodes with an uncommitted hot range deletion (truncation, purge).
    pub range: HashSet<u32>,
    /// Hot buds since the last hot commit: (LEB, first uncommitted offset, head).
    pub buds: Vec<(u32, u32, usize)>,
    pub commits_since_hot: u32,
    /// Keys whose TNC entry changed since the last commit (index updates).
    pub changed: crate::key::KeySet,
    /// Ground truth of hot data writes and the oracle (from `hot_truth_start`).
    pub truth: Option<Box<HotTruth>>,
}

impl Fs {
    /// Builds the identifier (after the geometry is known).
    pub(crate) fn init_hot(&mut self) -> crate::error::FsResult<()> {
        self.hot = HotState::default();
        if !self.cfg.classify_on() {
            return Ok(());
        }
        let blocks = (self.geo.main_lebs() as u64 * self.geo.leb_bytes as u64 / 4096 * 4).clamp(1024, 1 << 40);
        let spec = match (&self.cfg.hot_identifier, self.cfg.hot_identifier_sized) {
            (IdentifierSpec::MultiHash(p), true) => {
                IdentifierSpec::MultiHash(sized_multi_hash(p, self.hot_window_writes()))
            }
            (s, _) => s.clone(),
        };
        let id = spec
            .build(self.cfg.hot_identifier_seed, blocks)
            .map_err(|e| crate::error::FsError::Corrupt(format!("hot_identifier: {e}")))?;
        self.hot.id = Some(id);
        self.hot.logical_blocks = blocks;
        Ok(())
    }

    /// Logical block number the identifier sees for a key.
    fn lba(&self, k: &Key) -> u64 {
        let raw = if k.kind == KIND_DATA {
            ((k.inum as u64) << 20) | (k.sub as u64 & 0xF_FFFF)
        } else {
            mix64(((k.inum as u64) << 32) ^ ((k.kind as u64) << 29) ^ k.sub as u64) | (1 << 62)
        };
        mix64(raw) % self.hot.logical_blocks.max(1)
    }

    /// Hot heads this configuration may open (each one more LEB the budget
    /// keeps in reserve).
    pub(crate) fn hot_heads_in_use(&self) -> u32 {
        match (self.cfg.classify_on(), self.cfg.hot_journals, self.cfg.hot_head_mapping) {
            (false, _, _) => 0,
            (true, true, HotHeadMapping::Four) => 2,
            _ => 1,
        }
    }

    /// True for a head whose commit is delayed.
    pub(crate) fn delayed(&self, h: usize) -> bool {
        self.cfg.delay_on() && (h == HOT_BASE || h == HOT_DATA)
    }

    fn hot_head_for(&self, class: Class) -> usize {
        let mapping = if self.cfg.hot_journals { self.cfg.hot_head_mapping } else { HotHeadMapping::HotDataOnly };
        match (mapping, class) {
            (HotHeadMapping::Four, Class::Meta) => HOT_BASE,
            (HotHeadMapping::HotDataOnly, Class::Meta) => BASE,
            (_, _) => HOT_DATA,
        }
    }

    fn is_sticky(&self, keys: &[Key], range_inums: &[u32]) -> bool {
        let h = &self.hot;
        if h.overlay.is_empty() && h.range.is_empty() {
            return false;
        }
        keys.iter().any(|k| h.overlay.contains_key(k) || h.range.contains(&k.inum))
            || range_inums.iter().any(|i| h.inums.get(i).is_some_and(|c| *c > 0) || h.range.contains(i))
    }

    /// Chooses the journal head of one operation (one group) writing
    /// `keys`, which may also delete whole ranges of `range_inums`;
    /// records the writes in the identifier.
    pub(crate) fn pick_head(&mut self, class: Class, keys: &[Key], range_inums: &[u32]) -> usize {
        let h = self.choose_head(class, keys, range_inums);
        if let (Class::Data, Some(t)) = (class, self.hot.truth.as_mut()) {
            for k in keys {
                t.write(k.inum, k.sub, h != BASE && h != DATA);
            }
        }
        h
    }

    /// The oracle's label of a data group, when the oracle is set.
    fn oracle_label(&self, class: Class, keys: &[Key]) -> Option<bool> {
        let t = self.hot.truth.as_ref().filter(|_| class == Class::Data)?;
        keys.iter().try_fold(false, |hot, k| Some(hot | t.oracle_label(k.inum, k.sub)?))
    }

    fn choose_head(&mut self, class: Class, keys: &[Key], range_inums: &[u32]) -> usize {
        let cold = if class == Class::Meta { BASE } else { DATA };
        if !self.cfg.classify_on() {
            return cold;
        }
        let oracle = self.oracle_label(class, keys);
        let lbas: Vec<u64> = if oracle.is_some() { Vec::new() } else { keys.iter().map(|k| self.lba(k)).collect() };
        let mut hot = oracle.unwrap_or(false);
        if let Some(id) = self.hot.id.as_mut() {
            for l in lbas {
                hot |= id.record_and_query(l);
            }
        }
        let mapped = self.hot_head_for(class);
        let mut h = if hot { mapped } else { cold };
        if !self.delayed(h) && self.cfg.delay_on() && self.is_sticky(keys, range_inums) {
            h = if self.delayed(mapped) { mapped } else { HOT_DATA };
            self.counters.sticky_hot_writes += 1;
        }
        if h == BASE || h == DATA {
            self.counters.cold_writes += 1;
        } else {
            self.counters.hot_writes += 1;
        }
        h
    }

    /// The current location of `key` (overlay first, then the TNC).
    pub(crate) fn idx_lookup(&self, key: &Key) -> Option<Loc> {
        match self.hot.overlay.get(key) {
            Some(v) => *v,
            None => self.tnc.lookup(key),
        }
    }

    /// [`Fs::idx_lookup`] through a TNC cursor (`Tnc::lookup_near`: keys
    /// looked up in a row with no index change in between).
    pub(crate) fn idx_lookup_near(&self, key: &Key, leaf: &mut Option<usize>) -> Option<Loc> {
        match self.hot.overlay.get(key) {
            Some(v) => *v,
            None => self.tnc.lookup_near(key, leaf),
        }
    }

    /// Current entries with lo <= key < hi, in order.
    pub(crate) fn idx_range(&self, lo: &Key, hi: &Key) -> Vec<(Key, Loc)> {
        let base = self.tnc.range(lo, hi);
        if self.hot.overlay.is_empty() {
            return base;
        }
        let mut m: BTreeMap<Key, Loc> = base.into_iter().collect();
        for (k, v) in self.hot.overlay.range(lo.clone()..hi.clone()) {
            match v {
                Some(l) => m.insert(k.clone(), *l),
                None => m.remove(k),
            };
        }
        m.into_iter().collect()
    }

    fn overlay_put(&mut self, key: &Key, v: Option<Loc>) {
        if self.hot.overlay.insert(key.clone(), v).is_none() {
            *self.hot.inums.entry(key.inum).or_insert(0) += 1;
        }
    }

    /// Points `key` at `loc` (written to head `h`), marking the replaced node obsolete.
    pub(crate) fn idx_set(&mut self, h: usize, key: &Key, loc: Loc) {
        self.forget_name(key);
        if self.hot.overlay.is_empty() && !self.delayed(h) {
            // `idx_lookup` is the TNC's entry here, which the insert replaces
            // and returns: one walk instead of a lookup and then an insert.
            // (`obsolete` touches only the LEB properties and the validity
            // map, so it may follow the insert.)
            if let Some(old) = self.tnc.insert(key, loc) {
                self.obsolete(old);
            }
            self.hot.changed.insert(key.clone());
            return;
        }
        if let Some(old) = self.idx_lookup(key) {
            self.obsolete(old);
        }
        if self.delayed(h) {
            self.overlay_put(key, Some(loc));
            return;
        }
        debug_assert!(!self.hot.overlay.contains_key(key), "cold write of a sticky-hot key");
        self.tnc.insert(key, loc);
        self.hot.changed.insert(key.clone());
    }

    /// Removes `key` (by an operation written to head `h`).
    pub(crate) fn idx_del(&mut self, h: usize, key: &Key) {
        self.forget_name(key);
        let Some(old) = self.idx_lookup(key) else { return };
        self.obsolete(old);
        if self.delayed(h) {
            self.overlay_put(key, None);
            return;
        }
        self.tnc.remove(key);
        self.hot.changed.insert(key.clone());
    }

    /// Notes a range deletion of `inum` by head `h`.
    pub(crate) fn note_range(&mut self, h: usize, inum: u32, first_block: u32) {
        if let Some(t) = self.hot.truth.as_mut() {
            t.kill_from(inum, first_block);
        }
        if self.delayed(h) {
            self.hot.range.insert(inum);
        }
    }

    /// Bud limit of the hot journal.
    fn hot_max_buds(&self) -> usize {
        let n = match self.cfg.hot_journal_max_buds {
            0 => (self.journal_max_buds() / 2).max(1) as usize,
            n => n as usize,
        };
        // Every hot bud is re-referenced in the first log LEB of each commit.
        n.min((self.geo.leb_bytes / 2 / 48) as usize)
    }

    /// Whether the next (scheduled) commit also commits the hot journal.
    pub(crate) fn hot_commit_due(&self) -> bool {
        !self.cfg.delay_on()
            || self.hot.commits_since_hot + 1 >= self.cfg.delayed_hot_commit_every
            || self.hot.buds.len() >= self.hot_max_buds()
    }

    /// Applies the overlay to the TNC (its replaced nodes are already obsolete).
    pub(crate) fn apply_overlay(&mut self) {
        let overlay = std::mem::take(&mut self.hot.overlay);
        for (k, v) in overlay {
            match v {
                Some(l) => {
                    self.tnc.insert(&k, l);
                }
                None => {
                    self.tnc.remove(&k);
                }
            }
            self.hot.changed.insert(k);
        }
        self.hot.inums.clear();
        self.hot.range.clear();
    }

    /// LEBs of hot buds kept in the journal.
    pub(crate) fn hot_bud_lebs(&self) -> Vec<u32> {
        self.hot.buds.iter().map(|b| b.0).collect()
    }

    /// Bookkeeping after a successful commit.
    pub(crate) fn finish_hot_commit(&mut self, full: bool) {
        let changed = &self.hot.changed;
        self.counters.index_updates += changed.len() as u64;
        self.counters.index_updates_data += changed.iter().filter(|k| k.kind == KIND_DATA).count() as u64;
        // Cleared, not dropped: the set keeps its table for the next commit.
        self.hot.changed.clear();
        if !self.cfg.delay_on() {
            return;
        }
        if full {
            self.counters.hot_commits += 1;
            self.hot.commits_since_hot = 0;
            self.hot.buds = (0..HEADS)
                .filter(|h| self.delayed(*h))
                .filter_map(|h| self.heads[h].lnum.map(|l| (l, self.heads[h].wbuf_offs, h)))
                .collect();
        } else {
            self.counters.cold_only_commits += 1;
            self.hot.commits_since_hot += 1;
        }
    }

    /// Hot overlay size (keys whose index update is delayed).
    pub fn delayed_index_keys(&self) -> usize {
        self.hot.overlay.len()
    }
}

/// The multi-hash table sized to a window of `window` writes (the rule of
/// docs/reproductions/ubifs-hotdata.md, "The identifier"): decay every
/// `window` writes, and enough counters that the increments of one decay
/// period, `K x window` (a halved table carries about as much again), load
/// each counter with at most a quarter of the hot threshold `T` on average:
/// `M = 2^ceil(log2(8 K window / T))`. A block written once then reaches `T`
/// on all K counters only by collisions, with probability below
/// P(Poisson(T/4) >= T)^K (< 1e-5 for K = 4, T = 4). Hsieh, Kuo and Chang
/// (TOS 2006, section 4) bound the false-hot rate the same way: by the
/// expected load of a counter from the distinct blocks of one decay period.
pub(crate) fn sized_multi_hash(p: &MultiHashParams, window: u64) -> MultiHashParams {
    let t = p.effective_threshold().max(1) as u64;
    let want = (8 * p.hash_functions as u64 * window).div_ceil(t).max(1);
    MultiHashParams { counters: want.next_power_of_two().min(1 << 32), decay_period_writes: window, ..p.clone() }
}

impl Fs {
    /// The hot window in data writes: the journal's capacity in full data
    /// nodes (`max_bud_bytes` / (4 KiB + the 48-byte data node header)).
    pub fn hot_window_writes(&self) -> u64 {
        (self.max_bud_bytes() / (crate::BLOCK + crate::node::DATA_NODE_BYTES as u64)).max(1)
    }

    /// Starts the ground truth of hot data writes (window:
    /// [`Fs::hot_window_writes`]); `record` keeps the truly hot writes for
    /// [`Fs::hot_truth_recorded`]; `oracle` labels exactly those writes hot
    /// (the `oracle` configuration; it needs `hot_journals` or the delayed
    /// commit on to have any effect).
    pub fn hot_truth_start(&mut self, record: bool, oracle: Option<HotSet>) {
        self.hot.truth = Some(Box::new(HotTruth::new(self.hot_window_writes(), record, oracle)));
    }

    /// Labels against the truth since [`Fs::hot_truth_start`].
    pub fn hot_truth_counts(&self) -> Option<HotTruthCounts> {
        self.hot.truth.as_ref().map(|t| t.counts())
    }

    /// The truly hot writes recorded since [`Fs::hot_truth_start`] (with `record`).
    pub fn hot_truth_recorded(&self) -> Option<HotSet> {
        self.hot.truth.as_ref().and_then(|t| t.recorded())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The sizing rule: decay every window, M = next power of two of 8 K W / T.
    #[test]
    fn multi_hash_sized_to_the_window() {
        let p = MultiHashParams::default(); // K = 4, T = 4
        let s = sized_multi_hash(&p, 7_920);
        assert_eq!((s.counters, s.decay_period_writes), (65_536, 7_920)); // 8*4*7920/4 = 63 360
        let s = sized_multi_hash(&p, 780);
        assert_eq!((s.counters, s.decay_period_writes), (8_192, 780)); // 6 240
        assert_eq!((s.hash_functions, s.counter_bits), (4, 4));
    }
}
