//! `flashlab fs mount`: flashfs (over UBI over simulated NAND, real bytes) through FUSE.
//! A thin translation layer over [`FlashVol`]. Durability: after every successful
//! `fsync`, `fsyncdir` and `syncfs`-driven fsync the NAND image is written through the
//! `persist` callback, so a server killed at any point leaves the NAND as it was at the
//! last fsync (or later): attaching it replays flashfs's journal, as after a power cut.

use crate::flashvol::{errno_number, Attr, FlashVol};
use flashlab_flashfs::Fd;
use fuser::{
    Errno, FileAttr, FileHandle, FileType, Filesystem, FopenFlags, INodeNo, LockOwner, OpenFlags, RenameFlags,
    ReplyAttr, ReplyCreate, ReplyData, ReplyDirectory, ReplyEmpty, ReplyEntry, ReplyOpen, ReplyStatfs, ReplyWrite,
    Request, TimeOrNow, WriteFlags,
};
use std::ffi::OsStr;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, SystemTime};

const TTL: Duration = Duration::from_secs(1);

/// Writes a NAND image somewhere durable.
pub type Persist = Box<dyn Fn(&[u8]) -> std::io::Result<()> + Send + Sync>;

/// The FUSE file system of `fs mount`. The volume is `None` once unmounted.
pub struct FsMountFs {
    vol: Arc<Mutex<Option<FlashVol>>>,
    persist: Persist,
    started: SystemTime,
}

impl FsMountFs {
    pub fn new(vol: Arc<Mutex<Option<FlashVol>>>, persist: Persist) -> FsMountFs {
        FsMountFs { vol, persist, started: SystemTime::now() }
    }

    fn vol(&self) -> MutexGuard<'_, Option<FlashVol>> {
        self.vol.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Run `f` on the mounted volume; a flashfs error becomes its errno.
    fn with<T>(&self, f: impl FnOnce(&mut FlashVol) -> Result<T, flashlab_flashfs::Errno>) -> Result<T, Errno> {
        match self.vol().as_mut() {
            Some(v) => f(v).map_err(|e| Errno::from_i32(errno_number(e))),
            None => Err(Errno::EIO),
        }
    }

    /// Save the NAND image after a durability point.
    fn persist(&self) -> Result<(), Errno> {
        let img = self.vol().as_ref().map(FlashVol::image);
        match img.map(|b| (self.persist)(&b)) {
            Some(Ok(())) => Ok(()),
            _ => Err(Errno::EIO),
        }
    }

    fn attr(&self, a: Attr) -> FileAttr {
        let t = self.started;
        // SAFETY: getuid/getgid cannot fail.
        let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
        FileAttr {
            ino: INodeNo(a.ino),
            size: a.size,
            blocks: a.size.div_ceil(512),
            atime: t,
            mtime: t,
            ctime: t,
            crtime: t,
            kind: if a.is_dir { FileType::Directory } else { FileType::RegularFile },
            perm: if a.is_dir { 0o755 } else { 0o644 },
            nlink: a.nlink.max(1),
            uid,
            gid,
            rdev: 0,
            flags: 0,
            blksize: 4096,
        }
    }
}

fn name(n: &OsStr) -> Result<&str, Errno> {
    n.to_str().ok_or(Errno::EINVAL)
}

impl Filesystem for FsMountFs {
    fn destroy(&mut self) {
        // Unmounting (commit, fastmap) is done by the caller, which owns the volume.
    }

    fn lookup(&self, _req: &Request, parent: INodeNo, n: &OsStr, reply: ReplyEntry) {
        match name(n).and_then(|n| self.with(|v| v.lookup(parent.0, n))) {
            Ok(a) => reply.entry(&TTL, &self.attr(a), fuser::Generation(0)),
            Err(e) => reply.error(e),
        }
    }

