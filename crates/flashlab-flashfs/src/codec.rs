//! Encoding and decoding of node payloads.

use crate::key::Key;
use crate::node::*;

/// A node being encoded: the buffer and where the node starts in it.
struct W(Vec<u8>, usize);

impl W {
    fn u8(&mut self, v: u8) {
        self.0.push(v);
    }
    fn u32(&mut self, v: u32) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn u64(&mut self, v: u64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    /// Zero bytes up to `n` bytes of node (header included).
    fn zeros_to(&mut self, n: usize) {
        if self.0.len() < self.1 + n {
            self.0.resize(self.1 + n, 0);
        }
    }
    fn loc(&mut self, l: Option<Loc>) {
        let l = l.unwrap_or(Loc { lnum: u32::MAX, offs: 0, len: 0 });
        self.u32(l.lnum);
        self.u32(l.offs);
        self.u32(l.len);
    }
}

struct R<'a>(&'a [u8], usize);

impl R<'_> {
    fn take(&mut self, n: usize) -> Option<&[u8]> {
        let s = self.0.get(self.1..self.1 + n)?;
        self.1 += n;
        Some(s)
    }
    fn u8(&mut self) -> Option<u8> {
        Some(self.take(1)?[0])
    }
    fn u32(&mut self) -> Option<u32> {
        Some(u32::from_le_bytes(self.take(4)?.try_into().ok()?))
    }
    fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }
    fn loc(&mut self) -> Option<Option<Loc>> {
        let (lnum, offs, len) = (self.u32()?, self.u32()?, self.u32()?);
        Some((lnum != u32::MAX).then_some(Loc { lnum, offs, len }))
    }
    fn key(&mut self) -> Option<Key> {
        let (k, n) = Key::decode(&self.0[self.1..])?;
        self.1 += n;
        Some(k)
    }
}

impl Node {
    pub fn ntype(&self) -> u8 {
        match self {
            Node::Ino(_) => T_INO,
            Node::Data(_) => T_DATA,
            Node::Dent(_) => T_DENT,
            Node::Trun { .. } => T_TRUN,
            Node::Pad => T_PAD,
            Node::Sb(_) => T_SB,
            Node::Mst(_) => T_MST,
            Node::Ref { .. } => T_REF,
            Node::Idx { .. } => T_IDX,
            Node::Cs { .. } => T_CS,
            Node::Orph { .. } => T_ORPH,
            Node::Lpt(_) => T_LPT,
        }
    }

    /// The index key of a leaf node (inode, data, non-deletion dent).
    pub fn key(&self) -> Option<Key> {
        match self {
            Node::Ino(i) => Some(Key::ino(i.inum)),
            Node::Data(d) => Some(Key::data(d.inum, d.block)),
            Node::Dent(d) => Some(Key::dent(d.parent, &d.name)),
            _ => None,
        }
    }

