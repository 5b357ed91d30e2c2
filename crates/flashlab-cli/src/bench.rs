//! `flashlab bench`: simulated host requests per second on fixed workloads.

use crate::output::{table, write_json};
use serde::{Deserialize, Serialize};
use std::path::PathBuf;
use std::time::Instant;

#[derive(Serialize, Deserialize)]
pub(crate) struct BenchRow {
    name: String,
    description: String,
    requests: u64,
    wall_time_s: f64,
    /// CPU time of the timed part (this thread): the figure to compare on a shared machine.
    #[serde(deserialize_with = "crate::bench_isolate::null_as_nan")]
    cpu_time_s: f64,
    /// CPU time of the timed part, all threads: a trace case parses on a second
    /// thread (`flashlab_trace::prefetched`), whose time `cpu_time_s` leaves out.
    #[serde(deserialize_with = "crate::bench_isolate::null_as_nan")]
    process_cpu_time_s: f64,
    requests_per_s: f64,
    /// Application write requests among `requests` (file-system cases: the
    /// requests of the measured phases that only write); null elsewhere.
    writes: Option<u64>,
    /// `writes` per wall second (divide `writes` by `cpu_time_s` on a shared machine).
    writes_per_s: Option<f64>,
    waf: Option<f64>,
    /// Simulator state per physical page (SSD runs; null for file-system and swap rows).
    state_bytes_per_physical_page: Option<f64>,
    /// The greedy closed form's WAF where the case compares with it.
    waf_closed_form: Option<f64>,
    /// RAM the mapping scheme's tables would need in a controller.
    mapping_ram_bytes: Option<u64>,
    peak_rss_bytes: Option<u64>,
}

pub(crate) struct Case {
    pub(crate) name: String,
    pub(crate) description: String,
    pub(crate) sets: Vec<String>,
    pub(crate) kind: Kind,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Kind {
    Synthetic,
    /// Replay the workload as an in-memory SSDsim trace (generated untimed, parsed timed).
    Trace,
    /// 4 KiB overwrites through flashfs → UBI → NAND (`sets` unused).
    FlashfsOverwrite,
    /// `scale-4tib`: aging as long as the logical capacity (run only when named by `--case`).
    Scale,
    /// `fs bench`'s IOZone on a file system under the page cache (issue 15).
    FsIozone(crate::fs_bench::FsKind),
    /// Simulated swap operations in counting mode (issue 16).
    Swap,
}

/// What a case's run reports besides its time.
pub(crate) struct Outcome {
    pub(crate) requests: u64,
    /// Write requests among `requests`, where the case tells them apart.
    pub(crate) writes: Option<u64>,
    pub(crate) waf: Option<f64>,
    pub(crate) memory_bytes: u64,
    pub(crate) physical_pages: u64,
    pub(crate) mapping_ram_bytes: Option<u64>,
    /// The WAF the greedy closed form predicts (`scale-4tib`).
    pub(crate) waf_closed_form: Option<f64>,
}

impl Outcome {
    pub(crate) fn of(r: &flashlab_sim::RunResult) -> Outcome {
        Outcome {
            requests: r.requests,
            writes: None,
            waf: r.waf,
            memory_bytes: r.memory_bytes,
            physical_pages: r.physical_pages,
            mapping_ram_bytes: r.mapping_ram_bytes,
            waf_closed_form: None,
        }
    }
}

fn cases(quick: bool, scale_divisor: u32) -> Vec<Case> {
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
        Case { name: "counting-wasim".into(), description: format!("counting mode, 1 plane x {} blocks x 64 pages, spare 0.1, greedy, prefill + 15 x logical capacity uniform writes (wasim.c's work{})", 8192 / scale, if quick { " at 1/8 size" } else { "" }), sets: split(counting), kind: Kind::Synthetic },
        Case { name: "timed-ssdsim-trace".into(), description: format!("timing on, 8x2x2x2 x 128 blocks x 64 pages x 4 KiB, spare 0.07, prefilled, an SSDsim-format trace of {} 4 KiB writes uniform over 90 % of the space, one every 100 us (parsing included)", 1_000_000 / scale), sets: split(timed.clone()), kind: Kind::Trace },
        Case { name: "timed-ssdsim-trace-pipelined".into(), description: format!("timed-ssdsim-trace with timing.pipeline = true (the timeline on a second thread; three threads with the parser) ({} requests)", 1_000_000 / scale), sets: split(format!("{timed} timing.pipeline=true")), kind: Kind::Trace },
    ]
    .into_iter()
    .chain(mapping_cases(scale))
    .chain([crate::bench_cases::flashfs_overwrite(scale), crate::bench_cases::scale_4tib(scale_divisor)])
    .chain(crate::bench_host::fs_iozone_cases(quick))
    .chain([crate::bench_host::swap_case(quick)])
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
                    kind: Kind::Synthetic,
                }
            })
        })
    })
}

