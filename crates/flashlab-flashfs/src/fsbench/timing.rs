//! NAND timing presets: device time = pages read × tR + pages programmed ×
//! tPROG + erases × tBERS (one chip, no overlap, no bus or host time).

use serde::Serialize;

/// Latencies of one NAND operation, in nanoseconds.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct TimingPreset {
    pub name: &'static str,
    pub read_ns: f64,
    pub program_ns: f64,
    pub erase_ns: f64,
}

impl TimingPreset {
    /// Seed 000's nandsim set-up: erase 2 ms, program 200, read 25. The paper prints the
    /// last two in ns, but they are nandsim's module parameters, whose units are µs
    /// (`access_delay`, `programm_delay`) and ms (`erase_delay`) — see
    /// drivers/mtd/nand/raw/nandsim.c — so: tR 25 µs, tPROG 200 µs, tBERS 2 ms.
    pub const NANDSIM_SEED000: TimingPreset =
        TimingPreset { name: "nandsim-seed000", read_ns: 25_000.0, program_ns: 200_000.0, erase_ns: 2_000_000.0 };
    /// A realistic SLC chip: tR 25 µs, tPROG 200 µs, tBERS 1.5 ms.
    pub const SLC: TimingPreset =
        TimingPreset { name: "slc", read_ns: 25_000.0, program_ns: 200_000.0, erase_ns: 1_500_000.0 };

    /// Device busy time in seconds.
    pub fn seconds(&self, pages_read: u64, pages_programmed: u64, erases: u64) -> f64 {
        (pages_read as f64 * self.read_ns + pages_programmed as f64 * self.program_ns + erases as f64 * self.erase_ns)
            / 1e9
    }
}
