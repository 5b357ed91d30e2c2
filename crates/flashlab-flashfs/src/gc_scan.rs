//! GC's scan of a victim LEB, fed one flash page's part at a time from the
//! store in place (`Ubi::leb_read_with`) instead of from a copy of the
//! whole LEB: the same read, the same checks of every node and the same
//! nodes found as scanning a copy (`scan_copy` in the tests, what
//! `gc_scan_leb` did before). UBIFS's GC scans its victim with `ubifs_scan`
//! (fs/ubifs/scan.c: `ubifs_scan_a_node` → `ubifs_check_node`, io.c: magic,
//! length, CRC of every node); flashfs checks a node with `parse_hdr`.
//! Only the nodes the caller may move (`keep`) are copied.
//!
//! The copy scan parses a node at `pos`: a good one moves `pos` past it, an
//! empty header (0xFF) ends the scan, anything else resynchronises at the
//! next `min_io` boundary `r = (pos + 1).next_multiple_of(min_io)`, which may
//! lie inside the bad node's bytes, streamed past by the time its CRC fails.
//! So while a chain's node is undecided past `r`, a child chain runs the
//! same scan from `r` over the same bytes; when the node proves good the
//! child is dropped, when it proves bad the child takes its place. A chain
//! has a child only while its node is undecided, so the chains form a stack
//! (one chain and, in a node that spans a page boundary, a child that looks
//! at one header per page).

use crate::codec::parse_hdr_fields;
use crate::node::{align, Bad, Hdr, HDR};
use crc32fast::Hasher;

/// A good node the scan copied: its header, its offset in the LEB and its
/// bytes (aligned to 8, cut at the scanned length) `bytes[at..end]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Found {
    pub h: Hdr,
    pub offs: u32,
    pub at: usize,
    pub end: usize,
}

enum St {
    /// The next node starts at `pos`; none of its bytes seen.
    Idle,
    /// The first `got` header bytes of the node at `pos`.
    Head { got: usize, b: [u8; HDR] },
    /// The body: the CRC of bytes 8.. so far, the CRC the header claims,
    /// where the node's bytes end and where its copy starts (if copied).
    Body { h: Hdr, crc: u32, hasher: Hasher, end: usize, copy: Option<usize> },
    /// An empty header (or the end of the bytes) ended the scan.
    Done,
}

struct Chain {
    pos: usize,
    st: St,
    bytes: Vec<u8>,
    found: Vec<Found>,
}

impl Chain {
    fn at(pos: usize) -> Chain {
        Chain { pos, st: St::Idle, bytes: Vec::new(), found: Vec::new() }
    }

    /// Takes the node's bytes at `from..from + b.len()` (all before the
    /// state's next decision point).
    fn take(&mut self, from: usize, b: &[u8]) {
        match &mut self.st {
            St::Head { got, b: head } => {
                debug_assert_eq!(from, self.pos + *got);
                head[*got..*got + b.len()].copy_from_slice(b);
                *got += b.len();
            }
            St::Body { h, hasher, copy, .. } => {
                let crc_end = self.pos + h.len as usize;
                if from < crc_end {
                    hasher.update(&b[..(crc_end - from).min(b.len())]);
                }
                if copy.is_some() {
                    self.bytes.extend_from_slice(b);
                }
            }
            St::Idle | St::Done => {}
        }
    }
}

/// The streaming scan of `len` bytes from LEB offset 0 (see the module).
#[derive(Default)]
pub(crate) struct Scan {
    len: usize,
    min_io: usize,
    next: usize,
    chains: Vec<Chain>,
}

impl Scan {
    /// Starts a scan of `len` bytes; `min_io` is the resynchronisation step.
    pub fn start(&mut self, len: usize, min_io: usize) {
        self.len = len;
        self.min_io = min_io.max(1);
        self.restart();
    }

    fn restart(&mut self) {
        self.next = 0;
        self.chains.truncate(1);
        match self.chains.first_mut() {
            Some(c) => {
                c.pos = 0;
                c.st = St::Idle;
                c.bytes.clear();
                c.found.clear();
            }
            None => self.chains.push(Chain::at(0)),
        }
    }

    /// Feeds the bytes at offset `at` (the parts come in order; a read that
    /// is retried starts again at 0). `keep(offs, len)` says whether a node
    /// that passed the header checks is copied.
    pub fn feed(&mut self, at: usize, part: &[u8], keep: &mut dyn FnMut(u32, u32) -> bool) {
        if at == 0 && self.next != 0 {
            self.restart();
        }
        debug_assert_eq!(at, self.next, "parts out of order");
        self.next = at + part.len();
        self.run(0, at, part, keep);
    }

