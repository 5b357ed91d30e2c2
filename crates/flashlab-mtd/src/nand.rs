//! The simulated NAND device: real bytes, per-sub-page programmed state,
//! erase counts, seeded faults and power cuts.

use crate::block2mtd::Block2Mtd;
use crate::oob::Oob;
use crate::store::BlockStore;
use crate::{Block2MtdSettings, Cause, MtdError, MtdStats, NandSettings, SettingsError};
use flashlab_sim::{SimError, Ssd};
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

/// Result of a successful read.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReadInfo {
    /// Pages whose bit-flips ECC corrected (data returned is correct).
    pub corrected_pages: u32,
}

const OOB_BIT: u16 = 1 << 15;

/// Where the device's operations go besides its in-memory bytes: a closed
/// list matched once per operation, so raw flash pays one branch.
#[derive(Clone)]
enum Backend {
    /// Raw NAND: nothing else.
    Raw,
    /// block2mtd: each operation is also a request to the simulated SSD.
    Block2Mtd(Box<Block2Mtd>),
}

fn device_error(e: SimError) -> MtdError {
    MtdError::Device(e.to_string())
}

/// Calls `f(first, end)` for each run of pages in `pages` of the block
/// starting at page index `base` that hold programmed data.
fn programmed_runs<E>(
    programmed: &[u16],
    base: usize,
    pages: std::ops::Range<u32>,
    mut f: impl FnMut(u32, u32) -> Result<(), E>,
) -> Result<(), E> {
    let mut run: Option<u32> = None;
    for p in pages.clone() {
        let held = programmed[base + p as usize] & !OOB_BIT != 0;
        match (held, run) {
            (true, None) => run = Some(p),
            (false, Some(first)) => {
                f(first, p)?;
                run = None;
            }
            _ => {}
        }
    }
    match run {
        Some(first) => f(first, pages.end),
        None => Ok(()),
    }
}

/// A raw NAND device. `Clone` snapshots the whole device (content,
/// counters and fault RNG), which power-cut campaigns use; a block2mtd
/// device's clones share its SSD ([`Nand::on_ssd`]).
#[derive(Clone)]
pub struct Nand {
    cfg: NandSettings,
    data: BlockStore,
    oob: Oob,
    programmed: Vec<u16>,
    erase_counts: Vec<u32>,
    worn: Vec<bool>,
    rng: Xoshiro256PlusPlus,
    cut_at: Option<u64>,
    powered_off: bool,
    stats: MtdStats,
    backend: Backend,
}

impl Nand {
    /// Creates an erased device; factory bad blocks are chosen from the seed.
    /// Call `NandSettings::validate` first; invalid settings are clamped.
    pub fn new(cfg: NandSettings) -> Self {
        let pages = (cfg.blocks * cfg.pages_per_block) as usize;
        let mut nand = Nand {
            data: BlockStore::new(cfg.blocks, cfg.pages_per_block, cfg.page_bytes),
            oob: Oob::new(cfg.blocks as usize, (cfg.pages_per_block * cfg.oob_bytes) as usize),
            programmed: vec![0; pages],
            erase_counts: vec![0; cfg.blocks as usize],
            worn: vec![false; cfg.blocks as usize],
            rng: Xoshiro256PlusPlus::seed_from_u64(cfg.faults.seed),
            cut_at: None,
            powered_off: false,
            stats: MtdStats::default(),
            backend: Backend::Raw,
            cfg,
        };
        nand.place_factory_bad_blocks();
        nand
    }

