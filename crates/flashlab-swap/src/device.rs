//! The block device under the swap area: the streaming SSD ([`flashlab_sim::Ssd`], any
//! FTL, GC policy and timing model) or the disk baseline ([`crate::disk`]), behind one
//! interface (a closed enum). Addresses are slots of 4 KiB; slot `s` is bytes
//! `s × 4096 ..` of the device.

use crate::alloc::DeviceFlags;
use crate::area::SLOT_BYTES;
use crate::disk::Disk;
use crate::SwapError;
use flashlab_sim::{Op, Ssd};

/// A completed request: when it completed (`None` in counting mode).
pub type Done = Option<u64>;

pub enum BlockDev {
    Ssd(Box<Ssd>),
    Disk(Disk),
}

impl BlockDev {
    pub fn flags(&self) -> DeviceFlags {
        match self {
            BlockDev::Ssd(_) => DeviceFlags { solid_state: true, discardable: true },
            BlockDev::Disk(_) => DeviceFlags { solid_state: false, discardable: false },
        }
    }

    /// Read or write `slots` slots from `first`, issued at `at_ns`.
    pub fn io(&mut self, op: Op, first: u32, slots: u32, at_ns: u64) -> Result<Done, SwapError> {
        let (off, len) = (first as u64 * SLOT_BYTES, slots as u64 * SLOT_BYTES);
        match self {
            BlockDev::Ssd(ssd) => Ok(ssd.submit(op, off, len, at_ns)?.done_ns),
            BlockDev::Disk(d) => {
                if op == Op::Write {
                    d.write_tags(first, slots);
                }
                Ok(Some(d.access(off, len, at_ns)))
            }
        }
    }

    /// Discard `slots` slots from `first`, issued at `at_ns` (never sent to the disk).
    pub fn discard(&mut self, first: u32, slots: u32, at_ns: u64) -> Result<Done, SwapError> {
        match self {
            BlockDev::Ssd(ssd) => {
                Ok(ssd.submit(Op::Trim, first as u64 * SLOT_BYTES, slots as u64 * SLOT_BYTES, at_ns)?.done_ns)
            }
            BlockDev::Disk(_) => Ok(Some(at_ns)),
        }
    }

    /// The content tag the device holds for `slot` (its first page on the SSD; 0 =
    /// unmapped or trimmed); `None` when the SSD does not track content.
    pub fn tag(&self, slot: u32) -> Option<u32> {
        match self {
            BlockDev::Ssd(ssd) => ssd.content_tag(slot as u64 * SLOT_BYTES / ssd.settings().page_bytes()),
            BlockDev::Disk(d) => Some(d.tag(slot)),
        }
    }
}