    fn payload(&self, w: &mut W) {
        match self {
            // Leaf nodes take the room of UBIFS's (ubifs-media.h); the
            // fields UBIFS has and flashfs does not model (times, modes,
            // keys, ...) are zeros.
            Node::Ino(i) => {
                w.u32(i.inum);
                w.u32(i.nlink);
                w.u64(i.size);
                w.u8(i.is_dir as u8);
                w.zeros_to(INO_NODE_BYTES);
            }
            Node::Data(d) => {
                w.u32(d.inum);
                w.u32(d.block);
                w.u32(d.size);
                w.u8(d.compr);
                w.zeros_to(DATA_NODE_BYTES);
                w.0.extend_from_slice(&d.payload);
            }
            Node::Dent(d) => {
                w.u32(d.parent);
                w.u32(d.target);
                w.u8(d.is_dir as u8);
                w.u8(d.name.len() as u8);
                w.zeros_to(DENT_NODE_BYTES);
                w.0.extend_from_slice(&d.name);
                w.u8(0);
            }
            Node::Trun { inum, old_size, new_size } => {
                w.u32(*inum);
                w.u64(*old_size);
                w.u64(*new_size);
                w.zeros_to(TRUN_NODE_BYTES);
            }
            Node::Pad => {}
            Node::Sb(s) => {
                for v in [s.leb_bytes, s.leb_count, s.min_io, s.fanout, s.log_lebs, s.lpt_lebs] {
                    w.u32(v);
                }
                w.u8(s.compr);
            }
            Node::Mst(m) => {
                w.u64(m.commit_no);
                w.u32(m.highest_inum);
                w.loc(m.root);
                w.loc(m.lpt_root);
                w.loc(m.orph);
                w.u32(m.log_lnum);
                w.u32(m.idx_head);
                w.u8(m.clean as u8);
            }
            Node::Ref { lnum, offs, jhead } => {
                w.u32(*lnum);
                w.u32(*offs);
                w.u8(*jhead);
            }
            Node::Idx { level, branches } => {
                w.u8(*level);
                w.u32(branches.len() as u32);
                for (k, l) in branches {
                    w.loc(Some(*l));
                    k.encode(&mut w.0);
                }
            }
            Node::Cs { commit_no } => w.u64(*commit_no),
            Node::Orph { commit_no, inums } => {
                w.u64(*commit_no);
                w.u32(inums.len() as u32);
                inums.iter().for_each(|i| w.u32(*i));
            }
            Node::Lpt(LptNode::Pnode { first, props, valid }) => {
                w.u8(if valid.is_empty() { 0 } else { 2 });
                w.u32(*first);
                w.u32(props.len() as u32);
                for (f, d, fl) in props {
                    w.u32(*f);
                    w.u32(*d);
                    w.u8(*fl);
                }
                for words in valid {
                    w.u8(words.len() as u8);
                    words.iter().for_each(|x| w.u64(*x));
                }
            }
            Node::Lpt(LptNode::Nnode { children }) => {
                w.u8(1);
                w.u32(children.len() as u32);
                children.iter().for_each(|c| w.loc(Some(*c)));
            }
        }
    }

    /// Room for the encoded node, so that encoding a data node allocates once.
    fn encoded_capacity(&self) -> usize {
        match self {
            Node::Data(d) => DATA_NODE_BYTES + d.payload.len() + ALIGN,
            Node::Ino(_) => INO_NODE_BYTES,
            // level, count, then per branch a location and a key (10 bytes and the name).
            Node::Idx { branches, .. } => {
                HDR + 5 + branches.iter().map(|(k, _)| 12 + 10 + k.name.len()).sum::<usize>() + ALIGN
            }
            _ => 2 * HDR,
        }
    }

    /// Full node bytes (header + payload), zero-padded to 8 bytes.
    pub fn encode(&self, sqnum: u64, group: u8) -> Vec<u8> {
        let mut v = Vec::with_capacity(self.encoded_capacity());
        self.encode_into(sqnum, group, &mut v);
        v
    }

    /// Appends [`Node::encode`]'s bytes to `out` (no buffer of their own).
    pub fn encode_into(&self, sqnum: u64, group: u8, out: &mut Vec<u8>) {
        let at = out.len();
        out.reserve(self.encoded_capacity());
        out.resize(at + HDR, 0);
        let mut w = W(std::mem::take(out), at);
        self.payload(&mut w);
        *out = w.0;
        let len = out.len() - at;
        let b = &mut out[at..];
        b[0..4].copy_from_slice(&NODE_MAGIC.to_le_bytes());
        b[8..16].copy_from_slice(&sqnum.to_le_bytes());
        b[16..20].copy_from_slice(&(len as u32).to_le_bytes());
        b[20] = self.ntype();
        b[21] = group;
        let crc = crc32fast::hash(&b[8..len]);
        b[4..8].copy_from_slice(&crc.to_le_bytes());
        out.resize(at + align(len), 0);
    }

    /// `encode(..).len()` of an LPT node, by arithmetic (the commit sizes
    /// its LPT nodes before it writes them).
    pub fn lpt_encoded_len(n: &LptNode) -> usize {
        let payload = match n {
            LptNode::Pnode { props, valid, .. } => {
                9 + 9 * props.len() + valid.iter().map(|w| 1 + 8 * w.len()).sum::<usize>()
            }
            LptNode::Nnode { children } => nnode_payload_len(children.len()),
        };
        align(HDR + payload)
    }

