//! The mounted file system's state and small shared helpers.

use crate::error::{FsError, FsResult};
use crate::layout::FsGeo;
use crate::node::{align, InoNode, Loc, Node};
use crate::settings::FsSettings;
use crate::stats::FsCounters;
use crate::tnc::Tnc;
use flashlab_mtd::Cause;
use flashlab_ubi::Ubi;
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// LEB is a bud of the current journal.
pub const F_BUD: u8 = 1;
/// LEB holds (or held) index nodes.
pub const F_INDEX: u8 = 2;
/// LEB is being garbage-collected (never handed out meanwhile).
pub const F_TAKEN: u8 = 4;

/// Journal heads.
pub const BASE: usize = 0;
pub const DATA: usize = 1;
pub const GC: usize = 2;
/// Hot metadata head (hot/cold journals).
pub const HOT_BASE: usize = 3;
/// Hot data head (hot/cold journals, delayed hot commit).
pub const HOT_DATA: usize = 4;
pub const HEADS: usize = 5;

/// Properties of one LEB.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Lprops {
    /// Unwritten bytes at the end of the LEB.
    pub free: u32,
    /// Obsolete bytes (including padding).
    pub dirty: u32,
    pub flags: u8,
}

/// An open journal head with its write buffer.
#[derive(Debug, Clone, Default)]
pub struct Head {
    pub lnum: Option<u32>,
    /// Bytes appended but not yet programmed, starting at `wbuf_offs`.
    pub wbuf: Vec<u8>,
    pub wbuf_offs: u32,
    /// Inodes with nodes in the write buffer (UBIFS's `wbuf->inodes`,
    /// filled by `ubifs_wbuf_add_ino_nolock`); cleared when it empties.
    pub inos: Vec<u32>,
    /// Simulated time at which the write buffer last became non-empty
    /// (the start of UBIFS's write-buffer timer, `new_wbuf_timer_nolock`).
    pub dirty_since_ns: Option<u64>,
}

impl Head {
    pub fn end(&self) -> u32 {
        self.wbuf_offs + self.wbuf.len() as u32
    }
}

/// Position of the log head.
#[derive(Debug, Clone, Copy, Default)]
pub struct LogPos {
    /// First log LEB of the current commit (holds the CS node).
    pub first: u32,
    pub lnum: u32,
    pub offs: u32,
    pub used: u32,
}

pub use flashlab_vfs::Fd;

/// A mounted flashfs.
pub struct Fs {
    pub(crate) ubi: Ubi,
    pub(crate) vol: u32,
    pub(crate) cfg: FsSettings,
    pub(crate) geo: FsGeo,
    pub(crate) tnc: Tnc,
    pub(crate) lp: crate::lprops::LpTable,
    pub(crate) heads: [Head; HEADS],
    pub(crate) idx_head: Head,
    pub(crate) log: LogPos,
    pub(crate) commit_no: u64,
    pub(crate) sqnum: u64,
    pub(crate) highest_inum: u32,
    pub(crate) lpt_area: u32,
    /// Where the LPT's nodes are and where the next incremental commit
    /// appends (none after mount: the next commit rewrites the whole tree).
    pub(crate) lpt: crate::lprops::LptPlace,
    pub(crate) orph_area: u32,
    /// The orphan list this mount's commits last wrote and where (reused by
    /// later commits while the list is unchanged).
    pub(crate) orph_written: Option<(Loc, Vec<u32>)>,
    /// The master node on flash (UBIFS's `c->mst_node`): unmount and mount
    /// rewrite it with the clean flag changed.
    pub(crate) mst: crate::node::MstNode,
    pub(crate) master_next: [u32; 2],
    pub(crate) orphans: BTreeSet<u32>,
    pub(crate) fds: BTreeMap<Fd, u32>,
    pub(crate) next_fd: u64,
    /// Cached inodes (looked up on every write; nothing iterates them).
    pub(crate) inodes: HashMap<u32, InoNode, std::hash::BuildHasherDefault<crate::key::KeyHasher>>,
    /// Directory entries known without a read (the dcache and UBIFS's LNC: `names.rs`).
    pub(crate) names: crate::names::NameCache,
    pub(crate) in_commit: bool,
    pub(crate) broken: bool,
    /// `Fs::mount` is running (UBIFS's `c->mounting`): data nodes read then
    /// have their CRC checked whatever `chk_data_crc` says.
    pub(crate) mounting: bool,
    pub(crate) counters: FsCounters,
    /// Hot/cold classification and the delayed hot journal.
    pub(crate) hot: crate::hot::HotState,
    /// Live nodes per page of every LEB (the validity bitmap).
    pub(crate) vmap: crate::vmap::PageMap,
    /// The LPT carries the validity bitmaps (setting on and room for them).
    pub(crate) lpt_bitmap: bool,
    /// Simulated time (ns), set by the caller through [`Fs::advance_to`].
    pub(crate) now_ns: u64,
    /// A background commit was requested (`ubifs_request_bg_commit`).
    pub(crate) bg_commit: bool,
    /// Sum of the start offsets of the current buds (see `bud_bytes`).
    pub(crate) bud_start_bytes: u64,
    /// Space budgeted for dirty pages of the page cache above
    /// (`ubifs_budget_space`'s outstanding data growth).
    pub(crate) reserved_bytes: u64,
    /// The last space request failed (UBIFS's `c->bi.nospace`).
    pub(crate) nospace: bool,
    /// Scratch buffer for the data nodes writes read (kept between calls so
    /// that a read costs no allocation; contents meaningless between calls).
    pub(crate) node_buf: Vec<u8>,
    /// Scratch buffer for the LEBs GC reads whole (as `node_buf`).
    pub(crate) gc_buf: Vec<u8>,
}

