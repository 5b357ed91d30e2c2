//! Invariant checks (`check_invariants`; run after every operation in
//! strict mode and after every recovery by the power-cut campaign).

use crate::api::BLOCK;
use crate::error::{FsResult, InvariantViolation};
use crate::fs::Fs;
use crate::key::{Key, KIND_DATA, KIND_DENT, KIND_INO};
use crate::node::Node;
use crate::tnc::Br;

fn bad(s: String) -> crate::error::FsError {
    InvariantViolation::new(s).into()
}

impl Fs {
    /// Checks the index shape, every leaf node, the namespace and the LEB
    /// properties. Reads every leaf node (costs NAND reads).
    pub fn check_invariants(&mut self) -> FsResult<()> {
        self.ubi.check_consistency().map_err(|e| bad(format!("UBI: {e}")))?;
        self.check_tree()?;
        self.check_lprops()?;
        self.check_vmap()?;
        self.check_hot()?;
        self.check_leaves()
    }

    fn check_tree(&self) -> FsResult<()> {
        let Some(r) = self.tnc.root() else { return Ok(()) };
        let mut stack = vec![(r, None::<Key>)];
        while let Some((n, lower)) = stack.pop() {
            let z = self.tnc.node(n);
            let entries = self.tnc.entries(n);
            if entries.is_empty() || entries.len() > self.tnc.fanout() {
                return Err(bad(format!("znode with {} entries", entries.len())));
            }
            if entries.windows(2).any(|w| w[0].0 >= w[1].0) || lower.as_ref().is_some_and(|l| entries[0].0 < *l) {
                return Err(bad("znode keys out of order".into()));
            }
            for (k, br) in &entries {
                match (*br, z.level) {
                    (Br::Leaf(_), 0) => {}
                    (Br::Child(c), l) if l > 0 && self.tnc.node(c).level == l - 1 => stack.push((c, Some(k.clone()))),
                    _ => return Err(bad("znode level mismatch".into())),
                }
            }
            if z.dirty && z.loc.is_some() {
                return Err(bad("dirty znode with a location".into()));
            }
        }
        Ok(())
    }

    /// The delayed hot journal: overlay only with the delay on, every hot
    /// bud still flagged as a bud, per-inode counts matching the overlay.
    fn check_hot(&self) -> FsResult<()> {
        let h = &self.hot;
        if !self.cfg.delay_on() && (!h.overlay.is_empty() || !h.buds.is_empty()) {
            return Err(bad("hot overlay without the delayed commit".into()));
        }
        for (l, _, _) in &h.buds {
            if self.lp[*l as usize].flags & crate::fs::F_BUD == 0 {
                return Err(bad(format!("hot bud {l} lost its bud flag")));
            }
        }
        let mut counts = std::collections::HashMap::new();
        for k in h.overlay.keys() {
            *counts.entry(k.inum).or_insert(0u32) += 1;
        }
        if counts.iter().any(|(i, c)| h.inums.get(i) != Some(c)) {
            return Err(bad("hot overlay per-inode counts are wrong".into()));
        }
        Ok(())
    }

    /// The LPT just written, read back from flash from its root, holds every
    /// LEB's in-memory properties (strict mode, after each commit's LPT write).
    pub(crate) fn check_lpt_on_flash(&mut self, root: crate::node::Loc) -> FsResult<()> {
        let mut stack = vec![root];
        let mut seen = 0usize;
        while let Some(loc) = stack.pop() {
            match self.read_node(loc).map_err(|e| bad(format!("LPT node at {loc:?}: {e}")))? {
                Node::Lpt(crate::node::LptNode::Nnode { children }) => stack.extend(children),
                Node::Lpt(crate::node::LptNode::Pnode { first, props, .. }) => {
                    for (i, (free, dirty, flags)) in props.iter().enumerate() {
                        let l = first as usize + i;
                        let p = self.lp[l];
                        if (p.free, p.dirty, p.flags) != (*free, *dirty, *flags) {
                            return Err(bad(format!(
                                "LPT on flash says LEB {l} is {free}/{dirty}/{flags}, memory {p:?}"
                            )));
                        }
                    }
                    seen += props.len();
                }
                _ => return Err(bad(format!("not an LPT node at {loc:?}"))),
            }
        }
        if seen != self.lp.len() {
            return Err(bad(format!("LPT on flash covers {seen} LEBs of {}", self.lp.len())));
        }
        Ok(())
    }

