//! Busy-until timeline of dies and channel buses.
//!
//! Each resource keeps the time it becomes free. Operations are scheduled in the
//! order the FTL issues them (host requests in arrival order), so each resource
//! serves its operations first-come first-served; this is exact for FIFO resources
//! and needs no event queue.
//!
//! - read:    command and tR on the die, then the page crosses the channel;
//! - program: command on the die, the page crosses the channel, then tPROG;
//! - erase:   command, then tBERS on the die.
//!
//! Command cycles (`timing.command_ns`, default 0) are charged to the die, not the
//! bus: with a single busy-until value per channel, reserving the bus for a command
//! ahead of an already-reserved later transfer would forbid die interleaving. The
//! die is held from the command to the end of its part (for a read, until the page
//! has left its register).
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

use flashlab_config::TimingSettings;
use flashlab_ftl::FlashOp;
use flashlab_nand::{Cause, Geometry, OpKind};

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

/// Per-die (or per-chip) and per-channel busy-until times plus busy-time accounting.
#[derive(Clone, Debug)]
pub struct Timeline {
    t: TimingSettings,
    xfer_ns: u64,
    /// Planes per array resource (a die, or a chip without die interleaving).
    planes_per_res: u32,
    res_per_channel: u32,
    pub die_free: Vec<u64>,
    pub chan_free: Vec<u64>,
    pub die_busy_ns: Vec<u64>,
    pub chan_busy_ns: Vec<u64>,
    /// Per die: when its last GC operation ends.
    gc_until: Vec<u64>,
    /// How long the last host operation waited behind GC on its die.
    pub last_gc_wait_ns: u64,
    /// GC page migrations done by copyback.
    pub copybacks: u64,
    /// Operations that joined a multi-plane operation.
    pub multiplane_joins: u64,
    mp: Vec<MultiPlane>,
    ppb: u32,
}

impl Timeline {
    pub fn new(geo: &Geometry, t: TimingSettings) -> Self {
        let (planes_per_res, res_per_channel) = match t.die_interleaving {
            true => (geo.planes_per_die, geo.chips_per_channel * geo.dies_per_chip),
            false => (geo.planes_per_die * geo.dies_per_chip, geo.chips_per_channel),
        };
        let res = (geo.planes() / planes_per_res) as usize;
        Timeline {
            t,
            xfer_ns: (geo.page_bytes as u64 * t.byte_ps).div_ceil(1000),
            planes_per_res,
            res_per_channel,
            die_free: vec![0; res],
            chan_free: vec![0; geo.channels as usize],
            die_busy_ns: vec![0; res],
            chan_busy_ns: vec![0; geo.channels as usize],
            gc_until: vec![0; res],
            last_gc_wait_ns: 0,
            copybacks: 0,
            multiplane_joins: 0,
            mp: vec![MultiPlane::default(); if t.multiplane { res } else { 0 }],
            ppb: geo.pages_per_block,
        }
    }

    /// Page transfer time over the channel.
    pub fn transfer_ns(&self) -> u64 {
        self.xfer_ns
    }

    /// Array resource (die, or chip without die interleaving) of a plane index.
    #[inline]
    pub fn die_of(&self, plane: u32) -> usize {
        (plane / self.planes_per_res) as usize
    }

    /// Channel of an array resource.
    #[inline]
    pub fn channel_of(&self, die: usize) -> usize {
        die / self.res_per_channel as usize
    }

    /// Schedule `op`, ready at `ready`; returns its completion time.
    #[inline]
    pub fn exec(&mut self, op: &FlashOp, ready: u64) -> u64 {
        let die = self.die_of(op.plane);
        if !self.mp.is_empty() {
            if let Some(end) = self.join_multiplane(op, die, ready) {
                return end;
            }
        }
        let ch = die / self.res_per_channel as usize;
        let start = ready.max(self.die_free[die]);
        let cmd = self.t.command_ns;
        let (end, xfer_end) = match op.kind {
            OpKind::Read => {
                let x = (start + cmd + self.t.read_ns).max(self.chan_free[ch]);
                self.chan_occupy(ch, x, self.xfer_ns);
                (x + self.xfer_ns, x + self.xfer_ns)
            }
            OpKind::Program => {
                let x = (start + cmd).max(self.chan_free[ch]);
                self.chan_occupy(ch, x, self.xfer_ns);
                (x + self.xfer_ns + self.t.program_ns, x + self.xfer_ns)
            }
            OpKind::Erase => (start + cmd + self.t.erase_ns, 0),
        };
        self.occupy_die(op, die, ready, start, end);
        if !self.mp.is_empty() {
            let kind = (op.cause == Cause::Host && op.kind != OpKind::Erase).then_some(op.kind);
            let planes = 1u64 << (op.plane % self.planes_per_res % 64);
            self.mp[die] = MultiPlane { kind, ready, offset: op.page % self.ppb, planes, xfer_end, end };
        }
        end
    }

    fn occupy_die(&mut self, op: &FlashOp, die: usize, ready: u64, start: u64, end: u64) {
        self.die_busy_ns[die] += end - start;
        self.die_free[die] = end;
        if op.cause == Cause::Host {
            let gc = self.gc_until[die];
            self.last_gc_wait_ns = if gc > ready { start.min(gc) - ready } else { 0 };
        } else {
            self.gc_until[die] = end;
        }
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
        let ch = die / self.res_per_channel as usize;
        let x = m.xfer_end.max(self.chan_free[ch]);
        self.chan_occupy(ch, x, self.xfer_ns);
        let end = match op.kind {
            OpKind::Program => x + self.xfer_ns + self.t.program_ns,
            _ => x + self.xfer_ns,
        };
        let end = end.max(m.end);
        self.die_busy_ns[die] += end - m.end;
        self.die_free[die] = end;
        self.last_gc_wait_ns = 0;
        self.multiplane_joins += 1;
        self.mp[die] = MultiPlane { planes: m.planes | bit, xfer_end: x + self.xfer_ns, end, ..m };
        Some(end)
    }

    /// Whether a GC migration from `read` to `program` may use copyback.
    pub fn copyback_allowed(&self, read: &FlashOp, program: &FlashOp) -> bool {
        let same_die = self.die_of(read.plane) == self.die_of(program.plane);
        let parity_ok = !self.t.copyback_same_parity || (read.page % self.ppb) % 2 == (program.page % self.ppb) % 2;
        self.t.copyback && same_die && parity_ok
    }

    /// A GC migration `read` → `program` within one die, by copyback if allowed:
    /// command + tR + command + tPROG on the die, nothing on the channel. Returns its end.
    pub fn exec_migration(&mut self, read: &FlashOp, program: &FlashOp, ready: u64) -> u64 {
        if !self.copyback_allowed(read, program) {
            let r = self.exec(read, ready);
            return self.exec(program, r);
        }
        let die = self.die_of(read.plane);
        let start = ready.max(self.die_free[die]);
        let end = start + 2 * self.t.command_ns + self.t.read_ns + self.t.program_ns;
        self.occupy_die(program, die, ready, start, end);
        if !self.mp.is_empty() {
            self.mp[die].kind = None;
        }
        self.copybacks += 1;
        end
    }

    #[inline]
    fn chan_occupy(&mut self, ch: usize, from: u64, len: u64) {
        self.chan_free[ch] = self.chan_free[ch].max(from + len);
        self.chan_busy_ns[ch] += len;
    }
}
