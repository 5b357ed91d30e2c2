//! A GC victim's run of migrations booked on its die in one pass.
//!
//! Without placement the FTL moves a victim's valid pages to one GC frontier in its
//! plane (`PageFtl::migrate_runs`), so a GC run logs a run of (read, program) pairs on
//! one die. Under `fifo` arbitration each pair is booked when issued, one after the
//! other ([`Timeline::exec_migration`]): the read on the die, its transfer out, the
//! program's transfer in right behind it, tPROG. [`Timeline::book_migration_run`] books
//! such a run with the same arithmetic and the same calendar calls, pair by pair, but
//! keeps the die's clock and counters in locals and finds the channel's prune floor
//! from the other dies once per run instead of once per transfer. Bookings are
//! identical to per-pair booking (unit test below, and the golden configurations).

use crate::settings::BusArbitration;
use crate::timing::{GcXfer, Timeline};
use flashlab_ftl::FlashOp;
use flashlab_nand::{Cause, OpKind};

impl Timeline {
    /// Whether [`Timeline::book_migration_run`] applies to this timeline: `fifo`
    /// arbitration, no command cycles, no multi-plane state, no copyback (the settings
    /// under which a migration is one [`crate::calendar::Calendar::book_pair`]).
    pub(crate) fn books_migration_runs(&self) -> bool {
        self.t.bus_arbitration == BusArbitration::Fifo
            && self.t.command_ns == 0
            && !self.t.multiplane
            && !self.t.copyback
    }

    /// Book the leading GC migrations of `ops` — (read, program) pairs of cause GC
    /// whose read and program lie on the die of `ops[0]` — each ready at `not_before`
    /// (or the host floor), exactly as per-pair [`Timeline::exec_migration`] calls
    /// would. Returns how many ops it booked (an even number; 0 if `ops` does not
    /// start with such a pair). Only when [`Timeline::books_migration_runs`].
    pub(crate) fn book_migration_run(&mut self, ops: &[FlashOp], not_before: u64) -> usize {
        debug_assert!(self.books_migration_runs());
        let Some(first) = ops.first() else { return 0 };
        let die = self.die_of(first.plane);
        // The booking code without the periodic case unless the channel holds a
        // periodic node (`crate::calendar::Calendar::has_periodic`): chosen once per run.
        // Whether to try booking the run in closed form is chosen once per run too
        // (`Calendar::runs_pay`). The plain variant is inlined here, as the one loop
        // was before; the others are functions of their own: all inlined into one,
        // every variant ran slower (register pressure and layout, +15 instructions a pair).
        let cal = &self.cal[self.chan_of(die).0];
        match (cal.has_periodic(), cal.runs_pay()) {
            (false, false) => self.migration_run::<false, false>(ops, die, not_before),
            (false, true) => self.migration_run_out::<false, true>(ops, die, not_before),
            (true, false) => self.migration_run_out::<true, false>(ops, die, not_before),
            (true, true) => self.migration_run_out::<true, true>(ops, die, not_before),
        }
    }

    /// [`Timeline::migration_run`] out of line.
    #[inline(never)]
    fn migration_run_out<const P: bool, const TRY: bool>(
        &mut self,
        ops: &[FlashOp],
        die: usize,
        not_before: u64,
    ) -> usize {
        self.migration_run::<P, TRY>(ops, die, not_before)
    }

