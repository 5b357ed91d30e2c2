//! The validity bitmap: live nodes per page of every LEB (seed 000's
//! page-validity bitmap in the LEB properties). Kept in memory at all
//! times; written with the LPT when `lpt_validity_bitmap` is on, and then
//! used by GC to read only the valid pages of a victim.

use crate::error::{FsResult, InvariantViolation};
use crate::fs::Fs;
use crate::node::Loc;
use crate::tnc::Br;

/// Live-node count of every page of every LEB.
#[derive(Debug, Clone, Default)]
pub(crate) struct PageMap {
    pages_per_leb: u32,
    page_bytes: u32,
    counts: Vec<u16>,
}

impl PageMap {
    pub fn new(leb_count: u32, leb_bytes: u32, page_bytes: u32) -> PageMap {
        let ppl = if page_bytes == 0 { 0 } else { leb_bytes.div_ceil(page_bytes) };
        PageMap { pages_per_leb: ppl, page_bytes, counts: vec![0; (leb_count * ppl) as usize] }
    }

    fn span(&self, loc: Loc) -> std::ops::Range<usize> {
        if self.page_bytes == 0 || loc.len == 0 {
            return 0..0;
        }
        let first = loc.offs / self.page_bytes;
        let last = ((loc.offs + loc.aligned_len() - 1) / self.page_bytes).min(self.pages_per_leb - 1);
        let base = (loc.lnum * self.pages_per_leb) as usize;
        let end = (base + last as usize + 1).min(self.counts.len());
        (base + first as usize).min(end)..end
    }

    pub fn add(&mut self, loc: Loc) {
        for i in self.span(loc) {
            self.counts[i] = self.counts[i].saturating_add(1);
        }
    }

    pub fn remove(&mut self, loc: Loc) {
        for i in self.span(loc) {
            self.counts[i] = self.counts[i].saturating_sub(1);
        }
    }

    /// Whether some page that `loc` spans holds no live node. The map
    /// counts every live node on each page it spans (`check_vmap` in strict
    /// mode), so such a node cannot be live.
    pub fn spans_a_dead_page(&self, loc: Loc) -> bool {
        self.span(loc).any(|i| self.counts[i] == 0)
    }

    pub fn clear_leb(&mut self, lnum: u32) {
        let base = (lnum * self.pages_per_leb) as usize;
        let end = (base + self.pages_per_leb as usize).min(self.counts.len());
        if base < end {
            self.counts[base..end].fill(0);
        }
    }

    /// Page validity of one LEB.
    pub fn valid(&self, lnum: u32) -> Vec<bool> {
        let base = (lnum * self.pages_per_leb) as usize;
        let end = (base + self.pages_per_leb as usize).min(self.counts.len());
        self.counts.get(base..end).map_or(Vec::new(), |c| c.iter().map(|x| *x > 0).collect())
    }

    /// The bitmap words of one LEB (bit i = page i valid).
    pub fn words(&self, lnum: u32) -> Vec<u64> {
        let mut w = vec![0u64; Self::words_for(self.pages_per_leb)];
        for (i, v) in self.valid(lnum).into_iter().enumerate() {
            if v {
                w[i / 64] |= 1 << (i % 64);
            }
        }
        w
    }

    pub fn words_for(pages: u32) -> usize {
        pages.div_ceil(64) as usize
    }

    pub fn page_bytes(&self) -> u32 {
        self.page_bytes
    }

    pub fn memory_bytes(&self) -> usize {
        self.counts.len() * 2
    }
}

impl Fs {
    /// Calls `f` with every live node location: current leaves (TNC not
    /// shadowed by the hot overlay, plus the overlay), committed index
    /// nodes, and index nodes obsoleted since the last commit.
    pub(crate) fn for_each_live(&self, mut f: impl FnMut(Loc)) {
        let shadowed = !self.hot.overlay.is_empty();
        for n in self.tnc.znodes() {
            let z = self.tnc.node(n);
            if let Some(l) = z.loc {
                f(l);
            }
            for (j, br) in self.tnc.brs(n).iter().enumerate() {
                if let Br::Leaf(l) = br {
                    if !(shadowed && self.hot.overlay.contains_key(&self.tnc.entry(n, j).0)) {
                        f(*l);
                    }
                }
            }
        }
        self.hot.overlay.values().flatten().for_each(|l| f(*l));
        self.tnc.pending_obsolete.iter().for_each(|l| f(*l));
    }

    /// Rebuilds the page map from the live locations.
    pub(crate) fn rebuild_vmap(&mut self) {
        let mut m = PageMap::new(self.geo.leb_count, self.geo.leb_bytes, self.geo.min_io);
        self.for_each_live(|l| {
            if (l.lnum as usize) < self.lp.len() {
                m.add(l)
            }
        });
        self.vmap = m;
    }

    /// The kept page map must equal one rebuilt from the index.
    pub(crate) fn check_vmap(&self) -> FsResult<()> {
        let mut m = PageMap::new(self.geo.leb_count, self.geo.leb_bytes, self.geo.min_io);
        self.for_each_live(|l| {
            if (l.lnum as usize) < self.lp.len() {
                m.add(l)
            }
        });
        for l in self.geo.main_first..self.geo.leb_count {
            if m.valid(l) != self.vmap.valid(l) {
                return Err(InvariantViolation::new(format!("LEB {l}: validity bitmap differs from the index")).into());
            }
        }
        Ok(())
    }

    /// Page validity bitmap of LEB `lnum` (bit i = page i holds a live node).
    pub fn validity_bitmap(&self, lnum: u32) -> Vec<u64> {
        self.vmap.words(lnum)
    }

    /// Runs of valid pages among the first `written` bytes: (offset, length).
    pub(crate) fn valid_runs(&self, lnum: u32, written: u32) -> Vec<(u32, u32)> {
        let pb = self.vmap.page_bytes().max(1);
        let pages = written.div_ceil(pb) as usize;
        let mut runs: Vec<(u32, u32)> = Vec::new();
        for (i, v) in self.vmap.valid(lnum).into_iter().take(pages).enumerate() {
            if !v {
                continue;
            }
            let offs = i as u32 * pb;
            let len = pb.min(written - offs);
            match runs.last_mut() {
                Some(r) if r.0 + r.1 == offs => r.1 += len,
                _ => runs.push((offs, len)),
            }
        }
        runs
    }
}
