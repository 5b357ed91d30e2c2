//! The kernel's own ext4, btrfs and xfs in `reproduce fs-compare`: this
//! binary's `blockdev serve` of the microSD preset, a loop device, mkfs,
//! mount, and seed 002's sequence done with real file operations (Rust
//! std::fs) on the generated tree; remount = umount + mount (the kernel's
//! caches of that file system go). Time is the simulated SSD's
//! (`sim_time_s` of stats.json, pace virtual: each request issued when the
//! previous one completed), so it counts the device's busy time only — the
//! kernel's CPU time and the gaps between requests are not in it; wall time
//! is noted beside. Every guard unmounts / detaches / stops on drop.

use crate::repro_fscmp::{FsRow, Plan, Steps, MICROSD_TOML};
use anyhow::Context;
use flashlab_vfs::workload::kernel_tree::Tree;
use flashlab_vfs::workload::{DeviceCounters, PhaseReport};
use rand::{RngCore, SeedableRng};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

fn sh(cmd: &str, args: &[&str]) -> anyhow::Result<String> {
    let out = Command::new(cmd).args(args).output().with_context(|| format!("{cmd}: cannot start"))?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    } else {
        anyhow::bail!("{cmd} {}: {}", args.join(" "), String::from_utf8_lossy(&out.stderr).trim())
    }
}

/// Why the kernel's `fstype` cannot run here, if it cannot.
pub fn unavailable(fstype: &str) -> Option<String> {
    // SAFETY: geteuid cannot fail.
    if unsafe { libc::geteuid() } != 0 {
        return Some("not root (loop devices and mount need it)".into());
    }
    if !Path::new("/dev/fuse").exists() {
        return Some("/dev/fuse is missing".into());
    }
    if !Path::new("/dev/loop-control").exists() {
        return Some("no loop devices (/dev/loop-control is missing)".into());
    }
    for t in ["losetup", "mount", "umount", &format!("mkfs.{fstype}")] {
        if sh("sh", &["-c", &format!("command -v {t}")]).is_err() {
            return Some(format!("{t} is not installed"));
        }
    }
    None
}

fn mounted(dir: &Path) -> bool {
    let dir = dir.canonicalize().unwrap_or(dir.to_path_buf());
    let mounts = std::fs::read_to_string("/proc/mounts").unwrap_or_default();
    mounts.lines().any(|l| l.split(' ').nth(1) == dir.to_str())
}

/// The server, the loop device and the mount; dropped in reverse order of setup.
struct Rig {
    work: PathBuf,
    server: Option<Child>,
    loopdev: Option<String>,
    mnt: PathBuf,
    srv: PathBuf,
}

impl Rig {
    fn start(plan: &Plan, fstype: &str) -> anyhow::Result<Rig> {
        let work = std::env::temp_dir().join(format!("flashlab-fscmp-{}-{fstype}", std::process::id()));
        let (srv, mnt) = (work.join("srv"), work.join("mnt"));
        for d in [&srv, &mnt] {
            std::fs::create_dir_all(d).with_context(|| format!("cannot create {}", d.display()))?;
        }
        let cfg = work.join("microsd.toml");
        std::fs::write(&cfg, MICROSD_TOML).with_context(|| format!("cannot write {}", cfg.display()))?;
        let mut rig = Rig { work, server: None, loopdev: None, mnt, srv };
        let exe = std::env::current_exe().context("the flashlab binary's path")?;
        let mut args = vec!["blockdev".to_string(), "serve".into(), path(&cfg), path(&rig.srv)];
        for s in &plan.device_sets {
            args.extend(["--set".to_string(), s.clone()]);
        }
        let child = Command::new(exe).args(&args).stdout(Stdio::null()).stderr(Stdio::piped()).spawn();
        rig.server = Some(child.context("cannot start blockdev serve")?);
        rig.wait_mounted()?;
        let disk = path(&rig.srv.join("disk"));
        rig.loopdev = Some(sh("losetup", &["-f", "--show", &disk])?.trim().to_string());
        let dev = rig.loopdev.clone().expect("attached");
        match fstype {
            "btrfs" | "xfs" => sh(&format!("mkfs.{fstype}"), &["-q", "-f", &dev])?,
            _ => sh(&format!("mkfs.{fstype}"), &["-q", "-F", &dev])?,
        };
        rig.mount()?;
        Ok(rig)
    }

