//! `flashlab blockdev serve` mounted for real: a loop device, the kernel's ext4, fstrim,
//! fsck, an image reload and the recorded trace replayed by `flashlab run`. Skips with a
//! printed reason without root, /dev/fuse, fusermount-free mounting, loop devices or
//! mkfs.ext4; every guard unmounts / detaches on drop, whatever happened.

mod kernel_check;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const CONFIG: &str = "[device]\nchannels = 2\nchips_per_channel = 1\ndies_per_chip = 2\nplanes_per_die = 1\nblocks_per_plane = 128\npages_per_block = 64\npage_bytes = 4096\nspare_factor = 0.2\n";

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_flashlab")
}

fn run(cmd: &str, args: &[&str]) -> Result<String, String> {
    let out = Command::new(cmd).args(args).output().map_err(|e| format!("{cmd}: {e}"))?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    } else {
        Err(format!("{cmd} {args:?}: {}{}", String::from_utf8_lossy(&out.stderr), String::from_utf8_lossy(&out.stdout)))
    }
}

/// Why the mounted tests cannot run here, if they cannot.
pub fn skip_reason(tools: &[&str]) -> Option<String> {
    // SAFETY: geteuid cannot fail.
    if unsafe { libc::geteuid() } != 0 {
        return Some("not root".into());
    }
    if !Path::new("/dev/fuse").exists() {
        return Some("/dev/fuse is missing".into());
    }
    if !Path::new("/dev/loop-control").exists() {
        return Some("/dev/loop-control is missing (no loop devices)".into());
    }
    for t in tools {
        if run("sh", &["-c", &format!("command -v {t}")]).is_err() {
            return Some(format!("{t} is not installed (Debian: fuse3 e2fsprogs btrfs-progs xfsprogs)"));
        }
    }
    None
}

fn mounted(dir: &Path) -> bool {
    let dir = dir.canonicalize().unwrap_or(dir.to_path_buf());
    let mounts = std::fs::read_to_string("/proc/mounts").unwrap_or_default();
    mounts.lines().any(|l| l.split(' ').nth(1) == Some(dir.to_str().unwrap_or("")))
}

/// A running `flashlab blockdev serve`; dropping it stops it (SIGINT, then unmount,
/// then kill) so no mount is left behind.
pub struct Server {
    child: Option<Child>,
    pub dir: PathBuf,
}