    /// The running totals (LEB properties, znode counts) against a recount.
    fn check_totals(&self) -> FsResult<()> {
        self.lp.check_totals().map_err(bad)?;
        let (r, rs) = (self.reclaimable_bytes(), self.reclaimable_bytes_scan());
        let (e, es) = (self.count_empty(), self.count_empty_scan());
        if (r, e) != (rs, es) {
            return Err(bad(format!("reclaimable/empty {r}/{e} but a scan finds {rs}/{es}")));
        }
        self.tnc.check().map_err(bad)
    }

    fn check_lprops(&self) -> FsResult<()> {
        self.check_totals()?;
        let live = self.live_bytes();
        let leb = self.geo.leb_bytes;

        for l in self.geo.main_first..self.geo.leb_count {
            let p = self.lp[l as usize];
            if p.free + p.dirty > leb {
                return Err(bad(format!("LEB {l}: free {} + dirty {} > {leb}", p.free, p.dirty)));
            }
            let used = leb - p.free - p.dirty;
            if used != live[l as usize] {
                return Err(bad(format!("LEB {l}: used {used} but live {}", live[l as usize])));
            }
        }
        Ok(())
    }

    fn check_leaves(&mut self) -> FsResult<()> {
        let all = self.idx_range(&Key::first(0, 0), &Key::first(u32::MAX, 7));
        let mut sizes = std::collections::HashMap::new();
        for (k, loc) in &all {
            let node = self.read_node(*loc).map_err(|e| bad(format!("{k:?}: {e}")))?;
            if node.key().as_ref() != Some(k) {
                return Err(bad(format!("{k:?} points at a node of another key")));
            }
            if let Node::Ino(i) = &node {
                if self.inodes.get(&i.inum).is_some_and(|c| c != i) {
                    return Err(bad(format!("cached inode {} differs from its node", i.inum)));
                }
                if i.nlink == 0 && !(self.orphans.contains(&i.inum) && self.fds.values().any(|x| *x == i.inum)) {
                    return Err(bad(format!("inode {} has no links and is not an open orphan", i.inum)));
                }
                sizes.insert(i.inum, (i.size, i.is_dir));
            }
        }
        if let Some(k) = self.names.keys().find(|k| all.binary_search_by(|(x, _)| x.cmp(k)).is_err()) {
            return Err(bad(format!("cached entry {k:?} is not in the index")));
        }
        if let Some(i) = self.inodes.keys().find(|i| !sizes.contains_key(*i)) {
            return Err(bad(format!("cached inode {i} is not in the index")));
        }
        for (k, loc) in all {
            match k.kind {
                KIND_INO => {}
                KIND_DATA => match sizes.get(&k.inum) {
                    Some((size, false)) if (k.sub as u64) * BLOCK < *size => {}
                    _ => return Err(bad(format!("data block {} of inode {} beyond EOF or orphaned", k.sub, k.inum))),
                },
                KIND_DENT => self.check_dent(&k, loc, &sizes)?,
                _ => return Err(bad(format!("unknown key kind {}", k.kind))),
            }
        }
        Ok(())
    }

    fn check_dent(
        &mut self,
        k: &Key,
        loc: crate::node::Loc,
        sizes: &std::collections::HashMap<u32, (u64, bool)>,
    ) -> FsResult<()> {
        if !matches!(sizes.get(&k.inum), Some((_, true))) {
            return Err(bad(format!("entry in non-directory {}", k.inum)));
        }
        let Node::Dent(d) = self.read_node(loc)? else { return Err(bad("dent".into())) };
        if self.cached_name(k).is_some_and(|named| named != (d.target, d.is_dir)) {
            return Err(bad(format!("cached entry {k:?} differs from its node")));
        }
        match sizes.get(&d.target) {
            Some((_, dir)) if *dir == d.is_dir && d.target != 0 => Ok(()),
            _ => Err(bad(format!("entry {:?} points at missing inode {}", String::from_utf8_lossy(&d.name), d.target))),
        }
    }
}
