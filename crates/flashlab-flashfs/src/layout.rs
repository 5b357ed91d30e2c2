//! Volume layout: superblock, two master LEBs, log, two LPT areas, two
//! orphan areas, then the main area (data, index, journal buds).

pub const SB_LNUM: u32 = 0;
pub const MST_LNUMS: [u32; 2] = [1, 2];

/// Derived geometry of a formatted volume.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FsGeo {
    pub leb_bytes: u32,
    pub min_io: u32,
    pub leb_count: u32,
    pub log_first: u32,
    pub log_lebs: u32,
    pub lpt_first: u32,
    /// LEBs per LPT area (there are two).
    pub lpt_lebs: u32,
    pub orph_first: u32,
    pub main_first: u32,
}

/// Bytes of one LPT pnode (4 LEBs) or nnode (4 children), aligned.
pub const LPT_NODE_BYTES: u32 = 88;

/// Size of a reference node rounded up to a min. I/O unit (UBIFS's
/// `ref_node_alsz`; UBIFS_REF_NODE_SZ is 64 bytes).
fn ref_node_alsz(min_io: u32) -> u32 {
    64u32.next_multiple_of(min_io)
}

/// UBIFS's default journal of a volume of `leb_count` LEBs, as
/// `create_default_filesystem` (sb.c) computes it: (log LEBs, bud LEBs).
/// The journal is 5 % of the LEBs (DEFAULT_JNL_PERCENT), at least 5
/// (UBIFS_MIN_JNL_LEBS) and at most 32 MiB (DEFAULT_MAX_JNL); the log holds
/// twice a reference node per journal LEB, plus one LEB for the commit,
/// plus one more on volumes of more than 25 LEBs; the buds are the rest of
/// the journal, at least 3 (UBIFS_MIN_BUD_LEBS).
pub fn ubifs_default_journal(leb_count: u32, leb_bytes: u32, min_io: u32) -> (u32, u32) {
    const MIN_LEB_CNT: u32 = 17; // UBIFS_MIN_LEB_CNT
    let mut jnl = (leb_count as u64 * 5 / 100).max(5) as u32;
    if jnl as u64 * leb_bytes as u64 > 32 << 20 {
        jnl = (32u32 << 20) / leb_bytes;
    }
    let tmp = 2 * ref_node_alsz(min_io) as u64 * jnl as u64 + leb_bytes as u64 - 1;
    let mut log = (tmp / leb_bytes as u64) as u32 + 1;
    if leb_count.saturating_sub(MIN_LEB_CNT) > 8 {
        log += 1;
    }
    (log, jnl.saturating_sub(log).max(3))
}

impl FsGeo {
    pub fn new(leb_count: u32, leb_bytes: u32, min_io: u32, log_lebs: u32, lpt_lebs: u32) -> FsGeo {
        let log_first = 3;
        let lpt_first = log_first + log_lebs;
        let orph_first = lpt_first + 2 * lpt_lebs;
        FsGeo {
            leb_bytes,
            min_io,
            leb_count,
            log_first,
            log_lebs,
            lpt_first,
            lpt_lebs,
            orph_first,
            main_first: orph_first + 2,
        }
    }

    /// LEBs of one LPT area for `leb_count` LEBs (with `bitmap_words`
    /// validity-bitmap words per LEB, 0 without the bitmap): room for the
    /// whole tree plus, on devices of 512 LEBs or more, up to twice as much
    /// again (at most 1/256 of the LEBs) for incremental commits, which
    /// append only the changed LPT nodes after the tree.
    pub fn lpt_lebs_for(leb_count: u32, leb_bytes: u32, min_io: u32, bitmap_words: u32) -> u32 {
        let tree = Self::lpt_tree_lebs(leb_count, leb_bytes, min_io, bitmap_words);
        tree + (2 * tree).min(leb_count / 256)
    }

    /// LEBs the whole LPT takes.
    pub fn lpt_tree_lebs(leb_count: u32, leb_bytes: u32, min_io: u32, bitmap_words: u32) -> u32 {
        let pnodes = leb_count.div_ceil(4);
        let nodes = pnodes + pnodes.div_ceil(3) + 4;
        let node_bytes = LPT_NODE_BYTES + if bitmap_words == 0 { 0 } else { 4 * (1 + 8 * bitmap_words) };
        let per_leb = (leb_bytes - min_io) / node_bytes.next_multiple_of(8);
        nodes.div_ceil(per_leb.max(1)).max(1)
    }

    pub fn main_lebs(&self) -> u32 {
        self.leb_count.saturating_sub(self.main_first)
    }

    pub fn is_main(&self, lnum: u32) -> bool {
        lnum >= self.main_first && lnum < self.leb_count
    }

    /// Largest node the journal writes (a 4 KiB data node + header).
    /// Validity-bitmap words per LEB (one bit per page).
    pub fn bitmap_words(&self) -> u32 {
        (self.leb_bytes / self.min_io.max(1)).div_ceil(64)
    }

    /// UBIFS_MAX_DATA_NODE_SZ: a data node of a whole 4 KiB block.
    pub fn max_node_bytes(&self) -> u32 {
        (4096 + crate::node::DATA_NODE_BYTES as u32).next_multiple_of(8)
    }
}