    /// A data node's fields for [`DataFields::encode_into`]; None for other nodes.
    pub fn data_fields(&self) -> Option<DataFields<'_>> {
        match self {
            Node::Data(d) => Some(DataFields {
                inum: d.inum,
                block: d.block,
                size: d.size,
                compr: d.compr,
                payload: &d.payload,
                tail: None,
            }),
            _ => None,
        }
    }

    /// A padding node of exactly `len` bytes (len >= HDR, multiple of 8);
    /// the file system appends it in place ([`pad_node_into`]).
    #[cfg(test)]
    pub fn pad(len: usize) -> Vec<u8> {
        let mut b = Vec::with_capacity(len);
        pad_node_into(&mut b, len);
        b
    }
}

/// Payload bytes of an LPT nnode with `kids` children (level byte, count,
/// a location per child).
pub fn nnode_payload_len(kids: usize) -> usize {
    5 + 12 * kids
}

/// Appends a padding node of exactly `len` bytes (len >= HDR, multiple of
/// 8) to `out`, with no buffer of its own.
pub fn pad_node_into(out: &mut Vec<u8>, len: usize) {
    let at = out.len();
    Node::Pad.encode_into(0, G_NONE, out);
    out.resize(at + len, 0);
    let b = &mut out[at..];
    b[16..20].copy_from_slice(&(len as u32).to_le_bytes());
    let crc = crc32fast::hash(&b[8..len]);
    b[4..8].copy_from_slice(&crc.to_le_bytes());
}

/// A data node's fields with its payload borrowed: encoded straight into a
/// journal head's write buffer, byte for byte what `Node::Data(..).encode`
/// gives, without the node's own buffer or a copy of the payload in it.
#[derive(Debug, Clone, Copy)]
pub struct DataFields<'a> {
    pub inum: u32,
    pub block: u32,
    pub size: u32,
    pub compr: u8,
    pub payload: &'a [u8],
    /// The LZ4 tail memo's id of `payload`'s bytes after its [`STAMP`], if
    /// it gave one (`compress::compress_shrunk_tail`): the node's CRC then
    /// takes the kept tail's part without comparing it (`crc_tail.rs`).
    pub(crate) tail: Option<crate::lz4_memo::TailId>,
}

impl DataFields<'_> {
    /// The node's length (the header's `len`, before the 8-byte alignment).
    pub fn node_len(&self) -> usize {
        DATA_NODE_BYTES + self.payload.len()
    }

    /// Appends the encoded node (aligned to 8 bytes) to `out`.
    pub fn encode_into(&self, sqnum: u64, group: u8, out: &mut Vec<u8>) {
        let at = out.len();
        let len = self.node_len();
        out.reserve(align(len));
        out.extend_from_slice(&NODE_MAGIC.to_le_bytes());
        out.extend_from_slice(&[0; 4]);
        out.extend_from_slice(&sqnum.to_le_bytes());
        out.extend_from_slice(&(len as u32).to_le_bytes());
        out.extend_from_slice(&[T_DATA, group, 0, 0]);
        out.extend_from_slice(&self.inum.to_le_bytes());
        out.extend_from_slice(&self.block.to_le_bytes());
        out.extend_from_slice(&self.size.to_le_bytes());
        out.push(self.compr);
        out.resize(at + DATA_NODE_BYTES, 0);
        out.extend_from_slice(self.payload);
        let crc = crate::crc_tail::hash_with_tail(&out[at + 8..at + len], DATA_CRC_HEAD, self.tail);
        out[at + 4..at + 8].copy_from_slice(&crc.to_le_bytes());
        out.resize(at + align(len), 0);
    }
}

/// The index key of the node `b` whose header `h` [`parse_hdr`] accepted:
/// `parse_node(b)`'s node's [`Node::key`] (None also where `parse_node`
/// fails), without decoding (copying) a data node's payload.
pub fn leaf_key(h: &Hdr, b: &[u8]) -> Option<Key> {
    let p = &b[HDR..h.len as usize];
    if h.ntype != T_DATA {
        return decode_payload(h.ntype, p)?.key();
    }
    let mut r = R(p, 0);
    let (inum, block, _size, _compr) = (r.u32()?, r.u32()?, r.u32()?, r.u8()?);
    p.get(DATA_NODE_BYTES - HDR..)?;
    Some(Key::data(inum, block))
}