    /// An MTD on the simulated SSD (Linux's block2mtd): erase blocks of
    /// `cfg.erase_kib` over the SSD's whole logical capacity, write unit
    /// `cfg.page_bytes`, no faults, initially erased. The error names the
    /// `[block2mtd]` key at fault (geometry not dividing the SSD, …).
    pub fn on_ssd(ssd: Ssd, cfg: &Block2MtdSettings) -> Result<Nand, SettingsError> {
        let s = ssd.settings();
        let ns = cfg.nand_settings(s.ftl.logical_pages * s.page_bytes(), s.page_bytes())?;
        let block_bytes = ns.block_bytes() as u64;
        let size_bytes = ns.blocks as u64 * block_bytes;
        let mut nand = Nand::new(ns);
        nand.backend = Backend::Block2Mtd(Box::new(Block2Mtd::new(ssd, cfg.erase_mode()?, block_bytes, size_bytes)));
        Ok(nand)
    }

    /// `drop_caches`: empties the block device's page cache under a
    /// block2mtd device (raw NAND caches nothing).
    pub fn drop_caches(&mut self) {
        if let Backend::Block2Mtd(b) = &mut self.backend {
            b.drop_caches();
        }
    }

    /// The SSD under a block2mtd device; `None` on raw NAND.
    pub fn block2mtd(&self) -> Option<&Block2Mtd> {
        match &self.backend {
            Backend::Raw => None,
            Backend::Block2Mtd(b) => Some(b),
        }
    }

    fn place_factory_bad_blocks(&mut self) {
        let mut placed = 0;
        while placed < self.cfg.faults.factory_bad_blocks {
            let b = self.rng.gen_range(1..self.cfg.blocks);
            if self.oob.marker(b as usize) == 0xFF {
                let i = self.oob_index(b, 0);
                self.oob.set(i, 0);
                self.worn[b as usize] = true;
                placed += 1;
            }
        }
    }

    /// The settings this device was built with.
    pub fn settings(&self) -> &NandSettings {
        &self.cfg
    }

    /// Counters since creation.
    pub fn stats(&self) -> &MtdStats {
        &self.stats
    }

    /// Erase count of every block.
    pub fn erase_counts(&self) -> &[u32] {
        &self.erase_counts
    }

    /// Bytes of host memory the simulation itself uses.
    pub fn memory_bytes(&self) -> usize {
        self.data.allocated_bytes() + self.oob.len() + self.programmed.len() * 2 + self.worn.len() * 5
    }

    /// Arms a power cut: the operation with index `op` (0-based, counting
    /// every operation since creation) is interrupted. `None` disarms.
    pub fn arm_power_cut(&mut self, op: Option<u64>) {
        self.cut_at = op;
    }

    /// True after a power cut until `reboot`.
    pub fn is_powered_off(&self) -> bool {
        self.powered_off
    }

    /// Restores power (the content stays as the cut left it) and disarms.
    pub fn reboot(&mut self) {
        self.powered_off = false;
        self.cut_at = None;
    }

    // ---- Access for `state.rs` (saving and loading the device's content). ----

    pub(crate) fn page_count(&self) -> usize {
        self.programmed.len()
    }

    pub(crate) fn worn_flag(&self, block: usize) -> bool {
        self.worn[block]
    }

    pub(crate) fn programmed_mask(&self, page: usize) -> u16 {
        self.programmed[page]
    }

    pub(crate) fn oob_bytes_all(&self) -> Vec<u8> {
        self.oob.bytes()
    }

    pub(crate) fn page_held(&self, page: usize) -> bool {
        self.data.holds(page)
    }

    pub(crate) fn page_bytes_of(&self, page: usize, out: &mut [u8]) {
        let ppb = self.cfg.pages_per_block as usize;
        let pos = ((page % ppb) as u32) * self.cfg.page_bytes;
        self.data.read((page / ppb) as u32, pos, out);
    }

    pub(crate) fn restore_tables(&mut self, erase: Vec<u32>, worn: Vec<bool>, masks: Vec<u16>, oob: Vec<u8>) {
        assert!(erase.len() == self.erase_counts.len() && masks.len() == self.programmed.len());
        assert!(oob.len() == self.oob.len() && worn.len() == self.worn.len());
        (self.erase_counts, self.worn, self.programmed) = (erase, worn, masks);
        self.oob.restore(&oob);
    }

