//! Turning the engine's state at the end of a run into a [`RunResult`].

use crate::engine::Engine;
use crate::result::{erase_stats, RunResult};
use crate::settings::{Pattern, Source};
use flashlab_ftl::Mapping;
use flashlab_ftl::{analytic, Scheme, VictimPolicy};
use flashlab_nand::{Cause, OpKind};

impl Engine<'_> {
    pub(crate) fn finish(&self) -> RunResult {
        let mark = self.mark.as_ref().expect("measurement started");
        let nand = self.ftl.nand().counters().since(&mark.nand);
        let ftl = self.ftl.stats().since(&mark.ftl);
        let now = self.ftl.nand().erase_counts();
        let (emin, emax, emean, esd) = erase_stats(now.iter().zip(&mark.erases).map(|(a, b)| (a - b) as u64));
        let requests: u64 = self.op_counts.iter().sum();
        let programs = nand.total(OpKind::Program);
        let [host_read, host_write, host_trim] = self.host_pages;
        let timed = self.timing_summary(requests, host_read + host_write);
        let applies = Applies::of(self.s.ftl.mapping.scheme);
        RunResult {
            requests,
            host_read_pages: host_read,
            host_write_pages: host_write,
            host_trim_pages: host_trim,
            nand_read_pages: nand.total(OpKind::Read),
            nand_program_pages: programs,
            nand_erases: nand.total(OpKind::Erase),
            gc_runs: ftl.gc_runs,
            gc_copied_pages: ftl.gc_copied_pages,
            waf: (host_write > 0).then(|| programs as f64 / host_write as f64),
            erase_count_min: emin,
            erase_count_max: emax,
            erase_count_mean: emean,
            erase_count_stddev: esd,
            read_latency_us_mean: self.clock.read_lat.mean_us(),
            read_latency_us_p99: self.clock.read_lat.quantile_us(0.99),
            write_latency_us_mean: self.clock.write_lat.mean_us(),
            write_latency_us_p99: self.clock.write_lat.quantile_us(0.99),
            iops: timed.iops,
            sim_time_s: timed.sim_time_s,
            wall_time_s: 0.0,
            config: serde_json::Value::Null,
            merges_switch: applies.merges.then_some(ftl.merges_switch),
            merges_partial: applies.merges.then_some(ftl.merges_partial),
            merges_full: applies.full.then_some(ftl.merges_full),
            merge_copied_pages: applies.full.then_some(ftl.merge_copied_pages),
            padding_pages: applies.padding.then_some(ftl.padding_pages),
            map_reads: applies.map.then_some(ftl.map_reads),
            map_writes: applies.map.then_some(ftl.map_writes),
            map_cache_hit_ratio: (applies.map && ftl.map_cache_lookups > 0)
                .then(|| ftl.map_cache_hits as f64 / ftl.map_cache_lookups as f64),
            mapping_ram_bytes: Some(self.ftl.mapping_ram_bytes()),
            erase_count_stddev_block: esd,
            read_requests: self.op_counts[0],
            write_requests: self.op_counts[1],
            trim_requests: self.op_counts[2],
            unmapped_read_pages: ftl.unmapped_reads,
            nand_program_pages_host: nand.get(OpKind::Program, Cause::Host),
            nand_program_pages_gc: nand.get(OpKind::Program, Cause::Gc),
            nand_read_pages_gc: nand.get(OpKind::Read, Cause::Gc),
            erase_count_plane_stddev: self.plane_erase_stddev(),
            wl_moves: ftl.wl_moves,
            nand_program_pages_wl: nand.get(OpKind::Program, Cause::WearLevel),
            nand_program_pages_merge: nand.get(OpKind::Program, Cause::Merge),
            nand_program_pages_padding: nand.get(OpKind::Program, Cause::Padding),
            nand_program_pages_map: nand.get(OpKind::Program, Cause::Mapping),
            nand_program_pages_other: nand.get(OpKind::Program, Cause::Other),
            logical_pages: self.s.ftl.logical_pages,
            physical_pages: self.s.geometry.pages() as u64,
            read_latency_us_p50: self.clock.read_lat.quantile_us(0.5),
            read_latency_us_p999: self.clock.read_lat.quantile_us(0.999),
            read_latency_us_max: self.clock.read_lat.max_us(),
            write_latency_us_p50: self.clock.write_lat.quantile_us(0.5),
            write_latency_us_p999: self.clock.write_lat.quantile_us(0.999),
            write_latency_us_max: self.clock.write_lat.max_us(),
            bandwidth_mib_s: timed.bandwidth_mib_s,
            die_utilization_mean: timed.die_util,
            die_utilization_max: timed.die_util_max,
            channel_utilization_mean: timed.chan_util,
            channel_utilization_max: timed.chan_util_max,
            die_wait_s_total: self
                .timeline
                .as_ref()
                .map(|t| (t.die_wait_ns.iter().sum::<u64>() - mark.die_wait_ns) as f64 / 1e9),
            gc_transfers_deferred: self
                .timeline
                .as_ref()
                .map_or(0, |t| t.gc_transfers_deferred - mark.gc_transfers_deferred),
            gc_blocked_requests: self.clock.gc_blocked_requests,
            gc_blocked_s_total: self.timeline.as_ref().map(|_| self.clock.gc_wait_ns_total as f64 / 1e9),
            copyback_pages: self.timeline.as_ref().map_or(0, |t| t.copybacks - mark.copybacks),
            buffer_write_hits: self.buffer_counts[0],
            buffer_read_hits: self.buffer_counts[1],
            buffer_flush_pages: self.buffer_counts[2],
            multiplane_joins: self.timeline.as_ref().map_or(0, |t| t.multiplane_joins - mark.multiplane_joins),

            waf_closed_form: self.closed_form().filter(|&c| ftl.gc_runs > 0 && c >= 1.0),
            memory_bytes: (self.ftl.memory_bytes() + self.shadow.len() * 4) as u64,
            skipped_lines: 0,
            reordered_requests: self.checks.reordered,
            folded_requests: self.checks.folded,
            outlying_timestamps: self.checks.outlying(),
            prewritten_pages: self.prewritten_pages,
        }
    }

    /// Std-dev over planes of the per-plane erase totals during measurement.
    fn plane_erase_stddev(&self) -> f64 {
        let mark = self.mark.as_ref().expect("measurement started");
        let bpp = self.s.geometry.blocks_per_plane as usize;
        let now = self.ftl.nand().erase_counts();
        let per_plane = now
            .chunks(bpp)
            .zip(mark.erases.chunks(bpp))
            .map(|(a, b)| a.iter().zip(b).map(|(x, y)| (x - y) as u64).sum::<u64>());
        erase_stats(per_plane).3
    }

    fn timing_summary(&self, requests: u64, host_pages: u64) -> Timed {
        let (Some(tl), Some(first)) = (&self.timeline, self.clock.first_issue) else {
            return Timed::default();
        };
        let mark = self.mark.as_ref().expect("measurement started");
        let span_ns = self.clock.last_done.saturating_sub(first).max(1) as f64;
        let util = |now: &[u64], then: &[u64]| -> (f64, f64) {
            let u: Vec<f64> = now.iter().zip(then).map(|(n, t)| (n - t) as f64 / span_ns).collect();
            (u.iter().sum::<f64>() / u.len().max(1) as f64, u.iter().copied().fold(0.0, f64::max))
        };
        let (die_mean, die_max) = util(&tl.die_busy_ns, &mark.die_busy_ns);
        let (chan_mean, chan_max) = util(&tl.chan_busy_ns, &mark.chan_busy_ns);
        Timed {
            iops: Some(requests as f64 / (span_ns / 1e9)),
            sim_time_s: Some(span_ns / 1e9),
            bandwidth_mib_s: Some(host_pages as f64 * self.s.page_bytes() as f64 / (1 << 20) as f64 / (span_ns / 1e9)),
            die_util: Some(die_mean),
            die_util_max: Some(die_max),
            chan_util: Some(chan_mean),
            chan_util_max: Some(chan_max),
        }
    }

    /// Desnoyers' closed form, where the run fits its assumptions (the caller also
    /// requires that GC ran and that the value is a WAF, i.e. at least 1: the greedy
    /// approximation falls below 1 for blocks of very few pages).
    fn closed_form(&self) -> Option<f64> {
        let Source::Synthetic(w) = &self.s.workload.source else {
            return None;
        };
        if self.s.ftl.mapping.scheme != flashlab_ftl::Scheme::Page {
            return None;
        }
        let single_page_writes = w.read_fraction == 0.0 && w.trim_fraction == 0.0 && w.pages_max == 1;
        if w.pattern != Pattern::Uniform || !single_page_writes {
            return None;
        }
        let spare = 1.0 - self.s.ftl.logical_pages as f64 / self.s.geometry.pages() as f64;
        match self.s.ftl.victim {
            VictimPolicy::Fifo => Some(analytic::fifo_waf(spare)),
            VictimPolicy::Greedy => Some(analytic::greedy_waf(spare, self.s.geometry.pages_per_block)),
            _ => None,
        }
    }
}

/// Which mapping counts apply to a scheme (the others are null in the result).
struct Applies {
    /// Switch and partial merges (log-block schemes).
    merges: bool,
    /// Full merges and merge copies (every block-mapped scheme; block mapping's block copies).
    full: bool,
    padding: bool,
    /// Translation-page traffic and the mapping cache (DFTL).
    map: bool,
}

impl Applies {
    fn of(scheme: Scheme) -> Self {
        Applies {
            merges: matches!(scheme, Scheme::Bast | Scheme::BastPadding | Scheme::Fast),
            full: scheme.is_hybrid(),
            padding: scheme == Scheme::BastPadding,
            map: scheme == Scheme::Dftl,
        }
    }
}

#[derive(Default)]
struct Timed {
    iops: Option<f64>,
    sim_time_s: Option<f64>,
    bandwidth_mib_s: Option<f64>,
    die_util: Option<f64>,
    die_util_max: Option<f64>,
    chan_util: Option<f64>,
    chan_util_max: Option<f64>,
}
