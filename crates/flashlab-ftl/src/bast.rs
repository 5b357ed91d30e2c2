//! `bast` (Kim, Kim, Noh, Min, Cho: "A space-efficient flash translation layer for
//! CompactFlash systems", IEEE TCE 2002) and `bast-padding` (seed 004, Choi & Shin).
//!
//! Data units are block-mapped (see `block.rs` for in-place writes). An update of a
//! page whose position is taken goes to the logical unit's log block, one of a pool of
//! `ftl.log_blocks` page-mapped log units, each tied to one data unit (Kim et al. §3).
//! While a logical unit has a log block all its writes go there. A log block is merged
//! as soon as it is full, or when the pool is empty and a new one is needed (victim by
//! `ftl.log_victim`). With D = the data unit, L = its log block, U = pages per unit:
//! - switch (L holds offset k at position k for every position, and is full): L
//!   becomes the data unit, D is erased. Cost: 0 reads, 0 programs, 1 unit erase.
//! - partial (L in that order up to position k < U): the newest copies of offsets
//!   k..U−1 are copied to L at their offsets, then switch. Cost: v reads, v programs
//!   (v = valid pages among those offsets), 1 unit erase.
//! - full (otherwise): a free unit receives the newest copy of every page of the
//!   logical unit; D and L are erased. Cost: v reads, v programs (v = valid pages of
//!   the logical unit), 2 unit erases.
//!
//! An erase of a unit erases its programmed blocks (one block without superblocks).
//!
//! Padding (seed 004 §3): when offset o is written into a log block that is still in
//! order at position p < o, first copy the valid pages of offsets p..o−1 from the data
//! unit, so that the log block stays in order and a switch or partial merge replaces
//! the full merge. Padding stops for a log block once it is out of order (e.g. a padded
//! page is written again). Padding copies are `Cause::Padding`, counted in `padding_pages`.

use crate::mapping::{units_common, Mapping};
use crate::units::{Stored, Units, NONE};
use crate::{FtlError, FtlSettings, LogVictim, Scheme};
use flashlab_nand::{Cause, Geometry};
use rand::Rng;

mod order;
use order::LogOrder;

/// A log block of the pool.
#[derive(Clone, Copy, Debug)]
pub(crate) struct LogSlot {
    /// The log unit (NONE = slot unused) and the logical unit it belongs to.
    pub unit: u32,
    pub lbn: u32,
    /// Every programmed position k holds offset k (skipped positions allowed).
    pub in_order: bool,
    /// Logical clock of its allocation and its last write (FIFO and LRU victims).
    pub born: u64,
    pub used: u64,
}

const UNUSED: LogSlot = LogSlot { unit: NONE, lbn: NONE, in_order: true, born: 0, used: 0 };

/// Pick the victim among the used slots of a log pool.
pub(crate) fn log_victim(slots: &[LogSlot], policy: LogVictim, rng: &mut impl Rng) -> usize {
    log_victims(slots, policy, rng).0
}

/// Pick the victim among the used slots of a log pool and, under `lru` and `fifo`, the
/// one that would follow it (the next victim unless a write reorders the pool: a hint
/// for prefetching, [`crate::units::Units::prefetch_merge`]).
pub(crate) fn log_victims(slots: &[LogSlot], policy: LogVictim, rng: &mut impl Rng) -> (usize, Option<usize>) {
    match policy {
        LogVictim::Lru => two_oldest(slots, |s| s.used),
        LogVictim::Fifo => two_oldest(slots, |s| s.born),
        LogVictim::Random => {
            let n = slots.iter().filter(|s| s.unit != NONE).count();
            let pick = rng.gen_range(0..n);
            let v = slots.iter().enumerate().filter(|(_, s)| s.unit != NONE).nth(pick).map(|(i, _)| i);
            (v.expect("a victim is chosen only from a non-empty pool"), None)
        }
    }
}

