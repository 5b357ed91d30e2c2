//! `flashlab bench` runs each chosen case in a process of its own: the cases then do not
//! share a heap, so one case neither reuses the memory an earlier case freed (which
//! made file-system cases look faster after the flashfs case) nor pays to fault in again
//! what an earlier case gave back to the kernel, and each row's peak RSS is its own.
//! The child is this program, run as `flashlab bench --child NAME`; it prints its row
//! as JSON on standard output and its errors on the shared standard error.

use crate::bench::{BenchArgs, BenchRow};
use anyhow::Context;
use std::process::{Command, Stdio};

/// Run case `name` in a child process with `a`'s size options and return its row.
pub(crate) fn run_in_child(name: &str, a: &BenchArgs) -> anyhow::Result<BenchRow> {
    let exe = std::env::current_exe().context("bench: cannot find this program to run a case in its own process")?;
    let mut cmd = Command::new(exe);
    cmd.args(["bench", "--child", name, "--scale-divisor", &a.scale_divisor.to_string()]);
    if a.quick {
        cmd.arg("--quick");
    }
    let out = cmd
        .stdin(Stdio::null())
        .stderr(Stdio::inherit())
        .output()
        .with_context(|| format!("bench case {name}: cannot start its process"))?;
    anyhow::ensure!(out.status.success(), "bench case {name}: its process failed ({})", out.status);
    let mut rows: Vec<BenchRow> = serde_json::from_slice(&out.stdout)
        .with_context(|| format!("bench case {name}: its process printed no row as JSON"))?;
    anyhow::ensure!(rows.len() == 1, "bench case {name}: its process printed {} rows, expected 1", rows.len());
    Ok(rows.remove(0))
}

/// `serde` reader for a figure written as `null` when it was not a number (NaN).
pub(crate) fn null_as_nan<'de, D: serde::Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    Ok(<Option<f64> as serde::Deserialize>::deserialize(d)?.unwrap_or(f64::NAN))
}
