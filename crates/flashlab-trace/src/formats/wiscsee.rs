//! WiscSim block events (`blkparse-events-for-ftlsim.txt`):
//! `pid D|C op offset_bytes size_bytes time_s delta sync`.
//!
//! Only `D` (issue) events become requests; `C` (completion) events are
//! ignored. `op` is `read`, `write` or `discard` (→ trim); other ops are
//! ignored. Offsets and sizes are in bytes, `time_s` in decimal seconds; the
//! `delta` and `sync` columns are optional and ignored. There is no device
//! column (device 0).

use std::io::{self, Write};

use super::{expect_fields, Parsed};
use crate::error::LineError;
use crate::format::{Op, Request};
use crate::parse::{check_request, write_seconds, Fields};

const LAYOUT: &str = "pid D|C op offset_bytes size_bytes time_s delta sync";

/// Parse one line.
pub(crate) fn parse(line: &[u8]) -> Result<Parsed, LineError> {
    let f = Fields::<8>::whitespace(line);
    expect_fields(&f, 6, "whitespace", LAYOUT)?;
    f.u64_at(0, "pid")?;
    let issue = match f.raw(1) {
        b"D" => true,
        b"C" => false,
        t => return Err(LineError::field("event", 2, "D or C", t)),
    };
    let offset_bytes = f.u64_at(3, "offset_bytes")?;
    let len_bytes = f.u64_at(4, "size_bytes")?;
    let time_ns = f.seconds_at(5, "time_s")?;
    let op = match f.raw(2) {
        b"read" => Op::Read,
        b"write" => Op::Write,
        b"discard" => Op::Trim,
        _ => return Ok(Parsed::Ignored),
    };
    if !issue {
        return Ok(Parsed::Ignored);
    }
    let req = Request { time_ns, op, offset_bytes, len_bytes, device: 0 };
    check_request(req, &f, 4, "size_bytes").map(Parsed::Request)
}

/// Write one `D` event (pid 0, delta 0, sync `False`; the device is dropped).
pub(crate) fn write<W: Write + ?Sized>(w: &mut W, req: &Request) -> io::Result<()> {
    let op = match req.op {
        Op::Read => "read",
        Op::Write => "write",
        Op::Trim => "discard",
    };
    write!(w, "0 D {op} {} {} ", req.offset_bytes, req.len_bytes)?;
    write_seconds(w, req.time_ns)?;
    writeln!(w, " 0 False")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_events() {
        let line = b"1386 D discard 136314880 4096 0.439239477 4.43e-06 False";
        let Parsed::Request(r) = parse(line).unwrap() else { panic!("expected a request") };
        assert_eq!((r.op, r.offset_bytes, r.len_bytes, r.time_ns), (Op::Trim, 136_314_880, 4096, 439_239_477));
        let c = b"0 C write 536870912 4096 0.437482485 3.8474e-05 True";
        assert_eq!(parse(c).unwrap(), Parsed::Ignored);
        assert!(parse(b"0 X write 1 1 0.1 0 False").is_err());
    }
}
