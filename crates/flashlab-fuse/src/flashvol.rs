//! flashfs over UBI over simulated NAND, addressed the way FUSE addresses a file system:
//! by inode number and name. flashfs's API is path-based; this keeps the table of the
//! paths of the inodes the kernel looked up (renames rewrite it). No FUSE here: the
//! FUSE edge (`fsmount`) only translates calls.
//!
//! The NAND image (see [`image`](FlashVol::image)) is the device's content and wear
//! ([`Nand::save_state`]) followed by a CRC-32.

use flashlab_flashfs::powercut::CampaignSettings;
use flashlab_flashfs::{Errno, Fd, Fs, StatFs};
use flashlab_mtd::{MtdStats, Nand, StateError};
use flashlab_ubi::Ubi;
use std::collections::HashMap;
use thiserror::Error;

/// The FUSE inode number of the root directory.
pub const ROOT: u64 = 1;

/// Why a volume could not be made, attached or saved.
#[derive(Debug, Error)]
pub enum VolError {
    #[error("NAND image is corrupt: CRC-32 {found:#010x} of its contents, {stored:#010x} stored")]
    Checksum { found: u32, stored: u32 },
    #[error(transparent)]
    State(#[from] StateError),
    #[error("{0}")]
    Flash(String),
}

/// What `getattr` reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Attr {
    pub ino: u64,
    pub size: u64,
    pub is_dir: bool,
    pub nlink: u32,
}

/// A mounted flashfs volume.
pub struct FlashVol {
    fs: Fs,
    root: u32,
    paths: HashMap<u64, String>,
}

impl FlashVol {
    /// A freshly formatted NAND, UBI and flashfs as `s` (the `[flashfs]` section) say.
    pub fn format(s: &CampaignSettings) -> Result<FlashVol, VolError> {
        let mut ubi = Ubi::format(Nand::new(s.flash.clone()), s.ubi.clone()).map_err(|f| flash(f.error))?;
        let vol = ubi.create_volume("flashfs", 0).map_err(flash)?;
        let fs = Fs::format(ubi, vol, fs_settings(s)).map_err(|f| flash(f.error))?;
        FlashVol::new(fs)
    }

    /// Attach a saved NAND image: UBI attaches it (fastmap or scan), flashfs mounts it
    /// (replaying its journal if it was not unmounted cleanly).
    pub fn attach(s: &CampaignSettings, image: &[u8]) -> Result<FlashVol, VolError> {
        let nand = Nand::load_state(s.flash.clone(), checked(image)?)?;
        let ubi = Ubi::attach(nand, s.ubi.clone()).map_err(|f| flash(f.error))?;
        let fs = Fs::mount(ubi, 0, fs_settings(s)).map_err(|f| flash(f.error))?;
        FlashVol::new(fs)
    }

    fn new(mut fs: Fs) -> Result<FlashVol, VolError> {
        let root = fs.stat("/").map_err(flash)?.inum;
        Ok(FlashVol { fs, root, paths: HashMap::from([(ROOT, "/".to_string())]) })
    }

    /// The NAND as it is now, as an image (what a power cut at this instant would leave).
    pub fn image(&self) -> Vec<u8> {
        with_crc(self.fs.ubi().nand().save_state())
    }

    /// Unmount cleanly (commit, fastmap); the NAND image and the NAND's counters.
    pub fn unmount(self) -> Result<(Vec<u8>, MtdStats), VolError> {
        let nand = self.fs.unmount().map_err(|f| flash(f.error))?.into_nand();
        Ok((with_crc(nand.save_state()), nand.stats().clone()))
    }

    /// The file system (counters, statistics).
    pub fn fs(&self) -> &Fs {
        &self.fs
    }

    fn ino(&self, inum: u32) -> u64 {
        if inum == self.root {
            ROOT
        } else {
            inum as u64 + 1
        }
    }

    fn path(&self, ino: u64) -> Result<&str, Errno> {
        self.paths.get(&ino).map(String::as_str).ok_or(Errno::ENOENT)
    }

    fn child(&self, parent: u64, name: &str) -> Result<String, Errno> {
        let p = self.path(parent)?;
        Ok(if p == "/" { format!("/{name}") } else { format!("{p}/{name}") })
    }

    fn attr_of(&mut self, path: String) -> Result<Attr, Errno> {
        let st = self.fs.stat(&path).map_err(|e| e.errno())?;
        let ino = self.ino(st.inum);
        self.paths.insert(ino, path);
        Ok(Attr { ino, size: st.size, is_dir: st.is_dir, nlink: st.nlink })
    }

    pub fn lookup(&mut self, parent: u64, name: &str) -> Result<Attr, Errno> {
        let p = self.child(parent, name)?;
        self.attr_of(p)
    }

    pub fn getattr(&mut self, ino: u64) -> Result<Attr, Errno> {
        let p = self.path(ino)?.to_string();
        self.attr_of(p)
    }

    pub fn create(&mut self, parent: u64, name: &str) -> Result<(Attr, Fd), Errno> {
        let p = self.child(parent, name)?;
        let fd = self.fs.create(&p).map_err(|e| e.errno())?;
        Ok((self.attr_of(p)?, fd))
    }

