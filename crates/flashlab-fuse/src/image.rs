//! The saved state of a served SSD: its geometry, every request it served (replayed
//! through a fresh [`flashlab_sim::Ssd`] on load, which rebuilds the FTL's state, the
//! counters and the simulated clock exactly, the simulator being deterministic) and the
//! stored page contents.
//!
//! Layout (little-endian): magic `FLSSDIM1`; `page_bytes` u64, `logical_pages` u64;
//! config text length u64 and text (the resolved config it was served with, for
//! people); request count u64 and per request `kind` u8 (0 read, 1 write, 2 trim,
//! 3 flush), `offset` u64, `len` u64, `at_ns` u64; chunk count u64 and per chunk its
//! number u64 and [`CHUNK_BYTES`] bytes; CRC-32 of everything before it, u32.

use crate::store::{SparseStore, CHUNK_BYTES};
use thiserror::Error;

const MAGIC: &[u8; 8] = b"FLSSDIM1";

/// What a served request was.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LogKind {
    Read,
    Write,
    Trim,
    Flush,
}

/// One served request, as replayed on load.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LogEntry {
    pub kind: LogKind,
    pub offset: u64,
    pub len: u64,
    pub at_ns: u64,
}

/// The device's shape, which an image must match to be loaded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DiskGeometry {
    pub page_bytes: u64,
    pub logical_pages: u64,
}

impl DiskGeometry {
    /// Disk size in bytes.
    pub fn bytes(&self) -> u64 {
        self.page_bytes * self.logical_pages
    }
}

/// A decoded image.
#[derive(Debug)]
pub struct Image {
    pub geometry: DiskGeometry,
    pub config: String,
    pub log: Vec<LogEntry>,
    pub store: SparseStore,
}

/// Why an image could not be loaded.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum ImageError {
    #[error("not a flashlab SSD image (expected the magic bytes FLSSDIM1)")]
    Magic,
    #[error("image is truncated at byte {0}")]
    Truncated(usize),
    #[error("image is corrupt: CRC-32 {found:#010x} of its contents, {stored:#010x} stored")]
    Checksum { found: u32, stored: u32 },
    #[error("image is corrupt: {0}")]
    Field(String),
    #[error("image is of a different geometry: {image} pages of {image_page} bytes, the config gives {config} pages of {config_page} bytes")]
    Geometry { image: u64, image_page: u64, config: u64, config_page: u64 },
}

/// Encode an image.
pub fn encode(geometry: DiskGeometry, config: &str, log: &[LogEntry], store: &SparseStore) -> Vec<u8> {
    let chunks = store.chunks();
    let mut b = Vec::with_capacity(64 + config.len() + log.len() * 25 + chunks.len() * (8 + CHUNK_BYTES));
    b.extend_from_slice(MAGIC);
    for v in [geometry.page_bytes, geometry.logical_pages, config.len() as u64] {
        b.extend_from_slice(&v.to_le_bytes());
    }
    b.extend_from_slice(config.as_bytes());
    b.extend_from_slice(&(log.len() as u64).to_le_bytes());
    for e in log {
        b.push(e.kind as u8);
        for v in [e.offset, e.len, e.at_ns] {
            b.extend_from_slice(&v.to_le_bytes());
        }
    }
    b.extend_from_slice(&(chunks.len() as u64).to_le_bytes());
    for (c, data) in chunks {
        b.extend_from_slice(&c.to_le_bytes());
        b.extend_from_slice(data);
    }
    let crc = crc32fast::hash(&b);
    b.extend_from_slice(&crc.to_le_bytes());
    b
}

/// Decode an image and check it against the config's geometry.
pub fn decode(bytes: &[u8], expect: DiskGeometry) -> Result<Image, ImageError> {
    if bytes.len() < MAGIC.len() || &bytes[..MAGIC.len()] != MAGIC {
        return Err(ImageError::Magic);
    }
    if bytes.len() < MAGIC.len() + 4 {
        return Err(ImageError::Truncated(bytes.len()));
    }
    let (body, tail) = bytes.split_at(bytes.len() - 4);
    let stored = u32::from_le_bytes(tail.try_into().expect("4 bytes"));
    let found = crc32fast::hash(body);
    if found != stored {
        return Err(ImageError::Checksum { found, stored });
    }
    let mut r = Reader { b: body, at: MAGIC.len() };
    let geometry = DiskGeometry { page_bytes: r.u64()?, logical_pages: r.u64()? };
    if geometry != expect {
        return Err(ImageError::Geometry {
            image: geometry.logical_pages,
            image_page: geometry.page_bytes,
            config: expect.logical_pages,
            config_page: expect.page_bytes,
        });
    }
    let n = r.count(1)?;
    let config =
        String::from_utf8(r.take(n)?.to_vec()).map_err(|_| ImageError::Field("config text is not UTF-8".into()))?;
    let n = r.count(25)?;
    let mut log = Vec::with_capacity(n);
    for i in 0..n {
        let kind = match r.take(1)?[0] {
            0 => LogKind::Read,
            1 => LogKind::Write,
            2 => LogKind::Trim,
            3 => LogKind::Flush,
            k => return Err(ImageError::Field(format!("request {i}: kind {k}, expected 0 to 3"))),
        };
        let e = LogEntry { kind, offset: r.u64()?, len: r.u64()?, at_ns: r.u64()? };
        if kind != LogKind::Flush
            && (e.len == 0 || e.offset.checked_add(e.len).is_none_or(|end| end > geometry.bytes()))
        {
            return Err(ImageError::Field(format!("request {i}: {} bytes at {} is outside the disk", e.len, e.offset)));
        }
        log.push(e);
    }
    let n = r.count(8 + CHUNK_BYTES)?;
    let mut store = SparseStore::new(geometry.bytes());
    for _ in 0..n {
        let c = r.u64()?;
        if c.saturating_mul(CHUNK_BYTES as u64) >= geometry.bytes() {
            return Err(ImageError::Field(format!("chunk {c} is outside the disk")));
        }
        store.put_chunk(c, r.take(CHUNK_BYTES)?.try_into().expect("chunk"));
    }
    if r.at != body.len() {
        return Err(ImageError::Field(format!("{} bytes after the last chunk", body.len() - r.at)));
    }
    Ok(Image { geometry, config, log, store })
}

struct Reader<'a> {
    b: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], ImageError> {
        let end = self.at.checked_add(n).filter(|&e| e <= self.b.len()).ok_or(ImageError::Truncated(self.b.len()))?;
        let s = &self.b[self.at..end];
        self.at = end;
        Ok(s)
    }

    fn u64(&mut self) -> Result<u64, ImageError> {
        Ok(u64::from_le_bytes(self.take(8)?.try_into().expect("8 bytes")))
    }

    /// A count of items of `item_bytes` each that must fit in what is left.
    fn count(&mut self, item_bytes: usize) -> Result<usize, ImageError> {
        let n = self.u64()?;
        let left = (self.b.len() - self.at) as u64;
        if n > left / item_bytes as u64 {
            return Err(ImageError::Field(format!("count {n} at byte {} exceeds the image", self.at - 8)));
        }
        Ok(n as usize)
    }
}
