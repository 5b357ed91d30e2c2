//! The on-disk layout mkfs.f2fs gives a device (mkfs/f2fs_format.c,
//! `f2fs_prepare_super_block`): superblock zone, then the CP, SIT, NAT and
//! SSA areas and the main area, each a whole number of segments, with the
//! overprovision and reserved segments of `get_best_overprovision` — or of
//! f2fs-tools v1.0.0–v1.1.0 (Nov. 2012), whose rule seed 004's Table 2 shows.

/// Blocks per segment (`F2FS_DEFAULT_BLOCKS_PER_SEGMENT`... 2 MiB / 4 KiB).
pub const BLKS_PER_SEG: u32 = 512;
/// Bytes per block.
pub const BLOCK_BYTES: u64 = 4096;
/// `SIT_ENTRY_PER_BLOCK`: 4096 / sizeof(struct f2fs_sit_entry) (74).
pub const SIT_ENTRY_PER_BLOCK: u32 = 55;
/// `NAT_ENTRY_PER_BLOCK`: 4096 / sizeof(struct f2fs_nat_entry) (9).
pub const NAT_ENTRY_PER_BLOCK: u32 = 455;
/// `NR_CURSEG_TYPE`: six active logs.
pub const NR_CURSEG_TYPE: u32 = 6;
/// `F2FS_NUMBER_OF_CHECKPOINT_PACK`.
const CP_PACKS: u32 = 2;
/// `CHECKSUM_OFFSET` − sizeof(struct f2fs_checkpoint) + 1: CP-page bytes
/// left for the SIT and NAT version bitmaps.
const CP_BITMAP_BYTES: u32 = 4092 - 193 + 1;

/// Which f2fs-tools' mkfs.f2fs computes the overprovision and reserved segments.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Deserialize, serde::Serialize)]
pub enum MkfsTools {
    /// Today's: `get_best_overprovision` unless `-o` is given, reserved
    /// `(2 × (100 / ovp + 1) + 6) × segs_per_sec`.
    #[default]
    #[serde(rename = "current")]
    Current,
    /// f2fs-tools v1.0.0–v1.1.0 (Nov. 2012): `-o` a whole percentage, default 5;
    /// reserved `(100 / ovp + 5) × segs_per_sec`.
    #[serde(rename = "1.1")]
    V1_1,
}

impl MkfsTools {
    pub const NAMES: &'static str = "current, 1.1";
}

/// Where each area of the volume lies (all in 4 KiB blocks / segments).
#[derive(Debug, Clone, PartialEq)]
pub struct Layout {
    pub block_count: u64,
    pub segs_per_sec: u32,
    pub secs_per_zone: u32,
    pub segment0_blkaddr: u32,
    pub segment_count: u32,
    pub segment_count_ckpt: u32,
    pub segment_count_sit: u32,
    pub segment_count_nat: u32,
    pub segment_count_ssa: u32,
    pub segment_count_main: u32,
    pub section_count: u32,
    pub cp_blkaddr: u32,
    pub sit_blkaddr: u32,
    pub nat_blkaddr: u32,
    pub ssa_blkaddr: u32,
    pub main_blkaddr: u32,
    /// Overprovision ratio in percent (`c.overprovision`).
    pub overprovision: f64,
    /// `rsvd_segment_count`.
    pub reserved_segments: u32,
    /// `overprov_segment_count` (reserved included).
    pub overprov_segments: u32,
    /// `user_block_count`: blocks the user may fill.
    pub user_block_count: u64,
}

/// Why a device cannot hold an F2FS volume.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct LayoutError(pub String);

