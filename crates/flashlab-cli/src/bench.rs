//! `flashlab bench`: simulated host requests per second on fixed workloads.

use crate::output::{table, write_json};
use serde::Serialize;
use std::path::PathBuf;
use std::time::Instant;

#[derive(Serialize)]
struct BenchRow {
    name: String,
    description: String,
    requests: u64,
    wall_time_s: f64,
    requests_per_s: f64,
    waf: Option<f64>,
    /// Simulator state per physical page (SSD runs; null for file-system rows).
    state_bytes_per_physical_page: Option<f64>,
    /// RAM the mapping scheme's tables would need in a controller.
    mapping_ram_bytes: Option<u64>,
    peak_rss_bytes: Option<u64>,
}

struct Case {
    name: String,
    description: String,
    sets: Vec<String>,
    /// Replay the workload as an in-memory SSDsim trace (generated untimed, parsed timed).
    as_trace: bool,
}

fn cases(quick: bool) -> Vec<Case> {
    let scale = if quick { 8 } else { 1 };
    let one_plane = "device.channels=1 device.chips_per_channel=1 device.dies_per_chip=1 device.planes_per_die=1";
    let wasim_l = (8192.0f64 * 0.9).round() as u64 * 64 / scale;
    let counting = format!(
        "{one_plane} device.blocks_per_plane={} device.pages_per_block=64 device.spare_factor=0.1 timing.enabled=false \
         gc.victim=greedy workload.prefill=true workload.requests={}",
        8192 / scale,
        15 * wasim_l
    );
    let timed = format!(
        "device.channels=8 device.chips_per_channel=2 device.dies_per_chip=2 device.planes_per_die=2 device.blocks_per_plane={} \
         device.pages_per_block=64 device.page_bytes=4096 device.spare_factor=0.07 workload.prefill=true \
         workload.requests={} workload.pattern=hotcold workload.hot_fraction=0.9 workload.hot_traffic=1.0 \
         workload.arrival=fixed workload.interarrival_us=100",
        128,
        1_000_000 / scale

    );
    let split = |s: String| s.split_whitespace().map(String::from).collect();
    vec![
        Case { name: "counting-wasim".into(), description: format!("counting mode, 1 plane x {} blocks x 64 pages, spare 0.1, greedy, prefill + 15 x logical capacity uniform writes (wasim.c's work{})", 8192 / scale, if quick { " at 1/8 size" } else { "" }), sets: split(counting), as_trace: false },
        Case { name: "timed-ssdsim-trace".into(), description: format!("timing on, 8x2x2x2 x 128 blocks x 64 pages x 4 KiB, spare 0.07, prefilled, an SSDsim-format trace of {} 4 KiB writes uniform over 90 % of the space, one every 100 us (parsing included)", 1_000_000 / scale), sets: split(timed), as_trace: true },
    ]
    .into_iter()
    .chain(mapping_cases(scale))
    .collect()
}

/// Issue 14: 1 M random and 1 M sequential 4 KiB writes per mapping scheme, counting and
/// timed, on a prefilled 8x2x2x2 x 128 blocks x 64 pages x 4 KiB device (spare 0.07).
fn mapping_cases(scale: u64) -> impl Iterator<Item = Case> {
    let device = "device.channels=8 device.chips_per_channel=2 device.dies_per_chip=2 device.planes_per_die=2 \
                  device.blocks_per_plane=128 device.pages_per_block=64 device.page_bytes=4096 device.spare_factor=0.07 \
                  workload.prefill=true workload.arrival=fixed workload.interarrival_us=100";
    let schemes = ["page", "block", "bast", "bast-padding", "fast", "dftl"];
    let patterns = [("random", "uniform"), ("seq", "sequential")];
    let modes = [("counting", "false"), ("timed", "true")];
    schemes.into_iter().flat_map(move |m| {
        patterns.into_iter().flat_map(move |(pn, p)| {
            modes.into_iter().map(move |(mn, t)| {
                let sets = format!(
                    "{device} ftl.mapping=\"{m}\" workload.pattern={p} timing.enabled={t} workload.requests={}",
                    1_000_000 / scale
                );
                Case {
                    name: format!("map-{m}-{pn}-{mn}"),
                    description: format!("ftl.mapping = {m}, 1M {p} 4 KiB writes, {mn}, 8x2x2x2 x 128 x 64 x 4 KiB, spare 0.07, prefilled"),
                    sets: sets.split_whitespace().map(String::from).collect(),
                    as_trace: false,
                }
            })
        })
    })
}

