//! The page cache over an in-memory file system that records what reaches it.

use flashlab_vfs::{CacheSettings, DirEntry, Errno, Fd, FileSystem, PageCache, Stat, StatFs};
use proptest::prelude::*;
use std::collections::{BTreeMap, HashMap};

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
    files: HashMap<u32, (Vec<u8>, u64)>,
    fds: HashMap<Fd, u32>,
    next: u64,
    pages_written: Vec<(u32, u64)>,
    inode_writes: Vec<(u32, u64)>,
    reserved: u64,
    busy_ns: u64,
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
        let (b, size) = self.file(fd)?.clone();
        let end = (offset + len as u64).min(size);
        let mut out = vec![0u8; end.saturating_sub(offset) as usize];
        for (k, x) in out.iter_mut().enumerate() {
            *x = b.get(offset as usize + k).copied().unwrap_or(0);
        }
        Ok(out)
    }
    fn write(&mut self, fd: Fd, offset: u64, data: &[u8]) -> Result<usize, E> {
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
    fn mkdir(&mut self, _: &str) -> Result<(), E> {
        Ok(())
    }
    fn rmdir(&mut self, _: &str) -> Result<(), E> {
        Ok(())
    }
    fn rename(&mut self, from: &str, to: &str) -> Result<(), E> {
        let i = self.names.remove(from).ok_or(E(Errno::ENOENT))?;
        if let Some(t) = self.names.insert(to.into(), i) {
            self.files.remove(&t);
        }
        Ok(())
    }
    fn readdir(&mut self, _: &str) -> Result<Vec<DirEntry>, E> {
        Ok(Vec::new())
    }
    fn stat(&mut self, path: &str) -> Result<Stat, E> {
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
            total_bytes: 0,
            available_bytes: 0,
            free_bytes: 0,
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
