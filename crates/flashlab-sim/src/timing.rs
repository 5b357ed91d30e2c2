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
use flashlab_nand::{Geometry, OpKind};

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
        end
    }

    #[inline]
    fn chan_occupy(&mut self, ch: usize, from: u64, len: u64) {
        self.chan_free[ch] = self.chan_free[ch].max(from + len);
        self.chan_busy_ns[ch] += len;
    }
}
