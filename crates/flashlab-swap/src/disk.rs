//! A simple hard-disk timing model for the seed's figure 4 (SSD vs disk as swap):
//! one head, one queue served in order; a request costs a seek by distance, a
//! rotational delay and the transfer.
//!
//! - seek: 0 on the same position, else `track_to_track + (full_stroke −
//!   track_to_track) × sqrt(distance / capacity)` (the square-root seek curve of
//!   Ruemmler & Wilkes, "An introduction to disk drive modeling", 1994, §3.1);
//! - rotation: none for a request that starts where the previous one ended
//!   (sequential streaming), else half a revolution (the mean);
//! - transfer: bytes / media rate.
//!
//! Parameters are a 7200 rpm desktop disk of the seed's time (2013): 0.8 ms
//! track-to-track, 16 ms full stroke (≈ 8.5 ms average), 100 MB/s. The disk does not
//! accept discards (`SWP_DISCARDABLE` unset) and is rotational (`SWP_SOLIDSTATE`
//! unset). Not modelled: zoned rates, caches, command queueing.

/// Disk parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DiskParams {
    pub rpm: u32,
    pub track_to_track_ns: u64,
    pub full_stroke_ns: u64,
    pub bytes_per_s: u64,
}

impl Default for DiskParams {
    fn default() -> Self {
        DiskParams { rpm: 7200, track_to_track_ns: 800_000, full_stroke_ns: 16_000_000, bytes_per_s: 100_000_000 }
    }
}

/// The disk's head position, queue and the content tags of its slots.
#[derive(Clone, Debug)]
pub struct Disk {
    p: DiskParams,
    capacity_bytes: u64,
    head_bytes: u64,
    busy_until_ns: u64,
    tags: Vec<u32>,
    next_tag: u32,
    pub busy_ns: u64,
}

impl Disk {
    pub fn new(p: DiskParams, capacity_bytes: u64, slots: u32) -> Disk {
        Disk {
            p,
            capacity_bytes,
            head_bytes: 0,
            busy_until_ns: 0,
            tags: vec![0; slots as usize],
            next_tag: 1,
            busy_ns: 0,
        }
    }

    /// Seek time over `distance` bytes.
    pub fn seek_ns(&self, distance: u64) -> u64 {
        if distance == 0 {
            return 0;
        }
        let frac = (distance as f64 / self.capacity_bytes as f64).min(1.0).sqrt();
        self.p.track_to_track_ns + ((self.p.full_stroke_ns - self.p.track_to_track_ns) as f64 * frac) as u64
    }

    /// Serve a read or write of `len` bytes at `offset`, arriving at `at_ns`; returns its completion.
    pub fn access(&mut self, offset: u64, len: u64, at_ns: u64) -> u64 {
        let start = at_ns.max(self.busy_until_ns);
        let sequential = offset == self.head_bytes;
        let position =
            if sequential { 0 } else { self.seek_ns(offset.abs_diff(self.head_bytes)) + self.half_turn_ns() };
        let transfer = (len as u128 * 1_000_000_000 / self.p.bytes_per_s as u128) as u64;
        let done = start + position + transfer;
        self.busy_ns += done - start;
        self.busy_until_ns = done;
        self.head_bytes = offset + len;
        done
    }

    fn half_turn_ns(&self) -> u64 {
        30_000_000_000 / self.p.rpm as u64
    }

    /// Record a write of `slots` slots from `first` (content tags for checks).
    pub fn write_tags(&mut self, first: u32, slots: u32) {
        for s in first..first + slots {
            self.tags[s as usize] = self.next_tag;
            self.next_tag += 1;
        }
    }

    pub fn tag(&self, slot: u32) -> u32 {
        self.tags[slot as usize]
    }
}