    pub(crate) fn restore_page(&mut self, page: usize, bytes: &[u8]) {
        let ppb = self.cfg.pages_per_block as usize;
        let (block, pos) = ((page / ppb) as u32, ((page % ppb) as u32) * self.cfg.page_bytes);
        self.data.slice_mut(block, pos, bytes.len()).copy_from_slice(bytes);
        self.data.compact(block, pos);
    }

    fn page_index(&self, block: u32, page: u32) -> usize {
        (block * self.cfg.pages_per_block + page) as usize
    }

    fn oob_index(&self, block: u32, page: u32) -> usize {
        self.page_index(block, page) * self.cfg.oob_bytes as usize
    }

    /// Starts one operation: Ok(true) when power is cut during it.
    fn begin_op(&mut self) -> Result<bool, MtdError> {
        if self.powered_off {
            return Err(MtdError::PowerCut);
        }
        let idx = self.stats.ops;
        self.stats.ops += 1;
        if self.cut_at == Some(idx) {
            self.powered_off = true;
            self.stats.power_cuts += 1;
            return Ok(true);
        }
        Ok(false)
    }

    fn check_range(&self, block: u32, offs: u32, len: usize) -> Result<(), MtdError> {
        let end = offs as u64 + len as u64;
        if block >= self.cfg.blocks || end > self.cfg.block_bytes() as u64 {
            return Err(MtdError::BadAddress { block, offs, len: len as u32 });
        }
        Ok(())
    }

    fn wear_factor(&self, block: u32) -> f64 {
        let end = self.cfg.faults.endurance_erases;
        if end == 0 {
            1.0
        } else {
            1.0 + 3.0 * self.erase_counts[block as usize] as f64 / end as f64
        }
    }

    fn chance(&mut self, p: f64) -> bool {
        p > 0.0 && self.rng.gen_bool(p.min(1.0))
    }

    /// Reads `buf.len()` bytes at byte offset `offs` of `block`.
    pub fn read(&mut self, block: u32, offs: u32, buf: &mut [u8], cause: Cause) -> Result<ReadInfo, MtdError> {
        self.check_range(block, offs, buf.len())?;
        let pb = self.cfg.page_bytes;
        let mut info = ReadInfo::default();
        let mut done = 0usize;
        while done < buf.len() {
            let pos = offs + done as u32;
            let page = pos / pb;
            let n = ((pb - pos % pb) as usize).min(buf.len() - done);
            self.read_chunk(block, page, pos, &mut buf[done..done + n], cause, &mut info)?;
            done += n;
        }
        self.backend_read(block, offs, buf.len())?;
        Ok(info)
    }

    /// [`Nand::read`] of `len` bytes that hands them to `visit` (offset in
    /// the read, bytes) one page's part at a time, in order, from the stored
    /// pages in place instead of copying them into a buffer: the same
    /// operations, counters, faults and random draws, in the same order. A
    /// part whose read fails is not handed over (the error is returned).
    pub fn read_with(
        &mut self,
        block: u32,
        offs: u32,
        len: usize,
        cause: Cause,
        visit: &mut dyn FnMut(usize, &[u8]),
    ) -> Result<ReadInfo, MtdError> {
        self.check_range(block, offs, len)?;
        let pb = self.cfg.page_bytes;
        let mut info = ReadInfo::default();
        let mut scratch = Vec::new();
        let mut done = 0usize;
        while done < len {
            let pos = offs + done as u32;
            let page = pos / pb;
            let n = ((pb - pos % pb) as usize).min(len - done);
            self.read_begin(cause)?;
            if self.read_faults(block, n, &mut info).is_err() {
                return Err(MtdError::Uncorrectable { block, page });
            }
            visit(done, self.data.part(block, pos, n, &mut scratch));
            done += n;
        }
        self.backend_read(block, offs, len)?;
        Ok(info)
    }

