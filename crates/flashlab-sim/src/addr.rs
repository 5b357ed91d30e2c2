//! Host request → logical pages: sector/byte addresses to page numbers, folding of
//! addresses beyond the logical capacity, and per-device ranges.

use crate::settings::{DeviceMode, Overflow};
use flashlab_trace::Request;

/// The logical pages a request touches: `first .. first + count`, each folded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PageSpan {
    pub first: u64,
    pub count: u64,
}

/// Maps request addresses to logical pages.
#[derive(Clone, Copy, Debug)]
pub(crate) struct AddrMap {
    pub page_bytes: u64,
    /// log2(page_bytes) when it is a power of two (shifts instead of divisions).
    pub page_shift: Option<u32>,
    pub logical_pages: u64,
    pub overflow: Overflow,
    pub devices: DeviceMode,
    pub device_count: u64,
}

impl AddrMap {
    /// Pages of `req`, or the first page beyond capacity when overflow is an error.
    #[inline]
    pub fn span(&self, req: &Request) -> Result<PageSpan, u64> {
        let end_bytes = req.offset_bytes.saturating_add(req.len_bytes);
        let (first, end) = match self.page_shift {
            Some(sh) => (req.offset_bytes >> sh, (end_bytes >> sh) + (end_bytes & (self.page_bytes - 1) != 0) as u64),

            None => (req.offset_bytes / self.page_bytes, end_bytes.div_ceil(self.page_bytes)),
        };
        let count = end.saturating_sub(first).max(1);
        if self.overflow == Overflow::Error && first + count > self.range() {
            return Err((first + count - 1).max(self.range()));
        }
        Ok(PageSpan { first, count })
    }

    /// Logical pages one device's requests map onto.
    pub fn range(&self) -> u64 {
        match self.devices {
            DeviceMode::Fold => self.logical_pages,
            DeviceMode::Separate => (self.logical_pages / self.device_count).max(1),
        }
    }

    /// Folded logical page `i` of a span for a request of `device`.
    #[inline]
    pub fn page(&self, span: PageSpan, i: u64, device: u32) -> u64 {
        let p = span.first + i;
        match self.devices {
            DeviceMode::Fold => {
                if p < self.logical_pages {
                    p
                } else {
                    p % self.logical_pages
                }
            }
            DeviceMode::Separate => {
                let range = self.range();
                (device as u64 % self.device_count) * range + p % range
            }
        }
    }
}
