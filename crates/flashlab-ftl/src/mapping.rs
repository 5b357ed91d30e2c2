//! The one interface every mapping scheme provides ([`Mapping`]) and the closed enum
//! of schemes ([`Ftl`]) that an engine holds. Dispatch is a `match` per call (no
//! `dyn`): each arm calls the scheme's statically known method.
//!
//! A scheme turns a host write, read or trim of one logical page into NAND operations
//! on its [`Nand`], counted there by [`flashlab_nand::Cause`] and, when recording is on,
//! logged as [`FlashOp`]s in issue order for a timing engine. A copy is logged as a read
//! immediately followed by the program of the same cause (the engine schedules such a
//! pair as one migration, by copyback where allowed).

use crate::{
    BastFtl, BlockFtl, DftlFtl, FastFtl, FlashOp, FtlError, FtlSettings, FtlStats, GcStep, MergeMoves, PageFtl,
    ReadOutcome, Scheme,
};
use flashlab_nand::{Geometry, Nand};

/// The narrow interface of a mapping scheme.
pub trait Mapping {
    /// Write one logical page (host data, `Cause::Host`) and whatever it triggers.
    fn write(&mut self, lpn: u64) -> Result<(), FtlError>;
    /// Read one logical page.
    fn read(&mut self, lpn: u64) -> Result<ReadOutcome, FtlError>;
    /// Trim (discard) one logical page.
    fn trim(&mut self, lpn: u64) -> Result<(), FtlError>;
    fn nand(&self) -> &Nand;
    fn stats(&self) -> &FtlStats;
    /// Log every NAND operation from now on (drain with [`Mapping::take_ops`]).
    fn set_record_ops(&mut self, on: bool);
    fn take_ops(&mut self) -> std::vec::Drain<'_, FlashOp>;
    /// The content tag of the last host write (content tracking only).
    fn last_tag(&self) -> u32;
    /// Physical page of a logical page, if mapped.
    fn lookup(&self, lpn: u64) -> Option<u32>;
    /// Bytes of the simulator's state (tables, per-block arrays, NAND state).
    fn memory_bytes(&self) -> usize;
    /// Bytes of RAM the scheme's mapping tables need in a controller (docs/mapping.md).
    fn mapping_ram_bytes(&self) -> u64;
    /// Check every invariant (strict mode runs it periodically by itself).
    fn check_invariants(&self) -> Result<(), FtlError>;
    /// Hint that `lpn` will be accessed soon.
    fn prefetch_map(&self, _lpn: u64) {}
    /// Hint that `lpn` will be overwritten soon.
    fn prefetch_page(&self, _lpn: u64) {}
    /// Whether `plane` wants interruptible (background) GC.
    fn wants_background_gc(&self, _plane: u32, _background_free_blocks: u32) -> bool {
        false
    }
    /// One step of interruptible GC on `plane`.
    fn gc_step(&mut self, _plane: u32) -> Result<GcStep, FtlError> {
        Ok(GcStep::Idle)
    }
    /// Block-mapped schemes: copy merges in bulk (true, the default) or page by page
    /// (the reference path tests compare the bulk one with; same results either way).
    fn set_bulk_copies(&mut self, _on: bool) {}
    /// Block-mapped schemes: log a one-word merge's copies as a [`MergeMoves`] (a
    /// marker op, the moved reads) instead of per-op pairs (`crate::moves`); off by
    /// default. Set once per run by an engine that books merges from them.
    fn set_merge_moves(&mut self, _on: bool) {}
    /// The [`MergeMoves`] the markers of the ops logged since the last call name (take
    /// them with [`Mapping::take_ops`]), swapped into `into`.
    fn take_merge_moves(&mut self, into: &mut Vec<MergeMoves>) {
        into.clear();
    }
}

/// Every mapping scheme (`ftl.mapping`).
// One `Ftl` per run: boxing the large page (or DFTL) variant would add an indirection to every call.
#[allow(clippy::large_enum_variant)]
pub enum Ftl {
    Page(PageFtl),
    Block(BlockFtl),
    /// `bast` and `bast-padding`.
    Bast(BastFtl),
    Fast(FastFtl),
    Dftl(DftlFtl),
}

macro_rules! each {
    ($self:expr, $f:ident => $e:expr) => {
        match $self {
            Ftl::Page($f) => $e,
            Ftl::Block($f) => $e,
            Ftl::Bast($f) => $e,
            Ftl::Fast($f) => $e,
            Ftl::Dftl($f) => $e,
        }
    };
}

