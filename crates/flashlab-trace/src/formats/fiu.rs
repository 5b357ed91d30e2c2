//! FIU per-request traces (homes, mail, web-vm):
//! `timestamp_ns pid process lba size_blocks op major minor hash`.
//!
//! `lba` and `size_blocks` are in 512-byte sectors; `op` is `W` or `R`
//! (case-insensitive); the device is `major << 20 | minor`. The process name
//! must not contain whitespace; the hash column is optional and ignored.

use std::io::{self, Write};

use super::{expect_fields, make_dev, split_dev, unsupported, Parsed};
use crate::error::LineError;
use crate::format::{Op, Request, TraceFormat};
use crate::parse::{check_request, to_sectors, Fields};

const LAYOUT: &str = "timestamp_ns pid process lba size_blocks op major minor hash";

/// Parse one FIU line.
pub(crate) fn parse(line: &[u8]) -> Result<Parsed, LineError> {
    let f = Fields::<12>::whitespace(line);
    expect_fields(&f, 8, "whitespace", LAYOUT)?;
    let time_ns = f.u64_at(0, "timestamp_ns")?;
    f.u64_at(1, "pid")?;
    let offset_bytes = f.sectors_at(3, "lba")?;
    let len_bytes = f.sectors_at(4, "size_blocks")?;
    let op = match f.raw(5) {
        b"R" | b"r" => Op::Read,
        b"W" | b"w" => Op::Write,
        t => return Err(LineError::field("op", 6, "W or R", t)),
    };
    let major = f.u64_at(6, "major")?;
    let minor = f.u64_at(7, "minor")?;
    let device = make_dev(major, minor)
        .ok_or_else(|| LineError::field("minor", 8, "major < 4096 and minor < 2^20", f.raw(7)))?;
    let req = Request { time_ns, op, offset_bytes, len_bytes, device };
    check_request(req, &f, 4, "size_blocks").map(Parsed::Request)
}

/// Write one FIU line (pid 0, process `flashlab`, hash `-`).
pub(crate) fn write<W: Write + ?Sized>(w: &mut W, req: &Request) -> io::Result<()> {
    let op = match req.op {
        Op::Read => 'R',
        Op::Write => 'W',
        Op::Trim => return Err(unsupported(TraceFormat::Fiu, "trim requests")),
    };
    let (lba, sectors) = to_sectors(req.offset_bytes, req.len_bytes);
    let (major, minor) = split_dev(req.device);
    writeln!(w, "{} 0 flashlab {lba} {sectors} {op} {major} {minor} -", req.time_ns)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_fiu_line() {
        let line = b"89966527394865 4475 nfsd 103376072 8 W 6 0 a7d8c1e1c5e9fb1";
        let Parsed::Request(r) = parse(line).unwrap() else { panic!("expected a request") };
        assert_eq!(r.time_ns, 89_966_527_394_865);
        assert_eq!(r.offset_bytes, 103_376_072 * 512);
        assert_eq!(r.len_bytes, 4096);
        assert_eq!(r.op, Op::Write);
        assert_eq!(r.device, 6 << 20);
    }
}
