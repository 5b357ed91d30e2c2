//! Validated FTL settings.

use crate::{FtlError, VictimPolicy};

/// Order in which consecutive page allocations rotate over the hierarchy: the first
/// letter varies fastest. `cwdp` (MQSim's CWDP) spreads consecutive pages over
/// channels first, then chips (ways), dies and planes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StripeOrder(pub [u8; 4]);

impl StripeOrder {
    pub fn parse(s: &str) -> Result<Self, FtlError> {
        let b = s.as_bytes();
        let mut sorted: Vec<u8> = b.iter().map(|c| c.to_ascii_lowercase()).collect();
        sorted.sort_unstable();
        if sorted != b"cdpw" {
            return Err(FtlError::StripeOrder(s.to_string()));
        }
        let mut o = [0u8; 4];
        o.iter_mut().zip(b).for_each(|(d, c)| *d = c.to_ascii_lowercase());
        Ok(StripeOrder(o))
    }
    pub fn as_string(&self) -> String {
        self.0.iter().map(|&c| c as char).collect()
    }
}

impl Default for StripeOrder {
    fn default() -> Self {
        StripeOrder(*b"cwdp")
    }
}

/// Settings of the page-mapped FTL.
#[derive(Clone, Debug, PartialEq)]
pub struct FtlSettings {
    /// Logical capacity in pages.
    pub logical_pages: u64,
    /// Per-plane free blocks below which GC runs.
    pub free_blocks_min: u32,
    pub victim: VictimPolicy,
    pub stripe: StripeOrder,
    /// GC migrations go to their own frontier block (else they share host stream 0's).
    pub separate_gc_frontier: bool,
    /// Host write streams (temperature classes), each with its own frontier per plane.
    pub host_streams: u32,
    /// GC write streams (temperature classes of migrated pages), with `separate_gc_frontier`.
    pub gc_streams: u32,
    pub trigger: crate::Trigger,
    /// Background (interruptible) GC collects a victim only if at most this fraction of
    /// its pages is valid (urgent GC always collects).
    pub background_max_valid: f64,
    /// Hot-data identifier that chooses streams; None = every write in stream 0.
    pub placement: Option<flashlab_hotdata::IdentifierSpec>,
    pub wear: WearLevelling,
    /// Check every invariant after every operation (slow).
    pub strict: bool,
    /// Keep a content tag per physical page so reads can be checked.
    pub track_content: bool,
    /// Seed of the FTL's random choices (random and d-choices victims).
    pub seed: u64,
}

/// Wear levelling.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WearLevelling {
    /// Open the least-worn free block of the plane instead of the oldest freed one.
    pub dynamic: bool,
    /// Static: when a plane's erase-count spread exceeds this, move the data of its
    /// least-worn closed block elsewhere (0 = off).
    pub static_threshold: u32,
    /// Check the spread every this many erases in the plane.
    pub static_check_erases: u32,
}
