//! What the model wrote and why (the fs bench's causes: data, node or
//! metadata, checkpoint, cleaning).

use serde::Serialize;

/// Counters of the F2FS model (4 KiB blocks unless named otherwise).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct F2fsStats {
    /// Data blocks written by writeback, in-place updates and dentry
    /// blocks included (not cleaning).
    pub data_blocks_written: u64,
    /// Of those, rewritten in place (IPU).
    pub ipu_blocks_written: u64,
    /// Of those, directory-entry blocks.
    pub dentry_blocks_written: u64,
    /// Node blocks (inodes, direct and indirect nodes) written.
    pub node_blocks_written: u64,
    /// Of those, written by fsync with the fsync mark (roll-forward).
    pub fsync_node_blocks_written: u64,
    /// Segment-summary blocks written when a log leaves a segment.
    pub ssa_blocks_written: u64,
    /// Summary blocks read when a log recycles a segment (SSR).
    pub ssa_blocks_read: u64,
    /// CP packs and the NAT and SIT blocks a checkpoint writes.
    pub checkpoint_blocks_written: u64,
    /// Valid blocks cleaning moved (data, node).
    pub gc_data_blocks_moved: u64,
    pub gc_node_blocks_moved: u64,
    /// Blocks cleaning read.
    pub gc_blocks_read: u64,
    /// Data blocks read for the file API.
    pub data_blocks_read: u64,
    /// Node blocks read on a cold cache (inodes, direct and indirect nodes).
    pub node_blocks_read: u64,
    /// NAT blocks read on a cold cache.
    pub nat_blocks_read: u64,
    /// Dentry blocks read on a cold cache.
    pub dentry_blocks_read: u64,
    /// Blocks mkfs wrote and TRIMmed (not in the counts above).
    pub mkfs_blocks_written: u64,
    pub checkpoints: u64,
    pub checkpoints_sync: u64,
    pub checkpoints_fsync: u64,
    pub checkpoints_interval: u64,
    pub checkpoints_gc: u64,
    /// fsyncs served by roll-forward (data + direct nodes, no checkpoint).
    pub roll_forward_fsyncs: u64,
    pub fg_gc_sections: u64,
    pub bg_gc_sections: u64,
    /// Segments a log took from the free list (LFS) or recycled (SSR).
    pub lfs_segments: u64,
    pub ssr_segments: u64,
    /// Blocks TRIMmed at checkpoints (freed segments).
    pub discarded_blocks: u64,
    /// Calls refused with ENOSPC.
    pub enospc: u64,
}

impl F2fsStats {
    /// Every block the file system wrote after mkfs.
    pub fn fs_blocks_written(&self) -> u64 {
        self.data_blocks_written
            + self.node_blocks_written
            + self.ssa_blocks_written
            + self.checkpoint_blocks_written
            + self.gc_data_blocks_moved
            + self.gc_node_blocks_moved
    }

    /// Node and other metadata blocks (nodes, SSA).
    pub fn node_or_metadata_blocks(&self) -> u64 {
        self.node_blocks_written + self.ssa_blocks_written
    }

    /// Blocks written by cleaning.
    pub fn cleaning_blocks(&self) -> u64 {
        self.gc_data_blocks_moved + self.gc_node_blocks_moved
    }
}
