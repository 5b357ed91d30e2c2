//! Device-utilisation control: cold filler files written before a workload.

use crate::{Errno, FileSystem};

/// Fills 1 MiB cold files under `/cold` until `bytes` are written (or space
/// runs out); returns the bytes written. The content is a fixed xorshift
/// stream (incompressible, so the space it takes is its size).
pub fn prefill<F: FileSystem>(fs: &mut F, bytes: u64) -> Result<u64, F::Error> {
    fs.mkdir("/cold")?;
    let mut done = 0u64;
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    let chunk: Vec<u8> = (0..1u32 << 20)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 24) as u8
        })
        .collect();
    let mut i = 0;
    while done < bytes {
        let n = (bytes - done).min(chunk.len() as u64) as usize;
        let r = fs.create(&format!("/cold/c{i}")).and_then(|fd| {
            fs.write(fd, 0, &chunk[..n])?;
            fs.close(fd)
        });
        match r {
            Err(e) if F::errno(&e) == Errno::ENOSPC => break,
            r => r?,
        }
        done += n as u64;
        i += 1;
    }
    Ok(done)
}
