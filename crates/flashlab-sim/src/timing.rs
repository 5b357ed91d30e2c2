//! Timeline of dies and channel buses.
//!
//! Each array resource (a die, or a chip without die interleaving) serves its own
//! operations in order and keeps the time it becomes free. Each channel bus keeps a
//! calendar of booked transfers ([`crate::calendar`]): a transfer occupies the bus
//! only for its own duration and takes the earliest free interval at or after the
//! moment it is ready, so transfers of different dies interleave on the bus.
//!
//! - read:    command and tR on the die, then the page crosses the channel;
//! - program: command on the die, the page crosses the channel, then tPROG;
//! - erase:   command, then tBERS on the die.
//!
//! Host operations are booked when their request is issued. Bus arbitration
//! (`timing.bus_arbitration`): `fifo` (default) = GC operations are booked when the FTL
//! issues them, and transfers are served in booking order, each in the earliest free
//! slot at or after it is ready; `host-first` = GC operations are queued per die
//! ([`crate::deferred`]) and booked as host time advances, and a host transfer goes
//! before a GC transfer that has not started by the time the host transfer is ready
//! (the bus is not preempted: a started transfer finishes); the GC operation whose
//! transfer moves back finishes correspondingly later.
//!
//! Die accounting: busy = command + array time (tR, tPROG, tBERS) + the die's own
//! transfer; *wait* = time the die is held for the bus (a program's register waiting
//! to be filled, a read's register holding a page until the bus takes it), reported
//! apart. Command cycles (`timing.command_ns`, default 0) are charged to the die.
//!
//! Advanced commands (each switchable, each counted):
//! - multi-plane (`timing.multiplane`): a host read or program on another plane of the
//!   die its previous operation used, at the same page offset, ready at the same time,
//!   with nothing in between, joins that operation: programs share one tPROG after
//!   their transfers, reads share one tR before theirs;
//! - die interleaving (`timing.die_interleaving`, on by default): off, all dies of a
//!   chip share one busy timeline;
//! - copyback (`timing.copyback`): a GC migration inside one die needs no transfer.
//!
//! Idle-device closed forms: read = command + tR + transfer, program = command +
//! transfer + tPROG, erase = command + tBERS.

use crate::calendar::{Calendar, Slot};
use crate::deferred::Deferred;
use crate::settings::{BusArbitration, TimingSettings};
use flashlab_ftl::FlashOp;
use flashlab_nand::{Cause, Geometry, OpKind};
use std::collections::VecDeque;

/// A die's last operation, for merging the next one into a multi-plane operation.
#[derive(Clone, Copy, Debug, Default)]
struct MultiPlane {
    kind: Option<OpKind>,
    ready: u64,
    offset: u32,
    planes: u64,
    /// Read: end of the last transfer out; program: end of the last transfer in.
    xfer_end: u64,
    end: u64,
}

/// The transfer of a die's last booked operation, if that is a GC read or program
/// (only it may be moved back by a host transfer: nothing is booked behind it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct GcXfer {
    pub(crate) start: u64,
    pub(crate) ready: u64,
}

pub(crate) const NO_GC_XFER: GcXfer = GcXfer { start: u64::MAX, ready: 0 };

/// [`Timeline::booked_state`]: die clocks, die busy and wait, channel busy, GC bounds and
/// transfers, calendar slots.
#[cfg(test)]
pub(crate) type BookedState =
    (Vec<u64>, Vec<u64>, Vec<u64>, Vec<u64>, Vec<u64>, Vec<GcXfer>, Vec<Vec<crate::calendar::Slot>>);