impl Server {
    pub fn start(args: &[&str], dir: &Path) -> Server {
        let child = Command::new(bin()).args(args).stdout(Stdio::null()).stderr(Stdio::piped()).spawn().expect("spawn");
        let mut s = Server { child: Some(child), dir: dir.to_path_buf() };
        let t = Instant::now();
        while !mounted(dir) {
            if t.elapsed() > Duration::from_secs(20) {
                panic!("{} was not mounted within 20 s", dir.display());
            }
            let c = s.child.as_mut().expect("running");
            if let Ok(Some(status)) = c.try_wait() {
                let mut err = String::new();
                if let Some(mut e) = c.stderr.take() {
                    use std::io::Read;
                    let _ = e.read_to_string(&mut err);
                }
                panic!("the server exited ({status}) before mounting: {err}");
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        s
    }

    /// SIGINT and wait for a clean exit; returns its standard error.
    pub fn stop(mut self) -> String {
        let mut c = self.child.take().expect("running");
        let _ = run("kill", &["-INT", &c.id().to_string()]);
        let status = wait_for(&mut c, Duration::from_secs(60));
        let mut err = String::new();
        if let Some(mut e) = c.stderr.take() {
            use std::io::Read;
            let _ = e.read_to_string(&mut err);
        }
        assert!(status.is_some_and(|s| s.success()), "server exit {status:?}: {err}");
        assert!(!mounted(&self.dir), "SIGINT unmounted {}", self.dir.display());
        err
    }

    /// SIGKILL: the server dies without saving anything.
    pub fn kill9(mut self) {
        let mut c = self.child.take().expect("running");
        let _ = c.kill();
        let _ = c.wait();
        let _ = run("umount", &["-l", self.dir.to_str().unwrap()]);
    }
}

fn wait_for(c: &mut Child, limit: Duration) -> Option<std::process::ExitStatus> {
    let t = Instant::now();
    while t.elapsed() < limit {
        if let Ok(Some(s)) = c.try_wait() {
            return Some(s);
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    None
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = run("kill", &["-INT", &c.id().to_string()]);
            if wait_for(&mut c, Duration::from_secs(20)).is_none() {
                let _ = c.kill();
                let _ = c.wait();
            }
        }
        if mounted(&self.dir) {
            let _ = run("umount", &["-l", self.dir.to_str().unwrap()]);
        }
    }
}

/// A loop device over a file; detached on drop.
struct Loop(String);

impl Loop {
    fn attach(file: &Path) -> Loop {
        Loop(run("losetup", &["-f", "--show", file.to_str().unwrap()]).expect("losetup").trim().to_string())
    }
}

impl Drop for Loop {
    fn drop(&mut self) {
        let _ = run("losetup", &["-d", &self.0]);
    }
}

/// A kernel mount; unmounted on drop.
struct Mount(PathBuf);

impl Mount {
    fn new(dev: &str, dir: &Path) -> Mount {
        std::fs::create_dir_all(dir).unwrap();
        run("mount", &[dev, dir.to_str().unwrap()]).expect("mount");
        Mount(dir.to_path_buf())
    }
}

impl Drop for Mount {
    fn drop(&mut self) {
        if mounted(&self.0) && run("umount", &[self.0.to_str().unwrap()]).is_err() {
            let _ = run("umount", &["-l", self.0.to_str().unwrap()]);
        }
    }
}

/// A deterministic tree: directories of files of varied sizes and contents.
pub fn write_tree(root: &Path, seed: u64) -> Vec<(PathBuf, Vec<u8>)> {
    let mut files = Vec::new();
    let mut x = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
    for d in 0..8 {
        let dir = root.join(format!("dir{d}"));
        std::fs::create_dir_all(&dir).unwrap();
        for f in 0..12 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let len = (x >> 33) as usize % 200_000;
            let data: Vec<u8> = (0..len).map(|i| ((i as u64 * 31 + x) >> 3) as u8).collect();
            let p = dir.join(format!("file{f}.bin"));
            std::fs::write(&p, &data).unwrap();
            files.push((p, data));
        }
    }
    files
}

fn check_tree(files: &[(PathBuf, Vec<u8>)], from: &Path, to: &Path) {
    for (p, data) in files {
        let q = to.join(p.strip_prefix(from).unwrap());
        assert!(std::fs::read(&q).unwrap() == *data, "{} differs", q.display());
    }
}

fn stats(dir: &Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(dir.join("stats.json")).unwrap()).unwrap()
}

