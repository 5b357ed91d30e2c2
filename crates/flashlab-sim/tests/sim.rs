use flashlab_config::{load, BusArbitration, TimingSettings};
use flashlab_ftl::FlashOp;
use flashlab_nand::{Cause, Geometry, OpKind};
use flashlab_sim::{run, run_synthetic, timing::Timeline, RunResult, SimError, Ssd};
use flashlab_trace::{Op, Request};

#[path = "sim/golden.rs"]
mod golden;
#[path = "sim/mapping.rs"]
mod mapping;
#[path = "sim/pipeline.rs"]
mod pipeline;
mod timing;
#[path = "sim/trim.rs"]
mod trim;

fn settings(sets: &[&str]) -> flashlab_sim::Settings {
    let mut all = vec![
        "device.channels=2",
        "device.chips_per_channel=1",
        "device.dies_per_chip=2",
        "device.planes_per_die=1",
        "device.blocks_per_plane=64",
        "device.pages_per_block=32",
    ];
    all.extend_from_slice(sets);
    let all: Vec<String> = all.iter().map(|s| s.to_string()).collect();
    load("", "test", &all).unwrap().1
}

fn synth(sets: &[&str]) -> RunResult {
    run_synthetic(&settings(sets), &mut |_| {}).unwrap()
}

#[test]
fn same_config_same_result() {
    let sets = ["workload.requests=20000", "workload.read_fraction=0.3", "gc.victim=random", "workload.queue_depth=4"];
    assert_eq!(synth(&sets), synth(&sets));
    let mut other = sets.to_vec();
    other.push("workload.seed=2");
    assert_ne!(synth(&sets), synth(&other));
}

#[test]
fn result_has_every_contract_key() {
    let r = serde_json::to_value(synth(&["workload.requests=100"])).unwrap();
    let keys = "requests host_read_pages host_write_pages host_trim_pages nand_read_pages nand_program_pages nand_erases \
        gc_runs gc_copied_pages waf erase_count_min erase_count_max erase_count_mean erase_count_stddev read_latency_us_mean \
        read_latency_us_p99 write_latency_us_mean write_latency_us_p99 iops sim_time_s wall_time_s config \
        skipped_lines reordered_requests folded_requests erase_count_stddev_block \
        merges_switch merges_partial merges_full merge_copied_pages padding_pages map_reads map_writes \
        map_cache_hit_ratio mapping_ram_bytes";
    for k in keys.split_whitespace() {
        assert!(r.get(k).is_some(), "missing {k}");
    }
}

#[test]
fn block_erase_spread_is_the_per_block_std_dev() {
    let r = synth(&["workload.requests=30000", "device.blocks_per_plane=32", "timing.enabled=false"]);
    assert!(r.nand_erases > 0);
    assert!(r.erase_count_stddev_block > 0.0);
    assert_eq!(r.erase_count_stddev_block, r.erase_count_stddev);
    let j = serde_json::to_value(&r).unwrap();
    assert_eq!(j["erase_count_stddev_block"].as_f64(), Some(r.erase_count_stddev));
}

#[test]
fn counting_mode_has_null_latencies() {
    let r = synth(&["workload.requests=1000", "timing.enabled=false"]);
    assert!(r.write_latency_us_mean.is_none() && r.iops.is_none() && r.sim_time_s.is_none());
    assert_eq!(r.host_write_pages, 1000);
}

