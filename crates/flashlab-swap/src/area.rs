//! The swap area: one `swap_map` counter per 4 KiB slot, as `struct swap_info_struct`
//! of Linux 2.6.34 (include/linux/swap.h), with its allocation hints.
//!
//! Slot 0 holds the swap header and is marked bad (`SWAP_MAP_BAD`, set by
//! `sys_swapon`). A slot is taken and freed as `scan_swap_map`'s `checks:` section and
//! `swap_entry_free` do it, keeping `lowest_bit`, `highest_bit` and `inuse_pages`.
//! Beside the kernel's state the area keeps, per slot, whether it holds data written
//! since its last discard (`written`): what the FTL still maps, which the semantic
//! allocator's rule 2 asks for.

/// Slots per cluster (`SWAPFILE_CLUSTER`, 256 = 1 MiB of 4 KiB pages).
pub const CLUSTER: u32 = 256;
/// `swap_map` value of a bad slot (the header).
pub const MAP_BAD: u8 = 0x3f;
/// Bytes per slot (a page).
pub const SLOT_BYTES: u64 = 4096;

/// A discard (TRIM) of `len` slots from `start`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Discard {
    pub start: u32,
    pub len: u32,
}

/// `struct swap_info_struct`: the kernel's per-area state, single-threaded.
#[derive(Clone, Debug)]
pub struct SwapArea {
    /// One counter per slot: 0 = free, 1 = in use, [`MAP_BAD`].
    pub map: Vec<u8>,
    /// Slot holds data written since its last discard (bitset).
    written: Vec<u64>,
    /// Slots including the header (`si->max`).
    pub max: u32,
    /// Usable slots (`si->pages`).
    pub pages: u32,
    pub inuse_pages: u32,
    pub lowest_bit: u32,
    pub highest_bit: u32,
    pub cluster_next: u32,
    pub cluster_nr: u32,
    /// Slots in use per aligned cluster (the header counts), as the `cluster_info` of
    /// Linux 3.12+; every allocator may read it.
    pub cluster_used: Vec<u16>,
}

impl SwapArea {
    /// An area of `max` slots, slot 0 the header (`sys_swapon`, `setup_swap_map_and_extents`).
    pub fn new(max: u32) -> SwapArea {
        assert!(max >= 2, "a swap area needs the header and one slot");
        let mut map = vec![0u8; max as usize];
        map[0] = MAP_BAD;
        SwapArea {
            map,
            written: vec![0; (max as usize).div_ceil(64)],
            max,
            pages: max - 1,
            inuse_pages: 0,
            lowest_bit: 1,
            highest_bit: max - 1,
            cluster_next: 1,
            cluster_nr: 0,
            cluster_used: {
                let mut c = vec![0u16; max.div_ceil(CLUSTER) as usize];
                c[0] = 1;
                c
            },
        }
    }

    #[inline]
    pub fn is_free(&self, slot: u32) -> bool {
        self.map[slot as usize] == 0
    }

    /// Mark free `slot` in use: the `checks:` tail of `scan_swap_map`.
    #[inline]
    pub fn take(&mut self, offset: u32) {
        debug_assert!(self.is_free(offset), "slot {offset} taken twice");
        if offset == self.lowest_bit {
            self.lowest_bit += 1;
        }
        if offset == self.highest_bit {
            self.highest_bit -= 1;
        }
        self.inuse_pages += 1;
        if self.inuse_pages == self.pages {
            self.lowest_bit = self.max;
            self.highest_bit = 0;
        }
        self.map[offset as usize] = 1;
        self.cluster_used[(offset / CLUSTER) as usize] += 1;
        self.cluster_next = offset + 1;
    }

    /// Free a slot in use: `swap_entry_free`.
    #[inline]
    pub fn free(&mut self, offset: u32) {
        assert_eq!(self.map[offset as usize], 1, "freeing slot {offset} not in use");
        self.map[offset as usize] = 0;
        self.cluster_used[(offset / CLUSTER) as usize] -= 1;
        if offset < self.lowest_bit {
            self.lowest_bit = offset;
        }
        if offset > self.highest_bit {
            self.highest_bit = offset;
        }
        self.inuse_pages -= 1;
    }

    /// `[start, start + len)` is wholly free.
    pub fn range_free(&self, start: u32, len: u32) -> bool {
        start + len <= self.max && self.map[start as usize..(start + len) as usize].iter().all(|&c| c == 0)
    }

    #[inline]
    pub fn written(&self, slot: u32) -> bool {
        self.written[slot as usize / 64] >> (slot % 64) & 1 == 1
    }

    /// The slot was written to the device.
    #[inline]
    pub fn mark_written(&mut self, slot: u32) {
        self.written[slot as usize / 64] |= 1 << (slot % 64);
    }

    /// Slots of `d` were discarded. Panics when one is in use: no TRIM ever covers a
    /// slot in use (every allocator's invariant).
    pub fn mark_discarded(&mut self, d: Discard) {
        for s in d.start..d.start + d.len {
            assert!(self.map[s as usize] == 0, "discard of {d:?} covers slot {s} in use");
            self.written[s as usize / 64] &= !(1 << (s % 64));
        }
    }

    /// Aligned clusters in the area (the last one may be partial).
    pub fn clusters(&self) -> u32 {
        self.max.div_ceil(CLUSTER)
    }

    /// Aligned cluster `c` lies wholly inside the area and no slot of it is in use.
    #[inline]
    pub fn cluster_free(&self, c: u32) -> bool {
        (c + 1) * CLUSTER <= self.max && self.cluster_used[c as usize] == 0
    }

    /// Some slot of `[start, start + len)` holds written data.
    pub fn any_written(&self, start: u32, len: u32) -> bool {
        (start..start + len).any(|s| self.written(s))
    }

    /// The full-area invariants: counters agree with the map, hints bound the free slots.
    pub fn check(&self) -> Result<(), String> {
        for c in 0..self.clusters() {
            let (a, b) = (c * CLUSTER, ((c + 1) * CLUSTER).min(self.max));
            let n = self.map[a as usize..b as usize].iter().filter(|&&m| m != 0).count();
            if n != self.cluster_used[c as usize] as usize {
                return Err(format!("cluster {c}: {} counted in use, {n} in the map", self.cluster_used[c as usize]));
            }
        }
        let used = self.map[1..].iter().filter(|&&c| c != 0).count() as u32;
        if used != self.inuse_pages {
            return Err(format!("inuse_pages {} but {used} slots in use", self.inuse_pages));
        }
        if self.inuse_pages < self.pages {
            let first = (1..self.max).find(|&s| self.is_free(s)).expect("a free slot");
            let last = (1..self.max).rev().find(|&s| self.is_free(s)).expect("a free slot");
            if first < self.lowest_bit || last > self.highest_bit {
                return Err(format!(
                    "free slots {first}..={last} outside lowest_bit {} highest_bit {}",
                    self.lowest_bit, self.highest_bit
                ));
            }
        }
        Ok(())
    }
}
