//! Data-node CRCs on file reads (`chk_data_crc`): UBIFS's default
//! `no_chk_data_crc` skips a data node's CRC on a file read
//! (`ubifs_check_node`, fs/ubifs/io.c, with `must_chk_crc` = 0 from
//! `ubifs_read_node`) but checks it while mounting, in replay and GC
//! (`ubifs_scan_a_node`) and after the file system failed
//! (`ubifs_ro_mode`); with `chk_data_crc` file reads check it too.

use crate::compress::Compression;
use crate::fs::Fs;
use crate::key::Key;
use crate::settings::FsSettings;
use flashlab_mtd::{Nand, NandSettings};
use flashlab_ubi::{Ubi, UbiSettings};

const BLOCK: usize = 4096;

fn geometry() -> NandSettings {
    NandSettings::small(64, 16, 2048)
}

fn settings(chk_data_crc: bool) -> FsSettings {
    // Uncompressed, so that the payload's bytes are the file's on flash.
    FsSettings { compression: Compression::None, chk_data_crc, ..FsSettings::default() }
}

/// `n` bytes of xorshift noise from `x` (also `crc_tail.rs`'s tests).
pub(crate) fn noise(mut x: u64, n: usize) -> Vec<u8> {
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 24) as u8
        })
        .collect()
}

/// A NAND image holding `/f` (three blocks of noise, fsynced), unmounted
/// cleanly (`clean`) or cut off (its data nodes then only in journal buds,
/// which the mount replays), and the file's bytes.
fn image(clean: bool) -> (Vec<u8>, Vec<u8>) {
    let nand = Nand::new(geometry());
    let mut ubi = Ubi::format(nand, UbiSettings::default()).unwrap();
    let vol = ubi.create_volume("fs", 0).unwrap();
    let mut fs = Fs::format(ubi, vol, settings(false)).unwrap();
    let data = noise(0x1234_5678_9ABC_DEF1, 3 * BLOCK);
    let fd = fs.create("/f").unwrap();
    fs.write(fd, 0, &data).unwrap();
    fs.fsync(fd).unwrap();
    fs.close(fd).unwrap();
    let ubi = if clean { fs.unmount().unwrap() } else { fs.into_ubi() };
    (ubi.into_nand().save_state(), data)
}

/// Flips one bit of block 1's payload in the image (a byte found exactly
/// once there, so the data node's copy); returns the file offset changed.
fn corrupt_block_1(image: &mut [u8], data: &[u8]) -> usize {
    for at in (BLOCK + 64..2 * BLOCK - 64).step_by(64) {
        let pat = &data[at..at + 32];
        let hits: Vec<usize> = image.windows(32).enumerate().filter(|(_, w)| *w == pat).map(|(i, _)| i).collect();
        if let [i] = hits[..] {
            image[i] ^= 0x10;
            return at;
        }
    }
    panic!("block 1's payload not found once in the image");
}

fn mount(image: &[u8], chk_data_crc: bool) -> Result<Fs, crate::error::MountFailure> {
    let nand = Nand::load_state(geometry(), image).unwrap();
    let ubi = Ubi::attach(nand, UbiSettings::default()).unwrap();
    Fs::mount(ubi, 0, settings(chk_data_crc))
}

fn read_all(fs: &mut Fs) -> crate::error::FsResult<Vec<u8>> {
    let fd = fs.open("/f")?;
    fs.read(fd, 0, 3 * BLOCK)
}

#[test]
fn a_corrupted_payload_reads_back_unless_chk_data_crc() {
    let (mut img, data) = image(true);
    let at = corrupt_block_1(&mut img, &data);
    let mut expect = data.clone();
    expect[at] ^= 0x10;

    // The default (UBIFS's no_chk_data_crc): the bytes as they are on flash.
    let mut fs = mount(&img, false).unwrap();
    assert_eq!(read_all(&mut fs).unwrap(), expect);
    // A partial-block write reads the block the same way.
    let fd = fs.open("/f").unwrap();
    fs.write(fd, BLOCK as u64 + 8, b"xy").unwrap();
    expect[BLOCK + 8..BLOCK + 10].copy_from_slice(b"xy");
    assert_eq!(fs.read(fd, 0, 3 * BLOCK).unwrap(), expect);

    // chk_data_crc: the read fails as a corrupt node, and the file system
    // fails with it (later operations get EIO).
    let mut fs = mount(&img, true).unwrap();
    let e = read_all(&mut fs).unwrap_err();
    assert!(matches!(e, crate::error::FsError::Corrupt(_)), "{e:?}");
    assert!(fs.broken && fs.must_chk_data_crc());

    // While mounting the CRC is checked whatever the setting.
    let mut fs = mount(&img, false).unwrap();
    fs.mounting = true;
    assert!(matches!(read_all(&mut fs), Err(crate::error::FsError::Corrupt(_))));
}

#[test]
fn gc_does_not_move_a_corrupted_data_node() {
    let (mut img, data) = image(true);
    corrupt_block_1(&mut img, &data);
    let mut fs = mount(&img, false).unwrap();
    let inum = {
        let fd = fs.open("/f").unwrap();
        fs.fds[&fd]
    };
    let locs: Vec<_> = (0..3).map(|b| fs.idx_lookup(&Key::data(inum, b)).unwrap()).collect();
    assert!(locs.iter().all(|l| l.lnum == locs[1].lnum), "{locs:?}");
    // GC's scan checks every node's CRC (`ubifs_scan_a_node`): the good
    // node before it moves to the GC head, the corrupted one is not taken
    // for a node (the scan goes on at the next min. I/O unit, past block 2's
    // header too).
    fs.gc_collect(locs[1].lnum).unwrap();
    let after: Vec<_> = (0..3).map(|b| fs.idx_lookup(&Key::data(inum, b)).unwrap()).collect();
    assert_ne!(after[0], locs[0]);
    assert_eq!(after[1], locs[1]);
}

#[test]
fn replay_does_not_take_a_corrupted_data_node() {
    let (mut img, data) = image(false);
    let at = corrupt_block_1(&mut img, &data);
    let mut expect = data.clone();
    expect[at] ^= 0x10;
    // Replay scans the buds with the CRC checked: the corrupted node and
    // what follows it in its bud are not replayed (or the mount fails), so
    // the corrupted bytes are never read back.
    if let Ok(mut fs) = mount(&img, false) {
        let got = read_all(&mut fs).unwrap_or_default();
        assert_ne!(got, expect);
        assert!(got.len() < 2 * BLOCK || got[BLOCK..2 * BLOCK] != expect[BLOCK..2 * BLOCK], "block 1 replayed");
    }
}