    /// The good nodes copied (in LEB order) and the bytes they index.
    pub fn found(&self) -> (&[Found], &[u8]) {
        let c = &self.chains[0];
        (&c.found, &c.bytes)
    }

    /// Runs chain `i` (and its children) over `part`, the bytes at `off..`.
    fn run(&mut self, i: usize, off: usize, part: &[u8], keep: &mut dyn FnMut(u32, u32) -> bool) {
        let seg_end = off + part.len();
        let mut cur = off;
        loop {
            let c = &mut self.chains[i];
            let ev = match &c.st {
                St::Done => return,
                St::Idle => {
                    // The copy scan's loop: `while pos + HDR <= len`.
                    if c.pos + HDR > self.len {
                        c.st = St::Done;
                        return;
                    }
                    if c.pos >= seg_end {
                        return;
                    }
                    cur = cur.max(c.pos);
                    c.st = St::Head { got: 0, b: [0; HDR] };
                    continue;
                }
                St::Head { .. } => c.pos + HDR,
                St::Body { end, .. } => *end,
            };
            let r = (c.pos + 1).next_multiple_of(self.min_io);
            if r < ev && self.chains.len() == i + 1 {
                self.chains.push(Chain::at(r));
            }
            let stop = ev.min(seg_end);
            if stop > cur {
                let b = &part[cur - off..stop - off];
                self.chains[i].take(cur, b);
                if self.chains.len() > i + 1 {
                    self.run(i + 1, cur, b, keep);
                }
                cur = stop;
            }
            if cur < ev {
                return;
            }
            self.decide(i, keep);
        }
    }

    /// Chain `i`'s node has all the bytes its next decision needs.
    fn decide(&mut self, i: usize, keep: &mut dyn FnMut(u32, u32) -> bool) {
        let len = self.len;
        let c = &mut self.chains[i];
        match std::mem::replace(&mut c.st, St::Idle) {
            St::Head { b, .. } => match parse_hdr_fields(&b, len - c.pos) {
                Err(Bad::Empty) => {
                    c.st = St::Done;
                    self.chains.truncate(i + 1);
                }
                Err(_) => self.fail(i),
                Ok((h, crc)) => {
                    let end = c.pos + align(h.len as usize).min(len - c.pos);
                    let mut hasher = Hasher::new();
                    hasher.update(&b[8..]);
                    let copy = keep(c.pos as u32, h.len).then(|| {
                        let at = c.bytes.len();
                        c.bytes.extend_from_slice(&b);
                        at
                    });
                    c.st = St::Body { h, crc, hasher, end, copy };
                }
            },
            St::Body { h, crc, hasher, copy, .. } => {
                if hasher.finalize() == crc {
                    if let Some(at) = copy {
                        c.found.push(Found { h, offs: c.pos as u32, at, end: c.bytes.len() });
                    }
                    c.pos += align(h.len as usize);
                    self.chains.truncate(i + 1);
                } else {
                    if let Some(at) = copy {
                        c.bytes.truncate(at);
                    }
                    self.fail(i);
                }
            }
            St::Idle | St::Done => unreachable!("decide on a chain without a node"),
        }
    }

    /// Chain `i`'s node is bad: it resynchronises at the next `min_io`
    /// boundary, where its child (if the stream has reached it) already is.
    fn fail(&mut self, i: usize) {
        let r = (self.chains[i].pos + 1).next_multiple_of(self.min_io);
        if self.chains.len() == i + 1 {
            let c = &mut self.chains[i];
            c.pos = r;
            c.st = St::Idle;
            return;
        }
        let mut child = self.chains.remove(i + 1);
        debug_assert_eq!(child.pos.min(r), r);
        let c = &mut self.chains[i];
        let delta = c.bytes.len();
        c.bytes.append(&mut child.bytes);
        c.found.extend(child.found.iter().map(|f| Found { at: f.at + delta, end: f.end + delta, ..*f }));
        if let St::Body { copy: Some(at), .. } = &mut child.st {
            *at += delta;
        }
        c.pos = child.pos;
        c.st = child.st;
    }
}

#[cfg(test)]
#[path = "gc_scan_test.rs"]
mod gc_scan_test;
