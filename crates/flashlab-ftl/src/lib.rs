//! Flash translation layers for flashlab.
//!
//! [`Ftl`] is the closed set of mapping schemes (`ftl.mapping`), all behind the one
//! [`Mapping`] interface: page mapping ([`PageFtl`]), block mapping ([`BlockFtl`]),
//! BAST with and without padding ([`BastFtl`]), FAST ([`FastFtl`]) and DFTL
//! ([`DftlFtl`]: page mapping with the map demand-paged from flash); the
//! block-mapped schemes share a core of mapping units (superblocks) in `units.rs`.
//! docs/mapping.md states every rule and its cost.
//!
//! [`PageFtl`] is a page-mapped FTL over a [`flashlab_nand::Nand`]: flat
//! logical→physical and physical→logical tables, allocation striped across
//! channels, chips, dies and planes, separate write frontiers for host writes and
//! GC migrations, per-plane garbage collection triggered by a free-block
//! threshold, and victim selection by a [`VictimPolicy`].
//!
//! Policies are pure decisions over a [`BlockView`]: the FTL builds the view (with
//! incremental indexes so that greedy and FIFO are O(1)), asks the policy, and
//! carries the decision out. Tests build views by hand ([`VecView`]).
//!
//! The FTL never reads the clock and does no I/O. When asked
//! ([`PageFtl::set_record_ops`]) it logs every NAND operation it issues so that a
//! timing engine can schedule them.

pub mod analytic;
mod bast;
mod block;
mod check;
mod cmt;
mod dftl;
mod error;
mod external;
mod fast;
mod ftl;
mod gc;
mod index;
mod mapping;
mod moves;
mod placement;
mod plain;
mod prefill;
mod settings;
mod trigger;
mod units;
mod victim;
mod wear;

pub use bast::BastFtl;
pub use block::BlockFtl;
pub use dftl::DftlFtl;
pub use error::FtlError;
pub use external::{Candidate, ExternalVictim, PlaneInfo, VictimCallback};
pub use fast::FastFtl;
pub use ftl::{FlashOp, FtlStats, PageFtl, ReadOutcome, NO_PAGE};
pub use gc::GcStep;
pub use mapping::{Ftl, Mapping};
pub use moves::{expand_merge_moves, MergeMoves};
pub use placement::Placement;
pub use settings::{DftlVariant, FtlSettings, LogVictim, MappingSettings, Scheme, StripeOrder, WearLevelling};
pub use trigger::{DtParams, GcRequest, Trigger};
pub use victim::{
    cat_score, cost_benefit_score, weighted_score, wpo_weight, BlockInfo, BlockView, VecView, VictimPolicy,
    VictimSelector,
};
