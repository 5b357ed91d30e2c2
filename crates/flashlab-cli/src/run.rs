//! `flashlab run`.

use crate::config_cmd::{load_config, ConfigArgs};
use crate::observe::CliObserver;
use crate::output::{opt, progress, table, write_json};
use anyhow::Context;
use clap::Args;
use flashlab_config::{RawConfig, Settings, Source, TraceSettings};
use flashlab_sim::{Observer, RunResult};
use flashlab_trace::{FormatChoice, ReaderOptions, TraceReader};
use std::io::BufReader;
use std::path::{Path, PathBuf};
use std::time::Instant;

#[derive(Args)]
pub struct RunArgs {
    #[command(flatten)]
    c: ConfigArgs,
    /// No progress bar.
    #[arg(long)]
    quiet: bool,
    /// Count and skip bad trace lines instead of stopping at the first.
    #[arg(long)]
    skip_bad_lines: bool,
    /// Write one CSV line per request (issue, completion, latency, GC wait).
    #[arg(long, value_name = "PATH")]
    requests_csv: Option<PathBuf>,
    /// Write a CSV time series: WAF and mean latencies per interval of requests.
    #[arg(long, value_name = "PATH")]
    series_csv: Option<PathBuf>,
    /// Requests per time-series interval.
    #[arg(long, default_value_t = 10_000)]
    series_every: u64,
}

pub fn run(a: RunArgs) -> anyhow::Result<()> {
    let mut sets = a.c.sets.clone();
    if a.skip_bad_lines {
        sets.push("workload.skip_bad_lines=true".into());
    }
    let (raw, s) = load_config(&a.c.config, &sets)?;
    let start = Instant::now();
    let total = match &s.workload.source {
        Source::Synthetic(w) => Some(w.requests + s.workload.warmup),
        Source::Trace(_) => None,
    };
    let mut obs =
        CliObserver::new(progress(total, a.quiet), a.requests_csv.as_deref(), a.series_csv.as_deref(), a.series_every)?;
    let result = simulate(&s, &a.c.config, &mut obs);
    obs.finish()?;
    let mut result = result?;
    result.wall_time_s = start.elapsed().as_secs_f64();
    result.config = serde_json::to_value(&raw)?;
    if !a.c.json_to_stdout() {
        summary(&result, &raw);
    }
    if let Some(path) = &a.c.json {
        write_json(path, &result)?;
    }
    Ok(())
}

/// Run the configured workload; trace paths are relative to the config file.
pub fn simulate(s: &Settings, config_path: &Path, obs: &mut dyn Observer) -> anyhow::Result<RunResult> {
    Ok(match &s.workload.source {
        Source::Synthetic(_) => flashlab_sim::run_synthetic_observed(s, obs)?,
        Source::Trace(t) => flashlab_sim::run_observed(s, open_trace(t, config_path)?, obs)?,
    })
}

/// Resolve a trace path: absolute, else relative to the config file's folder, else to the working directory.
pub fn trace_path(path: &str, config_path: &Path) -> PathBuf {
    let p = PathBuf::from(path);
    if p.is_absolute() {
        return p;
    }
    let beside = config_path.parent().unwrap_or(Path::new(".")).join(&p);
    if beside.exists() {
        beside
    } else {
        p
    }
}

fn open_trace(t: &TraceSettings, config_path: &Path) -> anyhow::Result<TraceReader<BufReader<std::fs::File>>> {
    let path = trace_path(&t.path, config_path);
    let file = std::fs::File::open(&path).with_context(|| format!("cannot open trace {}", path.display()))?;
    let choice = FormatChoice::from_name(&t.format).context("workload.trace_format")?;
    let opts = ReaderOptions { skip_bad_lines: t.skip_bad_lines, ..ReaderOptions::named(path.display().to_string()) };
    Ok(TraceReader::with_choice(BufReader::with_capacity(1 << 16, file), choice, opts)?)
}

fn summary(r: &RunResult, raw: &RawConfig) {
    let waf = match (r.waf, r.waf_closed_form) {
        (Some(w), Some(c)) => format!("{w:.4}  (Desnoyers closed form {c:.4}, {:+.2} %)", (w - c) / c * 100.0),
        (w, _) => opt(w, 4),
    };
    table(&[
        (
            "workload",
            format!(
                "{} / {}",
                raw.workload.kind,
                if raw.workload.kind == "trace" { &raw.workload.trace_path } else { &raw.workload.pattern }
            ),
        ),
        (
            "requests",
            format!(
                "{} ({} reads, {} writes, {} trims)",
                r.requests, r.read_requests, r.write_requests, r.trim_requests
            ),
        ),
        (
            "host pages",
            format!("{} read, {} written, {} trimmed", r.host_read_pages, r.host_write_pages, r.host_trim_pages),
        ),
        ("NAND", format!("{} reads, {} programs, {} erases", r.nand_read_pages, r.nand_program_pages, r.nand_erases)),
        ("NAND programs by cause", programs_by_cause(r)),
        ("GC", format!("{} runs, {} pages copied (victim {})", r.gc_runs, r.gc_copied_pages, raw.gc.victim)),
        (
            "mapping",
            format!(
                "{}: merges switch {} partial {} full {}, {} pages copied, {} padding; map reads {} writes {} \
                 cache hit ratio {}; RAM {} bytes",
                raw.ftl.mapping,
                opt_u(r.merges_switch),
                opt_u(r.merges_partial),
                opt_u(r.merges_full),
                opt_u(r.merge_copied_pages),
                opt_u(r.padding_pages),
                opt_u(r.map_reads),
                opt_u(r.map_writes),
                r.map_cache_hit_ratio.map_or("-".into(), |h| format!("{h:.4}")),
                opt_u(r.mapping_ram_bytes)
            ),
        ),
        ("WAF", waf),
        (
            "erase count",
            format!(
                "min {} max {} mean {:.2} sd {:.2}",
                r.erase_count_min, r.erase_count_max, r.erase_count_mean, r.erase_count_stddev
            ),
        ),
        (
            "read latency us",
            format!(
                "mean {} p99 {} max {}",
                opt(r.read_latency_us_mean, 1),
                opt(r.read_latency_us_p99, 1),
                opt(r.read_latency_us_max, 1)
            ),
        ),
        (
            "write latency us",
            format!(
                "mean {} p99 {} max {}",
                opt(r.write_latency_us_mean, 1),
                opt(r.write_latency_us_p99, 1),
                opt(r.write_latency_us_max, 1)
            ),
        ),
        ("IOPS", opt(r.iops, 0)),
        ("simulated time s", opt(r.sim_time_s, 3)),
        (
            "wall time s",
            format!("{:.3} ({:.0} requests/s)", r.wall_time_s, r.requests as f64 / r.wall_time_s.max(1e-9)),
        ),
    ]);
}

fn opt_u(v: Option<u64>) -> String {
    v.map_or("-".into(), |v| v.to_string())
}

/// NAND programs by cause; the parts add up to `nand_program_pages`.
fn programs_by_cause(r: &flashlab_sim::RunResult) -> String {
    let mut s = format!(
        "host {}, gc {}, merge {}, padding {}, map {}",
        r.nand_program_pages_host,
        r.nand_program_pages_gc,
        r.nand_program_pages_merge,
        r.nand_program_pages_padding,
        r.nand_program_pages_map
    );
    for (name, n) in [("wear levelling", r.nand_program_pages_wl), ("other", r.nand_program_pages_other)] {
        if n > 0 {
            s += &format!(", {name} {n}");
        }
    }
    s + &format!(" (total {})", r.nand_program_pages)
}