#[test]
fn idle_read_and_program_match_closed_forms() {
    let t = TimingSettings {
        read_ns: 20_000,
        program_ns: 200_000,
        erase_ns: 1_500_000,
        byte_ps: 25_000,
        command_ns: 300,
        copyback: false,
        copyback_same_parity: true,
        multiplane: false,
        die_interleaving: true,
        bus_arbitration: BusArbitration::Fifo,
        trim_command_ns: 1_000_000,
        trim_page_ns: 1550,
        trim_queued: false,
        pipeline: false,
    };
    let xfer = 2048 * 25;
    let s = settings(&["timing.command_ns=300", "workload.requests=1"]);
    assert_eq!(s.timing, Some(t));
    // One write on an idle device.
    let r = synth(&["timing.command_ns=300", "workload.requests=1"]);
    assert_eq!(r.write_latency_us_mean, Some((300 + xfer + 200_000) as f64 / 1e3));
    let p99 = r.write_latency_us_p99.unwrap();
    assert!((p99 - 251.5).abs() / 251.5 < 1e-3, "p99 {p99} within HDR precision");

    // One read of a written page on an idle device: warm-up writes it, then the device idles.
    let s = settings(&[
        "timing.command_ns=300",
        "workload.warmup=1",
        "workload.arrival=fixed",
        "workload.interarrival_us=100000",
    ]);
    let reqs = [
        Request { time_ns: 0, op: Op::Write, offset_bytes: 0, len_bytes: 2048, device: 0 },
        Request { time_ns: 100_000_000, op: Op::Read, offset_bytes: 0, len_bytes: 2048, device: 0 },
    ];
    let r = run(&s, reqs.iter().map(|r| Ok::<_, String>(*r)), &mut |_| {}).unwrap();
    assert_eq!(r.read_latency_us_mean, Some((300 + 20_000 + xfer) as f64 / 1e3));
    // One erase on an idle die.
    let g = settings(&[]).geometry;
    let mut tl = Timeline::new(&g, t);
    assert_eq!(
        tl.exec(&FlashOp { kind: OpKind::Erase, cause: Cause::Gc, plane: 0, page: 0 }, 1000),
        1000 + 300 + 1_500_000
    );
}

#[test]
fn independent_dies_on_different_channels_overlap() {
    let g = Geometry {
        channels: 4,
        chips_per_channel: 1,
        dies_per_chip: 1,
        planes_per_die: 1,
        blocks_per_plane: 8,
        pages_per_block: 8,
        page_bytes: 4096,
    };
    let t = TimingSettings {
        read_ns: 20_000,
        program_ns: 200_000,
        erase_ns: 1_500_000,
        byte_ps: 25_000,
        command_ns: 0,
        copyback: false,
        copyback_same_parity: true,
        multiplane: false,
        die_interleaving: true,
        bus_arbitration: BusArbitration::Fifo,
        trim_command_ns: 0,
        trim_page_ns: 0,
        trim_queued: true,
        pipeline: false,
    };
    let mut tl = Timeline::new(&g, t);
    let ends: Vec<u64> =
        (0..4).map(|p| tl.exec(&FlashOp { kind: OpKind::Program, cause: Cause::Host, plane: p, page: 0 }, 0)).collect();
    assert_eq!(ends, vec![4096 * 25 + 200_000; 4]);
    // Two programs on one channel, two dies: the second waits only for the bus.
    let g2 = Geometry { channels: 1, dies_per_chip: 2, ..g };
    let mut tl = Timeline::new(&g2, t);
    let a = tl.exec(&FlashOp { kind: OpKind::Program, cause: Cause::Host, plane: 0, page: 0 }, 0);
    let b = tl.exec(&FlashOp { kind: OpKind::Program, cause: Cause::Host, plane: 1, page: 0 }, 0);
    assert_eq!((a, b), (4096 * 25 + 200_000, 2 * 4096 * 25 + 200_000));
}

#[test]
fn littles_law_holds_on_a_mixed_closed_loop_run() {
    let r = synth(&[
        "workload.requests=200000",
        "workload.read_fraction=0.4",
        "workload.queue_depth=8",
        "workload.prefill=true",
        "workload.warmup=20000",
    ]);
    let n = (r.read_requests + r.write_requests) as f64;
    let mean_s = (r.read_latency_us_mean.unwrap() * r.read_requests as f64
        + r.write_latency_us_mean.unwrap() * r.write_requests as f64)
        / n
        / 1e6;
    let in_flight = r.iops.unwrap() * mean_s;
    assert!((in_flight - 8.0).abs() / 8.0 < 0.01, "Little's law: X·R = {in_flight}, queue depth 8");
    assert!(r.gc_runs > 0);
}

#[test]
fn warmup_and_prefill_are_not_counted() {
    let r = synth(&["workload.requests=5000", "workload.warmup=3000", "workload.prefill=true", "timing.enabled=false"]);
    assert_eq!(r.requests, 5000);
    assert_eq!(r.host_write_pages, 5000);
    assert!(r.nand_program_pages >= 5000);
    assert_eq!(r.nand_program_pages, r.host_write_pages + r.gc_copied_pages);
}

