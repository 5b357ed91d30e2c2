//! Directory entries found without a flash read: the VFS dentry cache above
//! UBIFS and UBIFS's own leaf node cache (LNC, fs/ubifs/tnc.c), and what
//! `drop_caches` takes from them and from the inode cache.
//!
//! In Linux a path walk finds a cached dentry in the dcache and never calls
//! `ubifs_lookup`; below it UBIFS keeps the directory-entry nodes it read in
//! the index's zbranches (`zbr->leaf`): `tnc_read_node_nm` — used by
//! `ubifs_tnc_lookup_nm` (lookups) and `ubifs_tnc_next_ent` (readdir) —
//! answers from there and adds what it reads (`lnc_add`), and `lnc_free`
//! drops an entry when its zbranch is replaced or deleted (a new location,
//! GC's move, an unlink). Either way the entry costs no flash read, so the
//! model keeps one map for both: an entry is added when a lookup or a readdir
//! reads it and when an operation makes it (`d_instantiate` on create and
//! mkdir, `d_move` on rename), and forgotten whenever its index key changes
//! ([`Fs::idx_set`], [`Fs::idx_del`]). It starts empty at every mount.
//!
//! `drop_caches` (`echo 3 > /proc/sys/vm/drop_caches`, `drop_slab`) frees
//! every unused dentry and inode, and UBIFS's shrinker (`ubifs_shrink_scan`)
//! frees clean znodes with their LNC entries. Kept: open files' inodes (open
//! orphans among them) and dentries, the directories above them (a dentry
//! pins its parent), and the root (held by the superblock). The block
//! device's page cache under block2mtd is emptied too. What still
//! differs: the model keeps the whole index in memory after a drop, so an
//! index lookup never reads a znode from flash (docs/flashfs.md).

use crate::fs::Fs;
use crate::key::{Key, KeyHasher, KIND_DENT};
use std::collections::{HashMap, HashSet};
use std::hash::BuildHasherDefault;

/// A cached entry: the inode it names and whether that is a directory.
pub(crate) type Named = (u32, bool);

/// Cached directory entries by index key (the name is in the key).
pub(crate) type NameCache = HashMap<Key, Named, BuildHasherDefault<KeyHasher>>;

/// The root directory's inode number.
const ROOT_INUM: u32 = 1;

impl Fs {
    /// The cached entry of `key`, if any.
    pub(crate) fn cached_name(&self, key: &Key) -> Option<Named> {
        self.names.get(key).copied()
    }

    /// Caches the entry `key` → `named` (read from flash or just made).
    pub(crate) fn cache_name(&mut self, key: &Key, named: Named) {
        self.names.insert(key.clone(), named);
    }

    /// Forgets `key`'s entry: its zbranch changed (`lnc_free`).
    pub(crate) fn forget_name(&mut self, key: &Key) {
        if key.kind == KIND_DENT && !self.names.is_empty() {
            self.names.remove(key);
        }
    }

    /// `drop_caches`: every entry and inode not in use leaves the caches.
    pub(crate) fn drop_unused_caches(&mut self) {
        let mut keep: HashSet<u32> = self.fds.values().copied().chain(self.orphans.iter().copied()).collect();
        keep.insert(ROOT_INUM);
        // A kept entry's directory is kept too (a dentry pins its parent);
        // repeat until no new directory comes in (one pass a level).
        loop {
            let before = keep.len();
            let parents: Vec<u32> =
                self.names.iter().filter(|(_, (t, _))| keep.contains(t)).map(|(k, _)| k.inum).collect();
            keep.extend(parents);
            if keep.len() == before {
                break;
            }
        }
        self.names.retain(|_, (t, _)| keep.contains(t));
        self.inodes.retain(|i, _| keep.contains(i));
        // The block device's pages under block2mtd go too.
        self.ubi.nand_mut().drop_caches();
    }

    /// Host memory of the cached entries: a dentry (≈ 192 bytes in Linux)
    /// and the node's name.
    pub(crate) fn names_memory_bytes(&self) -> usize {
        self.names.keys().map(|k| 192 + k.name.len()).sum()
    }
}
