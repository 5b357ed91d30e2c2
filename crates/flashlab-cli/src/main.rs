//! `flashlab`: the command-line edge. Parses arguments, reads files, measures wall
//! time, draws progress; everything else happens in the library crates.

use clap::{Parser, Subcommand};
use flashlab_cli::{
    bench, blockdev_cmd, config_cmd, fs_cmd, hotness, one_line, reproduce, run, swap_cmd, sweep_cmd, trace_cmd,
};
use std::path::PathBuf;

#[derive(Parser)]
#[command(name = "flashlab", version, about = "A fast, faithful simulator of the flash storage stack")]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Run a simulation described by a TOML config.
    Run(run::RunArgs),
    /// Measure simulated host requests per second on fixed workloads.
    Bench {
        /// Write the rows as JSON (`-` = standard output).
        #[arg(long)]
        json: Option<PathBuf>,
        /// Smaller workloads (for a smoke test).
        #[arg(long)]
        quick: bool,
        /// Run only the cases whose names start with this (repeatable); `scale-4tib` runs only when named.
        #[arg(long = "case")]
        cases: Vec<String>,
        /// A built ../shared/bench/wasim.c (`cc -O2 -o wasim wasim.c -lm`): time it on counting-wasim's work.
        #[arg(long)]
        wasim: Option<PathBuf>,
        /// Divide scale-4tib's blocks per plane and measured writes by this power of two.
        #[arg(long, default_value_t = 1)]
        scale_divisor: u32,
        /// Run every case in this one process, one after another (by default, when more
        /// than one case is chosen, each runs in a process of its own, so no case inherits
        /// another's memory and each peak RSS is the case's own).
        #[arg(long)]
        in_process: bool,
        /// Internal: run exactly this case and print its row as JSON (one process per case).
        #[arg(long, hide = true)]
        child: Option<String>,
    },
    /// Print the default config or check one.
    #[command(subcommand)]
    Config(config_cmd::ConfigCmd),
    /// Inspect or convert block I/O traces.
    #[command(subcommand)]
    Trace(trace_cmd::TraceCmd),
    /// The raw-flash file system: power-cut campaigns.
    #[command(subcommand)]
    Fs(fs_cmd::FsCmd),
    /// Serve the simulated SSD as a disk file through FUSE (docs/fuse.md).
    #[command(subcommand)]
    Blockdev(blockdev_cmd::BlockdevCmd),
    /// Compare hot-data identifiers on a workload.
    Hotness(hotness::HotnessArgs),
    /// An application over a swap area on the SSD (or a disk): run time, swap traffic, TRIM.
    Swap(config_cmd::ConfigArgs),
    /// Run a parameter sweep (grid × seeds) in parallel, resumable.
    Sweep(sweep_cmd::SweepArgs),
    /// Regenerate a seed paper's experiment.
    Reproduce {
        /// The experiment: wpo-gc (seed 001), ubifs-hotdata (seed 000) or f2fs-ext4-ftl (seed 004). Traces are read
        /// from $FLASHLAB_TRACES, else ../shared/traces.
        name: String,
        /// Output folder (default results/NAME/).
        #[arg(long)]
        out: Option<PathBuf>,
        /// A reduced size that runs in under a minute.
        #[arg(long)]
        quick: bool,
    },
}

/// Let a closed pipe end the process quietly (`flashlab config default | head`), as
/// other command-line tools do, instead of `println!` panicking on EPIPE: Rust starts
/// programs with SIGPIPE ignored.
#[cfg(unix)]
fn default_sigpipe() {
    // SAFETY: called first thing in `main`, before any other thread exists, so no
    // signal-handler state is being changed under a running thread; SIG_DFL is a valid
    // disposition for SIGPIPE and `signal` has no other precondition. Tested by
    // `cli::closed_pipe_ends_quietly`.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

fn main() {
    #[cfg(unix)]
    default_sigpipe();
    let cli = Cli::parse();
    let result = match cli.cmd {
        Cmd::Run(a) => run::run(a),
        Cmd::Bench { json, quick, cases, wasim, scale_divisor, in_process, child } => {
            bench::bench(bench::BenchArgs { json, quick, cases, wasim, scale_divisor, in_process, child })
        }
        Cmd::Config(c) => config_cmd::config(c),
        Cmd::Trace(t) => trace_cmd::trace(t),
        Cmd::Hotness(a) => hotness::hotness(a),
        Cmd::Fs(c) => fs_cmd::fs(c),
        Cmd::Blockdev(c) => blockdev_cmd::blockdev(c),
        Cmd::Swap(a) => swap_cmd::swap(a),
        Cmd::Sweep(a) => sweep_cmd::sweep(a),
        Cmd::Reproduce { name, out, quick } => reproduce::reproduce(&name, out, quick),
    };
    if let Err(e) = result {
        eprintln!("flashlab: error: {}", one_line(&e));
        std::process::exit(1);
    }
}