#[test]
fn strict_run_with_reads_trims_and_multi_page_requests_passes_content_checks() {
    let r = synth(&[
        "sim.strict=true",
        "workload.requests=30000",
        "workload.read_fraction=0.3",
        "workload.trim_fraction=0.1",
        "workload.request_bytes=2048",
        "workload.request_bytes_max=16384",
        "workload.pattern=hotcold",
        "gc.victim=cost-benefit",
    ]);
    assert!(r.gc_runs > 0 && r.host_trim_pages > 0 && r.unmapped_read_pages > 0);
}

#[test]
fn overflow_error_names_request() {
    let s = settings(&["workload.address_overflow=error", "timing.enabled=false"]);
    let big = Request { time_ns: 0, op: Op::Write, offset_bytes: 1 << 40, len_bytes: 4096, device: 0 };
    let e = run(&s, [Ok::<_, String>(big)].into_iter(), &mut |_| {}).unwrap_err();
    assert!(matches!(e, SimError::Overflow { index: 0, .. }), "{e}");
    let s = settings(&["timing.enabled=false"]);
    let r = run(&s, [Ok::<_, String>(big)].into_iter(), &mut |_| {}).unwrap();
    assert_eq!(r.host_write_pages, 2);
}

#[test]
fn closed_form_is_reported_for_uniform_fifo() {
    let steady = ["gc.victim=fifo", "workload.prefill=true", "workload.requests=5000", "timing.enabled=false"];
    let r = synth(&steady);
    assert!(r.gc_runs > 0 && r.waf_closed_form.unwrap() > 1.0, "{r:?}");
    // Without GC in the measured period the model does not apply.
    let r = synth(&["gc.victim=fifo", "workload.requests=1000", "timing.enabled=false"]);
    assert_eq!((r.gc_runs, r.waf_closed_form), (0, None));
    assert!(synth(&["workload.pattern=zipf", "workload.requests=10", "timing.enabled=false"])
        .waf_closed_form
        .is_none());
}

fn gc_heavy(extra: &[&str]) -> RunResult {
    let mut sets = vec![
        "device.blocks_per_plane=128",
        "device.pages_per_block=64",
        "device.spare_factor=0.1",
        "workload.prefill=true",
        "workload.warmup=30000",
        "workload.requests=40000",
        "workload.arrival=fixed",
        "workload.interarrival_us=1500",
    ];
    sets.extend_from_slice(extra);
    synth(&sets)
}

#[test]
fn preemptible_gc_lowers_tail_latency_against_blocking() {
    let blocking = gc_heavy(&["gc.mode=blocking"]);
    let preempt = gc_heavy(&["gc.mode=preemptible", "gc.background_free_blocks=4"]);
    let (b, p) = (blocking.write_latency_us_p99.unwrap(), preempt.write_latency_us_p99.unwrap());
    eprintln!("write p99: blocking {b:.0} us, preemptible {p:.0} us; WAF {:?} vs {:?}", blocking.waf, preempt.waf);
    assert!(blocking.gc_runs > 1000 && preempt.gc_runs > 1000);
    assert!(p * 10.0 < b, "preemptible p99 {p} not well below blocking {b}");
    assert!(preempt.gc_blocked_s_total.unwrap() < blocking.gc_blocked_s_total.unwrap());
    // The same under host-first bus arbitration (GC queued per die), with content checks.
    let hf = gc_heavy(&["gc.mode=preemptible", "gc.background_free_blocks=4", "timing.bus_arbitration=host-first"]);
    let strict = gc_heavy(&["timing.bus_arbitration=host-first", "sim.strict=true", "timing.copyback=true"]);
    let q = hf.write_latency_us_p99.unwrap();
    eprintln!("host-first: preemptible p99 {q:.0} us, {} GC transfers moved", hf.gc_transfers_deferred);
    assert!(q * 10.0 < b && hf.gc_runs > 1000, "host-first preemptible p99 {q}");
    assert!(strict.copyback_pages > 0 && strict.gc_runs > 1000);
    // 4 dies (2 channels x 2 dies): mean busy fraction + mean waiting fraction.
    let total =
        |r: &RunResult| r.die_utilization_mean.unwrap() + r.die_wait_s_total.unwrap() / r.sim_time_s.unwrap() / 4.0;
    assert!(total(&blocking) <= 1.0 && total(&hf) <= 1.0, "busy + waiting never exceeds the span");
}