/// `flashlab bench`'s options.
pub struct BenchArgs {
    pub json: Option<PathBuf>,
    pub quick: bool,
    /// Run only the cases whose names start with one of these (all but `scale-4tib` when empty).
    pub cases: Vec<String>,
    /// A built `wasim.c` binary: run it on `counting-wasim`'s work and report the ratio.
    pub wasim: Option<PathBuf>,
    /// Divide `scale-4tib`'s blocks per plane (and so every phase's length) by this.
    pub scale_divisor: u32,
    /// Run every chosen case in this process, one after another. By default each case
    /// runs in a process of its own (`bench_isolate`) when more than one is chosen.
    pub in_process: bool,
    /// Internal (`--child NAME`): run exactly the case NAME and print its row as JSON.
    pub child: Option<String>,
}

pub fn bench(a: BenchArgs) -> anyhow::Result<()> {
    if a.scale_divisor == 0 || !a.scale_divisor.is_power_of_two() || a.scale_divisor > 32768 {
        anyhow::bail!("--scale-divisor {}: expected a power of two in 1..=32768", a.scale_divisor);
    }
    let chosen = choose(&a)?;
    let rows = if a.child.is_none() && !a.in_process && chosen.len() > 1 {
        // One process per case: a case must not inherit the heap (or the freed and
        // returned memory) of the cases before it, and its peak RSS must be its own.
        chosen.iter().map(|c| crate::bench_isolate::run_in_child(&c.name, &a)).collect::<anyhow::Result<Vec<_>>>()?
    } else {
        chosen.into_iter().map(|c| run_case(c, a.quick)).collect::<anyhow::Result<Vec<_>>>()?
    };
    if a.child.is_some() {
        return write_json(std::path::Path::new("-"), &rows);
    }
    if let Some(bin) = &a.wasim {
        if let Some(row) = rows.iter().find(|r| r.name == "counting-wasim") {
            let (wall, cpu) = crate::bench_cases::run_wasim(bin, a.quick)?;
            println!(
                "wasim.c on counting-wasim's work: {wall:.3} s wall, {cpu:.3} s CPU; flashlab / wasim.c: {:.2} x wall, {:.2} x CPU",
                row.wall_time_s / wall,
                row.cpu_time_s / cpu
            );
        }
    }
    for r in &rows {
        println!("{}: {}", r.name, r.description);
        table(&[
            ("  requests", r.requests.to_string()),
            ("  wall time s", format!("{:.3}", r.wall_time_s)),
            ("  CPU time s", format!("{:.3}", r.cpu_time_s)),
            ("  CPU time s, all threads", format!("{:.3}", r.process_cpu_time_s)),
            ("  requests/s", format!("{:.0}", r.requests_per_s)),
            ("  writes", r.writes.map_or("-".into(), |w| w.to_string())),
            ("  writes/s", r.writes_per_s.map_or("-".into(), |w| format!("{w:.0}"))),
            ("  WAF", r.waf.map_or("-".into(), |w| format!("{w:.4}"))),
            ("  WAF closed form", r.waf_closed_form.map_or("-".into(), |w| format!("{w:.4}"))),
            ("  state bytes/physical page", r.state_bytes_per_physical_page.map_or("-".into(), |b| format!("{b:.2}"))),
            ("  mapping RAM bytes", r.mapping_ram_bytes.map_or("-".into(), |b| b.to_string())),
            ("  peak RSS MiB", r.peak_rss_bytes.map_or("-".into(), |b| format!("{:.1}", b as f64 / 1048576.0))),
        ]);
    }
    if let Some(p) = a.json {
        write_json(&p, &rows)?;
    }
    Ok(())
}

/// The cases `a` names: `--child`'s exact name, else those whose names start with a
/// `--case` prefix, else all but `scale-4tib`.
fn choose(a: &BenchArgs) -> anyhow::Result<Vec<Case>> {
    let all = cases(a.quick, a.scale_divisor);
    if let Some(name) = &a.child {
        let one: Vec<Case> = all.into_iter().filter(|c| &c.name == name).collect();
        anyhow::ensure!(one.len() == 1, "--child {name}: no such case");
        return Ok(one);
    }
    if a.cases.is_empty() {
        return Ok(all.into_iter().filter(|c| !c.name.starts_with("scale-")).collect());
    }
    let names: Vec<String> = all.iter().map(|c| c.name.clone()).collect();
    if let Some(bad) = a.cases.iter().find(|w| !names.iter().any(|n| n.starts_with(w.as_str()))) {
        anyhow::bail!("--case {bad}: no such case; cases: {}", names.join(", "));
    }
    Ok(all.into_iter().filter(|c| a.cases.iter().any(|w| c.name.starts_with(w.as_str()))).collect())
}

