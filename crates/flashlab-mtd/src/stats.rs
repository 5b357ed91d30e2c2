//! Operation counters by cause.

use serde::Serialize;

/// Why an operation was issued (set by the layer above).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Cause {
    /// File data (journal data head).
    Data,
    /// Index nodes written at commit.
    Index,
    /// LEB-properties tree.
    Lpt,
    /// Journal log (reference / commit-start nodes).
    Log,
    /// Base journal head (inodes, directory entries).
    Base,
    /// Garbage collection.
    Gc,
    /// UBI wear levelling.
    WearLevel,
    /// UBI scrubbing after corrected bit-flips.
    Scrub,
    /// UBI EC / VID headers.
    UbiHeader,
    /// UBI fastmap.
    Fastmap,
    /// Superblock, master node, orphan area, volume table.
    Meta,
    /// Mount, attach and recovery.
    Mount,
    /// Anything else.
    Other,
}

/// Every cause, in a fixed order.
pub const ALL_CAUSES: [Cause; 13] = [
    Cause::Data,
    Cause::Index,
    Cause::Lpt,
    Cause::Log,
    Cause::Base,
    Cause::Gc,
    Cause::WearLevel,
    Cause::Scrub,
    Cause::UbiHeader,
    Cause::Fastmap,
    Cause::Meta,
    Cause::Mount,
    Cause::Other,
];

impl Cause {
    fn index(self) -> usize {
        ALL_CAUSES.iter().position(|c| *c == self).unwrap_or(12)
    }

    /// The snake-case name used in results.
    pub fn name(self) -> &'static str {
        match self {
            Cause::Data => "data",
            Cause::Index => "index",
            Cause::Lpt => "lpt",
            Cause::Log => "log",
            Cause::Base => "base",
            Cause::Gc => "gc",
            Cause::WearLevel => "wear_level",
            Cause::Scrub => "scrub",
            Cause::UbiHeader => "ubi_header",
            Cause::Fastmap => "fastmap",
            Cause::Meta => "meta",
            Cause::Mount => "mount",
            Cause::Other => "other",
        }
    }
}

/// Per-cause counters (indexed by `Cause`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CauseCounts([u64; 13]);

impl CauseCounts {
    pub fn add(&mut self, c: Cause, n: u64) {
        self.0[c.index()] += n;
    }
    pub fn get(&self, c: Cause) -> u64 {
        self.0[c.index()]
    }
    pub fn total(&self) -> u64 {
        self.0.iter().sum()
    }
    /// (name, count) pairs for the causes with a non-zero count.
    pub fn nonzero(&self) -> Vec<(&'static str, u64)> {
        ALL_CAUSES.iter().filter(|c| self.get(**c) > 0).map(|c| (c.name(), self.get(*c))).collect()
    }
}

impl Serialize for CauseCounts {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut m = s.serialize_map(Some(ALL_CAUSES.len()))?;
        for c in ALL_CAUSES {
            m.serialize_entry(c.name(), &self.get(c))?;
        }
        m.end()
    }
}

/// Counters of a NAND device since creation (or the last `reset_stats`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct MtdStats {
    /// Every operation issued, including failed ones (the power-cut clock).
    pub ops: u64,
    pub pages_read: CauseCounts,
    pub pages_programmed: CauseCounts,
    pub erases: CauseCounts,
    pub corrected_reads: u64,
    pub uncorrectable_reads: u64,
    pub program_failures: u64,
    pub erase_failures: u64,
    pub power_cuts: u64,
}
