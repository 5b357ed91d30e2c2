//! A reference file system in memory (paths -> file bytes / directories),
//! the operations the tests and the power-cut campaign generate, and a
//! runner that applies an operation to both and compares the results.

use crate::{Errno, Fd, FileSystem, FsError};
use std::collections::BTreeMap;

/// A node of the reference file system.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Entry {
    File(Vec<u8>),
    Dir,
}

/// The reference file system: absolute paths without the root.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ModelFs {
    pub entries: BTreeMap<String, Entry>,
}

fn parent(path: &str) -> &str {
    match path.rfind('/') {
        Some(0) | None => "/",
        Some(i) => &path[..i],
    }
}

impl ModelFs {
    fn check_parent(&self, path: &str) -> Result<(), Errno> {
        let mut cur = String::new();
        let comps: Vec<&str> = path.split('/').filter(|c| !c.is_empty()).collect();
        for c in &comps[..comps.len().saturating_sub(1)] {
            cur = format!("{cur}/{c}");
            match self.entries.get(&cur) {
                None => return Err(Errno::ENOENT),
                Some(Entry::File(_)) => return Err(Errno::ENOTDIR),
                Some(Entry::Dir) => {}
            }
        }
        Ok(())
    }

    pub fn get(&self, path: &str) -> Result<&Entry, Errno> {
        self.check_parent(path)?;
        self.entries.get(path).ok_or(Errno::ENOENT)
    }

    pub fn create(&mut self, path: &str, dir: bool) -> Result<(), Errno> {
        self.check_parent(path)?;
        if self.entries.contains_key(path) {
            return Err(Errno::EEXIST);
        }
        self.entries.insert(path.to_string(), if dir { Entry::Dir } else { Entry::File(Vec::new()) });
        Ok(())
    }

    fn file_mut(&mut self, path: &str) -> Result<&mut Vec<u8>, Errno> {
        self.check_parent(path)?;
        match self.entries.get_mut(path) {
            None => Err(Errno::ENOENT),
            Some(Entry::Dir) => Err(Errno::EISDIR),
            Some(Entry::File(b)) => Ok(b),
        }
    }

    pub fn write(&mut self, path: &str, off: u64, data: &[u8]) -> Result<(), Errno> {
        let f = self.file_mut(path)?;
        if data.is_empty() {
            return Ok(());
        }
        let end = off as usize + data.len();
        if f.len() < end {
            f.resize(end, 0);
        }
        f[off as usize..off as usize + data.len()].copy_from_slice(data);
        Ok(())
    }

    pub fn truncate(&mut self, path: &str, size: u64) -> Result<(), Errno> {
        self.file_mut(path)?.resize(size as usize, 0);
        Ok(())
    }

    fn has_children(&self, path: &str) -> bool {
        let pre = format!("{path}/");
        self.entries.keys().any(|k| k.starts_with(&pre))
    }

    pub fn remove(&mut self, path: &str, dir: bool) -> Result<(), Errno> {
        match (self.get(path)?, dir) {
            (Entry::Dir, false) => return Err(Errno::EISDIR),
            (Entry::File(_), true) => return Err(Errno::ENOTDIR),
            (Entry::Dir, true) if self.has_children(path) => return Err(Errno::ENOTEMPTY),
            _ => {}
        }
        self.entries.remove(path);
        Ok(())
    }

    pub fn rename(&mut self, from: &str, to: &str) -> Result<(), Errno> {
        let src = self.get(from)?.clone();
        self.check_parent(to)?;
        let is_dir = src == Entry::Dir;
        if is_dir && (to == from || to.starts_with(&format!("{from}/"))) {
            return Err(Errno::EINVAL);
        }
        match (self.entries.get(to), is_dir) {
            _ if to == from => return Ok(()),
            (Some(Entry::File(_)), true) => return Err(Errno::ENOTDIR),
            (Some(Entry::Dir), false) => return Err(Errno::EISDIR),
            (Some(Entry::Dir), true) if self.has_children(to) => return Err(Errno::ENOTEMPTY),
            _ => {}
        }
        let pre = format!("{from}/");
        let moved: Vec<(String, Entry)> = self
            .entries
            .iter()
            .filter(|(k, _)| *k == from || k.starts_with(&pre))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        for (k, _) in &moved {
            self.entries.remove(k);
        }
        for (k, v) in moved {
            self.entries.insert(format!("{to}{}", &k[from.len()..]), v);
        }
        Ok(())
    }

    /// Sorted names in a directory.
    pub fn list(&self, path: &str) -> Result<Vec<String>, Errno> {
        if path != "/" {
            match self.get(path)? {
                Entry::Dir => {}
                Entry::File(_) => return Err(Errno::ENOTDIR),
            }
        }
        let mut v: Vec<String> = self
            .entries
            .keys()
            .filter(|k| parent(k) == path)
            .map(|k| k.rsplit('/').next().unwrap_or("").to_string())
            .collect();
        v.sort();
        Ok(v)
    }
}

/// One generated operation on a small pool of paths.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Op {
    Create(usize),
    Mkdir(usize),
    Write {
        path: usize,
        off: u32,
        len: u32,
        byte: u8,
    },
    Truncate {
        path: usize,
        size: u32,
    },
    Unlink(usize),
    Rmdir(usize),
    Rename(usize, usize),
    /// Open and keep a handle (exercises orphans on unlink).
    Hold(usize),
    CloseAll,
    Fsync(usize),
    Sync,
    Commit,
    Check(usize),
}

