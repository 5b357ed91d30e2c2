//! The end-of-run distributions an [`crate::Observer`] receives ([`RunEnd`]).

use crate::engine::Engine;
use crate::observe::RunEnd;
use flashlab_ftl::Mapping;
use flashlab_nand::{Cause, OpKind};

impl Engine<'_> {
    pub(crate) fn run_end(&self) -> RunEnd {
        let mark = self.mark.as_ref().expect("measurement started");
        let nand = self.ftl.nand().counters().since(&mark.nand);
        let now = self.ftl.nand().erase_counts();
        RunEnd {
            read_latency_cdf: self.clock.read_lat.cdf(),
            write_latency_cdf: self.clock.write_lat.cdf(),
            block_erases: now.iter().zip(&mark.erases).map(|(a, b)| (a - b) as u64).collect(),
            blocks_per_plane: self.s.geometry.blocks_per_plane,
            programs_by_cause: Cause::ALL.iter().map(|&c| (c.name(), nand.get(OpKind::Program, c))).collect(),
        }
    }
}
