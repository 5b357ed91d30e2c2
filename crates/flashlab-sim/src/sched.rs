//! Scheduling the FTL's NAND operations on the timeline: host operations at their
//! request's issue time, blocking GC right after the host operation that triggered it
//! (urgent GC > host I/O), and preemptible GC step by step in idle die time (host I/O >
//! background GC).

use crate::engine::{Engine, SimError};
use crate::merge_moves::{book_moves, Stage};
use crate::merge_run::is_merge;
use crate::settings::GcMode;
use crate::timing::Timeline;
use flashlab_ftl::Mapping;
use flashlab_ftl::{FlashOp, GcStep, MergeMoves};
use flashlab_nand::{Cause, OpKind};

impl Engine<'_> {
    /// Schedule the operations the last FTL call issued: host operations now, GC
    /// operations on their dies not before the host's part completed (booked now, or
    /// queued and booked as time advances under host-first arbitration; see
    /// `crate::deferred`). Returns when the host's part completed and how long it waited
    /// behind GC.
    #[inline]
    pub(crate) fn schedule(&mut self, issue: u64) -> (u64, u64) {
        let tl = self.timeline.as_mut().expect("timed run");
        if self.log_moves {
            self.ftl.take_merge_moves(&mut self.moves);
        }
        let drain = self.ftl.take_ops();
        schedule_ops(tl, drain.as_slice(), &self.moves, issue)
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
                // Interruptible GC starts only when its die is idle (nothing queued on it
                // before `until`) and its channel is not transferring at that instant.
                let tl = self.timeline.as_mut().expect("timed run");
                tl.catch_up_die(die, until);
                if tl.has_pending(die) {
                    break;
                }
                let start = tl.idle_start(die);
                if start >= until || self.ftl.gc_step(plane)? == GcStep::Idle {
                    break;
                }
                self.schedule(start);
            }
        }
        Ok(())
    }
}

/// Causes of FTL work that a host operation waits for when the FTL issues it before
/// the host operation: a DFTL cache miss reads the translation page (and writes back a
/// dirty victim's) before the data access (Gupta et al. 2009, §3.1–3.2); a hybrid FTL
/// merges (and pads) to free the log block the write goes to before writing it (Kim et
/// al. 2002, §3). GC and wear levelling of page mapping are issued after the host
/// operation and run behind it (blocking later requests on their dies), as before.
#[inline]
fn foreground(cause: Cause) -> bool {
    matches!(cause, Cause::Mapping | Cause::Merge | Cause::Padding)
}

/// Schedule `ops`, the operations one FTL call issued for a request issued at `issue`
/// ([`Engine::schedule`]; a pipelined run calls it on the timing thread). `moves`: the
/// merges its markers name (`crate::merge_moves`; logged only where runs are booked).
#[inline]
pub(crate) fn schedule_ops(tl: &mut Timeline, ops: &[FlashOp], moves: &[MergeMoves], issue: u64) -> (u64, u64) {
    let runs = tl.books_migration_runs();
    let (mut host_done, mut wait) = (issue, 0);
    // Foreground FTL work logged before the host operation of this call is on the
    // request's critical path: the host operation is ready only when it ends.
    let (mut ready, mut host_seen) = (issue, false);
    let mut i = 0;
    while let Some(&op) = ops.get(i) {
        if runs && op.cause == Cause::Gc {
            // A GC victim's migrations on one die, in one pass (`crate::migrate_run`).
            let n = tl.book_migration_run(&ops[i..], host_done);
            if n > 0 {
                i += n;
                continue;
            }
        }
        if runs && is_merge(op.cause) {
            let fg = !host_seen;
            if let Some(m) = op.as_merge_moves() {
                // A one-word merge logged compactly (`crate::merge_moves`).
                let (m, start) = (&moves[m], i + 1);
                i = start + m.reads();
                let stage = Stage { issue, foreground: fg, ready: &mut ready, host_done: &mut host_done };
                book_moves(tl, m, &ops[start..i], stage);
                continue;
            }
            // A hybrid merge's operations on one die, in one pass (`crate::merge_run`).
            let (n, end) = tl.book_merge_run(&ops[i..], fg.then_some(issue), if fg { ready } else { host_done });
            if n > 0 {
                if fg {
                    ready = end;
                    host_done = host_done.max(end);
                }
                i += n;
                continue;
            }
        }
        let migration = op.kind == OpKind::Read && op.cause != Cause::Host;
        let program = ops.get(i + 1).filter(|p| migration && p.kind == OpKind::Program && p.cause == op.cause).copied();
        let at = i;
        i += 1 + program.is_some() as usize;
        if op.cause == Cause::Host {
            host_done = host_done.max(tl.host_at(&op, None, issue, ready));
            wait = wait.max(tl.last_gc_wait_ns);
            host_seen = true;
        } else if !host_seen && foreground(op.cause) {
            ready = tl.host_at(&op, program.as_ref(), issue, ready);
            host_done = host_done.max(ready);
        } else {
            // A DFTL drain's translation-page rewrites in one pass (`crate::map_run`).
            let n = if runs && op.cause == Cause::Mapping { tl.book_map_run(&ops[at..], host_done) } else { 0 };
            match n {
                0 => tl.gc(op, program, host_done),
                n => i = at + n,
            }
        }
    }
    (host_done, wait)
}
