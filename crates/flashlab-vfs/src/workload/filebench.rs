//! File workloads as interleaved streams. Each "thread" is a stream that
//! repeats its flow-operation list (filebench's personalities); a seeded
//! scheduler picks which stream performs its next flow operation, so
//! threads interleave deterministically. Generic over any [`FileSystem`]
//! (moved here from flashfs; the random streams are unchanged, so seed 000's
//! reproduction gives the same figures).

use crate::{Errno, Fd, FileSystem};
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use serde::Serialize;

/// Which workload.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum WorkloadKind {
    /// `dd`: one file written sequentially in 128 KiB blocks, one thread.
    Dd,
    /// filebench `fileserver`: create + write whole file, append, read whole
    /// file, delete, stat (read:write 1:2 by operations).
    Fileserver,
    /// filebench `varmail`: delete, create + append + fsync, read + append +
    /// fsync, read (read:write 1:1).
    Varmail,
    /// Small files (1..32 KiB, log-uniform) created in directories of 64,
    /// one thread, sync at the end.
    Untar,
}

/// A workload's parameters.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WorkloadSpec {
    pub kind: WorkloadKind,
    /// Files of the fileset (fileserver, varmail).
    pub files: u32,
    /// File size (whole-file writes) in bytes.
    pub file_bytes: u32,
    /// Largest random append in bytes (filebench `appendfilerand`, 16 KiB).
    pub append_bytes: u32,
    pub threads: u32,
    /// Stop after this many bytes written by the workload.
    pub write_target_bytes: u64,
    pub seed: u64,
}

/// One filebench flow operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Flow {
    CreateWriteWhole,
    CreateEmpty,
    OpenAny,
    Append,
    ReadWhole,
    Fsync,
    Close,
    Delete,
    Stat,
}

fn flows(kind: WorkloadKind) -> &'static [Flow] {
    use Flow::*;
    match kind {
        // createfile, writewholefile, closefile, openfile, appendfilerand,
        // closefile, openfile, readwholefile, closefile, deletefile, statfile.
        WorkloadKind::Fileserver => {
            &[CreateWriteWhole, Close, OpenAny, Append, Close, OpenAny, ReadWhole, Close, Delete, Stat]
        }
        // deletefile, createfile, appendfilerand, fsyncfile, closefile,
        // openfile, readwholefile, appendfilerand, fsyncfile, closefile,
        // openfile, readwholefile, closefile.
        WorkloadKind::Varmail => &[
            Delete,
            CreateEmpty,
            Append,
            Fsync,
            Close,
            OpenAny,
            ReadWhole,
            Append,
            Fsync,
            Close,
            OpenAny,
            ReadWhole,
            Close,
        ],
        WorkloadKind::Dd | WorkloadKind::Untar => &[],
    }
}

/// Counters of a workload run.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct WorkloadCounters {
    pub flowops: u64,
    pub reads: u64,
    pub writes: u64,
    pub bytes_written: u64,
    pub bytes_read: u64,
    pub enospc: u64,
    pub skipped: u64,
}

/// The fileset: which of the files exist.
pub struct Fileset {
    pub exists: Vec<bool>,
    pub dir_width: u32,
}

impl Fileset {
    pub fn path(&self, i: u32) -> String {
        format!("/w/d{}/f{i}", i / self.dir_width)
    }

    fn pick(&self, r: &mut Xoshiro256PlusPlus, exists: bool) -> Option<u32> {
        let n = self.exists.len() as u32;
        if n == 0 {
            return None;
        }
        let start = r.gen_range(0..n);
        (0..n).map(|k| (start + k) % n).find(|i| self.exists[*i as usize] == exists)
    }
}

struct Stream {
    pc: usize,
    fd: Option<Fd>,
}

/// Runs a workload; `sample` is called after every flow operation.
pub struct Engine<'a, F: FileSystem> {
    pub fs: &'a mut F,
    pub spec: &'a WorkloadSpec,
    pub rng: Xoshiro256PlusPlus,
    pub c: WorkloadCounters,
    pub set: Fileset,
}

