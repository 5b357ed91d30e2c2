//! A DFTL drain's translation-page rewrites booked in one pass.
//!
//! After a write whose GC moved pages, DFTL brings the map up to date by rewriting
//! each translation page that holds a moved page's entry: a read of its old copy (on
//! that copy's die) and a program of the new one on the translation frontier's die,
//! both through the controller (Gupta et al. 2009, §3.2; no copyback:
//! [`Timeline::copyback_allowed`]). [`crate::sched::schedule_ops`] books them after the
//! host operation as background work ready when the host's part completed, one
//! [`Timeline::gc`] per (read, program) pair or lone program: under `fifo` each op is
//! one [`Timeline::exec`] (`exec_read_program` for a pair on one die), whose dispatch
//! (the op's kind and cause, multi-plane and arbitration tests, the out-of-line
//! `occupy_die`) cost ≈ 120 instructions an op besides the booking
//! (docs/performance.md, "s13-timed"). [`Timeline::book_map_run`] books such a run
//! with the same arithmetic and the same calendar calls, op by op, in that order.
//! Bookings are identical to per-unit booking (unit test below, and the golden
//! configurations).

use crate::timing::{GcXfer, Timeline};
use flashlab_ftl::FlashOp;
use flashlab_nand::{Cause, OpKind};

impl Timeline {
    /// Book the leading map writes of `ops` — (read, program) pairs of cause `Mapping`
    /// and programs of that cause without a read — each ready at `not_before` (or the
    /// host floor), exactly as per-unit [`Timeline::gc`] calls would. Returns how many
    /// ops it booked (0 if `ops` does not start with one); stops at any other op (a
    /// lone read, an erase, another cause). Only when
    /// [`Timeline::books_migration_runs`] (`fifo`, no command cycles, no multi-plane
    /// state, no copyback).
    pub(crate) fn book_map_run(&mut self, ops: &[FlashOp], not_before: u64) -> usize {
        debug_assert!(self.books_migration_runs());
        let ready = not_before.max(self.floor);
        let mut n = 0;
        while let Some(op) = ops.get(n) {
            match (op.kind, op.cause, ops.get(n + 1)) {
                (OpKind::Read, Cause::Mapping, Some(p)) if p.kind == OpKind::Program && p.cause == Cause::Mapping => {
                    let die = self.die_of(op.plane);
                    match self.die_of(p.plane) {
                        d if d == die => self.book_map_pair(die, ready),
                        d => {
                            let r = self.book_map_op(die, ready, self.t.read_ns, 0);
                            self.book_map_op(d, r, 0, self.t.program_ns);
                        }
                    }
                    n += 2;
                }
                (OpKind::Program, Cause::Mapping, _) => {
                    self.book_map_op(self.die_of(op.plane), ready, 0, self.t.program_ns);
                    n += 1;
                }
                _ => break,
            }
        }
        n
    }

    /// A read (`before` = tR) or program (`after` = tPROG) of background work on
    /// `die`, ready at `ready`: [`Timeline::exec`] of it without command cycles or
    /// multi-plane state under `fifo`. Returns its end.
    #[inline(always)]
    fn book_map_op(&mut self, die: usize, ready: u64, before: u64, after: u64) -> u64 {
        let xfer = self.xfer_ns;
        let (ch, who) = self.chan_of(die);
        let start = ready.max(self.die_free[die]);
        let xr = start + before;
        let floor = self.prune_floor(ch);
        self.chan_busy_ns[ch] += xfer;
        let x = self.cal[ch].prune_book(floor, xr, xfer, who);
        let end = x + xfer + after;
        self.die_busy_ns[die] += before + xfer + after;
        self.die_wait_ns[die] += x - xr;
        self.die_free[die] = end;
        self.gc_until[die] = end;
        self.gc_xfer[die] = GcXfer { start: x, ready: xr };
        end
    }

    /// A (read, program) pair of background work on one die, ready at `ready`:
    /// `exec_read_program`'s one-search path.
    #[inline(always)]
    fn book_map_pair(&mut self, die: usize, ready: u64) {
        let (xfer, read_ns, program_ns) = (self.xfer_ns, self.t.read_ns, self.t.program_ns);
        let (ch, who) = self.chan_of(die);
        let xr1 = ready.max(self.die_free[die]) + read_ns;
        let floor = self.prune_floor(ch);
        self.chan_busy_ns[ch] += 2 * xfer;
        let (x1, x2) = self.cal[ch].prune_book_pair(floor, xr1, xfer, who);
        let xr2 = x1 + xfer;
        let end = x2 + xfer + program_ns;
        self.die_busy_ns[die] += read_ns + 2 * xfer + program_ns;
        self.die_wait_ns[die] += (x1 - xr1) + (x2 - xr2);
        self.die_free[die] = end;
        self.gc_until[die] = end;
        self.gc_xfer[die] = GcXfer { start: x2, ready: xr2 };
    }
}

