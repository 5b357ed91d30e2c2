//! The page cache over an in-memory file system that records what reaches it.

use flashlab_vfs::{CacheSettings, DirEntry, Errno, Fd, FileSystem, PageCache, Stat, StatFs};
use proptest::prelude::*;
use std::collections::{BTreeMap, BTreeSet, HashMap};

#[derive(Debug, thiserror::Error)]
#[error("{0:?}")]
struct E(Errno);

impl From<Errno> for E {
    fn from(e: Errno) -> Self {
        E(e)
    }
}

/// A flat in-memory file system ("the device"): counts page and inode
/// writes; its contents are what survives a crash of the cache.
#[derive(Default)]
struct Mem {
    names: BTreeMap<String, u32>,
    /// Directories made by `mkdir` (`readdir` lists names below them).
    dirs: BTreeSet<String>,
    files: HashMap<u32, (Vec<u8>, u64)>,
    fds: HashMap<Fd, u32>,
    next: u64,
    pages_written: Vec<(u32, u64)>,
    inode_writes: Vec<(u32, u64)>,
    reserved: u64,
    busy_ns: u64,
    /// Calls of `read` (the device's page reads for `Measured`).
    reads: u64,
    /// `statfs`'s available bytes on the empty file system.
    cap: u64,
    /// Bytes of file data beyond which writes fail with ENOSPC.
    limit: Option<u64>,
}

impl Mem {
    fn inum(&self, path: &str) -> Result<u32, E> {
        self.names.get(path).copied().ok_or(E(Errno::ENOENT))
    }
    fn fd(&mut self, inum: u32) -> Fd {
        self.next += 1;
        self.fds.insert(Fd(self.next), inum);
        Fd(self.next)
    }
    fn file(&mut self, fd: Fd) -> Result<&mut (Vec<u8>, u64), E> {
        let i = *self.fds.get(&fd).ok_or(E(Errno::EBADF))?;
        self.files.get_mut(&i).ok_or(E(Errno::ENOENT))
    }
    fn used(&self) -> u64 {
        self.files.values().map(|f| f.1).sum()
    }
    fn stat_of(&self, inum: u32) -> Stat {
        Stat { inum, size: self.files[&inum].1, is_dir: false, nlink: 1 }
    }
}

fn put(buf: &mut Vec<u8>, off: u64, data: &[u8]) {
    let end = off as usize + data.len();
    if buf.len() < end {
        buf.resize(end, 0);
    }
    buf[off as usize..end].copy_from_slice(data);
}

