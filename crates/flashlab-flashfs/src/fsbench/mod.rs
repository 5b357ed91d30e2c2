//! File benchmarks: seeded, deterministic file workloads for flashfs
//! (`dd`, filebench-like `fileserver` and `varmail`, a small-file `untar`),
//! device-utilisation control (pre-fill with cold files), IOPS from a NAND
//! timing model, and the core of `flashlab reproduce ubifs-hotdata`
//! (seed 000). No file I/O, no wall clock.

pub(crate) mod device;
pub(crate) mod error;
pub mod repro;
pub(crate) mod run;
pub(crate) mod timing;
pub(crate) mod workload;

pub use device::DeviceSpec;
pub use error::BenchError;
pub use run::{run_point, PointSpec, RunResult};
pub use timing::TimingPreset;
pub use workload::{WorkloadCounters, WorkloadKind, WorkloadSpec};
