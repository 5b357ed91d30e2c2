//! A one-word merge logged as a [`MergeMoves`] booked without its per-op pairs (issue
//! 22 target 5, "s16-merge").
//!
//! The FTL logs a merge this way only when the engine asked for it once per run
//! (`Engine::begin`: [`Timeline::books_migration_runs`], not pipelined). Its pairs are
//! booked as [`crate::sched::schedule_ops`] books the same merge's ops: stretches of
//! pairs whose read and program lie on the program's die as merge runs
//! ([`Timeline::book_merge_run`] of a [`SamePairs`]: the run's count is known, no op is
//! looked at), each other pair op by op (`host_at` before the host operation, `gc`
//! after it). A run may be split anywhere: run booking equals per-op booking
//! (`crate::merge_run`'s property tests), so the result is the per-op booking's; the
//! test below compares a description booked this way with its expanded ops booked one
//! by one.

use crate::merge_run::SamePairs;
use crate::timing::Timeline;
use flashlab_ftl::{FlashOp, MergeMoves};

/// Where `crate::sched::schedule_ops` is in a call's ops: before the host operation
/// (`foreground`: merges delay it, `ready` is when its foreground work ends) or after.
pub(crate) struct Stage<'a> {
    pub issue: u64,
    pub foreground: bool,
    pub ready: &'a mut u64,
    pub host_done: &'a mut u64,
}

/// Book `m`, whose moved reads are `reads`, as its expanded ops would be booked.
pub(crate) fn book_moves(tl: &mut Timeline, m: &MergeMoves, reads: &[FlashOp], st: Stage<'_>) {
    let die = tl.die_of(m.dst_plane);
    let off = off_die(tl, m, reads, die);
    let mut left = m.bits;
    while left != 0 {
        let stop = left & off;
        // The positions before the first pair off the die.
        let run = if stop == 0 { left } else { left & ((stop & stop.wrapping_neg()) - 1) };
        if run != 0 {
            let pairs = SamePairs { plane: m.dst_plane, count: run.count_ones() as u64 };
            let (issue, not_before) = match st.foreground {
                true => (Some(st.issue), *st.ready),
                false => (None, *st.host_done),
            };
            let (n, end) = tl.book_merge_run(pairs, issue, not_before);
            debug_assert_eq!(n as u64, 2 * pairs.count);
            if st.foreground {
                *st.ready = end;
                *st.host_done = (*st.host_done).max(end);
            }
            left &= !run;
        }
        if stop != 0 {
            let k = stop.trailing_zeros();
            let (read, program) = (m.read(k, reads), m.program(k));
            if st.foreground {
                *st.ready = tl.host_at(&read, Some(&program), st.issue, *st.ready);
                *st.host_done = (*st.host_done).max(*st.ready);
            } else {
                tl.gc(read, Some(program), *st.host_done);
            }
            left &= !(1u64 << k);
        }
    }
}