impl FileSystem for Mem {
    type Error = E;
    fn errno(e: &E) -> Errno {
        e.0
    }
    fn create(&mut self, path: &str) -> Result<Fd, E> {
        if self.names.contains_key(path) {
            return Err(E(Errno::EEXIST));
        }
        let inum = self.next as u32 + 100;
        self.names.insert(path.into(), inum);
        self.files.insert(inum, (Vec::new(), 0));
        Ok(self.fd(inum))
    }
    fn open(&mut self, path: &str) -> Result<Fd, E> {
        let i = self.inum(path)?;
        Ok(self.fd(i))
    }
    fn close(&mut self, fd: Fd) -> Result<(), E> {
        self.fds.remove(&fd).map(|_| ()).ok_or(E(Errno::EBADF))
    }
    fn read(&mut self, fd: Fd, offset: u64, len: usize) -> Result<Vec<u8>, E> {
        self.reads += 1;
        let (b, size) = self.file(fd)?.clone();
        let end = (offset + len as u64).min(size);
        let mut out = vec![0u8; end.saturating_sub(offset) as usize];
        for (k, x) in out.iter_mut().enumerate() {
            *x = b.get(offset as usize + k).copied().unwrap_or(0);
        }
        Ok(out)
    }
    fn write(&mut self, fd: Fd, offset: u64, data: &[u8]) -> Result<usize, E> {
        let grow = (offset + data.len() as u64).saturating_sub(self.fstat(fd)?.size);
        if self.limit.is_some_and(|l| self.used() + grow > l) {
            return Err(E(Errno::ENOSPC));
        }
        let f = self.file(fd)?;
        put(&mut f.0, offset, data);
        f.1 = f.1.max(offset + data.len() as u64);
        Ok(data.len())
    }
    fn truncate(&mut self, path: &str, size: u64) -> Result<(), E> {
        let i = self.inum(path)?;
        let f = self.files.get_mut(&i).ok_or(E(Errno::ENOENT))?;
        f.0.truncate(size as usize);
        f.1 = size;
        Ok(())
    }
    fn ftruncate(&mut self, fd: Fd, size: u64) -> Result<(), E> {
        let f = self.file(fd)?;
        f.0.truncate(size as usize);
        f.1 = size;
        Ok(())
    }
    fn unlink(&mut self, path: &str) -> Result<(), E> {
        let i = self.names.remove(path).ok_or(E(Errno::ENOENT))?;
        self.files.remove(&i);
        Ok(())
    }
    fn mkdir(&mut self, path: &str) -> Result<(), E> {
        if !self.dirs.insert(path.into()) {
            return Err(E(Errno::EEXIST));
        }
        Ok(())
    }
    fn rmdir(&mut self, path: &str) -> Result<(), E> {
        if !self.readdir(path)?.is_empty() {
            return Err(E(Errno::ENOTEMPTY));
        }
        self.dirs.remove(path);
        Ok(())
    }
    fn rename(&mut self, from: &str, to: &str) -> Result<(), E> {
        let i = self.names.remove(from).ok_or(E(Errno::ENOENT))?;
        if let Some(t) = self.names.insert(to.into(), i) {
            self.files.remove(&t);
        }
        Ok(())
    }
    fn readdir(&mut self, path: &str) -> Result<Vec<DirEntry>, E> {
        let prefix = format!("{path}/");
        let child = |p: &String| p.strip_prefix(&prefix).filter(|r| !r.contains('/')).map(str::to_string);
        let files =
            self.names.iter().filter_map(|(p, i)| child(p).map(|name| DirEntry { name, inum: *i, is_dir: false }));
        let dirs = self.dirs.iter().filter_map(|p| child(p).map(|name| DirEntry { name, inum: 1, is_dir: true }));
        Ok(files.chain(dirs).collect())
    }
    fn stat(&mut self, path: &str) -> Result<Stat, E> {
        if self.dirs.contains(path) {
            return Ok(Stat { inum: 1, size: 0, is_dir: true, nlink: 2 });
        }
        let i = self.inum(path)?;
        Ok(self.stat_of(i))
    }
    fn fstat(&mut self, fd: Fd) -> Result<Stat, E> {
        let i = *self.fds.get(&fd).ok_or(E(Errno::EBADF))?;
        Ok(self.stat_of(i))
    }
    fn fsync(&mut self, _: Fd) -> Result<(), E> {
        Ok(())
    }
    fn sync(&mut self) -> Result<(), E> {
        Ok(())
    }
    fn statfs(&self) -> StatFs {
        StatFs {
            block_bytes: 4096,
            total_bytes: self.cap,
            available_bytes: self.cap.saturating_sub(self.used()),
            free_bytes: self.cap.saturating_sub(self.used()),
            leb_bytes: 0,
            main_lebs: 0,
            empty_lebs: 0,
        }
    }
    fn commit(&mut self) -> Result<(), E> {
        Ok(())
    }
    fn writepage(&mut self, inum: u32, index: u64, data: &[u8]) -> Result<(), E> {
        let f = self.files.get_mut(&inum).ok_or(E(Errno::ENOENT))?;
        assert!(index * 4096 + data.len() as u64 <= f.1, "page {index} past the size {} on flash", f.1);
        put(&mut f.0, index * 4096, data);
        self.pages_written.push((inum, index));
        self.busy_ns += 200_000;
        Ok(())
    }
    fn write_inode(&mut self, inum: u32, size: u64) -> Result<(), E> {
        let f = self.files.get_mut(&inum).ok_or(E(Errno::ENOENT))?;
        f.1 = size;
        f.0.truncate(size as usize);
        self.inode_writes.push((inum, size));
        Ok(())
    }
    fn reserve_pages(&mut self, pages: u64) -> Result<(), E> {
        self.reserved += pages;
        Ok(())
    }
    fn release_pages(&mut self, pages: u64) {
        self.reserved -= pages;
    }
    fn device_busy_ns(&self) -> u64 {
        self.busy_ns
    }
    fn advance_to(&mut self, _: u64) -> Result<(), E> {
        Ok(())
    }
}