#[test]
fn copyback_moves_gc_off_the_bus() {
    let plain = gc_heavy(&[]);
    let cb = gc_heavy(&["timing.copyback=true", "timing.copyback_same_parity=false"]);
    let parity = gc_heavy(&["timing.copyback=true"]);
    assert_eq!(plain.copyback_pages, 0);
    assert_eq!(cb.copyback_pages, cb.gc_copied_pages, "every migration stays in its die");
    assert!(parity.copyback_pages > 0 && parity.copyback_pages < parity.gc_copied_pages);
    assert!(cb.write_latency_us_mean.unwrap() < plain.write_latency_us_mean.unwrap());
    assert!(cb.channel_utilization_mean.unwrap() < plain.channel_utilization_mean.unwrap());
}

/// Saturated writes without GC: throughput = min(dies / (transfer + tPROG), channels / transfer).
fn saturated_write_iops(channels: u32, dies: u32) -> (f64, f64) {
    let s = settings(&[
        &format!("device.channels={channels}"),
        "device.chips_per_channel=1",
        &format!("device.dies_per_chip={dies}"),
        "device.blocks_per_plane=256",
        "workload.requests=20000",
        "workload.queue_depth=64",
        "workload.pattern=sequential",
    ]);
    let r = run_synthetic(&s, &mut |_| {}).unwrap();
    assert_eq!(r.gc_runs, 0);
    let xfer = 2048.0 * 25e-9;
    let bound = (channels as f64 * dies as f64 / (xfer + 200e-6)).min(channels as f64 / xfer);
    (r.iops.unwrap(), bound)
}

#[test]
fn saturated_writes_reach_the_die_or_bus_bound() {
    for (ch, dies) in [(4, 2), (1, 8), (2, 4)] {
        let (got, bound) = saturated_write_iops(ch, dies);
        eprintln!("{ch} channels x {dies} dies: {got:.0} IOPS, bound {bound:.0}");
        assert!(got <= bound * 1.0001 && got > bound * 0.95, "{ch}x{dies}: {got} vs bound {bound}");
    }
}

#[test]
fn every_request_completes_in_open_loop_overload() {
    // Arrivals far faster than the device: requests queue, none is lost, the run ends.
    let r = synth(&["workload.requests=5000", "workload.arrival=poisson", "workload.interarrival_us=1"]);
    assert_eq!(r.requests, 5000);
    assert_eq!(r.write_requests, 5000);
    assert!(r.sim_time_s.unwrap() > 5000.0 * 250e-6 / 4.0 * 0.9);
}

fn t_default() -> TimingSettings {
    TimingSettings {
        read_ns: 20_000,
        program_ns: 200_000,
        erase_ns: 1_500_000,
        byte_ps: 25_000,
        command_ns: 0,
        copyback: false,
        copyback_same_parity: true,
        multiplane: true,
        die_interleaving: true,
        bus_arbitration: BusArbitration::Fifo,
        trim_command_ns: 0,
        trim_page_ns: 0,
        trim_queued: true,
        pipeline: false,
    }
}