/// The used slots with the smallest and second-smallest `key`; the first of equal
/// smallest ones wins, as `Iterator::min_by_key`. One pass, almost never taking a branch
/// once the two are found (unused slots count as `u64::MAX` and never win).
fn two_oldest(slots: &[LogSlot], key: impl Fn(&LogSlot) -> u64) -> (usize, Option<usize>) {
    let (mut b1, mut i1, mut b2, mut i2) = (u64::MAX, usize::MAX, u64::MAX, usize::MAX);
    for (i, s) in slots.iter().enumerate() {
        let k = if s.unit == NONE { u64::MAX } else { key(s) };
        if k < b2 {
            if k < b1 {
                (b2, i2, b1, i1) = (b1, i1, k, i);
            } else {
                (b2, i2) = (k, i);
            }
        }
    }
    assert!(i1 != usize::MAX, "a victim is chosen only from a non-empty pool");
    (i1, (i2 != usize::MAX).then_some(i2))
}

pub struct BastFtl {
    pub(crate) u: Units,
    logs: Vec<LogSlot>,
    /// The used slots by victim key (`used` under `lru` and `random`, `born` under
    /// `fifo`), kept as the pool changes ([`LogOrder`]).
    order: LogOrder,
    in_use: u32,
    padding: bool,
}

impl BastFtl {
    pub fn new(geo: Geometry, s: FtlSettings) -> Result<Self, FtlError> {
        let (n, padding) = (s.mapping.log_blocks, s.mapping.scheme == Scheme::BastPadding);
        let u = Units::new(geo, s)?;
        if n == 0 || u.lbns() as u64 + n as u64 >= u.units() as u64 {
            return Err(FtlError::Mapping(format!(
                "ftl.log_blocks = {n}: expected 1 to {} (the spare mapping units less one for merges)",
                u.units() - u.lbns() - 1
            )));
        }
        let order = LogOrder::new(n as usize);
        Ok(BastFtl { u, logs: vec![UNUSED; n as usize], order, in_use: 0, padding })
    }

    /// A fresh log block for `lbn`, after merging a victim if the pool is empty.
    fn new_log(&mut self, lbn: u32) -> Result<usize, FtlError> {
        let slot = if self.in_use as usize == self.logs.len() {
            let (v, next) = self.victims();
            if let Some(n) = next {
                // The next merge's tables arrive while this one copies.
                self.u.prefetch_log_merge(self.logs[n].lbn, self.logs[n].unit);
            }
            self.merge(v)?;
            // The pool was full, so the victim's is the only (hence the first) free slot.
            v
        } else {
            self.logs.iter().position(|s| s.unit == NONE).expect("a free slot")
        };
        let hint = self.u.group_of(self.u.lu[lbn as usize].data);
        let unit = self.u.alloc(Some(hint))?;
        let now = self.u.clock;
        self.logs[slot] = LogSlot { unit, lbn, in_order: true, born: now, used: now };
        if self.u.s.mapping.log_victim == LogVictim::Fifo {
            self.order.insert(slot, now);
        } // else its key is its first write's clock, set by `append` (which follows).
        self.u.start_in_order_log(lbn, unit);
        self.u.lu[lbn as usize].slot = slot as u32;
        self.in_use += 1;
        Ok(slot)
    }

    /// The victim and the next one: under `lru` and `fifo` the head of the kept order
    /// (the same slots as [`log_victims`]' scan, see `bast/order.rs`).
    fn victims(&mut self) -> (usize, Option<usize>) {
        match self.u.s.mapping.log_victim {
            LogVictim::Lru | LogVictim::Fifo => self.order.first_two(),
            LogVictim::Random => log_victims(&self.logs, LogVictim::Random, &mut self.u.rng),
        }
    }

