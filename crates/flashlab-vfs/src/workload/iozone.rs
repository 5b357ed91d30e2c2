//! The IOZone-like workload of seed 004 (Choi and Shin, §4): one test file of
//! `file_bytes`, created sequentially after filler files bring the device to
//! the wanted utilisation; 25 % of its records randomly updated; then
//! sequential read, random read, random write and sequential write, each
//! phase timed on its own (IOZone 3.397's `-i 0 -i 1 -i 2` tests with `-e`:
//! the fsync at the end of a write phase is part of its time).
//!
//! Between phases everything is synced and the page cache dropped, untimed,
//! as IOZone's `-U` (unmount and remount between tests) does, so reads reach
//! the device. Random offsets are drawn uniformly per request (IOZone's
//! random tests draw with repetition as well), one seeded stream.

use super::meter::{Meter, Step};
use super::Measured;
use crate::{Errno, FileSystem};
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use serde::Serialize;

/// Parameters of the IOZone-like workload.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct IozoneSpec {
    /// Size of the test file (seed 004: 600 MB).
    pub file_bytes: u64,
    /// Request (IOZone record) size (seed 004: 4 KiB).
    pub request_bytes: u32,
    /// Share of the file's records randomly updated after creation (0.25).
    pub update_fraction: f64,
    pub seed: u64,
}

/// The phases in order (names as they appear in the result object).
pub const PHASES: [&str; 6] = ["create", "update", "seq-read", "random-read", "random-write", "seq-write"];

const PATH: &str = "/iozone.tmp";

/// How a phase walks the file.
#[derive(Clone, Copy)]
enum Walk {
    Sequential,
    Random { requests: u64 },
}

/// Bytes of a record's per-request stamp.
const STAMP: usize = 8;

/// Runs the six phases; stops at the first ENOSPC (recorded in `meter`).
pub(crate) fn run<F: FileSystem + Measured>(fs: &mut F, spec: &IozoneSpec, meter: &mut Meter) -> Result<(), F::Error> {
    let records = spec.file_bytes / spec.request_bytes as u64;
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(spec.seed);
    let mut buf = vec![0u8; spec.request_bytes as usize];
    rng.fill(&mut buf[..]);
    // Only the stamp changes from one write to the next: the rest of the
    // buffer keeps one token (`FileSystem::write_tail`).
    const _: () = assert!(STAMP <= crate::TAIL_HEAD);
    let tail = crate::new_tail_token();
    // What a read returns, one buffer for every read (as IOZone's own).
    let mut got = Vec::with_capacity(buf.len());
    let fd = fs.create(PATH)?;
    let updates = (records as f64 * spec.update_fraction).round() as u64;
    let plan = [
        (Walk::Sequential, true),
        (Walk::Random { requests: updates }, true),
        (Walk::Sequential, false),
        (Walk::Random { requests: records }, false),
        (Walk::Random { requests: records }, true),
        (Walk::Sequential, true),
    ];
    for (name, (walk, write)) in PHASES.iter().zip(plan) {
        meter.begin(fs, name, true);
        let n = match walk {
            Walk::Sequential => records,
            Walk::Random { requests } => requests,
        };
        for i in 0..n {
            let rec = match walk {
                Walk::Sequential => i,
                Walk::Random { .. } => rng.gen_range(0..records),
            };
            let off = rec * spec.request_bytes as u64;
            let t0 = fs.clock_ns();
            let r = if write {
                // A per-request stamp keeps the content of every record distinct.
                buf[..STAMP].copy_from_slice(&(off ^ (i << 40)).to_le_bytes());
                fs.write_tail(fd, off, &buf, Some(tail)).map(|n| Step::wrote(n as u64))
            } else {
                fs.read_into(fd, off, buf.len(), &mut got).map(|()| Step::read(got.len() as u64))
            };
            match r {
                Ok(step) => meter.op(fs.clock_ns() - t0, step),
                Err(e) if F::errno(&e) == Errno::ENOSPC => return stop(fs, meter, name),
                Err(e) => return Err(e),
            }
        }
        // Part of the phase's time, not of any request's latency.
        if write {
            match fs.fsync(fd) {
                Err(e) if F::errno(&e) == Errno::ENOSPC => return stop(fs, meter, name),
                r => r?,
            }
        }
        meter.end(fs);
        fs.drop_caches()?;
    }
    fs.close(fd)
}

fn stop<F: FileSystem + Measured>(fs: &mut F, meter: &mut Meter, phase: &str) -> Result<(), F::Error> {
    meter.enospc(phase);
    meter.end(fs);
    Ok(())
}