fn cache(cfg: CacheSettings) -> PageCache<Mem> {
    PageCache::new(Mem::default(), cfg, 0)
}

const S: u64 = 1_000_000_000;

#[test]
fn data_of_a_file_deleted_before_writeback_never_reaches_the_device() {
    let mut c = cache(CacheSettings::default());
    let fd = c.create("/tmp").unwrap();
    c.write(fd, 0, &[7u8; 3 * 4096]).unwrap();
    c.close(fd).unwrap();
    c.unlink("/tmp").unwrap();
    c.sync().unwrap();
    c.idle_until(120 * S).unwrap();
    assert!(c.inner().pages_written.is_empty() && c.inner().inode_writes.is_empty());
    assert_eq!(c.stats().dirty_pages_dropped, 3);
    assert_eq!(c.inner().reserved, 0, "the dropped pages' budget is returned");
}

#[test]
fn a_file_grown_by_many_writes_gets_one_inode_write() {
    let mut c = cache(CacheSettings::default());
    let fd = c.create("/log").unwrap();
    for i in 0..100u64 {
        c.write(fd, i * 1000, &[i as u8; 1000]).unwrap();
    }
    c.fsync(fd).unwrap();
    let m = c.inner();
    assert_eq!(m.inode_writes, vec![(m.names["/log"], 100_000)], "written once, before the data");
    assert_eq!(m.pages_written.len(), 25, "100 000 bytes = 25 pages, each written once");
    assert_eq!(m.files[&m.names["/log"]].0.len(), 100_000);
}

#[test]
fn periodic_writeback_writes_inodes_dirty_for_30_s_at_the_5_s_flushes() {
    let mut c = cache(CacheSettings::default());
    let fd = c.create("/a").unwrap();
    c.write(fd, 0, b"hello").unwrap();
    // Dirtied a few µs after 0: not expired at the 30 s flush, written at 35 s.
    c.idle_until(34 * S).unwrap();
    assert!(c.inner().pages_written.is_empty());
    c.idle_until(35 * S).unwrap();
    assert_eq!(c.inner().pages_written.len(), 1);
    assert_eq!(c.stats().pages_written_periodic, 1);
    assert_eq!(c.dirty_page_count(), 0);
}

#[test]
fn fsync_writes_only_that_file() {
    let mut c = cache(CacheSettings::default());
    let a = c.create("/a").unwrap();
    let b = c.create("/b").unwrap();
    c.write(a, 0, &[1u8; 8192]).unwrap();
    c.write(b, 0, &[2u8; 8192]).unwrap();
    c.fsync(a).unwrap();
    let ia = c.inner().names["/a"];
    assert!(c.inner().pages_written.iter().all(|(i, _)| *i == ia));
    assert_eq!(c.inner().pages_written.len(), 2);
    assert_eq!(c.dirty_page_count(), 2, "/b stays dirty");
    // A crash now loses /b's data only.
    let m = c.into_inner_lost();
    assert_eq!(m.files[&m.names["/a"]].0, vec![1u8; 8192]);
    assert!(m.files[&m.names["/b"]].0.is_empty());
}

#[test]
fn background_writeback_keeps_dirty_pages_below_the_background_ratio() {
    // 16 MiB of memory: background threshold 10 % = 409 pages.
    let mut c = cache(CacheSettings { memory_mib: 16, ..CacheSettings::default() });
    let fd = c.create("/big").unwrap();
    for i in 0..600u64 {
        c.write(fd, i * 4096, &[3u8; 4096]).unwrap();
        assert!(c.dirty_page_count() <= 409, "{} dirty after page {i}", c.dirty_page_count());
    }
    assert!(c.stats().pages_written_background >= 190);
}

