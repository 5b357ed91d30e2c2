//! DiskSim ASCII traces: `time_ms devno blkno bcount flags`, whitespace separated.
//!
//! DiskSim's `iotrace_ascii_get_ioreq_event` (disksim_iotrace.c) reads each line with
//! `"%lf %d %d %d %x"`: the arrival time in **milliseconds** as a float
//! (`579.500020`), the device number, the start block and the block count in 512-byte
//! sectors, and the flags in **hexadecimal**, of which bit 0 is `READ` (1 = read,
//! 0 = write; disksim_global.h). Other flag bits are ignored. Extra trailing columns
//! are ignored.
//!
//! Auto detection proposes this format only when a sampled time has a decimal point:
//! a file of integer times reads identically as `ssdsim`/`mqsim` except for the time
//! unit, and those formats (integer nanoseconds) are far more common.

use std::io::{self, Write};

use super::{expect_fields, unsupported, Parsed};
use crate::error::LineError;
use crate::format::{Op, Request, TraceFormat};
use crate::parse::{check_request, parse_hex_u32, to_sectors, Fields};

const LAYOUT: &str = "time_ms devno blkno bcount flags";

/// DiskSim's `READ` flag bit.
const READ_FLAG: u32 = 0x1;

/// Parse one DiskSim ASCII line.
pub(crate) fn parse(line: &[u8]) -> Result<Parsed, LineError> {
    let f = Fields::<6>::whitespace(line);
    expect_fields(&f, 5, "whitespace", LAYOUT)?;
    let time_ns = f.millis_at(0, "time_ms")?;
    let device = f.u32_at(1, "devno")?;
    let offset_bytes = f.sectors_at(2, "blkno")?;
    let len_bytes = f.sectors_at(3, "bcount")?;
    let raw = f.raw(4);
    let flags =
        parse_hex_u32(raw).ok_or_else(|| LineError::field("flags", 5, "hexadecimal flags (bit 0: 1 = read)", raw))?;
    let op = if flags & READ_FLAG != 0 { Op::Read } else { Op::Write };
    let req = Request { time_ns, op, offset_bytes, len_bytes, device };
    check_request(req, &f, 3, "bcount").map(Parsed::Request)
}

/// Whether field `i` of a whitespace-separated data line has a decimal point
/// (detection evidence for formats with decimal times).
pub(crate) fn has_decimal_point(line: &[u8], i: usize) -> bool {
    let f = Fields::<8>::whitespace(line);
    i < f.len() && f.raw(i).contains(&b'.')
}

/// Write one DiskSim line: time in milliseconds with six decimals (exact to the
/// nanosecond), byte ranges rounded outward to whole sectors.
pub(crate) fn write<W: Write + ?Sized>(w: &mut W, req: &Request) -> io::Result<()> {
    let flags = match req.op {
        Op::Read => READ_FLAG,
        Op::Write => 0,
        Op::Trim => return Err(unsupported(TraceFormat::Disksim, "trim requests")),
    };
    let (sector, sectors) = to_sectors(req.offset_bytes, req.len_bytes);
    let ms = req.time_ns / 1_000_000;
    writeln!(w, "{ms}.{:06} {} {sector} {sectors} {flags:x}", req.time_ns % 1_000_000, req.device)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn float_milliseconds_and_hex_flags() {
        let Parsed::Request(r) = parse(b"579.500020 0 1320146 8 1").unwrap() else { panic!("expected a request") };
        assert_eq!((r.time_ns, r.op, r.offset_bytes, r.len_bytes), (579_500_020, Op::Read, 1_320_146 * 512, 4096));
        let Parsed::Request(w) = parse(b"12 3 100 16 a").unwrap() else { panic!("expected a request") };
        assert_eq!((w.time_ns, w.op, w.device), (12_000_000, Op::Write, 3));
        let Parsed::Request(r) = parse(b"0.5 0 0 1 0x11").unwrap() else { panic!("expected a request") };
        assert_eq!((r.time_ns, r.op), (500_000, Op::Read));
        let e = parse(b"1.0 0 0 8 zz").unwrap_err();
        assert!(format!("{e:?}").contains("flags"), "{e:?}");
    }

    #[test]
    fn writes_what_it_reads() {
        let r = Request { time_ns: 579_500_020, op: Op::Read, offset_bytes: 512, len_bytes: 1024, device: 2 };
        let mut out = Vec::new();
        write(&mut out, &r).unwrap();
        assert_eq!(out, b"579.500020 2 1 2 1\n");
    }
}
