//! `flashlab blockdev serve`: the simulated SSD as a disk file through FUSE
//! (docs/fuse.md). The FUSE server and the disk logic are in flashlab-fuse.

use crate::config_cmd::{load_config, ConfigArgs};
use crate::output::{check_output, table, write_json};
use anyhow::Context;
use clap::{Args, Subcommand, ValueEnum};
use flashlab_fuse::blockdev::BlockdevFs;
use flashlab_fuse::{Disk, Pace};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

#[derive(Subcommand)]
pub enum BlockdevCmd {
    /// Serve the SSD as MOUNTDIR/disk (its logical capacity) with live MOUNTDIR/stats.json,
    /// until `umount MOUNTDIR` or Ctrl-C.
    Serve(ServeArgs),
}

#[derive(Args)]
pub struct ServeArgs {
    #[command(flatten)]
    c: ConfigArgs,
    /// An existing empty directory to mount on.
    mountdir: PathBuf,
    /// Load the SSD's state from this image if it exists; save it there on exit.
    #[arg(long, value_name = "PATH")]
    image: Option<PathBuf>,
    /// Write every request served as a CSV block trace (`flashlab run` replays it).
    #[arg(long, value_name = "PATH")]
    record_trace: Option<PathBuf>,
    /// virtual: replies at once, time is simulated; real: each reply waits its simulated latency.
    #[arg(long, value_enum, default_value_t = PaceArg::Virtual)]
    pace: PaceArg,
}

#[derive(Clone, Copy, ValueEnum)]
enum PaceArg {
    Virtual,
    Real,
}

pub fn blockdev(cmd: BlockdevCmd) -> anyhow::Result<()> {
    let BlockdevCmd::Serve(a) = cmd;
    let (raw, s) = load_config(&a.c.config, &a.c.sets)?;
    flashlab_fuse::check_mount_point(&a.mountdir)?;
    check_output(a.c.json.as_deref(), "--json")?;
    check_output(a.record_trace.as_deref(), "--record-trace")?;
    check_output(a.image.as_deref(), "--image")?;
    let trace: Option<Box<dyn std::io::Write + Send>> = match &a.record_trace {
        Some(p) => Some(Box::new(std::io::BufWriter::new(
            std::fs::File::create(p).with_context(|| format!("cannot create {}", p.display()))?,
        ))),
        None => None,
    };
    let pace = match a.pace {
        PaceArg::Virtual => Pace::Virtual,
        PaceArg::Real => Pace::Real,
    };
    let mut disk = Disk::new(s, flashlab_config::to_toml(&raw), serde_json::to_value(&raw)?, pace, trace)?;
    if let Some(p) = a.image.as_deref().filter(|p| p.metadata().is_ok_and(|m| m.len() > 0)) {
        let bytes = std::fs::read(p).with_context(|| format!("cannot read {}", p.display()))?;
        disk.load_image(&bytes).with_context(|| format!("--image {}", p.display()))?;
        let (requests, flushes) = disk.counts();
        eprintln!("flashlab: loaded {} ({requests} requests and {flushes} flushes replayed)", p.display());
    }
    let size = disk.size();
    let disk = Arc::new(Mutex::new(disk));
    let mountdir = a.mountdir.clone();
    flashlab_fuse::serve(BlockdevFs::new(disk.clone()), &a.mountdir, "flashlab-blockdev", || {
        eprintln!(
            "flashlab: serving {}/disk ({size} bytes); `umount {}` or Ctrl-C stops",
            mountdir.display(),
            mountdir.display()
        );
    })?;
    let mut disk = disk.lock().unwrap_or_else(|p| p.into_inner());
    finish(&mut disk, a.image.as_deref(), a.c.json.as_deref())?;
    if !a.c.json_to_stdout() {
        let r = disk.result();
        let (requests, flushes) = disk.counts();
        table(&[
            (
                "requests",
                format!(
                    "{} ({} reads, {} writes, {} trims), {flushes} flushes",
                    requests, r.read_requests, r.write_requests, r.trim_requests
                ),
            ),
            (
                "host pages",
                format!("{} read, {} written, {} trimmed", r.host_read_pages, r.host_write_pages, r.host_trim_pages),
            ),
            (
                "NAND",
                format!("{} reads, {} programs, {} erases", r.nand_read_pages, r.nand_program_pages, r.nand_erases),
            ),
            ("WAF", r.waf.map_or("-".into(), |w| format!("{w:.4}"))),
        ]);
    }
    Ok(())
}

/// What happens once the disk is unmounted: trace, image and result are written.
fn finish(disk: &mut Disk, image: Option<&Path>, json: Option<&Path>) -> anyhow::Result<()> {
    disk.finish_trace()?;
    if let Some(p) = image {
        let tmp = p.with_extension("tmp");
        std::fs::write(&tmp, disk.image()).with_context(|| format!("cannot write {}", tmp.display()))?;
        std::fs::rename(&tmp, p).with_context(|| format!("cannot replace {}", p.display()))?;
    }
    if let Some(p) = json {
        write_json(p, &disk.result())?;
    }
    Ok(())
}
