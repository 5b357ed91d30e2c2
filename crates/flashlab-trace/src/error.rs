//! Error types.
//!
//! Every error renders as one line. Errors about a trace line start with
//! `source:line:` so that they can be pasted into an editor's "go to" box, e.g.
//!
//! ```text
//! trace.csv:17: field `len_bytes` (column 4): expected an unsigned integer, found "12x"
//! ```

use std::borrow::Cow;
use std::fmt;

use crate::format::TraceFormat;

/// Longest excerpt of offending input quoted in an error message (in characters).
const MAX_QUOTED_CHARS: usize = 80;

/// Everything that can go wrong while reading a trace or choosing its format.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TraceError {
    /// One field of a line could not be parsed or failed validation.
    #[error("{source_name}:{line}: field `{field}` (column {column}): expected {expected}, found {found:?}")]
    Field {
        /// Name of the input (file name) given in [`ReaderOptions::source_name`](crate::ReaderOptions).
        source_name: String,
        /// 1-based line number.
        line: u64,
        /// Name of the field as documented for the format (or the CSV header name).
        field: &'static str,
        /// 1-based column (field index) of the field on the line.
        column: usize,
        /// What a valid value looks like.
        expected: Cow<'static, str>,
        /// The offending text (shortened to 80 characters, lossily decoded as UTF-8).
        found: String,
    },
    /// The line as a whole is malformed (wrong number of fields, too long, bad header...).
    #[error("{source_name}:{line}: {message}; line is {text:?}")]
    Line {
        /// Name of the input.
        source_name: String,
        /// 1-based line number.
        line: u64,
        /// What is wrong.
        message: String,
        /// The line (shortened to 80 characters, lossily decoded as UTF-8).
        text: String,
    },
    /// Reading the underlying input failed.
    #[error("{source_name}: read error after line {line}: {error}")]
    Io {
        /// Name of the input.
        source_name: String,
        /// Number of the last line read successfully.
        line: u64,
        /// The I/O error.
        #[source]
        error: std::io::Error,
    },
    /// A format name given by the user is not known.
    #[error("unknown trace format {name:?}; valid formats: {valid}")]
    UnknownFormat {
        /// The name given.
        name: String,
        /// Comma-separated list of the accepted names.
        valid: String,
    },
    /// Auto detection found no format that accepts the first lines of the input.
    #[error("{source_name}: cannot detect the trace format: {reason}; pass --format with one of: {valid}")]
    Undetectable {
        /// Name of the input.
        source_name: String,
        /// Why detection failed.
        reason: String,
        /// Comma-separated list of format names.
        valid: String,
    },
    /// Auto detection found several formats that accept the first lines of the
    /// input but read them as different requests.
    #[error("{source_name}: ambiguous trace format: the first lines are valid {} but mean different requests in each; pass {}", list_names(candidates), format_flags(candidates))]
    Ambiguous {
        /// Name of the input.
        source_name: String,
        /// The formats that fit.
        candidates: Vec<TraceFormat>,
    },
}

impl TraceError {
    /// Line number the error refers to, if it refers to a line.
    pub fn line(&self) -> Option<u64> {
        match self {
            TraceError::Field { line, .. } | TraceError::Line { line, .. } => Some(*line),
            _ => None,
        }
    }

    /// Replace the source name (used when an error is produced before the name is known).
    pub(crate) fn with_source_name(mut self, name: &str) -> Self {
        match &mut self {
            TraceError::Field { source_name, .. }
            | TraceError::Line { source_name, .. }
            | TraceError::Io { source_name, .. }
            | TraceError::Undetectable { source_name, .. }
            | TraceError::Ambiguous { source_name, .. } => *source_name = name.to_owned(),
            TraceError::UnknownFormat { .. } => {}
        }
        self
    }
}

fn list_names(formats: &[TraceFormat]) -> String {
    let names: Vec<&str> = formats.iter().map(|f| f.name()).collect();
    match names.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} and {}", rest.join(", "), last),
        Some((last, _)) => (*last).to_owned(),
        None => String::new(),
    }
}

fn format_flags(formats: &[TraceFormat]) -> String {
    let flags: Vec<String> = formats.iter().map(|f| format!("--format {}", f.name())).collect();
    flags.join(" or ")
}

/// A problem found while parsing one line, before the source name and line
/// number are attached. Constructed only on the error path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum LineError {
    /// A single field is bad.
    Field { field: &'static str, column: usize, expected: Cow<'static, str>, found: String },
    /// The line as a whole is bad.
    Line { message: String },
}

impl LineError {
    /// A bad field; `found` is the raw field text.
    #[cold]
    pub(crate) fn field(
        field: &'static str,
        column: usize,
        expected: impl Into<Cow<'static, str>>,
        found: &[u8],
    ) -> Self {
        LineError::Field { field, column, expected: expected.into(), found: quote(found) }
    }

    /// A malformed line.
    #[cold]
    pub(crate) fn line(message: impl fmt::Display) -> Self {
        LineError::Line { message: message.to_string() }
    }

    /// Attach the location.
    pub(crate) fn locate(self, source_name: &str, line: u64, text: &[u8]) -> TraceError {
        match self {
            LineError::Field { field, column, expected, found } => {
                TraceError::Field { source_name: source_name.to_owned(), line, field, column, expected, found }
            }
            LineError::Line { message } => {
                TraceError::Line { source_name: source_name.to_owned(), line, message, text: quote(text) }
            }
        }
    }
}

/// Lossily decode and shorten offending input for quoting in a message.
pub(crate) fn quote(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    let mut chars = text.chars();
    let mut out: String = chars.by_ref().take(MAX_QUOTED_CHARS).collect();
    if chars.next().is_some() {
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn field_error_display_is_one_line() {
        let e = LineError::field("size", 4, "an unsigned integer", b"12x").locate("trace.csv", 17, b"");
        assert_eq!(e.to_string(), "trace.csv:17: field `size` (column 4): expected an unsigned integer, found \"12x\"");
    }

    #[test]
    fn quote_shortens_and_decodes_lossily() {
        let long = vec![b'a'; 200];
        assert_eq!(quote(&long).chars().count(), MAX_QUOTED_CHARS + 1);
        assert_eq!(quote(b"\xff1"), "\u{fffd}1");
    }

    #[test]
    fn ambiguous_names_both_formats() {
        let e = TraceError::Ambiguous { source_name: "x".into(), candidates: vec![TraceFormat::Spc, TraceFormat::Msr] };
        let s = e.to_string();
        assert!(s.contains("valid spc and msr"), "{s}");
        assert!(s.contains("--format spc or --format msr"), "{s}");
        assert!(!s.contains('\n'));
    }
}
