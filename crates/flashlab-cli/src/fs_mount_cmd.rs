//! `flashlab fs mount`: flashfs through FUSE with a NAND image (docs/fuse.md). The FUSE
//! server and the volume logic are in flashlab-fuse.

use crate::config_cmd::load_config;
use crate::output::{check_output, table};
use anyhow::Context;
use clap::Args;
use flashlab_fuse::flashvol::FlashVol;
use flashlab_fuse::fsmount::{FsMountFs, Persist};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

#[derive(Args)]
pub struct MountArgs {
    /// The config file (TOML); its `[flashfs]` section gives the NAND, UBI and flashfs.
    config: PathBuf,
    /// An existing empty directory to mount on.
    mountdir: PathBuf,
    /// Override one key (dotted path, TOML value), e.g. flashfs.compression=none.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    sets: Vec<String>,
    /// The NAND image: attached if it exists (else a fresh NAND is formatted), written
    /// after every fsync and at unmount.
    #[arg(long, value_name = "PATH")]
    image: Option<PathBuf>,
}

pub fn mount(a: MountArgs) -> anyhow::Result<()> {
    let (raw, ssd) = load_config(&a.config, &a.sets)?;
    crate::fs_bench::raw_nand_only(&raw, &ssd, "fs mount", "its image is the raw NAND's content")?;
    let campaign = raw.resolve_flashfs()?;
    flashlab_fuse::check_mount_point(&a.mountdir)?;
    check_output(a.image.as_deref(), "--image")?;
    let existing = a.image.as_deref().filter(|p| p.metadata().is_ok_and(|m| m.len() > 0));
    let vol = match existing {
        Some(p) => {
            let bytes = std::fs::read(p).with_context(|| format!("cannot read {}", p.display()))?;
            let v = FlashVol::attach(&campaign, &bytes).with_context(|| format!("--image {}", p.display()))?;
            eprintln!("flashlab: attached {}", p.display());
            v
        }
        None => FlashVol::format(&campaign)?,
    };
    let image = a.image.clone();
    let persist: Persist = Box::new(move |bytes: &[u8]| match &image {
        Some(p) => save(p, bytes),
        None => Ok(()),
    });
    let vol = Arc::new(Mutex::new(Some(vol)));
    let dir = a.mountdir.clone();
    flashlab_fuse::serve(FsMountFs::new(vol.clone(), persist), &a.mountdir, "flashlab-flashfs", || {
        eprintln!("flashlab: flashfs mounted on {}; `umount {}` or Ctrl-C stops", dir.display(), dir.display());
    })?;
    let vol = vol.lock().unwrap_or_else(|p| p.into_inner()).take().context("the volume was lost")?;
    let (bytes, st) = vol.unmount()?;
    if let Some(p) = &a.image {
        save(p, &bytes).with_context(|| format!("cannot write {}", p.display()))?;
    }
    table(&[
        (
            "NAND",
            format!(
                "{} page reads, {} programs, {} erases",
                st.pages_read.total(),
                st.pages_programmed.total(),
                st.erases.total()
            ),
        ),
        (
            "image",
            a.image
                .as_deref()
                .map_or("none (--image not given: the NAND is dropped)".into(), |p| p.display().to_string()),
        ),
    ]);
    Ok(())
}

/// Write `bytes` to `path` durably: a temporary file, fsynced, renamed over it.
fn save(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let tmp = path.with_extension("tmp");
    let mut f = std::fs::File::create(&tmp)?;
    f.write_all(bytes)?;
    f.sync_all()?;
    std::fs::rename(&tmp, path)?;
    if let Some(d) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::File::open(d)?.sync_all()?;
    }
    Ok(())
}
