//! UMass / SPC CSV: `ASU,LBA,Size,Opcode,Timestamp[,...]`.
//!
//! `ASU` becomes the device; `LBA` is in 512-byte sectors; `Size` is in bytes;
//! `Opcode` is `r`/`R` (read) or `w`/`W` (write); `Timestamp` is decimal seconds.
//! Extra trailing columns are ignored.

use std::io::{self, Write};

use super::{expect_fields, unsupported, Parsed};
use crate::error::LineError;
use crate::format::{Op, Request, TraceFormat, SECTOR_BYTES};
use crate::parse::{check_request, write_seconds, Fields};

const LAYOUT: &str = "ASU,LBA,Size,Opcode,Timestamp";

/// Parse one SPC line.
pub(crate) fn parse(line: &[u8]) -> Result<Parsed, LineError> {
    let f = Fields::<8>::csv(line);
    expect_fields(&f, 5, "comma", LAYOUT)?;
    let device = f.u32_at(0, "ASU")?;
    let offset_bytes = f.sectors_at(1, "LBA")?;
    let len_bytes = f.u64_at(2, "Size")?;
    let op = match f.raw(3) {
        b"r" | b"R" => Op::Read,
        b"w" | b"W" => Op::Write,
        t => return Err(LineError::field("Opcode", 4, "r, R, w or W", t)),
    };
    let time_ns = f.seconds_at(4, "Timestamp")?;
    let req = Request { time_ns, op, offset_bytes, len_bytes, device };
    check_request(req, &f, 2, "Size").map(Parsed::Request)
}

/// Write one SPC line. An unaligned offset is rounded down to a sector and the
/// size grown so that the same end byte is covered.
pub(crate) fn write<W: Write + ?Sized>(w: &mut W, req: &Request) -> io::Result<()> {
    let op = match req.op {
        Op::Read => 'r',
        Op::Write => 'w',
        Op::Trim => return Err(unsupported(TraceFormat::Spc, "trim requests")),
    };
    let lba = req.offset_bytes / SECTOR_BYTES;
    let size = req.end_bytes() - lba * SECTOR_BYTES;
    write!(w, "{},{lba},{size},{op},", req.device)?;
    write_seconds(w, req.time_ns)?;
    writeln!(w)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_spc_line() {
        let Parsed::Request(r) = parse(b"0,303567,3584,w,0.026214").unwrap() else { panic!("expected a request") };
        assert_eq!(r.time_ns, 26_214_000);
        assert_eq!(r.op, Op::Write);
        assert_eq!(r.offset_bytes, 303_567 * 512);
        assert_eq!(r.len_bytes, 3584);
        assert!(parse(b"0,1,512,x,0.1").is_err());
    }
}