#[test]
fn multiplane_program_and_read_share_one_array_time() {
    let g = Geometry {
        channels: 1,
        chips_per_channel: 1,
        dies_per_chip: 1,
        planes_per_die: 2,
        blocks_per_plane: 8,
        pages_per_block: 8,
        page_bytes: 4096,
    };
    let xfer = 4096 * 25;
    let op = |kind, plane: u32, page| FlashOp { kind, cause: Cause::Host, plane, page };
    let mut tl = Timeline::new(&g, t_default());
    let a = tl.exec(&op(OpKind::Program, 0, 3), 0);
    let b = tl.exec(&op(OpKind::Program, 1, 8 * 8 + 3), 0);
    assert_eq!((a, b), (xfer + 200_000, 2 * xfer + 200_000));
    assert_eq!(tl.multiplane_joins, 1);
    // Different page offset: no join.
    let c = tl.exec(&op(OpKind::Program, 0, 4), b);
    let d = tl.exec(&op(OpKind::Program, 1, 8 * 8 + 5), b);
    assert_eq!(d, c + xfer + 200_000);
    // Reads: one tR, then both transfers.
    let t0 = d;
    let r1 = tl.exec(&op(OpKind::Read, 0, 1), t0);
    let r2 = tl.exec(&op(OpKind::Read, 1, 8 * 8 + 1), t0);
    assert_eq!((r1, r2), (t0 + 20_000 + xfer, t0 + 20_000 + 2 * xfer));
    assert_eq!(tl.multiplane_joins, 2);
}

#[test]
fn without_die_interleaving_a_chip_is_one_timeline() {
    let g = Geometry {
        channels: 1,
        chips_per_channel: 1,
        dies_per_chip: 2,
        planes_per_die: 1,
        blocks_per_plane: 8,
        pages_per_block: 8,
        page_bytes: 4096,
    };
    let op = |plane: u32| FlashOp { kind: OpKind::Erase, cause: Cause::Gc, plane, page: 0 };
    let mut on = Timeline::new(&g, TimingSettings { multiplane: false, ..t_default() });
    assert_eq!((on.exec(&op(0), 0), on.exec(&op(1), 0)), (1_500_000, 1_500_000));
    let mut off = Timeline::new(&g, TimingSettings { multiplane: false, die_interleaving: false, ..t_default() });
    assert_eq!((off.exec(&op(0), 0), off.exec(&op(1), 0)), (1_500_000, 3_000_000));
}

#[test]
fn multiplane_raises_large_request_throughput() {
    let base = [
        "device.channels=1",
        "device.chips_per_channel=1",
        "device.dies_per_chip=1",
        "device.planes_per_die=4",
        "device.blocks_per_plane=256",
        "workload.requests=3000",
        "workload.request_bytes=8192",
        "workload.pattern=sequential",
        "ftl.stripe_order=pcwd",
    ];
    let plain = synth(&base);
    let mut mp = base.to_vec();
    mp.push("timing.multiplane=true");
    let mp = synth(&mp);
    assert_eq!(mp.multiplane_joins, 3 * 3000);
    assert!(mp.iops.unwrap() > 2.0 * plain.iops.unwrap(), "{:?} vs {:?}", mp.iops, plain.iops);
}

#[test]
fn write_buffer_absorbs_hot_overwrites() {
    let base = [
        "workload.pattern=hotcold",
        "workload.hot_fraction=0.01",
        "workload.hot_traffic=0.9",
        "workload.requests=50000",
        "workload.read_fraction=0.2",
        "sim.strict=true",
    ];
    let plain = synth(&base);
    let mut with = base.to_vec();
    with.push("buffer.bytes=4194304");
    let buf = synth(&with);
    assert_eq!(plain.buffer_write_hits, 0);
    assert_eq!(buf.host_write_pages, plain.host_write_pages);
    assert!(
        buf.buffer_write_hits > 10_000 && buf.buffer_read_hits > 1000,
        "{} {}",
        buf.buffer_write_hits,
        buf.buffer_read_hits
    );
    assert_eq!(buf.nand_program_pages_host, buf.buffer_flush_pages);
    assert!(buf.waf.unwrap() < 0.7 * plain.waf.unwrap());
    assert!(buf.write_latency_us_mean.unwrap() < plain.write_latency_us_mean.unwrap());
}