fn soft<F: FileSystem>(e: &F::Error) -> bool {
    matches!(F::errno(e), Errno::ENOSPC | Errno::ENOENT | Errno::EEXIST | Errno::EBADF)
}

impl<'a, F: FileSystem> Engine<'a, F> {
    pub fn new(fs: &'a mut F, spec: &'a WorkloadSpec) -> Engine<'a, F> {
        let set = Fileset { exists: vec![false; spec.files as usize], dir_width: 64 };
        Engine { fs, spec, rng: Xoshiro256PlusPlus::seed_from_u64(spec.seed), c: WorkloadCounters::default(), set }
    }

    /// Deterministic incompressible-ish content.
    pub fn payload(&mut self, n: usize) -> Vec<u8> {
        let mut v = vec![0u8; n];
        self.rng.fill(&mut v[..]);
        v
    }

    fn note(&mut self, r: Result<(), F::Error>) -> Result<(), F::Error> {
        match r {
            Err(e) if F::errno(&e) == Errno::ENOSPC => {
                self.c.enospc += 1;
                Ok(())
            }
            Err(e) if soft::<F>(&e) => {
                self.c.skipped += 1;
                Ok(())
            }
            other => other,
        }
    }

    /// Creates the fileset directories and pre-allocates `frac` of the files.
    pub fn setup(&mut self, frac: f64) -> Result<(), F::Error> {
        let _ = self.fs.mkdir("/w");
        for d in 0..self.spec.files.div_ceil(self.set.dir_width) {
            self.fs.mkdir(&format!("/w/d{d}"))?;
        }
        let n = (self.spec.files as f64 * frac) as u32;
        for i in 0..n {
            let bytes = self.file_size();
            let fd = self.fs.create(&self.set.path(i))?;
            let data = self.payload(bytes as usize);
            self.fs.write(fd, 0, &data)?;
            self.fs.close(fd)?;
            self.set.exists[i as usize] = true;
        }
        Ok(())
    }

    /// A file size around the mean (uniform in 0.25..1.75 of it; filebench
    /// draws a gamma distribution with the same mean).
    pub fn file_size(&mut self) -> u64 {
        (self.spec.file_bytes as f64 * self.rng.gen_range(0.25..1.75)) as u64
    }

    fn write_whole(&mut self, fd: Fd) -> Result<(), F::Error> {
        let size = self.file_size();
        let mut off = 0u64;
        while off < size {
            let n = (size - off).min(1 << 20) as usize;
            let data = self.payload(n);
            self.fs.write(fd, off, &data)?;
            self.c.bytes_written += n as u64;
            off += n as u64;
        }
        Ok(())
    }

    fn flow(&mut self, s: &mut Stream, f: Flow) -> Result<(), F::Error> {
        match f {
            Flow::CreateWriteWhole | Flow::CreateEmpty => {
                let Some(i) = self.set.pick(&mut self.rng, false) else { return Ok(()) };
                let fd = self.fs.create(&self.set.path(i))?;
                self.set.exists[i as usize] = true;
                s.fd = Some(fd);
                self.c.writes += 1;
                if f == Flow::CreateWriteWhole {
                    self.write_whole(fd)?;
                }
            }
            Flow::OpenAny => {
                let Some(i) = self.set.pick(&mut self.rng, true) else { return Ok(()) };
                s.fd = Some(self.fs.open(&self.set.path(i))?);
            }
            Flow::Append => {
                let Some(fd) = s.fd else { return Ok(()) };
                let n = self.rng.gen_range(1..=self.spec.append_bytes.max(1)) as usize;
                let size = self.fs.fstat(fd)?.size;
                let data = self.payload(n);
                self.fs.write(fd, size, &data)?;
                self.c.writes += 1;
                self.c.bytes_written += n as u64;
            }
            Flow::ReadWhole => {
                let Some(fd) = s.fd else { return Ok(()) };
                let size = self.fs.fstat(fd)?.size;
                let got = self.fs.read(fd, 0, size as usize)?;
                self.c.reads += 1;
                self.c.bytes_read += got.len() as u64;
            }
            Flow::Fsync => {
                if let Some(fd) = s.fd {
                    self.fs.fsync(fd)?;
                }
            }
            Flow::Close => {
                if let Some(fd) = s.fd.take() {
                    self.fs.close(fd)?;
                }
            }
            Flow::Delete => {
                let Some(i) = self.set.pick(&mut self.rng, true) else { return Ok(()) };
                self.fs.unlink(&self.set.path(i))?;
                self.set.exists[i as usize] = false;
            }
            Flow::Stat => {
                let Some(i) = self.set.pick(&mut self.rng, true) else { return Ok(()) };
                self.fs.stat(&self.set.path(i))?;
            }
        }
        Ok(())
    }

    /// Runs the filebench personality until the write target is reached.
    pub fn run_filebench(&mut self, mut sample: impl FnMut(&F, &WorkloadCounters)) -> Result<(), F::Error> {
        let list = flows(self.spec.kind);
        let mut streams: Vec<Stream> = (0..self.spec.threads.max(1)).map(|_| Stream { pc: 0, fd: None }).collect();
        let mut idle = 0u64;
        while self.c.bytes_written < self.spec.write_target_bytes && idle < 100_000 {
            let t = self.rng.gen_range(0..streams.len());
            let f = list[streams[t].pc % list.len()];
            streams[t].pc += 1;
            let before = self.c.bytes_written;
            let mut s = Stream { pc: streams[t].pc, fd: streams[t].fd };
            let r = self.flow(&mut s, f);
            streams[t].fd = s.fd;
            self.note(r)?;
            self.c.flowops += 1;
            idle = if self.c.bytes_written == before { idle + 1 } else { 0 };
            sample(self.fs, &self.c);
        }
        for s in streams {
            if let Some(fd) = s.fd {
                let r = self.fs.close(fd);
                self.note(r)?;
            }
        }
        Ok(())
    }

    /// `dd`: sequential 128 KiB writes into one file.
    pub fn run_dd(&mut self, mut sample: impl FnMut(&F, &WorkloadCounters)) -> Result<(), F::Error> {
        let fd = self.fs.create("/dd.img")?;
        let mut off = 0u64;
        while off < self.spec.write_target_bytes {
            let data = self.payload(128 * 1024);
            let r = self.fs.write(fd, off, &data).map(|_| ());
            if r.as_ref().is_err_and(|e| F::errno(e) == Errno::ENOSPC) {
                self.c.enospc += 1;
                break;
            }
            r?;
            off += data.len() as u64;
            self.c.writes += 1;
            self.c.flowops += 1;
            self.c.bytes_written += data.len() as u64;
            sample(self.fs, &self.c);
        }
        self.fs.fsync(fd)?;
        self.fs.close(fd)
    }

    /// `untar`: small files in directories of 64, then sync.
    pub fn run_untar(&mut self, mut sample: impl FnMut(&F, &WorkloadCounters)) -> Result<(), F::Error> {
        let _ = self.fs.mkdir("/untar");
        let mut i = 0u32;
        while self.c.bytes_written < self.spec.write_target_bytes {
            if i.is_multiple_of(64) {
                self.fs.mkdir(&format!("/untar/d{}", i / 64))?;
            }
            let n = (1024.0 * 32f64.powf(self.rng.gen::<f64>())) as usize;
            let data = self.payload(n);
            let path = format!("/untar/d{}/f{i}", i / 64);
            let r = self.fs.create(&path).and_then(|fd| {
                self.fs.write(fd, 0, &data)?;
                self.fs.close(fd)
            });
            if r.as_ref().is_err_and(|e| F::errno(e) == Errno::ENOSPC) {
                self.c.enospc += 1;
                break;
            }
            r?;
            self.c.writes += 1;
            self.c.flowops += 2;
            self.c.bytes_written += n as u64;
            i += 1;
            sample(self.fs, &self.c);
        }
        self.fs.sync()
    }
}
