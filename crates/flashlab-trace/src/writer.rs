//! Trace writers (`flashlab trace convert`).

use std::collections::BTreeSet;
use std::io::{self, Write};

use crate::format::{Request, TraceFormat};
use crate::formats::{self, fio_iolog};

/// Write the header a format needs before its first request: `csv`
/// (`time_ns,op,offset_bytes,len_bytes,device`), `cloudphysics`
/// (`version,time,op,size,lbn`) and `fio-iolog` (`fio version 3 iolog`).
/// Writes nothing for the other formats.
pub fn write_header<W: Write>(w: &mut W, format: TraceFormat) -> io::Result<()> {
    formats::write_header(w, format)
}

/// Write one request as one line of `format`.
///
/// Conversions: sector-addressed formats round the byte range outward to whole
/// 512-byte sectors; `msr` truncates time to 100 ns, `fio-iolog` to 1 µs;
/// `wiscsee` and `cloudphysics` drop the device. Sequence-number columns
/// (blkparse `seq`, ssdsim-fin `n`) are written as 0 and fio file actions are
/// not written: use [`TraceWriter`] for those. Returns an
/// [`io::ErrorKind::InvalidInput`] error for a trim in a format without trims
/// (see [`TraceFormat::supports_trim`]).
pub fn write_request<W: Write>(w: &mut W, format: TraceFormat, req: &Request) -> io::Result<()> {
    formats::write_request(w, format, req, 0)
}

/// A stateful writer: writes the header on creation, numbers blkparse and
/// ssdsim-fin lines, and for `fio-iolog` emits `add`/`open` lines before a
/// device's first request and `close` lines in [`TraceWriter::finish`], so the
/// output can be replayed by fio. (Devices read back from a fio iolog are
/// numbered in order of first appearance.)
pub struct TraceWriter<W: Write> {
    w: W,
    format: TraceFormat,
    seq: u64,
    devices: BTreeSet<u32>,
    last_time_ns: u64,
}

impl<W: Write> TraceWriter<W> {
    /// Create the writer and write the format's header.
    pub fn new(mut w: W, format: TraceFormat) -> io::Result<Self> {
        write_header(&mut w, format)?;
        Ok(TraceWriter { w, format, seq: 0, devices: BTreeSet::new(), last_time_ns: 0 })
    }

    /// The output format.
    pub fn format(&self) -> TraceFormat {
        self.format
    }

    /// Write one request.
    pub fn write(&mut self, req: &Request) -> io::Result<()> {
        if self.format == TraceFormat::FioIolog && self.devices.insert(req.device) {
            fio_iolog::write_file_action(&mut self.w, req.time_ns, req.device, "add")?;
            fio_iolog::write_file_action(&mut self.w, req.time_ns, req.device, "open")?;
        }
        formats::write_request(&mut self.w, self.format, req, self.seq)?;
        self.seq += 1;
        self.last_time_ns = self.last_time_ns.max(req.time_ns);
        Ok(())
    }

    /// Write trailing lines (fio `close`), flush and return the inner writer.
    pub fn finish(mut self) -> io::Result<W> {
        for &device in &self.devices {
            fio_iolog::write_file_action(&mut self.w, self.last_time_ns, device, "close")?;
        }
        self.w.flush()?;
        Ok(self.w)
    }
}
