//! Counting-mode loops without the general request path (s7-core, issue 22 targets 1
//! and 3): the measured requests of a synthetic run of single-page writes, and aging.
//! A run qualifies when no timing, write buffer, content tracking, request records or
//! pre-writing is on ([`Engine::counting_writes_apply`]); then each request is one
//! `Ftl::write` of its start page, with the same input checks, counters, warm-up mark
//! and progress calls as [`Engine::request`], and the result is the same. Which FTL
//! loop runs is chosen once per segment by an enum match: page mapping without
//! per-write features ([`PageFtl::plain_writes_apply`]) calls
//! [`PageFtl::write_plain`], every other scheme goes through [`Mapping`].

use crate::checks::InputChecks;
use crate::engine::{Engine, SimError};
use crate::observe::Observer;
use crate::settings::Settings;
use flashlab_ftl::{Ftl, FtlError, Mapping, PageFtl};
use flashlab_workload::Synthetic;

/// How far ahead mapping entries are prefetched (the general loop's `AHEAD`), and
/// how far ahead the physical page's state is (its `window.get(2)`): hints only.
const MAP_AHEAD: usize = 12;
const PAGE_AHEAD: usize = 3;
/// Ring size: a power of two above `MAP_AHEAD`.
const RING: usize = 16;

/// Where one write goes: the FTL through its interface, or the plain page-mapping path.
pub(crate) trait Writes {
    fn prefetch_map(&self, lpn: u64);
    fn prefetch_page(&self, lpn: u64);
    fn write(&mut self, lpn: u64) -> Result<(), FtlError>;
    fn last_tag(&self) -> u32;
}

impl Writes for Ftl {
    #[inline(always)]
    fn prefetch_map(&self, lpn: u64) {
        Mapping::prefetch_map(self, lpn)
    }
    #[inline(always)]
    fn prefetch_page(&self, lpn: u64) {
        Mapping::prefetch_page(self, lpn)
    }
    #[inline(always)]
    fn write(&mut self, lpn: u64) -> Result<(), FtlError> {
        Mapping::write(self, lpn)
    }
    fn last_tag(&self) -> u32 {
        Mapping::last_tag(self)
    }
}

/// Page mapping where [`PageFtl::plain_writes_apply`] holds.
pub(crate) struct Plain<'a>(pub &'a mut PageFtl);

impl Writes for Plain<'_> {
    #[inline(always)]
    fn prefetch_map(&self, lpn: u64) {
        self.0.prefetch_map(lpn)
    }
    #[inline(always)]
    fn prefetch_page(&self, lpn: u64) {
        self.0.prefetch_page(lpn)
    }
    #[inline(always)]
    fn write(&mut self, lpn: u64) -> Result<(), FtlError> {
        self.0.write_plain(lpn).map(|_| ())
    }
    fn last_tag(&self) -> u32 {
        self.0.last_tag()
    }
}

/// Evaluate `$body` with `$w` bound to the loop's write target: one enum match per call, not per write.
macro_rules! with_writes {
    ($ftl:expr, $w:ident => $body:expr) => {
        match $ftl {
            flashlab_ftl::Ftl::Page(p) if p.plain_writes_apply() => {
                let $w = &mut $crate::counting::Plain(p);
                $body
            }
            other => {
                let $w = other;
                $body
            }
        }
    };
}
pub(crate) use with_writes;

/// The requests generated but not yet served: (start page, arrival ns).
struct Ahead {
    ring: [(u64, u64); RING],
    head: usize,
    tail: usize,
}

impl Ahead {
    /// Generate up to `MAP_AHEAD` requests ahead of the next one served.
    #[inline(always)]
    fn fill<W: Writes>(&mut self, gen: &mut Synthetic, w: &W) {
        while self.tail - self.head <= MAP_AHEAD {
            let Some(x) = gen.next_single_page() else { return };
            w.prefetch_map(x.0);
            self.ring[self.tail % RING] = x;
            self.tail += 1;
        }
    }

