//! The run loop: prefill, warm-up, measured requests; FTL calls; timing; results.

use crate::addr::AddrMap;
use crate::result::{Latency, RunResult};
use crate::timing::Timeline;
use flashlab_config::{Arrival, Settings, Source};
use flashlab_ftl::{FtlError, PageFtl, ReadOutcome};
use flashlab_nand::Cause;
use flashlab_trace::{Op, Request};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};
use std::fmt::Display;

/// Why a run stopped.
#[derive(Debug, thiserror::Error)]
pub enum SimError {
    #[error("{0}")]
    Ftl(#[from] FtlError),
    #[error("{0}")]
    Source(String),
    #[error("request {index}: logical page {page} is beyond the logical capacity of {capacity} pages (workload.address_overflow = \"error\"; use \"fold\" to fold addresses)")]
    Overflow { index: u64, page: u64, capacity: u64 },
    #[error("content check failed: {0}")]
    Content(String),
}

/// Snapshot of counters at the start of measurement.
pub(crate) struct Mark {
    pub nand: flashlab_nand::OpCounters,
    pub ftl: flashlab_ftl::FtlStats,
    pub erases: Vec<u32>,
    pub die_busy_ns: u64,
    pub chan_busy_ns: u64,
}

pub(crate) struct Engine<'a> {
    pub(crate) s: &'a Settings,
    pub(crate) ftl: PageFtl,
    pub(crate) map: AddrMap,
    pub(crate) timeline: Option<Timeline>,
    pub(crate) outstanding: BinaryHeap<Reverse<u64>>,
    pub(crate) trace_t0: Option<u64>,
    pub(crate) last_issue: u64,
    pub(crate) first_issue: Option<u64>,
    pub(crate) last_done: u64,
    pub(crate) read_lat: Latency,
    pub(crate) write_lat: Latency,
    pub(crate) op_counts: [u64; 3],
    pub(crate) shadow: Vec<u32>,
    pub(crate) mark: Option<Mark>,
}

/// Run a synthetic workload described by the settings.
pub fn run_synthetic(s: &Settings, progress: &mut dyn FnMut(u64)) -> Result<RunResult, SimError> {
    let Source::Synthetic(syn) = &s.workload.source else {
        return Err(SimError::Source("run_synthetic needs workload.kind = \"synthetic\"".into()));
    };
    let mut syn = syn.clone();
    syn.requests += s.workload.warmup;
    let gen = flashlab_workload::Synthetic::new(
        syn,
        s.workload.arrival,
        s.ftl.logical_pages,
        s.page_bytes(),
        s.workload.seed,
    );
    run(s, gen.map(Ok::<_, std::convert::Infallible>), progress)
}

/// Run `requests` (the first `workload.warmup` of them uncounted) on the configured device.
pub fn run<I, E>(s: &Settings, requests: I, progress: &mut dyn FnMut(u64)) -> Result<RunResult, SimError>
where
    I: Iterator<Item = Result<Request, E>>,
    E: Display,
{
    let mut e = Engine::new(s);
    if s.workload.prefill {
        e.prefill()?;
    }
    e.ftl.set_record_ops(e.timeline.is_some());
    if s.workload.warmup == 0 {
        e.mark();
    }
    // Look ahead a few requests so the FTL's table entries can be prefetched: the
    // mapping entry AHEAD requests early, the physical page's state three requests early.
    const AHEAD: usize = 12;
    let mut window: VecDeque<Result<Request, E>> = VecDeque::with_capacity(AHEAD + 1);
    let mut requests = requests.fuse();
    let mut i = 0u64;
    loop {
        while window.len() <= AHEAD {
            let Some(next) = requests.next() else { break };
            if let Ok(r) = &next {
                e.prefetch_map(r);
            }
            window.push_back(next);
        }
        let Some(req) = window.pop_front() else { break };
        if let Some(Ok(r)) = window.get(2) {
            e.prefetch_page(r);
        }
        let req = req.map_err(|err| SimError::Source(err.to_string()))?;
        e.request(&req, i)?;
        i += 1;
        if i == s.workload.warmup {
            e.mark();
        }
        if i & 0xFFFF == 0 {
            progress(i);
        }
    }
    if e.mark.is_none() {
        e.mark();
    }
    Ok(e.finish())
}

impl<'a> Engine<'a> {
    fn new(s: &'a Settings) -> Self {
        let (devices, device_count) = match &s.workload.source {
            Source::Trace(t) => (t.devices, t.device_count.max(1) as u64),
            Source::Synthetic(_) => (flashlab_config::DeviceMode::Fold, 1),
        };
        let track = s.ftl.track_content;
        Engine {
            ftl: PageFtl::new(s.geometry, s.ftl.clone()),
            map: AddrMap {
                page_bytes: s.page_bytes(),
                logical_pages: s.ftl.logical_pages,
                overflow: s.workload.overflow,
                devices,
                device_count,
            },
            timeline: s.timing.map(|t| Timeline::new(&s.geometry, t)),
            outstanding: BinaryHeap::new(),
            trace_t0: None,
            last_issue: 0,
            first_issue: None,
            last_done: 0,
            read_lat: Latency::new(),
            write_lat: Latency::new(),
            op_counts: [0; 3],
            shadow: if track { vec![0; s.ftl.logical_pages as usize] } else { Vec::new() },
            mark: None,
            s,
        }
    }

