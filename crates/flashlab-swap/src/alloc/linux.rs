//! `linux`: Linux 2.6.34 (the seed's kernel 2.6.34.13). `sys_swapon` discards the
//! whole area once (`discard_swap`, header excluded) and so marks it
//! `SWP_DISCARDABLE`; afterwards `scan_swap_map` discards each wholly free cluster it
//! finds (`discard_swap_cluster`, 256 slots = 1 MiB) before the first slot of it is
//! used, and the task waits for the discard (`blkdev_issue_discard` with
//! `BLKDEV_IFL_WAIT`).

use super::scan::scan_swap_map;
use crate::area::{Discard, SwapArea, CLUSTER};

#[derive(Clone, Debug, Default)]
pub struct LinuxAlloc;

impl LinuxAlloc {
    /// `get_swap_page` → `scan_swap_map`; the slot is taken after its cluster's discard.
    pub fn get(&mut self, a: &mut SwapArea, solid_state: bool, discardable: bool) -> Option<(u32, Option<Discard>)> {
        let f = scan_swap_map(a, solid_state)?;
        let d = f.free_cluster.filter(|_| discardable).map(|start| Discard { start, len: CLUSTER });
        if let Some(d) = d {
            a.mark_discarded(d);
        }
        a.take(f.slot);
        Some((f.slot, d))
    }
}
