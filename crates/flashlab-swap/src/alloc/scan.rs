//! `scan_swap_map` of Linux 2.6.34 (mm/swapfile.c), single-threaded: the next-cluster
//! pointer (`cluster_next`, `cluster_nr`), the search for a wholly free (unaligned)
//! cluster of [`CLUSTER`] slots when the current one is used up, and the first-free
//! scan (`checks:` / `scan:`) otherwise. The slot is returned, not yet taken, so the
//! caller can discard the cluster before it is in use.
//!
//! Omitted: locking and the racing-allocation bookkeeping (`lowest_alloc`,
//! `highest_alloc`, `SWP_DISCARDING`), the `vm_swap_full()` reuse of cache-only
//! entries (our swap cache frees its slots itself, see `crate::memory`).

use crate::area::{SwapArea, CLUSTER};

/// A slot found by [`scan_swap_map`], and the start of the free cluster found on the way.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Found {
    pub slot: u32,
    pub free_cluster: Option<u32>,
}

/// `scan_swap_map(si, usage)`: `solid_state` = `SWP_SOLIDSTATE` (search for the next
/// cluster from `cluster_next`, not from `lowest_bit`). `None` = no free slot (`no_page`).
pub fn scan_swap_map(a: &mut SwapArea, solid_state: bool) -> Option<Found> {
    let mut scan_base = a.cluster_next;
    let mut offset = scan_base;
    let mut free_cluster = None;
    // `if (unlikely(!si->cluster_nr--))`
    if a.cluster_nr == 0 {
        a.cluster_nr = CLUSTER - 1;
        if a.pages - a.inuse_pages >= CLUSTER {
            if !solid_state {
                scan_base = a.lowest_bit;
                offset = scan_base;
            }
            match find_free_cluster(a, offset, scan_base) {
                Some(start) => {
                    a.cluster_next = start;
                    offset = start;
                    free_cluster = Some(start);
                }
                None => offset = scan_base,
            }
        }
    } else {
        a.cluster_nr -= 1;
    }
    let slot = checks(a, offset, scan_base)?;
    Some(Found { slot, free_cluster })
}

/// The two "Locate the first empty (unaligned) cluster" loops: from `offset` up to
/// `highest_bit`, then from `lowest_bit` up to `scan_base`.
fn find_free_cluster(a: &SwapArea, offset: u32, scan_base: u32) -> Option<u32> {
    let run = |mut offset: u32, limit: u32, inclusive: bool| {
        let mut last = offset + CLUSTER - 1;
        while if inclusive { last <= limit } else { last < limit } {
            if a.map[offset as usize] != 0 {
                last = offset + CLUSTER;
            } else if offset == last {
                return Some(offset + 1 - CLUSTER);
            }
            offset += 1;
        }
        None
    };
    run(offset, a.highest_bit, true).or_else(|| run(a.lowest_bit, scan_base, false))
}

/// `checks:` and `scan:`: `offset` if free, else the first free slot after it up to
/// `highest_bit`, else after `lowest_bit` (exclusive, as the kernel's `++offset`) up to
/// `scan_base`.
fn checks(a: &SwapArea, mut offset: u32, mut scan_base: u32) -> Option<u32> {
    if a.highest_bit == 0 {
        return None;
    }
    if offset > a.highest_bit {
        scan_base = a.lowest_bit;
        offset = scan_base;
    }
    if a.is_free(offset) {
        return Some(offset);
    }
    if let Some(s) = (offset + 1..=a.highest_bit).find(|&s| a.is_free(s)) {
        return Some(s);
    }
    (a.lowest_bit + 1..scan_base).find(|&s| a.is_free(s))
}

/// The first free slot at or after `from`, wrapping once (the fall-back of allocators
/// that found no free cluster).
pub fn first_free_from(a: &SwapArea, from: u32) -> Option<u32> {
    if a.inuse_pages == a.pages {
        return None;
    }
    let from = from.clamp(a.lowest_bit, a.highest_bit.max(a.lowest_bit));
    (from..=a.highest_bit).chain(a.lowest_bit..from).find(|&s| a.is_free(s))
}