#[cfg(test)]
mod tests {
    use crate::migrate_run::tests::{geometry, op, timing};
    use crate::timing::Timeline;
    use flashlab_ftl::FlashOp;
    use flashlab_nand::{Cause, OpKind};
    use proptest::prelude::*;

    /// Random batches after a host program: map writes (pairs across or within dies,
    /// lone programs), broken by a lone map read, an erase or a GC pair (where a run
    /// stops). One batch: time since the last one, the host's plane, and its ops as
    /// (kind, plane, other plane).
    type Batch = (u64, u32, Vec<(u8, u32, u32)>);

    fn batches() -> impl Strategy<Value = Vec<Batch>> {
        let step = (0u64..400_000, 0u32..16, prop::collection::vec((0u8..8, 0u32..16, 0u32..16), 0..24));
        prop::collection::vec(step, 1..60)
    }

    /// The ops of one batch: kinds 0–3 = a map pair from `plane` to `other`, 4 = a lone
    /// map program on `plane`, 5 = a lone map read, 6 = a map erase, 7 = a GC pair.
    fn ops_of(kinds: &[(u8, u32, u32)]) -> Vec<FlashOp> {
        let mut ops = Vec::new();
        for &(k, plane, other) in kinds {
            let (read, program) = match k {
                0..=3 => (Some((Cause::Mapping, plane)), Some((Cause::Mapping, other))),
                4 => (None, Some((Cause::Mapping, plane))),
                5 => (Some((Cause::Mapping, plane)), None),
                6 => {
                    ops.push(op(OpKind::Erase, Cause::Mapping, plane, 0));
                    (None, None)
                }
                _ => (Some((Cause::Gc, plane)), Some((Cause::Gc, plane))),
            };
            ops.extend(read.map(|(c, p)| op(OpKind::Read, c, p, k as u32)));
            ops.extend(program.map(|(c, p)| op(OpKind::Program, c, p, 1)));
        }
        ops
    }

    /// Per-unit booking, as `schedule_ops` does after the host operation without runs.
    fn book_each(tl: &mut Timeline, ops: &[FlashOp], not_before: u64) {
        let mut i = 0;
        while i < ops.len() {
            let o = ops[i];
            let migration = o.kind == OpKind::Read && o.cause != Cause::Host;
            let program = ops.get(i + 1).filter(|p| migration && p.kind == OpKind::Program && p.cause == o.cause);
            i += 1 + program.is_some() as usize;
            tl.gc(o, program.copied(), not_before);
        }
    }

    /// The same with runs of map writes booked by `book_map_run`.
    fn book_runs(tl: &mut Timeline, ops: &[FlashOp], not_before: u64) {
        let mut i = 0;
        while i < ops.len() {
            let n = match ops[i].cause {
                Cause::Mapping => tl.book_map_run(&ops[i..], not_before),
                _ => 0,
            };
            if n > 0 {
                i += n;
                continue;
            }
            // One unit the per-unit way.
            let o = ops[i];
            let pair = o.kind == OpKind::Read
                && ops.get(i + 1).is_some_and(|p| p.kind == OpKind::Program && p.cause == o.cause);
            let k = 1 + pair as usize;
            book_each(tl, &ops[i..i + k], not_before);
            i += k;
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]
        /// A run of map writes booked in one pass leaves every die, channel and counter
        /// exactly as booking its units one by one does, with host operations between.
        #[test]
        fn a_map_run_books_like_its_units(batches in batches()) {
            let (geo, t) = (geometry(), timing());
            let (mut each, mut runs) = (Timeline::new(&geo, t), Timeline::new(&geo, t));
            let mut issue = 0;
            for (gap, plane, kinds) in batches {
                issue += gap;
                let host = op(OpKind::Program, Cause::Host, plane, 0);
                let (a, b) = (each.host(&host, issue), runs.host(&host, issue));
                prop_assert_eq!(a, b);
                let ops = ops_of(&kinds);
                book_each(&mut each, &ops, a);
                book_runs(&mut runs, &ops, a);
                prop_assert_eq!(each.booked_state(), runs.booked_state());
            }
        }
    }
}
