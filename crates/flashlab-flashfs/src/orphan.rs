//! Orphans: inodes unlinked while open. Their numbers are written to the
//! orphan area at every commit; after an unclean mount every listed inode
//! that still has no links is deleted.

use crate::error::FsResult;
use crate::fs::Fs;
use crate::key::Key;
use crate::node::Node;

impl Fs {
    /// Deletes the inodes listed in the orphan area. Returns true if any.
    pub(crate) fn process_orphans(&mut self) -> FsResult<bool> {
        let list: Vec<u32> = std::mem::take(&mut self.orphans).into_iter().collect();
        let mut any = false;
        for inum in list {
            let Some(loc) = self.idx_lookup(&Key::ino(inum)) else { continue };
            if let Node::Ino(i) = self.read_node(loc)? {
                if i.nlink == 0 {
                    self.purge(crate::fs::BASE, inum);
                    self.counters.orphans_deleted += 1;
                    any = true;
                }
            }
        }
        if any {
            self.recompute_dirty();
        }
        Ok(any)
    }
}