/// `get_best_overprovision`: the ratio in percent that leaves the most
/// user space, trying 10..95 % in steps of 5 below 256 main segments,
/// else 0.01..10 % in steps of 0.01; each candidate reserves
/// `(2 × (100 / ovp + 1) + 6) × segs_per_sec` segments.
pub fn best_overprovision(main_segs: u32, segs_per_sec: u32) -> f64 {
    let (mut candidate, end, diff) = if main_segs < 256 { (10.0, 95.0, 5.0) } else { (0.01, 10.0, 0.01) };
    let (mut max_ovp, mut max_space) = (0.0f64, 0.0f64);
    let usable = main_segs as f64;
    while candidate <= end {
        let reserved = reserved_for(candidate, segs_per_sec);
        let ovp = (usable - reserved) * candidate / 100.0;
        if ovp >= 0.0 {
            let space = usable - reserved.max(ovp) - 2.0 * segs_per_sec as f64;
            if max_space < space {
                max_space = space;
                max_ovp = candidate;
            }
        }
        candidate += diff;
    }
    max_ovp
}

fn reserved_for(ovp: f64, segs_per_sec: u32) -> f64 {
    (2.0 * (100.0 / ovp + 1.0) + NR_CURSEG_TYPE as f64) * segs_per_sec as f64
}

fn div_up(a: u64, b: u64) -> u64 {
    a.div_ceil(b)
}

/// The overprovision ratio and reserved segments of `tools`' mkfs.f2fs for
/// `main` main segments (`ovp`: the `-o` option, if given).
fn ovp_and_reserved(tools: MkfsTools, main: u32, segs_per_sec: u32, ovp: Option<f64>) -> (f64, u32) {
    match tools {
        MkfsTools::Current => {
            let o = ovp.unwrap_or_else(|| best_overprovision(main, segs_per_sec));
            (o, if o > 0.0 { reserved_for(o, segs_per_sec) as u32 } else { 0 })
        }
        MkfsTools::V1_1 => {
            // f2fs-tools v1.1.0 `f2fs_parse_options`: `-o` read by atoi (default 5),
            // reserved_segments = (100 / overprovision + 5) * segs_per_sec in
            // integer arithmetic (changed by d238772 "mkfs: reserve x2 sections",
            // 2013-01-14, to today's (2 * (100 / ovp + 1) + 6) * segs_per_sec).
            let o = ovp.unwrap_or(5.0).trunc().max(1.0) as u32;
            (o as f64, (100 / o + 5) * segs_per_sec)
        }
    }
}

impl Layout {
    /// mkfs.f2fs's layout of a device of `device_bytes` (`f2fs_prepare_super_block`),
    /// by today's f2fs-tools.
    pub fn new(
        device_bytes: u64,
        segs_per_sec: u32,
        secs_per_zone: u32,
        ovp: Option<f64>,
    ) -> Result<Layout, LayoutError> {
        Layout::with_tools(device_bytes, segs_per_sec, secs_per_zone, ovp, MkfsTools::Current)
    }