/// The positions of `m` whose read lies off `die` (its program's die).
#[inline]
fn off_die(tl: &Timeline, m: &MergeMoves, reads: &[FlashOp], die: usize) -> u64 {
    let on = |plane: u32| plane == m.dst_plane || tl.die_of(plane) == die;
    let mut off = if on(m.src_plane) { 0 } else { m.bits & !m.moved };
    let mut v = m.moved;
    for r in reads {
        let k = v.trailing_zeros();
        v &= v - 1;
        if !on(r.plane) {
            off |= 1u64 << k;
        }
    }
    off
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::migrate_run::tests::{geometry, op, timing};
    use crate::sched::schedule_ops;
    use flashlab_ftl::expand_merge_moves;
    use flashlab_nand::{Cause, OpKind};
    use proptest::prelude::*;

    /// One request: time since the last one, its plane, whether its merges come after
    /// the host write, and its merges: (bits, moved, source plane, destination plane,
    /// planes of the moved reads), with an erase after each on the destination plane.
    type Merge = (u64, u64, u32, u32, Vec<u32>);
    type Request = (u64, u32, bool, Vec<Merge>);

    fn merge(planes: u32) -> impl Strategy<Value = Merge> {
        let plane = move || prop_oneof![3 => Just(0u32), 1 => 0..planes];
        (any::<u64>(), any::<u64>(), plane(), plane(), prop::collection::vec(plane(), 64))
            .prop_map(|(bits, moved, s, d, r)| (bits, moved & bits, s, d, r))
    }

    /// `m`'s planes relative to `base` (the request's plane), as `MergeMoves`, its
    /// moved reads, and the erase after it.
    fn moves(base: u32, planes: u32, (bits, moved, s, d, r): &Merge) -> (MergeMoves, Vec<FlashOp>, FlashOp) {
        let at = |p: u32| (base + p) % planes;
        let m = MergeMoves {
            cause: Cause::Merge,
            bits: *bits,
            moved: *moved,
            src_first: 64,
            src_plane: at(*s),
            dst_first: 128,
            dst_plane: at(*d),
        };
        let reads = (0..moved.count_ones() as usize).map(|i| op(OpKind::Read, Cause::Merge, at(r[i]), 7)).collect();
        (m, reads, op(OpKind::Erase, Cause::Merge, at(*d), 0))
    }

    /// Per-op booking of `ops` as `Engine::schedule` does without runs.
    fn book_each(tl: &mut Timeline, ops: &[FlashOp], issue: u64) -> u64 {
        let (mut host_done, mut ready, mut host_seen, mut i) = (issue, issue, false, 0);
        while let Some(&o) = ops.get(i) {
            let program = ops.get(i + 1).filter(|p| o.kind == OpKind::Read && p.kind == OpKind::Program).copied();
            i += 1 + program.is_some() as usize;
            if o.cause == Cause::Host {
                host_done = host_done.max(tl.host_at(&o, None, issue, ready));
                host_seen = true;
            } else if !host_seen {
                ready = tl.host_at(&o, program.as_ref(), issue, ready);
                host_done = host_done.max(ready);
            } else {
                tl.gc(o, program, host_done);
            }
        }
        host_done
    }

    fn books_alike(
        requests: Vec<Request>,
        t: crate::settings::TimingSettings,
        planes: u32,
    ) -> Result<(), TestCaseError> {
        let geo = geometry();
        let (mut each, mut compact) = (Timeline::new(&geo, t), Timeline::new(&geo, t));
        prop_assert!(compact.books_migration_runs());
        let mut issue = 0;
        for (gap, plane, after, merges) in requests {
            issue += gap;
            let host = op(OpKind::Program, Cause::Host, plane, 0);
            let (mut ops, mut list) = (Vec::new(), Vec::new());
            if after {
                ops.push(host);
            }
            for mg in &merges {
                let (m, reads, erase) = moves(plane, planes, mg);
                ops.push(FlashOp::merge_moves(list.len(), m.cause));
                ops.extend(reads);
                ops.push(erase);
                list.push(m);
            }
            if !after {
                ops.push(host);
            }
            let a = book_each(&mut each, &expand_merge_moves(&ops, &list), issue);
            let b = schedule_ops(&mut compact, &ops, &list, issue).0;
            prop_assert_eq!(a, b);
            prop_assert_eq!(each.floor, compact.floor);
            prop_assert_eq!(each.booked_state(), compact.booked_state());
            prop_assert_eq!(each.last_gc_wait_ns, compact.last_gc_wait_ns);
        }
        Ok(())
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]
        /// A merge logged as `MergeMoves` books exactly as its ops booked one by one
        /// (foreground or after the host write, reads on other dies among its pairs),
        /// at the small test timing and at the default one (where runs fill other
        /// dies' periodic nodes: `merge_runs_that_fill_book_like_their_operations`).
        #[test]
        fn merge_moves_book_like_their_operations(
            requests in prop::collection::vec((0u64..400_000, 0u32..16, any::<bool>(),
                                               prop::collection::vec(merge(16), 0..3)), 1..30),
            default_timing in any::<bool>(),
        ) {
            let t = match default_timing {
                true => crate::settings::TimingSettings { read_ns: 20_000, byte_ps: 25_000, ..timing() },
                false => timing(),
            };
            books_alike(requests, t, 16)?;
        }
    }
}
