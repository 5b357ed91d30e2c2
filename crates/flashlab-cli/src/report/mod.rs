//! Reports: a figure data model ([`figure`]) drawn by one code path as inline SVG
//! or PNG ([`draw`]), self-contained HTML pages ([`html`]), and the pages of
//! `flashlab run --report/--plot` ([`run_report`]), `flashlab reproduce`
//! ([`repro`]) and `flashlab sweep` ([`sweep_page`]: figures per swept key).

mod collect;
pub mod draw;
pub mod figure;
pub mod html;
pub mod repro;
pub mod run_report;
pub mod sweep_page;

pub use collect::{Collector, Tee};
pub use run_report::RunData;

use anyhow::{bail, Context};
use std::path::{Path, PathBuf};

/// Output folders asked for with `--report` and `--plot`, checked before any work.
pub struct Targets {
    pub report: Option<PathBuf>,
    pub plot: Option<PathBuf>,
}

impl Targets {
    /// Create the folders and check they take files: an error names the option and the path.
    pub fn prepare(report: Option<&Path>, plot: Option<&Path>) -> anyhow::Result<Self> {
        for (flag, dir) in [("--report", report), ("--plot", plot)] {
            if let Some(dir) = dir {
                writable_dir(flag, dir)?;
            }
        }
        Ok(Targets { report: report.map(Path::to_path_buf), plot: plot.map(Path::to_path_buf) })
    }

    pub fn wanted(&self) -> bool {
        self.report.is_some() || self.plot.is_some()
    }

    /// Write report.html and/or one PNG per figure with data.
    pub fn write_run(&self, d: &RunData) -> anyhow::Result<()> {
        if !self.wanted() {
            return Ok(());
        }
        let figs = run_report::figures(d);
        if let Some(dir) = &self.report {
            let path = dir.join("report.html");
            std::fs::write(&path, run_report::page(d, &figs)?)
                .with_context(|| format!("cannot write {}", path.display()))?;
        }
        if let Some(dir) = &self.plot {
            for f in figs.iter().filter(|f| f.has_data()) {
                draw::png(f, &dir.join(format!("{}.png", f.id)))?;
            }
        }
        Ok(())
    }
}

/// `dir` exists as a folder (created if missing) in which a file can be created.
pub fn writable_dir(flag: &str, dir: &Path) -> anyhow::Result<()> {
    if dir.exists() && !dir.is_dir() {
        bail!("{flag} {}: is a file, not a directory", dir.display());
    }
    std::fs::create_dir_all(dir).with_context(|| format!("{flag} {}: cannot create the directory", dir.display()))?;
    let probe = dir.join(".flashlab-write-check");
    std::fs::File::create(&probe)
        .with_context(|| format!("{flag} {}: the directory is not writable", dir.display()))?;
    let _ = std::fs::remove_file(&probe);
    Ok(())
}
