//! Flash translation layers for flashlab.
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
mod check;
mod error;
mod ftl;
mod gc;
mod index;
mod placement;
mod settings;
mod trigger;
mod victim;
mod wear;

pub use error::FtlError;
pub use ftl::{FlashOp, FtlStats, PageFtl, ReadOutcome, NO_PAGE};
pub use gc::GcStep;
pub use placement::Placement;
pub use settings::{FtlSettings, StripeOrder, WearLevelling};
pub use trigger::{DtParams, GcRequest, Trigger};
pub use victim::{
    cat_score, cost_benefit_score, weighted_score, wpo_weight, BlockInfo, BlockView, VecView, VictimPolicy,
    VictimSelector,
};
