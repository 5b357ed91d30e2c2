//! A hybrid FTL's merge booked on its die in one pass (issue 22 target 5).
//!
//! A merge of `block`, `bast`, `bast-padding` or `fast` (and BAST-padding's padding)
//! logs up to a whole unit of (read, program) pairs of cause `Merge` (`Padding`), then
//! the erases of the freed units (`crate::units`; Kim et al. 2002 §3). Issued before
//! the host write it makes room for, it is foreground work: pair by pair,
//! [`Timeline::host_at`] books each operation ready when the previous one ended;
//! issued after it (a log block filled by the write), [`Timeline::gc`] books each not
//! before the host operation's end. On one die both come to the same arithmetic (a
//! die's next operation starts when it is free, and it is free no earlier than the
//! previous operation ended). [`Timeline::book_merge_run`] books such a run as
//! `crate::migrate_run` books a GC victim's: with the same calendar calls, pair by
//! pair, but the die's clock and counters in locals and the channel's prune floor from
//! the other dies once per run. Bookings are identical to per-operation booking (the
//! property test below, and the golden configurations).

use crate::timing::{GcXfer, Timeline, NO_GC_XFER};
use flashlab_ftl::FlashOp;
use flashlab_nand::{Cause, OpKind};

/// Whether `cause` is a mapping scheme's merge work (copies, padding, unit erases).
#[inline]
pub(crate) fn is_merge(cause: Cause) -> bool {
    matches!(cause, Cause::Merge | Cause::Padding)
}

impl Timeline {
    /// Book the leading merge operations of `ops` that lie on the die of `ops[0]` —
    /// (read, program) pairs of one merge cause within that die, and erases — the first
    /// ready at `not_before` (or the host floor), each later one when the previous ends,
    /// exactly as per-operation [`Timeline::host_at`] calls (when `issue` is the
    /// request's issue time: foreground work) or [`Timeline::gc`] calls (`issue` None)
    /// would. Returns how many ops it booked (0 if `ops` does not start with such an
    /// operation) and when the last one ends. Only when
    /// [`Timeline::books_migration_runs`] (`fifo` arbitration: nothing is ever queued,
    /// so `host_at`'s catching up books nothing).
    pub(crate) fn book_merge_run<S: MergeUnits>(
        &mut self,
        ops: S,
        issue: Option<u64>,
        not_before: u64,
    ) -> (usize, u64) {
        debug_assert!(self.books_migration_runs() && self.pending_dies.is_empty());
        let Some(plane) = ops.first_plane() else { return (0, 0) };
        let die = self.die_of(plane);
        if ops.unit(self, (die, plane), 0) == 0 {
            return (0, 0);
        }
        if let Some(issue) = issue {
            debug_assert!(issue >= self.floor && not_before >= issue);
            self.floor = issue;
        }
        let (ch, who) = self.chan_of(die);
        // Every operation after the first is ready when the previous one ends, i.e.
        // when the die is free again: `ready.max(free)` is `free` from then on.
        let mut run = Run {
            ch,
            who,
            plane,
            others: self.other_dies_free(ch, die),
            ready: not_before.max(self.floor),
            free: self.die_free[die],
            busy: 0,
            wait: 0,
            pairs: 0,
            last: self.gc_xfer[die],
            n: 0,
            periodic: self.cal[ch].runs_pay(),
        };
        // The booking code without the periodic case while the channel holds no
        // periodic node (`crate::calendar::Calendar::has_periodic`): chosen once per
        // run, and again after the run books one. Each variant is a function of its
        // own: with the plain one inlined here (as `crate::migrate_run` does)
        // `map-bast-random-timed` took +7 % instructions.
        while match (self.cal[ch].has_periodic(), run.periodic) {
            (false, false) => self.merge_units::<false, false, S>(ops, die, &mut run),
            (false, true) => self.merge_units::<false, true, S>(ops, die, &mut run),
            (true, false) => self.merge_units::<true, false, S>(ops, die, &mut run),
            (true, true) => self.merge_units::<true, true, S>(ops, die, &mut run),
        } {}
        let xfer = self.xfer_ns;
        self.chan_busy_ns[ch] += run.pairs * 2 * xfer;
        self.die_busy_ns[die] += run.busy;
        self.die_wait_ns[die] += run.wait;
        self.die_free[die] = run.free;
        self.gc_until[die] = run.free;
        self.gc_xfer[die] = run.last;
        (run.n, run.free)
    }