    /// Write `lpn` (offset `o` of `lbn`) into log slot `slot`, padding first if enabled.
    fn append(&mut self, slot: usize, lbn: u32, o: u32, lpn: u64) {
        let LogSlot { unit, in_order, .. } = self.logs[slot];
        let pos = self.u.fill[unit as usize];
        let at = if in_order && o > pos && self.padding {
            self.u.stats.padding_pages += self.u.copy_range(lbn, unit, (pos, o), Cause::Padding, Stored::In(NONE));
            o
        } else {
            pos
        };
        if in_order && at != o {
            self.u.end_in_order_log(lbn, unit);
            self.logs[slot].in_order = false;
        }
        self.u.host_program(unit, at, lpn);
        self.logs[slot].used = self.u.clock;
        if self.u.s.mapping.log_victim != LogVictim::Fifo {
            self.order.set(slot, self.u.clock);
        }
    }

    /// Merge log slot `slot` with its data unit (switch, partial or full) and free the slot.
    fn merge(&mut self, slot: usize) -> Result<(), FtlError> {
        let LogSlot { unit: log, lbn, in_order, .. } = self.logs[slot];
        let data = self.u.lu[lbn as usize].data;
        if in_order {
            let k = self.u.fill[log as usize];
            if k >= self.u.lbn_pages(lbn) {
                self.u.stats.merges_switch += 1;
            } else {
                self.u.copy_rest(lbn, log, k, Stored::In(NONE));
                self.u.stats.merges_partial += 1;
            }
            assert_eq!(self.u.unit_valid(data), 0, "switch: data unit {data} of {lbn} still holds valid pages");
            self.u.erase_unit(data, Cause::Merge);
            self.u.lu[lbn as usize].data = log;
        } else {
            let new = self.u.alloc(Some(self.u.group_of(data)))?;
            self.u.copy_rest(lbn, new, 0, Stored::In(log));
            self.u.stats.merges_full += 1;
            self.u.erase_unit(data, Cause::Merge);
            self.u.erase_unit(log, Cause::Merge);
            self.u.lu[lbn as usize].data = new;
        }
        self.free_slot(slot);
        Ok(())
    }

    fn free_slot(&mut self, slot: usize) {
        self.order.remove(slot);
        self.u.forget_in_order_log(self.logs[slot].lbn);
        self.u.lu[self.logs[slot].lbn as usize].slot = NONE;
        self.logs[slot] = UNUSED;
        self.in_use -= 1;
    }

    fn strict(&mut self, lpn: u64) -> Result<(), FtlError> {
        if self.u.strict_due(lpn)? {
            self.check_invariants()?;
        }
        Ok(())
    }

    /// The pool agrees with the logical units' `slot`; units are data, logs or free, each once.
    fn check_scheme(&self) -> Result<(), String> {
        let used: Vec<_> = self.logs.iter().enumerate().filter(|(_, s)| s.unit != NONE).collect();
        if used.len() != self.in_use as usize {
            return Err(format!("{} log slots used, {} counted", used.len(), self.in_use));
        }
        for (i, s) in &used {
            if self.u.lu[s.lbn as usize].slot != *i as u32 || self.u.lu[s.lbn as usize].data == NONE {
                return Err(format!("log slot {i} of logical unit {} is not its log or it has no data unit", s.lbn));
            }
        }
        let policy = self.u.s.mapping.log_victim;
        if !used.is_empty() && policy != LogVictim::Random {
            let key = |s: &LogSlot| if policy == LogVictim::Fifo { s.born } else { s.used };
            if self.order.first_two() != two_oldest(&self.logs, key) {
                return Err(format!("the kept log order {:?} is not the scan's", self.order.first_two()));
            }
        }
        // Only an out-of-order log's pages have stored locations (the merges' hint).
        for lbn in 0..self.u.lbns() {
            let slot = self.u.lu[lbn as usize].slot;
            let log =
                if slot == NONE || self.logs[slot as usize].in_order { NONE } else { self.logs[slot as usize].unit };
            self.u.check_stored_in(lbn, log)?;
        }
        let data = self.u.lu.iter().filter(|l| l.data != NONE).count();
        if data + used.len() + self.u.free_units() != self.u.units() as usize {
            return Err(format!(
                "{data} data + {} log + {} free units != {}",
                used.len(),
                self.u.free_units(),
                self.u.units()
            ));
        }
        Ok(())
    }
}