/// The path pool (two levels).
pub const PATHS: [&str; 10] = ["/a", "/b", "/c", "/d", "/d/a", "/d/b", "/e", "/e/c", "/d/a/x", "/f"];

/// Result of an operation, comparable across implementations.
pub type Outcome = Result<Option<Vec<u8>>, Errno>;

/// Applies `op` to the real file system.
pub fn apply_fs<F: FileSystem<Error = FsError>>(fs: &mut F, held: &mut Vec<Fd>, op: &Op) -> Result<Outcome, FsError> {
    apply_with(fs, held, op, |e| matches!(e, FsError::Io(_) | FsError::Corrupt(_) | FsError::Invariant(_)))
}

/// Applies `op` to any file system; the errors `hard` picks are returned as
/// errors, the others as the errno a POSIX caller sees.
pub fn apply_with<F: FileSystem>(
    fs: &mut F,
    held: &mut Vec<Fd>,
    op: &Op,
    hard: impl Fn(&F::Error) -> bool,
) -> Result<Outcome, F::Error> {
    let p = |i: &usize| PATHS[*i % PATHS.len()];
    let r: Result<Option<Vec<u8>>, F::Error> = match op {
        Op::Create(i) => fs.create(p(i)).and_then(|fd| fs.close(fd)).map(|_| None),
        Op::Mkdir(i) => fs.mkdir(p(i)).map(|_| None),
        Op::Write { path, off, len, byte } => fs.open(p(path)).and_then(|fd| {
            let data = pattern(*byte, *off, *len);
            let r = fs.write(fd, *off as u64, &data);
            let c = fs.close(fd);
            r.and(c).map(|_| None)
        }),
        Op::Truncate { path, size } => fs.truncate(p(path), *size as u64).map(|_| None),
        Op::Unlink(i) => fs.unlink(p(i)).map(|_| None),
        Op::Rmdir(i) => fs.rmdir(p(i)).map(|_| None),
        Op::Rename(a, b) => fs.rename(p(a), p(b)).map(|_| None),
        Op::Hold(i) => fs.open(p(i)).map(|fd| {
            held.push(fd);
            None
        }),
        Op::CloseAll => std::mem::take(held).into_iter().try_for_each(|fd| fs.close(fd)).map(|_| None),
        Op::Fsync(i) => fs.open(p(i)).and_then(|fd| {
            let r = fs.fsync(fd);
            let c = fs.close(fd);
            r.and(c).map(|_| None)
        }),
        Op::Sync => fs.sync().map(|_| None),
        Op::Commit => fs.commit().map(|_| None),
        Op::Check(i) => read_path(fs, p(i)).map(Some),
    };
    match r {
        Err(e) if hard(&e) => Err(e),
        r => Ok(r.map_err(|e| F::errno(&e))),
    }
}

/// Reads a whole file, or lists a directory (names joined by '\n').
pub fn read_path<F: FileSystem>(fs: &mut F, path: &str) -> Result<Vec<u8>, F::Error> {
    let st = fs.stat(path)?;
    if st.is_dir {
        let mut names: Vec<String> = fs.readdir(path)?.into_iter().map(|e| e.name).collect();
        names.sort();
        return Ok(names.join("\n").into_bytes());
    }
    let fd = fs.open(path)?;
    let r = fs.read(fd, 0, st.size as usize);
    fs.close(fd)?;
    r
}

/// Deterministic, poorly compressible content of a write.
pub fn pattern(byte: u8, off: u32, len: u32) -> Vec<u8> {
    (0..len)
        .map(|i| {
            let x = (off + i).wrapping_mul(0x9E37_79B1) ^ (byte as u32).wrapping_mul(0x85EB_CA6B);
            ((x ^ (x >> 15)) >> 8) as u8
        })
        .collect()
}

/// Applies `op` to the model.
pub fn apply_model(m: &mut ModelFs, held: &mut Vec<String>, op: &Op) -> Outcome {
    let p = |i: &usize| PATHS[*i % PATHS.len()];
    match op {
        Op::Create(i) => m.create(p(i), false).map(|_| None),
        Op::Mkdir(i) => m.create(p(i), true).map(|_| None),
        Op::Write { path, off, len, byte } => m.write(p(path), *off as u64, &pattern(*byte, *off, *len)).map(|_| None),
        Op::Truncate { path, size } => m.truncate(p(path), *size as u64).map(|_| None),
        Op::Unlink(i) => m.remove(p(i), false).map(|_| None),
        Op::Rmdir(i) => m.remove(p(i), true).map(|_| None),
        Op::Rename(a, b) => m.rename(p(a), p(b)).map(|_| None),
        Op::Hold(i) => match m.get(p(i))? {
            Entry::Dir => Err(Errno::EISDIR),
            Entry::File(_) => {
                held.push(p(i).to_string());
                Ok(None)
            }
        },
        Op::CloseAll => {
            held.clear();
            Ok(None)
        }
        Op::Fsync(i) => match m.get(p(i))? {
            Entry::Dir => Err(Errno::EISDIR),
            Entry::File(_) => Ok(None),
        },
        Op::Sync | Op::Commit => Ok(None),
        Op::Check(i) => match m.get(p(i))? {
            Entry::File(b) => Ok(Some(b.clone())),
            Entry::Dir => Ok(Some(m.list(p(i))?.join("\n").into_bytes())),
        },
    }
}