    /// Book the merge run's units from `run.n` on; `P`: the channel may hold periodic
    /// nodes (`crate::calendar::Calendar::prune_in`); `TRY`: `run.periodic`, which it
    /// only clears. Returns true where it stopped because it booked the first periodic
    /// node (`P` false) or gave up booking them (`TRY` true), with units left.
    #[inline(never)]
    fn merge_units<const P: bool, const TRY: bool, S: MergeUnits>(
        &mut self,
        ops: S,
        die: usize,
        state: &mut Run,
    ) -> bool {
        let mut run = *state;
        let (xfer, read_ns, program_ns, erase_ns) = (self.xfer_ns, self.t.read_ns, self.t.program_ns, self.t.erase_ns);
        let (ch, who, others, ready) = (run.ch, run.who, run.others, run.ready);
        let on = (die, run.plane);
        loop {
            match ops.unit(self, on, run.n) {
                2 => {
                    // What `exec_read_program` does for one pair (see `crate::migrate_run`).
                    let xr1 = ready.max(run.free) + read_ns;
                    self.cal[ch].prune_in::<P>(self.floor.max(others.min(run.free)));
                    let (x1, x2) = self.cal[ch].book_pair_in::<P>(xr1, xfer, who);
                    let xr2 = x1 + xfer;
                    run.wait += (x1 - xr1) + (x2 - xr2);
                    run.busy += read_ns + 2 * xfer + program_ns;
                    run.free = x2 + xfer + program_ns;
                    run.last = GcXfer { start: x2, ready: xr2 };
                    run.pairs += 1;
                    run.n += 2;
                    if P {
                        // Filling another die's periodic node at one phase: in closed form.
                        let (period, first) = (read_ns + 2 * xfer + program_ns, run.free + read_ns);
                        let bound = self.floor.max(others.min(run.free));
                        let slots = self.cal[ch].fill_slots(who, first, period, xfer, bound, read_ns);
                        if slots >= 2 {
                            let end = ops.len().min(run.n + 2 * slots as usize);
                            let m = ops.pairs(self, on, run.n, end);
                            if m >= 2 {
                                #[cfg(test)]
                                tests::FILL_PAIRS.with(|f| f.set(f.get() + m));
                                self.cal[ch].fill_run(who, first, m, period);
                                let x = first + (m - 1) * period;
                                self.cal[ch].prune_in::<true>(self.floor.max(others.min(x - read_ns)));
                                run.busy += m * period;
                                run.free = x + 2 * xfer + program_ns;
                                run.last = GcXfer { start: x + xfer, ready: x + xfer };
                                run.pairs += m;
                                run.n += 2 * m as usize;
                                continue;
                            }
                        }
                    }
                    if TRY && self.cal[ch].is_last(who) {
                        // Behind everything: the following pairs in closed form, as in
                        // `crate::migrate_run`.
                        let period = read_ns + 2 * xfer + program_ns;
                        let more = ops.pairs(self, on, run.n, ops.len());
                        let first = run.free + read_ns;
                        if more >= 2 && self.cal[ch].append_run(who, first, more, period, xfer) {
                            let x = first + (more - 1) * period;
                            self.cal[ch].prune_in::<true>(self.floor.max(others.min(x - read_ns)));
                            run.busy += more * period;
                            run.free = x + 2 * xfer + program_ns;
                            run.last = GcXfer { start: x + xfer, ready: x + xfer };
                            run.pairs += more;
                            run.n += 2 * more as usize;
                            if !P {
                                *state = run;
                                return true;
                            }
                        } else {
                            run.periodic = false;
                            *state = run;
                            return true;
                        }
                    }
                }
                1 => {
                    // What `exec` does for an erase without command cycles.
                    run.busy += erase_ns;
                    run.free = ready.max(run.free) + erase_ns;
                    run.last = NO_GC_XFER;
                    run.n += 1;
                }
                _ => {
                    *state = run;
                    return false;
                }
            }
        }
    }
}

