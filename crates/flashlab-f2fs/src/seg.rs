//! The segment manager (segment.c): SIT valid counts and bitmaps (current
//! and as of the last checkpoint), the SSA's owner of each block, free and
//! prefree segments, the six current segments and their allocation — a
//! new free section (`new_curseg` → `get_new_segment`) or, when free
//! sections run low, slack-space recycling into the holes of a dirty
//! segment (`f2fs_need_SSR`, `get_ssr_segment`, `__next_free_blkoff`).

use crate::layout::{Layout, BLKS_PER_SEG};
use crate::temp::{LogType, NR_LOGS};

/// No segment / no block.
pub const NONE: u32 = u32::MAX;

/// One active log (`struct curseg_info`).
#[derive(Debug, Clone, Copy)]
pub struct Curseg {
    pub seg: u32,
    pub off: u32,
    /// Filling holes of a dirty segment (SSR) rather than a free one (LFS).
    pub ssr: bool,
}

/// SIT, SSA and the free-segment map of the main area.
pub struct SegMgr {
    pub segs: u32,
    pub segs_per_sec: u32,
    pub secs_per_zone: u32,
    pub valid: Vec<u16>,
    pub ckpt_valid: Vec<u16>,
    pub mtime: Vec<u64>,
    pub seg_type: Vec<u8>,
    pub free: Vec<bool>,
    pub open: Vec<bool>,
    pub map: Vec<u64>,
    pub ckpt_map: Vec<u64>,
    /// Free segments in each section.
    pub sec_free: Vec<u16>,
    pub free_segs: u32,
    pub free_secs: u32,
    /// Segments not free, not open, with no valid block.
    pub prefree: u32,
    /// SSA: the node id (node blocks) or inode (data blocks) owning a block.
    pub owner: Vec<u32>,
    /// SSA: the file block index of a data block.
    pub ofs: Vec<u32>,
    pub cur: [Curseg; NR_LOGS],
    /// Valid blocks in the main area (`valid_user_blocks`).
    pub valid_total: u64,
    /// Segments whose SIT entry changed since the last checkpoint.
    pub sit_dirty: Vec<bool>,
    pub sit_dirty_list: Vec<u32>,
    pub reserved_secs: u32,
    /// `overprovision_sections`: overprovision segments (reserved included) per section.
    pub ovp_secs: u32,
    /// The section being cleaned (`cur_victim_sec`): SSR keeps out of it.
    pub gc_victim_sec: u32,
    /// Counters.
    pub ssr_allocs: u64,
    pub lfs_allocs: u64,
}

impl SegMgr {
    pub fn new(l: &Layout) -> SegMgr {
        let segs = l.segment_count_main;
        let words = (segs as usize * BLKS_PER_SEG as usize).div_ceil(64);
        let secs = l.section_count;
        SegMgr {
            segs,
            segs_per_sec: l.segs_per_sec,
            secs_per_zone: l.secs_per_zone,
            valid: vec![0; segs as usize],
            ckpt_valid: vec![0; segs as usize],
            mtime: vec![0; segs as usize],
            seg_type: vec![0; segs as usize],
            free: vec![true; segs as usize],
            open: vec![false; segs as usize],
            map: vec![0; words],
            ckpt_map: vec![0; words],
            sec_free: vec![l.segs_per_sec as u16; secs as usize],
            free_segs: segs,
            free_secs: secs,
            prefree: 0,
            owner: vec![NONE; segs as usize * BLKS_PER_SEG as usize],
            ofs: vec![0; segs as usize * BLKS_PER_SEG as usize],
            cur: [Curseg { seg: NONE, off: 0, ssr: false }; NR_LOGS],
            valid_total: 0,
            sit_dirty: vec![false; segs as usize],
            sit_dirty_list: Vec::new(),
            reserved_secs: l.reserved_sections(),
            ovp_secs: l.overprov_segments / l.segs_per_sec,
            gc_victim_sec: NONE,
            ssr_allocs: 0,
            lfs_allocs: 0,
        }
    }

    pub fn sec_of(&self, seg: u32) -> u32 {
        seg / self.segs_per_sec
    }

    pub fn is_valid(&self, b: u32) -> bool {
        self.map[b as usize / 64] >> (b % 64) & 1 == 1
    }

    fn usable_hole(&self, b: u32) -> bool {
        (self.map[b as usize / 64] | self.ckpt_map[b as usize / 64]) >> (b % 64) & 1 == 0
    }

    /// Blocks of `seg` valid now or at the last checkpoint.
    pub fn used_or_ckpt(&self, seg: u32) -> u32 {
        let w = (seg * BLKS_PER_SEG / 64) as usize;
        (w..w + (BLKS_PER_SEG / 64) as usize).map(|i| (self.map[i] | self.ckpt_map[i]).count_ones()).sum()
    }

