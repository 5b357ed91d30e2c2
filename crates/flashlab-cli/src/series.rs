//! In-memory views of a run's request stream, shared by the CLI's CSV files and the
//! Python package's DataFrames: the interval time series ([`Series`]) and the
//! per-request columns ([`RequestColumns`]).

use flashlab_sim::RequestRecord;
use flashlab_trace::Op;

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

/// Per-interval accumulator.
#[derive(Default)]
struct Interval {
    requests: u64,
    read_ns: u64,
    reads: u64,
    write_ns: u64,
    writes: u64,
    gc_wait_ns: u64,
    host0: u64,
    nand0: u64,
}

/// Cuts the request stream into intervals of `every` requests.
pub struct Series {
    every: u64,
    iv: Interval,
}

impl Series {
    pub fn new(every: u64) -> Self {
        Series { every: every.max(1), iv: Interval::default() }
    }

    /// Add a request; returns the interval's row when this request closes it.
    pub fn add(&mut self, r: &RequestRecord) -> Option<SeriesPoint> {
        let iv = &mut self.iv;
        if iv.requests == 0 {
            (iv.host0, iv.nand0) = (r.host_write_pages, r.nand_program_pages);
        }
        iv.requests += 1;
        iv.gc_wait_ns += r.gc_wait_ns;
        let lat = r.issue_ns.zip(r.done_ns).map_or(0, |(i, d)| d - i);
        match r.op {
            Op::Read => (iv.reads, iv.read_ns) = (iv.reads + 1, iv.read_ns + lat),
            Op::Write => (iv.writes, iv.write_ns) = (iv.writes + 1, iv.write_ns + lat),
            Op::Trim => {}
        }
        if iv.requests < self.every {
            return None;
        }
        let host = r.host_write_pages - iv.host0;
        let timed = r.done_ns.is_some();
        let mean = |ns: u64, n: u64| (n > 0 && timed).then(|| ns as f64 / n as f64 / 1e3);
        let point = SeriesPoint {
            requests: r.index + 1,
            sim_time_s: r.done_ns.map(|d| d as f64 / 1e9),
            waf: (host > 0).then(|| (r.nand_program_pages - iv.nand0) as f64 / host as f64),
            read_latency_us_mean: mean(iv.read_ns, iv.reads),
            write_latency_us_mean: mean(iv.write_ns, iv.writes),
            gc_wait_us_mean: mean(iv.gc_wait_ns, iv.requests),
        };
        self.iv = Interval::default();
        Some(point)
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
