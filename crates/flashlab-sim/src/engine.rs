//! The run loop: prefill, warm-up, measured requests; FTL calls; timing; results.

use crate::addr::AddrMap;
use crate::clock::HostClock;
use crate::counting::{age_writes, with_writes};
use crate::lookahead::Lookahead;
use crate::observe::{Observer, Progress};
use crate::result::RunResult;
use crate::settings::{Settings, Source};
use crate::timing::Timeline;
use flashlab_ftl::{Ftl, FtlError, Mapping, MergeMoves};
use flashlab_trace::Request;
use std::borrow::Cow;
use std::fmt::Display;

/// Why a run stopped.
#[derive(Debug, thiserror::Error)]
pub enum SimError {
    #[error(transparent)]
    Ftl(#[from] FtlError),
    #[error("{0}")]
    Source(String),
    #[error("request {index}: logical page {page} is beyond the logical capacity of {capacity} pages (workload.address_overflow = \"error\"; use \"fold\" to fold addresses)")]
    Overflow { index: u64, page: u64, capacity: u64 },
    #[error("request {index}: {pages} pages is longer than the {capacity} logical pages it maps onto")]
    TooLong { index: u64, pages: u64, capacity: u64 },
    #[error("content check failed: {0}")]
    Content(String),
}

/// Snapshot of counters at the start of measurement.
pub(crate) struct Mark {
    pub nand: flashlab_nand::OpCounters,
    pub ftl: flashlab_ftl::FtlStats,
    pub erases: Vec<u32>,
    pub die_busy_ns: Vec<u64>,
    pub chan_busy_ns: Vec<u64>,
    pub die_wait_ns: u64,
    pub gc_transfers_deferred: u64,
    pub copybacks: u64,
    pub multiplane_joins: u64,
}

pub(crate) struct Engine<'a> {
    pub(crate) buffer: Option<crate::buffer::WriteBuffer>,
    /// Host pages read, written, trimmed (measured), and buffer write/read hits and flushes.
    pub(crate) host_pages: [u64; 3],
    pub(crate) buffer_counts: [u64; 3],

    pub(crate) s: Cow<'a, Settings>,
    pub(crate) ftl: Ftl,
    pub(crate) map: AddrMap,
    pub(crate) timeline: Option<Timeline>,
    /// The merges the FTL's op log names (`crate::merge_moves`), taken with its ops
    /// when the FTL logs them (`log_moves`, set once per run).
    pub(crate) moves: Vec<MergeMoves>,
    pub(crate) log_moves: bool,
    /// Issue times, completions, latency statistics (timed runs).
    pub(crate) clock: HostClock,
    pub(crate) op_counts: [u64; 3],
    pub(crate) shadow: Vec<u32>,
    pub(crate) mark: Option<Mark>,
    pub(crate) checks: crate::checks::InputChecks,
    pub(crate) prewritten_pages: u64,
}

/// Run a synthetic workload described by the settings.
pub fn run_synthetic(s: &Settings, progress: &mut dyn FnMut(u64)) -> Result<RunResult, SimError> {
    run_synthetic_observed(s, &mut Progress(progress))
}

/// [`run_synthetic`] with an [`Observer`] that may see every request.
pub fn run_synthetic_observed(s: &Settings, obs: &mut dyn Observer) -> Result<RunResult, SimError> {
    let Source::Synthetic(syn) = &s.workload.source else {
        return Err(SimError::Source("run_synthetic needs workload.kind = \"synthetic\"".into()));
    };
    let mut syn = syn.clone();
    syn.requests += s.workload.warmup;
    let gen = || {
        flashlab_workload::Synthetic::new(
            syn.clone(),
            s.workload.arrival,
            s.ftl.logical_pages,
            s.page_bytes(),
            s.workload.seed,
        )
        .map(Ok::<_, std::convert::Infallible>)
    };
    let mut direct = flashlab_workload::Synthetic::new(
        syn.clone(),
        s.workload.arrival,
        s.ftl.logical_pages,
        s.page_bytes(),
        s.workload.seed,
    );
    if Engine::counting_writes_apply(s, &direct, obs) {
        return run_counting(s, &mut direct, obs);
    }
    let first_pass = s.workload.prewrite_reads.then(gen);
    run_prewrite_observed(s, first_pass, gen(), obs)
}