/// Bytes at the front of a data node's payload that may differ where the
/// rest repeats the last data node's (a record's stamp, as `lz4_memo.rs`'s
/// `HEAD`).
const STAMP: usize = 8;
// A payload's tail is the LZ4 memo's block tail (`DataFields::tail`).
const _: () = assert!(STAMP == crate::lz4_memo::HEAD);

/// Bytes of a data node's CRC range (from byte 8 of the node) before its
/// payload's tail: the rest of the header, the data fields and the
/// payload's [`STAMP`] (`crc_tail.rs`).
const DATA_CRC_HEAD: usize = (DATA_NODE_BYTES - 8) + STAMP;

/// The CRC of a node of type `ntype` over `b`, its bytes from byte 8 on:
/// `crc32fast::hash(b)`, a data node's through the repeated-tail memo.
fn node_crc(ntype: u8, b: &[u8]) -> u32 {
    if ntype == T_DATA {
        crate::crc_tail::hash_with_tail(b, DATA_CRC_HEAD, None)
    } else {
        crc32fast::hash(b)
    }
}

/// Parses the header at the start of `b` (checks magic, length and CRC).
pub fn parse_hdr(b: &[u8]) -> Result<Hdr, Bad> {
    parse_hdr_with(b, true)
}

/// [`parse_hdr`], with the CRC checked only if `chk_crc` (magic and length
/// always: `ubifs_check_node`, fs/ubifs/io.c, returns before the CRC for a
/// data node read with `no_chk_data_crc`).
fn parse_hdr_with(b: &[u8], chk_crc: bool) -> Result<Hdr, Bad> {
    if b.len() < HDR {
        return Err(if b.iter().all(|x| *x == 0xFF) { Bad::Empty } else { Bad::Corrupt });
    }
    let magic = u32::from_le_bytes(b[0..4].try_into().unwrap_or([0; 4]));
    if magic != NODE_MAGIC {
        return Err(match magic {
            0xFFFF_FFFF if b[..HDR].iter().all(|x| *x == 0xFF) => Bad::Empty,
            0 => Bad::Zeros,
            _ => Bad::Corrupt,
        });
    }
    let len = u32::from_le_bytes(b[16..20].try_into().unwrap_or([0; 4]));
    if (len as usize) < HDR || len as usize > b.len() {
        return Err(Bad::Corrupt);
    }
    let crc = u32::from_le_bytes(b[4..8].try_into().unwrap_or([0; 4]));
    if chk_crc && node_crc(b[20], &b[8..len as usize]) != crc {
        return Err(Bad::Corrupt);
    }
    let sqnum = u64::from_le_bytes(b[8..16].try_into().unwrap_or([0; 8]));
    Ok(Hdr { sqnum, len, ntype: b[20], group: b[21] })
}

/// Parses a whole node; None when the payload does not decode.
pub fn parse_node(b: &[u8]) -> Result<(Hdr, Node), Bad> {
    let h = parse_hdr(b)?;
    let node = decode_payload(h.ntype, &b[HDR..h.len as usize]).ok_or(Bad::Corrupt)?;
    Ok((h, node))
}

/// A data node's fields, its payload borrowed from the node's bytes.
pub struct DataRef<'a> {
    pub size: u32,
    pub compr: u8,
    pub payload: &'a [u8],
}

/// What `parse_node` gives for a data node, without copying the payload;
/// None for a bad header, another node type or a short node (`parse_node`
/// tells those apart). The CRC is checked only if `chk_crc`: the header's
/// magic, length and type always (`ubifs_check_node`, fs/ubifs/io.c, skips
/// the CRC of a data node read with `must_chk_crc` = 0 under
/// `no_chk_data_crc`, UBIFS's default, but checks the node type first).
pub fn parse_data_ref(b: &[u8], chk_crc: bool) -> Option<(Hdr, DataRef<'_>)> {
    let h = parse_hdr_with(b, chk_crc).ok()?;
    if h.ntype != T_DATA {
        return None;
    }
    let p = &b[HDR..h.len as usize];
    let mut r = R(p, 0);
    let (_inum, _block, size, compr) = (r.u32()?, r.u32()?, r.u32()?, r.u8()?);
    let payload = p.get(DATA_NODE_BYTES - HDR..)?;
    Some((h, DataRef { size, compr, payload }))
}

