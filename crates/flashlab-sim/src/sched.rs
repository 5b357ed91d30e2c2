//! Scheduling the FTL's NAND operations on the timeline: host operations at their
//! request's issue time, blocking GC right after the host operation that triggered it
//! (urgent GC > host I/O), and preemptible GC step by step in idle die time (host I/O >
//! background GC).

use crate::engine::{Engine, SimError};
use flashlab_ftl::Mapping;
use flashlab_config::GcMode;
use flashlab_ftl::GcStep;
use flashlab_nand::{Cause, OpKind};

impl Engine<'_> {
    /// Schedule the operations the last FTL call issued. Returns when the host's part
    /// completed and how long it waited behind GC.
    #[inline]
    pub(crate) fn schedule(&mut self, issue: u64) -> (u64, u64) {
        let tl = self.timeline.as_mut().expect("timed run");
        let (mut host_done, mut chain, mut wait) = (issue, issue, 0);
        let mut ops = self.ftl.take_ops().peekable();
        while let Some(op) = ops.next() {
            if op.cause == Cause::Host {
                host_done = host_done.max(tl.exec(&op, issue));
                wait = wait.max(tl.last_gc_wait_ns);
                chain = chain.max(host_done);
            } else if let Some(p) = (op.kind == OpKind::Read)
                .then(|| ops.next_if(|p| p.kind == OpKind::Program && p.cause == op.cause))
                .flatten()
            {
                chain = tl.exec_migration(&op, &p, chain);
            } else {
                chain = tl.exec(&op, chain);
            }
        }
        (host_done, wait)
    }

    /// Preemptible GC: before a request issued at `until`, let every plane that wants
    /// background GC run steps while its die is idle before `until`. A step that starts
    /// runs to its end (one page migration or one erase); the host then waits for it only.
    pub(crate) fn background_gc(&mut self, until: u64) -> Result<(), SimError> {
        let GcMode::Preemptible { background_free_blocks } = self.s.gc_mode else { return Ok(()) };
        for plane in 0..self.s.geometry.planes() {
            let tl = self.timeline.as_ref().expect("timed run");
            let die = tl.die_of(plane);
            while self.ftl.wants_background_gc(plane, background_free_blocks) {
                // Interruptible GC starts only when both its die and its channel are idle.
                let tl = self.timeline.as_ref().expect("timed run");
                let start = tl.die_free[die].max(tl.chan_free[tl.channel_of(die)]);
                if start >= until || self.ftl.gc_step(plane)? == GcStep::Idle {
                    break;
                }
                self.schedule(start);
            }
        }
        Ok(())
    }
}
