//! `flashlab trace stats|convert`.

use crate::output::{check_output, opt, table, write_json};
use anyhow::Context;
use clap::Subcommand;
use flashlab_trace::{FormatChoice, ReaderOptions, TraceFormat, TraceReader, TraceWriter};
use std::io::{BufReader, BufWriter};
use std::path::{Path, PathBuf};

#[derive(Subcommand)]
pub enum TraceCmd {
    /// Summary statistics of a trace.
    Stats {
        /// The trace file.
        file: PathBuf,
        /// Trace format, or `auto` to detect it.
        #[arg(long, default_value = "auto")]
        format: String,
        /// Write the statistics as JSON (`-` = standard output).
        #[arg(long)]
        json: Option<PathBuf>,
        /// Count and skip bad lines instead of stopping at the first.
        #[arg(long)]
        skip_bad_lines: bool,
    },
    /// Convert a trace to another format.
    Convert {
        /// The trace file.
        file: PathBuf,
        /// Output format.
        #[arg(long)]
        to: String,
        /// Output file.
        #[arg(short = 'o', long = "output")]
        out: PathBuf,
        /// Input format, or `auto` to detect it.
        #[arg(long, default_value = "auto")]
        format: String,
        /// Count and skip bad lines instead of stopping at the first.
        #[arg(long)]
        skip_bad_lines: bool,
    },
}

pub fn trace(cmd: TraceCmd) -> anyhow::Result<()> {
    match cmd {
        TraceCmd::Stats { file, format, json, skip_bad_lines } => stats(&file, &format, json, skip_bad_lines),
        TraceCmd::Convert { file, to, out, format, skip_bad_lines } => {
            convert(&file, &format, &to, &out, skip_bad_lines)
        }
    }
}

pub fn open(file: &Path, format: &str, skip: bool) -> anyhow::Result<TraceReader<BufReader<std::fs::File>>> {
    let f = std::fs::File::open(file).with_context(|| format!("cannot open trace {}", file.display()))?;
    let choice = FormatChoice::from_name(format)?;
    let opts = ReaderOptions { skip_bad_lines: skip, ..ReaderOptions::named(file.display().to_string()) };
    Ok(TraceReader::with_choice(BufReader::with_capacity(1 << 16, f), choice, opts)?)
}

fn stats(file: &Path, format: &str, json: Option<PathBuf>, skip: bool) -> anyhow::Result<()> {
    check_output(json.as_deref(), "--json")?;
    let st = flashlab_trace::stats(open(file, format, skip)?)?;
    if json.as_deref() != Some(Path::new("-")) {
        let gib = |b: u64| format!("{b} ({:.3} GiB)", b as f64 / (1u64 << 30) as f64);
        table(&[
            ("format", st.format.clone()),
            ("requests", format!("{} ({} reads, {} writes, {} trims)", st.requests, st.reads, st.writes, st.trims)),
            ("bytes read", gib(st.bytes_read)),
            ("bytes written", gib(st.bytes_written)),
            ("time s", format!("{} .. {}", opt(st.first_time_s, 6), opt(st.last_time_s, 6))),
            (
                "address range",
                match (st.min_offset_bytes, st.max_end_bytes) {
                    (Some(lo), Some(hi)) => format!("{lo} .. {}", gib(hi)),
                    _ => "-".into(),
                },
            ),
            ("skipped lines", st.skipped_lines.to_string()),
        ]);
    }
    if let Some(p) = json {
        write_json(&p, &st)?;
    }
    Ok(())
}

fn convert(file: &Path, format: &str, to: &str, out: &Path, skip: bool) -> anyhow::Result<()> {
    let to = TraceFormat::from_name(to).context("--to")?;
    check_output(Some(out), "-o")?;
    let reader = open(file, format, skip)?;
    let f = std::fs::File::create(out).with_context(|| format!("cannot create {}", out.display()))?;
    let mut w = TraceWriter::new(BufWriter::new(f), to)?;
    let mut n = 0u64;
    for req in reader {
        w.write(&req?)?;
        n += 1;
    }
    w.finish()?;
    eprintln!("wrote {n} requests to {} ({})", out.display(), to.name());
    Ok(())
}
