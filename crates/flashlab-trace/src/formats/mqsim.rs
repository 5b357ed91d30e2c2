//! MQSim ASCII traces: `time_ns dev start_sector sectors type` (integer nanoseconds;
//! DiskSim's own ASCII traces carry float milliseconds: see `disksim`).
//!
//! Type 0 = write, 1 = read (MQSim's `ASCIITraceWriteCode` "0" / `ASCIITraceReadCode`
//! "1"): the same layout *and* op encoding as SSDsim (`#define READ 1`, `WRITE 0`).

use std::io::{self, Write};

use super::ssdsim::{parse_five, write_five, FiveColumns};
use super::Parsed;
use crate::error::LineError;
use crate::format::{Request, TraceFormat};

const MQSIM: FiveColumns = FiveColumns {
    layout: "time_ns dev start_sector sectors type",
    names: ["time_ns", "dev", "start_sector", "sectors", "type"],
    op_expected: "0 (write) or 1 (read)",
};

/// Parse one MQSim line.
#[inline]
pub(crate) fn parse(line: &[u8]) -> Result<Parsed, LineError> {
    parse_five(line, &MQSIM)
}

/// Write one MQSim line (byte ranges are rounded outward to whole sectors).
pub(crate) fn write<W: Write + ?Sized>(w: &mut W, req: &Request) -> io::Result<()> {
    write_five(w, req, TraceFormat::Mqsim)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::Op;

    #[test]
    fn type_zero_is_write() {
        let Parsed::Request(r) = parse(b"938513000 4 264719034 16 0").unwrap() else { panic!("expected a request") };
        assert_eq!(r.op, Op::Write);
        assert_eq!(r.offset_bytes, 264_719_034 * 512);
        assert_eq!(r.len_bytes, 8192);
        assert_eq!(r.device, 4);
    }
}