    fn mark_sit_dirty(&mut self, seg: u32) {
        if !self.sit_dirty[seg as usize] {
            self.sit_dirty[seg as usize] = true;
            self.sit_dirty_list.push(seg);
        }
    }

    /// `update_sit_entry(+1)` and `update_segment_mtime`.
    fn set_valid(&mut self, b: u32, now_s: u64) {
        let seg = b / BLKS_PER_SEG;
        debug_assert!(!self.is_valid(b));
        self.map[b as usize / 64] |= 1 << (b % 64);
        let v = self.valid[seg as usize] as u64;
        self.mtime[seg as usize] = (self.mtime[seg as usize] * v + now_s) / (v + 1);
        self.valid[seg as usize] += 1;
        self.valid_total += 1;
        self.mark_sit_dirty(seg);
    }

    /// `update_sit_entry(-1)` (`f2fs_invalidate_blocks`).
    pub fn invalidate(&mut self, b: u32) {
        let seg = b / BLKS_PER_SEG;
        if !self.is_valid(b) {
            return;
        }
        self.map[b as usize / 64] &= !(1 << (b % 64));
        self.valid[seg as usize] -= 1;
        self.valid_total -= 1;
        self.owner[b as usize] = NONE;
        if self.is_prefree(seg) {
            self.prefree += 1;
        }
        self.mark_sit_dirty(seg);
    }

    /// Segments with no valid block that the next checkpoint frees.
    pub fn prefree_segments(&self) -> u32 {
        self.prefree
    }

    pub fn is_prefree(&self, s: u32) -> bool {
        !self.free[s as usize] && !self.open[s as usize] && self.valid[s as usize] == 0
    }

    /// `f2fs_need_SSR`: free sections ≤ pending sections + `min_ssr_sections`
    /// (= `reserved_sections`) + `reserved_sections`.
    pub fn need_ssr(&self, pending_secs: u32) -> bool {
        self.free_secs <= pending_secs + 2 * self.reserved_secs
    }

    /// Linux 3.8's `need_SSR`: free sections < overprovision sections.
    pub fn need_ssr_3_8(&self) -> bool {
        self.free_secs < self.ovp_secs
    }

    /// `has_not_enough_free_secs(sbi, freed, 0)`.
    pub fn not_enough_free(&self, freed: u32, pending_secs: u32) -> bool {
        self.free_secs + freed <= pending_secs + self.reserved_secs
    }

    fn take_free_seg(&mut self, seg: u32) {
        debug_assert!(self.free[seg as usize]);
        let sec = self.sec_of(seg) as usize;
        if self.sec_free[sec] == self.segs_per_sec as u16 {
            self.free_secs -= 1;
        }
        self.sec_free[sec] -= 1;
        self.free[seg as usize] = false;
        self.free_segs -= 1;
    }

    /// Makes a prefree segment free (`__set_test_and_free` at checkpoint).
    pub fn release(&mut self, seg: u32) {
        let sec = self.sec_of(seg) as usize;
        self.free[seg as usize] = true;
        self.free_segs += 1;
        self.sec_free[sec] += 1;
        if self.sec_free[sec] == self.segs_per_sec as u16 {
            self.free_secs += 1;
        }
        self.mark_sit_dirty(seg);
    }

    /// `get_new_segment`: the next segment of the log's section if free,
    /// else the first free section after it (wrapping), avoiding zones
    /// where another log is open when zones hold several sections.
    fn new_segment(&mut self, t: LogType) -> Option<u32> {
        let old = self.cur[t as usize].seg;
        if old != NONE && self.segs_per_sec > 1 {
            let next = old + 1;
            if !next.is_multiple_of(self.segs_per_sec) && self.free[next as usize] {
                return Some(next);
            }
        }
        let secs = self.sec_free.len() as u32;
        let start = if old == NONE { 0 } else { (self.sec_of(old) + 1) % secs };
        let zone_of = |sec: u32| sec / self.secs_per_zone;
        let busy_zone = |sec: u32, me: &Self| {
            me.secs_per_zone > 1
                && me
                    .cur
                    .iter()
                    .enumerate()
                    .any(|(i, c)| i != t as usize && c.seg != NONE && zone_of(me.sec_of(c.seg)) == zone_of(sec))
        };
        let mut fallback = None;
        for i in 0..secs {
            let sec = (start + i) % secs;
            if self.sec_free[sec as usize] == self.segs_per_sec as u16 {
                if !busy_zone(sec, self) {
                    return Some(sec * self.segs_per_sec);
                }
                fallback.get_or_insert(sec * self.segs_per_sec);
            }
        }
        fallback
    }