    fn getattr(&self, _req: &Request, ino: INodeNo, _fh: Option<FileHandle>, reply: ReplyAttr) {
        match self.with(|v| v.getattr(ino.0)) {
            Ok(a) => reply.attr(&TTL, &self.attr(a)),
            Err(e) => reply.error(e),
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
        // flashfs keeps no modes, owners or times: only a size change does something.
        let r = self.with(|v| {
            if let Some(s) = size {
                v.truncate(ino.0, s)?;
            }
            v.getattr(ino.0)
        });
        match r {
            Ok(a) => reply.attr(&TTL, &self.attr(a)),
            Err(e) => reply.error(e),
        }
    }

    fn mkdir(&self, _req: &Request, parent: INodeNo, n: &OsStr, _mode: u32, _umask: u32, reply: ReplyEntry) {
        match name(n).and_then(|n| self.with(|v| v.mkdir(parent.0, n))) {
            Ok(a) => reply.entry(&TTL, &self.attr(a), fuser::Generation(0)),
            Err(e) => reply.error(e),
        }
    }

    fn unlink(&self, _req: &Request, parent: INodeNo, n: &OsStr, reply: ReplyEmpty) {
        match name(n).and_then(|n| self.with(|v| v.unlink(parent.0, n))) {
            Ok(()) => reply.ok(),
            Err(e) => reply.error(e),
        }
    }

    fn rmdir(&self, _req: &Request, parent: INodeNo, n: &OsStr, reply: ReplyEmpty) {
        match name(n).and_then(|n| self.with(|v| v.rmdir(parent.0, n))) {
            Ok(()) => reply.ok(),
            Err(e) => reply.error(e),
        }
    }

    fn rename(
        &self,
        _req: &Request,
        parent: INodeNo,
        n: &OsStr,
        new_parent: INodeNo,
        new_name: &OsStr,
        flags: RenameFlags,
        reply: ReplyEmpty,
    ) {
        if !flags.is_empty() {
            return reply.error(Errno::EINVAL);
        }
        let r =
            name(n).and_then(|a| name(new_name).and_then(|b| self.with(|v| v.rename(parent.0, a, new_parent.0, b))));
        match r {
            Ok(()) => reply.ok(),
            Err(e) => reply.error(e),
        }
    }

    fn open(&self, _req: &Request, ino: INodeNo, _flags: OpenFlags, reply: ReplyOpen) {
        match self.with(|v| v.open(ino.0)) {
            Ok(fd) => reply.opened(FileHandle(fd.0), FopenFlags::empty()),
            Err(e) => reply.error(e),
        }
    }

    fn create(
        &self,
        _req: &Request,
        parent: INodeNo,
        n: &OsStr,
        _mode: u32,
        _umask: u32,
        _flags: i32,
        reply: ReplyCreate,
    ) {
        match name(n).and_then(|n| self.with(|v| v.create(parent.0, n))) {
            Ok((a, fd)) => {
                reply.created(&TTL, &self.attr(a), fuser::Generation(0), FileHandle(fd.0), FopenFlags::empty())
            }
            Err(e) => reply.error(e),
        }
    }

    fn read(
        &self,
        _req: &Request,
        _ino: INodeNo,
        fh: FileHandle,
        offset: u64,
        size: u32,
        _flags: OpenFlags,
        _lock: Option<LockOwner>,
        reply: ReplyData,
    ) {
        match self.with(|v| v.read(Fd(fh.0), offset, size as usize)) {
            Ok(b) => reply.data(&b),
            Err(e) => reply.error(e),
        }
    }

    fn write(
        &self,
        _req: &Request,
        _ino: INodeNo,
        fh: FileHandle,
        offset: u64,
        data: &[u8],
        _write_flags: WriteFlags,
        _flags: OpenFlags,
        _lock: Option<LockOwner>,
        reply: ReplyWrite,
    ) {
        match self.with(|v| v.write(Fd(fh.0), offset, data)) {
            Ok(n) => reply.written(n as u32),
            Err(e) => reply.error(e),
        }
    }

    fn flush(&self, _req: &Request, _ino: INodeNo, _fh: FileHandle, _lock: LockOwner, reply: ReplyEmpty) {
        reply.ok();
    }

    fn release(
        &self,
        _req: &Request,
        _ino: INodeNo,
        fh: FileHandle,
        _flags: OpenFlags,
        _lock: Option<LockOwner>,
        _flush: bool,
        reply: ReplyEmpty,
    ) {
        match self.with(|v| v.release(Fd(fh.0))) {
            Ok(()) => reply.ok(),
            Err(e) => reply.error(e),
        }
    }

    fn fsync(&self, _req: &Request, _ino: INodeNo, fh: FileHandle, _datasync: bool, reply: ReplyEmpty) {
        match self.with(|v| v.fsync(Fd(fh.0))).and_then(|()| self.persist()) {
            Ok(()) => reply.ok(),
            Err(e) => reply.error(e),
        }
    }

    fn fsyncdir(&self, _req: &Request, _ino: INodeNo, _fh: FileHandle, _datasync: bool, reply: ReplyEmpty) {
        match self.with(|v| v.sync()).and_then(|()| self.persist()) {
            Ok(()) => reply.ok(),
            Err(e) => reply.error(e),
        }
    }

    fn readdir(&self, _req: &Request, ino: INodeNo, _fh: FileHandle, offset: u64, mut reply: ReplyDirectory) {
        let entries = match self.with(|v| v.readdir(ino.0)) {
            Ok(e) => e,
            Err(e) => return reply.error(e),
        };
        for (i, (ino, is_dir, n)) in entries.iter().enumerate().skip(offset as usize) {
            let kind = if *is_dir { FileType::Directory } else { FileType::RegularFile };
            if reply.add(INodeNo(*ino), i as u64 + 1, kind, n) {
                break;
            }
        }
        reply.ok();
    }

    fn statfs(&self, _req: &Request, _ino: INodeNo, reply: ReplyStatfs) {
        let Some(s) = self.vol().as_ref().map(FlashVol::statfs) else { return reply.error(Errno::EIO) };
        let b = s.block_bytes.max(1);
        reply.statfs(s.total_bytes / b, s.free_bytes / b, s.available_bytes / b, 0, 0, b as u32, 255, b as u32);
    }
}