/// Run one case in this process and measure it.
fn run_case(c: Case, quick: bool) -> anyhow::Result<BenchRow> {
    // A trace case's text is generated before the clocks start: only its parsing is timed.
    let trace = if let Kind::Trace = c.kind { trace_text(&c.sets)? } else { Vec::new() };
    reset_peak_rss();
    let (cpu0, proc0) = (thread_cpu_s(), process_cpu_s());
    let (r, wall) = match c.kind {
        Kind::Trace => replay_trace(&c.sets, &trace)?,
        Kind::Synthetic => {
            let (_, s) = flashlab_config::load("", "bench", &c.sets)?;
            run_timed(|| flashlab_sim::run_synthetic(&s, &mut |_| {}))?
        }
        Kind::FlashfsOverwrite => crate::bench_cases::run_flashfs_overwrite(&c, quick)?,
        Kind::Scale => crate::bench_cases::run_scale(&c)?,
        Kind::FsIozone(k) => crate::bench_host::run_fs_iozone(k, quick)?,
        Kind::Swap => crate::bench_host::run_swap(quick)?,
    };
    let cpu = thread_cpu_s().zip(cpu0).map_or(f64::NAN, |(b, a)| b - a);
    let process_cpu = process_cpu_s().zip(proc0).map_or(f64::NAN, |(b, a)| b - a);
    Ok(BenchRow {
        name: c.name,
        description: c.description,
        requests: r.requests,
        wall_time_s: wall,
        cpu_time_s: cpu,
        process_cpu_time_s: process_cpu,
        requests_per_s: r.requests as f64 / wall,
        writes: r.writes,
        writes_per_s: r.writes.map(|w| w as f64 / wall),
        waf: r.waf,
        waf_closed_form: r.waf_closed_form,
        state_bytes_per_physical_page: (r.physical_pages > 0).then(|| r.memory_bytes as f64 / r.physical_pages as f64),
        mapping_ram_bytes: r.mapping_ram_bytes,
        peak_rss_bytes: peak_rss(),
    })
}

/// Start a new peak-RSS measurement (Linux: `clear_refs` 5 resets VmHWM to the current RSS).
fn reset_peak_rss() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

/// CPU time of this thread so far in seconds (Linux `schedstat`, ns on the CPU).
fn thread_cpu_s() -> Option<f64> {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    s.split_whitespace().next()?.parse::<u64>().ok().map(|ns| ns as f64 * 1e-9)
}

/// CPU time of this process so far (all threads, exited ones included) in seconds.
#[cfg(unix)]
fn process_cpu_s() -> Option<f64> {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is a valid, exclusively borrowed `timespec` for the call to write;
    // `CLOCK_PROCESS_CPUTIME_ID` is a clock every Linux and POSIX system provides, and
    // a failure is reported by the return value, which is checked. Exercised by
    // `tests::process_cpu_counts_a_second_thread`.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut ts) };
    (rc == 0).then_some(ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9)
}

#[cfg(not(unix))]
fn process_cpu_s() -> Option<f64> {
    None
}

/// Peak resident set size of this process since the last [`reset_peak_rss`] (Linux), in bytes.
fn peak_rss() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse::<u64>().ok().map(|kb| kb * 1024)
}

pub(crate) fn run_timed(
    f: impl FnOnce() -> Result<flashlab_sim::RunResult, flashlab_sim::SimError>,
) -> anyhow::Result<(Outcome, f64)> {
    let start = Instant::now();
    let r = f()?;
    Ok((Outcome::of(&r), start.elapsed().as_secs_f64()))
}

/// The synthetic workload of `sets` as SSDsim trace text (untimed).
fn trace_text(sets: &[String]) -> anyhow::Result<Vec<u8>> {
    let (_, synth) = flashlab_config::load("", "bench", sets)?;
    let mut w = flashlab_trace::TraceWriter::new(Vec::new(), flashlab_trace::TraceFormat::Ssdsim)?;
    for req in flashlab_sim::hotness::synthetic_requests(&synth).expect("synthetic bench workload") {
        w.write(&req)?;
    }
    Ok(w.finish()?)
}

/// Time the replay of SSDsim trace `text` (parsing included) on the device of `sets`.
fn replay_trace(sets: &[String], text: &[u8]) -> anyhow::Result<(Outcome, f64)> {
    let mut trace_sets = sets.to_vec();
    trace_sets
        .extend(["workload.kind=trace", "workload.trace_path=bench.ascii", "workload.arrival=trace"].map(String::from));
    let (_, s) = flashlab_config::load("", "bench", &trace_sets)?;
    let reader = flashlab_trace::TraceReader::new(
        text,
        flashlab_trace::TraceFormat::Ssdsim,
        flashlab_trace::ReaderOptions::named("bench.ascii"),
    );
    // Parsed on a second thread, as `flashlab run` does (`flashlab_trace::prefetched`).
    run_timed(|| flashlab_trace::prefetched(reader, |reqs| flashlab_sim::run(&s, reqs, &mut |_| {})).0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    #[test]
    fn process_cpu_counts_a_second_thread() {
        let spin = || {
            let t = Instant::now();
            let mut x = 0u64;
            while t.elapsed().as_millis() < 50 {
                x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(1));
            }
            x
        };
        let (p0, t0) = (process_cpu_s().unwrap(), thread_cpu_s().unwrap());
        std::thread::scope(|s| s.spawn(spin).join().unwrap());
        let (p1, t1) = (process_cpu_s().unwrap(), thread_cpu_s().unwrap());
        assert!(p1 - p0 > t1 - t0, "process {} s, this thread {} s", p1 - p0, t1 - t0);
    }
}
