//! The check of an old data node that a write replaces whole: read from
//! flash (counted, with its faults) and checked exactly as `read_node` would
//! (header, CRC, payload length), but on the stored bytes in place, as they
//! stream out of the NAND store (`Nand::read_with`), instead of a copy.
//!
//! A node that looks like a plain or elided data node of the right length
//! from its first [`DATA_NODE_BYTES`] bytes has its CRC computed over the
//! stream; the only way it can then fail is the CRC, whose error is the one
//! `read_node` gives ("bad node at L:O"). Any other node (compressed, bad
//! header, short, erased) is copied as before and checked by the general
//! path, so every result and error stays the same.

use crate::error::{FsError, FsResult};
use crate::fs::Fs;
use crate::node::{Loc, COMPR_ELIDED, DATA_NODE_BYTES, NODE_MAGIC, T_DATA};

/// How the streamed bytes are used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// Still gathering the node's first bytes.
    Head,
    /// A plain or elided data node by its head: CRC only.
    Crc,
    /// Anything else: copied for the general check.
    Copy,
}

/// The streaming check of the data node at `loc`.
pub(crate) struct DataNodeCheck<'a> {
    loc: Loc,
    head: [u8; DATA_NODE_BYTES],
    /// Bytes of the head gathered.
    seen: usize,
    mode: Mode,
    crc: crc32fast::Hasher,
    /// The node's bytes in [`Mode::Copy`].
    copy: &'a mut Vec<u8>,
}

/// What the stream found.
pub(crate) enum Checked {
    /// The node passed, or failed with this error, without a copy.
    Done(FsResult<()>),
    /// The node's bytes were copied (into the buffer given): check them.
    Copied,
}

impl<'a> DataNodeCheck<'a> {
    pub fn new(loc: Loc, copy: &'a mut Vec<u8>) -> Self {
        DataNodeCheck { loc, head: [0; DATA_NODE_BYTES], seen: 0, mode: Mode::Head, crc: Default::default(), copy }
    }

    /// Bytes of the head to gather before deciding.
    fn head_len(&self) -> usize {
        (self.loc.len as usize).min(DATA_NODE_BYTES)
    }

    /// The next bytes of the node, `at` bytes in (0 starts over: a retried read).
    pub fn feed(&mut self, at: usize, mut bytes: &[u8]) {
        if at == 0 {
            (self.seen, self.mode, self.crc) = (0, Mode::Head, Default::default());
            self.copy.clear();
        }
        if self.mode == Mode::Head {
            let n = (self.head_len() - self.seen).min(bytes.len());
            self.head[self.seen..self.seen + n].copy_from_slice(&bytes[..n]);
            self.seen += n;
            bytes = &bytes[n..];
            if self.seen == self.head_len() {
                self.decide();
            }
        }
        match self.mode {
            Mode::Head => {}
            Mode::Crc => self.crc.update(bytes),
            Mode::Copy => self.copy.extend_from_slice(bytes),
        }
    }

    /// The mode once the head is complete.
    fn decide(&mut self) {
        let h = &self.head;
        let u32_at = |i: usize| u32::from_le_bytes([h[i], h[i + 1], h[i + 2], h[i + 3]]);
        let compr = h[DATA_NODE_BYTES - 12];
        let plain = self.loc.len as usize >= DATA_NODE_BYTES
            && u32_at(0) == NODE_MAGIC
            && u32_at(16) == self.loc.len
            && h[20] == T_DATA
            && (compr == 0 || compr & COMPR_ELIDED != 0);
        if plain {
            self.mode = Mode::Crc;
            self.crc.update(&self.head[8..]);
        } else {
            self.mode = Mode::Copy;
            self.copy.extend_from_slice(&self.head[..self.seen]);
        }
    }

    /// The result once every byte of the node was fed.
    pub fn finish(mut self) -> Checked {
        if self.mode == Mode::Head {
            self.decide(); // an empty node
        }
        if self.mode == Mode::Copy {
            return Checked::Copied;
        }
        let h = &self.head;
        let stored = u32::from_le_bytes([h[4], h[5], h[6], h[7]]);
        if self.crc.finalize() != stored {
            return Checked::Done(Err(FsError::Corrupt(format!("bad node at {}:{}", self.loc.lnum, self.loc.offs))));
        }
        let compr = h[DATA_NODE_BYTES - 12];
        let size = u32::from_le_bytes([h[32], h[33], h[34], h[35]]) as usize;
        if compr & COMPR_ELIDED == 0 && self.loc.len as usize - DATA_NODE_BYTES != size {
            return Checked::Done(Err(FsError::Corrupt("payload".into())));
        }
        Checked::Done(Ok(()))
    }
}

impl Fs {
    /// Reads the data node of block `b` of `inum` at `loc` and checks it as
    /// `read_node` would, without keeping its bytes (a write replacing the
    /// block whole); `buf` receives them only when the general check needs
    /// them.
    pub(crate) fn check_in_place(&mut self, inum: u32, b: u32, loc: Loc, buf: &mut Vec<u8>) -> FsResult<()> {
        let mut check = DataNodeCheck::new(loc, buf);
        self.read_bytes_with(loc.lnum, loc.offs, loc.len, &mut |at, bytes| check.feed(at, bytes))?;
        match check.finish() {
            Checked::Done(r) => r,
            Checked::Copied => Fs::check_data_node(inum, b, loc, buf, None),
        }
    }
}