    /// mkfs.f2fs's layout of a device of `device_bytes` by `tools`' mkfs.f2fs.
    pub fn with_tools(
        device_bytes: u64,
        segs_per_sec: u32,
        secs_per_zone: u32,
        ovp: Option<f64>,
        tools: MkfsTools,
    ) -> Result<Layout, LayoutError> {
        let blk = BLOCK_BYTES;
        let seg_bytes = blk * BLKS_PER_SEG as u64;
        let segs_per_zone = (segs_per_sec * secs_per_zone) as u64;
        let zone_bytes = seg_bytes * segs_per_zone;
        // zone_align_start_offset: the superblocks (2 blocks) rounded up to a zone.
        let start = div_up(2 * blk, zone_bytes) * zone_bytes;
        if device_bytes <= start {
            return Err(LayoutError(format!("a {device_bytes}-byte device holds no segment after the superblocks")));
        }
        let spb = BLKS_PER_SEG as u64;
        let segment_count = ((device_bytes - start) / seg_bytes / segs_per_zone * segs_per_zone) as u32;
        let ckpt = CP_PACKS;
        let blocks_for_sit = div_up(segment_count as u64, SIT_ENTRY_PER_BLOCK as u64);
        let sit_segments = div_up(blocks_for_sit, spb) as u32;
        let sit = sit_segments * 2;
        let avail = (segment_count.saturating_sub(ckpt + sit)) as u64 * spb;
        let blocks_for_nat = div_up(avail, NAT_ENTRY_PER_BLOCK as u64);
        let mut nat_half = div_up(blocks_for_nat, spb) as u32;
        // The NAT version bitmap must fit in the CP page beside the SIT's.
        let sit_bitmap = (sit_segments * BLKS_PER_SEG) / 8;
        let max_nat = (CP_BITMAP_BYTES.saturating_sub(sit_bitmap) * 8) / BLKS_PER_SEG;
        nat_half = nat_half.min(max_nat).max(1);
        let nat = nat_half * 2;
        let avail = (segment_count.saturating_sub(ckpt + sit + nat)) as u64 * spb;
        let blocks_for_ssa = avail / spb + 1;
        let mut ssa = div_up(blocks_for_ssa, spb) as u32;
        let meta = ckpt + sit + nat + ssa;
        let diff = meta % segs_per_zone as u32;
        if diff != 0 {
            ssa += segs_per_zone as u32 - diff;
        }
        let meta = ckpt + sit + nat + ssa;
        if segment_count <= meta {
            return Err(LayoutError(format!(
                "{segment_count} segments leave no main area after {meta} metadata segments"
            )));
        }
        let section_count = (segment_count - meta) / segs_per_sec;
        let main = section_count * segs_per_sec;
        let (overprovision, reserved) = ovp_and_reserved(tools, main, segs_per_sec, ovp);
        if overprovision <= 0.0 {
            return Err(LayoutError(format!("{main} main segments leave no room for reserved segments")));
        }
        let total_zones = main as u64 / segs_per_zone;
        if main < reserved + 2 || total_zones <= NR_CURSEG_TYPE as u64 {
            return Err(LayoutError(format!(
                "device too small for F2FS: {main} main segments, {reserved} reserved and 6 logs need more"
            )));
        }
        // f2fs_write_check_point_pack: overprov_segment_count.
        let overprov = ((main - reserved) as f64 * overprovision / 100.0) as u32 + reserved;
        if overprov >= main {
            return Err(LayoutError(format!("overprovision {overprovision} % leaves no user blocks")));
        }
        let seg0 = (start / blk) as u32;
        let sit_blkaddr = seg0 + ckpt * BLKS_PER_SEG;
        let nat_blkaddr = sit_blkaddr + sit * BLKS_PER_SEG;
        let ssa_blkaddr = nat_blkaddr + nat * BLKS_PER_SEG;
        let main_blkaddr = ssa_blkaddr + ssa * BLKS_PER_SEG;
        Ok(Layout {
            block_count: device_bytes / blk,
            segs_per_sec,
            secs_per_zone,
            segment0_blkaddr: seg0,
            segment_count,
            segment_count_ckpt: ckpt,
            segment_count_sit: sit,
            segment_count_nat: nat,
            segment_count_ssa: ssa,
            segment_count_main: main,
            section_count,
            cp_blkaddr: seg0,
            sit_blkaddr,
            nat_blkaddr,
            ssa_blkaddr,
            main_blkaddr,
            overprovision,
            reserved_segments: reserved,
            overprov_segments: overprov,
            user_block_count: (main - overprov) as u64 * spb,
        })
    }

    /// Blocks of the main area.
    pub fn main_blocks(&self) -> u32 {
        self.segment_count_main * BLKS_PER_SEG
    }

    /// Blocks per section.
    pub fn blks_per_sec(&self) -> u32 {
        self.segs_per_sec * BLKS_PER_SEG
    }

    /// `reserved_sections`.
    pub fn reserved_sections(&self) -> u32 {
        self.reserved_segments / self.segs_per_sec
    }

    /// Node ids the NAT can address (one copy of the NAT area).
    pub fn max_nid(&self) -> u32 {
        (self.segment_count_nat / 2) * BLKS_PER_SEG * NAT_ENTRY_PER_BLOCK
    }
}