fn decode_payload(t: u8, p: &[u8]) -> Option<Node> {
    let mut r = R(p, 0);
    Some(match t {
        T_INO => Node::Ino(InoNode { inum: r.u32()?, nlink: r.u32()?, size: r.u64()?, is_dir: r.u8()? != 0 }),
        T_DATA => {
            let (inum, block, size, compr) = (r.u32()?, r.u32()?, r.u32()?, r.u8()?);
            let payload = p.get(DATA_NODE_BYTES - HDR..)?.to_vec();
            Node::Data(DataNode { inum, block, size, compr, payload })
        }
        T_DENT => {
            let (parent, target, is_dir, n) = (r.u32()?, r.u32()?, r.u8()? != 0, r.u8()? as usize);
            r.1 = DENT_NODE_BYTES - HDR;
            Node::Dent(DentNode { parent, target, is_dir, name: r.take(n)?.to_vec() })
        }
        T_TRUN => Node::Trun { inum: r.u32()?, old_size: r.u64()?, new_size: r.u64()? },
        T_PAD => Node::Pad,
        T_SB => Node::Sb(SbNode {
            leb_bytes: r.u32()?,
            leb_count: r.u32()?,
            min_io: r.u32()?,
            fanout: r.u32()?,
            log_lebs: r.u32()?,
            lpt_lebs: r.u32()?,
            compr: r.u8()?,
        }),
        T_MST => Node::Mst(MstNode {
            commit_no: r.u64()?,
            highest_inum: r.u32()?,
            root: r.loc()?,
            lpt_root: r.loc()?,
            orph: r.loc()?,
            log_lnum: r.u32()?,
            idx_head: r.u32()?,
            clean: r.u8()? != 0,
        }),
        T_REF => Node::Ref { lnum: r.u32()?, offs: r.u32()?, jhead: r.u8()? },
        T_IDX => {
            let level = r.u8()?;
            let n = r.u32()? as usize;
            let mut branches = Vec::with_capacity(n.min(1024));
            for _ in 0..n {
                let l = r.loc()??;
                branches.push((r.key()?, l));
            }
            Node::Idx { level, branches }
        }
        T_CS => Node::Cs { commit_no: r.u64()? },
        T_ORPH => {
            let commit_no = r.u64()?;
            let n = r.u32()? as usize;
            let inums = (0..n).map(|_| r.u32()).collect::<Option<Vec<_>>>()?;
            Node::Orph { commit_no, inums }
        }
        T_LPT => decode_lpt(&mut r)?,
        _ => return None,
    })
}