/// Per-die (or per-chip) busy-until times, per-channel transfer calendars, and
/// busy/wait accounting.
#[derive(Clone, Debug)]
pub struct Timeline {
    pub(crate) t: TimingSettings,
    pub(crate) xfer_ns: u64,
    /// Planes per array resource (a die, or a chip without die interleaving).
    planes_per_res: u32,
    /// Lookup tables (no division in the hot path): die of each plane; channel of each
    /// die and its index among the channel's dies.
    pub(crate) plane_die: Vec<u32>,
    die_chan: Vec<(u32, u32)>,
    pub die_free: Vec<u64>,
    /// Per die: command + array + own transfer time.
    pub die_busy_ns: Vec<u64>,
    /// Per die: time held waiting for the bus.
    pub die_wait_ns: Vec<u64>,
    pub chan_busy_ns: Vec<u64>,
    pub(crate) cal: Vec<Calendar>,
    /// No transfer booked from now on is ready before this (calendars prune below it).
    pub(crate) floor: u64,
    /// Array resources per channel (a channel's dies are consecutive).
    pub(crate) res_per_channel: usize,
    /// Per die: when its last GC operation ends.
    pub(crate) gc_until: Vec<u64>,
    pub(crate) gc_xfer: Vec<GcXfer>,
    displaced: Vec<Slot>,
    /// How long the last host operation waited behind GC on its die.
    pub last_gc_wait_ns: u64,
    /// GC page migrations done by copyback.
    pub copybacks: u64,
    /// Operations that joined a multi-plane operation.
    pub multiplane_joins: u64,
    /// GC transfers moved back by a host transfer (`host-first` arbitration).
    pub gc_transfers_deferred: u64,
    mp: Vec<MultiPlane>,
    ppb: u32,
    /// GC operations queued per die, not yet booked ([`crate::deferred`]).
    pub(crate) pending: Vec<VecDeque<Deferred>>,
    pub(crate) pending_dies: Vec<u32>,
    pub(crate) listed: Vec<bool>,
    /// No queued operation starts before this.
    pub(crate) due: u64,
}

impl Timeline {
    pub fn new(geo: &Geometry, t: TimingSettings) -> Self {
        let (planes_per_res, res_per_channel) = match t.die_interleaving {
            true => (geo.planes_per_die, geo.chips_per_channel * geo.dies_per_chip),
            false => (geo.planes_per_die * geo.dies_per_chip, geo.chips_per_channel),
        };
        let res = (geo.planes() / planes_per_res) as usize;
        let channels = geo.channels as usize;
        Timeline {
            t,
            xfer_ns: (geo.page_bytes as u64 * t.byte_ps).div_ceil(1000),
            planes_per_res,
            plane_die: (0..geo.planes()).map(|p| p / planes_per_res).collect(),
            die_chan: (0..res as u32).map(|d| (d / res_per_channel, d % res_per_channel)).collect(),
            die_free: vec![0; res],
            die_busy_ns: vec![0; res],
            die_wait_ns: vec![0; res],
            chan_busy_ns: vec![0; channels],
            cal: vec![
                Calendar::new(res_per_channel as usize, t.bus_arbitration == BusArbitration::HostFirst);
                channels
            ],
            floor: 0,
            res_per_channel: res_per_channel as usize,
            gc_until: vec![0; res],
            gc_xfer: vec![NO_GC_XFER; res],
            displaced: Vec::new(),
            last_gc_wait_ns: 0,
            copybacks: 0,
            multiplane_joins: 0,
            gc_transfers_deferred: 0,
            mp: vec![MultiPlane::default(); if t.multiplane { res } else { 0 }],
            ppb: geo.pages_per_block,
            pending: vec![VecDeque::new(); res],
            pending_dies: Vec::new(),
            listed: vec![false; res],
            due: u64::MAX,
        }
    }

    /// Page transfer time over the channel.
    pub fn transfer_ns(&self) -> u64 {
        self.xfer_ns
    }

    /// Booked transfers (or merged runs of them) the channel calendars hold: what
    /// their memory follows.
    pub fn booked_slots(&self) -> usize {
        self.cal.iter().map(Calendar::len).sum()
    }

    /// Array resource (die, or chip without die interleaving) of a plane index.
    #[inline]
    pub fn die_of(&self, plane: u32) -> usize {
        self.plane_die[plane as usize] as usize
    }

    /// Channel of an array resource.
    #[inline]
    pub fn channel_of(&self, die: usize) -> usize {
        self.die_chan[die].0 as usize
    }

    /// Channel of an array resource and its index among the channel's dies.
    #[inline]
    pub(crate) fn chan_of(&self, die: usize) -> (usize, usize) {
        let (ch, who) = self.die_chan[die];
        (ch as usize, who as usize)
    }