    fn wait_mounted(&mut self) -> anyhow::Result<()> {
        let t = Instant::now();
        while !mounted(&self.srv) {
            let c = self.server.as_mut().expect("started");
            if let Ok(Some(status)) = c.try_wait() {
                let mut err = String::new();
                if let Some(mut e) = c.stderr.take() {
                    let _ = e.read_to_string(&mut err);
                }
                self.server = None;
                anyhow::bail!("blockdev serve exited ({status}) before mounting: {}", err.trim());
            }
            anyhow::ensure!(t.elapsed() < Duration::from_secs(30), "blockdev serve did not mount within 30 s");
            std::thread::sleep(Duration::from_millis(50));
        }
        Ok(())
    }

    fn mount(&self) -> anyhow::Result<()> {
        sh("mount", &[self.loopdev.as_deref().expect("attached"), &path(&self.mnt)]).map(|_| ())
    }

    fn remount(&self) -> anyhow::Result<()> {
        sh("umount", &[&path(&self.mnt)])?;
        self.mount()
    }

    /// stats.json now, whole.
    fn stats_json(&self) -> anyhow::Result<serde_json::Value> {
        let p = self.srv.join("stats.json");
        let text = std::fs::read_to_string(&p).with_context(|| format!("cannot read {}", p.display()))?;
        serde_json::from_str(&text).with_context(|| format!("{}", p.display()))
    }

    /// stats.json now: the counters the phases use.
    fn stats(&self) -> anyhow::Result<Snap> {
        let v = self.stats_json()?;
        let n = |k: &str| v[k].as_u64().unwrap_or(0);
        Ok(Snap {
            sim_s: v["sim_time_s"].as_f64().unwrap_or(0.0),
            dev: DeviceCounters {
                nand_read_pages: n("nand_read_pages"),
                nand_program_pages: n("nand_program_pages"),
                nand_erases: n("nand_erases"),
                merges_switch: n("merges_switch"),
                merges_partial: n("merges_partial"),
                merges_full: n("merges_full"),
                padding_pages: n("padding_pages"),
            },
            host_write_pages: n("host_write_pages"),
        })
    }
}

fn path(p: &Path) -> String {
    p.to_string_lossy().into_owned()
}

impl Drop for Rig {
    fn drop(&mut self) {
        if mounted(&self.mnt) {
            let _ = sh("umount", &[&path(&self.mnt)]).or_else(|_| sh("umount", &["-l", &path(&self.mnt)]));
        }
        if let Some(l) = self.loopdev.take() {
            let _ = sh("losetup", &["-d", &l]);
        }
        if let Some(mut c) = self.server.take() {
            let _ = sh("kill", &["-INT", &c.id().to_string()]);
            let t = Instant::now();
            while !matches!(c.try_wait(), Ok(Some(_))) && t.elapsed() < Duration::from_secs(30) {
                std::thread::sleep(Duration::from_millis(50));
            }
            let _ = c.kill();
            let _ = c.wait();
        }
        if mounted(&self.srv) {
            let _ = sh("umount", &["-l", &path(&self.srv)]);
        }
        let _ = std::fs::remove_dir_all(&self.work);
    }
}

#[derive(Clone, Copy)]
struct Snap {
    sim_s: f64,
    dev: DeviceCounters,
    host_write_pages: u64,
}

/// Phases measured between stats.json snapshots.
struct Phases<'a> {
    rig: &'a Rig,
    out: Vec<PhaseReport>,
}

impl Phases<'_> {
    fn phase(&mut self, name: &str, op: impl FnOnce() -> anyhow::Result<(u64, u64, u64)>) -> anyhow::Result<()> {
        let s0 = self.rig.stats()?;
        let (requests, read, written) = op().with_context(|| format!("{name} on the kernel's file system"))?;
        let s1 = self.rig.stats()?;
        self.out.push(PhaseReport {
            name: name.into(),
            measured: true,
            requests,
            app_bytes_read: read,
            app_bytes_written: written,
            seconds: s1.sim_s - s0.sim_s,
            device: s1.dev.since(&s0.dev),
            ..PhaseReport::default()
        });
        Ok(())
    }
}

fn sync_fs(dir: &Path) -> anyhow::Result<()> {
    sh("sync", &["-f", &path(dir)]).map(|_| ())
}

fn unpack(tree: &Tree, top: &Path) -> anyhow::Result<(u64, u64, u64)> {
    std::fs::create_dir(top)?;
    for d in tree.dirs.iter().skip(1) {
        std::fs::create_dir(top.join(d))?;
    }
    let mut bytes = 0;
    for i in 0..tree.files.len() {
        let data = tree.content(i);
        std::fs::write(top.join(tree.file_path(i)), &data)?;
        bytes += data.len() as u64;
    }
    sync_fs(top)?;
    Ok(((tree.dirs.len() + tree.files.len()) as u64, 0, bytes))
}

