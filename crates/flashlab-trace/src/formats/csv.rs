//! Generic CSV with a header line naming the columns (the target of
//! `trace convert --to csv`).
//!
//! Column names are matched case-insensitively after trimming; unknown columns
//! are ignored. Required: `op` (`read`/`write`/`trim` or `r`/`w`/`t`,
//! case-insensitive), one of `offset_bytes` / `offset_sectors` / `lba_sectors`,
//! one of `len_bytes` / `len_sectors`. Optional: one of `time_ns` / `time_us`
//! (integers) / `time_s` (decimal seconds) — time 0 when absent — and `device`
//! (0 when absent). Sectors are 512 bytes. Columns past the 32nd cannot be
//! used. The first non-blank, non-comment line must be the header.

use std::io::{self, Write};

use super::Parsed;
use crate::error::LineError;
use crate::format::{Op, Request};
use crate::parse::{check_request, eq_ic, Fields, MAX_FIELDS};

/// Recognised column names; the index is the column "slot".
const KNOWN: [&str; 10] = [
    "op",
    "offset_bytes",
    "offset_sectors",
    "lba_sectors",
    "len_bytes",
    "len_sectors",
    "time_ns",
    "time_us",
    "time_s",
    "device",
];

/// The header written by [`write_header`].
const WRITE_HEADER: &str = "time_ns,op,offset_bytes,len_bytes,device";

/// A chosen column: index on the line and canonical name.
#[derive(Debug, Clone, Copy)]
struct Col {
    index: usize,
    name: &'static str,
}

/// Column layout taken from the header.
#[derive(Debug, Clone)]
struct Columns {
    op: Col,
    offset: Col,
    len: Col,
    time: Option<Col>,
    device: Option<Col>,
    min_fields: usize,
}

/// Parser state: the columns, once the header has been read.
#[derive(Debug, Default, Clone)]
pub(crate) struct CsvParser {
    cols: Option<Columns>,
}

impl CsvParser {
    /// True until a valid header has been read.
    pub(crate) fn awaiting_header(&self) -> bool {
        self.cols.is_none()
    }

    /// Parse one line (the first one is the header).
    pub(crate) fn parse(&mut self, line: &[u8]) -> Result<Parsed, LineError> {
        match &self.cols {
            Some(cols) => parse_row(cols, line),
            None => {
                self.cols = Some(parse_header(line)?);
                Ok(Parsed::Ignored)
            }
        }
    }
}

fn parse_header(line: &[u8]) -> Result<Columns, LineError> {
    let mut slots: [Option<usize>; KNOWN.len()] = [None; KNOWN.len()];
    for (index, raw) in line.split(|&b| b == b',').enumerate() {
        let Some(slot) = KNOWN.iter().position(|k| eq_ic(raw.trim_ascii(), k.as_bytes())) else {
            continue;
        };
        if index >= MAX_FIELDS {
            return Err(LineError::line(format_args!(
                "CSV header: column `{}` is column {}, but only the first {MAX_FIELDS} columns can be used",
                KNOWN[slot],
                index + 1
            )));
        }
        if slots[slot].replace(index).is_some() {
            return Err(LineError::line(format_args!("CSV header: column `{}` appears twice", KNOWN[slot])));
        }
    }
    build_columns(&slots)
}

fn build_columns(slots: &[Option<usize>; KNOWN.len()]) -> Result<Columns, LineError> {
    let missing = || {
        LineError::line(
            "CSV header must name the columns `op`, `offset_bytes` (or `offset_sectors` or \
             `lba_sectors`) and `len_bytes` (or `len_sectors`)",
        )
    };
    let op = pick(slots, &[0])?.ok_or_else(missing)?;
    let offset = pick(slots, &[1, 2, 3])?.ok_or_else(missing)?;
    let len = pick(slots, &[4, 5])?.ok_or_else(missing)?;
    let time = pick(slots, &[6, 7, 8])?;
    let device = pick(slots, &[9])?;
    let min_fields =
        [Some(op), Some(offset), Some(len), time, device].iter().flatten().map(|c| c.index + 1).max().unwrap_or(0);
    Ok(Columns { op, offset, len, time, device, min_fields })
}