/// [`run_prewrite_observed`] for a synthetic run where the counting loop applies
/// ([`Engine::counting_writes_apply`]): the same result.
fn run_counting(
    s: &Settings,
    gen: &mut flashlab_workload::Synthetic,
    obs: &mut dyn Observer,
) -> Result<RunResult, SimError> {
    let mut e = Engine::new(Cow::Borrowed(s))?;
    if s.workload.prefill {
        e.prefill()?;
    }
    e.begin()?;
    e.counting_writes(gen, obs)?;
    if e.mark.is_none() {
        e.mark();
    }
    obs.end(&e.run_end());
    Ok(e.finish())
}

/// Run `requests` (the first `workload.warmup` of them uncounted) on the configured device.
pub fn run<I, E>(s: &Settings, requests: I, progress: &mut dyn FnMut(u64)) -> Result<RunResult, SimError>
where
    I: Iterator<Item = Result<Request, E>>,
    E: Display,
{
    run_observed(s, requests, &mut Progress(progress))
}

/// [`run`] with an [`Observer`] that may see every request.
pub fn run_observed<I, E>(s: &Settings, requests: I, obs: &mut dyn Observer) -> Result<RunResult, SimError>
where
    I: Iterator<Item = Result<Request, E>>,
    E: Display,
{
    run_prewrite_observed(s, None::<std::iter::Empty<Result<Request, E>>>, requests, obs)
}

/// [`run_observed`] with `workload.prewrite_reads`: `first_pass` yields the same
/// requests as `requests` and is read once before the run to find the pages read
/// before they are written ([`crate::prewrite`]); `None` = no pre-writing.
pub fn run_prewrite_observed<P, I, E, F>(
    s: &Settings,
    first_pass: Option<P>,
    requests: I,
    obs: &mut dyn Observer,
) -> Result<RunResult, SimError>
where
    P: Iterator<Item = Result<Request, F>>,
    F: Display,
    I: Iterator<Item = Result<Request, E>>,
    E: Display,
{
    let mut e = Engine::new(Cow::Borrowed(s))?;
    if s.workload.prefill {
        e.prefill()?;
    }
    if let Some(pass) = first_pass.filter(|_| !s.workload.prefill) {
        e.prewritten_pages = e.prewrite_reads(pass)?;
    }
    e.begin()?;
    let mut requests = Lookahead::new(requests);
    let want_records = obs.wants_requests();
    if e.pipeline_applies(want_records) {
        // The FTL on this thread, the timeline on a second one (`crate::pipeline`).
        e.run_pipelined(&mut requests, obs)?;
    } else {
        e.run_requests(&mut requests, obs, want_records)?;
    }
    if e.mark.is_none() {
        e.mark();
    }
    if let Some(t) = &mut e.timeline {
        t.flush();
    }
    obs.end(&e.run_end());
    Ok(e.finish())
}

impl<'a> Engine<'a> {
    /// Serve every request of `requests` in order (timing, if on, on this thread).
    fn run_requests<I, E>(
        &mut self,
        requests: &mut Lookahead<I, E>,
        obs: &mut dyn Observer,
        want_records: bool,
    ) -> Result<(), SimError>
    where
        I: Iterator<Item = Result<Request, E>>,
        E: Display,
    {
        let mut i = 0u64;
        while let Some(req) = requests.next(self) {
            let req = req.map_err(|err| SimError::Source(err.to_string()))?;
            let rec = self.request(&req, i)?;
            if want_records {
                obs.request(&self.record(i, &req, rec));
            }
            i += 1;
            if i == self.s.workload.warmup {
                self.mark();
            }
            if i & 0xFFFF == 0 {
                obs.progress(i);
            }
        }
        Ok(())
    }

    /// A fresh engine with the device prepared as configured (prefill, aging), measuring
    /// from the start when there is no warm-up. Shared by [`run_observed`] and [`crate::Ssd`].
    pub(crate) fn start(s: Cow<'a, Settings>) -> Result<Self, SimError> {
        let mut e = Engine::new(s)?;
        if e.s.workload.prefill {
            e.prefill()?;
        }
        e.begin()?;
        Ok(e)
    }

    /// After prefill (and pre-writing): aging, then recording and measuring as configured.
    fn begin(&mut self) -> Result<(), SimError> {
        self.age()?;
        self.ftl.set_record_ops(self.timeline.is_some());
        // Merges booked in runs need no per-op pairs (`crate::merge_moves`).
        self.log_moves = self.timeline.as_ref().is_some_and(|t| t.books_migration_runs());
        self.ftl.set_merge_moves(self.log_moves);
        if self.s.workload.warmup == 0 {
            self.mark();
        }
        Ok(())
    }

