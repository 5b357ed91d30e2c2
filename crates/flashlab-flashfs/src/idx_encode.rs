//! A dirty znode's index node encoded straight into the index head's write
//! buffer at commit (UBIFS builds it in place too: `make_idx_node` in
//! fs/ubifs/tnc_commit.rs fills `ubifs_idx_node` in the commit's buffer),
//! byte for byte what `Tnc::encode_idx(n).encode(sqnum, G_NONE)` gives,
//! without the intermediate node, its branch vector or its own buffer.

use crate::node::{align, HDR, NODE_MAGIC, T_IDX};
use crate::tnc::{Br, Tnc};

/// Level byte, branch count, then per branch a location (12 bytes) and a
/// key (10 bytes and the name).
const IDX_FIXED: usize = 5;
const BRANCH_FIXED: usize = 12 + 10;

impl Tnc {
    /// Length of znode `n`'s index node, header included, before alignment.
    pub fn idx_node_len(&self, n: usize) -> usize {
        HDR + IDX_FIXED + self.node(n).child_cnt() * BRANCH_FIXED + self.name_bytes(n)
    }

    /// Appends znode `n`'s index node (group none), zero-padded to 8 bytes,
    /// to `out`. Children must have locations (as for `encode_idx`).
    /// The buffer is grown once and the fields written in place.
    pub fn encode_idx_into(&self, n: usize, sqnum: u64, out: &mut Vec<u8>) {
        let z = self.node(n);
        let at = out.len();
        let len = self.idx_node_len(n);
        out.resize(at + align(len), 0);
        let b = &mut out[at..at + len];
        b[0..4].copy_from_slice(&NODE_MAGIC.to_le_bytes());
        b[8..16].copy_from_slice(&sqnum.to_le_bytes());
        b[16..20].copy_from_slice(&(len as u32).to_le_bytes());
        b[20..24].copy_from_slice(&[T_IDX, crate::node::G_NONE, 0, 0]);
        b[HDR] = z.level;
        b[HDR + 1..HDR + 5].copy_from_slice(&(z.child_cnt() as u32).to_le_bytes());
        let mut o = HDR + IDX_FIXED;
        for (j, br) in self.brs(n).iter().enumerate() {
            let l = match br {
                Br::Leaf(l) => *l,
                Br::Child(c) => self.node(*c).loc.unwrap_or(crate::node::Loc { lnum: 0, offs: 0, len: 0 }),
            };
            b[o..o + 4].copy_from_slice(&l.lnum.to_le_bytes());
            b[o + 4..o + 8].copy_from_slice(&l.offs.to_le_bytes());
            b[o + 8..o + 12].copy_from_slice(&l.len.to_le_bytes());
            o += 12 + self.encode_key(n, j, &mut b[o + 12..]);
        }
        debug_assert_eq!(o, len);
        let crc = crc32fast::hash(&b[8..len]);
        b[4..8].copy_from_slice(&crc.to_le_bytes());
    }
}

#[cfg(test)]
mod tests {
    use crate::key::Key;
    use crate::node::{Loc, G_NONE};
    use crate::tnc::Tnc;

    /// Every znode of trees with data and entry keys (names of every length
    /// class), leaves and children with and without locations, against
    /// `encode_idx(n).encode(..)`.
    #[test]
    fn encodes_as_the_idx_node_does() {
        for fanout in [3usize, 8] {
            let mut t = Tnc::new(fanout);
            for i in 0..400u32 {
                let k = if i % 3 == 0 {
                    Key::dent(i % 7, format!("n{}", "x".repeat(i as usize % 40)).as_bytes())
                } else {
                    Key::data(i % 11, i)
                };
                t.insert(&k, Loc { lnum: i % 13, offs: i * 8, len: 48 + i % 100 });
            }
            for (j, n) in t.dirty_postorder().into_iter().enumerate() {
                let sq = 1000 + j as u64;
                let mut out = vec![0xAB; j % 5];
                let pre = out.len();
                t.encode_idx_into(n, sq, &mut out);
                assert_eq!(&out[pre..], &t.encode_idx(n).encode(sq, G_NONE)[..], "fanout {fanout} znode {n}");
                if j % 2 == 0 {
                    t.set_written(n, Loc { lnum: 5, offs: 8 * j as u32, len: (out.len() - pre) as u32 });
                }
            }
        }
    }
}