/// Visits every entry below `dir` (pre-order); returns the entries seen and bytes read.
fn walk(dir: &Path, read: bool) -> anyhow::Result<(u64, u64)> {
    let (mut n, mut bytes) = (1, 0);
    for e in std::fs::read_dir(dir)? {
        let e = e?;
        let meta = std::fs::symlink_metadata(e.path())?;
        if meta.is_dir() {
            let (a, b) = walk(&e.path(), read)?;
            n += a;
            bytes += b;
        } else {
            n += 1;
            if read {
                bytes += std::fs::read(e.path())?.len() as u64;
            }
        }
    }
    Ok((n, bytes))
}

fn large_write(mnt: &Path, sizes: &[u64; 2], io: usize, seed: u64) -> anyhow::Result<(u64, u64, u64)> {
    let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(seed);
    let mut buf = vec![0u8; io];
    let mut total = 0;
    for (i, size) in sizes.iter().enumerate() {
        let mut f = std::fs::File::create(mnt.join(format!("large{i}")))?;
        let mut left = *size;
        while left > 0 {
            let n = left.min(io as u64) as usize;
            rng.fill_bytes(&mut buf[..n]);
            f.write_all(&buf[..n])?;
            left -= n as u64;
        }
        f.sync_all()?;
        total += size;
    }
    Ok((2, 0, total))
}

/// Runs seed 002's sequence on the kernel's `kernel-<fstype>`.
pub fn run(name: &str, plan: &Plan, tree: &Tree) -> anyhow::Result<FsRow> {
    let fstype = name.strip_prefix("kernel-").unwrap_or(name);
    let what = format!("the kernel's {fstype} on a loop device over `blockdev serve` of the microSD preset");
    if let Some(why) = unavailable(fstype) {
        return Ok(FsRow::missing(name, what, why));
    }
    let start = Instant::now();
    let rig = match Rig::start(plan, fstype) {
        Ok(r) => r,
        Err(e) => return Ok(FsRow::missing(name, what, format!("set-up failed: {}", crate::one_line(&e)))),
    };
    let page_bytes = crate::repro_fscmp::card(plan)?.1.geometry.page_bytes as u64;
    let s0 = rig.stats()?;
    let mut ph = Phases { rig: &rig, out: Vec::new() };
    let mnt = rig.mnt.clone();
    let copies = plan.spec.copies;
    for k in 0..copies {
        ph.phase(&format!("unpack/{k}"), || unpack(tree, &mnt.join(format!("k{k}"))))?;
    }
    rig.remount()?;
    for k in 0..copies {
        ph.phase(&format!("read/{k}"), || walk(&mnt.join(format!("k{k}")), true).map(|(n, b)| (n, b, 0)))?;
    }
    for k in 0..copies {
        rig.remount()?;
        let top = mnt.join(format!("k{k}"));
        ph.phase(&format!("du/{k}"), || walk(&top, false).map(|(n, _)| (n, 0, 0)))?;
        ph.phase(&format!("rm/{k}"), || std::fs::remove_dir_all(&top).map(|_| (1, 0, 0)).map_err(Into::into))?;
        sync_fs(&mnt)?;
    }
    let spec = &plan.spec;
    ph.phase("large-write", || large_write(&mnt, &spec.large_file_bytes, spec.io_bytes, spec.seed))?;
    rig.remount()?;
    ph.phase("large-read", || {
        let mut b = 0;
        for i in 0..2 {
            b += std::fs::read(mnt.join(format!("large{i}")))?.len() as u64;
        }
        Ok((2, b, 0))
    })?;
    let s1 = rig.stats()?;
    let device = rig.stats_json()?;
    let phases = std::mem::take(&mut ph.out);
    drop(ph);
    drop(rig);
    let d = s1.dev.since(&s0.dev);
    Ok(FsRow {
        name: name.into(),
        what,
        missing: None,
        steps: Steps::from_phases(&phases),
        nand_program_pages: d.nand_program_pages,
        nand_erases: d.nand_erases,
        device_write_bytes: (s1.host_write_pages - s0.host_write_pages) * page_bytes,
        wall_s: start.elapsed().as_secs_f64(),
        phases,
        device,
    })
}