fn decode_lpt(r: &mut R) -> Option<Node> {
    let tag = r.u8()?;
    if tag == 0 || tag == 2 {
        let first = r.u32()?;
        let n = r.u32()? as usize;
        let props = (0..n).map(|_| Some((r.u32()?, r.u32()?, r.u8()?))).collect::<Option<Vec<_>>>()?;
        let mut valid = Vec::new();
        if tag == 2 {
            for _ in 0..n {
                let k = r.u8()? as usize;
                valid.push((0..k).map(|_| r.u64()).collect::<Option<Vec<_>>>()?);
            }
        }
        Some(Node::Lpt(LptNode::Pnode { first, props, valid }))
    } else {
        let n = r.u32()? as usize;
        let children = (0..n).map(|_| r.loc()?).collect::<Option<Vec<_>>>()?;
        Some(Node::Lpt(LptNode::Nnode { children }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nodes_roundtrip_and_detect_corruption() {
        let nodes = vec![
            Node::Ino(InoNode { inum: 5, nlink: 1, size: 99, is_dir: false }),
            Node::Data(DataNode { inum: 5, block: 2, size: 3, compr: 0, payload: vec![1, 2, 3] }),
            Node::Dent(DentNode { parent: 1, name: b"x".to_vec(), target: 5, is_dir: false }),
            Node::Trun { inum: 5, old_size: 10, new_size: 2 },
            Node::Ref { lnum: 3, offs: 2048, jhead: 1 },
            Node::Idx { level: 1, branches: vec![(Key::dent(1, b"ab"), Loc { lnum: 1, offs: 2, len: 3 })] },
            Node::Orph { commit_no: 4, inums: vec![7, 8] },
            Node::Lpt(LptNode::Pnode { first: 4, props: vec![(1, 2, 3)], valid: vec![] }),
            Node::Lpt(LptNode::Pnode { first: 8, props: vec![(1, 2, 3)], valid: vec![vec![5, 7]] }),
            Node::Mst(MstNode { commit_no: 3, root: None, ..MstNode::default() }),
        ];
        for n in nodes {
            let mut b = n.encode(42, G_LAST);
            assert_eq!(b.len() % ALIGN, 0);
            let (h, back) = parse_node(&b).unwrap();
            assert_eq!((h.sqnum, h.group, &back), (42, G_LAST, &n));
            let last = h.len as usize - 1;
            b[last] ^= 0x10;
            assert_eq!(parse_node(&b).unwrap_err(), Bad::Corrupt);
        }
        // UBIFS's node sizes (ubifs-media.h): inode 160, dent 56 + name + NUL,
        // data 48 + data, truncation 56.
        let len = |n: Node| u32::from_le_bytes(n.encode(1, G_NONE)[16..20].try_into().unwrap());
        assert_eq!(len(Node::Ino(InoNode { inum: 5, nlink: 1, size: 99, is_dir: false })), 160);
        let dent = |name: &[u8]| Node::Dent(DentNode { parent: 1, name: name.to_vec(), target: 5, is_dir: false });
        assert_eq!(len(dent(b"x")), 58);
        assert_eq!(len(dent(b"0123456789")), 67);
        let d = DataNode { inum: 5, block: 2, size: 4096, compr: 0, payload: vec![7; 4096] };
        assert_eq!(len(Node::Data(d)), 4144);
        assert_eq!(len(Node::Trun { inum: 5, old_size: 10, new_size: 2 }), 56);
        assert_eq!(parse_hdr(&[0xFF; 64]).unwrap_err(), Bad::Empty);
        assert_eq!(parse_hdr(&[0; 64]).unwrap_err(), Bad::Zeros);
        let pad = Node::pad(64);
        assert_eq!(parse_node(&pad).unwrap().1, Node::Pad);
    }

    /// `DataFields::encode_into` writes what `Node::encode` does, after
    /// whatever the buffer held.
    #[test]
    fn data_fields_encode_as_the_node_does() {
        for len in [0usize, 1, 7, 8, 13, 100, 4095, 4096] {
            let payload: Vec<u8> = (0..len).map(|i| (i * 31 % 251) as u8).collect();
            let node = Node::Data(DataNode { inum: 9, block: 77, size: len as u32 + 3, compr: 0x81, payload });
            for (sq, g) in [(1u64, G_NONE), (u64::MAX - 5, G_LAST)] {
                let mut out = vec![0xAB; len % 16];
                let before = out.clone();
                let f = node.data_fields().unwrap();
                f.encode_into(sq, g, &mut out);
                let want = node.encode(sq, g);
                assert_eq!(&out[..before.len()], &before[..]);
                assert_eq!(&out[before.len()..], &want[..], "payload {len}");
                assert_eq!(f.node_len(), u32::from_le_bytes(want[16..20].try_into().unwrap()) as usize);
            }
        }
        assert!(Node::Pad.data_fields().is_none());
    }

    /// `Node::encode_into` appends what `Node::encode` gives, after whatever
    /// the buffer held; `lpt_encoded_len` is the encoded length of LPT nodes;
    /// `pad_node_into` appends the padding node built the old way (an
    /// encoded `Pad` grown to its length, its length and CRC fixed up).
    #[test]
    fn encode_into_lpt_len_and_pad_as_before() {
        let loc = |i: u32| Loc { lnum: i, offs: 8 * i, len: 100 + i };
        let mut nodes = vec![
            Node::Ino(InoNode { inum: 5, nlink: 1, size: 99, is_dir: false }),
            Node::Dent(DentNode { parent: 1, name: b"name".to_vec(), target: 5, is_dir: true }),
            Node::Trun { inum: 5, old_size: 10, new_size: 2 },
            Node::Idx { level: 1, branches: vec![(Key::dent(1, b"ab"), loc(3)), (Key::data(2, 9), loc(4))] },
            Node::Mst(MstNode { commit_no: 3, root: Some(loc(1)), ..MstNode::default() }),
            Node::Pad,
        ];
        for n in 0..=4u32 {
            let props: Vec<(u32, u32, u8)> = (0..n).map(|i| (i * 1000, i * 7, i as u8)).collect();
            let bits: Vec<Vec<u64>> = (0..n).map(|i| (0..i + 1).map(|w| w as u64 * 0x0101 + 3).collect()).collect();
            nodes.push(Node::Lpt(LptNode::Pnode { first: 4 * n, props: props.clone(), valid: vec![] }));
            nodes.push(Node::Lpt(LptNode::Pnode { first: 4 * n, props, valid: bits }));
            nodes.push(Node::Lpt(LptNode::Nnode { children: (0..n).map(loc).collect() }));
        }
        for n in &nodes {
            for (sq, g) in [(0u64, G_NONE), (77, G_LAST)] {
                let want = n.encode(sq, g);
                for pre in [0usize, 3, 8, 61] {
                    let mut out = vec![0x5A; pre];
                    n.encode_into(sq, g, &mut out);
                    assert_eq!(&out[..pre], &vec![0x5A; pre][..]);
                    assert_eq!(&out[pre..], &want[..], "{n:?} after {pre} bytes");
                }
                if let Node::Lpt(l) = n {
                    assert_eq!(Node::lpt_encoded_len(l), want.len(), "{n:?}");
                }
            }
        }
        for len in (HDR..=2048).step_by(8) {
            let mut old = Node::Pad.encode(0, G_NONE);
            old.resize(len, 0);
            old[16..20].copy_from_slice(&(len as u32).to_le_bytes());
            let crc = crc32fast::hash(&old[8..len]);
            old[4..8].copy_from_slice(&crc.to_le_bytes());
            assert_eq!(Node::pad(len), old);
            let mut out = vec![1, 2, 3];
            pad_node_into(&mut out, len);
            assert_eq!(&out[3..], &old[..]);
        }
    }

    /// `leaf_key` is `parse_node(..)`'s node's key, whole or truncated.
    #[test]
    fn leaf_key_is_the_parsed_nodes_key() {
        let nodes = vec![
            Node::Ino(InoNode { inum: 5, nlink: 1, size: 99, is_dir: false }),
            Node::Data(DataNode { inum: 5, block: 2, size: 3, compr: 0, payload: vec![1, 2, 3] }),
            Node::Data(DataNode { inum: 6, block: 9, size: 0, compr: 0, payload: vec![] }),
            Node::Dent(DentNode { parent: 1, name: b"xy".to_vec(), target: 5, is_dir: false }),
            Node::Dent(DentNode { parent: 1, name: b"gone".to_vec(), target: 0, is_dir: false }),
            Node::Trun { inum: 5, old_size: 10, new_size: 2 },
            Node::Ref { lnum: 3, offs: 2048, jhead: 1 },
            Node::Cs { commit_no: 4 },
        ];
        for n in nodes {
            let full = n.encode(3, G_NONE);
            let len = u32::from_le_bytes(full[16..20].try_into().unwrap()) as usize;
            // Shortened nodes (length field and CRC fixed up) that the payload
            // decoder may refuse.
            for cut in (HDR..=len).rev().take(40) {
                let mut b = full[..cut].to_vec();
                b[16..20].copy_from_slice(&(cut as u32).to_le_bytes());
                let crc = crc32fast::hash(&b[8..cut]);
                b[4..8].copy_from_slice(&crc.to_le_bytes());
                let h = parse_hdr(&b).unwrap();
                let want = parse_node(&b).ok().and_then(|(_, n)| n.key());
                assert_eq!(leaf_key(&h, &b), want, "{n:?} cut to {cut}");
            }
        }
    }
}
