//! The time a TRIM (discard) command takes inside the SSD, from mechanism.
//!
//! A TRIM of a range is one command: a fixed controller cost (`timing.trim_command_us`:
//! command decoding, the controller's range bookkeeping) and then, page by page, the
//! FTL's unmap work. For a mapped logical page that is the map entry update and the
//! invalid-page bookkeeping of its block (`timing.trim_page_ns` each); an unmapped page
//! needs neither. NAND work the FTL issues while unmapping is scheduled on the dies
//! like any other: DFTL's translation-page loads and write-backs of the pages the range
//! touches (Gupta et al. 2009, §3.1), a hybrid scheme's erase of a wholly trimmed
//! logical block (its forced "merge"). The command completes when both the controller's
//! unmap work and that NAND work are done.
//!
//! Non-queued (`timing.trim_queued = false`, the default): SATA's DATA SET MANAGEMENT
//! command before NCQ TRIM (SATA 3.1) was not queueable, so the host waits until every
//! earlier request completed (the queue drained) before the TRIM starts, and no later
//! request starts before it completes. Queued: it starts at its issue time and blocks
//! nothing.
//!
//! Fit to seed 003's figure 3 (docs/swap.md): command 1 ms, 1.55 µs per mapped 2 KiB
//! page: a 1 MB TRIM costs 1.0 ms on never-written slots and 1.79 ms when all were
//! written; a 16 MB TRIM 1.0 to 13.7 ms; cost per byte falls with the range size.

use crate::addr::PageSpan;
use crate::engine::{Engine, SimError};
use crate::host::Done;
use flashlab_ftl::Mapping;
use flashlab_trace::Request;

impl Engine<'_> {
    /// Serve a TRIM request issued at `issue` on a timed device.
    pub(crate) fn timed_trim(&mut self, span: PageSpan, req: &Request, issue: u64) -> Result<Done, SimError> {
        let t = self.timeline.as_ref().expect("timed run").t;
        let start = self.clock.trim_start(&t, issue);
        self.background_gc(start)?;
        let unmap_start = start + t.trim_command_ns;
        let (mut mapped, mut nand_done) = (0u64, unmap_start);
        for i in 0..span.count {
            let lpn = self.map.page(span, i, req.device);
            mapped += self.ftl.lookup(lpn).is_some() as u64;
            self.host_trim(lpn)?;
            nand_done = nand_done.max(self.schedule(unmap_start).0);
        }
        let done = self.clock.trim_done(&t, unmap_start, nand_done, mapped);
        Ok(Done { issue_ns: issue, done_ns: done, gc_wait_ns: 0, pages: span.count })
    }
}
