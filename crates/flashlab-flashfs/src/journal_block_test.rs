//! `Fs::journal_write_block` (a data node encoded from the caller's or the
//! compressed bytes) against the node it replaces, `journal_write` of
//! `data_node`: same locations, same write buffers, same bytes on flash,
//! for every compression, with and without `elide_payload`.

use crate::compress::Compression;
use crate::fs::{Fs, DATA};
use crate::settings::FsSettings;
use flashlab_mtd::{Nand, NandSettings};
use flashlab_ubi::{Ubi, UbiSettings};

fn small_fs(cfg: FsSettings) -> Fs {
    let nand = Nand::new(NandSettings::small(64, 16, 2048));
    let mut ubi = Ubi::format(nand, UbiSettings::default()).unwrap();
    let vol = ubi.create_volume("fs", 0).unwrap();
    Fs::format(ubi, vol, cfg).unwrap()
}

/// Blocks of every kind: incompressible, compressible, short, empty-ish.
fn blocks() -> Vec<Vec<u8>> {
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    let mut noise = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        (x >> 24) as u8
    };
    let random: Vec<u8> = (0..4096).map(|_| noise()).collect();
    let mut stamped = random.clone();
    stamped[..8].copy_from_slice(&77u64.to_le_bytes());
    vec![
        random,
        vec![0; 4096],
        (0..4096u32).map(|i| (i % 7) as u8).collect(),
        stamped,
        (0..1000).map(|_| noise()).collect(),
        vec![5; 13],
        vec![9],
    ]
}

#[test]
fn journal_write_block_writes_what_journal_write_of_data_node_does() {
    for compression in [Compression::None, Compression::Lz4, Compression::Zlib, Compression::Zstd] {
        for elide_payload in [false, true] {
            let cfg = FsSettings { compression, elide_payload, strict: true, ..FsSettings::default() };
            let (mut a, mut b) = (small_fs(cfg.clone()), small_fs(cfg));
            let (fa, fb) = (a.create("/f").unwrap(), b.create("/f").unwrap());
            let inum = a.fds[&fa];
            assert_eq!(inum, b.fds[&fb]);
            for round in 0..12u32 {
                for (i, bytes) in blocks().iter().enumerate() {
                    let blk = round * 8 + i as u32;
                    let la = a.journal_write_block(DATA, inum, blk, bytes, None).unwrap();
                    let node = b.data_node(inum, blk, bytes);
                    let lb = b.journal_write(DATA, &[node]).unwrap()[0];
                    assert_eq!(la, lb, "{compression:?} elide {elide_payload} block {blk}");
                    assert_eq!(a.heads[DATA].wbuf, b.heads[DATA].wbuf);
                    let (ra, rb) = (a.read_bytes(la.lnum, la.offs, la.len), b.read_bytes(lb.lnum, lb.offs, lb.len));
                    assert_eq!(ra.unwrap(), rb.unwrap());
                }
            }
            assert_eq!(a.ubi().nand().stats(), b.ubi().nand().stats());
        }
    }
}
