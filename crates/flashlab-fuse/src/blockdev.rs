//! `flashlab blockdev serve`: a FUSE file system holding `disk` (the simulated SSD's
//! logical capacity; reads, writes, fsync and fallocate go to [`Disk`]) and
//! `stats.json` (the live result object). A thin translation layer: all logic is in
//! [`Disk`].

use crate::disk::Disk;
use fuser::{
    Errno, FileAttr, FileHandle, FileType, Filesystem, FopenFlags, INodeNo, KernelConfig, LockOwner, OpenFlags,
    ReplyAttr, ReplyData, ReplyDirectory, ReplyEmpty, ReplyEntry, ReplyOpen, ReplyStatfs, ReplyWrite, Request,
    TimeOrNow, WriteFlags,
};
use std::collections::HashMap;
use std::ffi::OsStr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, SystemTime};

const DISK: INodeNo = INodeNo(2);
const STATS: INodeNo = INodeNo(3);
const TTL: Duration = Duration::from_secs(1);

/// Linux fallocate(2) mode bits (include/uapi/linux/falloc.h).
const FALLOC_FL_KEEP_SIZE: i32 = 0x01;
const FALLOC_FL_PUNCH_HOLE: i32 = 0x02;
const FALLOC_FL_ZERO_RANGE: i32 = 0x10;

/// The FUSE file system of `blockdev serve`.
pub struct BlockdevFs {
    disk: Arc<Mutex<Disk>>,
    started: SystemTime,
    /// `stats.json` as it was when each open handle was opened: a reader sees one
    /// consistent object, whatever is served meanwhile.
    snapshots: Mutex<HashMap<u64, Arc<Vec<u8>>>>,
    next_fh: AtomicU64,
    /// Length of the latest snapshot (the size `stat` reports).
    last_len: AtomicU64,
}

impl BlockdevFs {
    pub fn new(disk: Arc<Mutex<Disk>>) -> BlockdevFs {
        BlockdevFs {
            disk,
            started: SystemTime::now(),
            snapshots: Mutex::new(HashMap::new()),
            next_fh: AtomicU64::new(1),
            last_len: AtomicU64::new(0),
        }
    }

    fn snapshots(&self) -> MutexGuard<'_, HashMap<u64, Arc<Vec<u8>>>> {
        self.snapshots.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A new snapshot of `stats.json`, kept under a fresh handle.
    fn snapshot(&self) -> u64 {
        let s = self.stats();
        self.last_len.store(s.len() as u64, Ordering::Relaxed);
        let fh = self.next_fh.fetch_add(1, Ordering::Relaxed);
        self.snapshots().insert(fh, Arc::new(s));
        fh
    }

    fn disk(&self) -> MutexGuard<'_, Disk> {
        self.disk.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn stats(&self) -> Vec<u8> {
        let r = self.disk().result();
        let mut v = serde_json::to_vec_pretty(&r).expect("result serialises");
        v.push(b'\n');
        v
    }

    fn attr(&self, ino: INodeNo) -> Option<FileAttr> {
        let (kind, perm, size, nlink) = match ino {
            INodeNo::ROOT => (FileType::Directory, 0o755, 0, 2),
            DISK => (FileType::RegularFile, 0o644, self.disk().size(), 1),
            STATS => {
                let mut len = self.last_len.load(Ordering::Relaxed);
                if len == 0 {
                    len = self.stats().len() as u64;
                    self.last_len.store(len, Ordering::Relaxed);
                }
                (FileType::RegularFile, 0o444, len, 1)
            }
            _ => return None,
        };
        let t = self.started;
        // SAFETY: getuid/getgid cannot fail.
        let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
        Some(FileAttr {
            ino,
            size,
            blocks: size.div_ceil(512),
            atime: t,
            mtime: t,
            ctime: t,
            crtime: t,
            kind,
            perm,
            nlink,
            uid,
            gid,
            rdev: 0,
            flags: 0,
            blksize: 4096,
        })
    }
}

fn ttl(ino: INodeNo) -> Duration {
    if ino == STATS {
        Duration::ZERO
    } else {
        TTL
    }
}

impl Filesystem for BlockdevFs {
    fn init(&mut self, _req: &Request, config: &mut KernelConfig) -> std::io::Result<()> {
        let _ = config.set_max_write(1 << 20);
        Ok(())
    }

    fn lookup(&self, _req: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEntry) {
        let ino = match name.to_str() {
            Some("disk") if parent == INodeNo::ROOT => DISK,
            Some("stats.json") if parent == INodeNo::ROOT => STATS,
            _ => return reply.error(Errno::ENOENT),
        };
        let a = self.attr(ino).expect("known inode");
        reply.entry(&ttl(ino), &a, fuser::Generation(0));
    }

    fn getattr(&self, _req: &Request, ino: INodeNo, _fh: Option<FileHandle>, reply: ReplyAttr) {
        match self.attr(ino) {
            Some(a) => reply.attr(&ttl(ino), &a),
            None => reply.error(Errno::ENOENT),
        }
    }