    /// The block2mtd requests of a read (none on raw NAND).
    fn backend_read(&mut self, block: u32, offs: u32, len: usize) -> Result<(), MtdError> {
        if let Backend::Block2Mtd(b) = &mut self.backend {
            let pb = self.cfg.page_bytes;
            let (start, end) = (offs as u64, offs as u64 + len as u64);
            let base = (block * self.cfg.pages_per_block) as usize;
            let pages = offs / pb..(end as u32).div_ceil(pb);
            let mut held = 0;
            programmed_runs(&self.programmed, base, pages, |first, last| {
                let (a, z) = (start.max(first as u64 * pb as u64), end.min(last as u64 * pb as u64));
                held += z - a;
                b.read(block, a, z - a)
            })
            .map_err(device_error)?;
            b.erased_read(end - start - held);
        }
        Ok(())
    }

    fn read_chunk(
        &mut self,
        block: u32,
        page: u32,
        pos: u32,
        out: &mut [u8],
        cause: Cause,
        info: &mut ReadInfo,
    ) -> Result<(), MtdError> {
        self.read_begin(cause)?;
        self.data.read(block, pos, out);
        if let Err(k) = self.read_faults(block, out.len(), info) {
            out[k] ^= 0x5A;
            return Err(MtdError::Uncorrectable { block, page });
        }
        Ok(())
    }

    /// A page read's operation: the power cut check and the count.
    fn read_begin(&mut self, cause: Cause) -> Result<(), MtdError> {
        if self.begin_op()? {
            return Err(MtdError::PowerCut);
        }
        self.stats.pages_read.add(cause, 1);
        Ok(())
    }

    /// A page read's random faults over `n` bytes: `Err(k)` when it is
    /// uncorrectable (byte `k` comes back garbled); a corrected bit-flip is
    /// counted in `info`.
    fn read_faults(&mut self, block: u32, n: usize, info: &mut ReadInfo) -> Result<(), usize> {
        let wear = self.wear_factor(block);
        if self.chance(self.cfg.faults.uncorrectable_per_read * wear) {
            self.stats.uncorrectable_reads += 1;
            return Err(self.rng.gen_range(0..n));
        }
        if self.chance(self.cfg.faults.bitflip_per_read * wear) {
            self.stats.corrected_reads += 1;
            info.corrected_pages += 1;
        }
        Ok(())
    }

    /// Programs `data` at byte offset `offs` of `block`. Offset and length
    /// must be multiples of the sub-page size and the sub-pages erased.
    pub fn program(&mut self, block: u32, offs: u32, data: &[u8], cause: Cause) -> Result<(), MtdError> {
        self.check_range(block, offs, data.len())?;
        let sp = self.cfg.subpage_bytes();
        if !offs.is_multiple_of(sp) || !(data.len() as u32).is_multiple_of(sp) {
            return Err(MtdError::BadAddress { block, offs, len: data.len() as u32 });
        }
        if self.is_marked_bad(block) {
            return Err(MtdError::BadBlock(block));
        }
        let pb = self.cfg.page_bytes;
        let mut done = 0usize;
        while done < data.len() {
            let pos = offs + done as u32;
            let n = ((pb - pos % pb) as usize).min(data.len() - done);
            self.program_chunk(block, pos, &data[done..done + n], cause)?;
            done += n;
        }
        if let Backend::Block2Mtd(b) = &mut self.backend {
            b.program(block, offs as u64, data.len() as u64).map_err(device_error)?;
        }
        Ok(())
    }

    fn subpage_mask(&self, pos: u32, len: usize) -> u16 {
        let sp = self.cfg.subpage_bytes();
        let first = (pos % self.cfg.page_bytes) / sp;
        let count = len as u32 / sp;
        (((1u32 << count) - 1) << first) as u16
    }

