//! `flashlab sweep SWEEP.toml [--jobs N] [--scheduler ADDRESS] [--out DIR]`.

use crate::sweep::{self, SweepSpec, Table};
use anyhow::Context;
use clap::Args;
use std::path::PathBuf;

#[derive(Args)]
pub struct SweepArgs {
    /// The sweep file: base config, grid, seeds.
    pub sweep: PathBuf,
    /// Runs at a time (default: every core).
    #[arg(long)]
    pub jobs: Option<usize>,
    /// A Dask scheduler (tcp://HOST:PORT): each run becomes a task on that cluster.
    /// Delegated to the Python package: runs `python3 -m flashlab sweep ...` (the
    /// interpreter from $FLASHLAB_PYTHON if set).
    #[arg(long, value_name = "ADDRESS")]
    pub scheduler: Option<String>,
    /// Output folder (default: results/sweep-NAME/); finished runs there are not rerun.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// No progress line.
    #[arg(long)]
    pub quiet: bool,
}

pub fn sweep(a: SweepArgs) -> anyhow::Result<()> {
    let stem = a.sweep.file_stem().map_or("sweep".into(), |s| s.to_string_lossy().to_string());
    let out = a.out.clone().unwrap_or_else(|| PathBuf::from("results").join(format!("sweep-{stem}")));
    if let Some(addr) = &a.scheduler {
        return delegate(&a, addr, &out);
    }
    let spec = SweepSpec::from_file(&a.sweep)?;
    let jobs = a.jobs.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let bar = crate::output::progress(Some((spec.points() * spec.seeds.len()) as u64), a.quiet);
    let results = sweep::run_local(&spec, jobs, Some(&out), &|done, _| bar.set_position(done as u64))?;
    bar.finish_and_clear();
    let table = Table::new(&spec, &results);
    let files = sweep::write_outputs(&out, &stem, &spec, &table)?;
    for f in files {
        eprintln!("wrote {}", f.display());
    }
    Ok(())
}

/// Hand the sweep to the Python package's Dask driver (same files, same table).
fn delegate(a: &SweepArgs, addr: &str, out: &std::path::Path) -> anyhow::Result<()> {
    let python = std::env::var("FLASHLAB_PYTHON").unwrap_or_else(|_| "python3".into());
    let status = std::process::Command::new(&python)
        .args(["-m", "flashlab", "sweep"])
        .arg(&a.sweep)
        .args(["--scheduler", addr, "--out"])
        .arg(out)
        .status()
        .with_context(|| format!("--scheduler needs the Python package: cannot start {python}"))?;
    if !status.success() {
        anyhow::bail!("the Python sweep driver ({python} -m flashlab sweep) failed: {status}");
    }
    Ok(())
}