#[test]
fn memory_pressure_writes_back_when_no_clean_page_is_left() {
    // 1 MiB = 256 pages, dirty ratios at 100 %: only reclaim forces writeback.
    let cfg = CacheSettings { memory_mib: 1, dirty_background_ratio: 100, dirty_ratio: 100, ..Default::default() };
    let mut c = cache(cfg);
    let fd = c.create("/a").unwrap();
    let fd2 = c.create("/b").unwrap();
    c.write(fd, 0, &[1u8; 256 * 4096]).unwrap();
    assert_eq!(c.stats().pages_written_pressure, 0);
    c.write(fd2, 0, &[2u8; 4096]).unwrap();
    assert_eq!(c.stats().pages_written_pressure, 256, "the oldest dirty inode was written back");
    assert_eq!(c.read(fd, 0, 8).unwrap(), vec![1u8; 8]);
}

#[test]
fn truncate_drops_dirty_pages_past_the_end() {
    let mut c = cache(CacheSettings::default());
    let fd = c.create("/t").unwrap();
    c.write(fd, 0, &[9u8; 5 * 4096]).unwrap();
    c.truncate("/t", 4096 + 10).unwrap();
    assert_eq!(c.stats().dirty_pages_dropped, 3);
    c.sync().unwrap();
    let m = c.inner();
    assert_eq!(m.files[&m.names["/t"]].0.len(), 4106);
    assert_eq!(m.pages_written.len(), 2);
}

#[derive(Debug, Clone)]
enum Op {
    Write(usize, u16, u16, u8),
    Truncate(usize, u16),
    Unlink(usize),
    Fsync(usize),
    Sync,
    Idle(u8),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => (0..3usize, 0..20_000u16, 1..9000u16, any::<u8>()).prop_map(|(f, o, l, b)| Op::Write(f, o, l, b)),
        1 => (0..3usize, 0..20_000u16).prop_map(|(f, s)| Op::Truncate(f, s)),
        1 => (0..3usize).prop_map(Op::Unlink),
        1 => (0..3usize).prop_map(Op::Fsync),
        1 => Just(Op::Sync),
        1 => (0..40u8).prop_map(Op::Idle),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Reads through the cache always equal a plain byte-vector oracle, and
    /// after sync the device holds exactly the oracle's files.
    #[test]
    fn cache_matches_oracle(ops in proptest::collection::vec(op(), 1..60), mem in 1u32..4) {
        let cfg = CacheSettings { memory_mib: mem, ..Default::default() };
        let mut c = cache(cfg);
        let mut oracle: BTreeMap<String, Vec<u8>> = BTreeMap::new();
        let path = |f: usize| format!("/f{f}");
        for op in ops {
            match op {
                Op::Write(f, o, l, b) => {
                    let fd = match c.open(&path(f)) { Ok(fd) => fd, Err(_) => c.create(&path(f)).unwrap() };
                    let data = vec![b; l as usize];
                    c.write(fd, o as u64, &data).unwrap();
                    c.close(fd).unwrap();
                    put(oracle.entry(path(f)).or_default(), o as u64, &data);
                }
                Op::Truncate(f, s) => {
                    if c.truncate(&path(f), s as u64).is_ok() {
                        oracle.get_mut(&path(f)).unwrap().resize(s as usize, 0);
                    }
                }
                Op::Unlink(f) => {
                    if c.unlink(&path(f)).is_ok() {
                        oracle.remove(&path(f));
                    }
                }
                Op::Fsync(f) => {
                    if let Ok(fd) = c.open(&path(f)) {
                        c.fsync(fd).unwrap();
                        c.close(fd).unwrap();
                    }
                }
                Op::Sync => c.sync().unwrap(),
                Op::Idle(s) => { let t = c.now_ns() + s as u64 * S; c.idle_until(t).unwrap() }
            }
            prop_assert_eq!(c.check_dirty_order(), Ok(()));
            for (p, want) in &oracle {
                let fd = c.open(p).unwrap();
                prop_assert_eq!(c.fstat(fd).unwrap().size, want.len() as u64);
                prop_assert_eq!(&c.read(fd, 0, want.len() + 10).unwrap(), want);
                c.close(fd).unwrap();
            }
        }
        c.sync().unwrap();
        let m = c.into_inner_lost();
        prop_assert_eq!(m.reserved, 0);
        for (p, want) in &oracle {
            let (b, size) = &m.files[&m.names[p]];
            prop_assert_eq!(*size, want.len() as u64);
            let mut got = b.clone();
            got.resize(want.len(), 0);
            prop_assert_eq!(&got, want);
        }
    }
}

