//! `none`: Linux 2.6.34's `scan_swap_map` on a device without discard
//! (`SWP_DISCARDABLE` unset): no TRIM at swapon nor per cluster.

use super::scan::scan_swap_map;
use crate::area::{Discard, SwapArea};

#[derive(Clone, Debug, Default)]
pub struct NoneAlloc;

impl NoneAlloc {
    /// `get_swap_page` → `scan_swap_map`; the slot is taken.
    pub fn get(&mut self, a: &mut SwapArea, solid_state: bool) -> Option<(u32, Option<Discard>)> {
        let f = scan_swap_map(a, solid_state)?;
        a.take(f.slot);
        Some((f.slot, None))
    }
}
