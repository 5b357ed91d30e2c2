//! Format auto detection.
//!
//! Every format's own parser is run over the sampled data lines (blank and `#`
//! comment lines are left out). A format is a *candidate* when its parser
//! accepts every sampled line and recognises at least one of them as part of
//! its record stream (a request, a header, an ignored event...; blkparse's
//! tolerated summary lines do not count). Then:
//!
//! * no candidate → [`TraceError::Undetectable`];
//! * all candidates read the sample as the *same* requests → the first of them
//!   in [`TraceFormat::ALL`] order. This is the case of `ssdsim` and `mqsim`:
//!   both are DiskSim-style `time_ns dev sector sectors op` files with op 1 =
//!   read, 0 = write (checked against both simulators' sources), so they are
//!   indistinguishable and interchangeable, and auto detection reports `ssdsim`;
//!   `disksim` (same columns, time in float milliseconds) and `diskmon` (the
//!   columns of `ssdsim-fin`, time in decimal seconds) are candidates only when a
//!   sampled time has a decimal point;
//! * otherwise → [`TraceError::Ambiguous`] naming the candidates.

use crate::error::TraceError;
use crate::format::{valid_names, Request, TraceFormat};
use crate::formats::{Parsed, Parser};
use crate::reader::{data_part, ReaderOptions};

/// Number of data lines sampled by [`crate::TraceReader::with_auto_detect`].
pub const SAMPLE_LINES: usize = 64;

/// Detect the format of a trace from its first lines (pass up to
/// [`SAMPLE_LINES`] lines, in file order, starting with the first line of the
/// file; blank and `#` lines are skipped). Uses default [`ReaderOptions`].
pub fn detect(sample_lines: &[&str]) -> Result<TraceFormat, TraceError> {
    let lines: Vec<&[u8]> = sample_lines.iter().map(|s| s.as_bytes()).collect();
    detect_lines(&lines, &ReaderOptions::named("<sample>"))
}

/// Detect from raw lines (first element = first line of the input).
pub(crate) fn detect_lines(lines: &[&[u8]], opts: &ReaderOptions) -> Result<TraceFormat, TraceError> {
    let data: Vec<&[u8]> = lines.iter().enumerate().filter_map(|(i, line)| data_part(line, i == 0)).collect();
    if data.is_empty() {
        return Err(undetectable(opts, "the input has no data lines".to_owned()));
    }
    let candidates: Vec<(TraceFormat, Vec<Request>)> =
        TraceFormat::ALL.iter().filter_map(|&f| try_format(f, &data, opts).map(|reqs| (f, reqs))).collect();
    let Some((first, first_reqs)) = candidates.first() else {
        let reason = format!("no format accepts all of the first {} data lines", data.len());
        return Err(undetectable(opts, reason));
    };
    if candidates.iter().all(|(_, reqs)| reqs == first_reqs) {
        Ok(*first)
    } else {
        Err(TraceError::Ambiguous {
            source_name: opts.source_name.clone(),
            candidates: candidates.iter().map(|(f, _)| *f).collect(),
        })
    }
}

/// The requests `format` reads from `data`, if it accepts every line and
/// recognises at least one.
fn try_format(format: TraceFormat, data: &[&[u8]], opts: &ReaderOptions) -> Option<Vec<Request>> {
    // Formats with decimal times need a decimal point as evidence (see their modules).
    let time_field = match format {
        TraceFormat::Disksim => Some(0),
        TraceFormat::Diskmon => Some(1),
        _ => None,
    };
    if time_field.is_some_and(|i| !data.iter().any(|l| crate::formats::disksim::has_decimal_point(l, i))) {
        return None;
    }
    let mut parser = Parser::new(format, opts);
    let mut requests = Vec::new();
    let mut recognised = false;
    for line in data {
        match parser.parse(line).ok()? {
            Parsed::Request(req) => {
                requests.push(req);
                recognised = true;
            }
            Parsed::Ignored => recognised = true,
            Parsed::Foreign => {}
        }
    }
    recognised.then_some(requests)
}

fn undetectable(opts: &ReaderOptions, reason: String) -> TraceError {
    TraceError::Undetectable { source_name: opts.source_name.clone(), reason, valid: valid_names() }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn five_column_files_are_ssdsim() {
        assert_eq!(detect(&["0 0 303567 7 0", "0 1 55590 6 1"]).unwrap(), TraceFormat::Ssdsim);
    }

    #[test]
    fn empty_and_garbage_are_undetectable() {
        let e = detect(&["", "# only a comment"]).unwrap_err();
        assert!(matches!(e, TraceError::Undetectable { .. }), "{e}");
        let e = detect(&["hello world"]).unwrap_err().to_string();
        assert!(e.contains("pass --format with one of: ssdsim, mqsim"), "{e}");
    }
}
