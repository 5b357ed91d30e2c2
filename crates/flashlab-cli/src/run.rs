//! `flashlab run`.

use crate::config_cmd::{load_config, ConfigArgs};
use crate::observe::CliObserver;
use crate::output::{check_output, opt, progress, table, write_json};
use crate::trace_input::{locate_request, open_trace};
use clap::Args;
use flashlab_config::{RawConfig, Settings, Source, TraceSettings};
use flashlab_sim::{Observer, RunResult, SimError};
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
    /// Write DIR/report.html: summary, plots and resolved config in one self-contained page.
    #[arg(long, value_name = "DIR")]
    report: Option<PathBuf>,
    /// Write the report's plots as PNG files into DIR.
    #[arg(long, value_name = "DIR")]
    plot: Option<PathBuf>,
}

pub fn run(a: RunArgs) -> anyhow::Result<()> {
    let mut sets = a.c.sets.clone();
    if a.skip_bad_lines {
        sets.push("workload.skip_bad_lines=true".into());
    }
    let (raw, s) = load_config(&a.c.config, &sets)?;
    if a.series_every == 0 {
        anyhow::bail!("--series-every 0: expected at least 1 request per interval");
    }
    check_output(a.c.json.as_deref(), "--json")?;
    check_output(a.requests_csv.as_deref(), "--requests-csv")?;
    check_output(a.series_csv.as_deref(), "--series-csv")?;
    let targets = crate::report::Targets::prepare(a.report.as_deref(), a.plot.as_deref())?;
    let start = Instant::now();
    let total = match &s.workload.source {
        Source::Synthetic(w) => Some(w.requests + s.workload.warmup),
        Source::Trace(_) => None,
    };
    let mut obs =
        CliObserver::new(progress(total, a.quiet), a.requests_csv.as_deref(), a.series_csv.as_deref(), a.series_every)?;
    let mut col = crate::report::Collector::new(targets.wanted());
    let result = simulate(&s, &a.c.config, &mut crate::report::Tee(&mut obs, &mut col));
    obs.finish()?;
    let mut result = result?;
    result.wall_time_s = start.elapsed().as_secs_f64();
    result.config = serde_json::to_value(&raw)?;
    check_measured(&result, &s)?;
    if !a.c.json_to_stdout() {
        summary(&result, &raw);
    }
    warnings(&result, &raw);
    if let Some(path) = &a.c.json {
        write_json(path, &result)?;
    }
    targets.write_run(&crate::report::RunData {
        title: format!("flashlab run {}", a.c.config.display()),
        result: &result,
        config_toml: flashlab_config::to_toml(&raw),
        geometry: s.geometry,
        warmup: s.workload.warmup,
        spans: col.spans(),
        first_issue_ns: col.first_issue_ns,
        end: col.end.take(),
    })
}

/// Run the configured workload; trace paths are relative to the config file.
pub fn simulate(s: &Settings, config_path: &Path, obs: &mut dyn Observer) -> anyhow::Result<RunResult> {
    let Source::Trace(t) = &s.workload.source else {
        return Ok(flashlab_sim::run_synthetic_observed(s, obs)?);
    };
    let reader = open_trace(t, config_path)?;
    let first_pass = s.workload.prewrite_reads.then(|| open_trace(t, config_path)).transpose()?;
    // The trace is parsed on a second thread, ahead of the simulation (the same
    // requests in the same order: `flashlab_trace::prefetched`).
    let (result, reader) =
        flashlab_trace::prefetched(reader, |reqs| flashlab_sim::run_prewrite_observed(s, first_pass, reqs, obs));
    let mut result = result.map_err(|e| locate(e, t, config_path))?;
    result.skipped_lines = reader.skipped_lines();
    Ok(result)
}

/// Name the trace file and line of the request a run refused.
fn locate(e: SimError, t: &TraceSettings, config_path: &Path) -> anyhow::Error {
    let index = match &e {
        SimError::Overflow { index, .. } | SimError::TooLong { index, .. } => *index,
        _ => return e.into(),
    };
    match locate_request(t, config_path, index) {
        // Kept as the cause, so that the error's kind (a simulation error) is still known.
        Some(at) => anyhow::Error::from(e).context(at),
        None => e.into(),
    }
}

/// A run that measured nothing is an error, not an empty result.
fn check_measured(r: &RunResult, s: &Settings) -> anyhow::Result<()> {
    if r.requests > 0 {
        return Ok(());
    }
    let Source::Trace(t) = &s.workload.source else {
        anyhow::bail!("no requests were measured (workload.warmup = {})", s.workload.warmup);
    };
    let mut why = format!("{} bad lines skipped", r.skipped_lines);
    if s.workload.warmup > 0 {
        why += &format!("; workload.warmup = {} requests are not measured", s.workload.warmup);
    }
    if t.format == "blkparse" || t.format == "auto" {
        why += &format!("; a blkparse trace yields only its `{}` events (workload.blkparse_action)", t.blkparse_action);
    }
    anyhow::bail!("{}: no requests to measure ({why})", t.path)
}

/// One line on standard error for each thing the run did to its input without failing.
fn warnings(r: &RunResult, raw: &RawConfig) {
    let lines = [
        (r.skipped_lines, format!("{} bad trace lines were skipped", r.skipped_lines)),
        (
            r.folded_requests,
            format!(
                "{} requests reached beyond the {} logical pages and were folded into them (workload.address_overflow = \"{}\")",
                r.folded_requests, r.logical_pages, raw.workload.address_overflow
            ),
        ),
        (
            r.unmapped_read_pages,
            format!(
                "{} page reads found never-written pages and cost no flash time (workload.prewrite_reads = true writes them first, as SSDsim does)",
                r.unmapped_read_pages
            ),
        ),
        (
            r.reordered_requests,
            format!(
                "{} requests had a timestamp earlier than an earlier request's and were issued at that earlier request's time",
                r.reordered_requests
            ),
        ),
        (
            r.outlying_timestamps,
            format!(
                "{} gaps between timestamps are over 1 s and about 1000 times the median gap; the simulated time includes them",
                r.outlying_timestamps
            ),
        ),
    ];
    for (count, line) in lines {
        if count > 0 {
            eprintln!("flashlab: warning: {line}");
        }
    }
}

fn summary(r: &RunResult, raw: &RawConfig) {
    let waf = match (r.waf, r.waf_closed_form) {
        (Some(w), Some(c)) => format!("{w:.4}  (Desnoyers closed form {c:.4}, {:+.2} %)", (w - c) / c * 100.0),
        (Some(w), None) if r.gc_runs == 0 => format!("{w:.4}  (no GC ran)"),
        (w, _) => opt(w, 4),
    };
    let input = format!(
        "{} bad lines skipped, {} reordered, {} folded, {} outlying gaps, {} pages pre-written",
        r.skipped_lines, r.reordered_requests, r.folded_requests, r.outlying_timestamps, r.prewritten_pages
    );
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
        ("trace input", if raw.workload.kind == "trace" { input } else { "-".into() }),
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
