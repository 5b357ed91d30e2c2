//! Data-node compression: none, LZ4, zlib, zstd.

use crate::lz4_memo::{TailId, TailMemo};
use flashlab_vfs::TailToken;
use serde::Deserialize;

/// Compression of 4 KiB data blocks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Compression {
    None,
    Lz4,
    Zlib,
    Zstd,
}

impl Compression {
    pub fn code(self) -> u8 {
        match self {
            Compression::None => 0,
            Compression::Lz4 => 1,
            Compression::Zlib => 2,
            Compression::Zstd => 3,
        }
    }

    pub fn from_code(c: u8) -> Option<Compression> {
        Some(match c {
            0 => Compression::None,
            1 => Compression::Lz4,
            2 => Compression::Zlib,
            3 => Compression::Zstd,
            _ => return None,
        })
    }
}

thread_local! {
    /// The last LZ4 block's tail and its summary (`lz4_memo.rs`): scratch
    /// state only, every answer is exactly the probe's.
    static LZ4_MEMO: std::cell::RefCell<TailMemo> = const { std::cell::RefCell::new(TailMemo::new()) };
}

/// `finds_no_match` through this thread's tail memo, with the memo's id of
/// `data`'s tail where it has one (`TailMemo::probe`).
fn lz4_probe(data: &[u8], page_tail: Option<TailToken>) -> (bool, Option<TailId>) {
    LZ4_MEMO.with(|m| m.borrow_mut().probe(data, page_tail))
}

/// Compresses; falls back to `None` when it does not shrink the data.
pub fn compress(c: Compression, data: &[u8]) -> (Compression, Vec<u8>) {
    compress_shrunk(c, data).unwrap_or_else(|| (Compression::None, data.to_vec()))
}

/// [`compress`]'s answer where it shrinks the data; None where `compress`
/// stores `data` as it is (`None`, a copy of `data`), so that a writer can
/// encode the node from the caller's bytes instead of the copy.
pub fn compress_shrunk(c: Compression, data: &[u8]) -> Option<(Compression, Vec<u8>)> {
    compress_shrunk_tail(c, data, None).0
}

/// [`compress_shrunk`]; where it stores `data` as it is, also the LZ4 tail
/// memo's id of `data`'s bytes after the first `lz4_memo::HEAD`, when the
/// memo compared or kept them (a data node's CRC then needs no compare of
/// its payload's tail: `crc_tail.rs`). `page_tail`: the page cache's token
/// of those bytes, if any (`TailMemo::probe`).
pub(crate) fn compress_shrunk_tail(
    c: Compression,
    data: &[u8],
    page_tail: Option<TailToken>,
) -> (Option<(Compression, Vec<u8>)>, Option<TailId>) {
    let (out, tail) = match c {
        Compression::None => return (None, None),
        // No match: lz4_flex would emit every byte as a literal plus a token, longer
        // than `data`, so the rule below would store it plain; skip the encoder.
        Compression::Lz4 => match lz4_probe(data, page_tail) {
            (true, tail) => (None, tail),
            (false, tail) => (Some(lz4_flex::block::compress(data)), tail),
        },
        Compression::Zlib => (zlib(data), None),
        Compression::Zstd => (zstd::bulk::compress(data, 1).ok(), None),
    };
    match out.filter(|o| o.len() < data.len()) {
        Some(o) => (Some((c, o)), None),
        None => (None, tail),
    }
}

fn zlib(data: &[u8]) -> Option<Vec<u8>> {
    use std::io::Write;
    let mut e = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::fast());
    e.write_all(data).ok()?;
    e.finish().ok()
}

/// Decompresses to exactly `size` bytes; None if the payload is corrupt.
pub fn decompress(c: Compression, data: &[u8], size: usize) -> Option<Vec<u8>> {
    let out = match c {
        Compression::None => data.to_vec(),
        Compression::Lz4 => lz4_flex::block::decompress(data, size).ok()?,
        Compression::Zlib => {
            use std::io::Read;
            let mut out = Vec::with_capacity(size);
            flate2::read::ZlibDecoder::new(data).take(size as u64 + 1).read_to_end(&mut out).ok()?;
            out
        }
        Compression::Zstd => zstd::bulk::decompress(data, size).ok()?,
    };
    (out.len() == size).then_some(out)
}
