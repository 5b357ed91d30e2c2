//! Node blocks and the NAT (node.c): every inode, direct and indirect node
//! has a node id; the NAT maps it to its current block, so moving a node
//! rewrites only its NAT entry, never its parent. Free node ids of deleted
//! nodes become usable after the next checkpoint (`f2fs_alloc_nid` takes
//! them from the free-nid list built from the checkpointed NAT).

use crate::layout::NAT_ENTRY_PER_BLOCK;
use crate::seg::NONE;
use crate::temp::NodeKind;

/// Block addresses an inode holds itself (`DEF_ADDRS_PER_INODE`).
pub const ADDRS_PER_INODE: u64 = 923;
/// Block addresses per direct node (`DEF_ADDRS_PER_BLOCK`).
pub const ADDRS_PER_BLOCK: u64 = 1018;
/// Node ids per indirect node (`NIDS_PER_BLOCK`).
pub const NIDS_PER_BLOCK: u64 = 1018;
/// The root directory's inode (`root_ino` = 3; 1 and 2 are the node and meta inodes).
pub const ROOT_INO: u32 = 3;

/// Where a file block's address lives (`get_node_path`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Holder {
    /// In the inode itself.
    Inode,
    /// In direct node `k` (0-based, in file order).
    Direct(u32),
}

pub fn holder_of(index: u64) -> Holder {
    if index < ADDRS_PER_INODE {
        Holder::Inode
    } else {
        Holder::Direct(((index - ADDRS_PER_INODE) / ADDRS_PER_BLOCK) as u32)
    }
}

/// First file block of direct node `k`.
pub fn first_block_of(k: u32) -> u64 {
    ADDRS_PER_INODE + k as u64 * ADDRS_PER_BLOCK
}

/// The indirect node (`Some(j)`) a direct node `k` hangs from; `None`:
/// the inode itself (its two direct-node pointers).
pub fn parent_of_direct(k: u32) -> Option<u32> {
    let k = k as u64;
    if k < 2 {
        None
    } else if k < 2 + 2 * NIDS_PER_BLOCK {
        Some(((k - 2) / NIDS_PER_BLOCK) as u32)
    } else {
        Some((2 + (k - 2 - 2 * NIDS_PER_BLOCK) / NIDS_PER_BLOCK) as u32)
    }
}

/// First direct node below indirect node `j`.
pub fn first_direct_of(j: u32) -> u32 {
    (2 + j as u64 * NIDS_PER_BLOCK) as u32
}

/// Largest file in blocks the node tree addresses.
pub const MAX_FILE_BLOCKS: u64 =
    ADDRS_PER_INODE + ADDRS_PER_BLOCK * (2 + 2 * NIDS_PER_BLOCK + NIDS_PER_BLOCK * NIDS_PER_BLOCK);

/// The NAT and the node ids in use.
pub struct NodeMgr {
    /// nid → main-area block (`NONE`: allocated, not yet written).
    pub addr: Vec<u32>,
    /// 0 = free, else a [`NodeKind`].
    pub kind: Vec<u8>,
    /// The inode a node belongs to.
    pub owner: Vec<u32>,
    /// Node page dirty in memory.
    pub dirty: Vec<bool>,
    pub dirty_list: Vec<u32>,
    ndirty: usize,
    /// NAT entries changed since the last checkpoint, and their NAT blocks.
    pub nat_dirty: Vec<bool>,
    pub nat_dirty_list: Vec<u32>,
    free_nids: Vec<u32>,
    pending_free: Vec<u32>,
    next_nid: u32,
    /// Nodes allocated but never written (hold a block reservation).
    pub unwritten: u64,
    pub valid_nodes: u64,
    pub valid_inodes: u64,
}

impl NodeMgr {
    pub fn new(max_nid: u32) -> NodeMgr {
        let n = max_nid as usize;
        NodeMgr {
            addr: vec![NONE; n],
            kind: vec![0; n],
            owner: vec![0; n],
            dirty: vec![false; n],
            dirty_list: Vec::new(),
            ndirty: 0,
            nat_dirty: vec![false; n],
            nat_dirty_list: Vec::new(),
            free_nids: Vec::new(),
            pending_free: Vec::new(),
            next_nid: ROOT_INO,
            unwritten: 0,
            valid_nodes: 0,
            valid_inodes: 0,
        }
    }

