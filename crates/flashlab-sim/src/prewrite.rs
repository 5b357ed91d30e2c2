//! `workload.prewrite_reads`: before the run, write (untimed, uncounted) every logical
//! page the workload reads before it writes it, so such reads cost a flash read instead
//! of nothing. This is SSDsim's `pre_process_page` (ssd.c), which gives every page a
//! trace reads a mapping before simulation starts; SSDsim does so for every page read,
//! flashlab only for pages read before their first write or trim in the workload (a
//! page written first is overwritten before it is read either way).

use crate::engine::{Engine, SimError};
use flashlab_trace::{Op, Request};
use std::fmt::Display;

impl Engine<'_> {
    /// One pass over `requests` (the same workload as the run): returns the pages written.
    pub(crate) fn prewrite_reads<I, E>(&mut self, requests: I) -> Result<u64, SimError>
    where
        I: Iterator<Item = Result<Request, E>>,
        E: Display,
    {
        let mut seen = vec![0u64; (self.s.ftl.logical_pages as usize).div_ceil(64)];
        let mut written = 0u64;
        for req in requests {
            let req = req.map_err(|e| SimError::Source(e.to_string()))?;
            // Addresses the run refuses are reported by the run itself.
            let Ok(span) = self.map.span(&req) else { continue };
            for i in 0..span.count.min(self.map.range()) {
                let lpn = self.map.page(span, i, req.device);
                let (word, bit) = (lpn as usize / 64, 1u64 << (lpn % 64));
                if seen[word] & bit != 0 {
                    continue;
                }
                seen[word] |= bit;
                if req.op == Op::Read {
                    self.write(lpn)?;
                    written += 1;
                }
            }
        }
        Ok(written)
    }
}
