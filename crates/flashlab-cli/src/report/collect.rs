//! The report's run observer: a bounded time series (spans merged pairwise as the
//! run grows, so any run length gives 200-400 points) and the end-of-run record.

use crate::series::{Span, SpanBuilder};
use flashlab_sim::{Observer, RequestRecord, RunEnd};

/// At this many spans, neighbours merge and spans double in length.
const MAX_SPANS: usize = 400;

pub struct Collector {
    on: bool,
    every: u64,
    builder: SpanBuilder,
    spans: Vec<Span>,
    /// Issue time of the first request (the time axis starts there).
    pub first_issue_ns: Option<u64>,
    pub end: Option<RunEnd>,
}

impl Collector {
    /// A collector; when `on` is false it asks for nothing.
    pub fn new(on: bool) -> Self {
        Collector { on, every: 8, builder: SpanBuilder::default(), spans: Vec::new(), first_issue_ns: None, end: None }
    }

    fn push(&mut self, span: Span) {
        self.spans.push(span);
        if self.spans.len() == MAX_SPANS {
            self.spans = self.spans.chunks(2).map(|p| p[0].merge(&p[1])).collect();
            self.every *= 2;
        }
    }

    /// The spans, the last (possibly shorter) one included.
    pub fn spans(&mut self) -> Vec<Span> {
        if self.builder.current.requests > 0 {
            let last = self.builder.take();
            self.spans.push(last);
        }
        std::mem::take(&mut self.spans)
    }
}

impl Observer for Collector {
    fn wants_requests(&self) -> bool {
        self.on
    }
    fn request(&mut self, r: &RequestRecord) {
        if self.first_issue_ns.is_none() {
            self.first_issue_ns = r.issue_ns;
        }
        self.builder.add(r);
        if self.builder.current.requests >= self.every {
            let span = self.builder.take();
            self.push(span);
        }
    }
    fn end(&mut self, end: &RunEnd) {
        if self.on {
            self.end = Some(end.clone());
        }
    }
}

/// Two observers as one: each sees what it asks for.
pub struct Tee<'a>(pub &'a mut dyn Observer, pub &'a mut dyn Observer);

impl Observer for Tee<'_> {
    fn progress(&mut self, done: u64) {
        self.0.progress(done);
        self.1.progress(done);
    }
    fn wants_requests(&self) -> bool {
        self.0.wants_requests() || self.1.wants_requests()
    }
    fn request(&mut self, r: &RequestRecord) {
        for o in [&mut *self.0, &mut *self.1] {
            if o.wants_requests() {
                o.request(r);
            }
        }
    }
    fn end(&mut self, end: &RunEnd) {
        self.0.end(end);
        self.1.end(end);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use flashlab_trace::Op;

    fn rec(index: u64) -> RequestRecord {
        RequestRecord {
            index,
            measured: true,
            op: Op::Write,
            offset_bytes: 0,
            pages: 1,
            issue_ns: Some(1000 + index * 10),
            done_ns: Some(1000 + index * 10 + 5),
            gc_wait_ns: 0,
            host_write_pages: index + 1,
            nand_program_pages: 2 * (index + 1),
            gc_copied_pages: index + 1,
        }
    }

    #[test]
    fn spans_stay_bounded_and_cover_every_request() {
        for n in [1u64, 7, 8, 3199, 3200, 100_000] {
            let mut c = Collector::new(true);
            (0..n).for_each(|i| c.request(&rec(i)));
            let spans = c.spans();
            assert!(spans.len() <= MAX_SPANS, "{n}: {}", spans.len());
            assert!(n < 3200 || spans.len() >= MAX_SPANS / 2, "{n}: {}", spans.len());
            assert_eq!(spans.iter().map(|s| s.requests).sum::<u64>(), n);
            // The first record is the baseline: its pages are not counted.
            assert_eq!(spans.iter().map(|s| s.host_writes).sum::<u64>(), n - 1);
            assert_eq!(spans.iter().map(|s| s.gc_copied).sum::<u64>(), n - 1);
            assert!(spans.iter().all(|s| s.waf() == Some(2.0) || s.host_writes == 0));
            assert_eq!(spans.last().unwrap().end_requests, n);
            assert_eq!(c.first_issue_ns, Some(1000));
        }
    }

    #[test]
    fn off_collector_wants_nothing() {
        assert!(!Collector::new(false).wants_requests());
    }
}
