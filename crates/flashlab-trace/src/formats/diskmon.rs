//! Sysinternals DiskMon logs: `n time_s duration_s disk Read|Write sector length`,
//! tab (or space) separated.
//!
//! `n` is a running number; `time_s` is the request's time in **seconds** since the
//! log started (decimal, `0.00000000`); `duration_s` is how long the real disk took,
//! in **seconds**, and is ignored (flashlab simulates its own service time); `disk`
//! is the disk number; `sector` and `length` are in 512-byte sectors. `Read`/`Write`
//! is case-insensitive. Trailing columns are ignored.
//!
//! Auto detection proposes this format only when a sampled time has a decimal point
//! (DiskMon always writes one): otherwise the columns read as `ssdsim-fin`.

use std::io::{self, Write};

use super::{expect_fields, unsupported, Parsed};
use crate::error::LineError;
use crate::format::{Op, Request, TraceFormat};
use crate::parse::{check_request, eq_ic, to_sectors, write_seconds, Fields};

const LAYOUT: &str = "n time_s duration_s disk Read|Write sector length";

/// Parse one DiskMon line.
pub(crate) fn parse(line: &[u8]) -> Result<Parsed, LineError> {
    let f = Fields::<8>::whitespace(line);
    expect_fields(&f, 7, "whitespace", LAYOUT)?;
    f.u64_at(0, "n")?;
    let time_ns = f.seconds_at(1, "time_s")?;
    f.seconds_at(2, "duration_s")?;
    let device = f.u32_at(3, "disk")?;
    let op = match f.raw(4) {
        t if eq_ic(t, b"read") => Op::Read,
        t if eq_ic(t, b"write") => Op::Write,
        t => return Err(LineError::field("request", 5, "Read or Write", t)),
    };
    let offset_bytes = f.sectors_at(5, "sector")?;
    let len_bytes = f.sectors_at(6, "length")?;
    let req = Request { time_ns, op, offset_bytes, len_bytes, device };
    check_request(req, &f, 6, "length").map(Parsed::Request)
}

/// Write one DiskMon line; `seq` becomes `n`, the duration is 0.
pub(crate) fn write<W: Write + ?Sized>(w: &mut W, req: &Request, seq: u64) -> io::Result<()> {
    let op = match req.op {
        Op::Read => "Read",
        Op::Write => "Write",
        Op::Trim => return Err(unsupported(TraceFormat::Diskmon, "trim requests")),
    };
    let (sector, sectors) = to_sectors(req.offset_bytes, req.len_bytes);
    write!(w, "{seq}\t")?;
    write_seconds(w, req.time_ns)?;
    writeln!(w, "\t0.00000000\t{}\t{op}\t{sector}\t{sectors}", req.device)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_diskmon_line() {
        let Parsed::Request(r) = parse(b"7\t1.250000\t0.00004768\t0\tWrite\t3074\t8").unwrap() else {
            panic!("expected a request")
        };
        assert_eq!(
            (r.time_ns, r.op, r.offset_bytes, r.len_bytes, r.device),
            (1_250_000_000, Op::Write, 3074 * 512, 4096, 0)
        );
        assert!(parse(b"7\t1.25\t0.1\t0\tFlush\t3074\t8").is_err());
    }
}