    /// [`Timeline::book_migration_run`] of the run on `die`; `P`: the channel may hold
    /// periodic nodes (`crate::calendar::Calendar::prune_in`); `TRY`: book the run's
    /// rest as a periodic node where it lands behind everything. A run that books a
    /// periodic node ends right after it.
    #[inline(always)]
    fn migration_run<const P: bool, const TRY: bool>(&mut self, ops: &[FlashOp], die: usize, not_before: u64) -> usize {
        let (ch, who) = self.chan_of(die);
        let ready = not_before.max(self.floor);
        let others = self.other_dies_free(ch, die);
        let (xfer, read_ns, program_ns) = (self.xfer_ns, self.t.read_ns, self.t.program_ns);
        let (mut free, mut wait, mut last) = (self.die_free[die], 0, None);
        let (plane_die, floor, cal) = (&self.plane_die, self.floor, &mut self.cal[ch]);
        let (mut n, mut planes, mut periodic) = (0, (u32::MAX, u32::MAX), TRY);
        while let [read, program, ..] = &ops[n..] {
            if !is_migration_on(plane_die, die, read, program, &mut planes) {
                break;
            }
            // What `exec_read_program` does for one pair, with `prune`'s floor from
            // the other dies' (unchanged) clocks and this die's local one.
            let xr1 = ready.max(free) + read_ns;
            cal.prune_in::<P>(floor.max(others.min(free)));
            let (x1, x2) = cal.book_pair_in::<P>(xr1, xfer, who);
            let xr2 = x1 + xfer;
            wait += (x1 - xr1) + (x2 - xr2);
            free = x2 + xfer + program_ns;
            last = Some(GcXfer { start: x2, ready: xr2 });
            n += 2;
            if periodic && cal.is_last(who) {
                // Behind everything on the channel: each further pair of the run is
                // ready when the die is free again and booked then (`crate::calendar`'s
                // periodic nodes), one period after the previous one.
                let period = read_ns + 2 * xfer + program_ns;
                let mut peek = planes;
                let more = ops[n..]
                    .chunks_exact(2)
                    .take_while(|p| is_migration_on(plane_die, die, &p[0], &p[1], &mut peek))
                    .count() as u64;
                let first = free + read_ns;
                if more >= 2 && cal.append_run(who, first, more, period, xfer) {
                    let x = first + (more - 1) * period;
                    // The last pair's `prune`, with the die free as the pair before ends.
                    cal.prune_in::<true>(floor.max(others.min(x - read_ns)));
                    free = x + 2 * xfer + program_ns;
                    last = Some(GcXfer { start: x + xfer, ready: x + xfer });
                    n += 2 * more as usize;
                    break;
                }
                // Not in closed form (too short, or it would merge): pair by pair.
                periodic = false;
            }
        }
        let Some(last) = last else { return 0 };
        let pairs = (n / 2) as u64;
        self.chan_busy_ns[ch] += pairs * 2 * xfer;
        self.die_busy_ns[die] += pairs * (read_ns + 2 * xfer + program_ns);
        self.die_wait_ns[die] += wait;
        self.die_free[die] = free;
        self.gc_until[die] = free;
        self.gc_xfer[die] = last;
        n
    }

    /// The earliest time any die of channel `ch` other than `die` is free (u64::MAX if none).
    pub(crate) fn other_dies_free(&self, ch: usize, die: usize) -> u64 {
        let dies = ch * self.res_per_channel..(ch + 1) * self.res_per_channel;
        dies.filter(|&d| d != die).map(|d| self.die_free[d]).min().unwrap_or(u64::MAX)
    }
}

/// Whether `read` → `program` is a GC migration through the controller on `die`
/// (`plane_die`: [`Timeline`]'s die of each plane). `planes`: the (read, program)
/// planes of the run's last pair, which passed; a run's pairs read one victim and
/// program one frontier, so the die lookups are skipped while the planes repeat.
#[inline(always)]
fn is_migration_on(plane_die: &[u32], die: usize, read: &FlashOp, program: &FlashOp, planes: &mut (u32, u32)) -> bool {
    if kinds(read, program) != MIGRATION {
        return false;
    }
    let p = (read.plane, program.plane);
    if p == *planes {
        return true;
    }
    let on = plane_die[p.0 as usize] as usize == die && plane_die[p.1 as usize] as usize == die;
    if on {
        *planes = p;
    }
    on
}

/// The kinds and causes of a (read, program) pair packed into one word, so that
/// [`is_migration_on`] tests all four with one compare.
#[inline(always)]
fn kinds(read: &FlashOp, program: &FlashOp) -> u32 {
    u32::from_le_bytes([read.kind as u8, read.cause as u8, program.kind as u8, program.cause as u8])
}

/// [`kinds`] of a GC migration.
const MIGRATION: u32 =
    u32::from_le_bytes([OpKind::Read as u8, Cause::Gc as u8, OpKind::Program as u8, Cause::Gc as u8]);

#[cfg(test)]
pub(crate) mod tests {
    use crate::settings::{BusArbitration, TimingSettings};
    use crate::timing::Timeline;
    use flashlab_ftl::FlashOp;
    use flashlab_nand::{Cause, Geometry, OpKind};
    use proptest::prelude::*;

