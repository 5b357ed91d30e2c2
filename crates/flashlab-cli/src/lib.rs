//! The flashlab application layer: what the `flashlab` command and the Python package
//! share. Each command module parses its arguments with clap and calls the library
//! functions here; [`api`] holds the entry points the Python bindings use (config from a
//! path or text, a run with in-memory tables, trace statistics, hot-data comparison, the
//! flashfs benchmark) and [`sweep`] the parameter sweeps. Everything a command reports as
//! an error is one line ([`one_line`]); [`api::error_kind`] sorts it for the bindings.

pub mod api;
pub mod bench;
mod bench_cases;
mod bench_host;
mod bench_isolate;
pub mod blockdev_cmd;
pub mod config_cmd;
pub mod ext4_trace_cmd;
pub mod fs_bench;
pub mod fs_cmd;
pub mod fs_mount_cmd;
pub mod hotness;
pub mod observe;

pub mod output;
pub mod plot;
pub mod report;
pub mod repro_check;
pub mod repro_fscmp;
pub mod repro_fscmp_kernel;
pub mod repro_fscmp_report;
pub mod repro_fsftl;
pub mod repro_fsftl_report;
pub mod repro_swap;
pub mod repro_ubifs;
pub mod repro_wpo;
pub mod reproduce;
pub mod run;
pub mod series;
pub mod swap_cmd;
pub mod sweep;
pub mod sweep_cmd;
pub mod sweep_out;
pub mod trace_cmd;
pub mod trace_input;

/// The error and its causes on one line (what `flashlab` prints after `error:`).
pub fn one_line(e: &anyhow::Error) -> String {
    let parts: Vec<String> = e.chain().map(|c| c.to_string().replace('\n', " ")).collect();
    parts.join(": ")
}