    fn prefill(&mut self) -> Result<(), SimError> {
        for lpn in 0..self.s.ftl.logical_pages {
            self.ftl.write(lpn)?;
            if !self.shadow.is_empty() {
                self.shadow[lpn as usize] = self.ftl.last_tag();
            }
        }
        Ok(())
    }

    fn mark(&mut self) {
        let (die_busy_ns, chan_busy_ns) = match &self.timeline {
            Some(t) => (t.die_busy_ns.iter().sum(), t.chan_busy_ns.iter().sum()),
            None => (0, 0),
        };
        self.read_lat = Latency::new();
        self.write_lat = Latency::new();
        self.op_counts = [0; 3];
        self.first_issue = None;
        self.mark = Some(Mark {
            nand: *self.ftl.nand().counters(),
            ftl: *self.ftl.stats(),
            erases: self.ftl.nand().erase_counts().to_vec(),
            die_busy_ns,
            chan_busy_ns,
        });
    }

    /// Issue time of a request (ns): closed loop from completions, open loop from arrivals.
    fn issue_time(&mut self, req: &Request) -> u64 {
        let t = match self.s.workload.arrival {
            Arrival::Closed { queue_depth } => {
                if self.outstanding.len() < queue_depth as usize {
                    self.last_issue
                } else {
                    self.outstanding.pop().map_or(0, |Reverse(t)| t)
                }
            }
            Arrival::Fixed { .. } | Arrival::Poisson { .. } => req.time_ns,
            Arrival::Trace { time_scale } => {
                let t0 = *self.trace_t0.get_or_insert(req.time_ns);
                (req.time_ns.saturating_sub(t0) as f64 * time_scale) as u64
            }
        };
        // Requests are served in arrival order: a timestamp that goes back is held at the previous one.
        self.last_issue = t.max(self.last_issue);
        self.last_issue
    }

    #[inline]
    fn first_page(&self, req: &Request) -> Option<u64> {
        let span = self.map.span(req).ok()?;
        Some(self.map.page(span, 0, req.device))
    }

    #[inline]
    fn prefetch_map(&self, req: &Request) {
        if let Some(lpn) = self.first_page(req) {
            self.ftl.prefetch_map(lpn);
        }
    }

    #[inline]
    fn prefetch_page(&self, req: &Request) {
        if let Some(lpn) = self.first_page(req) {
            self.ftl.prefetch_page(lpn);
        }
    }

    #[inline]
    fn request(&mut self, req: &Request, index: u64) -> Result<(), SimError> {
        let span = self.map.span(req).map_err(|page| SimError::Overflow {
            index,
            page,
            capacity: self.s.ftl.logical_pages,
        })?;
        let issue = if self.timeline.is_some() { self.issue_time(req) } else { 0 };
        let mut done = issue;
        for i in 0..span.count {
            let lpn = self.map.page(span, i, req.device);
            match req.op {
                Op::Write => self.write(lpn)?,
                Op::Read => self.read(lpn)?,
                Op::Trim => self.trim(lpn)?,
            }
            if self.timeline.is_some() {
                done = done.max(self.schedule(issue));
            }
        }
        self.complete(req.op, issue, done);
        Ok(())
    }

    #[inline]
    fn write(&mut self, lpn: u64) -> Result<(), SimError> {
        self.ftl.write(lpn)?;
        if !self.shadow.is_empty() {
            self.shadow[lpn as usize] = self.ftl.last_tag();
        }
        Ok(())
    }

    fn read(&mut self, lpn: u64) -> Result<(), SimError> {
        let out = self.ftl.read(lpn)?;
        if self.shadow.is_empty() {
            return Ok(());
        }
        let want = self.shadow[lpn as usize];
        match out {
            ReadOutcome::Unmapped if want == 0 => Ok(()),
            ReadOutcome::Mapped { tag: Some(t), .. } if t == want => Ok(()),
            other => {
                Err(SimError::Content(format!("logical page {lpn}: read {other:?}, last write carried tag {want}")))
            }
        }
    }

    fn trim(&mut self, lpn: u64) -> Result<(), SimError> {
        self.ftl.trim(lpn)?;
        if !self.shadow.is_empty() {
            self.shadow[lpn as usize] = 0;
        }
        Ok(())
    }

    /// Schedule the NAND operations the last FTL call issued; returns when the host's part completed.
    #[inline]
    fn schedule(&mut self, issue: u64) -> u64 {
        let tl = self.timeline.as_mut().expect("timed run");
        let (mut host_done, mut chain) = (issue, issue);
        for op in self.ftl.take_ops() {
            if op.cause == Cause::Host {
                host_done = host_done.max(tl.exec(&op, issue));
                chain = chain.max(host_done);
            } else {
                // Blocking GC: runs on its plane's die after the host operation that triggered it.
                chain = tl.exec(&op, chain);
            }
        }
        host_done
    }

    #[inline]
    fn complete(&mut self, op: Op, issue: u64, done: u64) {
        self.op_counts[match op {
            Op::Read => 0,
            Op::Write => 1,
            Op::Trim => 2,
        }] += 1;
        if self.timeline.is_none() {
            return;
        }
        if let Arrival::Closed { .. } = self.s.workload.arrival {
            self.outstanding.push(Reverse(done));
        }
        self.first_issue.get_or_insert(issue);
        self.last_done = self.last_done.max(done);
        match op {
            Op::Read => self.read_lat.record(done - issue),
            Op::Write => self.write_lat.record(done - issue),
            Op::Trim => {}
        }
    }
}
