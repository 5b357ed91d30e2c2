//! Seed 002's benchmark sequence on any [`FileSystem`]: unpack a kernel-like
//! [`Tree`] `copies` times (each into its own directory, `sync` closing each
//! unpack), remount, read every copy back, then per copy: remount, `du -s`
//! cold (a `readdir` walk with a `stat` of every entry), `rm -r` warm; then
//! two large incompressible files written (`fsync` each) and, after a
//! remount, read back. "Remount" is `sync` and `drop_caches` (the model's
//! clean pages and cached metadata leave; the mount state stays).
//!
//! Phases (one [`PhaseReport`] each, simulated time from `clock_ns`):
//! `unpack/K`, `read/K`, `du/K`, `rm/K`, `large-write`, `large-read`, and
//! unmeasured `remount` and `rm-sync` phases (what the flush after `rm -r`
//! wrote; the article's `rm -r` timing stops before it).

use super::kernel_tree::Tree;
use super::meter::{Meter, PhaseReport, Step};
use super::Measured;
use crate::FileSystem;
use rand::{RngCore, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use serde::Serialize;

/// The sequence's parameters.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FsCompareSpec {
    /// Unpacks of the tree (the article: 10).
    pub copies: u32,
    /// The two large files' sizes (the article: an mp4 and an ISO, ≈ 6 GB together).
    pub large_file_bytes: [u64; 2],
    /// Bytes per read/write call (tar and cp move 128 KiB or less).
    pub io_bytes: usize,
    pub seed: u64,
}

/// Runs the sequence; an error (ENOSPC included) ends it.
pub fn run_fs_compare<F: FileSystem + Measured>(
    fs: &mut F,
    tree: &Tree,
    spec: &FsCompareSpec,
) -> Result<Vec<PhaseReport>, F::Error> {
    let mut m = Meter::default();
    for k in 0..spec.copies {
        m.begin(fs, &format!("unpack/{k}"), true);
        unpack(fs, &mut m, tree, &format!("/k{k}"), spec.io_bytes)?;
        timed(fs, &mut m, Step::default(), |fs| fs.sync())?;
        m.end(fs);
    }
    remount(fs, &mut m)?;
    for k in 0..spec.copies {
        m.begin(fs, &format!("read/{k}"), true);
        walk(fs, &mut m, &format!("/k{k}"), &mut |fs, m, path, is_dir| {
            if is_dir {
                Ok(())
            } else {
                read_file(fs, m, path, spec.io_bytes)
            }
        })?;
        m.end(fs);
    }
    for k in 0..spec.copies {
        remount(fs, &mut m)?;
        let top = format!("/k{k}");
        m.begin(fs, &format!("du/{k}"), true);
        walk(fs, &mut m, &top, &mut |fs, m, path, _| timed(fs, m, Step::default(), |fs| fs.stat(path).map(|_| ())))?;
        m.end(fs);
        m.begin(fs, &format!("rm/{k}"), true);
        remove_tree(fs, &mut m, &top)?;
        m.end(fs);
        m.begin(fs, "rm-sync", false);
        fs.sync()?;
        m.end(fs);
    }
    large_files(fs, &mut m, spec)?;
    Ok(m.phases)
}

/// One request: its latency on the file system's clock.
fn timed<F: FileSystem, T>(
    fs: &mut F,
    m: &mut Meter,
    s: Step,
    op: impl FnOnce(&mut F) -> Result<T, F::Error>,
) -> Result<T, F::Error> {
    let t0 = fs.clock_ns();
    let r = op(fs)?;
    m.op(fs.clock_ns().saturating_sub(t0), s);
    Ok(r)
}

fn remount<F: FileSystem + Measured>(fs: &mut F, m: &mut Meter) -> Result<(), F::Error> {
    m.begin(fs, "remount", false);
    fs.sync()?;
    fs.drop_caches()?;
    m.end(fs);
    Ok(())
}

