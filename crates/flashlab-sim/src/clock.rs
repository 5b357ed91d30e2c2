//! The host side of a timed run: when requests are issued, when they complete, and
//! the latency statistics. Nothing here touches the FTL, so a pipelined run
//! ([`crate::pipeline`]) keeps it with the timeline on the timing thread.

use crate::host::Done;
use crate::result::Latency;
use crate::settings::{Arrival, TimingSettings};
use flashlab_trace::Op;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

#[derive(Clone, Debug)]
pub(crate) struct HostClock {
    pub(crate) arrival: Arrival,
    /// Completion times of the requests in flight (closed-loop arrivals).
    pub(crate) outstanding: BinaryHeap<Reverse<u64>>,
    pub(crate) trace_t0: Option<u64>,
    pub(crate) last_issue: u64,
    pub(crate) first_issue: Option<u64>,
    pub(crate) last_done: u64,
    pub(crate) read_lat: Latency,
    pub(crate) write_lat: Latency,
    pub(crate) gc_wait_ns_total: u64,
    pub(crate) gc_blocked_requests: u64,
    /// Completion of the last non-queued TRIM: no later request starts before it.
    pub(crate) trim_barrier_ns: u64,
}

impl HostClock {
    pub(crate) fn new(arrival: Arrival) -> Self {
        HostClock {
            arrival,
            outstanding: BinaryHeap::new(),
            trace_t0: None,
            last_issue: 0,
            first_issue: None,
            last_done: 0,
            read_lat: Latency::new(),
            write_lat: Latency::new(),
            gc_wait_ns_total: 0,
            gc_blocked_requests: 0,
            trim_barrier_ns: 0,
        }
    }

    /// Measurement starts: forget the statistics of the requests before it.
    pub(crate) fn reset_stats(&mut self) {
        self.read_lat = Latency::new();
        self.write_lat = Latency::new();
        self.first_issue = None;
        self.gc_wait_ns_total = 0;
        self.gc_blocked_requests = 0;
    }

    /// Issue time (ns) of a request stamped `time_ns`: closed loop from completions,
    /// open loop from arrivals.
    #[inline]
    pub(crate) fn issue_time(&mut self, time_ns: u64) -> u64 {
        let t = match self.arrival {
            Arrival::Closed { queue_depth } if self.outstanding.len() < queue_depth as usize => self.last_issue,
            Arrival::Closed { .. } => self.outstanding.pop().map_or(0, |Reverse(t)| t),
            Arrival::Fixed { .. } | Arrival::Poisson { .. } => time_ns,
            Arrival::Trace { time_scale } => {
                let t0 = *self.trace_t0.get_or_insert(time_ns);
                scale(time_ns.saturating_sub(t0), time_scale)
            }
        };
        // Requests are served in arrival order: a timestamp that goes back is held at the previous one.
        self.last_issue = t.max(self.last_issue);
        self.last_issue
    }

    /// Record a completed request's timing (timed runs).
    #[inline]
    pub(crate) fn complete(&mut self, op: Op, d: Done) {
        if let Arrival::Closed { .. } = self.arrival {
            self.outstanding.push(Reverse(d.done_ns));
        }
        self.first_issue.get_or_insert(d.issue_ns);
        self.last_done = self.last_done.max(d.done_ns);
        if d.gc_wait_ns > 0 {
            self.gc_blocked_requests += 1;
            self.gc_wait_ns_total += d.gc_wait_ns;
        }
        match op {
            Op::Read => self.read_lat.record(d.done_ns - d.issue_ns),
            Op::Write => self.write_lat.record(d.done_ns - d.issue_ns),
            Op::Trim => {}
        }
    }

    /// When a TRIM issued at `issue` starts (`crate::trim`): queued at once, non-queued
    /// once every earlier request completed; after any non-queued TRIM before it.
    #[inline]
    pub(crate) fn trim_start(&self, t: &TimingSettings, issue: u64) -> u64 {
        match t.trim_queued {
            true => issue.max(self.trim_barrier_ns),
            false => issue.max(self.last_done).max(self.trim_barrier_ns),
        }
    }

    /// When a TRIM whose unmap work started at `unmap_start` completes: after its NAND
    /// work (`nand_done`) and `mapped` pages' unmap bookkeeping; a non-queued one holds
    /// every later request back until then.
    #[inline]
    pub(crate) fn trim_done(&mut self, t: &TimingSettings, unmap_start: u64, nand_done: u64, mapped: u64) -> u64 {
        let done = nand_done.max(unmap_start + mapped * t.trim_page_ns);
        if !t.trim_queued {
            self.trim_barrier_ns = done;
        }
        done
    }
}

/// `ns × time_scale`, truncated: exactly `(ns as f64 * time_scale) as u64`, without the
/// float multiply for the common scale 1 (exact below 2^53, where `ns as f64` is exact).
#[inline]
fn scale(ns: u64, time_scale: f64) -> u64 {
    if time_scale == 1.0 && ns < 1 << 53 {
        return ns;
    }
    (ns as f64 * time_scale) as u64
}

#[cfg(test)]
mod tests {
    use super::scale;

    #[test]
    fn scale_one_is_the_float_product() {
        for ns in [0, 1, 7, 99_999, (1 << 53) - 1, 1 << 53, (1 << 53) + 1, u64::MAX / 3, u64::MAX] {
            assert_eq!(scale(ns, 1.0), (ns as f64 * 1.0) as u64, "{ns}");
            assert_eq!(scale(ns, 0.5), (ns as f64 * 0.5) as u64, "{ns}");
        }
    }
}
