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
        let mut p = Vec::with_capacity(PAGE);
        self.append(b, 0, PAGE, &mut p);
        p
    }

    /// Appends bytes `s..e` of block `b`'s page to `out`: the same bytes as
    /// `load(b)[s..e]`, without making the page first (a read's copy).
    pub fn append(&self, b: u32, s: usize, e: usize, out: &mut Vec<u8>) {
        match self {
            Content::Tags { tag, len } => {
                // Byte i of the page is t[i % 8] below the length, 0 after it:
                // from `s` on, the tag rotated by `s % 8`, eight bytes at a time.
                let t = tag[b as usize].rotate_right(8 * (s % 8) as u32).to_le_bytes();
                let n = (len[b as usize] as usize).clamp(s, e);
                let (at, fill) = (out.len(), n - s);
                out.reserve(e - s);
                // The pattern has period 8: write it once, then double it by
                // copying its own prefix (lengths stay multiples of 8 until
                // the last copy), so no byte is written twice.
                out.extend_from_slice(&t[..fill.min(8)]);
                while out.len() - at < fill {
                    let have = out.len() - at;
                    out.extend_from_within(at..at + have.min(fill - have));
                }
                out.resize(at + e - s, 0);
            }
            Content::Bytes(v) => out.extend_from_slice(&v[b as usize * PAGE + s..b as usize * PAGE + e]),
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A tag-mode page is the page's first 8 bytes repeated up to its length, then zeros.
    #[test]
    fn tags_load_repeats_the_first_eight_bytes() {
        let mut c = Content::new(ContentMode::Tags, 4);
        let page: Vec<u8> = (0..PAGE as u32).map(|i| (i * 31 + 7) as u8).collect();
        for len in [0, 1, 7, 8, 9, 100, 4095, 4096] {
            c.store(2, &page[..len]);
            let got = c.load(2);
            let want: Vec<u8> = (0..PAGE).map(|i| if i < len { page[i % 8] } else { 0 }).collect();
            assert_eq!(got, want, "length {len}");
        }
    }

    /// `append` gives `load`'s bytes for every range, in both modes.
    #[test]
    fn append_is_a_range_of_load() {
        let page: Vec<u8> = (0..PAGE as u32).map(|i| (i * 31 + 7) as u8).collect();
        for mode in [ContentMode::Tags, ContentMode::Bytes] {
            let mut c = Content::new(mode, 4);
            for len in [0, 1, 7, 8, 9, 100, 4095, 4096] {
                c.store(1, &page[..len]);
                let full = c.load(1);
                for (s, e) in
                    [(0, PAGE), (0, 0), (3, 3), (1, 9), (5, 4096), (8, 100), (13, 4001), (4090, 4096), (99, 101)]
                {
                    let mut out = vec![0xAA];
                    c.append(1, s, e, &mut out);
                    assert_eq!(out[0], 0xAA);
                    assert_eq!(&out[1..], &full[s..e], "len {len} range {s}..{e}");
                }
            }
        }
    }
}
