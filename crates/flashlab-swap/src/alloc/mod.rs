//! Swap-slot allocators, one per file behind one narrow interface, chosen by name
//! (`swap.allocator`) as a closed enum.
//!
//! Every allocator returns a slot already taken in the [`SwapArea`] and, when it sends
//! one, the discard (TRIM) that must reach the device before the slot is written; a
//! discard never covers a slot in use ([`SwapArea::mark_discarded`] asserts it).

mod linux;
mod modern;
mod none;
pub mod scan;
mod semantic;

pub use linux::LinuxAlloc;
pub use modern::ModernAlloc;
pub use none::NoneAlloc;
pub use semantic::SemanticAlloc;

use crate::area::{Discard, SwapArea};

/// Allocator names (`swap.allocator`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AllocatorKind {
    None,
    Linux,
    LinuxModern,
    Semantic,
}

impl AllocatorKind {
    pub const ALL: [AllocatorKind; 4] =
        [AllocatorKind::None, AllocatorKind::Linux, AllocatorKind::LinuxModern, AllocatorKind::Semantic];

    pub fn name(self) -> &'static str {
        match self {
            AllocatorKind::None => "none",
            AllocatorKind::Linux => "linux",
            AllocatorKind::LinuxModern => "linux-modern",
            AllocatorKind::Semantic => "semantic",
        }
    }

    pub fn from_name(name: &str) -> Option<AllocatorKind> {
        Self::ALL.into_iter().find(|k| k.name() == name)
    }
}

/// The properties of the device under the area that the kernel looks at.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DeviceFlags {
    /// `SWP_SOLIDSTATE` (a non-rotational queue).
    pub solid_state: bool,
    /// The device accepts discards (`SWP_DISCARDABLE` when the allocator uses them).
    pub discardable: bool,
}

/// Every allocator.
#[derive(Clone, Debug)]
pub enum Allocator {
    None(NoneAlloc),
    Linux(LinuxAlloc),
    LinuxModern(ModernAlloc),
    Semantic(SemanticAlloc),
}

impl Allocator {
    pub fn new(kind: AllocatorKind, a: &SwapArea) -> Allocator {
        match kind {
            AllocatorKind::None => Allocator::None(NoneAlloc),
            AllocatorKind::Linux => Allocator::Linux(LinuxAlloc),
            AllocatorKind::LinuxModern => Allocator::LinuxModern(ModernAlloc::new(a)),
            AllocatorKind::Semantic => Allocator::Semantic(SemanticAlloc::new(a)),
        }
    }

    /// The discard `sys_swapon` sends over the whole area (header excluded), if any.
    pub fn swapon(&self, a: &mut SwapArea, dev: DeviceFlags) -> Option<Discard> {
        if matches!(self, Allocator::None(_)) || !dev.discardable {
            return None;
        }
        let d = Discard { start: 1, len: a.max - 1 };
        a.mark_discarded(d);
        Some(d)
    }

    /// `get_swap_page`: a slot, taken, and the discard to send before writing it.
    #[inline]
    pub fn get(&mut self, a: &mut SwapArea, dev: DeviceFlags) -> Option<(u32, Option<Discard>)> {
        match self {
            Allocator::None(x) => x.get(a, dev.solid_state),
            Allocator::Linux(x) => x.get(a, dev.solid_state, dev.discardable),
            Allocator::LinuxModern(x) => x.get(a),
            Allocator::Semantic(x) => x.get(a, dev.discardable),
        }
    }

    /// `swap_free` of a slot in use; `linux-modern` returns the discard of a cluster
    /// that became wholly free.
    #[inline]
    pub fn free(&mut self, a: &mut SwapArea, slot: u32, dev: DeviceFlags) -> Option<Discard> {
        a.free(slot);
        match self {
            Allocator::LinuxModern(x) => x.freed(a, slot, dev.discardable),
            _ => None,
        }
    }
}