impl Ftl {
    /// Build the scheme `s.mapping.scheme` over an erased device (settings validated by the config).
    pub fn new(geo: Geometry, s: FtlSettings) -> Result<Ftl, FtlError> {
        Ok(match s.mapping.scheme {
            Scheme::Page => Ftl::Page(PageFtl::new(geo, s)),
            Scheme::Block => Ftl::Block(BlockFtl::new(geo, s)?),
            Scheme::Bast | Scheme::BastPadding => Ftl::Bast(BastFtl::new(geo, s)?),
            Scheme::Fast => Ftl::Fast(FastFtl::new(geo, s)?),
            Scheme::Dftl => Ftl::Dftl(DftlFtl::new(geo, s)?),
        })
    }
    pub fn scheme(&self) -> Scheme {
        self.settings().mapping.scheme
    }
    pub fn settings(&self) -> &FtlSettings {
        match self {
            Ftl::Page(f) => f.settings(),
            Ftl::Block(f) => &f.u.s,
            Ftl::Bast(f) => &f.u.s,
            Ftl::Fast(f) => &f.u.s,
            Ftl::Dftl(f) => f.settings(),
        }
    }
    /// Write logical pages `0..L` in order at once where the scheme can lay them out in
    /// bulk with exactly the write-by-write state ([`PageFtl::prefill_sequential`], and
    /// the block-mapped schemes' `Units::prefill_sequential`); false (nothing done) where
    /// that does not apply.
    pub fn prefill_sequential(&mut self) -> Result<bool, FtlError> {
        match self {
            Ftl::Page(f) => f.prefill_sequential(),
            Ftl::Dftl(f) => f.prefill_sequential(),
            Ftl::Block(f) => f.u.prefill_sequential(),
            Ftl::Bast(f) => f.u.prefill_sequential(),
            Ftl::Fast(f) => f.u.prefill_sequential(),
        }
    }
    /// The page-mapped FTL, if that is the scheme (page-mapping-only tools).
    pub fn as_page(&self) -> Option<&PageFtl> {
        match self {
            Ftl::Page(f) => Some(f),
            _ => None,
        }
    }
}

impl Mapping for Ftl {
    #[inline]
    fn write(&mut self, lpn: u64) -> Result<(), FtlError> {
        each!(self, f => Mapping::write(f, lpn))
    }
    #[inline]
    fn read(&mut self, lpn: u64) -> Result<ReadOutcome, FtlError> {
        each!(self, f => Mapping::read(f, lpn))
    }
    fn trim(&mut self, lpn: u64) -> Result<(), FtlError> {
        each!(self, f => Mapping::trim(f, lpn))
    }
    #[inline]
    fn nand(&self) -> &Nand {
        each!(self, f => Mapping::nand(f))
    }
    #[inline]
    fn stats(&self) -> &FtlStats {
        each!(self, f => Mapping::stats(f))
    }
    fn set_record_ops(&mut self, on: bool) {
        each!(self, f => Mapping::set_record_ops(f, on))
    }
    #[inline]
    fn take_ops(&mut self) -> std::vec::Drain<'_, FlashOp> {
        each!(self, f => Mapping::take_ops(f))
    }
    #[inline]
    fn last_tag(&self) -> u32 {
        each!(self, f => Mapping::last_tag(f))
    }
    fn lookup(&self, lpn: u64) -> Option<u32> {
        each!(self, f => Mapping::lookup(f, lpn))
    }
    fn memory_bytes(&self) -> usize {
        each!(self, f => Mapping::memory_bytes(f))
    }
    fn mapping_ram_bytes(&self) -> u64 {
        each!(self, f => Mapping::mapping_ram_bytes(f))
    }
    fn check_invariants(&self) -> Result<(), FtlError> {
        each!(self, f => Mapping::check_invariants(f))
    }
    #[inline]
    fn prefetch_map(&self, lpn: u64) {
        each!(self, f => Mapping::prefetch_map(f, lpn))
    }
    // `always`: with DFTL's hint (a bit test and a slot) LLVM outlined it from the run
    // loops (a call per request; s15-dftl).
    #[inline(always)]
    fn prefetch_page(&self, lpn: u64) {
        each!(self, f => Mapping::prefetch_page(f, lpn))
    }
    #[inline]
    fn wants_background_gc(&self, plane: u32, background_free_blocks: u32) -> bool {
        each!(self, f => Mapping::wants_background_gc(f, plane, background_free_blocks))
    }
    fn gc_step(&mut self, plane: u32) -> Result<GcStep, FtlError> {
        each!(self, f => Mapping::gc_step(f, plane))
    }
    fn set_bulk_copies(&mut self, on: bool) {
        each!(self, f => Mapping::set_bulk_copies(f, on))
    }
    fn set_merge_moves(&mut self, on: bool) {
        each!(self, f => Mapping::set_merge_moves(f, on))
    }
    #[inline]
    fn take_merge_moves(&mut self, into: &mut Vec<MergeMoves>) {
        each!(self, f => Mapping::take_merge_moves(f, into))
    }
}