// ---- the file workloads and `run_workload` ----

use flashlab_vfs::workload::{
    run_workload, BenchError, BenchSpec, DeviceCounters, FsWrites, IozoneSpec, Measured, Workload, WorkloadKind,
    WorkloadSpec, IOZONE_PHASES,
};

/// Mem's "device": every page written back is a program, every read a page read.
impl Measured for Mem {
    fn fs_writes(&self) -> FsWrites {
        FsWrites { data: self.pages_written.len() as u64 * 4096, ..FsWrites::default() }
    }
    fn device_counters(&self) -> DeviceCounters {
        DeviceCounters {
            nand_read_pages: self.reads,
            nand_program_pages: self.pages_written.len() as u64,
            ..DeviceCounters::default()
        }
    }
    fn device_result(&self) -> serde_json::Value {
        serde_json::json!({ "pages_written": self.pages_written.len() })
    }
}

fn iozone(file_kib: u64, utilisation_pct: f64) -> BenchSpec {
    BenchSpec {
        workload: Workload::Iozone(IozoneSpec {
            file_bytes: file_kib * 1024,
            request_bytes: 4096,
            update_fraction: 0.25,
            seed: 7,
        }),
        utilisation_pct,
    }
}

fn mem(cap: u64) -> Mem {
    Mem { cap, ..Mem::default() }
}

#[test]
fn iozone_times_each_phase_and_fills_to_the_utilisation() {
    let mut c = PageCache::new(mem(1 << 20), CacheSettings::default(), 0);
    let r = run_workload(&mut c, &iozone(64, 50.0)).unwrap();
    let names: Vec<&str> = r.phases.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names[0], "fill");
    assert_eq!(&names[1..], &IOZONE_PHASES);
    // 50 % of 1 MiB less the 64 KiB file.
    assert_eq!((r.capacity_bytes, r.filler_bytes, r.phases[0].app_bytes_written), (1 << 20, 458_752, 458_752));
    let requests: Vec<u64> = r.phases[1..].iter().map(|p| p.requests).collect();
    assert_eq!(requests, vec![16, 4, 16, 16, 16, 16], "16 records; 25 % updated");
    assert_eq!((r.app_bytes_written, r.app_bytes_read), ((16 + 4 + 16 + 16) * 4096, 32 * 4096));
    let p = |n: &str| r.phases.iter().find(|p| p.name == n).unwrap();
    // Sequential writes reach the device page by page, every record written
    // back by the closing fsync; the sequential read after the caches were
    // dropped reads ahead: windows of 4 and 8 pages, then 16 clipped to the
    // 4 left (three `read` calls).
    assert_eq!(p("create").device.nand_program_pages, 16);
    assert_eq!(p("seq-write").device.nand_program_pages, 16);
    assert_eq!(p("seq-read").device.nand_read_pages, 3);
    assert!((1..=4).contains(&p("update").device.nand_program_pages));
    assert!(r.phases[1..].iter().all(|p| p.seconds > 0.0 && p.latency_us_mean.is_some()));
    assert!(r.phases[1..]
        .iter()
        .all(|p| p.latency_us_max >= p.latency_us_p99 && p.latency_us_max >= p.latency_us_mean));
    let sum: u64 = r.phases[1..].iter().map(|p| p.fs_writes.data).sum();
    assert_eq!(r.fs_write_bytes, sum);
    assert_eq!(r.fs_waf, Some(sum as f64 / r.app_bytes_written as f64));
    assert!(!r.enospc);
    let again = run_workload(&mut PageCache::new(mem(1 << 20), CacheSettings::default(), 0), &iozone(64, 50.0));
    assert_eq!(again.unwrap(), r, "same spec, same report");
}