/// A merge run's place and the die's clock and counters, kept in locals between its
/// bookings ([`Timeline::book_merge_run`]).
#[derive(Clone, Copy)]
struct Run {
    ch: usize,
    who: usize,
    /// A plane of the die (its first op's): ops on it need no lookup of their die.
    plane: u32,
    /// The earliest time another die of the channel is free.
    others: u64,
    ready: u64,
    free: u64,
    busy: u64,
    wait: u64,
    pairs: u64,
    last: GcXfer,
    /// Ops booked.
    n: usize,
    /// Whether runs may still be booked as periodic nodes.
    periodic: bool,
}

/// What a merge run books from (`Timeline::book_merge_run`): ops as logged, or a
/// stretch of a [`flashlab_ftl::MergeMoves`]'s pairs known to lie on one die
/// ([`SamePairs`]). Positions count ops: a pair is two.
pub(crate) trait MergeUnits: Copy {
    /// The plane of the first op (None if there is none).
    fn first_plane(self) -> Option<u32>;
    /// Ops in all.
    fn len(self) -> usize;
    /// The booking unit at position `n` if it is merge work on die `on.0` ([`unit_on`]).
    fn unit(self, tl: &Timeline, on: (usize, u32), n: usize) -> usize;
    /// How many such (read, program) pairs positions `n..end` start with.
    fn pairs(self, tl: &Timeline, on: (usize, u32), n: usize, end: usize) -> u64;
}

impl MergeUnits for &[FlashOp] {
    #[inline]
    fn first_plane(self) -> Option<u32> {
        self.first().map(|op| op.plane)
    }
    #[inline]
    fn len(self) -> usize {
        <[FlashOp]>::len(self)
    }
    #[inline]
    fn unit(self, tl: &Timeline, on: (usize, u32), n: usize) -> usize {
        unit_on(tl, on, &self[n..])
    }
    fn pairs(self, tl: &Timeline, on: (usize, u32), n: usize, end: usize) -> u64 {
        self[n..end].chunks_exact(2).take_while(|p| unit_on(tl, on, p) == 2).count() as u64
    }
}

/// `count` (read, program) pairs of merge work, every op on the die of `plane` (the
/// caller checked: `crate::merge_moves`).
#[derive(Clone, Copy)]
pub(crate) struct SamePairs {
    pub plane: u32,
    pub count: u64,
}

impl MergeUnits for SamePairs {
    #[inline]
    fn first_plane(self) -> Option<u32> {
        (self.count > 0).then_some(self.plane)
    }
    #[inline]
    fn len(self) -> usize {
        2 * self.count as usize
    }
    #[inline]
    fn unit(self, _: &Timeline, _: (usize, u32), n: usize) -> usize {
        if n < self.len() {
            2
        } else {
            0
        }
    }
    #[inline]
    fn pairs(self, _: &Timeline, _: (usize, u32), n: usize, end: usize) -> u64 {
        (end.min(self.len()).saturating_sub(n) / 2) as u64
    }
}