/// At most one of the alternative slots may be present.
fn pick(slots: &[Option<usize>; KNOWN.len()], alternatives: &[usize]) -> Result<Option<Col>, LineError> {
    let mut chosen: Option<Col> = None;
    for &slot in alternatives {
        if let Some(index) = slots[slot] {
            if let Some(prev) = chosen {
                return Err(LineError::line(format_args!(
                    "CSV header names both `{}` and `{}`; keep one",
                    prev.name, KNOWN[slot]
                )));
            }
            chosen = Some(Col { index, name: KNOWN[slot] });
        }
    }
    Ok(chosen)
}

fn parse_row(cols: &Columns, line: &[u8]) -> Result<Parsed, LineError> {
    let f = Fields::csv(line);
    if f.len() < cols.min_fields {
        return Err(LineError::line(format_args!(
            "expected at least {} comma-separated fields (as named by the header), found {}",
            cols.min_fields,
            f.len()
        )));
    }
    let op = parse_op(&f, cols.op)?;
    let offset_bytes = amount(&f, cols.offset)?;
    let len_bytes = amount(&f, cols.len)?;
    let time_ns = match cols.time {
        Some(c) if c.name == "time_ns" => f.u64_at(c.index, c.name)?,
        Some(c) if c.name == "time_us" => f.ticks_at(c.index, c.name, 1_000)?,
        Some(c) => f.seconds_at(c.index, c.name)?,
        None => 0,
    };
    let device = match cols.device {
        Some(c) => f.u32_at(c.index, c.name)?,
        None => 0,
    };
    let req = Request { time_ns, op, offset_bytes, len_bytes, device };
    check_request(req, &f, cols.len.index, cols.len.name).map(Parsed::Request)
}

fn parse_op(f: &Fields<'_>, c: Col) -> Result<Op, LineError> {
    let raw = f.raw(c.index);
    if eq_ic(raw, b"read") || eq_ic(raw, b"r") {
        Ok(Op::Read)
    } else if eq_ic(raw, b"write") || eq_ic(raw, b"w") {
        Ok(Op::Write)
    } else if eq_ic(raw, b"trim") || eq_ic(raw, b"t") {
        Ok(Op::Trim)
    } else {
        Err(LineError::field(c.name, c.index + 1, "read, write, trim, r, w or t", raw))
    }
}

/// An offset/length column in bytes, converting `*_sectors` columns.
fn amount(f: &Fields<'_>, c: Col) -> Result<u64, LineError> {
    if c.name.ends_with("_sectors") {
        f.sectors_at(c.index, c.name)
    } else {
        f.u64_at(c.index, c.name)
    }
}

/// Write the header line.
pub(crate) fn write_header<W: Write + ?Sized>(w: &mut W) -> io::Result<()> {
    writeln!(w, "{WRITE_HEADER}")
}

/// Write one row: `time_ns,op,offset_bytes,len_bytes,device`.
pub(crate) fn write<W: Write + ?Sized>(w: &mut W, req: &Request) -> io::Result<()> {
    writeln!(w, "{},{},{},{},{}", req.time_ns, req.op.name(), req.offset_bytes, req.len_bytes, req.device)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_then_rows() {
        let mut p = CsvParser::default();
        assert!(p.awaiting_header());
        assert_eq!(p.parse(b"Device, extra ,OP,lba_sectors,len_bytes,time_s").unwrap(), Parsed::Ignored);
        let Parsed::Request(r) = p.parse(b"3,zzz,T,8,4096,1.25").unwrap() else { panic!("expected a request") };
        assert_eq!(r, Request { time_ns: 1_250_000_000, op: Op::Trim, offset_bytes: 4096, len_bytes: 4096, device: 3 });
        assert!(p.parse(b"3,zzz,T,8").is_err());
    }

    #[test]
    fn bad_headers() {
        for h in [
            &b"op,offset_bytes"[..],
            b"op,offset_bytes,len_bytes,op",
            b"op,offset_bytes,lba_sectors,len_bytes",
            b"1,2,3",
        ] {
            assert!(CsvParser::default().parse(h).is_err(), "{}", String::from_utf8_lossy(h));
        }
    }
}
