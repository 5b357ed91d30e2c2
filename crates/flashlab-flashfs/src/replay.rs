//! Journal replay: read the log from the master's log LEB (a commit-start
//! node with the master's commit number, then reference nodes with larger
//! sequence numbers), scan each bud from its reference offset up to the
//! first empty or corrupt spot, keep complete groups only (except in the GC
//! head's buds: GC copies nodes one by one, group flags and all, and UBIFS
//! keeps its GC head ungrouped, `c->jheads[GCHD].grouped = 0`), and apply
//! all nodes in sequence-number order to the index.

use crate::codec::{parse_hdr, parse_node};
use crate::error::FsResult;
use crate::fs::{Fs, F_BUD, GC};
use crate::key::{Key, KIND_DATA, KIND_DENT};
use crate::node::{align, Bad, Hdr, Loc, MstNode, Node, G_IN, G_NONE, HDR};
use flashlab_mtd::Cause;

struct Bud {
    lnum: u32,
    offs: u32,
    /// The journal head the reference node names.
    jhead: u8,
}

impl Fs {
    fn read_leb(&mut self, lnum: u32, cause: Cause) -> FsResult<Vec<u8>> {
        let mut b = vec![0u8; self.geo.leb_bytes as usize];
        self.ubi.leb_read(self.vol, lnum, 0, &mut b, cause)?;
        Ok(b)
    }

    /// Valid nodes of `buf` from `start`; returns them and the end offset
    /// (None when the end is corrupt rather than erased).
    fn scan_nodes(&self, buf: &[u8], start: usize) -> (Vec<(Hdr, Node, usize)>, usize, bool) {
        let io = self.geo.min_io as usize;
        let mut out = Vec::new();
        let mut pos = start;
        while pos + HDR <= buf.len() {
            match parse_hdr(&buf[pos..]) {
                Ok(_) => match parse_node(&buf[pos..]) {
                    Ok((h, n)) => {
                        out.push((h, n, pos));
                        pos += align(h.len as usize);
                    }
                    Err(_) => return (out, pos, false),
                },
                Err(Bad::Zeros) => {
                    let next = (pos + 1).next_multiple_of(io);
                    if buf[pos..next.min(buf.len())].iter().any(|b| *b != 0) {
                        return (out, pos, false);
                    }
                    pos = next;
                }
                Err(Bad::Empty) => {
                    let clean = buf[pos..].iter().all(|b| *b == 0xFF);
                    return (out, pos, clean);
                }
                Err(Bad::Corrupt) => return (out, pos, false),
            }
        }
        let clean = buf[pos.min(buf.len())..].iter().all(|b| *b == 0xFF);
        (out, pos, clean)
    }

    /// Reads the log; returns the buds in log order and the last log LEB.
    fn read_log(&mut self, m: &MstNode) -> FsResult<(Vec<Bud>, u32, u32)> {
        let mut buds = Vec::new();
        let mut lnum = m.log_lnum;
        let mut cs_sqnum = None;
        let mut used = 0;
        let mut last = lnum;
        loop {
            let buf = self.read_leb(lnum, Cause::Mount)?;
            let (nodes, _, clean) = self.scan_nodes(&buf, 0);
            let mut took = false;
            for (h, n, _) in nodes {
                match (n, cs_sqnum) {
                    (Node::Cs { commit_no }, None) if commit_no == m.commit_no => cs_sqnum = Some(h.sqnum),
                    (Node::Ref { lnum: l, offs, jhead }, Some(cs)) if h.sqnum > cs && self.geo.is_main(l) => {
                        buds.push(Bud { lnum: l, offs, jhead });
                    }
                    (Node::Pad, Some(_)) => continue,
                    _ => break,
                }
                took = true;
            }
            if cs_sqnum.is_none() {
                return Err(crate::error::FsError::Corrupt("log has no commit-start node".into()));
            }
            if !took {
                return Ok((buds, last, used));
            }
            used += 1;
            last = lnum;
            let next = self.next_log_lnum(lnum);
            if !clean || used >= self.geo.log_lebs || next == m.log_lnum {
                return Ok((buds, last, used));
            }
            lnum = next;
        }
    }