    /// Every channel's booked slots in order (for equality tests).
    #[cfg(test)]
    pub(crate) fn calendar_slots(&self) -> Vec<Vec<crate::calendar::Slot>> {
        self.cal.iter().map(Calendar::live).collect()
    }

    /// What a booking leaves behind, for tests that compare two ways of booking the same
    /// operations: every die's and channel's clocks and counters, the GC bounds and the
    /// channels' booked slots.
    #[cfg(test)]
    pub(crate) fn booked_state(&self) -> BookedState {
        (
            self.die_free.clone(),
            self.die_busy_ns.clone(),
            self.die_wait_ns.clone(),
            self.chan_busy_ns.clone(),
            self.gc_until.clone(),
            self.gc_xfer.clone(),
            self.calendar_slots(),
        )
    }

    /// First instant at or after `t` at which the channel of `die` is not transferring
    /// (`t` at or after the die's last transfer started).
    pub fn bus_idle_at(&self, die: usize, t: u64) -> u64 {
        let (ch, who) = self.die_chan[die];
        self.cal[ch as usize].idle_at(t, who as usize)
    }

    /// Schedule `op`, ready at `ready`, now (no queued GC is booked first; see
    /// [`Timeline::host`]); returns its completion time.
    #[inline]
    pub fn exec(&mut self, op: &FlashOp, ready: u64) -> u64 {
        let die = self.die_of(op.plane);
        if !self.mp.is_empty() {
            if let Some(end) = self.join_multiplane(op, die, ready) {
                return end;
            }
        }
        let start = ready.max(self.die_free[die]);
        let cmd = self.t.command_ns;
        // (end, end of transfer, transfer ready, transfer start)
        let (end, xfer_end, xr, x) = match op.kind {
            OpKind::Read => {
                let xr = start + cmd + self.t.read_ns;
                let x = self.transfer(die, xr, op.cause);
                (x + self.xfer_ns, x + self.xfer_ns, xr, x)
            }
            OpKind::Program => {
                let xr = start + cmd;
                let x = self.transfer(die, xr, op.cause);
                (x + self.xfer_ns + self.t.program_ns, x + self.xfer_ns, xr, x)
            }
            OpKind::Erase => (start + cmd + self.t.erase_ns, 0, 0, 0),
        };
        self.occupy_die(op, die, ready, start, end, x - xr);
        let gc_xfer = op.cause != Cause::Host && op.kind != OpKind::Erase;
        self.gc_xfer[die] = if gc_xfer { GcXfer { start: x, ready: xr } } else { NO_GC_XFER };
        if !self.mp.is_empty() {
            let kind = (op.cause == Cause::Host && op.kind != OpKind::Erase).then_some(op.kind);
            let planes = 1u64 << (op.plane % self.planes_per_res % 64);
            self.mp[die] = MultiPlane { kind, ready, offset: op.page % self.ppb, planes, xfer_end, end };
        }
        end
    }

    /// Die `die` runs from `start` to `end`, of which `wait` held for the bus.
    #[inline(always)]
    fn occupy_die(&mut self, op: &FlashOp, die: usize, ready: u64, start: u64, end: u64, wait: u64) {
        self.die_busy_ns[die] += end - start - wait;
        self.die_wait_ns[die] += wait;
        self.die_free[die] = end;
        if op.cause == Cause::Host {
            let gc = self.gc_until[die];
            self.last_gc_wait_ns = if gc > ready { start.min(gc) - ready } else { 0 };
        } else {
            self.gc_until[die] = end;
        }
    }