    pub fn mkdir(&mut self, parent: u64, name: &str) -> Result<Attr, Errno> {
        let p = self.child(parent, name)?;
        self.fs.mkdir(&p).map_err(|e| e.errno())?;
        self.attr_of(p)
    }

    pub fn unlink(&mut self, parent: u64, name: &str) -> Result<(), Errno> {
        let p = self.child(parent, name)?;
        self.fs.unlink(&p).map_err(|e| e.errno())?;
        self.paths.retain(|_, q| *q != p);
        Ok(())
    }

    pub fn rmdir(&mut self, parent: u64, name: &str) -> Result<(), Errno> {
        let p = self.child(parent, name)?;
        self.fs.rmdir(&p).map_err(|e| e.errno())?;
        self.paths.retain(|_, q| *q != p);
        Ok(())
    }

    pub fn rename(&mut self, parent: u64, name: &str, new_parent: u64, new_name: &str) -> Result<(), Errno> {
        let (from, to) = (self.child(parent, name)?, self.child(new_parent, new_name)?);
        self.fs.rename(&from, &to).map_err(|e| e.errno())?;
        self.paths.retain(|_, q| *q != to);
        let prefix = format!("{from}/");
        for q in self.paths.values_mut() {
            if *q == from {
                q.clone_from(&to);
            } else if let Some(rest) = q.strip_prefix(&prefix) {
                *q = format!("{to}/{rest}");
            }
        }
        Ok(())
    }

    /// The entries of a directory as (inode, is a directory, name), `.` and `..` first.
    pub fn readdir(&mut self, ino: u64) -> Result<Vec<(u64, bool, String)>, Errno> {
        let p = self.path(ino)?.to_string();
        let entries = self.fs.readdir(&p).map_err(|e| e.errno())?;
        let mut out = vec![(ino, true, ".".to_string()), (ino, true, "..".to_string())];
        for e in entries {
            out.push((self.ino(e.inum), e.is_dir, e.name));
        }
        Ok(out)
    }

    pub fn open(&mut self, ino: u64) -> Result<Fd, Errno> {
        let p = self.path(ino)?.to_string();
        self.fs.open(&p).map_err(|e| e.errno())
    }

    pub fn read(&mut self, fd: Fd, offset: u64, len: usize) -> Result<Vec<u8>, Errno> {
        self.fs.read(fd, offset, len).map_err(|e| e.errno())
    }

    pub fn write(&mut self, fd: Fd, offset: u64, data: &[u8]) -> Result<usize, Errno> {
        self.fs.write(fd, offset, data).map_err(|e| e.errno())
    }

    pub fn release(&mut self, fd: Fd) -> Result<(), Errno> {
        self.fs.close(fd).map_err(|e| e.errno())
    }

    pub fn fsync(&mut self, fd: Fd) -> Result<(), Errno> {
        self.fs.fsync(fd).map_err(|e| e.errno())
    }

    pub fn sync(&mut self) -> Result<(), Errno> {
        self.fs.sync().map_err(|e| e.errno())
    }

    pub fn truncate(&mut self, ino: u64, size: u64) -> Result<(), Errno> {
        let p = self.path(ino)?.to_string();
        self.fs.truncate(&p, size).map_err(|e| e.errno())
    }

    pub fn statfs(&self) -> StatFs {
        self.fs.statfs()
    }
}

/// flashfs's settings for a mount with real bytes: payloads are never elided.
fn fs_settings(s: &CampaignSettings) -> flashlab_flashfs::FsSettings {
    let mut f = s.fs.clone();
    f.elide_payload = false;
    f
}

fn flash(e: impl std::fmt::Display) -> VolError {
    VolError::Flash(e.to_string())
}

fn with_crc(mut b: Vec<u8>) -> Vec<u8> {
    let crc = crc32fast::hash(&b);
    b.extend_from_slice(&crc.to_le_bytes());
    b
}

fn checked(image: &[u8]) -> Result<&[u8], VolError> {
    if image.len() < 4 {
        return Err(VolError::State(StateError::Magic));
    }
    let (body, tail) = image.split_at(image.len() - 4);
    let stored = u32::from_le_bytes(tail.try_into().expect("4 bytes"));
    let found = crc32fast::hash(body);
    if found != stored {
        if body.len() < 8 || &body[..8] != b"FLNAND01" {
            return Err(VolError::State(StateError::Magic));
        }
        return Err(VolError::Checksum { found, stored });
    }
    Ok(body)
}

/// The errno number of a flashfs error.
pub fn errno_number(e: Errno) -> i32 {
    match e {
        Errno::ENOENT => libc::ENOENT,
        Errno::EEXIST => libc::EEXIST,
        Errno::ENOSPC => libc::ENOSPC,
        Errno::ENOTEMPTY => libc::ENOTEMPTY,
        Errno::ENOTDIR => libc::ENOTDIR,
        Errno::EISDIR => libc::EISDIR,
        Errno::EINVAL => libc::EINVAL,
        Errno::EBADF => libc::EBADF,
        Errno::ENAMETOOLONG => libc::ENAMETOOLONG,
        Errno::EFBIG => libc::EFBIG,
        Errno::EIO => libc::EIO,
        Errno::EROFS => libc::EROFS,
    }
}