/// The booking unit at the start of `ops` if it is merge work on die `die`: 2 for a
/// (read, program) pair of one merge cause within the die, 1 for an erase; else 0.
/// `plane` is a plane of that die: an op on it needs no lookup of its die (a hybrid
/// merge's reads and programs mostly lie on the plane of its first op: "s15-bast").
#[inline]
fn unit_on(tl: &Timeline, (die, plane): (usize, u32), ops: &[FlashOp]) -> usize {
    let on_die = |p: u32| p == plane || tl.die_of(p) == die;
    match ops {
        [e, ..] if e.kind == OpKind::Erase && is_merge(e.cause) && on_die(e.plane) => 1,
        [r, p, ..]
            if r.kind == OpKind::Read
                && p.kind == OpKind::Program
                && is_merge(r.cause)
                && p.cause == r.cause
                && on_die(r.plane)
                && on_die(p.plane) =>
        {
            2
        }
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use crate::timing::Timeline;
    use flashlab_ftl::FlashOp;
    use flashlab_nand::{Cause, OpKind};
    use proptest::prelude::*;
    // The same small device, timing and op builder as migrate_run's oracle test.
    use crate::migrate_run::tests::{geometry, op, timing};

    /// One request: time since the last one, its plane, whether its merge comes after
    /// the host write (else before it), and its merge ops as (kind, other plane).
    type Request = (u64, u32, bool, Vec<(u8, u32)>);

    fn requests() -> impl Strategy<Value = Vec<Request>> {
        let one = (0u64..400_000, 0u32..16, any::<bool>(), prop::collection::vec((0u8..9, 0u32..16), 0..24));
        prop::collection::vec(one, 1..50)
    }

    /// A merge's ops: `kinds` 0–3 = a merge pair on `plane`, 4 = a pair whose program
    /// is on plane `other`, 5 = a padding pair, 6 = an erase on `plane`, 7 = an erase
    /// on `other`, 8 = a lone merge read on `other` (where runs stop).
    fn merge_ops(plane: u32, kinds: &[(u8, u32)]) -> Vec<FlashOp> {
        let mut ops = Vec::new();
        for &(k, other) in kinds {
            match k {
                0..=3 => {
                    ops.push(op(OpKind::Read, Cause::Merge, plane, k as u32));
                    ops.push(op(OpKind::Program, Cause::Merge, plane, 1));
                }
                4 => {
                    ops.push(op(OpKind::Read, Cause::Merge, plane, 2));
                    ops.push(op(OpKind::Program, Cause::Merge, other, 3));
                }
                5 => {
                    ops.push(op(OpKind::Read, Cause::Padding, plane, 2));
                    ops.push(op(OpKind::Program, Cause::Padding, plane, 3));
                }
                6 => ops.push(op(OpKind::Erase, Cause::Merge, plane, 0)),
                7 => ops.push(op(OpKind::Erase, Cause::Merge, other, 0)),
                _ => ops.push(op(OpKind::Read, Cause::Merge, other, 4)),
            }
        }
        ops
    }

    /// Ops in the booking unit starting at `ops[0]`, as `Engine::schedule` pairs them.
    fn unit(ops: &[FlashOp]) -> usize {
        match ops {
            [r, p, ..] if r.kind == OpKind::Read && p.kind == OpKind::Program && p.cause == r.cause => 2,
            _ => 1,
        }
    }

    /// Book `ops` op by op as `Engine::schedule` does without runs: foreground (`issue`
    /// given) each ready when the previous ends, else each not before `not_before`.
    /// Returns when the last foreground op ends.
    fn book_each(tl: &mut Timeline, ops: &[FlashOp], issue: Option<u64>, not_before: u64) -> u64 {
        let (mut i, mut ready) = (0, not_before);
        while i < ops.len() {
            let n = unit(&ops[i..]);
            let program = (n == 2).then(|| ops[i + 1]);
            match issue {
                Some(issue) => ready = tl.host_at(&ops[i], program.as_ref(), issue, ready),
                None => tl.gc(ops[i], program, not_before),
            }
            i += n;
        }
        ready
    }

    /// The same with runs booked by `book_merge_run`.
    fn book_runs(tl: &mut Timeline, ops: &[FlashOp], issue: Option<u64>, not_before: u64) -> u64 {
        let (mut i, mut ready) = (0, not_before);
        while i < ops.len() {
            let (n, end) = tl.book_merge_run(&ops[i..], issue, if issue.is_some() { ready } else { not_before });
            if n > 0 {
                i += n;
                if issue.is_some() {
                    ready = end;
                }
                continue;
            }
            let n = unit(&ops[i..]);
            ready = book_each(tl, &ops[i..i + n], issue, ready);
            i += n;
        }
        ready
    }

    std::thread_local! {
        /// Merge pairs booked by [`crate::calendar::Calendar::fill_run`] on this thread
        /// (tests only: whether a test reaches the fill path).
        pub(super) static FILL_PAIRS: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
    }

    /// Book `requests` on two timelines, op by op and in runs, and compare every die,
    /// channel and counter after each request.
    fn books_alike(requests: Vec<Request>, t: crate::settings::TimingSettings) -> Result<(), TestCaseError> {
        let geo = geometry();
        let (mut each, mut runs) = (Timeline::new(&geo, t), Timeline::new(&geo, t));
        let mut issue = 0;
        for (gap, plane, after, kinds) in requests {
            issue += gap;
            let ops = merge_ops(plane, &kinds);
            let host = op(OpKind::Program, Cause::Host, plane, 0);
            if after {
                let (a, b) = (each.host(&host, issue), runs.host(&host, issue));
                prop_assert_eq!(a, b);
                book_each(&mut each, &ops, None, a);
                book_runs(&mut runs, &ops, None, b);
            } else {
                let a = book_each(&mut each, &ops, Some(issue), issue);
                let b = book_runs(&mut runs, &ops, Some(issue), issue);
                prop_assert_eq!(a, b);
                let (a, b) = (each.host_at(&host, None, issue, a), runs.host_at(&host, None, issue, b));
                prop_assert_eq!(a, b);
            }
            prop_assert_eq!(each.floor, runs.floor);
            prop_assert_eq!(each.booked_state(), runs.booked_state());
            prop_assert_eq!(each.last_gc_wait_ns, runs.last_gc_wait_ns);
        }
        Ok(())
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]
        /// A merge booked in runs leaves every die, channel and counter exactly as
        /// booking it op by op does, foreground or after the host write, with host
        /// operations in between.
        #[test]
        fn a_merge_run_books_like_its_operations(requests in requests()) {
            books_alike(requests, timing())?;
        }
    }

    /// The same at the default timing (read 20 µs, transfer 102.4 µs, program 200 µs),
    /// with long merges of mostly same-die pairs on the dies of one channel, a few
    /// requests apart: there a second die's pairs fill the gaps of the first die's run
    /// at one phase, merging with both neighbours, and are booked in closed form
    /// ([`crate::calendar::Calendar::fill_run`]; "s14-timed"), which the test asserts
    /// happens.
    #[test]
    fn merge_runs_that_fill_book_like_their_operations() {
        use proptest::test_runner::{Config, TestRunner};
        let t = crate::settings::TimingSettings { read_ns: 20_000, byte_ps: 25_000, ..timing() };
        let kind = prop_oneof![12 => 0u8..4, 1 => 4u8..9];
        let one = (0u64..150_000, 0u32..8, any::<bool>(), prop::collection::vec((kind, 0u32..8), 0..80));
        let mut runner = TestRunner::new(Config { cases: 150, ..Config::default() });
        FILL_PAIRS.with(|f| f.set(0));
        runner.run(&prop::collection::vec(one, 1..40), |r| books_alike(r, t)).unwrap();
        let fills = FILL_PAIRS.with(|f| f.get());
        assert!(fills > 100, "only {fills} merge pairs were booked as fills");
    }
}