impl Fs {
    pub(crate) fn new_state(ubi: Ubi, vol: u32, cfg: FsSettings, geo: FsGeo) -> Fs {
        let fanout = cfg.fanout as usize;
        let vmap = crate::vmap::PageMap::new(geo.leb_count, geo.leb_bytes, geo.min_io);
        Fs {
            ubi,
            vol,
            cfg,
            lp: crate::lprops::LpTable::new(geo.leb_count, geo.leb_bytes, geo.min_io, geo.main_first),
            geo,
            tnc: Tnc::new(fanout),
            heads: Default::default(),
            idx_head: Head::default(),
            log: LogPos::default(),
            commit_no: 0,
            sqnum: 0,
            highest_inum: 1,
            lpt_area: 0,
            lpt: Default::default(),

            orph_area: 0,
            orph_written: None,
            mst: Default::default(),
            master_next: [0, 0],
            orphans: BTreeSet::new(),
            fds: BTreeMap::new(),
            next_fd: 3,
            inodes: HashMap::default(),
            names: Default::default(),
            in_commit: false,
            broken: false,
            mounting: false,
            counters: FsCounters::default(),
            hot: crate::hot::HotState::default(),
            vmap,
            lpt_bitmap: false,
            now_ns: 0,
            bg_commit: false,
            node_buf: Vec::new(),
            gc_buf: Vec::new(),
            bud_start_bytes: 0,
            reserved_bytes: 0,
            nospace: false,
        }
    }

    pub(crate) fn lpt_bitmap_on(&self) -> bool {
        self.lpt_bitmap
    }

    /// Decides whether the LPT area is large enough for the bitmaps.
    pub(crate) fn set_lpt_bitmap(&mut self) {
        let g = self.geo;
        let need = FsGeo::lpt_tree_lebs(g.leb_count, g.leb_bytes, g.min_io, g.bitmap_words());
        self.lpt_bitmap = self.cfg.lpt_validity_bitmap && g.lpt_lebs >= need;
    }

    pub(crate) fn next_sqnum(&mut self) -> u64 {
        self.sqnum += 1;
        self.sqnum
    }

    /// UBI underneath (for counters).
    pub fn ubi(&self) -> &Ubi {
        &self.ubi
    }

    /// Mutable UBI access (power-cut arming in campaigns).
    pub fn ubi_mut(&mut self) -> &mut Ubi {
        &mut self.ubi
    }

    /// Drops the mounted state without writing anything (as a power cut
    /// would) and returns UBI.
    pub fn into_ubi(self) -> Ubi {
        self.ubi
    }

    /// Debug view of the log position and heads.
    pub fn debug_log(&self) -> String {
        let heads: Vec<_> = self.heads.iter().map(|h| (h.lnum, h.wbuf_offs, h.wbuf.len())).collect();
        format!("{:?} heads {:?} idx {:?}", self.log, heads, self.idx_head.lnum)
    }

    /// Debug view of the LEB properties of the main area.
    pub fn debug_lprops(&self) -> String {
        let v: Vec<String> = (self.geo.main_first..self.geo.leb_count)
            .map(|l| {
                let p = self.lp[l as usize];
                format!("{l}:{}/{}/{}", p.free, p.dirty, p.flags)
            })
            .collect();
        format!("{} reserve {} idx {}", v.join(" "), self.reserved_lebs(), self.idx_reserve_lebs())
    }

    pub fn geometry(&self) -> FsGeo {
        self.geo
    }

    /// Bytes waiting in each journal head's write buffer (base, data, GC, …).
    pub fn wbuf_bytes(&self) -> Vec<usize> {
        self.heads.iter().map(|h| h.wbuf.len()).collect()
    }

    /// Index height and node count.
    pub fn index_shape(&self) -> (usize, usize) {
        (self.tnc.height(), self.tnc.znodes().len())
    }