#[test]
fn separate_devices_get_their_own_ranges_and_time_scale_stretches_arrivals() {
    // Two devices writing the same offset land on different logical pages with `separate`.
    let base = ["workload.kind=trace", "workload.trace_path=x", "workload.arrival=trace", "sim.track_content=true"];
    let req = |dev, t| Request { time_ns: t, op: Op::Write, offset_bytes: 4096, len_bytes: 2048, device: dev };
    let reqs = [req(0, 0), req(1, 1_000_000), Request { op: Op::Read, ..req(0, 2_000_000) }];
    let mut sets = base.to_vec();
    sets.extend(["workload.devices=separate", "workload.device_count=2"]);
    let s = settings(&sets);
    let r = run(&s, reqs.iter().map(|r| Ok::<_, String>(*r)), &mut |_| {}).unwrap();
    assert_eq!((r.host_write_pages, r.unmapped_read_pages), (2, 0));
    assert_eq!(r.nand_program_pages, 2);
    // Folded, both writes hit one logical page: the read still finds it, and the second write invalidated the first.
    let s = settings(&base);
    let r = run(&s, reqs.iter().map(|r| Ok::<_, String>(*r)), &mut |_| {}).unwrap();
    assert_eq!(r.host_write_pages, 2);
    // time_scale = 2 doubles the trace's span (three requests, 1 ms apart, idle device).
    let span = |scale: &str| {
        let mut sets = base.to_vec();
        let k = format!("workload.time_scale={scale}");
        sets.push(&k);
        let s = settings(&sets);
        run(&s, reqs.iter().map(|r| Ok::<_, String>(*r)), &mut |_| {}).unwrap().sim_time_s.unwrap()
    };
    let (one, two) = (span("1.0"), span("2.0"));
    assert!((two - one - 0.002).abs() < 1e-9, "spans {one} and {two}");
}

/// Keeps the end-of-run record and the last request record.
#[derive(Default)]
struct EndSeen {
    end: Option<flashlab_sim::RunEnd>,
    last_gc_copied: u64,
}

impl flashlab_sim::Observer for EndSeen {
    fn wants_requests(&self) -> bool {
        true
    }
    fn request(&mut self, r: &flashlab_sim::RequestRecord) {
        assert!(r.gc_copied_pages >= self.last_gc_copied, "cumulative GC copies never fall");
        self.last_gc_copied = r.gc_copied_pages;
    }
    fn end(&mut self, end: &flashlab_sim::RunEnd) {
        assert!(self.end.is_none(), "end is called once");
        self.end = Some(end.clone());
    }
}

#[test]
fn run_end_agrees_with_the_flat_result() {
    let s = settings(&[
        "device.spare_factor=0.1",
        "workload.prefill=true",
        "workload.warmup=5000",
        "workload.requests=20000",
        "workload.read_fraction=0.3",
    ]);
    let mut seen = EndSeen::default();
    let r = flashlab_sim::run_synthetic_observed(&s, &mut seen).unwrap();
    let end = seen.end.expect("end called");
    let names: Vec<&str> = end.programs_by_cause.iter().map(|c| c.0).collect();
    let all: Vec<&str> = Cause::ALL.iter().map(|c| c.name()).collect();
    assert_eq!(names, all);
    assert_eq!(end.programs_by_cause.iter().map(|c| c.1).sum::<u64>(), r.nand_program_pages);
    assert_eq!(end.programs_by_cause[0].1, r.nand_program_pages_host);
    assert_eq!(end.programs_by_cause[1].1, r.nand_program_pages_gc);
    assert!(r.gc_copied_pages > 0, "the run exercises GC");
    assert_eq!(end.block_erases.len() as u32, s.geometry.blocks());
    assert_eq!(end.blocks_per_plane, 64);
    assert_eq!(end.block_erases.iter().sum::<u64>(), r.nand_erases);
    assert_eq!(*end.block_erases.iter().max().unwrap(), r.erase_count_max);
    for (cdf, p50, max) in [
        (&end.read_latency_cdf, r.read_latency_us_p50.unwrap(), r.read_latency_us_max.unwrap()),
        (&end.write_latency_cdf, r.write_latency_us_p50.unwrap(), r.write_latency_us_max.unwrap()),
    ] {
        assert_eq!(cdf.last().unwrap().1, 1.0);
        assert!(cdf.windows(2).all(|w| w[0].0 < w[1].0 && w[0].1 < w[1].1), "strictly increasing");
        // The first kept point reaching half is the median's bin or one at most
        // 1/100 decade (2.3 %) above it (thinning).
        let median = cdf.iter().find(|p| p.1 >= 0.5).unwrap().0;
        assert!(median >= p50 * (1.0 - 1e-3) && median <= p50 * 1.024, "{median} vs {p50}");
        assert!((cdf.last().unwrap().0 - max).abs() <= max * 1e-3, "{:?} vs {max}", cdf.last());
    }
    let counting = settings(&["workload.requests=1000", "timing.enabled=false"]);
    let mut seen = EndSeen::default();
    flashlab_sim::run_synthetic_observed(&counting, &mut seen).unwrap();
    let end = seen.end.unwrap();
    assert!(end.read_latency_cdf.is_empty() && end.write_latency_cdf.is_empty());
}

