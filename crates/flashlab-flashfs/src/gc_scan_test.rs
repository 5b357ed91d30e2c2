//! The streaming GC scan against the copy scan it replaced, on LEBs of
//! good, bad, padded and nested nodes fed in page parts.

use super::*;
use crate::codec::{pad_node_into, parse_hdr};
use crate::node::{DataNode, InoNode, Node, G_NONE};

type Got = Vec<(Hdr, u32, Vec<u8>)>;

/// What `gc_scan_leb` did on a copy of the LEB (the nodes it handed to
/// `gc_move`, of those `keep` accepts).
fn scan_copy(buf: &[u8], min_io: usize, keep: &dyn Fn(u32, u32) -> bool) -> Got {
    let mut out = Vec::new();
    let mut pos = 0usize;
    while pos + HDR <= buf.len() {
        match parse_hdr(&buf[pos..]) {
            Ok(h) => {
                let len = h.len as usize;
                if keep(pos as u32, h.len) {
                    out.push((h, pos as u32, buf[pos..pos + align(len).min(buf.len() - pos)].to_vec()));
                }
                pos += align(len);
            }
            Err(Bad::Empty) => break,
            Err(_) => pos = (pos + 1).next_multiple_of(min_io),
        }
    }
    out
}

/// The streaming scan over `page`-sized parts; with `retry`, a first read
/// stops after that many parts and the read starts over (as a retried
/// `leb_read_with` does).
fn scan_stream(buf: &[u8], page: usize, min_io: usize, keep: &dyn Fn(u32, u32) -> bool, retry: Option<usize>) -> Got {
    let mut s = Scan::default();
    s.start(buf.len(), min_io);
    let mut k = |o: u32, l: u32| keep(o, l);
    if let Some(n) = retry {
        for (i, part) in buf.chunks(page).take(n).enumerate() {
            s.feed(i * page, part, &mut k);
        }
    }
    for (i, part) in buf.chunks(page).enumerate() {
        s.feed(i * page, part, &mut k);
    }
    let (f, b) = s.found();
    f.iter().map(|f| (f.h, f.offs, b[f.at..f.end].to_vec())).collect()
}

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

fn data(rng: &mut Rng, len: usize) -> Node {
    let payload = (0..len).map(|_| rng.next() as u8).collect();
    Node::Data(DataNode { inum: rng.below(9) as u32 + 1, block: rng.below(50) as u32, size: len as u32, compr: 0, payload })
}

fn ino(rng: &mut Rng) -> Node {
    Node::Ino(InoNode { inum: rng.below(9) as u32 + 1, nlink: 1, size: rng.next() % 99_999, is_dir: false })
}

/// A LEB's written bytes: good nodes, nodes hiding node images at a
/// `min_io` boundary of their payload, padding, corrupted nodes, garbage,
/// zeros, and perhaps an erased tail.
fn leb(rng: &mut Rng, len: usize, min_io: usize) -> Vec<u8> {
    let mut b = Vec::with_capacity(len + 8192);
    let mut sq = 1u64;
    while b.len() < len {
        let at = b.len();
        sq += 1;
        match rng.below(9) {
            0..=2 => {
                let n = [4096, rng.below(4097), rng.below(300)][rng.below(3)];
                b.extend(data(rng, n).encode(sq, G_NONE));
            }
            3 => b.extend(ino(rng).encode(sq, G_NONE)),
            4 => {
                // A data node whose payload holds a node image at a boundary.
                let n = rng.below(3000);
                let inner = if rng.below(2) == 0 { ino(rng) } else { data(rng, n) }.encode(sq + 1, G_NONE);
                let start = at + crate::node::DATA_NODE_BYTES;
                let o = (start + 1).next_multiple_of(min_io) - start + min_io * rng.below(2);
                let plen = (o + inner.len() + rng.below(600)).min(4096).max(o + inner.len());
                let Node::Data(mut d) = data(rng, plen) else { unreachable!() };
                d.payload[o..o + inner.len()].copy_from_slice(&inner);
                b.extend(Node::Data(d).encode(sq, G_NONE));
            }
            5 => {
                let to = (at + 1).next_multiple_of(min_io);
                if to - at >= HDR && rng.below(2) == 0 {
                    pad_node_into(&mut b, to);
                } else {
                    b.resize(to, 0);
                }
            }
            6 => {
                // A node corrupted in its header or body.
                let n = rng.below(4097);
                let n = data(rng, n).encode(sq, G_NONE);
                b.extend(n);
                let k = at + rng.below(b.len() - at);
                b[k] ^= 1 << rng.below(8);
            }
            7 => b.extend((0..rng.below(3000)).map(|_| rng.next() as u8)),
            _ => {
                // A torn write: a node whose tail is erased.
                let n = data(rng, 4096).encode(sq, G_NONE);
                let cut = rng.below(n.len());
                b.extend(&n[..cut]);
                b.resize(at + n.len(), 0xFF);
            }
        }
        if rng.below(40) == 0 {
            break;
        }
    }
    if rng.below(3) == 0 {
        let tail = b.len() + rng.below(5000);
        b.resize(tail, 0xFF);
    }
    b.truncate(len.max(rng.below(len)));
    b
}

#[test]
fn streaming_scan_finds_what_the_copy_scan_finds() {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let keeps: [&dyn Fn(u32, u32) -> bool; 3] = [&|_, _| true, &|o, l| (o / 8 + l) % 3 != 0, &|_, _| false];
    let mut nested = 0;
    for case in 0..1500 {
        let (page, min_io) = [(2048, 2048), (512, 512), (2048, 512), (4096, 2048)][case % 4];
        let len = [126 * 1024, 8192, 3000, 60][case % 7 % 4];
        let buf = leb(&mut rng, len, min_io);
        for (k, keep) in keeps.iter().enumerate() {
            let want = scan_copy(&buf, min_io, *keep);
            let retry = (case % 5 == 0).then(|| rng.below(buf.len() / page + 1));
            let got = scan_stream(&buf, page, min_io, *keep, retry);
            assert_eq!(got, want, "case {case}, keep {k}, page {page}, min_io {min_io}, len {}", buf.len());
        }
        let mut s = Scan::default();
        s.start(buf.len(), min_io);
        for (i, part) in buf.chunks(page).enumerate() {
            s.feed(i * page, part, &mut |_, _| true);
            nested = nested.max(s.chains.len());
        }
    }
    // Child chains were exercised (a node image inside an undecided node).
    assert!(nested >= 3, "deepest chain stack {nested}");
}

#[test]
fn empty_and_erased_lebs() {
    for buf in [vec![], vec![0xFF; 2048 * 3], vec![0; 100], vec![0xFF; 10]] {
        let want = scan_copy(&buf, 2048, &|_, _| true);
        assert_eq!(scan_stream(&buf, 2048, 2048, &|_, _| true, None), want);
        assert!(want.is_empty());
    }
}
