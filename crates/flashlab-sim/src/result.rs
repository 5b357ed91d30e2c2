//! The result object of a run (CONTRACT.md), flat, every key always present.

use hdrhistogram::Histogram;
use serde::Serialize;

/// The result of one run. `null` (None) where a value does not apply, e.g.
/// latencies in counting mode. `wall_time_s` and `config` are filled by the caller.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct RunResult {
    pub requests: u64,
    pub host_read_pages: u64,
    pub host_write_pages: u64,
    pub host_trim_pages: u64,
    pub nand_read_pages: u64,
    pub nand_program_pages: u64,
    pub nand_erases: u64,
    pub gc_runs: u64,
    pub gc_copied_pages: u64,
    pub waf: Option<f64>,
    pub erase_count_min: u64,
    pub erase_count_max: u64,
    pub erase_count_mean: f64,
    pub erase_count_stddev: f64,
    pub read_latency_us_mean: Option<f64>,
    pub read_latency_us_p99: Option<f64>,
    pub write_latency_us_mean: Option<f64>,
    pub write_latency_us_p99: Option<f64>,
    pub iops: Option<f64>,
    pub sim_time_s: Option<f64>,
    pub wall_time_s: f64,
    pub config: serde_json::Value,
    /// Mapping schemes (docs/mapping.md); null where the count cannot apply to the scheme.
    pub merges_switch: Option<u64>,
    pub merges_partial: Option<u64>,
    pub merges_full: Option<u64>,
    pub merge_copied_pages: Option<u64>,
    pub padding_pages: Option<u64>,
    pub map_reads: Option<u64>,
    pub map_writes: Option<u64>,
    pub map_cache_hit_ratio: Option<f64>,
    pub mapping_ram_bytes: Option<u64>,
    /// Population std-dev of the erases each block did during the measured run (seed 001's
    /// figure 10). The same quantity as `erase_count_stddev`, named beside the per-plane one.
    pub erase_count_stddev_block: f64,
    // Beyond the contract.
    pub read_requests: u64,
    pub write_requests: u64,
    pub trim_requests: u64,
    pub unmapped_read_pages: u64,
    pub nand_program_pages_host: u64,
    pub nand_program_pages_gc: u64,
    pub nand_read_pages_gc: u64,
    /// Population std-dev over planes of the erases each plane did (seed 001's wear metric).
    pub erase_count_plane_stddev: f64,
    /// Static wear levelling: blocks whose data was moved, and NAND programs it caused.
    pub wl_moves: u64,
    pub nand_program_pages_wl: u64,
    /// NAND programs for merges, BAST padding, mapping tables and anything else (with
    /// host, gc and wl they add up to `nand_program_pages`).
    pub nand_program_pages_merge: u64,
    pub nand_program_pages_padding: u64,
    pub nand_program_pages_map: u64,
    pub nand_program_pages_other: u64,
    pub logical_pages: u64,
    pub physical_pages: u64,
    pub read_latency_us_p50: Option<f64>,
    pub read_latency_us_p999: Option<f64>,
    pub read_latency_us_max: Option<f64>,
    pub write_latency_us_p50: Option<f64>,
    pub write_latency_us_p999: Option<f64>,
    pub write_latency_us_max: Option<f64>,
    pub bandwidth_mib_s: Option<f64>,
    pub die_utilization_mean: Option<f64>,
    pub die_utilization_max: Option<f64>,
    pub channel_utilization_mean: Option<f64>,
    pub channel_utilization_max: Option<f64>,
    /// Time dies were held waiting for the channel bus (summed over dies; not in die utilisation).
    pub die_wait_s_total: Option<f64>,
    /// GC transfers moved back behind a host transfer (`timing.bus_arbitration = "host-first"`).
    pub gc_transfers_deferred: u64,
    /// Measured requests that waited behind GC on some die, and the time they waited in all.
    pub gc_blocked_requests: u64,
    pub gc_blocked_s_total: Option<f64>,
    /// GC page migrations done by copyback.
    pub copyback_pages: u64,
    /// Host page operations that joined a multi-plane operation.
    pub multiplane_joins: u64,
    /// DRAM write buffer: host page writes absorbed by a buffered copy, host page reads
    /// served from it, and pages flushed (evicted) to flash.
    pub buffer_write_hits: u64,
    pub buffer_read_hits: u64,
    pub buffer_flush_pages: u64,

    /// Desnoyers' closed-form WAF when the run fits its model (uniform single-page writes, FIFO or greedy).
    pub waf_closed_form: Option<f64>,
    pub memory_bytes: u64,
    /// Bad trace lines skipped (`--skip-bad-lines`; filled by the caller that reads the trace).
    pub skipped_lines: u64,
    /// Requests whose timestamp was earlier than an earlier request's: issued at that time instead.
    pub reordered_requests: u64,
    /// Requests with pages beyond the logical capacity, folded into it (`workload.address_overflow = "fold"`).
    pub folded_requests: u64,
    /// Gaps between consecutive timestamps of at least 1 s and about 1000 times the median gap.
    pub outlying_timestamps: u64,
    /// Pages written before the run by `workload.prewrite_reads`.
    pub prewritten_pages: u64,
}