pub fn bench(json: Option<PathBuf>, quick: bool) -> anyhow::Result<()> {
    let mut rows = Vec::new();
    for c in cases(quick) {
        let (_, s) = flashlab_config::load("", "bench", &c.sets)?;
        let (r, wall) = if c.as_trace {
            run_as_trace(&c.sets)?
        } else {
            run_timed(|| flashlab_sim::run_synthetic(&s, &mut |_| {}))?
        };
        rows.push(BenchRow {
            name: c.name,
            description: c.description,
            requests: r.requests,
            wall_time_s: wall,
            requests_per_s: r.requests as f64 / wall,
            waf: r.waf,
            state_bytes_per_physical_page: Some(r.memory_bytes as f64 / r.physical_pages as f64),
            mapping_ram_bytes: r.mapping_ram_bytes,
            peak_rss_bytes: peak_rss(),
        });
    }
    rows.push(fs_iozone_flashfs(quick)?);
    for r in &rows {
        println!("{}: {}", r.name, r.description);
        table(&[
            ("  requests", r.requests.to_string()),
            ("  wall time s", format!("{:.3}", r.wall_time_s)),
            ("  requests/s", format!("{:.0}", r.requests_per_s)),
            ("  WAF", r.waf.map_or("-".into(), |w| format!("{w:.4}"))),
            ("  state bytes/physical page", r.state_bytes_per_physical_page.map_or("-".into(), |b| format!("{b:.2}"))),
            ("  mapping RAM bytes", r.mapping_ram_bytes.map_or("-".into(), |b| b.to_string())),
            ("  peak RSS so far MiB", r.peak_rss_bytes.map_or("-".into(), |b| format!("{:.1}", b as f64 / 1048576.0))),
        ]);
    }
    if let Some(p) = json {
        write_json(&p, &rows)?;
    }
    Ok(())
}

/// `fs bench`'s IOZone on flashfs under the page cache: application requests
/// (every phase but the filler) per wall-clock second.
fn fs_iozone_flashfs(quick: bool) -> anyhow::Result<BenchRow> {
    let (blocks, file_kib) = if quick { (128, 4096) } else { (1024, 32768) };
    let sets: Vec<String> = [
        format!("flashfs.flash.blocks={blocks}"),
        "fs.kind=\"flashfs\"".into(),
        format!("fs.workload.file_kib={file_kib}"),
        "fs.workload.utilisation=50.0".into(),
    ]
    .into();
    let (raw, ssd) = flashlab_config::load("", "bench", &sets)?;
    let spec = raw.resolve_fs_bench()?;
    let start = Instant::now();
    let out = crate::fs_bench::run_kind(crate::fs_bench::FsKind::Flashfs, &raw, &ssd, &spec)?;
    let wall = start.elapsed().as_secs_f64();
    let requests: u64 = out.report.phases.iter().filter(|p| p.measured).map(|p| p.requests).sum();
    Ok(BenchRow {
        name: "fs-iozone-flashfs".into(),
        description: format!(
            "fs bench: IOZone (4 KiB requests, {} MiB file, 50 % utilisation, six phases) on flashfs under the page cache, {} MiB raw flash",
            file_kib / 1024,
            blocks / 8
        ),
        requests,
        wall_time_s: wall,
        requests_per_s: requests as f64 / wall,
        waf: out.report.fs_waf,
        state_bytes_per_physical_page: None,
        mapping_ram_bytes: None,
        peak_rss_bytes: peak_rss(),
    })
}

/// Peak resident set size of this process (Linux), in bytes.
fn peak_rss() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse::<u64>().ok().map(|kb| kb * 1024)
}

fn run_timed(
    f: impl FnOnce() -> Result<flashlab_sim::RunResult, flashlab_sim::SimError>,
) -> anyhow::Result<(flashlab_sim::RunResult, f64)> {
    let start = Instant::now();
    let r = f()?;
    Ok((r, start.elapsed().as_secs_f64()))
}

/// Write the synthetic workload as SSDsim text in memory, then time its replay from that text.
fn run_as_trace(sets: &[String]) -> anyhow::Result<(flashlab_sim::RunResult, f64)> {
    let (_, synth) = flashlab_config::load("", "bench", sets)?;
    let mut w = flashlab_trace::TraceWriter::new(Vec::new(), flashlab_trace::TraceFormat::Ssdsim)?;
    for req in flashlab_sim::hotness::synthetic_requests(&synth).expect("synthetic bench workload") {
        w.write(&req)?;
    }
    let text = w.finish()?;
    let mut trace_sets = sets.to_vec();
    trace_sets
        .extend(["workload.kind=trace", "workload.trace_path=bench.ascii", "workload.arrival=trace"].map(String::from));
    let (_, s) = flashlab_config::load("", "bench", &trace_sets)?;
    let reader = flashlab_trace::TraceReader::new(
        &text[..],
        flashlab_trace::TraceFormat::Ssdsim,
        flashlab_trace::ReaderOptions::named("bench.ascii"),
    );
    run_timed(|| flashlab_sim::run(&s, reader, &mut |_| {}))
}
