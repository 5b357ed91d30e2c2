//! SSDsim "fin" variant (UMass-derived, as in `fin1` of SSDSim-Original):
//! `n time_ns dev fd Read|Write lsn size [x]`, tab or space separated.
//!
//! `n` is a running request number and `fd` a file descriptor (both checked to
//! be integers and otherwise ignored); `lsn` and `size` are in 512-byte sectors
//! (SSDSim-Original's UMASS reader passes both straight to the sector-based
//! simulator, and `fin1` lines are the 8 KiB-aligned cover of the matching
//! `example.ascii` requests); `Read`/`Write` is case-insensitive. Trailing
//! columns are ignored.

use std::io::{self, Write};

use super::{expect_fields, unsupported, Parsed};
use crate::error::LineError;
use crate::format::{Op, Request, TraceFormat};
use crate::parse::{check_request, eq_ic, to_sectors, Fields};

const LAYOUT: &str = "n time_ns dev fd Read|Write lsn size";

/// Parse one ssdsim-fin line.
pub(crate) fn parse(line: &[u8]) -> Result<Parsed, LineError> {
    let f = Fields::<8>::whitespace(line);
    expect_fields(&f, 7, "whitespace", LAYOUT)?;
    f.u64_at(0, "n")?;
    let time_ns = f.u64_at(1, "time_ns")?;
    let device = f.u32_at(2, "dev")?;
    f.u64_at(3, "fd")?;
    let op = match f.raw(4) {
        t if eq_ic(t, b"read") => Op::Read,
        t if eq_ic(t, b"write") => Op::Write,
        t => return Err(LineError::field("op", 5, "Read or Write", t)),
    };
    let offset_bytes = f.sectors_at(5, "lsn")?;
    let len_bytes = f.sectors_at(6, "size")?;
    let req = Request { time_ns, op, offset_bytes, len_bytes, device };
    check_request(req, &f, 6, "size").map(Parsed::Request)
}

/// Write one ssdsim-fin line; `seq` becomes `n`, `fd` is 0 and `x` is 1.
pub(crate) fn write<W: Write + ?Sized>(w: &mut W, req: &Request, seq: u64) -> io::Result<()> {
    let op = match req.op {
        Op::Read => "Read",
        Op::Write => "Write",
        Op::Trim => return Err(unsupported(TraceFormat::SsdsimFin, "trim requests")),
    };
    let (lsn, sectors) = to_sectors(req.offset_bytes, req.len_bytes);
    writeln!(w, "{seq}\t{}\t{}\t0\t{op}\t{lsn}\t{sectors}\t1", req.time_ns, req.device)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_fin_line() {
        let Parsed::Request(r) = parse(b"4\t78643000\t0\t1\tRead\t55584\t32\t1").unwrap() else {
            panic!("expected a request")
        };
        assert_eq!(r.time_ns, 78_643_000);
        assert_eq!(r.op, Op::Read);
        assert_eq!(r.offset_bytes, 55584 * 512);
        assert_eq!(r.len_bytes, 32 * 512);
        assert_eq!(r.device, 0);
        assert!(parse(b"4 78643000 0 1 Trim 55584 32 1").is_err());
    }
}
