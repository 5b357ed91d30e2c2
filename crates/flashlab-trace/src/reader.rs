//! The streaming reader.

use std::collections::VecDeque;
use std::io::{self, BufRead};

use crate::detect::{detect_lines, SAMPLE_LINES};
use crate::error::{LineError, TraceError};
use crate::format::{FormatChoice, Request, TraceFormat};
use crate::formats::{Parsed, Parser};

/// Longest accepted line in bytes; longer lines are bad lines (and are consumed
/// without being buffered, so memory stays bounded).
pub const MAX_LINE_BYTES: usize = 1 << 20;

/// Most raw lines (including blank and comment lines) read ahead for detection.
const MAX_SAMPLE_RAW_LINES: usize = 1024;

/// Bytes of an over-long line kept for the error message.
const TOO_LONG_PREFIX: usize = 80;

/// UTF-8 byte-order mark, ignored at the start of the first line.
const BOM: &[u8] = b"\xEF\xBB\xBF";

/// Unit of the timestamps in fio iolog v3 files.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FioTimeUnit {
    /// Microseconds: what fio writes (`utime_since_now`) and how its replay
    /// interprets them in current releases. The default.
    #[default]
    Microseconds,
    /// Milliseconds, for logs from tools that follow the older documentation.
    Milliseconds,
}

/// Options for [`TraceReader`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReaderOptions {
    /// Count and skip bad lines instead of stopping at the first one. A bad CSV
    /// header and I/O errors are always fatal.
    pub skip_bad_lines: bool,
    /// Name of the input used in error messages (usually the file name).
    pub source_name: String,
    /// blkparse action to keep (default `'D'`, issued to the driver).
    pub blkparse_action: char,
    /// Unit of fio iolog v3 timestamps (default microseconds).
    pub fio_time_unit: FioTimeUnit,
}

impl Default for ReaderOptions {
    fn default() -> Self {
        ReaderOptions {
            skip_bad_lines: false,
            source_name: "<input>".to_owned(),
            blkparse_action: 'D',
            fio_time_unit: FioTimeUnit::Microseconds,
        }
    }
}

impl ReaderOptions {
    /// Default options with the given source name.
    pub fn named(source_name: impl Into<String>) -> Self {
        ReaderOptions { source_name: source_name.into(), ..ReaderOptions::default() }
    }
}

/// What [`read_bounded_line`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LineKind {
    Eof,
    Line,
    TooLong,
}