    pub fn dirty_count(&self) -> usize {
        self.ndirty
    }

    /// One past the highest node id ever allocated: every nid at or above it
    /// is free, never written (`addr` = `NONE`) and never dirty.
    pub fn nid_limit(&self) -> u32 {
        self.next_nid
    }

    pub fn mark_dirty(&mut self, nid: u32) {
        if nid != 0 && !self.dirty[nid as usize] {
            self.dirty[nid as usize] = true;
            self.ndirty += 1;
            self.dirty_list.push(nid);
        }
    }

    pub fn mark_nat_dirty(&mut self, nid: u32) {
        if !self.nat_dirty[nid as usize] {
            self.nat_dirty[nid as usize] = true;
            self.nat_dirty_list.push(nid);
        }
    }

    /// `f2fs_alloc_nid` + `f2fs_new_node_page`: a new dirty node. `None`:
    /// the NAT is full.
    pub fn alloc(&mut self, kind: NodeKind, owner_ino: Option<u32>) -> Option<u32> {
        let nid = match self.free_nids.pop() {
            Some(n) => n,
            None if (self.next_nid as usize) < self.addr.len() => {
                self.next_nid += 1;
                self.next_nid - 1
            }
            None => return None,
        };
        self.kind[nid as usize] = kind as u8;
        self.owner[nid as usize] = owner_ino.unwrap_or(nid);
        self.addr[nid as usize] = NONE;
        self.unwritten += 1;
        self.valid_nodes += 1;
        if kind == NodeKind::Inode {
            self.valid_inodes += 1;
        }
        self.mark_dirty(nid);
        self.mark_nat_dirty(nid);
        Some(nid)
    }

    /// Frees a node id (`f2fs_truncate_node` → `invalidate`); the caller
    /// invalidates its block. Returns the block it had.
    pub fn free(&mut self, nid: u32) -> u32 {
        let n = nid as usize;
        let old = self.addr[n];
        if old == NONE {
            self.unwritten -= 1;
        }
        if self.kind[n] == NodeKind::Inode as u8 {
            self.valid_inodes -= 1;
        }
        self.valid_nodes -= 1;
        self.kind[n] = 0;
        self.addr[n] = NONE;
        self.clean(nid);
        self.mark_nat_dirty(nid);
        self.pending_free.push(nid);
        old
    }

    /// After a checkpoint: node ids freed before it can be reused; the
    /// NAT entries are clean. Returns the dirty NAT blocks written
    /// (0 when the entries fit the CP's NAT journal, `NAT_JOURNAL_ENTRIES` = 38).
    pub fn checkpoint(&mut self) -> Vec<u32> {
        let mut blocks: Vec<u32> = self.nat_dirty_list.iter().map(|n| n / NAT_ENTRY_PER_BLOCK).collect();
        let journaled = self.nat_dirty_list.len() <= 38;
        for n in self.nat_dirty_list.drain(..) {
            self.nat_dirty[n as usize] = false;
        }
        self.free_nids.extend(self.pending_free.drain(..).rev());
        if journaled {
            return Vec::new();
        }
        blocks.sort_unstable();
        blocks.dedup();
        blocks
    }

    pub fn is_dirty(&self, nid: u32) -> bool {
        self.dirty[nid as usize]
    }

    /// Takes the dirty list (entries no longer dirty are dropped).
    pub fn take_dirty(&mut self) -> Vec<u32> {
        let mut v = std::mem::take(&mut self.dirty_list);
        v.retain(|&n| self.dirty[n as usize]);
        v.sort_unstable();
        v.dedup();
        v
    }

    pub fn clean(&mut self, nid: u32) {
        if self.dirty[nid as usize] {
            self.dirty[nid as usize] = false;
            self.ndirty -= 1;
        }
    }
}
