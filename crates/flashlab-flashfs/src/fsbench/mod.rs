//! File benchmarks on flashfs: the file workloads of `flashlab_vfs::workload`
//! (`dd`, filebench-like `fileserver` and `varmail`, a small-file `untar`),
//! device-utilisation control (pre-fill with cold files), IOPS from a NAND
//! timing model, and the core of `flashlab reproduce ubifs-hotdata`
//! (seed 000). No file I/O, no wall clock.

pub(crate) mod device;
pub(crate) mod error;
pub mod repro;
pub(crate) mod run;
pub(crate) mod timing;

pub use device::DeviceSpec;
pub use error::BenchError;
/// The file workloads live in the shared file-system layer.
pub use flashlab_vfs::workload::{WorkloadCounters, WorkloadKind, WorkloadSpec};
pub use run::{run_point, PointSpec, RunResult};
pub use timing::TimingPreset;
