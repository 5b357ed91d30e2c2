//! libCacheSim's CloudPhysics CSV (`data/cloudPhysicsIO.csv`):
//! header `version,time,op,size,lbn`, then one request per line.
//!
//! `op` is the SCSI opcode in hex: reads `08 28 88 a8`, writes `0a 2a 8a aa`,
//! UNMAP `42` → trim; other opcodes are ignored (not bad lines). `size` is in
//! bytes, `lbn` in 512-byte blocks. `time` is in **seconds** (decimal allowed):
//! libCacheSim produced this file from a VSCSI trace whose microsecond
//! timestamps its reader divides by 10^6, and the sample's times span exactly
//! 7 200 units (two hours) with up to ~2 500 requests per unit.

use std::io::{self, Write};

use super::{expect_fields, Parsed};
use crate::error::LineError;
use crate::format::{Op, Request, SECTOR_BYTES};
use crate::parse::{check_request, eq_ic, parse_hex_u32, write_seconds, Fields};

const LAYOUT: &str = "version,time,op,size,lbn";

/// Parse one line.
pub(crate) fn parse(line: &[u8]) -> Result<Parsed, LineError> {
    let f = Fields::<8>::csv(line);
    if eq_ic(f.raw(0), b"version") {
        return parse_header(&f);
    }
    expect_fields(&f, 5, "comma", LAYOUT)?;
    f.u64_at(0, "version")?;
    let time_ns = f.seconds_at(1, "time")?;
    let op = opcode(f.raw(2))?;
    let len_bytes = f.u64_at(3, "size")?;
    let offset_bytes = f.sectors_at(4, "lbn")?;
    let Some(op) = op else {
        return Ok(Parsed::Ignored);
    };
    let req = Request { time_ns, op, offset_bytes, len_bytes, device: 0 };
    check_request(req, &f, 3, "size").map(Parsed::Request)
}

fn parse_header(f: &Fields<'_, 8>) -> Result<Parsed, LineError> {
    let names = [&b"version"[..], b"time", b"op", b"size", b"lbn"];
    let ok = f.len() >= names.len() && names.iter().enumerate().all(|(i, n)| eq_ic(f.raw(i), n));
    if ok {
        Ok(Parsed::Ignored)
    } else {
        Err(LineError::line(format_args!("expected the header `{LAYOUT}`")))
    }
}

/// Map a one-byte SCSI opcode in hex to a request kind (`None`: not a data request).
fn opcode(raw: &[u8]) -> Result<Option<Op>, LineError> {
    let code = parse_hex_u32(raw)
        .filter(|&c| c <= 0xff)
        .ok_or_else(|| LineError::field("op", 3, "a one-byte SCSI opcode in hex", raw))?;
    Ok(match code {
        0x08 | 0x28 | 0x88 | 0xa8 => Some(Op::Read),
        0x0a | 0x2a | 0x8a | 0xaa => Some(Op::Write),
        0x42 => Some(Op::Trim),
        _ => None,
    })
}

/// Write the header line.
pub(crate) fn write_header<W: Write + ?Sized>(w: &mut W) -> io::Result<()> {
    writeln!(w, "{LAYOUT}")
}

/// Write one line (opcodes `28`, `2a`, `42`; time in seconds, integer when whole).
/// An unaligned offset is rounded down to a block and the size grown to cover
/// the same end byte.
pub(crate) fn write<W: Write + ?Sized>(w: &mut W, req: &Request) -> io::Result<()> {
    let op = match req.op {
        Op::Read => "28",
        Op::Write => "2a",
        Op::Trim => "42",
    };
    let lbn = req.offset_bytes / SECTOR_BYTES;
    let size = req.end_bytes() - lbn * SECTOR_BYTES;
    write!(w, "1,")?;
    if req.time_ns.is_multiple_of(1_000_000_000) {
        write!(w, "{}", req.time_ns / 1_000_000_000)?;
    } else {
        write_seconds(w, req.time_ns)?;
    }
    writeln!(w, ",{op},{size},{lbn}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_lines() {
        assert_eq!(parse(b"version,time,op,size,lbn").unwrap(), Parsed::Ignored);
        let Parsed::Request(r) = parse(b"1,5633898,2a,6656,40409911").unwrap() else { panic!("expected a request") };
        assert_eq!(r.time_ns, 5_633_898_000_000_000);
        assert_eq!(r.op, Op::Write);
        assert_eq!(r.len_bytes, 6656);
        assert_eq!(r.offset_bytes, 40_409_911 * 512);
        assert_eq!(parse(b"1,5,35,0,0").unwrap(), Parsed::Ignored);
        assert!(matches!(parse(b"1,5,A8,512,0").unwrap(), Parsed::Request(Request { op: Op::Read, .. })));
        assert!(parse(b"1,5,3584,512,0").is_err());
        assert!(parse(b"version,time").is_err());
    }
}
