//! In-memory views of a run's request stream: the interval time series, requests
//! grouped into spans each with its latency sums, GC wait, and the NAND/host/GC counters
//! it added (shared by `--series-csv` with fixed spans, the report with spans merged
//! pairwise as the run grows, and the Python package's DataFrames as [`Series`]), and the
//! per-request columns ([`RequestColumns`]).

use flashlab_sim::RequestRecord;
use flashlab_trace::Op;

/// Cumulative counters of a request record.
#[derive(Clone, Copy, Default, Debug, PartialEq)]
struct Counters {
    host_writes: u64,
    nand_programs: u64,
    gc_copied: u64,
}

impl Counters {
    fn of(r: &RequestRecord) -> Self {
        Counters { host_writes: r.host_write_pages, nand_programs: r.nand_program_pages, gc_copied: r.gc_copied_pages }
    }
}

/// One interval: sums over its requests and the counters it added.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Span {
    pub requests: u64,
    pub reads: u64,
    pub read_ns: u64,
    pub writes: u64,
    pub write_ns: u64,
    pub gc_wait_ns: u64,
    pub host_writes: u64,
    pub nand_programs: u64,
    pub gc_copied: u64,
    /// Requests before and at the end of the span (the record's index + 1).
    pub end_requests: u64,
    /// Completion time of the span's last request; None in counting mode.
    pub end_ns: Option<u64>,
}

impl Span {
    /// This span followed by `next`, as one.
    pub fn merge(&self, next: &Span) -> Span {
        Span {
            requests: self.requests + next.requests,
            reads: self.reads + next.reads,
            read_ns: self.read_ns + next.read_ns,
            writes: self.writes + next.writes,
            write_ns: self.write_ns + next.write_ns,
            gc_wait_ns: self.gc_wait_ns + next.gc_wait_ns,
            host_writes: self.host_writes + next.host_writes,
            nand_programs: self.nand_programs + next.nand_programs,
            gc_copied: self.gc_copied + next.gc_copied,
            end_requests: next.end_requests,
            end_ns: next.end_ns,
        }
    }
    /// NAND programs per host page written in the span.
    pub fn waf(&self) -> Option<f64> {
        (self.host_writes > 0).then(|| self.nand_programs as f64 / self.host_writes as f64)
    }
    /// Mean of `ns` over `n` requests in µs; None in counting mode or with no requests.
    pub fn mean_us(&self, ns: u64, n: u64) -> Option<f64> {
        (n > 0 && self.end_ns.is_some()).then(|| ns as f64 / n as f64 / 1e3)
    }
    /// The `--series-csv` line: requests,sim_time_s,waf,read_latency_us_mean,write_latency_us_mean,gc_wait_us_mean.
    pub fn csv_line(&self) -> String {
        let f = |v: Option<f64>, d: usize| v.map_or(String::new(), |x| format!("{x:.d$}"));
        format!(
            "{},{},{},{},{},{}",
            self.end_requests,
            f(self.end_ns.map(|t| t as f64 / 1e9), 6),
            f(self.waf(), 4),
            f(self.mean_us(self.read_ns, self.reads), 3),
            f(self.mean_us(self.write_ns, self.writes), 3),
            f(self.mean_us(self.gc_wait_ns, self.requests), 3)
        )
    }
}

/// Builds spans from request records; counters are differenced against the
/// previous record, so every request's NAND work falls in its own span. The
/// first record only sets the baseline (its counters include prefill and aging,
/// and what it added itself is not known), so its pages are not counted.
#[derive(Default)]
pub struct SpanBuilder {
    last: Option<Counters>,
    pub current: Span,
}

impl SpanBuilder {
    pub fn add(&mut self, r: &RequestRecord) {
        let now = Counters::of(r);
        let s = &mut self.current;
        s.requests += 1;
        s.gc_wait_ns += r.gc_wait_ns;
        let last = self.last.unwrap_or(now);
        s.host_writes += now.host_writes - last.host_writes;
        s.nand_programs += now.nand_programs - last.nand_programs;
        s.gc_copied += now.gc_copied.saturating_sub(last.gc_copied);
        self.last = Some(now);
        s.end_requests = r.index + 1;
        s.end_ns = r.done_ns;
        let lat = r.issue_ns.zip(r.done_ns).map_or(0, |(i, d)| d - i);
        match r.op {
            Op::Read => (s.reads, s.read_ns) = (s.reads + 1, s.read_ns + lat),
            Op::Write => (s.writes, s.write_ns) = (s.writes + 1, s.write_ns + lat),
            Op::Trim => {}
        }
    }
    /// The current span, leaving an empty one.
    pub fn take(&mut self) -> Span {
        std::mem::take(&mut self.current)
    }
}