/// Latency recorder: exact sum and count, HDR histogram (3 significant digits) for percentiles.
#[derive(Clone, Debug)]
pub(crate) struct Latency {
    hist: Histogram<u64>,
    sum_ns: u128,
}

impl Latency {
    pub fn new() -> Self {
        // 1 ns .. ~52 simulated days at 3 significant digits; longer latencies saturate
        // in the histogram (the mean stays exact: it comes from the sum).
        let hist = Histogram::new_with_bounds(1, 1u64 << 52, 3).expect("valid histogram bounds");
        Latency { hist, sum_ns: 0 }
    }
    #[inline]
    pub fn record(&mut self, ns: u64) {
        self.hist.saturating_record(ns);
        self.sum_ns += ns as u128;
    }
    pub fn count(&self) -> u64 {
        self.hist.len()
    }
    pub fn mean_us(&self) -> Option<f64> {
        (self.count() > 0).then(|| self.sum_ns as f64 / self.count() as f64 / 1e3)
    }
    pub fn quantile_us(&self, q: f64) -> Option<f64> {
        (self.count() > 0).then(|| self.hist.value_at_quantile(q) as f64 / 1e3)
    }
    pub fn max_us(&self) -> Option<f64> {
        (self.count() > 0).then(|| self.hist.max() as f64 / 1e3)
    }
    /// The CDF as (µs, fraction at or below), one point per recorded histogram bin
    /// (its lowest equivalent value), thinned so kept points are at least 1/100
    /// decade apart; the last bin (fraction 1) is always kept.
    pub fn cdf(&self) -> Vec<(f64, f64)> {
        let total = self.count();
        let mut out: Vec<(f64, f64)> = Vec::new();
        let mut seen = 0u64;
        let mut last_log = f64::NEG_INFINITY;
        let bins: Vec<_> = self.hist.iter_recorded().collect();
        for (i, v) in bins.iter().enumerate() {
            seen += v.count_since_last_iteration();
            let us = self.hist.lowest_equivalent(v.value_iterated_to()) as f64 / 1e3;
            let log = us.max(1e-3).log10();
            if log - last_log >= 0.01 || i + 1 == bins.len() {
                out.push((us, seen as f64 / total as f64));
                last_log = log;
            }
        }
        out
    }
}

/// Min, max, mean and population standard deviation of per-block erase counts.
pub(crate) fn erase_stats(counts: impl Iterator<Item = u64>) -> (u64, u64, f64, f64) {
    let (mut n, mut min, mut max, mut sum, mut sq) = (0u64, u64::MAX, 0u64, 0f64, 0f64);
    for c in counts {
        n += 1;
        min = min.min(c);
        max = max.max(c);
        sum += c as f64;
        sq += (c as f64) * (c as f64);
    }
    if n == 0 {
        return (0, 0, 0.0, 0.0);
    }
    let mean = sum / n as f64;
    (min, max, mean, (sq / n as f64 - mean * mean).max(0.0).sqrt())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn erase_stats_are_population_statistics() {
        let (min, max, mean, sd) = erase_stats([1u64, 2, 3, 4].into_iter());
        assert_eq!((min, max, mean), (1, 4, 2.5));
        assert!((sd - 1.25f64.sqrt()).abs() < 1e-12, "{sd}");
        assert_eq!(erase_stats(std::iter::empty()), (0, 0, 0.0, 0.0));
    }

    #[test]
    fn latency_quantiles() {
        let mut l = Latency::new();
        for v in [1_000_000u64, 500_000, 2_000, 3_000_000] {
            l.record(v);
        }
        assert_eq!(l.count(), 4);
        assert!((l.max_us().unwrap() - 3000.0).abs() < 3.0, "{:?}", l.max_us());
        assert!((l.quantile_us(0.5).unwrap() - 500.0).abs() < 1.0, "{:?}", l.quantile_us(0.5));
    }

    #[test]
    fn latency_cdf_points_are_exact_for_representable_values() {
        let mut l = Latency::new();
        assert!(l.cdf().is_empty());
        for v in [1000u64, 2000, 2000, 4000] {
            l.record(v);
        }
        assert_eq!(l.cdf(), vec![(1.0, 0.25), (2.0, 0.75), (4.0, 1.0)]);
    }

    #[test]
    fn latency_cdf_thins_close_bins_but_keeps_the_last() {
        let mut l = Latency::new();
        // 1000..1010 ns are 11 exact bins within 1/100 decade of 1000.
        for v in 1000u64..=1010 {
            l.record(v);
        }
        assert_eq!(l.cdf(), vec![(1.0, 1.0 / 11.0), (1.010, 1.0)]);
    }
}