impl Mapping for BastFtl {
    fn write(&mut self, lpn: u64) -> Result<(), FtlError> {
        self.u.check_range(lpn)?;
        let (lbn, o) = self.u.split(lpn);
        let data = self.u.lu[lbn as usize].data;
        let slot = self.u.lu[lbn as usize].slot;
        if data == NONE {
            let unit = self.u.alloc(None)?;
            self.u.lu[lbn as usize].data = unit;
            self.u.host_program(unit, o, lpn);
        } else if slot == NONE && o >= self.u.fill[data as usize] {
            self.u.host_program(data, o, lpn);
        } else {
            let slot = if slot == NONE { self.new_log(lbn)? } else { slot as usize };
            self.append(slot, lbn, o, lpn);
            if self.u.fill[self.logs[slot].unit as usize] == self.u.upp {
                self.merge(slot)?;
            }
        }
        self.strict(lpn)
    }

    fn trim(&mut self, lpn: u64) -> Result<(), FtlError> {
        if let Some(lbn) = self.u.trim_page(lpn)? {
            // A wholly trimmed logical unit is reclaimed without copies.
            let slot = self.u.lu[lbn as usize].slot;
            if slot != NONE {
                self.u.erase_unit(self.logs[slot as usize].unit, Cause::Merge);
                self.free_slot(slot as usize);
            }
            self.u.drop_data(lbn);
        }
        self.strict(lpn)
    }

    fn memory_bytes(&self) -> usize {
        self.u.memory_bytes() + self.logs.len() * std::mem::size_of::<LogSlot>() + self.u.lbns() as usize * 4
    }

    /// A 4-byte unit number per logical unit, and per log block its owner (4 bytes) and
    /// a 4-byte entry per page (Kim et al.'s page map of a log block).
    fn mapping_ram_bytes(&self) -> u64 {
        self.u.lbns() as u64 * 4 + self.logs.len() as u64 * (4 + self.u.upp as u64 * 4)
    }

    units_common!();
}

#[cfg(test)]
mod tests {
    use super::{log_victims, LogSlot, UNUSED};
    use crate::LogVictim;
    use proptest::prelude::*;
    use rand::SeedableRng;
    use rand_xoshiro::Xoshiro256PlusPlus;

    proptest! {
        /// The one-pass victim (and its follower) is the victim `min_by_key` picks, ties
        /// to the first; the follower is the victim once that one is gone.
        #[test]
        fn log_victims_picks_the_min_by_key_victim(pool in prop::collection::vec(prop::option::of((0u64..6, 0u64..6)), 1..40)) {
            prop_assume!(pool.iter().any(Option::is_some));
            let mut slots: Vec<LogSlot> = pool
                .iter()
                .map(|p| p.map_or(UNUSED, |(born, used)| LogSlot { unit: 1, lbn: 1, in_order: true, born, used }))
                .collect();
            let mut rng = Xoshiro256PlusPlus::seed_from_u64(1);
            for policy in [LogVictim::Lru, LogVictim::Fifo] {
                let key = |s: &LogSlot| if policy == LogVictim::Lru { s.used } else { s.born };
                let oldest = |slots: &[LogSlot]| {
                    slots.iter().enumerate().filter(|(_, s)| s.unit != super::NONE).min_by_key(|(_, s)| key(s)).map(|(i, _)| i)
                };
                let (v, next) = log_victims(&slots, policy, &mut rng);
                prop_assert_eq!(Some(v), oldest(&slots));
                let keep = slots[v];
                slots[v] = UNUSED;
                let after = oldest(&slots);
                prop_assert_eq!(next.map(|i| key(&slots[i])), after.map(|i| key(&slots[i])));
                slots[v] = keep;
            }
        }
    }
}