    fn new(s: Cow<'a, Settings>) -> Result<Self, SimError> {
        let (devices, device_count) = match &s.workload.source {
            Source::Trace(t) => (t.devices, t.device_count.max(1) as u64),
            Source::Synthetic(_) => (crate::settings::DeviceMode::Fold, 1),
        };
        let track = s.ftl.track_content;
        Ok(Engine {
            ftl: Ftl::new(s.geometry, s.ftl.clone())?,
            map: AddrMap {
                page_bytes: s.page_bytes(),
                page_shift: s.page_bytes().is_power_of_two().then(|| s.page_bytes().trailing_zeros()),
                logical_pages: s.ftl.logical_pages,
                overflow: s.workload.overflow,
                devices,
                device_count,
            },
            timeline: s.timing.map(|t| Timeline::new(&s.geometry, t)),
            moves: Vec::new(),
            log_moves: false,
            clock: HostClock::new(s.workload.arrival),
            op_counts: [0; 3],
            shadow: if track { vec![0; s.ftl.logical_pages as usize] } else { Vec::new() },
            mark: None,
            checks: crate::checks::InputChecks::new(),
            prewritten_pages: 0,
            buffer: (s.buffer_pages > 0).then(|| crate::buffer::WriteBuffer::new(s.buffer_pages as usize)),
            host_pages: [0; 3],
            buffer_counts: [0; 3],
            s,
        })
    }

    /// Untimed, uncounted uniform random single-page writes (steady-state aging),
    /// through the plain page-mapping path where it applies ([`crate::counting`]).
    fn age(&mut self) -> Result<(), SimError> {
        let (l, n) = (self.s.ftl.logical_pages, self.s.workload.aging_writes);
        let seed = flashlab_workload::sub_seed(self.s.workload.seed, "aging");
        let shadow = &mut self.shadow;
        with_writes!(&mut self.ftl, w => age_writes(w, seed, l, n, shadow))?;
        self.settle_background_gc()
    }

    /// After aging the device is idle: preemptible GC gets to finish what it wants
    /// (untimed), so the measurement starts from the scheme's own steady state.
    fn settle_background_gc(&mut self) -> Result<(), SimError> {
        let crate::settings::GcMode::Preemptible { background_free_blocks } = self.s.gc_mode else { return Ok(()) };
        if self.s.workload.aging_writes == 0 {
            return Ok(());
        }
        for plane in 0..self.s.geometry.planes() {
            let mut steps = 0u64;
            let limit = self.s.geometry.blocks_per_plane as u64 * (self.s.geometry.pages_per_block as u64 + 1);
            while self.ftl.wants_background_gc(plane, background_free_blocks) && steps < limit {
                if self.ftl.gc_step(plane)? == flashlab_ftl::GcStep::Idle {
                    break;
                }
                steps += 1;
            }
        }
        Ok(())
    }

    fn prefill(&mut self) -> Result<(), SimError> {
        if self.shadow.is_empty() && self.ftl.prefill_sequential()? {
            return Ok(());
        }
        for lpn in 0..self.s.ftl.logical_pages {
            self.ftl.write(lpn)?;
            if !self.shadow.is_empty() {
                self.shadow[lpn as usize] = self.ftl.last_tag();
            }
        }
        Ok(())
    }

    pub(crate) fn mark(&mut self) {
        if let Some(t) = &mut self.timeline {
            t.flush();
        }
        let (die_busy_ns, chan_busy_ns) = match &self.timeline {
            Some(t) => (t.die_busy_ns.clone(), t.chan_busy_ns.clone()),
            None => (Vec::new(), Vec::new()),
        };
        self.clock.reset_stats();
        self.op_counts = [0; 3];
        self.host_pages = [0; 3];
        self.buffer_counts = [0; 3];
        self.checks = crate::checks::InputChecks::new();
        self.mark = Some(Mark {
            nand: *self.ftl.nand().counters(),
            ftl: *self.ftl.stats(),
            erases: self.ftl.nand().erase_counts().to_vec(),
            die_busy_ns,
            chan_busy_ns,
            die_wait_ns: self.timeline.as_ref().map_or(0, |t| t.die_wait_ns.iter().sum()),
            gc_transfers_deferred: self.timeline.as_ref().map_or(0, |t| t.gc_transfers_deferred),
            copybacks: self.timeline.as_ref().map_or(0, |t| t.copybacks),
            multiplane_joins: self.timeline.as_ref().map_or(0, |t| t.multiplane_joins),
        });
    }
}
