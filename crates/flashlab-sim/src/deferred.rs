//! GC operations queued per die and booked on the timeline as host time advances
//! (`timing.bus_arbitration = "host-first"`; under `fifo` they are booked at once).
//!
//! The FTL issues a whole GC run (tens of milliseconds of die time) at once, right
//! after the host write that triggered it. Booking all of it at once would claim its
//! bus transfers ahead of host transfers that become ready earlier. Instead each GC
//! operation waits in its die's queue (the die's order is kept) and is booked when
//! host time reaches its start: before a host operation issued at `t`, every queued
//! operation that starts before `t` is booked, die by die (host first on a tie); a
//! host operation on a die first books everything queued on that die (urgent GC
//! before host I/O on its die). So host and GC transfers reach the bus roughly in the
//! order they become ready; the remaining disorder is within one inter-arrival gap
//! between dies, and costs a transfer at most the transfers it overlaps.

use crate::settings::BusArbitration;
use crate::timing::Timeline;
use flashlab_ftl::FlashOp;

/// A queued GC operation: a single operation, or a migration (`program` set) that
/// `Timeline::exec_migration` books as a unit. Not before `not_before`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Deferred {
    op: FlashOp,
    program: Option<FlashOp>,
    not_before: u64,
}

impl Timeline {
    /// GC operation `op` (with the migration's `program`, if any), not before
    /// `not_before`: booked now under `fifo` arbitration (booking order is the FTL's
    /// issue order), queued under `host-first`.
    #[inline]
    pub fn gc(&mut self, op: FlashOp, program: Option<FlashOp>, not_before: u64) {
        match self.t.bus_arbitration {
            BusArbitration::Fifo => self.book(Deferred { op, program, not_before }),
            BusArbitration::HostFirst => self.defer(op, program, not_before),
        }
    }

    /// Queue GC operation `op` (with the migration's `program`, if any) on its die.
    #[inline]
    pub fn defer(&mut self, op: FlashOp, program: Option<FlashOp>, not_before: u64) {
        let die = self.die_of(op.plane);
        if self.pending[die].is_empty() {
            self.due = self.due.min(not_before.max(self.die_free[die]));
        }
        self.pending[die].push_back(Deferred { op, program, not_before });
        if !self.listed[die] {
            self.listed[die] = true;
            self.pending_dies.push(die as u32);
        }
    }

    /// Book host operation `op`, issued at `issue` (issue times never go back): first
    /// the queued GC that starts before it, and everything queued on its own die.
    #[inline]
    pub fn host(&mut self, op: &FlashOp, issue: u64) -> u64 {
        self.host_at(op, None, issue, issue)
    }

    /// Book operation `op` (with a migration's `program`, if any) of a request issued at
    /// `issue`, on the request's critical path and ready at `ready` ≥ `issue`: the host
    /// operation itself, or foreground FTL work that must finish before it (a DFTL map
    /// miss, a hybrid merge that frees the log block the write needs). Like a host
    /// operation: first the queued GC that starts before `ready`, and everything queued
    /// on its own die. Returns its end.
    #[inline]
    pub fn host_at(&mut self, op: &FlashOp, program: Option<&FlashOp>, issue: u64, ready: u64) -> u64 {
        debug_assert!(issue >= self.floor && ready >= issue);
        self.catch_up(ready);
        let die = self.die_of(op.plane);
        self.flush_die(die);
        self.floor = issue;
        match program {
            Some(p) => self.exec_migration(op, p, ready),
            None => self.exec(op, ready),
        }
    }

    /// Book every queued operation that starts before `t`.
    #[inline]
    pub fn catch_up(&mut self, t: u64) {
        // `due` is a lower bound of every queued operation's start (starts only move
        // later, except when host-first arbitration moves a GC transfer, which resets it).
        if t <= self.due {
            return;
        }
        let (mut i, mut due) = (0, u64::MAX);
        while i < self.pending_dies.len() {
            let die = self.pending_dies[i] as usize;
            self.catch_up_die(die, t);
            match self.pending[die].front() {
                None => {
                    self.listed[die] = false;
                    self.pending_dies.swap_remove(i);
                }
                Some(d) => {
                    due = due.min(d.not_before.max(self.die_free[die]));
                    i += 1;
                }
            }
        }
        self.due = due;
    }

    /// Book the operations queued on `die` that start before `t`.
    #[inline]
    pub fn catch_up_die(&mut self, die: usize, t: u64) {
        while let Some(d) = self.pending[die].front() {
            if d.not_before.max(self.die_free[die]) >= t {
                break;
            }
            let d = self.pending[die].pop_front().expect("front exists");
            self.book(d);
        }
    }

    /// Book everything queued on `die`.
    #[inline]
    pub fn flush_die(&mut self, die: usize) {
        while let Some(d) = self.pending[die].pop_front() {
            self.book(d);
        }
    }

    /// Book everything queued.
    pub fn flush(&mut self) {
        self.catch_up(u64::MAX);
    }

    /// Whether `die` has queued GC operations.
    pub fn has_pending(&self, die: usize) -> bool {
        !self.pending[die].is_empty()
    }

    /// When a background GC step on `die` could start: the die idle, then the bus idle.
    pub fn idle_start(&self, die: usize) -> u64 {
        self.bus_idle_at(die, self.die_free[die].max(self.floor))
    }

    #[inline]
    fn book(&mut self, d: Deferred) {
        let ready = d.not_before.max(self.floor);
        match d.program {
            Some(p) => self.exec_migration(&d.op, &p, ready),
            None => self.exec(&d.op, ready),
        };
    }
}