    /// `get_ssr_segment`: the dirty segment of type `t` with the fewest
    /// blocks valid at the last checkpoint (`get_gc_cost` for SSR) that
    /// still has a hole; for data, then the other data logs' segments.
    fn ssr_segment(&mut self, t: LogType, other_types: bool) -> Option<u32> {
        let mut types = vec![t];
        if other_types && t.is_data() {
            types.extend(LogType::DATA.iter().copied().filter(|x| *x != t));
        }
        for ty in types {
            let mut best: Option<(u16, u32)> = None;
            for s in 0..self.segs {
                let su = s as usize;
                if self.free[su]
                    || self.open[su]
                    || self.valid[su] == 0
                    || self.seg_type[su] != ty as u8
                    || self.sec_of(s) == self.gc_victim_sec
                {
                    continue;
                }
                if best.is_some_and(|(c, _)| c <= self.ckpt_valid[su]) {
                    continue;
                }
                if self.used_or_ckpt(s) < BLKS_PER_SEG {
                    best = Some((self.ckpt_valid[su], s));
                }
            }
            if let Some((_, s)) = best {
                return Some(s);
            }
        }
        None
    }

    fn next_hole(&self, seg: u32, from: u32) -> u32 {
        (from..BLKS_PER_SEG).find(|&o| self.usable_hole(seg * BLKS_PER_SEG + o)).unwrap_or(BLKS_PER_SEG)
    }

    /// Closes the log's current segment.
    fn close(&mut self, t: LogType) {
        let c = self.cur[t as usize];
        if c.seg != NONE {
            self.open[c.seg as usize] = false;
            if self.is_prefree(c.seg) {
                self.prefree += 1;
            }
        }
        self.cur[t as usize].seg = NONE;
    }

    /// `allocate_segment_by_default`: SSR when `ssr` (need_SSR held) and a
    /// segment with holes exists, else a new free segment. `None`: no space.
    fn change_segment(&mut self, t: LogType, ssr: bool, other_types: bool) -> Option<()> {
        let next_free = self.new_segment(t);
        self.close(t);
        let ssr_seg = if ssr { self.ssr_segment(t, other_types) } else { None };
        let (seg, is_ssr) = match (ssr_seg, next_free) {
            (Some(s), _) => (s, true),
            (None, Some(s)) if self.free[s as usize] => (s, false),
            (None, _) => (self.new_segment(t)?, false),
        };
        if is_ssr {
            self.ssr_allocs += 1;
        } else {
            self.take_free_seg(seg);
            self.lfs_allocs += 1;
            self.seg_type[seg as usize] = t as u8;
            self.mark_sit_dirty(seg);
        }
        self.open[seg as usize] = true;
        let off = if is_ssr { self.next_hole(seg, 0) } else { 0 };
        self.cur[t as usize] = Curseg { seg, off, ssr: is_ssr };
        Some(())
    }

    /// Allocates the log's next block (`f2fs_allocate_data_block`) for
    /// `owner`/`ofs`; `ssr` says whether `f2fs_need_SSR` holds, `other`
    /// whether other data logs' segments may be recycled.
    pub fn alloc(&mut self, t: LogType, ssr: bool, other: bool, owner: u32, ofs: u32, now_s: u64) -> Option<u32> {
        let c = self.cur[t as usize];
        if c.seg == NONE || c.off >= BLKS_PER_SEG {
            self.change_segment(t, ssr, other)?;
        }
        let c = self.cur[t as usize];
        let b = c.seg * BLKS_PER_SEG + c.off;
        self.set_valid(b, now_s);
        self.owner[b as usize] = owner;
        self.ofs[b as usize] = ofs;
        let next = if c.ssr { self.next_hole(c.seg, c.off + 1) } else { c.off + 1 };
        self.cur[t as usize].off = next;
        Some(b)
    }

    /// Checkpoint: prefree segments become free (returned for discard), the
    /// checkpointed bitmaps take the current ones, SIT entries are clean.
    pub fn checkpoint(&mut self) -> Vec<u32> {
        let freed: Vec<u32> = (0..self.segs).filter(|&s| self.is_prefree(s)).collect();
        for &s in &freed {
            self.release(s);
        }
        self.prefree = 0;
        self.ckpt_map.copy_from_slice(&self.map);
        self.ckpt_valid.copy_from_slice(&self.valid);
        for s in self.sit_dirty_list.drain(..) {
            self.sit_dirty[s as usize] = false;
        }
        freed
    }
}
