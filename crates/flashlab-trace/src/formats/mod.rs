//! One module per trace format: a line parser and a line writer each.
//!
//! Parsers work on the raw bytes of one line (without the line terminator,
//! never blank, never a `#` comment) and never allocate on the success path.

use std::io::{self, Write};

use crate::error::LineError;
use crate::format::{Request, TraceFormat};
use crate::parse::Fields;
use crate::reader::ReaderOptions;

pub(crate) mod blkparse;
pub(crate) mod cloudphysics;
pub(crate) mod csv;
pub(crate) mod diskmon;
pub(crate) mod disksim;
pub(crate) mod fio_iolog;
pub(crate) mod fiu;
pub(crate) mod mqsim;
pub(crate) mod msr;
pub(crate) mod spc;
pub(crate) mod ssdsim;
pub(crate) mod ssdsim_fin;
pub(crate) mod wiscsee;

/// Result of parsing one line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Parsed {
    /// A block request.
    Request(Request),
    /// A valid line of the format that is not a request (header, completion
    /// event, other blkparse action, fio file action, unknown SCSI opcode...).
    Ignored,
    /// A line that is not part of the format's record stream but is tolerated
    /// (blkparse summary and "Input file" lines). Not evidence for detection.
    Foreign,
}

/// A per-format line parser with whatever state the format needs.
#[derive(Debug)]
pub(crate) enum Parser {
    Ssdsim,
    Mqsim,
    SsdsimFin,
    Msr,
    Spc,
    Fiu,
    Cloudphysics,
    Wiscsee,
    Disksim,
    Diskmon,
    Blkparse(blkparse::BlkparseParser),
    Fio(fio_iolog::FioParser),
    Csv(csv::CsvParser),
}

impl Parser {
    /// A fresh parser for `format`.
    pub(crate) fn new(format: TraceFormat, opts: &ReaderOptions) -> Self {
        match format {
            TraceFormat::Ssdsim => Parser::Ssdsim,
            TraceFormat::Mqsim => Parser::Mqsim,
            TraceFormat::SsdsimFin => Parser::SsdsimFin,
            TraceFormat::Msr => Parser::Msr,
            TraceFormat::Spc => Parser::Spc,
            TraceFormat::Fiu => Parser::Fiu,
            TraceFormat::Cloudphysics => Parser::Cloudphysics,
            TraceFormat::Wiscsee => Parser::Wiscsee,
            TraceFormat::Disksim => Parser::Disksim,
            TraceFormat::Diskmon => Parser::Diskmon,
            TraceFormat::Blkparse => Parser::Blkparse(blkparse::BlkparseParser::new(opts)),
            TraceFormat::FioIolog => Parser::Fio(fio_iolog::FioParser::new(opts)),
            TraceFormat::Csv => Parser::Csv(csv::CsvParser::default()),
        }
    }

    /// Parse one non-blank, non-comment line.
    #[inline]
    pub(crate) fn parse(&mut self, line: &[u8]) -> Result<Parsed, LineError> {
        match self {
            Parser::Ssdsim => ssdsim::parse(line),
            Parser::Mqsim => mqsim::parse(line),
            Parser::SsdsimFin => ssdsim_fin::parse(line),
            Parser::Msr => msr::parse(line),
            Parser::Spc => spc::parse(line),
            Parser::Fiu => fiu::parse(line),
            Parser::Cloudphysics => cloudphysics::parse(line),
            Parser::Wiscsee => wiscsee::parse(line),
            Parser::Disksim => disksim::parse(line),
            Parser::Diskmon => diskmon::parse(line),
            Parser::Blkparse(p) => p.parse(line),
            Parser::Fio(p) => p.parse(line),
            Parser::Csv(p) => p.parse(line),
        }
    }

    /// True while a format that requires a header has not accepted one yet; an
    /// error in that state is fatal even with `skip_bad_lines`.
    pub(crate) fn awaiting_header(&self) -> bool {
        match self {
            Parser::Csv(p) => p.awaiting_header(),
            _ => false,
        }
    }
}

/// Check that a line has at least `min` fields.
#[inline]
pub(crate) fn expect_fields<const N: usize>(
    fields: &Fields<'_, N>,
    min: usize,
    separator: &str,
    layout: &str,
) -> Result<(), LineError> {
    if fields.len() >= min {
        Ok(())
    } else {
        Err(LineError::line(format_args!(
            "expected at least {min} {separator}-separated fields ({layout}), found {}",
            fields.len()
        )))
    }
}

/// Write the header line(s) a format needs before its first request (nothing
/// for header-less formats).
pub(crate) fn write_header<W: Write + ?Sized>(w: &mut W, format: TraceFormat) -> io::Result<()> {
    match format {
        TraceFormat::Csv => csv::write_header(w),
        TraceFormat::Cloudphysics => cloudphysics::write_header(w),
        TraceFormat::FioIolog => fio_iolog::write_header(w),
        _ => Ok(()),
    }
}

/// Write one request as one line. `seq` fills sequence-number columns
/// (blkparse `seq`, ssdsim-fin `n`).
pub(crate) fn write_request<W: Write + ?Sized>(
    w: &mut W,
    format: TraceFormat,
    req: &Request,
    seq: u64,
) -> io::Result<()> {
    match format {
        TraceFormat::Ssdsim => ssdsim::write(w, req),
        TraceFormat::Mqsim => mqsim::write(w, req),
        TraceFormat::SsdsimFin => ssdsim_fin::write(w, req, seq),
        TraceFormat::Msr => msr::write(w, req),
        TraceFormat::Spc => spc::write(w, req),
        TraceFormat::Fiu => fiu::write(w, req),
        TraceFormat::Cloudphysics => cloudphysics::write(w, req),
        TraceFormat::Wiscsee => wiscsee::write(w, req),
        TraceFormat::Disksim => disksim::write(w, req),
        TraceFormat::Diskmon => diskmon::write(w, req, seq),
        TraceFormat::Blkparse => blkparse::write(w, req, seq),
        TraceFormat::FioIolog => fio_iolog::write(w, req),
        TraceFormat::Csv => csv::write(w, req),
    }
}

/// The error returned when a request cannot be expressed in `format`.
pub(crate) fn unsupported(format: TraceFormat, what: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, format!("trace format {} cannot represent {what}", format.name()))
}

/// Split a device number into Linux (major, minor) using the kernel's internal
/// `MKDEV` layout: 12-bit major, 20-bit minor.
pub(crate) fn split_dev(device: u32) -> (u32, u32) {
    (device >> 20, device & 0xF_FFFF)
}

/// Combine Linux (major, minor) into a device number (`major << 20 | minor`).
pub(crate) fn make_dev(major: u64, minor: u64) -> Option<u32> {
    if major < (1 << 12) && minor < (1 << 20) {
        u32::try_from((major << 20) | minor).ok()
    } else {
        None
    }
}