    fn program_chunk(&mut self, block: u32, pos: u32, src: &[u8], cause: Cause) -> Result<(), MtdError> {
        let page = pos / self.cfg.page_bytes;
        let pi = self.page_index(block, page);
        let mask = self.subpage_mask(pos, src.len());
        let cut = self.begin_op()?;
        if self.programmed[pi] & mask != 0 {
            return Err(MtdError::AlreadyProgrammed { block, offs: pos });
        }
        self.stats.pages_programmed.add(cause, 1);
        self.programmed[pi] |= mask;
        if cut {
            self.write_garbage(block, pos, src);
            return Err(MtdError::PowerCut);
        }
        if self.chance(self.cfg.faults.program_fail_per_op) {
            self.stats.program_failures += 1;
            self.write_garbage(block, pos, src);
            return Err(MtdError::ProgramFailed { block, page });
        }
        self.data.program(block, pos, src);
        Ok(())
    }

    /// A partly programmed range: a random prefix of the new bytes, then
    /// random bits. Never reads back as fully erased unless `src` is.
    fn write_garbage(&mut self, block: u32, pos: u32, src: &[u8]) {
        let good = self.rng.gen_range(0..src.len());
        let bytes = self.data.slice_mut(block, pos, src.len());
        for (k, s) in src.iter().enumerate() {
            let v = if k < good { *s } else { self.rng.gen::<u8>() & (*s).max(0x0F) };
            bytes[k] &= v;
        }
        if src.iter().any(|b| *b != 0xFF) && self.data.all_erased(block, pos, src.len()) {
            self.data.slice_mut(block, pos, src.len())[src.len() - 1] = 0x7E;
        }
    }

    /// Erases `block` (all data and OOB to 0xFF) and counts a cycle.
    pub fn erase(&mut self, block: u32, cause: Cause) -> Result<(), MtdError> {
        self.check_range(block, 0, 0)?;
        if self.is_marked_bad(block) {
            return Err(MtdError::BadBlock(block));
        }
        let cut = self.begin_op()?;
        self.stats.erases.add(cause, 1);
        if cut {
            self.partial_erase(block);
            return Err(MtdError::PowerCut);
        }
        let end = self.cfg.faults.endurance_erases;
        let worn_out = end > 0 && self.erase_counts[block as usize] >= end;
        if self.worn[block as usize] || worn_out || self.chance(self.cfg.faults.erase_fail_per_op) {
            self.worn[block as usize] = true;
            self.stats.erase_failures += 1;
            return Err(MtdError::EraseFailed(block));
        }
        self.erase_counts[block as usize] += 1;
        if let Backend::Block2Mtd(b) = &mut self.backend {
            // `_block2mtd_erase`: only pages not already erased are overwritten.
            let pb = self.cfg.page_bytes as u64;
            let base = (block * self.cfg.pages_per_block) as usize;
            programmed_runs(&self.programmed, base, 0..self.cfg.pages_per_block, |first, end| {
                b.erase_run(block, first as u64 * pb, (end - first) as u64 * pb)
            })
            .map_err(device_error)?;
        }
        self.fill_erased(block);
        Ok(())
    }

    fn fill_erased(&mut self, block: u32) {
        self.data.erase(block);
        let ppb = self.cfg.pages_per_block;
        self.oob.erase_block(block as usize);
        let p = self.page_index(block, 0);
        self.programmed[p..p + ppb as usize].fill(0);
    }

    /// Erase interrupted: untouched, fully erased, or pages left erased or
    /// garbage at random (garbage pages count as programmed).
    fn partial_erase(&mut self, block: u32) {
        match self.rng.gen_range(0..3) {
            0 => {}
            1 => {
                self.erase_counts[block as usize] += 1;
                self.fill_erased(block);
            }
            _ => self.garble_block(block),
        }
    }