    fn setattr(
        &self,
        _req: &Request,
        ino: INodeNo,
        _mode: Option<u32>,
        _uid: Option<u32>,
        _gid: Option<u32>,
        size: Option<u64>,
        _atime: Option<TimeOrNow>,
        _mtime: Option<TimeOrNow>,
        _ctime: Option<SystemTime>,
        _fh: Option<FileHandle>,
        _crtime: Option<SystemTime>,
        _chgtime: Option<SystemTime>,
        _bkuptime: Option<SystemTime>,
        _flags: Option<fuser::BsdFileFlags>,
        reply: ReplyAttr,
    ) {
        let Some(a) = self.attr(ino) else { return reply.error(Errno::ENOENT) };
        // The disk has a fixed size: truncation to another size is refused.
        if size.is_some_and(|s| s != a.size) {
            return reply.error(Errno::EINVAL);
        }
        reply.attr(&ttl(ino), &a);
    }

    fn open(&self, _req: &Request, ino: INodeNo, _flags: OpenFlags, reply: ReplyOpen) {
        match ino {
            // Direct I/O: every read and write of the disk reaches the simulated SSD,
            // none is served from or held in the kernel's page cache.
            DISK => reply.opened(FileHandle(0), FopenFlags::FOPEN_DIRECT_IO),
            STATS => reply.opened(FileHandle(self.snapshot()), FopenFlags::FOPEN_DIRECT_IO),
            _ => reply.error(Errno::EISDIR),
        }
    }

    fn read(
        &self,
        _req: &Request,
        ino: INodeNo,
        fh: FileHandle,
        offset: u64,
        size: u32,
        _flags: OpenFlags,
        _lock: Option<LockOwner>,
        reply: ReplyData,
    ) {
        match ino {
            DISK => match self.disk().read(offset, size as u64) {
                Ok(b) => reply.data(&b),
                Err(e) => reply.error(Errno::from_i32(e.errno())),
            },
            STATS => {
                let snap = self.snapshots().get(&fh.0).cloned();
                let s = snap.unwrap_or_else(|| Arc::new(self.stats()));
                let from = (offset as usize).min(s.len());
                let to = (from + size as usize).min(s.len());
                reply.data(&s[from..to]);
            }
            _ => reply.error(Errno::EISDIR),
        }
    }

    fn write(
        &self,
        _req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        offset: u64,
        data: &[u8],
        _write_flags: WriteFlags,
        _flags: OpenFlags,
        _lock: Option<LockOwner>,
        reply: ReplyWrite,
    ) {
        if ino != DISK {
            return reply.error(Errno::EACCES);
        }
        match self.disk().write(offset, data) {
            Ok(()) => reply.written(data.len() as u32),
            Err(e) => reply.error(Errno::from_i32(e.errno())),
        }
    }

    fn flush(&self, _req: &Request, _ino: INodeNo, _fh: FileHandle, _lock: LockOwner, reply: ReplyEmpty) {
        // close(): nothing is cached here, and close is not a durability point.
        reply.ok();
    }

    fn release(
        &self,
        _req: &Request,
        ino: INodeNo,
        fh: FileHandle,
        _flags: OpenFlags,
        _lock: Option<LockOwner>,
        _flush: bool,
        reply: ReplyEmpty,
    ) {
        if ino == STATS {
            self.snapshots().remove(&fh.0);
        }
        reply.ok();
    }

    fn fsync(&self, _req: &Request, ino: INodeNo, _fh: FileHandle, _datasync: bool, reply: ReplyEmpty) {
        if ino != DISK {
            return reply.ok();
        }
        match self.disk().flush() {
            Ok(()) => reply.ok(),
            Err(e) => reply.error(Errno::from_i32(e.errno())),
        }
    }

    fn fallocate(
        &self,
        _req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        offset: u64,
        length: u64,
        mode: i32,
        reply: ReplyEmpty,
    ) {
        if ino != DISK {
            return reply.error(Errno::EOPNOTSUPP);
        }
        let mut d = self.disk();
        let r = if mode == FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE {
            d.trim(offset, length)
        } else if mode & !FALLOC_FL_KEEP_SIZE == FALLOC_FL_ZERO_RANGE {
            d.write_zeros(offset, length)
        } else if mode & !FALLOC_FL_KEEP_SIZE == 0 {
            // Preallocation: every byte of the disk already exists.
            match offset.checked_add(length) {
                Some(end) if end <= d.size() => Ok(()),
                _ => return reply.error(Errno::ENOSPC),
            }
        } else {
            return reply.error(Errno::EOPNOTSUPP);
        };
        match r {
            Ok(()) => reply.ok(),
            Err(e) => reply.error(Errno::from_i32(e.errno())),
        }
    }

    fn readdir(&self, _req: &Request, ino: INodeNo, _fh: FileHandle, offset: u64, mut reply: ReplyDirectory) {
        if ino != INodeNo::ROOT {
            return reply.error(Errno::ENOTDIR);
        }
        let entries = [
            (INodeNo::ROOT, FileType::Directory, "."),
            (INodeNo::ROOT, FileType::Directory, ".."),
            (DISK, FileType::RegularFile, "disk"),
            (STATS, FileType::RegularFile, "stats.json"),
        ];
        for (i, (ino, kind, name)) in entries.iter().enumerate().skip(offset as usize) {
            if reply.add(*ino, i as u64 + 1, *kind, name) {
                break;
            }
        }
        reply.ok();
    }

    fn statfs(&self, _req: &Request, _ino: INodeNo, reply: ReplyStatfs) {
        let blocks = self.disk().size() / 4096;
        reply.statfs(blocks, 0, 0, 3, 0, 4096, 255, 4096);
    }
}