#[test]
fn blockdev_serves_ext4_fstrim_fsck_image_and_trace() {
    if let Some(why) = skip_reason(&["mkfs.ext4", "fsck.ext4", "losetup", "fstrim"]) {
        println!("note: blockdev FUSE test skipped: {why}");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let cfg = t.join("ssd.toml");
    std::fs::write(&cfg, CONFIG).unwrap();
    let (mnt, img, json, trace) = (t.join("mnt"), t.join("ssd.img"), t.join("r.json"), t.join("trace.csv"));
    std::fs::create_dir(&mnt).unwrap();
    let s = |p: &Path| p.to_str().unwrap().to_string();
    let args = [
        "blockdev",
        "serve",
        &s(&cfg),
        &s(&mnt),
        "--image",
        &s(&img),
        "--json",
        &s(&json),
        "--record-trace",
        &s(&trace),
    ];
    let server = Server::start(&args, &mnt);
    let disk = mnt.join("disk");
    // 2 x 2 x 128 x 64 = 32 768 physical pages, 80 % of them logical (rounded down).
    assert_eq!(std::fs::metadata(&disk).unwrap().len(), 26_214 * 4096);
    // Writing past the end fails with ENOSPC; truncating the disk is refused.
    let past = std::fs::metadata(&disk).unwrap().len() / 4096;
    let dd = run(
        "dd",
        &["if=/dev/zero", &format!("of={}", s(&disk)), "bs=4096", &format!("seek={past}"), "count=1", "conv=notrunc"],
    );
    assert!(dd.as_ref().is_err_and(|e| e.contains("No space left")), "{dd:?}");
    assert!(std::fs::OpenOptions::new().write(true).open(&disk).unwrap().set_len(4096).is_err());
    let fs = t.join("fs");
    let files;
    {
        let lo = Loop::attach(&disk);
        run("mkfs.ext4", &["-q", "-F", &lo.0]).unwrap();
        {
            let m = Mount::new(&lo.0, &fs);
            files = write_tree(&m.0, 7);
            run("sync", &[]).unwrap();
        }
        run("fsck.ext4", &["-fn", &lo.0]).expect("fsck clean");
        let before = stats(&mnt)["trim_requests"].as_u64().unwrap();
        {
            let m = Mount::new(&lo.0, &fs);
            check_tree(&files, &fs, &m.0);
            for (p, _) in files.iter().step_by(2) {
                std::fs::remove_file(p).unwrap();
            }
            run("sync", &[]).unwrap();
            run("fstrim", &[&s(&m.0)]).unwrap();
        }
        let st = stats(&mnt);
        assert!(st["trim_requests"].as_u64().unwrap() > before, "fstrim shows as TRIMs: {st}");
        assert!(st["host_trim_pages"].as_u64().unwrap() > 1000);
        assert!(st["host_write_pages"].as_u64().unwrap() > 1000);
    }
    let err = server.stop();
    assert!(err.contains("serving"), "{err}");
    let r: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert!(r["trim_requests"].as_u64().unwrap() > 0);
    let writes = r["write_requests"].as_u64().unwrap();
    // The recorded trace replays with `flashlab run`: the same requests, the same NAND programs.
    let replay = t.join("replay.toml");
    std::fs::write(
        &replay,
        format!("{CONFIG}[workload]\nkind = \"trace\"\ntrace_path = \"{}\"\ntrace_format = \"csv\"\n", s(&trace)),
    )
    .unwrap();
    let rj = t.join("replay.json");
    run(bin(), &["run", &s(&replay), "--json", &s(&rj), "--quiet"]).unwrap();
    let rr: serde_json::Value = serde_json::from_slice(&std::fs::read(&rj).unwrap()).unwrap();
    assert_eq!(rr["write_requests"].as_u64().unwrap(), writes);
    assert_eq!(rr["trim_requests"], r["trim_requests"]);
    assert_eq!(rr["read_requests"], r["read_requests"]);

    // Reload from the image: the same files, the same counters carried on.
    let server = Server::start(&["blockdev", "serve", &s(&cfg), &s(&mnt), "--image", &s(&img)], &mnt);
    assert_eq!(stats(&mnt)["write_requests"].as_u64().unwrap(), writes);
    {
        let lo = Loop::attach(&mnt.join("disk"));
        run("fsck.ext4", &["-fn", &lo.0]).expect("fsck clean after reload");
        let m = Mount::new(&lo.0, &fs);
        let kept: Vec<_> = files.iter().skip(1).step_by(2).cloned().collect();
        check_tree(&kept, &fs, &m.0);
    }
    server.stop();

    // The same image under another geometry is a one-line error before mounting.
    let out = Command::new(bin())
        .args(["blockdev", "serve", &s(&cfg), &s(&mnt), "--image", &s(&img), "--set", "device.blocks_per_plane=129"])
        .output()
        .unwrap();
    let e = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && e.contains("different geometry") && e.lines().count() == 1, "{e}");
    assert!(!mounted(&mnt));
}

#[test]
fn blockdev_bad_input_is_one_line() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let cfg = t.join("ssd.toml");
    std::fs::write(&cfg, CONFIG).unwrap();
    let err = |args: &[&str]| {
        let out = Command::new(bin()).args(args).output().unwrap();
        assert!(!out.status.success());
        let e = String::from_utf8_lossy(&out.stderr).into_owned();
        assert_eq!(e.lines().count(), 1, "{e}");
        e
    };
    let c = cfg.to_str().unwrap();
    let missing = t.join("nope");
    assert!(err(&["blockdev", "serve", c, missing.to_str().unwrap()]).contains("does not exist"));
    let full = t.join("full");
    std::fs::create_dir(&full).unwrap();
    std::fs::write(full.join("x"), "x").unwrap();
    assert!(err(&["blockdev", "serve", c, full.to_str().unwrap()]).contains("is not empty"));
    let mnt = t.join("mnt");
    std::fs::create_dir(&mnt).unwrap();
    let junk = t.join("junk.img");
    std::fs::write(&junk, "not an image at all").unwrap();
    let e = err(&["blockdev", "serve", c, mnt.to_str().unwrap(), "--image", junk.to_str().unwrap()]);
    assert!(e.contains("not a flashlab SSD image"), "{e}");
    assert!(!mounted(&mnt));
}