    /// Book a page transfer of `die` ready at `ready`; returns its start.
    #[inline]
    fn transfer(&mut self, die: usize, ready: u64, cause: Cause) -> u64 {
        let (ch, who) = self.die_chan[die];
        let (ch, who) = (ch as usize, who as usize);
        debug_assert!(ready >= self.floor, "transfer ready at {ready} before the floor {}", self.floor);
        let floor = self.prune_floor(ch);
        self.chan_busy_ns[ch] += self.xfer_ns;
        if self.t.bus_arbitration == BusArbitration::Fifo {
            // Pruning and booking with one choice of the calendar's code (`Calendar::prune_book`).
            return self.cal[ch].prune_book(floor, ready, self.xfer_ns, who);
        }
        self.cal[ch].prune(floor);
        self.cal[ch].fix_cursor(who, die as u32 + 1, self.xfer_ns);
        match cause {
            Cause::Host => self.transfer_host_first(ch, ready, who),
            _ => self.cal[ch].book(ready, self.xfer_ns, die as u32 + 1, who),
        }
    }

    /// The floor to prune channel `ch`'s calendar to: its booked transfers that no
    /// future transfer can be ready before can be forgotten. That is the host floor (the last issue time), and under `fifo`
    /// arbitration the earliest time any die of the channel can next be ready to
    /// transfer: a die's next operation starts when it is free (`die_free` only grows),
    /// and a multi-plane join's transfer is ready when the die's last (joinable) transfer ended.
    /// (Under `host-first` a displaced GC transfer is booked again from its earlier ready
    /// time, so only the host floor holds.) Without this an overloaded device, whose dies
    /// are booked seconds ahead of the host, keeps every gap between the host and the
    /// dies' backlog: memory grew with the backlog (1.6 GiB for `map-fast-random-timed`).
    /// Pruning never changes a booking: a search starts at or after the floor.
    #[inline]
    pub(crate) fn prune_floor(&self, ch: usize) -> u64 {
        let mut floor = self.floor;
        if self.t.bus_arbitration == BusArbitration::Fifo {
            let dies = ch * self.res_per_channel..(ch + 1) * self.res_per_channel;
            let free = &self.die_free[dies.clone()];
            let earliest = match self.mp.is_empty() {
                // Without multi-plane state (the default) a die is ready when it is free.
                true => free.iter().copied().min(),
                false => {
                    let ready = |(m, &f): (&MultiPlane, &u64)| if m.kind.is_some() { f.min(m.xfer_end) } else { f };
                    self.mp[dies].iter().zip(free).map(ready).min()
                }
            };
            floor = floor.max(earliest.unwrap_or(0));
        }
        floor
    }

    /// A host transfer that goes before GC transfers not started when it is ready:
    /// each GC transfer in its way (necessarily its die's last booked operation) is
    /// booked again after it, and that GC operation ends correspondingly later.
    fn transfer_host_first(&mut self, ch: usize, ready: u64, who: usize) -> u64 {
        let len = self.xfer_ns;
        let gc = &self.gc_xfer;
        let movable = |s: &Slot| s.owner > 0 && s.start >= ready && gc[s.owner as usize - 1].start == s.start;
        let (at, _, _) = self.cal[ch].earliest(ready, len, who, movable);
        self.displaced.clear();
        self.cal[ch].take_overlapping(at, at + len, who, &mut self.displaced);
        let x = self.cal[ch].book(ready, len, 0, who);
        debug_assert_eq!(x, at);
        for i in 0..self.displaced.len() {
            let s = self.displaced[i];
            let die = s.owner as usize - 1;
            let g = self.gc_xfer[die];
            let nx = self.cal[ch].book(g.ready.max(self.floor), len, s.owner, self.die_chan[die].1 as usize);
            // The operation's end and its wait for the bus move by nx - s.start.
            self.die_free[die] = self.die_free[die] + nx - s.start;
            self.die_wait_ns[die] = self.die_wait_ns[die] + nx - s.start;
            self.gc_until[die] = self.die_free[die];
            self.gc_xfer[die].start = nx;
            self.gc_transfers_deferred += 1;
            self.due = 0;
        }
        x
    }