/// `workload.prewrite_reads`: every page read before it is written gets written first
/// (untimed, uncounted), so no read finds an unmapped page; what is measured otherwise
/// stays the same workload.
#[test]
fn prewrite_reads_maps_every_page_read_before_written() {
    let sets = ["workload.requests=5000", "workload.read_fraction=0.5"];
    let plain = synth(&sets);
    assert!(plain.unmapped_read_pages > 1000, "{}", plain.unmapped_read_pages);
    let pre = synth(&[&sets[..], &["workload.prewrite_reads=true"]].concat());
    assert_eq!(pre.unmapped_read_pages, 0);
    assert_eq!((pre.host_write_pages, pre.host_read_pages), (plain.host_write_pages, plain.host_read_pages));
    assert!(pre.prewritten_pages > 0 && pre.prewritten_pages <= plain.unmapped_read_pages);
    assert_eq!(pre.nand_read_pages, plain.nand_read_pages + plain.unmapped_read_pages);
    // A trace: pages 0 and 1 read before written, page 2 written first.
    let req = |t: u64, op: Op, page: u64| {
        Ok::<_, std::convert::Infallible>(Request {
            time_ns: t,
            op,
            offset_bytes: page * 2048,
            len_bytes: 2048,
            device: 0,
        })
    };
    let trace = || {
        vec![req(0, Op::Read, 0), req(1, Op::Write, 2), req(2, Op::Read, 2), req(3, Op::Read, 1), req(4, Op::Read, 0)]
    };
    let s = settings(&["workload.kind=trace", "workload.trace_path=x", "workload.prewrite_reads=true"]);
    struct Quiet;
    impl flashlab_sim::Observer for Quiet {}
    let r =
        flashlab_sim::run_prewrite_observed(&s, Some(trace().into_iter()), trace().into_iter(), &mut Quiet).unwrap();
    assert_eq!((r.prewritten_pages, r.unmapped_read_pages, r.host_write_pages), (2, 0, 1));
}

/// Timestamps that go back are counted (and issued at the earlier time); pages beyond the
/// logical space are folded and counted.
#[test]
fn reordered_and_folded_requests_are_counted() {
    let s = settings(&["workload.kind=trace", "workload.trace_path=x", "workload.arrival=trace"]);
    let cap = s.ftl.logical_pages;
    let req = |t: u64, page: u64| {
        Ok::<_, std::convert::Infallible>(Request {
            time_ns: t,
            op: Op::Write,
            offset_bytes: page * 2048,
            len_bytes: 2048,
            device: 0,
        })
    };
    let reqs = vec![req(100, 0), req(50, 1), req(200, cap + 5), req(150, 2), req(300, 3)];
    let r = run(&s, reqs.into_iter(), &mut |_| {}).unwrap();
    assert_eq!((r.reordered_requests, r.folded_requests, r.outlying_timestamps), (2, 1, 0));
    assert_eq!(r.skipped_lines, 0);
}

/// Feed a synthetic workload's requests through [`Ssd`] one by one, as `run_synthetic` would.
fn through_ssd(s: &flashlab_sim::Settings) -> RunResult {
    let gen = flashlab_sim::hotness::synthetic_requests(s).expect("a synthetic workload");
    let mut ssd = Ssd::new(s.clone()).unwrap();
    for (i, r) in gen.enumerate() {
        let c = ssd.submit(r.op, r.offset_bytes, r.len_bytes, r.time_ns).unwrap();
        assert_eq!(c.index, i as u64);
        if let (Some(issue), Some(done)) = (c.issue_ns, c.done_ns) {
            assert!(issue >= r.time_ns && done >= issue && c.latency_ns == Some(done - issue));
        }
    }
    ssd.result()
}