    fn garble_block(&mut self, block: u32) {
        let pb = self.cfg.page_bytes as usize;
        for page in 0..self.cfg.pages_per_block {
            let pi = self.page_index(block, page);
            let pos = page * pb as u32;
            if self.rng.gen_bool(0.5) {
                self.data.slice_mut(block, pos, pb).fill(0xFF);
                self.programmed[pi] = 0;
            } else {
                let keep = self.rng.gen_range(0..pb);
                let bytes = self.data.slice_mut(block, pos, pb);
                for b in &mut bytes[keep..] {
                    *b |= self.rng.gen::<u8>();
                }
                bytes[0] &= 0xFE;
                self.programmed[pi] = 0xFF;
            }
        }
    }

    /// Reads the OOB area of one page.
    pub fn read_oob(&mut self, block: u32, page: u32, buf: &mut [u8], cause: Cause) -> Result<(), MtdError> {
        if self.no_oob()
            || block >= self.cfg.blocks
            || page >= self.cfg.pages_per_block
            || buf.len() > self.cfg.oob_bytes as usize
        {
            return Err(MtdError::BadAddress { block, offs: page, len: buf.len() as u32 });
        }
        if self.begin_op()? {
            return Err(MtdError::PowerCut);
        }
        self.stats.pages_read.add(cause, 1);
        let o = self.oob_index(block, page);
        self.oob.read(o, buf);
        Ok(())
    }

    /// Programs the OOB area of one page (once per erase cycle).
    pub fn program_oob(&mut self, block: u32, page: u32, src: &[u8], cause: Cause) -> Result<(), MtdError> {
        if self.no_oob()
            || block >= self.cfg.blocks
            || page >= self.cfg.pages_per_block
            || src.len() > self.cfg.oob_bytes as usize
        {
            return Err(MtdError::BadAddress { block, offs: page, len: src.len() as u32 });
        }
        let cut = self.begin_op()?;
        let pi = self.page_index(block, page);
        if self.programmed[pi] & OOB_BIT != 0 {
            return Err(MtdError::AlreadyProgrammed { block, offs: page * self.cfg.page_bytes });
        }
        self.stats.pages_programmed.add(cause, 1);
        self.programmed[pi] |= OOB_BIT;
        let o = self.oob_index(block, page);
        for (k, s) in src.iter().enumerate() {
            let v = if cut { self.rng.gen::<u8>() } else { *s };
            self.oob.and(o + k, v);
        }
        if cut {
            return Err(MtdError::PowerCut);
        }
        Ok(())
    }

    fn is_marked_bad(&self, block: u32) -> bool {
        self.oob.marker(block as usize) != 0xFF
    }

    /// block2mtd has no OOB area (`mtd->oobsize` 0).
    fn no_oob(&self) -> bool {
        matches!(self.backend, Backend::Block2Mtd(_))
    }

    /// Checks the bad-block marker (one OOB read operation). On block2mtd
    /// (no `_block_isbad`) every block is good and the check costs nothing.
    pub fn is_bad(&mut self, block: u32) -> Result<bool, MtdError> {
        if self.no_oob() {
            self.check_range(block, 0, 0)?;
            return Ok(self.is_marked_bad(block));
        }
        let mut b = [0u8; 1];
        self.read_oob(block, 0, &mut b, Cause::Mount)?;
        Ok(b[0] != 0xFF)
    }

    /// Writes the bad-block marker (one operation); the block is never
    /// erased or programmed again.
    pub fn mark_bad(&mut self, block: u32) -> Result<(), MtdError> {
        if block >= self.cfg.blocks {
            return Err(MtdError::BadAddress { block, offs: 0, len: 0 });
        }
        if self.begin_op()? {
            return Err(MtdError::PowerCut);
        }
        let o = self.oob_index(block, 0);
        self.oob.set(o, 0);
        self.worn[block as usize] = true;
        Ok(())
    }

    /// Number of blocks currently marked bad (no operation counted).
    pub fn bad_block_count(&self) -> u32 {
        (0..self.cfg.blocks).filter(|b| self.is_marked_bad(*b)).count() as u32
    }
}
