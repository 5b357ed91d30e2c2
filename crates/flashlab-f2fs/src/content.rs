//! File contents per main-area block: a tag (the page's first 8 bytes)
//! and a length, or every byte, as `content` says.

use crate::layout::BLOCK_BYTES;
use crate::settings::ContentMode;

const PAGE: usize = BLOCK_BYTES as usize;

/// Contents of the main area, indexed by block.
pub enum Content {
    Tags { tag: Vec<u64>, len: Vec<u16> },
    Bytes(Vec<u8>),
}

impl Content {
    pub fn new(mode: ContentMode, blocks: u32) -> Content {
        match mode {
            ContentMode::Tags => Content::Tags { tag: vec![0; blocks as usize], len: vec![0; blocks as usize] },
            ContentMode::Bytes => Content::Bytes(vec![0; blocks as usize * PAGE]),
        }
    }

    /// Stores `data` (at most a page) as block `b`'s content.
    pub fn store(&mut self, b: u32, data: &[u8]) {
        let n = data.len().min(PAGE);
        match self {
            Content::Tags { tag, len } => {
                let mut t = [0u8; 8];
                let k = n.min(8);
                t[..k].copy_from_slice(&data[..k]);
                tag[b as usize] = u64::from_le_bytes(t);
                len[b as usize] = n as u16;
            }
            Content::Bytes(v) => {
                let o = b as usize * PAGE;
                v[o..o + n].copy_from_slice(&data[..n]);
                v[o + n..o + PAGE].fill(0);
            }
        }
    }

    /// Block `b`'s page (4 KiB).
    pub fn load(&self, b: u32) -> Vec<u8> {
        match self {
            Content::Tags { tag, len } => {
                let t = tag[b as usize].to_le_bytes();
                let mut p = vec![0u8; PAGE];
                for (i, x) in p[..len[b as usize] as usize].iter_mut().enumerate() {
                    *x = t[i % 8];
                }
                p
            }
            Content::Bytes(v) => v[b as usize * PAGE..(b as usize + 1) * PAGE].to_vec(),
        }
    }

    /// Moves block `from`'s content to `to` (cleaning).
    pub fn copy(&mut self, from: u32, to: u32) {
        match self {
            Content::Tags { tag, len } => {
                tag[to as usize] = tag[from as usize];
                len[to as usize] = len[from as usize];
            }
            Content::Bytes(v) => v.copy_within(from as usize * PAGE..(from as usize + 1) * PAGE, to as usize * PAGE),
        }
    }
}