    /// Replays the journal; returns true if it held any node (buds whose
    /// referenced part is empty, as after a clean unmount, replay nothing).
    pub(crate) fn replay(&mut self, m: &MstNode) -> FsResult<bool> {
        self.lp.update_all(|_, p| p.flags &= !F_BUD);
        let (buds, last_log, used) = self.read_log(m)?;
        self.log = crate::fs::LogPos { first: m.log_lnum, lnum: last_log, offs: self.geo.leb_bytes, used };
        let mut nodes: Vec<(u64, Node, Loc)> = Vec::new();
        for b in &buds {
            self.replay_bud(b, &mut nodes)?;
        }
        nodes.sort_by_key(|(sq, _, _)| *sq);
        let any = !nodes.is_empty();
        // The journal's size counts each bud from its referenced offset
        // (`ubifs_add_bud`), as `clear_buds` does after a commit.
        let mut starts = std::collections::BTreeMap::new();
        for b in &buds {
            starts.entry(b.lnum).or_insert(b.offs);
        }
        self.bud_start_bytes = starts.values().map(|o| *o as u64).sum();
        let mut max_inum = self.highest_inum;
        let mut touched = std::collections::BTreeSet::new();
        for (sq, n, loc) in nodes {
            self.sqnum = self.sqnum.max(sq);
            max_inum = max_inum.max(node_inum(&n));
            if let Node::Data(d) = &n {
                touched.insert(d.inum);
            }
            self.apply(n, loc)?;
        }
        self.highest_inum = max_inum;
        self.drop_dangling()?;
        self.trim_beyond_eof(touched)?;
        self.recompute_dirty();
        self.counters.replayed_buds += buds.len() as u64;
        Ok(any)
    }

    fn replay_bud(&mut self, b: &Bud, out: &mut Vec<(u64, Node, Loc)>) -> FsResult<()> {
        let buf = self.read_leb(b.lnum, Cause::Mount)?;
        let (nodes, end, clean) = self.scan_nodes(&buf, b.offs as usize);
        // A GC copy keeps the group flag of the node it copies but is
        // written alone: the GC head's buds are not grouped.
        let grouped = b.jhead as usize != GC;
        let mut group: Vec<(u64, Node, Loc)> = Vec::new();
        for (h, n, pos) in nodes {
            let loc = Loc { lnum: b.lnum, offs: pos as u32, len: h.len };
            group.push((h.sqnum, n, loc));
            if !grouped || h.group == G_NONE || h.group != G_IN {
                out.append(&mut group);
            }
        }
        let io = self.geo.min_io;
        let written = if clean { (end as u32).next_multiple_of(io) } else { self.geo.leb_bytes };
        let scanned = self.geo.leb_bytes - written.min(self.geo.leb_bytes);
        self.lp.update(b.lnum, |p| {
            p.flags |= F_BUD;
            p.free = if b.offs == 0 { scanned } else { p.free.min(scanned) };
        });

        Ok(())
    }

    /// Applies one replayed node to the index.
    fn apply(&mut self, n: Node, loc: Loc) -> FsResult<()> {
        match n {
            Node::Ino(i) if i.nlink == 0 => self.purge(crate::fs::BASE, i.inum),
            Node::Dent(d) if d.target == 0 => {
                self.tnc.remove(&Key::dent(d.parent, &d.name));
            }
            Node::Trun { inum, new_size, .. } => self.remove_blocks_from(crate::fs::BASE, inum, new_size),
            n => {
                if let Some(k) = n.key() {
                    self.tnc.insert(&k, loc);
                }
            }
        }
        Ok(())
    }

    /// Removes data and entries of inodes that do not exist (their
    /// creation did not reach flash while their data did).
    fn drop_dangling(&mut self) -> FsResult<()> {
        let all = self.tnc.range(&Key::first(0, 0), &Key::first(u32::MAX, 7));
        let mut last_ok: Option<(u32, bool)> = None;
        for (k, _) in all {
            if k.kind != KIND_DATA && k.kind != KIND_DENT {
                continue;
            }
            let ok = match last_ok {
                Some((i, ok)) if i == k.inum => ok,
                _ => self.tnc.lookup(&Key::ino(k.inum)).is_some(),
            };
            last_ok = Some((k.inum, ok));
            if !ok {
                self.tnc.remove(&k);
                self.counters.dropped_dangling += 1;
            }
        }
        Ok(())
    }
}

impl Fs {
    /// Drops whole data blocks past the size of inodes whose data was
    /// replayed (their size update may not have reached flash).
    fn trim_beyond_eof(&mut self, inums: std::collections::BTreeSet<u32>) -> FsResult<()> {
        for inum in inums {
            if self.tnc.lookup(&Key::ino(inum)).is_none() {
                continue;
            }
            let size = self.inode(inum)?.size;
            self.remove_blocks_from(crate::fs::BASE, inum, size);
        }
        Ok(())
    }
}

fn node_inum(n: &Node) -> u32 {
    match n {
        Node::Ino(i) => i.inum,
        Node::Data(d) => d.inum,
        Node::Dent(d) => d.target.max(d.parent),
        Node::Trun { inum, .. } => *inum,
        _ => 0,
    }
}
