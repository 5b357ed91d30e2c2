//! Feed arbitrary bytes to every trace format and to auto detection.
//!
//! Run with `cargo +nightly fuzz run trace_reader` from the `fuzz` directory.
//! Checked invariants: no panic; every request has a non-zero length and an end
//! address that fits in 64 bits; an error ends the stream; every error renders
//! on one line; a request written back in its own format reads back unchanged
//! (fio iologs renumber devices, so the device is not compared there).

#![no_main]

use flashlab_trace::{detect, write_header, write_request, ReaderOptions, Request, TraceFormat, TraceReader};
use libfuzzer_sys::fuzz_target;

fn options(skip_bad_lines: bool) -> ReaderOptions {
    ReaderOptions { skip_bad_lines, ..ReaderOptions::named("fuzz") }
}

fn check_request(format: TraceFormat, req: &Request) {
    assert!(req.len_bytes > 0);
    assert!(req.offset_bytes.checked_add(req.len_bytes).is_some());
    let mut out = Vec::new();
    write_header(&mut out, format).expect("write to a Vec");
    write_request(&mut out, format, req).expect("a request read from a format can be written in it");
    let back: Vec<Request> = TraceReader::new(out.as_slice(), format, options(false))
        .collect::<Result<_, _>>()
        .expect("written line reads back");
    let mut expected = *req;
    if format == TraceFormat::FioIolog {
        expected.device = 0;
    }
    assert_eq!(back, [expected]);
}

fn drain<R: std::io::BufRead>(mut reader: TraceReader<R>, check: bool) {
    let format = reader.format();
    while let Some(item) = reader.next() {
        match item {
            Ok(req) if check => check_request(format, &req),
            Ok(_) => {}
            Err(err) => {
                assert!(!err.to_string().contains('\n'));
                assert!(reader.next().is_none());
                return;
            }
        }
    }
}

fuzz_target!(|data: &[u8]| {
    for &format in TraceFormat::ALL {
        drain(TraceReader::new(data, format, options(false)), true);
        drain(TraceReader::new(data, format, options(true)), false);
    }
    if let Ok(reader) = TraceReader::with_auto_detect(data, options(false)) {
        drain(reader, true);
    }
    let text = String::from_utf8_lossy(data);
    let sample: Vec<&str> = text.lines().take(flashlab_trace::SAMPLE_LINES).collect();
    let _ = detect(&sample);
});