/// The page FTL through the interface (its inherent methods).
impl Mapping for PageFtl {
    #[inline]
    fn write(&mut self, lpn: u64) -> Result<(), FtlError> {
        PageFtl::write(self, lpn).map(|_| ())
    }
    #[inline]
    fn read(&mut self, lpn: u64) -> Result<ReadOutcome, FtlError> {
        PageFtl::read(self, lpn)
    }
    fn trim(&mut self, lpn: u64) -> Result<(), FtlError> {
        PageFtl::trim(self, lpn)
    }
    #[inline]
    fn nand(&self) -> &Nand {
        PageFtl::nand(self)
    }
    #[inline]
    fn stats(&self) -> &FtlStats {
        PageFtl::stats(self)
    }
    fn set_record_ops(&mut self, on: bool) {
        PageFtl::set_record_ops(self, on)
    }
    #[inline]
    fn take_ops(&mut self) -> std::vec::Drain<'_, FlashOp> {
        PageFtl::take_ops(self)
    }
    #[inline]
    fn last_tag(&self) -> u32 {
        PageFtl::last_tag(self)
    }
    fn lookup(&self, lpn: u64) -> Option<u32> {
        PageFtl::lookup(self, lpn)
    }
    fn memory_bytes(&self) -> usize {
        PageFtl::memory_bytes(self)
    }
    /// One 4-byte physical page number per logical page.
    fn mapping_ram_bytes(&self) -> u64 {
        self.logical_pages() * 4
    }
    fn check_invariants(&self) -> Result<(), FtlError> {
        PageFtl::check_invariants(self)
    }
    #[inline]
    fn prefetch_map(&self, lpn: u64) {
        PageFtl::prefetch_map(self, lpn)
    }
    #[inline]
    fn prefetch_page(&self, lpn: u64) {
        PageFtl::prefetch_page(self, lpn)
    }
    #[inline]
    fn wants_background_gc(&self, plane: u32, background_free_blocks: u32) -> bool {
        PageFtl::wants_background_gc(self, plane, background_free_blocks)
    }
    fn gc_step(&mut self, plane: u32) -> Result<GcStep, FtlError> {
        PageFtl::gc_step(self, plane)
    }
}

/// The interface methods every block-mapped scheme gets from its [`crate::units::Units`]
/// core `self.u` (used inside `impl Mapping for ...`).
macro_rules! units_common {
    () => {
        fn read(&mut self, lpn: u64) -> Result<$crate::ReadOutcome, $crate::FtlError> {
            let r = self.u.read(lpn);
            r
        }
        fn nand(&self) -> &flashlab_nand::Nand {
            &self.u.nand
        }
        fn stats(&self) -> &$crate::FtlStats {
            &self.u.stats
        }
        fn set_record_ops(&mut self, on: bool) {
            self.u.set_record_ops(on)
        }
        fn take_ops(&mut self) -> std::vec::Drain<'_, $crate::FlashOp> {
            self.u.take_ops()
        }
        fn last_tag(&self) -> u32 {
            self.u.last_tag()
        }
        fn lookup(&self, lpn: u64) -> Option<u32> {
            (lpn < self.u.s.logical_pages).then(|| self.u.lookup(lpn)).filter(|&p| p != $crate::NO_PAGE)
        }
        fn prefetch_map(&self, lpn: u64) {
            self.u.prefetch_map(lpn)
        }
        fn check_invariants(&self) -> Result<(), $crate::FtlError> {
            self.u.check_all().and_then(|_| self.check_scheme()).map_err($crate::FtlError::Invariant)
        }
        fn set_bulk_copies(&mut self, on: bool) {
            self.u.set_bulk_copies(on)
        }
        fn set_merge_moves(&mut self, on: bool) {
            self.u.set_merge_moves(on)
        }
        #[inline]
        fn take_merge_moves(&mut self, into: &mut Vec<$crate::MergeMoves>) {
            self.u.take_merge_moves(into)
        }
    };
}
pub(crate) use units_common;
