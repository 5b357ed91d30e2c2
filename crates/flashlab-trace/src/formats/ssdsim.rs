//! SSDsim ASCII traces: `time_ns dev lsn sectors op`, whitespace separated.
//!
//! `lsn` and `sectors` are in 512-byte sectors; `op` 1 = read, 0 = write. Extra
//! trailing columns (some SSDsim forks add a priority) are ignored.

use std::io::{self, Write};

use super::{expect_fields, unsupported, Parsed};
use crate::error::LineError;
use crate::format::{Op, Request, TraceFormat, SECTOR_BYTES};
use crate::parse::{check_request, to_sectors, Fields};

/// Column names of a five-column DiskSim-style layout (op 1 = read, 0 = write).
pub(crate) struct FiveColumns {
    pub(crate) layout: &'static str,
    pub(crate) names: [&'static str; 5],
    pub(crate) op_expected: &'static str,
}

const SSDSIM: FiveColumns = FiveColumns {
    layout: "time_ns dev lsn sectors op",
    names: ["time_ns", "dev", "lsn", "sectors", "op"],
    op_expected: "1 (read) or 0 (write)",
};

/// Parse one SSDsim line.
#[inline]
pub(crate) fn parse(line: &[u8]) -> Result<Parsed, LineError> {
    parse_five(line, &SSDSIM)
}

/// Parse `time_ns dev sector sectors op` with the given column names.
#[inline]
pub(crate) fn parse_five(line: &[u8], c: &FiveColumns) -> Result<Parsed, LineError> {
    if let Some(req) = fast_five(line) {
        return Ok(Parsed::Request(req));
    }
    parse_five_checked(line, c)
}

/// Single-pass fast path for the common case: exactly five plain integers
/// that form a valid request. `None` sends the line to the checked parser,
/// which also produces the error messages.
#[inline]
fn fast_five(line: &[u8]) -> Option<Request> {
    let [time_ns, device, sector, sectors, code] = five_ints(line)?;
    let op = match code {
        1 => Op::Read,
        0 => Op::Write,
        _ => return None,
    };
    let offset_bytes = sector.checked_mul(SECTOR_BYTES)?;
    let len_bytes = sectors.checked_mul(SECTOR_BYTES)?;
    offset_bytes.checked_add(len_bytes)?;
    (len_bytes > 0).then_some(Request { time_ns, op, offset_bytes, len_bytes, device: u32::try_from(device).ok()? })
}

/// Exactly five space/tab-separated decimal integers of at most 19 digits.
#[inline]
fn five_ints(line: &[u8]) -> Option<[u64; 5]> {
    let mut out = [0u64; 5];
    let mut n = 0;
    let mut value: u64 = 0;
    let mut digits = 0u32;
    for &b in line {
        let d = b.wrapping_sub(b'0');
        if d <= 9 {
            value = value.wrapping_mul(10).wrapping_add(u64::from(d));
            digits += 1;
        } else if b == b' ' || b == b'\t' {
            if digits > 0 {
                if n == 5 || digits > 19 {
                    return None;
                }
                out[n] = value;
                n += 1;
                value = 0;
                digits = 0;
            }
        } else {
            return None;
        }
    }
    if n != 4 || digits == 0 || digits > 19 {
        return None;
    }
    out[4] = value;
    Some(out)
}

/// The general parser: any whitespace, extra columns, precise errors.
fn parse_five_checked(line: &[u8], c: &FiveColumns) -> Result<Parsed, LineError> {
    let f = Fields::<8>::whitespace(line);
    expect_fields(&f, 5, "whitespace", c.layout)?;
    let time_ns = f.u64_at(0, c.names[0])?;
    let device = f.u32_at(1, c.names[1])?;
    let offset_bytes = f.sectors_at(2, c.names[2])?;
    let len_bytes = f.sectors_at(3, c.names[3])?;
    let op = match f.raw(4) {
        [b'1'] => Op::Read,
        [b'0'] => Op::Write,
        code => return Err(LineError::field(c.names[4], 5, c.op_expected, code)),
    };
    let req = Request { time_ns, op, offset_bytes, len_bytes, device };
    check_request(req, &f, 3, c.names[3]).map(Parsed::Request)
}

/// Write one SSDsim line (byte ranges are rounded outward to whole sectors).
pub(crate) fn write<W: Write + ?Sized>(w: &mut W, req: &Request) -> io::Result<()> {
    write_five(w, req, TraceFormat::Ssdsim)
}

/// Write `time_ns dev sector sectors op` (op 1 = read, 0 = write).
pub(crate) fn write_five<W: Write + ?Sized>(w: &mut W, req: &Request, format: TraceFormat) -> io::Result<()> {
    let code = match req.op {
        Op::Read => 1,
        Op::Write => 0,
        Op::Trim => return Err(unsupported(format, "trim requests")),
    };
    let (sector, sectors) = to_sectors(req.offset_bytes, req.len_bytes);
    writeln!(w, "{} {} {} {} {}", req.time_ns, req.device, sector, sectors, code)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_read_and_write() {
        let r = parse(b"78643005 1 55596 6 1").unwrap();
        assert_eq!(
            r,
            Parsed::Request(Request {
                time_ns: 78_643_005,
                op: Op::Read,
                offset_bytes: 55596 * 512,
                len_bytes: 3072,
                device: 1
            })
        );
        let Parsed::Request(w) = parse(b"0\t0 303567 7 0 9").unwrap() else { panic!("expected a request") };
        assert_eq!(w.op, Op::Write);
    }

    #[test]
    fn fast_path_agrees_with_checked_parser() {
        let cases: [&[u8]; 9] = [
            b"1 2 3 4 1",
            b"1\t2 3  4 0",
            b"1 4294967296 3 4 0",
            b"1 2 3 4 0 9",
            b"1 2 3 0 0",
            b"18446744073709551615 2 3 4 1",
            b"99999999999999999999 2 3 4 1",
            b"0 0 36028797018963967 2 0",
            b"1 2 3 4",
        ];
        for line in cases {
            let fast = fast_five(line).map(Parsed::Request);
            let checked = parse_five_checked(line, &SSDSIM).ok();
            if fast.is_some() {
                assert_eq!(fast, checked, "{}", String::from_utf8_lossy(line));
            }
            assert_eq!(parse(line).ok(), checked);
        }
        assert!(fast_five(b"1 2 3 4 1").is_some());
    }

    #[test]
    fn rejects_bad_op_and_overflow() {
        assert!(parse(b"0 0 1 1 2").is_err());
        assert!(parse(b"0 0 36028797018963967 1 0").is_err());
        assert!(parse(b"0 0 1 0 0").is_err());
        assert!(parse(b"0 0 1 1").is_err());
    }
}