#[test]
fn ssd_handle_gives_the_same_result_as_a_run() {
    let cases: [&[&str]; 4] = [
        &[
            "workload.requests=20000",
            "workload.arrival=\"poisson\"",
            "workload.interarrival_us=150",
            "workload.read_fraction=0.3",
            "workload.request_bytes_max=16384",
        ],
        &[
            "workload.requests=20000",
            "workload.arrival=\"fixed\"",
            "workload.interarrival_us=80",
            "workload.prefill=true",
            "workload.aging_writes=3000",
            "workload.warmup=2000",
            "gc.victim=\"cost-benefit\"",
        ],
        &["workload.requests=20000", "timing.enabled=false", "workload.trim_fraction=0.1", "workload.prefill=true"],
        &[
            "workload.requests=20000",
            "workload.arrival=\"fixed\"",
            "workload.interarrival_us=50",
            "buffer.bytes=262144",
            "workload.pattern=\"zipf\"",
        ],
    ];
    for sets in cases {
        let s = settings(sets);
        let run = run_synthetic(&s, &mut |_| {}).unwrap();
        assert!(run.requests > 0);
        assert_eq!(through_ssd(&s), run, "{sets:?}");
    }
}

#[test]
fn ssd_result_at_any_moment_and_flush() {
    let s = settings(&["buffer.bytes=65536", "workload.warmup=10", "sim.strict=true", "sim.track_content=true"]);
    let page = s.page_bytes();
    let mut ssd = Ssd::new(s).unwrap();
    assert_eq!(ssd.result().requests, 0);
    for i in 0..10 {
        ssd.submit(Op::Write, i * page, page, i * 1000).unwrap();
    }
    // Warm-up over: nothing measured yet, and asking did not disturb the measurement.
    assert_eq!(ssd.result().requests, 0);
    let c = ssd.submit(Op::Write, 0, 2 * page, 20_000).unwrap();
    assert_eq!((c.index, c.pages), (10, 2));
    let r = ssd.result();
    assert_eq!((r.requests, r.write_requests, r.host_write_pages, r.buffer_write_hits), (1, 1, 2, 2));
    let before = r.nand_program_pages;
    let done = ssd.flush(30_000).unwrap().unwrap();
    assert!(done > 30_000);
    let r = ssd.result();
    assert!(r.nand_program_pages > before && r.buffer_flush_pages >= 10, "{r:?}");
    assert_eq!(ssd.flush(done).unwrap(), Some(done), "an empty buffer flushes at once");
    let read = ssd.submit(Op::Read, 0, page, done).unwrap();
    assert!(read.latency_ns.unwrap() > 0);
    assert!(matches!(ssd.submit(Op::Read, 0, 0, done), Err(SimError::Source(_))));
}

#[test]
fn timed_dftl_schedules_translation_traffic() {
    let run = |cache: &str| {
        synth(&[
            "sim.strict=true",
            "ftl.mapping=dftl",
            cache,
            "workload.requests=20000",
            "workload.read_fraction=0.3",
            "workload.prefill=true",
            "workload.queue_depth=8",
        ])
    };
    let small = run("ftl.map_cache_entries=64");
    let whole = run("ftl.map_cache_entries=1000000");
    assert_eq!((whole.map_reads, whole.map_writes, whole.map_cache_hit_ratio), (Some(0), Some(0), Some(1.0)));
    let (reads, writes) = (small.map_reads.unwrap(), small.map_writes.unwrap());
    assert!(reads > 0 && writes > 0 && small.map_cache_hit_ratio.unwrap() < 1.0);
    assert_eq!(small.nand_program_pages_map, writes);
    assert_eq!(small.nand_read_pages, whole.nand_read_pages - whole.gc_copied_pages + small.gc_copied_pages + reads);
    // Translation traffic occupies the dies: the same requests take longer.
    assert!(small.sim_time_s.unwrap() > whole.sim_time_s.unwrap());
    assert!(small.write_latency_us_mean.unwrap() > whole.write_latency_us_mean.unwrap());
}
