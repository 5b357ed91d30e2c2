//! On-flash nodes. Every node starts with a 24-byte common header:
//!
//! `0 magic u32 | 4 crc u32 (over bytes 8..len) | 8 sqnum u64 | 16 len u32 |
//! 20 type u8 | 21 group u8 | 22 pad u16`, little-endian; nodes start on
//! 8-byte boundaries. `group` marks nodes written as one atomic group
//! (1 = more follow, 2 = last); replay applies a group only if complete.

use crate::key::Key;

pub const NODE_MAGIC: u32 = 0x0610_1831;
pub const HDR: usize = 24;
/// Node sizes of UBIFS (ubifs-media.h): UBIFS_INO_NODE_SZ (an inode
/// without inline data), UBIFS_DENT_NODE_SZ (plus the name and its NUL),
/// UBIFS_DATA_NODE_SZ (plus the data), UBIFS_TRUN_NODE_SZ.
pub const INO_NODE_BYTES: usize = 160;
pub const DENT_NODE_BYTES: usize = 56;
pub const DATA_NODE_BYTES: usize = 48;
pub const TRUN_NODE_BYTES: usize = 56;
pub const ALIGN: usize = 8;

pub const T_INO: u8 = 0;
pub const T_DATA: u8 = 1;
pub const T_DENT: u8 = 2;
pub const T_TRUN: u8 = 3;
pub const T_PAD: u8 = 4;
pub const T_SB: u8 = 5;
pub const T_MST: u8 = 6;
pub const T_REF: u8 = 7;
pub const T_IDX: u8 = 8;
pub const T_CS: u8 = 9;
pub const T_ORPH: u8 = 10;
pub const T_LPT: u8 = 11;

/// Flag in a data node's compression byte: the payload was written as
/// zeros (`elide_payload`); only its length is meaningful.
pub const COMPR_ELIDED: u8 = 0x80;

pub const G_NONE: u8 = 0;

pub const G_IN: u8 = 1;
pub const G_LAST: u8 = 2;

/// Where a node lives: LEB, offset, length.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Loc {
    pub lnum: u32,
    pub offs: u32,
    pub len: u32,
}

impl Loc {
    /// Bytes the node occupies including alignment.
    pub fn aligned_len(&self) -> u32 {
        align(self.len as usize) as u32
    }
}

/// Rounds up to the node alignment.
pub fn align(n: usize) -> usize {
    n.next_multiple_of(ALIGN)
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InoNode {
    pub inum: u32,
    pub nlink: u32,
    pub size: u64,
    pub is_dir: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DataNode {
    pub inum: u32,
    pub block: u32,
    /// Uncompressed bytes (at most 4096).
    pub size: u32,
    pub compr: u8,
    pub payload: Vec<u8>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DentNode {
    pub parent: u32,
    pub name: Vec<u8>,
    /// 0 = deletion entry.
    pub target: u32,
    pub is_dir: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SbNode {
    pub leb_bytes: u32,
    pub leb_count: u32,
    pub min_io: u32,
    pub fanout: u32,
    pub log_lebs: u32,
    pub lpt_lebs: u32,
    pub compr: u8,
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct MstNode {
    pub commit_no: u64,
    pub highest_inum: u32,
    pub root: Option<Loc>,
    pub lpt_root: Option<Loc>,
    pub orph: Option<Loc>,
    pub log_lnum: u32,
    pub idx_head: u32,
    pub clean: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LptNode {
    /// Properties (free, dirty, flags) of LEBs `first..first+n`, and (when
    /// the validity bitmap is on) each LEB's page-validity bitmap words.
    Pnode { first: u32, props: Vec<(u32, u32, u8)>, valid: Vec<Vec<u64>> },
    /// Up to four children.
    Nnode { children: Vec<Loc> },
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Node {
    Ino(InoNode),
    Data(DataNode),
    Dent(DentNode),
    Trun { inum: u32, old_size: u64, new_size: u64 },
    Pad,
    Sb(SbNode),
    Mst(MstNode),
    Ref { lnum: u32, offs: u32, jhead: u8 },
    Idx { level: u8, branches: Vec<(Key, Loc)> },
    Cs { commit_no: u64 },
    Orph { commit_no: u64, inums: Vec<u32> },
    Lpt(LptNode),
}

impl Node {
    /// Inodes a journal node belongs to (its inode; a directory entry's
    /// directory and target), as UBIFS's journal functions register them
    /// with `ubifs_wbuf_add_ino_nolock`. 0 = none.
    pub fn inums(&self) -> [u32; 2] {
        match self {
            Node::Ino(i) => [i.inum, 0],
            Node::Data(d) => [d.inum, 0],
            Node::Dent(d) => [d.parent, d.target],
            Node::Trun { inum, .. } => [*inum, 0],
            _ => [0, 0],
        }
    }
}

/// A parsed common header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hdr {
    pub sqnum: u64,
    pub len: u32,
    pub ntype: u8,
    pub group: u8,
}

/// Why bytes do not hold a node.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bad {
    /// Erased flash (0xFF).
    Empty,
    /// Zero padding.
    Zeros,
    /// Anything else (bad magic, length or CRC).
    Corrupt,
}
