//! Names: path lookup and directory changes (fs/ext4/namei.c, linear
//! directories: `ext4_add_entry` puts an entry in the first block with room
//! and appends a block when none has, `ext4_delete_entry` leaves the block).

use crate::error::Ext4Result;
use crate::fs::Ext4;
use crate::inode::{Dir, Inode};
use crate::layout::{BLOCK, ROOT_INO};
use flashlab_vfs::{DirEntry, Errno};

/// Bytes of a directory block usable by entries (less the checksum tail).
const DIR_BLOCK_ROOM: u32 = BLOCK as u32 - 12;
pub const NAME_MAX: usize = 255;

/// `EXT4_DIR_REC_LEN`: an entry's bytes.
fn rec_len(name: &str) -> u32 {
    (8 + name.len() as u32 + 3) & !3
}

/// The components of an absolute path.
fn components(path: &str) -> Ext4Result<Vec<&str>> {
    if !path.starts_with('/') {
        return Err(Errno::EINVAL.into());
    }
    let parts: Vec<&str> = path.split('/').filter(|c| !c.is_empty()).collect();
    if parts.iter().any(|c| c.len() > NAME_MAX) {
        return Err(Errno::ENAMETOOLONG.into());
    }
    if parts.iter().any(|c| *c == "." || *c == "..") {
        return Err(Errno::EINVAL.into());
    }
    Ok(parts)
}

impl Ext4 {
    fn dir_of(&self, inum: u32) -> Ext4Result<&Dir> {
        self.inode(inum)?.dir.as_deref().ok_or(Errno::ENOTDIR.into())
    }

    fn dir_mut(&mut self, inum: u32) -> Ext4Result<&mut Dir> {
        self.inode_mut(inum)?.dir.as_deref_mut().ok_or(Errno::ENOTDIR.into())
    }

    /// Inode of a path.
    pub(crate) fn lookup(&self, path: &str) -> Ext4Result<u32> {
        let mut cur = ROOT_INO;
        for c in components(path)? {
            cur = self.dir_of(cur)?.entries.get(c).ok_or(Errno::ENOENT)?.0;
        }
        Ok(cur)
    }

