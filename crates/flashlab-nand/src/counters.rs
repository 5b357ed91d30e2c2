//! NAND operation counters by cause.

use serde::Serialize;

/// Why a NAND operation was issued.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Cause {
    Host = 0,
    Gc = 1,
    WearLevel = 2,
    /// Mapping-table traffic (DFTL's translation pages).
    Mapping = 3,
    Other = 4,
    /// Hybrid FTLs' merges (switch, partial, full) and block mapping's block copies.
    Merge = 5,
    /// BAST-padding: pages copied into a log block to keep it in page order (seed 004).
    Padding = 6,
}

impl Cause {
    pub const ALL: [Cause; 7] =
        [Cause::Host, Cause::Gc, Cause::WearLevel, Cause::Mapping, Cause::Other, Cause::Merge, Cause::Padding];
    pub fn name(self) -> &'static str {
        match self {
            Cause::Host => "host",
            Cause::Gc => "gc",
            Cause::WearLevel => "wear_level",
            Cause::Mapping => "mapping",
            Cause::Other => "other",
            Cause::Merge => "merge",
            Cause::Padding => "padding",
        }
    }
}

/// Number of [`Cause`]s.
pub const CAUSES: usize = 7;

/// Kind of NAND array operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum OpKind {
    Read = 0,
    Program = 1,
    Erase = 2,
}

/// Counts of reads, programs and erases, each split by [`Cause`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct OpCounters {
    pub reads: [u64; CAUSES],
    pub programs: [u64; CAUSES],
    pub erases: [u64; CAUSES],
}

impl OpCounters {
    #[inline]
    pub fn add(&mut self, kind: OpKind, cause: Cause, n: u64) {
        let row = match kind {
            OpKind::Read => &mut self.reads,
            OpKind::Program => &mut self.programs,
            OpKind::Erase => &mut self.erases,
        };
        row[cause as usize] += n;
    }
    pub fn total(&self, kind: OpKind) -> u64 {
        let row = match kind {
            OpKind::Read => &self.reads,
            OpKind::Program => &self.programs,
            OpKind::Erase => &self.erases,
        };
        row.iter().sum()
    }
    pub fn get(&self, kind: OpKind, cause: Cause) -> u64 {
        match kind {
            OpKind::Read => self.reads[cause as usize],
            OpKind::Program => self.programs[cause as usize],
            OpKind::Erase => self.erases[cause as usize],
        }
    }
    /// Element-wise `self - earlier` (counts since a snapshot).
    pub fn since(&self, earlier: &OpCounters) -> OpCounters {
        let sub = |a: [u64; CAUSES], b: [u64; CAUSES]| std::array::from_fn(|i| a[i] - b[i]);
        OpCounters {
            reads: sub(self.reads, earlier.reads),
            programs: sub(self.programs, earlier.programs),
            erases: sub(self.erases, earlier.erases),
        }
    }
}