/// Read one line (without `\n`) into `buf`, which must be empty. Lines longer
/// than [`MAX_LINE_BYTES`] are consumed but only a short prefix is kept.
pub(crate) fn read_bounded_line<R: BufRead>(r: &mut R, buf: &mut Vec<u8>) -> io::Result<LineKind> {
    let mut too_long = false;
    let mut any = false;
    loop {
        let available = match r.fill_buf() {
            Ok(b) => b,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if available.is_empty() {
            return Ok(match (any, too_long) {
                (false, _) => LineKind::Eof,
                (true, false) => LineKind::Line,
                (true, true) => LineKind::TooLong,
            });
        }
        any = true;
        let newline = memchr::memchr(b'\n', available);
        let chunk = &available[..newline.unwrap_or(available.len())];
        if !too_long {
            if buf.len() + chunk.len() > MAX_LINE_BYTES {
                too_long = true;
                let keep = TOO_LONG_PREFIX.saturating_sub(buf.len()).min(chunk.len());
                buf.extend_from_slice(&chunk[..keep]);
                buf.truncate(TOO_LONG_PREFIX);
            } else {
                buf.extend_from_slice(chunk);
            }
        }
        let consumed = newline.map_or(available.len(), |i| i + 1);
        r.consume(consumed);
        if newline.is_some() {
            return Ok(if too_long { LineKind::TooLong } else { LineKind::Line });
        }
    }
}

/// The data part of a raw line: `None` for blank and `#` comment lines;
/// otherwise the line without `\r`, surrounding whitespace and (on the first
/// line) a UTF-8 BOM.
pub(crate) fn data_part(line: &[u8], first: bool) -> Option<&[u8]> {
    let line = if first { line.strip_prefix(BOM).unwrap_or(line) } else { line };
    let line = line.trim_ascii();
    match line.first() {
        None | Some(b'#') => None,
        Some(_) => Some(line),
    }
}

/// Lines read ahead for auto detection, replayed before the rest of the input.
type Replay = VecDeque<(Vec<u8>, LineKind)>;

/// A streaming reader of one trace: an iterator of requests.
///
/// Reads one line at a time into a reused buffer, so memory does not grow with
/// the trace length. Blank lines and lines whose first non-blank character is
/// `#` are ignored. By default the first bad line ends the iteration with an
/// error (`Some(Err)`, then `None`); with [`ReaderOptions::skip_bad_lines`] bad
/// lines are counted ([`TraceReader::skipped_lines`]) and skipped. I/O errors
/// always end the iteration.
pub struct TraceReader<R: BufRead> {
    reader: R,
    buf: Vec<u8>,
    replay: Replay,
    line_no: u64,
    parser: Parser,
    format: TraceFormat,
    skip_bad_lines: bool,
    source_name: String,
    skipped: u64,
    done: bool,
}

impl<R: BufRead> TraceReader<R> {
    /// A reader of `format`.
    pub fn new(reader: R, format: TraceFormat, opts: ReaderOptions) -> Self {
        Self::with_replay(reader, format, opts, Replay::new())
    }

    /// A reader whose format is detected from the first data lines (up to 64,
    /// see [`crate::detect()`]). The lines read for detection are buffered and
    /// replayed, so nothing is lost and line numbers stay right.
    pub fn with_auto_detect(mut reader: R, opts: ReaderOptions) -> Result<Self, TraceError> {
        let replay = sample(&mut reader, &opts.source_name)?;
        let lines: Vec<&[u8]> =
            replay.iter().filter(|(_, kind)| *kind == LineKind::Line).map(|(line, _)| line.as_slice()).collect();
        let format = detect_lines(&lines, &opts).map_err(|e| e.with_source_name(&opts.source_name))?;
        Ok(Self::with_replay(reader, format, opts, replay))
    }

    /// [`TraceReader::new`] or [`TraceReader::with_auto_detect`] depending on `choice`.
    pub fn with_choice(reader: R, choice: FormatChoice, opts: ReaderOptions) -> Result<Self, TraceError> {
        match choice {
            FormatChoice::Auto => Self::with_auto_detect(reader, opts),
            FormatChoice::Fixed(format) => Ok(Self::new(reader, format, opts)),
        }
    }

    fn with_replay(reader: R, format: TraceFormat, opts: ReaderOptions, replay: Replay) -> Self {
        TraceReader {
            reader,
            buf: Vec::new(),
            replay,
            line_no: 0,
            parser: Parser::new(format, &opts),
            format,
            skip_bad_lines: opts.skip_bad_lines,
            source_name: opts.source_name,
            skipped: 0,
            done: false,
        }
    }

    /// The format being read (the detected one after auto detection).
    pub fn format(&self) -> TraceFormat {
        self.format
    }

    /// Number of bad lines skipped so far (always 0 without `skip_bad_lines`).
    pub fn skipped_lines(&self) -> u64 {
        self.skipped
    }

    /// Number of the last line read (1-based; 0 before the first line).
    pub fn line_number(&self) -> u64 {
        self.line_no
    }

    /// The source name used in errors.
    pub fn source_name(&self) -> &str {
        &self.source_name
    }

    /// Read the next raw line into `self.buf`.
    fn next_line(&mut self) -> io::Result<LineKind> {
        if let Some((mut line, kind)) = self.replay.pop_front() {
            std::mem::swap(&mut self.buf, &mut line);
            self.line_no += 1;
            return Ok(kind);
        }
        self.buf.clear();
        let kind = read_bounded_line(&mut self.reader, &mut self.buf)?;
        if kind != LineKind::Eof {
            self.line_no += 1;
        }
        Ok(kind)
    }

    /// Handle a bad line: count it, or end the iteration with an error.
    fn bad_line(&mut self, err: LineError, fatal: bool) -> Option<TraceError> {
        if self.skip_bad_lines && !fatal {
            self.skipped += 1;
            return None;
        }
        self.done = true;
        Some(err.locate(&self.source_name, self.line_no, &self.buf))
    }

    /// Parse the line in `self.buf`.
    fn parse_current(&mut self) -> Option<Result<Request, TraceError>> {
        let line = data_part(&self.buf, self.line_no == 1)?;
        let fatal = self.parser.awaiting_header();
        match self.parser.parse(line) {
            Ok(Parsed::Request(req)) => Some(Ok(req)),
            Ok(Parsed::Ignored | Parsed::Foreign) => None,
            Err(err) => self.bad_line(err, fatal).map(Err),
        }
    }
}

/// Read lines until [`SAMPLE_LINES`] data lines (or [`MAX_SAMPLE_RAW_LINES`]
/// raw lines, or the end) have been seen.
fn sample<R: BufRead>(reader: &mut R, source_name: &str) -> Result<Replay, TraceError> {
    let mut replay = Replay::new();
    let mut data_lines = 0;
    while data_lines < SAMPLE_LINES && replay.len() < MAX_SAMPLE_RAW_LINES {
        let mut buf = Vec::new();
        let kind = read_bounded_line(reader, &mut buf).map_err(|error| TraceError::Io {
            source_name: source_name.to_owned(),
            line: replay.len() as u64,
            error,
        })?;
        match kind {
            LineKind::Eof => break,
            LineKind::Line if data_part(&buf, replay.is_empty()).is_some() => data_lines += 1,
            _ => {}
        }
        replay.push_back((buf, kind));
    }
    Ok(replay)
}

impl<R: BufRead> Iterator for TraceReader<R> {
    type Item = Result<Request, TraceError>;

    fn next(&mut self) -> Option<Self::Item> {
        while !self.done {
            match self.next_line() {
                Ok(LineKind::Line) => {
                    if let Some(item) = self.parse_current() {
                        return Some(item);
                    }
                }
                Ok(LineKind::TooLong) => {
                    let msg = format!("line longer than {MAX_LINE_BYTES} bytes");
                    if let Some(err) = self.bad_line(LineError::line(msg), false) {
                        return Some(Err(err));
                    }
                }
                Ok(LineKind::Eof) => self.done = true,
                Err(error) => {
                    self.done = true;
                    return Some(Err(TraceError::Io {
                        source_name: self.source_name.clone(),
                        line: self.line_no,
                        error,
                    }));
                }
            }
        }
        None
    }
}

impl<R: BufRead> std::iter::FusedIterator for TraceReader<R> {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounded_lines() {
        let mut input: &[u8] = b"ab\r\n\nlast";
        let mut buf = Vec::new();
        assert_eq!(read_bounded_line(&mut input, &mut buf).unwrap(), LineKind::Line);
        assert_eq!(buf, b"ab\r");
        buf.clear();
        assert_eq!(read_bounded_line(&mut input, &mut buf).unwrap(), LineKind::Line);
        assert_eq!(buf, b"");
        buf.clear();
        assert_eq!(read_bounded_line(&mut input, &mut buf).unwrap(), LineKind::Line);
        assert_eq!(buf, b"last");
        buf.clear();
        assert_eq!(read_bounded_line(&mut input, &mut buf).unwrap(), LineKind::Eof);
    }

    #[test]
    fn over_long_line_is_consumed() {
        let mut data = vec![b'7'; MAX_LINE_BYTES + 10];
        data.extend_from_slice(b"\nnext\n");
        let mut input = io::BufReader::with_capacity(4096, data.as_slice());
        let mut buf = Vec::new();
        assert_eq!(read_bounded_line(&mut input, &mut buf).unwrap(), LineKind::TooLong);
        assert_eq!(buf.len(), TOO_LONG_PREFIX);
        buf.clear();
        assert_eq!(read_bounded_line(&mut input, &mut buf).unwrap(), LineKind::Line);
        assert_eq!(buf, b"next");
    }

    #[test]
    fn data_part_rules() {
        assert_eq!(data_part(b"  # c", false), None);
        assert_eq!(data_part(b" \t\r", false), None);
        assert_eq!(data_part(b"\xEF\xBB\xBF1 2\r", true), Some(&b"1 2"[..]));
        assert_eq!(data_part(b"\xEF\xBB\xBF1 2", false), Some(&b"\xEF\xBB\xBF1 2"[..]));
    }
}
