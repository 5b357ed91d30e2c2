//! The swap system: an application's references through RAM, the allocator, the swap
//! area and the block device, with run time = CPU time + time blocked on swap I/O and
//! TRIM (from the device's completion times).
//!
//! - fault on a page never touched: a zero-filled frame (dirty, no slot);
//! - fault on a swapped page: `swapin_readahead` (mm/swap_state.c, 2.6.34
//!   `valid_swaphandles`): the aligned window of 2^page_cluster slots around it, every
//!   slot in use whose page is not resident, read in runs of consecutive slots; the
//!   task waits for the run holding its page. With the area more than half full
//!   (`vm_swap_full()`) the faulting page's slot is freed at once (`do_swap_page`);
//! - no free frame: reclaim a batch of `SWAP_CLUSTER_MAX` = 32 frames by CLOCK
//!   (`shrink_page_list`): a dirty page (or one without a slot) gets a slot
//!   (`add_to_swap` → `get_swap_page`) and is written; a clean swap-cache page is
//!   dropped. Writes of consecutive slots go as one request (the block layer's merge);
//!   write-back overlaps the task, which waits for the previous batch when it has
//!   submitted the next (direct reclaim throttled on writeback), so an allocation-time
//!   TRIM may find writes in flight and, non-queued, wait for them to drain;
//! - discards: `sys_swapon`'s before the run; allocation-time ones (`linux`,
//!   `semantic`) block the allocating task, as `blkdev_issue_discard(..., WAIT)` did;
//!   `linux-modern`'s discard of a freed cluster is sent from a work item and does not
//!   block the task (the non-queued TRIM still holds later requests in the SSD).

use crate::alloc::{Allocator, DeviceFlags};
use crate::app::{AppModel, Ref};
use crate::area::{Discard, SwapArea, CLUSTER};
use crate::device::BlockDev;
use crate::memory::{Memory, NONE};
use crate::trace::RefTrace;
use crate::{DeviceKind, SwapError, SwapResult, SwapSettings};
use flashlab_sim::Op;

/// `SWAP_CLUSTER_MAX`: pages reclaimed per batch.
pub const RECLAIM_BATCH: usize = 32;

