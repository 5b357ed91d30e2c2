//! Arrival times of synthetic requests (open loop). Closed-loop arrivals are decided
//! by the simulation driver from completions, so they get time 0 here.

use crate::settings::Arrival;
use rand::SeedableRng;
use rand_distr::{Distribution, Exp1};
use rand_xoshiro::Xoshiro256PlusPlus;

/// Produces the arrival time of each successive request.
#[derive(Clone, Debug)]
pub struct ArrivalGen {
    kind: Arrival,
    now_ns: u64,
    rng: Xoshiro256PlusPlus,
}

impl ArrivalGen {
    pub fn new(kind: Arrival, seed: u64) -> Self {
        ArrivalGen { kind, now_ns: 0, rng: Xoshiro256PlusPlus::seed_from_u64(seed) }
    }

    /// Time of the next arrival; the first request arrives at time 0.
    #[inline]
    pub fn next_ns(&mut self) -> u64 {
        let t = self.now_ns;
        self.now_ns += match self.kind {
            Arrival::Fixed { interval_ns } => interval_ns,
            Arrival::Poisson { mean_ns } => {
                let e: f64 = Exp1.sample(&mut self.rng);
                (e * mean_ns as f64).round() as u64
            }
            Arrival::Closed { .. } | Arrival::Trace { .. } => 0,
        };
        t
    }
}