/// Column names of the time series, in order.
pub const SERIES_COLUMNS: [&str; 6] =
    ["requests", "sim_time_s", "waf", "read_latency_us_mean", "write_latency_us_mean", "gc_wait_us_mean"];

/// One row of the time series: the interval that ended with request `requests` (1-based).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SeriesPoint {
    pub requests: u64,
    /// Completion time of the interval's last request (timed runs only).
    pub sim_time_s: Option<f64>,
    /// NAND programs / host page writes within the interval.
    pub waf: Option<f64>,
    pub read_latency_us_mean: Option<f64>,
    pub write_latency_us_mean: Option<f64>,
    pub gc_wait_us_mean: Option<f64>,
}

/// Cuts the request stream into intervals of `every` requests (the rows of
/// `--series-csv`, as values).
pub struct Series {
    every: u64,
    spans: SpanBuilder,
}

impl Series {
    pub fn new(every: u64) -> Self {
        Series { every: every.max(1), spans: SpanBuilder::default() }
    }

    /// Add a request; returns the interval's row when this request closes it.
    pub fn add(&mut self, r: &RequestRecord) -> Option<SeriesPoint> {
        self.spans.add(r);
        if self.spans.current.requests < self.every {
            return None;
        }
        let s = self.spans.take();
        Some(SeriesPoint {
            requests: s.end_requests,
            sim_time_s: s.end_ns.map(|t| t as f64 / 1e9),
            waf: s.waf(),
            read_latency_us_mean: s.mean_us(s.read_ns, s.reads),
            write_latency_us_mean: s.mean_us(s.write_ns, s.writes),
            gc_wait_us_mean: s.mean_us(s.gc_wait_ns, s.requests),
        })
    }
}

/// Column names of the per-request table, in order.
pub const REQUEST_COLUMNS: [&str; 9] =
    ["index", "measured", "op", "offset_bytes", "pages", "issue_ns", "done_ns", "latency_ns", "gc_wait_ns"];

/// Every request of a run, column by column (flat vectors, ready to hand to Arrow).
/// `op` is 0 read, 1 write, 2 trim; the times are 0 in counting mode (`timed` false).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RequestColumns {
    pub timed: bool,
    pub index: Vec<u64>,
    pub measured: Vec<u8>,
    pub op: Vec<u8>,
    pub offset_bytes: Vec<u64>,
    pub pages: Vec<u64>,
    pub issue_ns: Vec<u64>,
    pub done_ns: Vec<u64>,
    pub latency_ns: Vec<u64>,
    pub gc_wait_ns: Vec<u64>,
}

impl RequestColumns {
    pub fn push(&mut self, r: &RequestRecord) {
        self.timed = r.done_ns.is_some();
        self.index.push(r.index);
        self.measured.push(r.measured as u8);
        self.op.push(match r.op {
            Op::Read => 0,
            Op::Write => 1,
            Op::Trim => 2,
        });
        self.offset_bytes.push(r.offset_bytes);
        self.pages.push(r.pages);
        let (i, d) = (r.issue_ns.unwrap_or(0), r.done_ns.unwrap_or(0));
        self.issue_ns.push(i);
        self.done_ns.push(d);
        self.latency_ns.push(d - i);
        self.gc_wait_ns.push(r.gc_wait_ns);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(index: u64, op: Op, lat: u64, host: u64, nand: u64, gc: u64) -> RequestRecord {
        RequestRecord {
            index,
            measured: true,
            op,
            offset_bytes: 0,
            pages: 1,
            issue_ns: Some(index * 100),
            done_ns: Some(index * 100 + lat),
            gc_wait_ns: 10,
            host_write_pages: host,
            nand_program_pages: nand,
            gc_copied_pages: gc,
        }
    }

    #[test]
    fn spans_difference_counters_and_merge_exactly() {
        let mut b = SpanBuilder::default();
        b.add(&rec(0, Op::Write, 2000, 5, 5, 0)); // baseline only
        b.add(&rec(1, Op::Write, 1000, 6, 7, 1));
        let a = b.take();
        b.add(&rec(2, Op::Write, 4000, 7, 10, 3));
        let c = b.take();
        assert_eq!((a.host_writes, a.nand_programs, a.gc_copied, a.waf()), (1, 2, 1, Some(2.0)));
        assert_eq!((c.host_writes, c.nand_programs, c.gc_copied, c.waf()), (1, 3, 2, Some(3.0)));
        assert_eq!(a.csv_line(), "2,0.000001,2.0000,,1.500,0.010");
        let m = a.merge(&c);
        assert_eq!((m.requests, m.writes, m.write_ns, m.end_requests, m.end_ns), (3, 3, 7000, 3, Some(4200)));
        assert_eq!(m.waf(), Some(2.5));
    }
}