#[test]
fn enospc_is_a_result_and_bad_input_names_the_key() {
    // statfs claims 1 MiB but only 400 KiB can be written (256 KiB of filler): the create phase runs out.
    let mut m = Mem { limit: Some(400 << 10), ..mem(1 << 20) };
    let r = run_workload(&mut m, &iozone(256, 50.0)).unwrap();
    assert_eq!((r.enospc, r.enospc_phase.as_deref()), (true, Some("create")));
    assert_eq!(r.phases.last().unwrap().name, "create");
    assert_eq!(r.phases.last().unwrap().requests, 36, "144 KiB of the file fit");
    for u in [0.0, 100.0, -3.0, f64::NAN] {
        let e = run_workload(&mut mem(1 << 20), &iozone(64, u)).unwrap_err();
        assert!(matches!(e, BenchError::Invalid { key: "fs.workload.utilisation", .. }), "{e}");
    }
    let e = run_workload(&mut mem(1 << 20), &iozone(2048, 50.0)).unwrap_err().to_string();
    assert!(e.starts_with("fs.workload.file_kib = 2048:") && e.contains("1 MiB"), "{e}");
}

#[test]
fn dd_runs_generically_and_reports_its_counters() {
    let w = WorkloadSpec {
        kind: WorkloadKind::Dd,
        files: 1,
        file_bytes: 0,
        append_bytes: 16 << 10,
        threads: 1,
        write_target_bytes: 1 << 20,
        seed: 3,
    };
    let spec = BenchSpec { workload: Workload::Files(w), utilisation_pct: 10.0 };
    let r = run_workload(&mut mem(8 << 20), &spec).unwrap();
    let run = r.phases.iter().find(|p| p.name == "run").unwrap();
    assert_eq!((run.requests, run.app_bytes_written), (8, 1 << 20), "eight 128 KiB writes");
    assert_eq!(r.ops.as_ref().map(|o| o.bytes_written), Some(1 << 20));
    assert_eq!(r.filler_bytes, (8 << 20) / 10);
    assert_eq!(r.workload, "dd");
}

mod fs_compare {
    use super::*;
    use flashlab_vfs::workload::kernel_tree::{Tree, LINUX_3_7};
    use flashlab_vfs::workload::{run_fs_compare, FsCompareSpec};

    #[test]
    fn the_sequence_moves_every_byte_and_visits_every_entry() {
        let tree = Tree::generate(&LINUX_3_7, 0.002, 5);
        let (files, dirs, bytes) = (tree.files.len() as u64, tree.dirs.len() as u64, tree.total_bytes());
        let spec = FsCompareSpec { copies: 3, large_file_bytes: [300_000, 100_000], io_bytes: 65536, seed: 1 };
        let mut fs = PageCache::new(mem(1 << 40), CacheSettings::default(), 0);
        let phases = run_fs_compare(&mut fs, &tree, &spec).unwrap();
        let get = |n: &str| phases.iter().find(|p| p.name == n).unwrap_or_else(|| panic!("no phase {n}"));
        for k in 0..3 {
            let u = get(&format!("unpack/{k}"));
            assert_eq!(u.app_bytes_written, bytes);
            let chunks: u64 = tree.files.iter().map(|f| f.bytes.div_ceil(65536)).sum();
            // mkdir per directory (the copy's own included), create + writes + close per file, one sync.
            assert_eq!(u.requests, dirs + files * 2 + chunks + 1);
            assert_eq!(get(&format!("read/{k}")).app_bytes_read, bytes);
            // du: a readdir per directory, a stat per entry (the top included).
            assert_eq!(get(&format!("du/{k}")).requests, 2 * dirs + files);
            // rm -r: a readdir and an rmdir per directory, an unlink per file.
            assert_eq!(get(&format!("rm/{k}")).requests, 2 * dirs + files);
            assert!(get(&format!("unpack/{k}")).seconds > 0.0, "writeback took device time");
        }
        assert_eq!(get("large-write").app_bytes_written, 400_000);
        assert_eq!(get("large-read").app_bytes_read, 400_000);
        let left: Vec<DirEntry> = fs.readdir("").unwrap();
        let names: Vec<&str> = left.iter().map(|e| e.name.as_str()).collect();
        assert_eq!(names, ["large0", "large1"], "only the large files are left");
    }
}