    /// Host memory of the in-memory structures (index, LPT, caches) plus UBI.
    pub fn memory_bytes(&self) -> usize {
        self.tnc.memory_bytes()
            + self.lp.len() * std::mem::size_of::<Lprops>()
            + self.inodes.len() * 48
            + self.names_memory_bytes()
            + self.vmap.memory_bytes()
            + self.ubi.memory_bytes()
    }

    /// Marks a node's bytes obsolete.
    pub(crate) fn obsolete(&mut self, loc: Loc) {
        if (loc.lnum as usize) < self.lp.len() {
            self.lp.update(loc.lnum, |p| p.dirty += loc.aligned_len());
            self.vmap.remove(loc);
        }
    }

    /// [`Fs::obsolete`] of every location in `locs`, in order: the same end
    /// state, with one LEB-properties update per run of locations in one
    /// LEB (`LpTable::update` moves totals and sets by the difference, so a
    /// run's updates add up to one). A commit's obsoleted index nodes come
    /// mostly from the few index LEBs.
    pub(crate) fn obsolete_all(&mut self, locs: &[Loc]) {
        let mut run: Option<(u32, u32)> = None;
        let lebs = self.lp.len();
        for loc in locs.iter().filter(|l| (l.lnum as usize) < lebs) {
            self.vmap.remove(*loc);
            match &mut run {
                Some((l, bytes)) if *l == loc.lnum => *bytes += loc.aligned_len(),
                _ => {
                    if let Some((l, bytes)) = run.replace((loc.lnum, loc.aligned_len())) {
                        self.lp.update(l, |p| p.dirty += bytes);
                    }
                }
            }
        }
        if let Some((l, bytes)) = run {
            self.lp.update(l, |p| p.dirty += bytes);
        }
    }

    /// Reads `len` bytes, looking into write buffers first.
    pub(crate) fn read_bytes(&mut self, lnum: u32, offs: u32, len: u32) -> FsResult<Vec<u8>> {
        let mut b = vec![0u8; len as usize];
        self.read_bytes_into(lnum, offs, &mut b)?;
        Ok(b)
    }

    /// Reads `out.len()` bytes at `offs` of LEB `lnum`: from the write
    /// buffers for the part not yet on flash, the rest from flash.
    pub(crate) fn read_bytes_into(&mut self, lnum: u32, offs: u32, b: &mut [u8]) -> FsResult<()> {
        let end = offs + b.len() as u32;
        let mut flash_end = end;
        for h in self.heads.iter().chain(std::iter::once(&self.idx_head)) {
            if h.lnum == Some(lnum) && end > h.wbuf_offs && end <= h.end() {
                let from = offs.max(h.wbuf_offs);
                let s = (from - h.wbuf_offs) as usize;
                let n = (end - from) as usize;
                b[(from - offs) as usize..].copy_from_slice(&h.wbuf[s..s + n]);
                flash_end = from;
            }
        }
        if flash_end > offs {
            let n = (flash_end - offs) as usize;
            self.ubi.leb_read(self.vol, lnum, offs, &mut b[..n], Cause::Data)?;
        }
        Ok(())
    }

    /// Reads and checks the node at `loc`.
    pub(crate) fn read_node(&mut self, loc: Loc) -> FsResult<Node> {
        let b = self.read_bytes(loc.lnum, loc.offs, loc.len)?;
        match crate::codec::parse_node(&b) {
            Ok((h, n)) if h.len == loc.len => Ok(n),
            _ => Err(FsError::Corrupt(format!("bad node at {}:{}", loc.lnum, loc.offs))),
        }
    }

    /// Writes one padded buffer to a LEB (programs whole pages).
    pub(crate) fn write_padded(&mut self, lnum: u32, offs: u32, mut bytes: Vec<u8>, cause: Cause) -> FsResult<u32> {
        let n = bytes.len().next_multiple_of(self.geo.min_io as usize);
        pad_into(&mut bytes, n);
        self.ubi.leb_write(self.vol, lnum, offs, &bytes, cause)?;
        Ok(n as u32)
    }

    pub(crate) fn unmap(&mut self, lnum: u32, cause: Cause) -> FsResult<()> {
        if self.ubi.is_mapped(self.vol, lnum)? {
            self.ubi.leb_unmap(self.vol, lnum, cause)?;
        }
        Ok(())
    }
}

/// Pads `b` to `n` bytes with a padding node (or zeros if too small).
pub(crate) fn pad_into(b: &mut Vec<u8>, n: usize) {
    let gap = n - b.len();
    if gap >= crate::node::HDR {
        crate::codec::pad_node_into(b, gap);
    } else {
        b.resize(n, 0);
    }
    debug_assert_eq!(b.len(), n);
    let _ = align;
}