fn unpack<F: FileSystem>(fs: &mut F, m: &mut Meter, tree: &Tree, top: &str, io: usize) -> Result<(), F::Error> {
    timed(fs, m, Step::default(), |fs| fs.mkdir(top))?;
    for d in tree.dirs.iter().skip(1) {
        timed(fs, m, Step::default(), |fs| fs.mkdir(&format!("{top}/{d}")))?;
    }
    for i in 0..tree.files.len() {
        let data = tree.content(i);
        let fd = timed(fs, m, Step::default(), |fs| fs.create(&format!("{top}/{}", tree.file_path(i))))?;
        write_all(fs, m, fd, &data, io)?;
        timed(fs, m, Step::default(), |fs| fs.close(fd))?;
    }
    Ok(())
}

fn write_all<F: FileSystem>(fs: &mut F, m: &mut Meter, fd: crate::Fd, data: &[u8], io: usize) -> Result<(), F::Error> {
    for (n, chunk) in data.chunks(io).enumerate() {
        timed(fs, m, Step::wrote(chunk.len() as u64), |fs| fs.write(fd, (n * io) as u64, chunk))?;
    }
    Ok(())
}

fn read_file<F: FileSystem>(fs: &mut F, m: &mut Meter, path: &str, io: usize) -> Result<(), F::Error> {
    let fd = timed(fs, m, Step::default(), |fs| fs.open(path))?;
    let size = fs.fstat(fd)?.size;
    let mut off = 0u64;
    while off < size {
        let len = (size - off).min(io as u64) as usize;
        let got = timed(fs, m, Step::read(len as u64), |fs| fs.read(fd, off, len))?;
        debug_assert_eq!(got.len(), len, "short read of {path} at {off}");
        off += len as u64;
    }
    timed(fs, m, Step::default(), |fs| fs.close(fd))
}

/// Pre-order walk below `dir` (`dir` itself visited first): one timed
/// `readdir` per directory, `visit(path, is_dir)` per entry.
fn walk<F, V>(fs: &mut F, m: &mut Meter, dir: &str, visit: &mut V) -> Result<(), F::Error>
where
    F: FileSystem,
    V: FnMut(&mut F, &mut Meter, &str, bool) -> Result<(), F::Error>,
{
    visit(fs, m, dir, true)?;
    let entries = timed(fs, m, Step::default(), |fs| fs.readdir(dir))?;
    for e in entries {
        let path = format!("{dir}/{}", e.name);
        if e.is_dir {
            walk(fs, m, &path, visit)?;
        } else {
            visit(fs, m, &path, false)?;
        }
    }
    Ok(())
}

/// `rm -r`: post-order, unlink every file, rmdir every directory.
fn remove_tree<F: FileSystem>(fs: &mut F, m: &mut Meter, dir: &str) -> Result<(), F::Error> {
    let entries = timed(fs, m, Step::default(), |fs| fs.readdir(dir))?;
    for e in entries {
        let path = format!("{dir}/{}", e.name);
        if e.is_dir {
            remove_tree(fs, m, &path)?;
        } else {
            timed(fs, m, Step::default(), |fs| fs.unlink(&path))?;
        }
    }
    timed(fs, m, Step::default(), |fs| fs.rmdir(dir))
}

/// Two incompressible files (seeded random bytes) written with an fsync
/// each; after a remount, read back.
fn large_files<F: FileSystem + Measured>(fs: &mut F, m: &mut Meter, spec: &FsCompareSpec) -> Result<(), F::Error> {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(spec.seed ^ 0x6c61_7267_6566_696c);
    let mut buf = vec![0u8; spec.io_bytes];
    m.begin(fs, "large-write", true);
    for (i, size) in spec.large_file_bytes.iter().enumerate() {
        let fd = timed(fs, m, Step::default(), |fs| fs.create(&format!("/large{i}")))?;
        let mut off = 0u64;
        while off < *size {
            let len = (*size - off).min(spec.io_bytes as u64) as usize;
            rng.fill_bytes(&mut buf[..len]);
            timed(fs, m, Step::wrote(len as u64), |fs| fs.write(fd, off, &buf[..len]))?;
            off += len as u64;
        }
        timed(fs, m, Step::default(), |fs| fs.fsync(fd))?;
        timed(fs, m, Step::default(), |fs| fs.close(fd))?;
    }
    m.end(fs);
    remount(fs, m)?;
    m.begin(fs, "large-read", true);
    for i in 0..spec.large_file_bytes.len() {
        read_file(fs, m, &format!("/large{i}"), spec.io_bytes)?;
    }
    m.end(fs);
    Ok(())
}
