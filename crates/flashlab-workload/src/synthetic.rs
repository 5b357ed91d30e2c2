//! The synthetic request generator.

use crate::settings::{Arrival, Pattern, SyntheticSettings};
use crate::ArrivalGen;
use flashlab_trace::{Op, Request};
use rand::{RngCore, SeedableRng};
use rand_distr::{Distribution, Zipf};
use rand_xoshiro::Xoshiro256PlusPlus;

/// Which logical page a request starts at.
#[derive(Clone, Debug)]
enum Spatial {
    Uniform,
    HotCold {
        hot_pages: u64,
        hot_traffic: f64,
    },
    Sequential {
        next: u64,
    },
    /// Rank 1 (the most popular) is logical page 0, rank 2 page 1, and so on.
    Zipf(Zipf<f64>),
}

/// An iterator of synthetic requests, deterministic for a given seed.
#[derive(Clone, Debug)]
pub struct Synthetic {
    s: SyntheticSettings,
    logical_pages: u64,
    page_bytes: u64,
    spatial: Spatial,
    rng: Xoshiro256PlusPlus,
    arrival: ArrivalGen,
    emitted: u64,
}

#[inline]
fn below(rng: &mut Xoshiro256PlusPlus, n: u64) -> u64 {
    ((rng.next_u64() as u128 * n as u128) >> 64) as u64
}

#[inline]
fn unit(rng: &mut Xoshiro256PlusPlus) -> f64 {
    (rng.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

impl Synthetic {
    /// A generator over `logical_pages` pages of `page_bytes`; `seed` drives every choice.
    pub fn new(s: SyntheticSettings, arrival: Arrival, logical_pages: u64, page_bytes: u64, seed: u64) -> Self {
        let spatial = match s.pattern {
            Pattern::Uniform => Spatial::Uniform,
            Pattern::Sequential => Spatial::Sequential { next: 0 },
            Pattern::HotCold { hot_fraction, hot_traffic } => {
                let hot_pages = ((logical_pages as f64 * hot_fraction).round() as u64)
                    .clamp(1, logical_pages.saturating_sub(1).max(1));
                Spatial::HotCold { hot_pages, hot_traffic }
            }
            Pattern::Zipf { theta } => {
                Spatial::Zipf(Zipf::new(logical_pages, theta).expect("validated zipf parameters"))
            }
        };
        Synthetic {
            s,
            logical_pages,
            page_bytes,
            spatial,
            rng: Xoshiro256PlusPlus::seed_from_u64(crate::sub_seed(seed, "synthetic")),
            arrival: ArrivalGen::new(arrival, crate::sub_seed(seed, "arrival")),
            emitted: 0,
        }
    }

    #[inline]
    fn start_page(&mut self, pages: u64) -> u64 {
        let l = self.logical_pages;
        match &mut self.spatial {
            Spatial::Uniform => below(&mut self.rng, l),
            Spatial::HotCold { hot_pages, hot_traffic } => {
                let (h, t) = (*hot_pages, *hot_traffic);
                if unit(&mut self.rng) < t {
                    below(&mut self.rng, h)
                } else {
                    h + below(&mut self.rng, l - h)
                }
            }
            Spatial::Sequential { next } => {
                let p = *next;
                *next = (p + pages) % l;
                p
            }
            Spatial::Zipf(z) => (z.sample(&mut self.rng) as u64).clamp(1, l) - 1,
        }
    }

    #[inline]
    fn op(&mut self) -> Op {
        if self.s.read_fraction == 0.0 && self.s.trim_fraction == 0.0 {
            return Op::Write;
        }
        let u = unit(&mut self.rng);
        if u < self.s.read_fraction {
            Op::Read
        } else if u < self.s.read_fraction + self.s.trim_fraction {
            Op::Trim
        } else {
            Op::Write
        }
    }
}

impl Synthetic {
    /// Whether every request is a single-page write (`pages_min == pages_max == 1`, no
    /// reads or trims): then [`Self::next_single_page`] may stand in for `next()`.
    pub fn single_page_writes(&self) -> bool {
        self.s.pages_min == 1 && self.s.pages_max == 1 && self.s.read_fraction == 0.0 && self.s.trim_fraction == 0.0
    }

    /// The next request as (start page, arrival ns) where [`Self::single_page_writes`]
    /// holds: `next()` would give a one-page write of that page at that time, and the
    /// same random numbers are drawn (the counting loop of the simulator; no `Request`
    /// is built). None at the end.
    #[inline]
    pub fn next_single_page(&mut self) -> Option<(u64, u64)> {
        debug_assert!(self.single_page_writes());
        if self.emitted == self.s.requests {
            return None;
        }
        self.emitted += 1;
        let start = self.start_page(1);
        Some((start, self.arrival.next_ns()))
    }
}

impl Iterator for Synthetic {
    type Item = Request;

    #[inline]
    fn next(&mut self) -> Option<Request> {
        if self.emitted == self.s.requests {
            return None;
        }
        self.emitted += 1;
        let (lo, hi) = (self.s.pages_min, self.s.pages_max);
        let pages = if hi > lo { lo + below(&mut self.rng, hi - lo + 1) } else { lo };
        let start = self.start_page(pages);
        let op = self.op();
        let time_ns = self.arrival.next_ns();
        Some(Request {
            time_ns,
            op,
            offset_bytes: start * self.page_bytes,
            len_bytes: pages * self.page_bytes,
            device: 0,
        })
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = (self.s.requests - self.emitted) as usize;
        (n, Some(n))
    }
}
