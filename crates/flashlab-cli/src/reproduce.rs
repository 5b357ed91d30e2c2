//! `flashlab reproduce NAME`: regenerate one seed paper's experiment under `--out`
//! (default `results/NAME/`): a Markdown table of the paper's claim beside the measured
//! value, PNG plots and the raw JSON, and index.html: all of it in one self-contained page.

use crate::report::repro::ConfigUsed;
use std::path::{Path, PathBuf};

/// The experiments, their seed and what they regenerate.
pub const EXPERIMENTS: &[(&str, &str)] = &[
    ("wpo-gc", "seed 001: WPO-GC against Basic-GC and DT-GC (response times, erase spread, erases, page writes)"),
    (
        "ubifs-hotdata",
        "seed 000: UBIFS hot-data identification, multi-log journal, delayed hot commit, LPT validity bitmap",
    ),
    (
        "f2fs-ext4-ftl",
        "seed 004: F2FS and ext4 over BAST, BAST-padding, page mapping and DFTL (IOZone, utilisation 20-95 %)",
    ),
    (
        "fs-compare",
        "seed 002: a kernel tree unpacked 10x, read, du, rm -r, large files: flashfs (+/- compression), F2FS, ext4 models, the kernel's ext4/btrfs/xfs; mount scaling",
    ),
    (
        "swap-trim",
        "seed 003: swap on an SSD with TRIM: Linux's and the semantic-aware allocator, TRIM cost, SSD vs disk",
    ),
];

/// An experiment's runner (output folder, quick) and the configurations it uses (quick).
type Run = fn(&Path, bool) -> anyhow::Result<()>;
type Configs = fn(bool) -> anyhow::Result<Vec<ConfigUsed>>;

pub fn reproduce(name: &str, out: Option<PathBuf>, quick: bool) -> anyhow::Result<()> {
    let out = out.unwrap_or_else(|| Path::new("results").join(name));
    let (run, configs): (Run, Configs) = match name {
        "wpo-gc" => (crate::repro_wpo::run, crate::repro_wpo::configs),
        "ubifs-hotdata" => (crate::repro_ubifs::run, crate::repro_ubifs::configs),
        "f2fs-ext4-ftl" => (crate::repro_fsftl_report::run, crate::repro_fsftl_report::configs),
        "fs-compare" => (crate::repro_fscmp_report::run, crate::repro_fscmp_report::configs),
        "swap-trim" => (crate::repro_swap::run, crate::repro_swap::configs),
        other => {
            let names: Vec<&str> = EXPERIMENTS.iter().map(|e| e.0).collect();
            anyhow::bail!("reproduce: no experiment named {other:?}; available: {}", names.join(", "))
        }
    };
    std::fs::create_dir_all(&out).map_err(|e| anyhow::anyhow!("cannot create {}: {e}", out.display()))?;
    run(&out, quick)?;
    crate::report::repro::write_index(&out, name, &configs(quick)?)?;
    eprintln!("wrote {}", out.display());
    Ok(())
}
