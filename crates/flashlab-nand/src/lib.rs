//! NAND flash array model for flashlab.
//!
//! The array is addressed flat: a *plane index* numbers every plane of the device
//! (channel-major: channel, chip, die, plane), a *block id* is
//! `plane * blocks_per_plane + block_in_plane`, and a *page id* is
//! `block * pages_per_block + page_in_block`. All per-page and per-block state lives
//! in flat arrays indexed by these ids; there are no per-page heap objects.
//!
//! The model enforces NAND's rules: pages of a block are programmed in order, only
//! free pages are programmed, and erases work on whole blocks. A violation is a bug
//! in the layer above and panics with a message naming the block and page.
//! [`Nand::check_block`] recounts a block's state; the FTL's `strict` mode calls it
//! after every operation.

mod array;
mod counters;
mod geometry;
mod table;

pub use array::{BlockState, Nand, PageState, ValidCursor};
pub use counters::{Cause, OpCounters, OpKind, CAUSES};
pub use geometry::{Geometry, GeometryError, PlaneAddr};
pub use table::Table;