const FS_CONFIG: &str = "[flashfs.flash]\nblocks = 256\npages_per_block = 64\npage_bytes = 2048\n[flashfs.ubi]\nfastmap = true\n[flashfs.fs]\ncompression = \"lz4\"\nstrict = true\n";

fn fs_tree(root: &Path, seed: u64) -> Vec<(PathBuf, Vec<u8>)> {
    let mut files = Vec::new();
    for d in 0..3 {
        let dir = root.join(format!("d{d}"));
        std::fs::create_dir_all(&dir).unwrap();
        for f in 0..5 {
            let len = ((seed + d * 7 + f * 13) * 2749) as usize % 60_000;
            let data: Vec<u8> = (0..len).map(|i| ((i / 7) as u64 ^ (seed + f)) as u8).collect();
            let p = dir.join(format!("f{f}.txt"));
            std::fs::write(&p, &data).unwrap();
            files.push((p, data));
        }
    }
    files
}

#[test]
fn fs_mount_keeps_files_across_unmount_and_fsynced_data_across_kill9() {
    if let Some(why) = skip_reason(&[]) {
        println!("note: fs mount FUSE test skipped: {why}");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let cfg = t.join("fs.toml");
    std::fs::write(&cfg, FS_CONFIG).unwrap();
    let (mnt, img) = (t.join("mnt"), t.join("nand.img"));
    std::fs::create_dir(&mnt).unwrap();
    let s = |p: &Path| p.to_str().unwrap().to_string();
    let args = ["fs", "mount", &s(&cfg), &s(&mnt), "--image", &s(&img)];

    // 1. Files, directories, rename, truncate, unlink, rmdir; then a clean unmount.
    let server = Server::start(&args, &mnt);
    let mut files = fs_tree(&mnt, 3);
    std::fs::rename(mnt.join("d2"), mnt.join("moved")).unwrap();
    for f in &mut files {
        if f.0.starts_with(mnt.join("d2")) {
            f.0 = mnt.join("moved").join(f.0.file_name().unwrap());
        }
    }
    let first = files[0].0.clone();
    std::fs::OpenOptions::new().write(true).open(&first).unwrap().set_len(100).unwrap();
    files[0].1.truncate(100);
    files[0].1.resize(100, 0);
    std::fs::create_dir(mnt.join("empty")).unwrap();
    std::fs::remove_dir(mnt.join("empty")).unwrap();
    let gone = files.remove(1).0;
    std::fs::remove_file(&gone).unwrap();
    assert!(std::fs::remove_dir(mnt.join("d0")).is_err(), "a non-empty directory is not removed");
    let mut names: Vec<_> = std::fs::read_dir(&mnt).unwrap().map(|e| e.unwrap().file_name()).collect();
    names.sort();
    assert_eq!(names, ["d0", "d1", "moved"]);
    check_tree(&files, &mnt, &mnt);
    server.stop();
    assert!(std::fs::metadata(&img).unwrap().len() > 0);

    // 2. Attach the image: the same files.
    let server = Server::start(&args, &mnt);
    check_tree(&files, &mnt, &mnt);
    assert!(!gone.exists());
    // 3. fsync one file, write another without fsync, kill -9.
    let synced: Vec<u8> = (0..30_000u32).map(|i| (i % 251) as u8).collect();
    {
        use std::io::Write;
        let mut f = std::fs::File::create(mnt.join("synced.bin")).unwrap();
        f.write_all(&synced).unwrap();
        f.sync_all().unwrap();
    }
    std::fs::write(mnt.join("unsynced.bin"), b"maybe lost").unwrap();
    server.kill9();
    assert!(!mounted(&mnt));

    // 4. Attach after the kill: what was fsynced is there, and everything before it.
    let server = Server::start(&args, &mnt);
    assert_eq!(std::fs::read(mnt.join("synced.bin")).unwrap(), synced);
    check_tree(&files, &mnt, &mnt);
    server.stop();

    // A NAND image of another geometry is one line, before mounting.
    let out = Command::new(bin())
        .args(["fs", "mount", &s(&cfg), &s(&mnt), "--image", &s(&img), "--set", "flashfs.flash.blocks=300"])
        .output()
        .unwrap();
    let e = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && e.contains("different geometry") && e.lines().count() == 1, "{e}");
    assert!(!mounted(&mnt));
}