/// What the application does.
pub enum Workload<'a> {
    App(&'a AppModel),
    Trace(&'a RefTrace),
}

#[derive(Clone, Copy, Debug, Default)]
struct Stats {
    references: u64,
    cpu_ns: u64,
    io_wait_ns: u64,
    trim_wait_ns: u64,
    swap_outs: u64,
    swap_ins: u64,
    faults: u64,
    readahead: u64,
    write_reqs: u64,
    read_reqs: u64,
    trims: u64,
    trim_slots: u64,
    trim_ns: u64,
    swapon_trim_ns: Option<u64>,
}

/// RAM, swap area, allocator and device of one run.
pub struct SwapSystem {
    s: SwapSettings,
    pub area: SwapArea,
    alloc: Allocator,
    pub dev: BlockDev,
    flags: DeviceFlags,
    pub mem: Memory,
    slot_page: Vec<u32>,
    /// Device content tag of each page's swap copy (content checks only).
    page_tag: Vec<u32>,
    check: bool,
    now: u64,
    /// Completion of the last batch of swap-out writes.
    prev_batch_done: u64,
    start: u64,
    timed: bool,
    st: Stats,
    scratch: Vec<u32>,
}

impl SwapSystem {
    /// `sys_swapon` over `dev` for an application of `pages` pages; `check` = verify
    /// every swap-in against the device's content tags.
    pub fn new(s: SwapSettings, dev: BlockDev, pages: u32, check: bool, timed: bool) -> Result<Self, SwapError> {
        let mut area = SwapArea::new(s.slots);
        let flags = dev.flags();
        if flags.solid_state {
            // sys_swapon: `p->cluster_next = 1 + (random32() % p->highest_bit)` on SSDs.
            let r = flashlab_workload::mix64(flashlab_workload::sub_seed(s.seed, "swapon"));
            area.cluster_next = 1 + (r % area.highest_bit as u64) as u32;
        }
        let alloc = Allocator::new(s.allocator, &area);
        let mut sys = SwapSystem {
            mem: Memory::new(s.ram_pages, pages),
            slot_page: vec![NONE; s.slots as usize],
            page_tag: if check { vec![0; pages as usize] } else { Vec::new() },
            s,
            area,
            alloc,
            dev,
            flags,
            check,
            now: 0,
            prev_batch_done: 0,
            start: 0,
            timed,
            st: Stats::default(),
            scratch: Vec::new(),
        };
        if let Some(d) = sys.alloc.swapon(&mut sys.area, flags) {
            let done = sys.dev.discard(d.start, d.len, 0)?;
            sys.st.swapon_trim_ns = done;
            sys.now = done.unwrap_or(0);
            sys.start = sys.now;
        }
        Ok(sys)
    }

    /// One reference of the application, after `cpu_ns` of CPU.
    #[inline]
    pub fn reference(&mut self, r: Ref, cpu_ns: u64) -> Result<(), SwapError> {
        self.st.references += 1;
        self.st.cpu_ns += cpu_ns;
        self.now += cpu_ns;
        self.access(r.page, r.write)
    }

    /// Touch `page` (reading or writing it), faulting it in if needed.
    #[inline]
    pub fn access(&mut self, page: u32, write: bool) -> Result<(), SwapError> {
        if !self.mem.resident(page) {
            self.fault(page)?;
        }
        self.mem.touch(page);
        if write && !self.mem.dirty(page) {
            self.mem.set_dirty(page, true);
            // The swap copy is stale: free the slot (`try_to_free_swap`).
            self.drop_slot(page)?;
        }
        Ok(())
    }

    /// Swap `page` out now if resident (the model-based test's "swap-out").
    pub fn evict(&mut self, page: u32) -> Result<(), SwapError> {
        if self.mem.resident(page) {
            self.swap_out(&[page])?;
        }
        Ok(())
    }

    /// The application frees `page` (munmap): its frame and slot go.
    pub fn release(&mut self, page: u32) -> Result<(), SwapError> {
        if self.mem.resident(page) {
            self.mem.unmap(page);
        }
        self.mem.set_dirty(page, false);
        self.drop_slot(page)
    }

    fn drop_slot(&mut self, page: u32) -> Result<(), SwapError> {
        let slot = self.mem.slot_of[page as usize];
        if slot == NONE {
            return Ok(());
        }
        self.mem.slot_of[page as usize] = NONE;
        self.slot_page[slot as usize] = NONE;
        if let Some(d) = self.alloc.free(&mut self.area, slot, self.flags) {
            self.discard(d, false)?;
        }
        Ok(())
    }

    fn fault(&mut self, page: u32) -> Result<(), SwapError> {
        if self.mem.slot_of[page as usize] == NONE {
            let f = self.frame()?;
            self.mem.map(page, f);
            self.mem.set_dirty(page, true);
            return Ok(());
        }
        self.swap_in(page)
    }

    /// `swapin_readahead` of the window around `page`'s slot.
    fn swap_in(&mut self, page: u32) -> Result<(), SwapError> {
        let slot = self.mem.slot_of[page as usize];
        let win = 1u32 << self.s.page_cluster;
        let base = slot & !(win - 1);
        let mut slots = std::mem::take(&mut self.scratch);
        slots.clear();
        for s in base.max(1)..(base + win).min(self.area.max) {
            let p = self.slot_page[s as usize];
            if p != NONE && !self.mem.resident(p) {
                slots.push(s);
            }
        }
        debug_assert!(slots.contains(&slot));
        // Frames first: a reclaim may run, and it must not evict pages of this read.
        let mut frames = Vec::with_capacity(slots.len());
        for _ in 0..slots.len() {
            frames.push(self.frame()?);
        }
        let (issue, mut wait) = (self.now, self.now);
        let mut i = 0;
        while i < slots.len() {
            let mut j = i + 1;
            while j < slots.len() && slots[j] == slots[j - 1] + 1 {
                j += 1;
            }
            let done = self.dev.io(Op::Read, slots[i], (j - i) as u32, issue)?;
            self.st.read_reqs += 1;
            if slots[i..j].contains(&slot) {
                wait = wait.max(done.unwrap_or(issue));
            }
            i = j;
        }
        for (k, &s) in slots.iter().enumerate() {
            let p = self.slot_page[s as usize];
            if self.check {
                self.check_tag(p, s)?;
            }
            self.mem.map(p, frames[k]);
            self.mem.set_dirty(p, false);
        }
        self.st.swap_ins += slots.len() as u64;
        self.st.readahead += slots.len() as u64 - 1;
        self.st.faults += 1;
        self.st.io_wait_ns += wait - self.now;
        self.now = wait;
        self.scratch = slots;
        if 2 * self.area.inuse_pages > self.area.pages {
            // vm_swap_full(): do_swap_page frees the slot of the page it swapped in.
            self.drop_slot(page)?;
            self.mem.set_dirty(page, true);
        }
        Ok(())
    }

    /// The device holds what was last swapped out from `page` in `slot`.
    fn check_tag(&self, page: u32, slot: u32) -> Result<(), SwapError> {
        let Some(got) = self.dev.tag(slot) else { return Ok(()) };
        let want = self.page_tag[page as usize];
        if got == 0 || got != want {
            return Err(SwapError::Content(format!(
                "page {page} swapped in from slot {slot}: the device holds tag {got}, its swap-out wrote {want}"
            )));
        }
        Ok(())
    }

    /// A free frame, reclaiming a batch when none is left.
    fn frame(&mut self) -> Result<u32, SwapError> {
        loop {
            if let Some(f) = self.mem.free_frame() {
                return Ok(f);
            }
            // At most half the frames, so the CLOCK hand never offers a page twice.
            let want = RECLAIM_BATCH.min((self.mem.frames() as usize / 2).max(1));
            let mut batch = Vec::with_capacity(want);
            while batch.len() < want {
                match self.mem.victim() {
                    Some(p) if batch.contains(&p) => break,
                    Some(p) => {
                        batch.push(p);
                        self.mem.touch(p); // not chosen twice in one batch
                    }
                    None => break,
                }
            }
            if batch.is_empty() {
                return Err(SwapError::Full("no frame to reclaim".into()));
            }
            self.swap_out(&batch)?;
        }
    }

    /// `shrink_page_list` over `pages`: write the dirty ones to new slots, drop all.
    fn swap_out(&mut self, pages: &[u32]) -> Result<(), SwapError> {
        let mut writes: Vec<u32> = Vec::with_capacity(pages.len());
        for &p in pages {
            if self.mem.dirty(p) || self.mem.slot_of[p as usize] == NONE {
                self.drop_slot(p)?;
                let Some((slot, d)) = self.alloc.get(&mut self.area, self.flags) else {
                    return Err(SwapError::Full(format!(
                        "{} of {} slots in use (swap.swap_mib too small for the footprint)",
                        self.area.inuse_pages, self.area.pages
                    )));
                };
                if let Some(d) = d {
                    self.discard(d, true)?;
                }
                self.mem.slot_of[p as usize] = slot;
                self.slot_page[slot as usize] = p;
                self.mem.set_dirty(p, false);
                writes.push(slot);
            }
            self.mem.unmap(p);
        }
        writes.sort_unstable();
        let mut done = self.now;
        let mut i = 0;
        while i < writes.len() {
            let mut j = i + 1;
            while j < writes.len() && writes[j] == writes[j - 1] + 1 {
                j += 1;
            }
            let n = (j - i) as u32;
            if let Some(t) = self.dev.io(Op::Write, writes[i], n, self.now)? {
                done = done.max(t);
            }
            self.st.write_reqs += 1;
            for &s in &writes[i..j] {
                self.area.mark_written(s);
                if self.check {
                    let p = self.slot_page[s as usize];
                    self.page_tag[p as usize] = self.dev.tag(s).unwrap_or(0);
                }
            }
            i = j;
        }
        self.st.swap_outs += writes.len() as u64;
        // Write-back overlaps the task: it waits for the previous batch, not this one
        // (at most two batches in flight, as direct reclaim throttles on writeback).
        let wait = self.prev_batch_done.max(self.now);
        self.st.io_wait_ns += wait - self.now;
        self.now = wait;
        self.prev_batch_done = done;
        Ok(())
    }

    /// Send discard `d`; `wait` = the task waits for it.
    fn discard(&mut self, d: Discard, wait: bool) -> Result<(), SwapError> {
        let issue = self.now;
        let done = self.dev.discard(d.start, d.len, issue)?;
        self.st.trims += 1;
        self.st.trim_slots += d.len as u64;
        if let Some(t) = done {
            self.st.trim_ns += t - issue;
            if wait {
                self.st.trim_wait_ns += t - issue;
                self.now = t;
            }
        }
        Ok(())
    }

    /// The result so far; `app`, `footprint` describe the workload.
    pub fn result(&mut self, app: &str, footprint_pages: u32) -> SwapResult {
        let st = self.st;
        let secs = |ns: u64| ns as f64 / 1e9;
        let timed = self.timed;
        let run_ns = self.now - self.start;
        let ssd = match &mut self.dev {
            BlockDev::Ssd(ssd) => Some(ssd.result()),
            BlockDev::Disk(_) => None,
        };
        SwapResult {
            app: app.to_string(),
            allocator: self.s.allocator.name().to_string(),
            device: match self.s.device {
                DeviceKind::Ssd => "ssd",
                DeviceKind::Disk => "disk",
            }
            .to_string(),
            ram_mib: self.s.ram_pages as u64 / 256,
            swap_mib: self.s.slots as u64 / 256,
            footprint_mib: footprint_pages as f64 / 256.0,
            references: st.references,
            swapping: st.swap_outs > 0,
            run_time_s: timed.then(|| secs(run_ns)),
            cpu_time_s: secs(st.cpu_ns),
            swap_io_wait_s: timed.then(|| secs(st.io_wait_ns)),
            trim_wait_s: timed.then(|| secs(st.trim_wait_ns)),
            swap_outs: st.swap_outs,
            swap_ins: st.swap_ins,
            major_faults: st.faults,
            readahead_pages: st.readahead,
            swap_write_requests: st.write_reqs,
            swap_read_requests: st.read_reqs,
            swap_out_rate_pages_per_s: (timed && run_ns > 0).then(|| st.swap_outs as f64 / secs(run_ns)),
            trim_commands: st.trims,
            trim_slots: st.trim_slots,
            trim_time_s_total: timed.then(|| secs(st.trim_ns)),
            trim_time_ms_mean: (timed && st.trims > 0).then(|| st.trim_ns as f64 / st.trims as f64 / 1e6),
            swapon_trim_ms: st.swapon_trim_ns.filter(|_| timed).map(|t| t as f64 / 1e6),
            ssd_waf: ssd.as_ref().and_then(|r| r.waf),
            ssd_erases: ssd.as_ref().map(|r| r.nand_erases),
            ssd_gc_runs: ssd.as_ref().map(|r| r.gc_runs),
            ssd_gc_copied_pages: ssd.as_ref().map(|r| r.gc_copied_pages),
            wall_time_s: 0.0,
        }
    }

    /// Check the area's invariants and that every slot's owner points back to it.
    pub fn check_invariants(&self) -> Result<(), SwapError> {
        self.area.check().map_err(SwapError::Content)?;
        for (s, &p) in self.slot_page.iter().enumerate() {
            if p != NONE && self.mem.slot_of[p as usize] != s as u32 {
                return Err(SwapError::Content(format!("slot {s} owned by page {p} which points elsewhere")));
            }
            if p != NONE && self.area.map[s] != 1 {
                return Err(SwapError::Content(format!("slot {s} holds page {p} but is free in swap_map")));
            }
        }
        Ok(())
    }

    /// Clusters of the area (for reports).
    pub fn clusters(&self) -> u32 {
        self.area.max.div_ceil(CLUSTER)
    }
}

/// Run `w` on a fresh swap system over `dev`.
pub fn run(s: &SwapSettings, dev: BlockDev, w: Workload, check: bool, timed: bool) -> Result<SwapResult, SwapError> {
    let (name, pages, cpu) = match &w {
        Workload::App(m) => (m.name.clone(), m.footprint_pages(), m.cpu_ns_per_reference),
        Workload::Trace(t) => ("trace".to_string(), t.pages, s.trace_cpu_ns),
    };
    if pages as u64 > s.ram_pages as u64 + s.slots as u64 - 1 {
        return Err(SwapError::Config(format!(
            "swap.swap_mib = {}: RAM and swap ({} MiB) cannot hold the footprint of {} MiB",
            s.slots / 256,
            (s.ram_pages as u64 + s.slots as u64) / 256,
            pages / 256
        )));
    }
    let mut sys = SwapSystem::new(s.clone(), dev, pages, check, timed)?;
    let limit = if s.max_references == 0 { u64::MAX } else { s.max_references };
    match w {
        Workload::App(m) => {
            for r in m.references(s.seed).take(limit.min(usize::MAX as u64) as usize) {
                sys.reference(r, cpu)?;
            }
        }
        Workload::Trace(t) => {
            for &r in t.refs.iter().take(limit.min(usize::MAX as u64) as usize) {
                sys.reference(r, cpu)?;
            }
        }
    }
    Ok(sys.result(&name, pages))
}
