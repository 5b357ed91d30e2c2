//! The request model and the list of supported formats.

use std::fmt;
use std::str::FromStr;

use crate::error::TraceError;

/// Bytes per sector in every sector-addressed format.
pub const SECTOR_BYTES: u64 = 512;

/// Kind of a block request.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Op {
    /// Read data.
    Read,
    /// Write data.
    Write,
    /// Discard / unmap / TRIM.
    Trim,
}

impl Op {
    /// Lower-case name: `read`, `write` or `trim`.
    pub fn name(self) -> &'static str {
        match self {
            Op::Read => "read",
            Op::Write => "write",
            Op::Trim => "trim",
        }
    }
}

/// One block-I/O request, in bytes and nanoseconds whatever the source format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Request {
    /// Arrival time in nanoseconds, as recorded in the trace (not rebased to zero).
    pub time_ns: u64,
    /// Request kind.
    pub op: Op,
    /// Start address in bytes. `offset_bytes + len_bytes` never overflows `u64`.
    pub offset_bytes: u64,
    /// Length in bytes, always > 0.
    pub len_bytes: u64,
    /// Device / ASU / disk number (0 for formats without a device column).
    pub device: u32,
}

impl Request {
    /// `offset_bytes + len_bytes` (cannot overflow for requests produced by a reader).
    pub fn end_bytes(&self) -> u64 {
        self.offset_bytes.saturating_add(self.len_bytes)
    }
}

/// A supported trace format. See `docs/traces.md` for the column layouts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TraceFormat {
    /// SSDsim ASCII: `time_ns dev lsn sectors op` (op 1 = read, 0 = write).
    Ssdsim,
    /// MQSim ASCII: `time_ns dev start_sector sectors type` (type 0 = write, 1 = read).
    Mqsim,
    /// MSR Cambridge CSV: `Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime`.
    Msr,
    /// UMass / SPC CSV: `ASU,LBA,Size,Opcode,Timestamp[,...]`.
    Spc,
    /// Default `blkparse` text output.
    Blkparse,
    /// FIU per-request lines: `timestamp_ns pid process lba size_blocks op major minor hash`.
    Fiu,
    /// fio iolog version 2 or 3.
    FioIolog,
    /// libCacheSim CloudPhysics CSV: `version,time,op,size,lbn`.
    Cloudphysics,
    /// WiscSim block events: `pid D|C op offset_bytes size_bytes time_s delta sync`.
    Wiscsee,
    /// Generic CSV with a header naming the columns.
    Csv,
    /// SSDsim "fin" variant: `n time_ns dev fd Read|Write lsn size [x]`.
    SsdsimFin,
    /// DiskSim ASCII: `time_ms devno blkno bcount flags` (float milliseconds, hex flags, bit 0 = read).
    Disksim,
    /// Sysinternals DiskMon logs: `n time_s duration_s disk Read|Write sector length`.
    Diskmon,
}

impl TraceFormat {
    /// Every format, in the order used for listings.
    pub const ALL: &'static [TraceFormat] = &[
        TraceFormat::Ssdsim,
        TraceFormat::Mqsim,
        TraceFormat::Msr,
        TraceFormat::Spc,
        TraceFormat::Blkparse,
        TraceFormat::Fiu,
        TraceFormat::FioIolog,
        TraceFormat::Cloudphysics,
        TraceFormat::Wiscsee,
        TraceFormat::Csv,
        TraceFormat::SsdsimFin,
        TraceFormat::Disksim,
        TraceFormat::Diskmon,
    ];

    /// The name used on the command line and in `trace stats` output.
    pub fn name(self) -> &'static str {
        match self {
            TraceFormat::Ssdsim => "ssdsim",
            TraceFormat::Mqsim => "mqsim",
            TraceFormat::Msr => "msr",
            TraceFormat::Spc => "spc",
            TraceFormat::Blkparse => "blkparse",
            TraceFormat::Fiu => "fiu",
            TraceFormat::FioIolog => "fio-iolog",
            TraceFormat::Cloudphysics => "cloudphysics",
            TraceFormat::Wiscsee => "wiscsee",
            TraceFormat::Csv => "csv",
            TraceFormat::SsdsimFin => "ssdsim-fin",
            TraceFormat::Disksim => "disksim",
            TraceFormat::Diskmon => "diskmon",
        }
    }

    /// Parse a format name (exact, lower-case). `"auto"` is *not* a format: use
    /// [`FormatChoice::from_name`] to accept it as well.
    pub fn from_name(s: &str) -> Result<Self, TraceError> {
        TraceFormat::ALL
            .iter()
            .copied()
            .find(|f| f.name() == s)
            .ok_or_else(|| TraceError::UnknownFormat { name: s.to_owned(), valid: valid_names() })
    }

    /// Whether the format can express [`Op::Trim`] (readers and writers).
    pub fn supports_trim(self) -> bool {
        matches!(
            self,
            TraceFormat::Blkparse
                | TraceFormat::FioIolog
                | TraceFormat::Cloudphysics
                | TraceFormat::Wiscsee
                | TraceFormat::Csv
        )
    }
}

impl fmt::Display for TraceFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for TraceFormat {
    type Err = TraceError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        TraceFormat::from_name(s)
    }
}

/// Comma-separated list of every format name.
pub(crate) fn valid_names() -> String {
    let names: Vec<&str> = TraceFormat::ALL.iter().map(|f| f.name()).collect();
    names.join(", ")
}

/// What the user asked for on the command line: a fixed format or `auto`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum FormatChoice {
    /// Detect the format from the first lines ([`crate::detect()`]).
    #[default]
    Auto,
    /// Use this format.
    Fixed(TraceFormat),
}

impl FormatChoice {
    /// Parse `"auto"` or a format name; the error lists every valid name and `auto`.
    pub fn from_name(s: &str) -> Result<Self, TraceError> {
        if s == "auto" {
            return Ok(FormatChoice::Auto);
        }
        TraceFormat::from_name(s)
            .map(FormatChoice::Fixed)
            .map_err(|_| TraceError::UnknownFormat { name: s.to_owned(), valid: format!("auto, {}", valid_names()) })
    }
}

impl FromStr for FormatChoice {
    type Err = TraceError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        FormatChoice::from_name(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for &f in TraceFormat::ALL {
            assert_eq!(TraceFormat::from_name(f.name()).unwrap(), f);
            assert_eq!(FormatChoice::from_name(f.name()).unwrap(), FormatChoice::Fixed(f));
        }
        assert_eq!(TraceFormat::ALL.len(), 13);
    }

    #[test]
    fn unknown_name_lists_valid_names() {
        let e = TraceFormat::from_name("nosuch").unwrap_err().to_string();
        assert!(e.contains("\"nosuch\""), "{e}");
        assert!(e.contains("ssdsim, mqsim, msr"), "{e}");
        assert!(!e.contains("auto"), "{e}");
        let e = FormatChoice::from_name("x").unwrap_err().to_string();
        assert!(e.contains("auto, ssdsim"), "{e}");
        assert_eq!(FormatChoice::from_name("auto").unwrap(), FormatChoice::Auto);
    }
}
