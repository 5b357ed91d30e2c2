//! Device-utilisation control: cold filler files written before a workload.

use crate::{Errno, FileSystem};

/// Fills 1 MiB cold files under `/cold` until `bytes` are written (or space
/// runs out); returns the bytes written. The content is a fixed xorshift
/// stream (incompressible, so the space it takes is its size).
pub fn prefill<F: FileSystem>(fs: &mut F, bytes: u64) -> Result<u64, F::Error> {
    fs.mkdir("/cold")?;
    let mut done = 0u64;
    let chunk = chunk();
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

/// First state of the filler's xorshift stream.
const SEED: u64 = 0x9E37_79B9_7F4A_7C15;
/// Bytes of the filler's chunk.
const CHUNK: usize = 1 << 20;
/// Streams computed side by side, each a quarter of the chunk.
const LANES: usize = 4;

/// One step of Marsaglia's xorshift64 (13, 7, 17).
#[inline(always)]
fn step(mut x: u64) -> u64 {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    x
}

/// A linear map of 64-bit words over GF(2), as the images of the 64 unit words.
type Map = [u64; 64];

fn apply(m: &Map, x: u64) -> u64 {
    (0..64).filter(|&i| x >> i & 1 == 1).fold(0, |acc, i| acc ^ m[i])
}

/// `a` after `b`.
fn compose(a: &Map, b: &Map) -> Map {
    std::array::from_fn(|i| apply(a, b[i]))
}

/// The filler's chunk: byte `k` is bits 24..32 of the state after `k + 1`
/// xorshift steps from [`SEED`]. The steps are one dependency chain, so
/// the chunk is made as [`LANES`] chains side by side, each starting from
/// the state a quarter of the chunk further on: xorshift is linear over
/// GF(2), so `n` steps are one map, found by squaring the one-step map
/// (jump-ahead; the generator is Marsaglia's, "Xorshift RNGs", 2003).
/// The bytes are those of the plain loop (test below).
fn chunk() -> Vec<u8> {
    const QUARTER: usize = CHUNK / LANES;
    let mut jump: Map = std::array::from_fn(|i| step(1 << i));
    for _ in 0..QUARTER.trailing_zeros() {
        jump = compose(&jump, &jump);
    }
    let mut x = [SEED; LANES];
    for l in 1..LANES {
        x[l] = apply(&jump, x[l - 1]);
    }
    let mut out = vec![0u8; CHUNK];
    let (q0, rest) = out.split_at_mut(QUARTER);
    let (q1, rest) = rest.split_at_mut(QUARTER);
    let (q2, q3) = rest.split_at_mut(QUARTER);
    for k in 0..QUARTER {
        for (l, q) in [&mut *q0, &mut *q1, &mut *q2, &mut *q3].into_iter().enumerate() {
            x[l] = step(x[l]);
            q[k] = (x[l] >> 24) as u8;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_chunk_is_the_plain_xorshift_stream() {
        let mut x = SEED;
        let plain: Vec<u8> = (0..CHUNK)
            .map(|_| {
                x = step(x);
                (x >> 24) as u8
            })
            .collect();
        assert!(chunk() == plain, "the lanes' bytes differ from the plain loop's");
    }
}