    /// (parent directory, last name) of a path that is not `/`.
    pub(crate) fn parent_of<'p>(&self, path: &'p str) -> Ext4Result<(u32, &'p str)> {
        let parts = components(path)?;
        let (last, dirs) = parts.split_last().ok_or(Errno::EEXIST)?;
        let mut cur = ROOT_INO;
        for c in dirs {
            cur = self.dir_of(cur)?.entries.get(*c).ok_or(Errno::ENOENT)?.0;
        }
        self.dir_of(cur)?;
        Ok((cur, last))
    }

    /// Adds `name → inum` to directory `dir`, appending a block if none has room.
    pub(crate) fn dir_insert_entry(&mut self, dir: u32, name: &str, inum: u32) -> Ext4Result<()> {
        let need = rec_len(name);
        let slot = self.dir_of(dir)?.used.iter().position(|&u| u + need <= DIR_BLOCK_ROOM);
        let idx = match slot {
            Some(i) => i,
            None => self.dir_append_block(dir)?,
        };
        let d = self.dir_mut(dir)?;
        d.used[idx] += need;
        d.entries.insert(name.to_string(), (inum, idx as u32));
        let b = self.inode(dir)?.map(idx as u64).ok_or(Errno::EIO)?;
        self.j.dirty(b);
        self.touch_inode(dir)?;
        Ok(())
    }

    /// `ext4_append`: one more directory block, allocated at once (no
    /// delayed allocation for directories) at `ext4_ext_find_goal`'s goal.
    fn dir_append_block(&mut self, dir: u32) -> Ext4Result<usize> {
        let idx = self.dir_of(dir)?.used.len() as u64;
        let goal = self.file_goal(dir, idx);
        let (p, _) = self.alloc_run(goal, 1)?;
        self.meta_new(p);
        let ino = self.inode_mut(dir)?;
        let at = ino.insert(idx, p, 1);
        ino.size = (idx + 1) * BLOCK;
        if let Some(d) = ino.dir.as_deref_mut() {
            d.used.push(0);
        }
        self.fix_tree(dir, at)?;
        self.j.dirty(p);
        Ok(idx as usize)
    }

    /// Removes `name` from directory `dir`.
    fn dir_remove_entry(&mut self, dir: u32, name: &str) -> Ext4Result<u32> {
        let d = self.dir_mut(dir)?;
        let (inum, idx) = d.entries.remove(name).ok_or(Errno::ENOENT)?;
        d.used[idx as usize] -= rec_len(name);
        let b = self.inode(dir)?.map(idx as u64).ok_or(Errno::EIO)?;
        self.j.dirty(b);
        self.touch_inode(dir)?;
        Ok(inum)
    }

    /// `ext4_create` / `ext4_mkdir`: a new inode (placed by Orlov or next
    /// to its parent), its entry, and for a directory its first block.
    pub(crate) fn new_inode(&mut self, path: &str, is_dir: bool) -> Ext4Result<u32> {
        let (parent, name) = self.parent_of(path)?;
        if self.dir_of(parent)?.entries.contains_key(name) {
            return Err(Errno::EEXIST.into());
        }
        let inum = self.alloc_inode(parent, is_dir, name)?;
        let mut ino = Inode { is_dir, nlink: 1, ..Default::default() };
        if is_dir {
            ino.nlink = 2;
            ino.dir = Some(Box::default());
        }
        self.inodes.insert(inum, ino);
        self.touch_inode(inum)?;
        if is_dir {
            let r = self.dir_append_block(inum);
            if let Err(e) = r {
                self.inodes.remove(&inum);
                self.free_inode(inum, true)?;
                return Err(e);
            }
            if let Some(d) = self.inode_mut(inum)?.dir.as_deref_mut() {
                d.used[0] = 24;
            }
            self.inode_mut(parent)?.nlink += 1;
        }
        if let Err(e) = self.dir_insert_entry(parent, name, inum) {
            self.drop_inode(inum)?;
            if is_dir {
                self.inode_mut(parent)?.nlink -= 1;
            }
            return Err(e);
        }
        Ok(inum)
    }

    /// Frees an inode and every block it holds (`ext4_evict_inode`).
    pub(crate) fn drop_inode(&mut self, inum: u32) -> Ext4Result<()> {
        self.truncate_blocks(inum, 0)?;
        let ino = self.inodes.remove(&inum).ok_or(Errno::ENOENT)?;
        if self.pending.inum == inum && !self.pending.tags.is_empty() {
            self.pending.tags.clear();
            self.pending.bytes.clear();
        }
        self.free_inode(inum, ino.is_dir)
    }

    /// One link less; the inode goes with the last link unless open
    /// (then it waits on the orphan list for the last close).
    fn unlink_inode(&mut self, inum: u32) -> Ext4Result<()> {
        let ino = self.inode_mut(inum)?;
        ino.nlink = ino.nlink.saturating_sub(if ino.is_dir { 2 } else { 1 });
        let (gone, open) = (ino.nlink == 0, ino.open > 0);
        self.touch_inode(inum)?;
        if gone && open {
            self.touch_super();
        } else if gone {
            self.drop_inode(inum)?;
        }
        Ok(())
    }

    pub(crate) fn do_unlink(&mut self, path: &str) -> Ext4Result<()> {
        let (parent, name) = self.parent_of(path)?;
        let inum = self.dir_of(parent)?.entries.get(name).ok_or(Errno::ENOENT)?.0;
        if self.inode(inum)?.is_dir {
            return Err(Errno::EISDIR.into());
        }
        self.dir_remove_entry(parent, name)?;
        self.unlink_inode(inum)
    }

    pub(crate) fn do_rmdir(&mut self, path: &str) -> Ext4Result<()> {
        let (parent, name) = self.parent_of(path)?;
        let inum = self.dir_of(parent)?.entries.get(name).ok_or(Errno::ENOENT)?.0;
        if !self.dir_of(inum)?.entries.is_empty() {
            return Err(Errno::ENOTEMPTY.into());
        }
        self.dir_remove_entry(parent, name)?;
        self.inode_mut(parent)?.nlink -= 1;
        self.unlink_inode(inum)
    }

    /// Is `a` the parent directory of `path` or one of its ancestors?
    fn is_ancestor(&self, a: u32, path: &str) -> Ext4Result<bool> {
        let mut cur = ROOT_INO;
        if cur == a {
            return Ok(true);
        }
        let parts = components(path)?;
        for c in &parts[..parts.len().saturating_sub(1)] {
            cur = self.dir_of(cur)?.entries.get(*c).ok_or(Errno::ENOENT)?.0;
            if cur == a {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// `ext4_rename`: the target (if any) is replaced.
    pub(crate) fn do_rename(&mut self, from: &str, to: &str) -> Ext4Result<()> {
        let (fp, fname) = self.parent_of(from)?;
        let src = self.dir_of(fp)?.entries.get(fname).ok_or(Errno::ENOENT)?.0;
        let (tp, tname) = self.parent_of(to)?;
        let is_dir = self.inode(src)?.is_dir;
        if is_dir && self.is_ancestor(src, to)? {
            return Err(Errno::EINVAL.into());
        }
        if let Some(&(dst, _)) = self.dir_of(tp)?.entries.get(tname) {
            if dst == src {
                return Ok(());
            }
            let dst_dir = self.inode(dst)?.is_dir;
            match (is_dir, dst_dir) {
                (true, false) => return Err(Errno::ENOTDIR.into()),
                (false, true) => return Err(Errno::EISDIR.into()),
                (true, true) if !self.dir_of(dst)?.entries.is_empty() => return Err(Errno::ENOTEMPTY.into()),
                _ => {}
            }
            self.dir_remove_entry(tp, tname)?;
            if dst_dir {
                self.inode_mut(tp)?.nlink -= 1;
            }
            self.unlink_inode(dst)?;
        }
        self.dir_remove_entry(fp, fname)?;
        self.dir_insert_entry(tp, tname, src)?;
        self.touch_inode(src)?;
        if is_dir && fp != tp {
            // ".." of the moved directory changes (its first block).
            let b = self.inode(src)?.map(0).ok_or(crate::error::Ext4Error::Errno(Errno::EIO))?;
            self.j.dirty(b);
            self.inode_mut(fp)?.nlink -= 1;
            self.inode_mut(tp)?.nlink += 1;
        }
        Ok(())
    }

    pub(crate) fn do_readdir(&self, path: &str) -> Ext4Result<Vec<DirEntry>> {
        let inum = self.lookup(path)?;
        let d = self.dir_of(inum)?;
        let mut v: Vec<DirEntry> = d
            .entries
            .iter()
            .map(|(n, &(i, _))| DirEntry {
                name: n.clone(),
                inum: i,
                is_dir: self.inodes.get(&i).is_some_and(|x| x.is_dir),
            })
            .collect();
        v.sort();
        Ok(v)
    }
}
