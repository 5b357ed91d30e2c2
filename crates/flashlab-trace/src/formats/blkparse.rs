//! Default `blkparse` text output:
//! `maj,min cpu seq time_s pid action rwbs sector + nsectors [proc]`.
//!
//! Only events whose action equals [`ReaderOptions::blkparse_action`] (default
//! `D`, issued to the driver) become requests; other actions are ignored. The
//! request kind comes from the RWBS flags: `D` (discard) → trim, else `W` →
//! write, else `R` → read; events with none of these (flushes, `N`) and events
//! without a `sector + nsectors` payload (or with 0 sectors) are ignored. Lines
//! that are not event lines (the per-CPU and total summary at the end, "Input
//! file ... added") are skipped without being counted as bad. The device is
//! `major << 20 | minor` (the Linux kernel's internal `dev_t` layout).

use std::io::{self, Write};

use super::{make_dev, split_dev, Parsed};
use crate::error::LineError;
use crate::format::{Op, Request};
use crate::parse::{check_request, parse_u64, to_sectors, write_seconds, Fields};
use crate::reader::ReaderOptions;

/// Parser state: the action to keep (UTF-8 encoded).
#[derive(Debug, Clone)]
pub(crate) struct BlkparseParser {
    action: [u8; 4],
    action_len: usize,
}

impl BlkparseParser {
    pub(crate) fn new(opts: &ReaderOptions) -> Self {
        let mut action = [0u8; 4];
        let action_len = opts.blkparse_action.encode_utf8(&mut action).len();
        BlkparseParser { action, action_len }
    }

    /// Parse one line.
    pub(crate) fn parse(&self, line: &[u8]) -> Result<Parsed, LineError> {
        let f = Fields::<12>::whitespace(line);
        if f.len() < 6 || parse_maj_min(f.raw(0)).is_none() {
            return Ok(Parsed::Foreign);
        }
        if f.raw(5) != &self.action[..self.action_len] {
            return Ok(Parsed::Ignored);
        }
        let device = parse_device(&f)?;
        f.u64_at(1, "cpu")?;
        f.u64_at(2, "seq")?;
        let time_ns = f.seconds_at(3, "time_s")?;
        let Some(op) = rwbs_op(f.raw(6)) else {
            return Ok(Parsed::Ignored);
        };
        if f.len() < 10 || f.raw(8) != b"+" {
            return Ok(Parsed::Ignored);
        }
        let offset_bytes = f.sectors_at(7, "sector")?;
        let len_bytes = f.sectors_at(9, "nsectors")?;
        if len_bytes == 0 {
            return Ok(Parsed::Ignored);
        }
        let req = Request { time_ns, op, offset_bytes, len_bytes, device };
        check_request(req, &f, 9, "nsectors").map(Parsed::Request)
    }
}

fn parse_maj_min(field: &[u8]) -> Option<(u64, u64)> {
    let comma = field.iter().position(|&b| b == b',')?;
    Some((parse_u64(&field[..comma])?, parse_u64(&field[comma + 1..])?))
}

fn parse_device(f: &Fields<'_, 12>) -> Result<u32, LineError> {
    let raw = f.raw(0);
    parse_maj_min(raw)
        .and_then(|(major, minor)| make_dev(major, minor))
        .ok_or_else(|| LineError::field("maj,min", 1, "a device major,minor with major < 4096 and minor < 2^20", raw))
}

fn rwbs_op(rwbs: &[u8]) -> Option<Op> {
    if rwbs.contains(&b'D') {
        Some(Op::Trim)
    } else if rwbs.contains(&b'W') {
        Some(Op::Write)
    } else if rwbs.contains(&b'R') {
        Some(Op::Read)
    } else {
        None
    }
}

/// Write one `D` event line in blkparse's default layout (cpu 0, pid 0,
/// process `flashlab`; byte ranges rounded outward to sectors).
pub(crate) fn write<W: Write + ?Sized>(w: &mut W, req: &Request, seq: u64) -> io::Result<()> {
    let (major, minor) = split_dev(req.device);
    let rwbs = match req.op {
        Op::Read => "R",
        Op::Write => "W",
        Op::Trim => "D",
    };
    let (sector, sectors) = to_sectors(req.offset_bytes, req.len_bytes);
    write!(w, "{major:>3},{minor:<3} {:>2} {seq:>8} ", 0)?;
    write_seconds(w, req.time_ns)?;
    writeln!(w, " {:>5}  D {rwbs:>3} {sector} + {sectors} [flashlab]", 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parser(action: char) -> BlkparseParser {
        BlkparseParser::new(&ReaderOptions { blkparse_action: action, ..ReaderOptions::default() })
    }

    #[test]
    fn keeps_only_chosen_action() {
        let p = parser('D');
        let line = b"  8,0    3        1     0.000000000  1234  D   W 223490 + 8 [kjournald]";
        let Parsed::Request(r) = p.parse(line).unwrap() else { panic!("expected a request") };
        assert_eq!(r.op, Op::Write);
        assert_eq!(r.offset_bytes, 223_490 * 512);
        assert_eq!(r.len_bytes, 4096);
        assert_eq!(r.device, 8 << 20);
        let q = b"  8,0    3        2     0.000000100  1234  Q   W 223490 + 8 [kjournald]";
        assert_eq!(p.parse(q).unwrap(), Parsed::Ignored);
        assert!(matches!(parser('Q').parse(q).unwrap(), Parsed::Request(_)));
    }

    #[test]
    fn rwbs_mapping_and_non_events() {
        let p = parser('D');
        let d = b"259,1 0 5 1.5 77 D DS 2048 + 2048 [fstrim]";
        let Parsed::Request(r) = p.parse(d).unwrap() else { panic!("expected a request") };
        assert_eq!((r.op, r.time_ns, r.device), (Op::Trim, 1_500_000_000, (259 << 20) | 1));
        assert_eq!(p.parse(b"8,0 1 6 1.6 77 D FN [kworker]").unwrap(), Parsed::Ignored);
        assert_eq!(p.parse(b"CPU0 (8,0):").unwrap(), Parsed::Foreign);
        assert_eq!(p.parse(b" Reads Queued:           0,        0KiB").unwrap(), Parsed::Foreign);
        assert!(p.parse(b"8,0 1 6 1.6 77 D W 12x + 8 [p]").is_err());
        assert!(p.parse(b"8,0 1 6 zz 77 D W 12 + 8 [p]").is_err());
    }
}
