//! MSR Cambridge CSV: `Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime`.
//!
//! `Timestamp` is a Windows FILETIME (100 ns ticks since 1601); `Type` is
//! `Read`/`Write` (case-insensitive); `Offset` and `Size` are in bytes;
//! `DiskNumber` becomes the device. `ResponseTime` is optional and ignored.

use std::io::{self, Write};

use super::{expect_fields, unsupported, Parsed};
use crate::error::LineError;
use crate::format::{Op, Request, TraceFormat};
use crate::parse::{check_request, eq_ic, Fields};

const LAYOUT: &str = "Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime";

/// Nanoseconds per FILETIME tick.
const TICK_NS: u64 = 100;

/// Parse one MSR line.
#[inline]
pub(crate) fn parse(line: &[u8]) -> Result<Parsed, LineError> {
    let f = Fields::<8>::csv(line);
    expect_fields(&f, 6, "comma", LAYOUT)?;
    let time_ns = f.ticks_at(0, "Timestamp", TICK_NS)?;
    let device = f.u32_at(2, "DiskNumber")?;
    let op = match f.raw(3) {
        t if eq_ic(t, b"read") => Op::Read,
        t if eq_ic(t, b"write") => Op::Write,
        t => return Err(LineError::field("Type", 4, "Read or Write", t)),
    };
    let offset_bytes = f.u64_at(4, "Offset")?;
    let len_bytes = f.u64_at(5, "Size")?;
    let req = Request { time_ns, op, offset_bytes, len_bytes, device };
    check_request(req, &f, 5, "Size").map(Parsed::Request)
}

/// Write one MSR line (hostname `flashlab`, response time 0; time truncated to 100 ns).
pub(crate) fn write<W: Write + ?Sized>(w: &mut W, req: &Request) -> io::Result<()> {
    let op = match req.op {
        Op::Read => "Read",
        Op::Write => "Write",
        Op::Trim => return Err(unsupported(TraceFormat::Msr, "trim requests")),
    };
    writeln!(w, "{},flashlab,{},{op},{},{},0", req.time_ns / TICK_NS, req.device, req.offset_bytes, req.len_bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_msr_line() {
        let line = b"128166372003061629,hm,1,Read,3154403328,32768,1409";
        let Parsed::Request(r) = parse(line).unwrap() else { panic!("expected a request") };
        assert_eq!(r.time_ns, 12_816_637_200_306_162_900);
        assert_eq!(r.op, Op::Read);
        assert_eq!(r.offset_bytes, 3_154_403_328);
        assert_eq!(r.len_bytes, 32768);
        assert_eq!(r.device, 1);
        // 2^64 / 100 + 1 ticks overflow nanoseconds.
        assert!(parse(b"184467440737095517,hm,1,write,0,1,0").is_err());
    }
}
