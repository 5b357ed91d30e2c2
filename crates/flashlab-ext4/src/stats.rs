//! What the file system wrote and read, by cause.

use serde::Serialize;

/// Why the file system sent a request to the SSD.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Cause {
    /// File data written in place at writeback.
    Data,
    /// Journaled metadata written home by the flusher after it expired.
    Metadata,
    /// Journal blocks: revoke, descriptor, metadata copies, commit.
    Journal,
    /// Metadata written home (and the journal superblock) by a checkpoint.
    Checkpoint,
    /// Online discard of freed extents.
    Discard,
    /// File data read.
    Read,
    /// Metadata read on a cold cache (bitmaps, inode tables, directory and
    /// extent-tree blocks).
    MetaRead,
}

/// Counters of the ext4 model (blocks are 4 KiB).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Ext4Stats {
    pub data_blocks_written: u64,
    pub metadata_blocks_written: u64,
    pub journal_blocks_written: u64,
    pub checkpoint_blocks_written: u64,
    pub discarded_blocks: u64,
    pub data_blocks_read: u64,
    /// Metadata blocks read (cold buffer cache).
    pub metadata_blocks_read: u64,
    pub metadata_read_requests: u64,
    pub write_requests: u64,
    pub device_flushes: u64,
    pub commits: u64,
    /// Commits forced by fsync, sync or a full transaction.
    pub commits_forced: u64,
    pub checkpoints: u64,
    pub revoke_records: u64,
    pub blocks_allocated: u64,
    pub blocks_freed: u64,
    /// Extents handed out by the block allocator.
    pub allocations: u64,
    /// Locality-group preallocations made for small files (512 blocks each).
    pub group_preallocations: u64,
}

impl Ext4Stats {
    /// Every block the file system wrote.
    pub fn blocks_written(&self) -> u64 {
        self.data_blocks_written
            + self.metadata_blocks_written
            + self.journal_blocks_written
            + self.checkpoint_blocks_written
    }

    pub(crate) fn count(&mut self, cause: Cause, blocks: u64) {
        match cause {
            Cause::Data => self.data_blocks_written += blocks,
            Cause::Metadata => self.metadata_blocks_written += blocks,
            Cause::Journal => self.journal_blocks_written += blocks,
            Cause::Checkpoint => self.checkpoint_blocks_written += blocks,
            Cause::Discard => self.discarded_blocks += blocks,
            Cause::Read => self.data_blocks_read += blocks,
            Cause::MetaRead => {
                self.metadata_blocks_read += blocks;
                self.metadata_read_requests += 1;
            }
        }
        if !matches!(cause, Cause::Discard | Cause::Read | Cause::MetaRead) {
            self.write_requests += 1;
        }
    }
}