    pub(crate) fn geometry() -> Geometry {
        Geometry {
            channels: 2,
            chips_per_channel: 2,
            dies_per_chip: 2,
            planes_per_die: 2,
            blocks_per_plane: 8,
            pages_per_block: 16,
            page_bytes: 4096,
        }
    }

    pub(crate) fn timing() -> TimingSettings {
        TimingSettings {
            read_ns: 40_000,
            program_ns: 200_000,
            erase_ns: 1_500_000,
            byte_ps: 10_000,
            command_ns: 0,
            copyback: false,
            copyback_same_parity: false,
            multiplane: false,
            die_interleaving: true,
            bus_arbitration: BusArbitration::Fifo,
            trim_command_ns: 0,
            trim_page_ns: 0,
            trim_queued: true,
            pipeline: false,
        }
    }

    pub(crate) fn op(kind: OpKind, cause: Cause, plane: u32, page: u32) -> FlashOp {
        FlashOp { kind, cause, plane, page }
    }

    /// Random batches: either a host op, or a GC run on one plane, possibly broken by
    /// a pair whose program lies on another die or by an erase (where a run stops).
    /// One batch: time since the last one, the plane, and its GC ops as (kind, other plane).
    type Batch = (u64, u32, Vec<(u8, u32)>);

    fn batches() -> impl Strategy<Value = Vec<Batch>> {
        let step = (0u64..400_000, 0u32..16, prop::collection::vec((0u8..6, 0u32..16), 0..24));
        prop::collection::vec(step, 1..60)
    }

    /// The ops of one batch: `kinds` 0–3 = a GC pair on `plane`, 4 = a pair whose
    /// program is on plane `other`, 5 = a GC erase.
    fn ops_of(plane: u32, kinds: &[(u8, u32)]) -> Vec<FlashOp> {
        let mut ops = Vec::new();
        for &(k, other) in kinds {
            match k {
                0..=3 => {
                    ops.push(op(OpKind::Read, Cause::Gc, plane, k as u32));
                    ops.push(op(OpKind::Program, Cause::Gc, plane, 1));
                }
                4 => {
                    ops.push(op(OpKind::Read, Cause::Gc, plane, 2));
                    ops.push(op(OpKind::Program, Cause::Gc, other, 3));
                }
                _ => ops.push(op(OpKind::Erase, Cause::Gc, plane, 0)),
            }
        }
        ops
    }

    /// Ops in the booking unit starting at `ops[0]`: a (read, program) pair, or one op.
    fn unit(ops: &[FlashOp]) -> usize {
        match ops {
            [r, p, ..] if r.kind == OpKind::Read && p.kind == OpKind::Program => 2,
            _ => 1,
        }
    }

    /// Per-unit booking, as `Engine::schedule` does without runs.
    fn book_each(tl: &mut Timeline, ops: &[FlashOp], not_before: u64) {
        let mut i = 0;
        while i < ops.len() {
            let n = unit(&ops[i..]);
            tl.gc(ops[i], (n == 2).then(|| ops[i + 1]), not_before);
            i += n;
        }
    }

    /// The same with runs booked by `book_migration_run`.
    fn book_runs(tl: &mut Timeline, ops: &[FlashOp], not_before: u64) {
        let mut i = 0;
        while i < ops.len() {
            let mut n = tl.book_migration_run(&ops[i..], not_before);
            if n == 0 {
                n = unit(&ops[i..]);
                book_each(tl, &ops[i..i + n], not_before);
            }
            i += n;
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]
        /// A run booked in one pass leaves every die, channel and counter exactly as
        /// booking its pairs one by one does, with host operations in between.
        #[test]
        fn a_migration_run_books_like_its_pairs(batches in batches()) {
            let (geo, t) = (geometry(), timing());
            let (mut each, mut runs) = (Timeline::new(&geo, t), Timeline::new(&geo, t));
            let mut issue = 0;
            for (gap, plane, kinds) in batches {
                issue += gap;
                let host = op(OpKind::Program, Cause::Host, plane, 0);
                let (a, b) = (each.host(&host, issue), runs.host(&host, issue));
                prop_assert_eq!(a, b);
                let ops = ops_of(plane, &kinds);
                book_each(&mut each, &ops, a);
                book_runs(&mut runs, &ops, a);
                prop_assert_eq!(each.booked_state(), runs.booked_state());
            }
        }
    }
}
