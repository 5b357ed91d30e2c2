//! fio iolog, versions 2 and 3.
//!
//! * v2: header `fio version 2 iolog`, then `filename action [offset length]`.
//! * v3: header `fio version 3 iolog`, then `time filename action [offset length]`.
//!
//! The version of each line is told by its field count (2 or 4 fields: v2,
//! 3 or 5: v3), so a missing header is tolerated. Actions `read`, `write` and
//! `trim` are requests (offset and length in bytes); `sync`, `datasync`, `wait`
//! and the file actions `add`, `open`, `close` are ignored. v2 lines have no
//! time and get time 0. v3 times are integer ticks of
//! [`ReaderOptions::fio_time_unit`] (default microseconds, as written and
//! replayed by current fio). Devices are numbered 0, 1, ... in the order file
//! names first appear (at most 1024 distinct names).

use std::io::{self, Write};

use super::Parsed;
use crate::error::LineError;
use crate::format::{Op, Request};
use crate::parse::{check_request, Fields};
use crate::reader::{FioTimeUnit, ReaderOptions};

/// Most distinct file names tracked (memory bound).
const MAX_FILES: usize = 1024;

/// Name written for device `n` by the writers.
pub(crate) const FILE_PREFIX: &str = "/dev/flashlab";

/// Parser state: file-name → device table and the v3 time unit.
#[derive(Debug, Clone)]
pub(crate) struct FioParser {
    files: Vec<Box<[u8]>>,
    tick_ns: u64,
}

impl FioParser {
    pub(crate) fn new(opts: &ReaderOptions) -> Self {
        FioParser { files: Vec::new(), tick_ns: opts.fio_time_unit.nanos() }
    }

    /// Parse one line.
    pub(crate) fn parse(&mut self, line: &[u8]) -> Result<Parsed, LineError> {
        if line.starts_with(b"fio version ") {
            return parse_header(line);
        }
        let f = Fields::<8>::whitespace(line);
        match f.len() {
            2 => self.file_action(&f, 0),
            3 => {
                f.ticks_at(0, "time", self.tick_ns)?;
                self.file_action(&f, 1)
            }
            4 => self.io(&f, 0, 0),
            5 => {
                let time_ns = f.ticks_at(0, "time", self.tick_ns)?;
                self.io(&f, 1, time_ns)
            }
            n => Err(LineError::line(format_args!(
                "expected 2 or 4 whitespace-separated fields (v2: filename action [offset length]) \
                 or 3 or 5 (v3: time filename action [offset length]), found {n}"
            ))),
        }
    }

    fn file_action(&mut self, f: &Fields<'_, 8>, base: usize) -> Result<Parsed, LineError> {
        match f.raw(base + 1) {
            b"add" | b"open" | b"close" => {
                self.device_of(f.raw(base))?;
                Ok(Parsed::Ignored)
            }
            t => Err(LineError::field("action", base + 2, "add, open or close", t)),
        }
    }

    fn io(&mut self, f: &Fields<'_, 8>, base: usize, time_ns: u64) -> Result<Parsed, LineError> {
        let op = match f.raw(base + 1) {
            b"read" => Some(Op::Read),
            b"write" => Some(Op::Write),
            b"trim" => Some(Op::Trim),
            b"sync" | b"datasync" | b"wait" => None,
            t => {
                let expected = "read, write, trim, sync, datasync or wait";
                return Err(LineError::field("action", base + 2, expected, t));
            }
        };
        let offset_bytes = f.u64_at(base + 2, "offset")?;
        let len_bytes = f.u64_at(base + 3, "length")?;
        let device = self.device_of(f.raw(base))?;
        let Some(op) = op else {
            return Ok(Parsed::Ignored);
        };
        let req = Request { time_ns, op, offset_bytes, len_bytes, device };
        check_request(req, f, base + 3, "length").map(Parsed::Request)
    }

    fn device_of(&mut self, name: &[u8]) -> Result<u32, LineError> {
        let index = match self.files.iter().position(|n| **n == *name) {
            Some(i) => i,
            None if self.files.len() < MAX_FILES => {
                self.files.push(name.into());
                self.files.len() - 1
            }
            None => return Err(LineError::line(format_args!("more than {MAX_FILES} distinct file names"))),
        };
        // MAX_FILES fits in u32.
        Ok(u32::try_from(index).unwrap_or(u32::MAX))
    }
}

fn parse_header(line: &[u8]) -> Result<Parsed, LineError> {
    match line.trim_ascii_end() {
        b"fio version 2 iolog" | b"fio version 3 iolog" => Ok(Parsed::Ignored),
        _ => Err(LineError::line(
            "unsupported fio iolog header (expected `fio version 2 iolog` or `fio version 3 iolog`)",
        )),
    }
}

impl FioTimeUnit {
    /// Nanoseconds per tick.
    pub fn nanos(self) -> u64 {
        match self {
            FioTimeUnit::Microseconds => 1_000,
            FioTimeUnit::Milliseconds => 1_000_000,
        }
    }
}

/// Write the v3 header.
pub(crate) fn write_header<W: Write + ?Sized>(w: &mut W) -> io::Result<()> {
    writeln!(w, "fio version 3 iolog")
}

/// Write one v3 I/O line (time in microseconds, file `/dev/flashlab<device>`).
pub(crate) fn write<W: Write + ?Sized>(w: &mut W, req: &Request) -> io::Result<()> {
    writeln!(
        w,
        "{} {FILE_PREFIX}{} {} {} {}",
        req.time_ns / 1_000,
        req.device,
        req.op.name(),
        req.offset_bytes,
        req.len_bytes
    )
}

/// Write one v3 file-action line (`add`, `open` or `close`).
pub(crate) fn write_file_action<W: Write + ?Sized>(
    w: &mut W,
    time_ns: u64,
    device: u32,
    action: &str,
) -> io::Result<()> {
    writeln!(w, "{} {FILE_PREFIX}{device} {action}", time_ns / 1_000)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parser() -> FioParser {
        FioParser::new(&ReaderOptions::default())
    }

    #[test]
    fn v2_and_v3_lines() {
        let mut p = parser();
        assert_eq!(p.parse(b"fio version 2 iolog").unwrap(), Parsed::Ignored);
        assert_eq!(p.parse(b"/dev/sdb add").unwrap(), Parsed::Ignored);
        assert_eq!(p.parse(b"/dev/sdc open").unwrap(), Parsed::Ignored);
        let Parsed::Request(r) = p.parse(b"/dev/sdc write 4096 8192").unwrap() else { panic!("expected a request") };
        assert_eq!((r.device, r.op, r.offset_bytes, r.len_bytes, r.time_ns), (1, Op::Write, 4096, 8192, 0));
        let Parsed::Request(r) = p.parse(b"878 /dev/sdb trim 0 16384").unwrap() else { panic!("expected a request") };
        assert_eq!((r.device, r.op, r.time_ns), (0, Op::Trim, 878_000));
        assert_eq!(p.parse(b"/dev/sdb sync 0 0").unwrap(), Parsed::Ignored);
        assert!(p.parse(b"/dev/sdb frob 0 1").is_err());
        assert!(p.parse(b"fio version 1 iolog").is_err());
        assert!(p.parse(b"a b c d e f").is_err());
    }

    #[test]
    fn millisecond_option() {
        let mut p =
            FioParser::new(&ReaderOptions { fio_time_unit: FioTimeUnit::Milliseconds, ..ReaderOptions::default() });
        let Parsed::Request(r) = p.parse(b"5 f read 0 512").unwrap() else { panic!("expected a request") };
        assert_eq!(r.time_ns, 5_000_000);
    }
}