    #[inline(always)]
    fn pop<W: Writes>(&mut self, w: &W) -> Option<(u64, u64)> {
        if self.head == self.tail {
            return None;
        }
        let x = self.ring[self.head % RING];
        self.head += 1;
        if self.head + PAGE_AHEAD - 1 < self.tail {
            w.prefetch_page(self.ring[(self.head + PAGE_AHEAD - 1) % RING].0);
        }
        Some(x)
    }
}

/// Serve requests until `stop` of them (counted by `i`) or the generator's end;
/// true at the end. The per-request bookkeeping of [`Engine::request`] for a
/// one-page write in counting mode, and the general loop's progress calls.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn segment<W: Writes>(
    w: &mut W,
    gen: &mut Synthetic,
    ahead: &mut Ahead,
    i: &mut u64,
    stop: u64,
    checks: &mut InputChecks,
    counts: (&mut [u64; 3], &mut [u64; 3]),
    obs: &mut dyn Observer,
) -> Result<bool, SimError> {
    let (host_pages, op_counts) = counts;
    while *i < stop {
        ahead.fill(gen, w);
        let Some((lpn, time_ns)) = ahead.pop(w) else { return Ok(true) };
        checks.observe(time_ns, false);
        host_pages[1] += 1;
        w.write(lpn)?;
        op_counts[1] += 1;
        *i += 1;
        if *i & 0xFFFF == 0 {
            obs.progress(*i);
        }
    }
    Ok(false)
}

impl Engine<'_> {
    /// Whether [`Self::counting_writes`] gives the general loop's result for `syn`.
    pub(crate) fn counting_writes_apply(s: &Settings, syn: &Synthetic, obs: &dyn Observer) -> bool {
        s.timing.is_none()
            && s.buffer_pages == 0
            && !s.ftl.track_content
            && !s.workload.prewrite_reads
            && !obs.wants_requests()
            && syn.single_page_writes()
    }

    /// The measured requests of a synthetic run (after [`Self::begin`]) where
    /// [`Self::counting_writes_apply`] holds; marks at the end of warm-up as the
    /// general loop does. Every start page is below the logical capacity (the
    /// generator draws them there), so no request overflows or folds.
    pub(crate) fn counting_writes(&mut self, gen: &mut Synthetic, obs: &mut dyn Observer) -> Result<(), SimError> {
        let warmup = self.s.workload.warmup;
        let mut ahead = Ahead { ring: [(0, 0); RING], head: 0, tail: 0 };
        let mut i = 0u64;
        loop {
            let stop = if i < warmup { warmup } else { u64::MAX };
            let counts = (&mut self.host_pages, &mut self.op_counts);
            let end = with_writes!(&mut self.ftl, w => segment(w, gen, &mut ahead, &mut i, stop, &mut self.checks, counts, obs))?;
            if end {
                return Ok(());
            }
            // `i == warmup`: the general loop marks here.
            self.mark();
        }
    }
}

/// Aging (`Engine::age`): `n` uniform random single-page writes drawn from `seed`
/// over `l` logical pages, prefetching the mapping entry `AGING_AHEAD` writes ahead
/// and the physical page's state 2 ahead (hints only); `shadow` (content tracking)
/// takes each write's tag.
pub(crate) fn age_writes<W: Writes>(w: &mut W, seed: u64, l: u64, n: u64, shadow: &mut [u32]) -> Result<(), FtlError> {
    const AGING_AHEAD: usize = 12;
    let step = |x: u64| flashlab_workload::mix64(x.wrapping_add(0x9E37_79B9_7F4A_7C15));
    let lpn_of = |x: u64| ((x as u128 * l as u128) >> 64) as u64;
    let (mut x, mut near, mut far) = (seed, seed, seed);
    for _ in 0..2 {
        near = step(near);
    }
    for _ in 0..AGING_AHEAD {
        far = step(far);
        w.prefetch_map(lpn_of(far));
    }
    for _ in 0..n {
        far = step(far);
        w.prefetch_map(lpn_of(far));
        near = step(near);
        w.prefetch_page(lpn_of(near));
        x = step(x);
        let lpn = lpn_of(x);
        w.write(lpn)?;
        if !shadow.is_empty() {
            shadow[lpn as usize] = w.last_tag();
        }
    }
    Ok(())
}
