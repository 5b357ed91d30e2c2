//! Placement by temperature: a hot-data identifier classifies each host write and each
//! GC migration into one of several write streams (temperature classes), each with its
//! own frontier block per plane, so data of similar temperature fills the same blocks.
//!
//! Class of a logical page among `k` classes: the identifier's *hot* → the hottest class
//! `k − 1`; otherwise, when `k > 2` and the identifier has a temperature `t` (the LPN
//! temperature table's recent write count), class `min(k − 2, t − 1)`; else class 0.

use flashlab_hotdata::{HotDataIdentifier, Identifier};

/// The placement policy's state.
pub struct Placement {
    id: Identifier,
    host_classes: u32,
    gc_classes: u32,
}

impl Placement {
    pub fn new(id: Identifier, host_classes: u32, gc_classes: u32) -> Self {
        Placement { id, host_classes, gc_classes }
    }

    fn class(&self, lpn: u64, k: u32) -> u32 {
        if k <= 1 {
            return 0;
        }
        if self.id.is_hot(lpn) {
            return k - 1;
        }
        match self.id.temperature(lpn) {
            Some(t) if k > 2 => ((t.max(1.0) as u32) - 1).min(k - 2),
            _ => 0,
        }
    }

    /// Record a host write of `lpn` and return its host stream.
    #[inline]
    pub fn host_class(&mut self, lpn: u64) -> u32 {
        self.id.record_write(lpn);
        self.class(lpn, self.host_classes)
    }

    /// The GC stream of a page being migrated (no write is recorded).
    #[inline]
    pub fn gc_class(&self, lpn: u64) -> u32 {
        self.class(lpn, self.gc_classes)
    }

    /// Seed 001's page temperature of `lpn` now: its LPN temperature (the identifier's
    /// temperature, or 1 for hot and 0 for cold when it has none), saturated at 255.
    #[inline]
    pub fn temperature(&self, lpn: u64) -> u8 {
        match self.id.temperature(lpn) {
            Some(t) => t.clamp(0.0, 255.0) as u8,
            None => self.id.is_hot(lpn) as u8,
        }
    }

    pub fn memory_bytes(&self) -> usize {
        self.id.memory_bytes()
    }
}