    /// Join `op` to the die's previous operation as a multi-plane operation, if it can.
    fn join_multiplane(&mut self, op: &FlashOp, die: usize, ready: u64) -> Option<u64> {
        let m = self.mp[die];
        let bit = 1u64 << (op.plane % self.planes_per_res % 64);
        let joinable = m.kind == Some(op.kind)
            && op.cause == Cause::Host
            && m.ready == ready
            && m.offset == op.page % self.ppb
            && m.planes & bit == 0
            && self.die_free[die] == m.end;
        if !joinable {
            return None;
        }
        let x = self.transfer(die, m.xfer_end, op.cause);
        let end = match op.kind {
            OpKind::Program => x + self.xfer_ns + self.t.program_ns,
            _ => x + self.xfer_ns,
        };
        let end = end.max(m.end);
        let wait = x - m.xfer_end;
        self.die_busy_ns[die] += end - m.end - wait;
        self.die_wait_ns[die] += wait;
        self.die_free[die] = end;
        self.gc_xfer[die] = NO_GC_XFER;
        self.last_gc_wait_ns = 0;
        self.multiplane_joins += 1;
        self.mp[die] = MultiPlane { planes: m.planes | bit, xfer_end: x + self.xfer_ns, end, ..m };
        Some(end)
    }

    /// A GC migration through the controller: the read, then the program on its die
    /// ([`Timeline::exec`] twice, in one pass when both are on one die without
    /// multi-plane state to keep).
    #[inline]
    fn exec_read_program(&mut self, read: &FlashOp, program: &FlashOp, ready: u64) -> u64 {
        let die = self.die_of(read.plane);
        if self.die_of(program.plane) != die || !self.mp.is_empty() || read.cause == Cause::Host {
            let r = self.exec(read, ready);
            return self.exec(program, r);
        }
        let (cmd, xfer) = (self.t.command_ns, self.xfer_ns);
        let start = ready.max(self.die_free[die]);
        let xr1 = start + cmd + self.t.read_ns;
        let (x1, x2) = if cmd == 0 && self.t.bus_arbitration == BusArbitration::Fifo {
            // Program transfer ready when the read's ends: both in one search.
            let (ch, who) = self.die_chan[die];
            let floor = self.prune_floor(ch as usize);
            self.chan_busy_ns[ch as usize] += 2 * xfer;
            self.cal[ch as usize].prune_book_pair(floor, xr1, xfer, who as usize)
        } else {
            let x1 = self.transfer(die, xr1, read.cause);
            (x1, self.transfer(die, x1 + xfer + cmd, program.cause))
        };
        let xr2 = x1 + xfer + cmd;
        let end = x2 + xfer + self.t.program_ns;
        self.die_busy_ns[die] += 2 * cmd + self.t.read_ns + 2 * xfer + self.t.program_ns;
        self.die_wait_ns[die] += (x1 - xr1) + (x2 - xr2);
        self.die_free[die] = end;
        self.gc_until[die] = end;
        self.gc_xfer[die] = GcXfer { start: x2, ready: xr2 };
        end
    }

    /// Whether a GC migration from `read` to `program` may use copyback. A DFTL
    /// translation-page rewrite (`Cause::Mapping`) may not: the controller
    /// changes the page's entries between the read and the program, so the data
    /// crosses the channel both ways (Gupta et al. 2009, §3.2); copyback moves a
    /// page unchanged inside the die.
    #[inline]
    pub fn copyback_allowed(&self, read: &FlashOp, program: &FlashOp) -> bool {
        self.t.copyback
            && read.cause != Cause::Mapping
            && self.die_of(read.plane) == self.die_of(program.plane)
            && (!self.t.copyback_same_parity || (read.page % self.ppb) % 2 == (program.page % self.ppb) % 2)
    }

    /// A GC migration `read` → `program` within one die, by copyback if allowed:
    /// command + tR + command + tPROG on the die, nothing on the channel. Returns its end.
    pub fn exec_migration(&mut self, read: &FlashOp, program: &FlashOp, ready: u64) -> u64 {
        if !self.copyback_allowed(read, program) {
            return self.exec_read_program(read, program, ready);
        }
        let die = self.die_of(read.plane);
        let start = ready.max(self.die_free[die]);
        let end = start + 2 * self.t.command_ns + self.t.read_ns + self.t.program_ns;
        self.occupy_die(program, die, ready, start, end, 0);
        self.gc_xfer[die] = NO_GC_XFER;
        if !self.mp.is_empty() {
            self.mp[die].kind = None;
        }
        self.copybacks += 1;
        end
    }
}
