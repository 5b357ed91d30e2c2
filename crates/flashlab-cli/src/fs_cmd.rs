//! `flashlab fs powercut`: cut power at every k-th NAND operation of a file-system
//! workload, remount, and check that nothing fsynced was lost.

use crate::config_cmd::{load_config, ConfigArgs};
use crate::output::{check_output, table, write_json};
use clap::{Args, Subcommand};
use std::time::Instant;

#[derive(Subcommand)]
pub enum FsCmd {
    /// Run a power-cut campaign configured by the `[flashfs]` section.
    Powercut(FsArgs),
    /// Run a file workload (`[fs.workload]`) on a file system (`[fs] kind`).
    Bench(FsArgs),
    /// Mount flashfs (over UBI over simulated NAND, real bytes) on MOUNTDIR through FUSE
    /// (docs/fuse.md), until `umount MOUNTDIR` or Ctrl-C.
    Mount(crate::fs_mount_cmd::MountArgs),
}

#[derive(Args)]
pub struct FsArgs {
    #[command(flatten)]
    c: ConfigArgs,
}

pub fn fs(cmd: FsCmd) -> anyhow::Result<()> {
    let a = match cmd {
        FsCmd::Powercut(a) => a,
        FsCmd::Bench(a) => return crate::fs_bench::fs_bench(a.c),
        FsCmd::Mount(a) => return crate::fs_mount_cmd::mount(a),
    };
    let (raw, ssd) = load_config(&a.c.config, &a.c.sets)?;
    crate::fs_bench::raw_nand_only(
        &raw,
        &ssd,
        "fs powercut",
        "a campaign clones the device, and an SSD cannot be cloned",
    )?;
    let campaign = raw.resolve_flashfs()?;
    check_output(a.c.json.as_deref(), "--json")?;
    let start = Instant::now();
    let report = flashlab_flashfs::powercut::run_campaign(&campaign);
    let wall = start.elapsed().as_secs_f64();
    if let Some(e) = &report.setup_error {
        anyhow::bail!("power-cut campaign could not run: {e}");
    }
    if !a.c.json_to_stdout() {
        table(&[
            ("cut points", report.cut_points.to_string()),
            ("recoveries", report.recoveries.to_string()),
            ("lost fsynced bytes", report.lost_fsynced_bytes.to_string()),
            ("invariant violations", report.invariant_violations.to_string()),
            ("panics", report.panics.to_string()),
            ("mount failures", report.mount_failures.to_string()),
            ("media errors", format!("{} cut points stopped on an injected uncorrectable read", report.media_errors)),
            ("workload", format!("{} NAND operations, {} fsyncs", report.workload_nand_ops, report.workload_fsyncs)),
            (
                "recovery cost",
                format!(
                    "mean {:.0}, max {} NAND operations",
                    report.mean_recovery_nand_ops, report.max_recovery_nand_ops
                ),
            ),
            ("wall time s", format!("{wall:.2}")),
        ]);
        for f in report.failures.iter().take(5) {
            println!("failure: {f}");
        }
    }
    if let Some(p) = &a.c.json {
        write_json(p, &report)?;
    }
    let bad = report.lost_fsynced_bytes + report.invariant_violations + report.panics;
    if bad > 0 {
        anyhow::bail!(
            "power-cut campaign failed: {} lost fsynced bytes, {} invariant violations, {} panics; first: {}",
            report.lost_fsynced_bytes,
            report.invariant_violations,
            report.panics,
            report.failures.first().map_or("-", String::as_str)
        );
    }
    Ok(())
}
