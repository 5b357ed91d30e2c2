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
    /// The callback `VictimPolicy::External` asks (set through the library API only).
    pub external_victim: Option<crate::ExternalVictim>,
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
    /// The mapping scheme and its settings (`ftl.mapping` and the keys beside it).
    pub mapping: MappingSettings,
}

/// The mapping schemes (`ftl.mapping`), a closed set chosen by name.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Scheme {
    #[default]
    Page,
    Block,
    Bast,
    BastPadding,
    Fast,
    Dftl,
}

impl Scheme {
    /// Every scheme by its `ftl.mapping` name.
    pub const NAMES: [(&'static str, Scheme); 6] = [
        ("page", Scheme::Page),
        ("block", Scheme::Block),
        ("bast", Scheme::Bast),
        ("bast-padding", Scheme::BastPadding),
        ("fast", Scheme::Fast),
        ("dftl", Scheme::Dftl),
    ];
    pub fn name(self) -> &'static str {
        Self::NAMES.iter().find(|(_, s)| *s == self).map_or("page", |(n, _)| n)
    }
    /// Whether the scheme is built in this version (all are).
    pub fn available(self) -> bool {
        true
    }
    /// Schemes with block-mapped data units (log blocks, merges, superblocks).
    pub fn is_hybrid(self) -> bool {
        matches!(self, Scheme::Block | Scheme::Bast | Scheme::BastPadding | Scheme::Fast)
    }
    /// Schemes with page-mapped data and page-mapping GC (victim, trigger, placement, wear levelling).
    pub fn has_page_gc(self) -> bool {
        matches!(self, Scheme::Page | Scheme::Dftl)
    }
}

/// Which log block a hybrid FTL reclaims when its pool is exhausted (`ftl.log_victim`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum LogVictim {
    /// Least recently written (Kim et al. 2002's choice for BAST).
    #[default]
    Lru,
    /// Oldest allocated.
    Fifo,
    /// Uniformly at random from the workload seed (the C FlashSim's choice).
    Random,
}

/// Which reference implementation's DFTL rules to follow (`ftl.dftl_variant`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum DftlVariant {
    /// Gupta et al., ASPLOS 2009: segmented LRU, batch updates on dirty eviction.
    #[default]
    Paper,
    /// The C FlashSim: segmented LRU; a dirty eviction reads and rewrites its
    /// translation page; batched updates only during GC.
    FlashsimC,
    /// The C++ FlashSim: plain LRU; an eviction writes the translation page without
    /// reading it and cleans every cached entry of that page.
    FlashsimCpp,
    /// WiscSim: a miss loads every entry of its translation page.
    Wiscsim,
}

impl DftlVariant {
    pub const NAMES: [(&'static str, DftlVariant); 4] = [
        ("paper", DftlVariant::Paper),
        ("flashsim-c", DftlVariant::FlashsimC),
        ("flashsim-cpp", DftlVariant::FlashsimCpp),
        ("wiscsim", DftlVariant::Wiscsim),
    ];
}

/// The mapping scheme and the settings of the non-page schemes.
#[derive(Clone, Debug, PartialEq)]
pub struct MappingSettings {
    pub scheme: Scheme,
    /// Hybrid schemes: log blocks (mapping units) in the pool; FAST: sequential + random.
    pub log_blocks: u32,
    pub log_victim: LogVictim,
    /// FAST: sequential log blocks (the rest of `log_blocks` are random log blocks).
    pub fast_seq_log_blocks: u32,
    /// DFTL: entries of the cached mapping table.
    pub map_cache_entries: u64,
    /// DFTL: bytes per mapping entry in a translation page.
    pub map_entry_bytes: u32,
    pub dftl_variant: DftlVariant,
    /// Hybrid schemes: blocks (same offset, consecutive planes) forming one mapping unit.
    pub superblock_blocks: u32,
}

impl Default for MappingSettings {
    fn default() -> Self {
        MappingSettings {
            scheme: Scheme::Page,
            log_blocks: 64,
            log_victim: LogVictim::Lru,
            fast_seq_log_blocks: 1,
            map_cache_entries: 65536,
            map_entry_bytes: 4,
            dftl_variant: DftlVariant::Paper,
            superblock_blocks: 1,
        }
    }
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
