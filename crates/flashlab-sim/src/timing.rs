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
//! has left its register). Idle-device closed forms: read = command + tR + transfer,
//! program = command + transfer + tPROG, erase = command + tBERS.

use flashlab_config::TimingSettings;
use flashlab_ftl::FlashOp;
use flashlab_nand::{Cause, Geometry, OpKind};

/// Per-die and per-channel busy-until times plus busy-time accounting.
#[derive(Clone, Debug)]
pub struct Timeline {
    t: TimingSettings,
    xfer_ns: u64,
    planes_per_die: u32,
    dies_per_channel: u32,
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
    ppb: u32,
}

impl Timeline {
    pub fn new(geo: &Geometry, t: TimingSettings) -> Self {
        let dies = geo.dies() as usize;
        Timeline {
            t,
            xfer_ns: (geo.page_bytes as u64 * t.byte_ps).div_ceil(1000),
            planes_per_die: geo.planes_per_die,
            dies_per_channel: geo.chips_per_channel * geo.dies_per_chip,
            die_free: vec![0; dies],
            chan_free: vec![0; geo.channels as usize],
            die_busy_ns: vec![0; dies],
            chan_busy_ns: vec![0; geo.channels as usize],
            gc_until: vec![0; dies],
            last_gc_wait_ns: 0,
            copybacks: 0,
            ppb: geo.pages_per_block,
        }
    }

    /// Page transfer time over the channel.
    pub fn transfer_ns(&self) -> u64 {
        self.xfer_ns
    }

    /// Schedule `op`, ready at `ready`; returns its completion time.
    #[inline]
    pub fn exec(&mut self, op: &FlashOp, ready: u64) -> u64 {
        let die = (op.plane / self.planes_per_die) as usize;
        let ch = die / self.dies_per_channel as usize;
        let start = ready.max(self.die_free[die]);
        let (cmd, xfer) = (self.t.command_ns, self.xfer_ns);
        let end = match op.kind {
            OpKind::Read => {
                let x = (start + cmd + self.t.read_ns).max(self.chan_free[ch]);
                self.chan_occupy(ch, x, xfer);
                x + xfer
            }
            OpKind::Program => {
                let x = (start + cmd).max(self.chan_free[ch]);
                self.chan_occupy(ch, x, xfer);
                x + xfer + self.t.program_ns
            }
            OpKind::Erase => start + cmd + self.t.erase_ns,
        };
        self.die_busy_ns[die] += end - start;
        self.die_free[die] = end;
        if op.cause == Cause::Host {
            let gc = self.gc_until[die];
            self.last_gc_wait_ns = if gc > ready { start.min(gc) - ready } else { 0 };
        } else {
            self.gc_until[die] = end;
        }
        end
    }

    /// Die of a plane index.
    #[inline]
    pub fn die_of(&self, plane: u32) -> usize {
        (plane / self.planes_per_die) as usize
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
        self.die_busy_ns[die] += end - start;
        self.die_free[die] = end;
        self.gc_until[die] = end;
        self.copybacks += 1;
        end
    }

    #[inline]
    fn chan_occupy(&mut self, ch: usize, from: u64, len: u64) {
        self.chan_free[ch] = self.chan_free[ch].max(from + len);
        self.chan_busy_ns[ch] += len;
    }
}
