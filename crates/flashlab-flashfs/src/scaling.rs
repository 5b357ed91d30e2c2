//! Mount time and memory against device size: JFFS2-style full scan,
//! UBI attach by scanning, and UBI attach with fastmap (each followed by
//! a flashfs mount). The device is filled to a fraction with 64 KiB files.

use crate::jffs2::Jffs2;
use crate::{Compression, Fs, FsSettings};
use flashlab_mtd::{Nand, NandSettings};
use flashlab_ubi::{Ubi, UbiSettings};
use serde::Serialize;

/// One device size.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ScalingRow {
    pub device_mib: u64,
    pub blocks: u32,
    pub files: u32,
    pub jffs2_mount_nand_ops: u64,
    /// NAND pages read by each mount (its simulated time: pages × the
    /// nandsim read time of [`mount_time_s`]).
    pub jffs2_mount_pages_read: u64,
    pub ubi_scan_attach_pages_read: u64,
    pub ubi_fastmap_attach_pages_read: u64,
    pub flashfs_mount_pages_read: u64,
    pub jffs2_memory_bytes: u64,
    pub ubi_scan_attach_nand_ops: u64,
    pub ubi_fastmap_attach_nand_ops: u64,
    /// flashfs mount after attach (same for both attach modes).
    pub flashfs_mount_nand_ops: u64,
    /// flashfs (index, LPT, caches) plus UBI tables.
    pub flashfs_memory_bytes: u64,
    pub ubi_memory_bytes: u64,
    /// How the fastmap attach attached: `fastmap`, or `scan` when the
    /// model's fastmap (one LEB; Linux's spans up to 32 PEBs,
    /// `UBI_FM_MAX_BLOCKS`) did not fit the device's PEB records.
    pub ubi_fastmap_attach_mode: String,
}

fn geometry(blocks: u32) -> NandSettings {
    NandSettings { blocks, pages_per_block: 64, page_bytes: 2048, subpages_per_page: 4, ..NandSettings::default() }
}

fn file(i: u32) -> Vec<u8> {
    crate::model::pattern(i as u8, i.wrapping_mul(65536), 65536)
}

fn files_for(blocks: u32, fill: f64) -> u32 {
    (geometry(blocks).device_bytes() as f64 * fill / 65536.0) as u32
}

fn jffs2_row(blocks: u32, fill: f64, row: &mut ScalingRow) {
    let mut fs = Jffs2::format(Nand::new(geometry(blocks)), 1, Compression::None).expect("format");
    for i in 0..row.files {
        fs.write_file(&format!("f{i}"), &file(i)).expect("jffs2 write");
    }
    let nand = fs.unmount().expect("unmount");
    let fs = Jffs2::mount(nand, 1, Compression::None).expect("mount");
    row.jffs2_mount_nand_ops = fs.stats.mount_nand_ops;
    row.jffs2_mount_pages_read = fs.stats.mount_pages_read;
    row.jffs2_memory_bytes = fs.memory_bytes() as u64;
    let _ = fill;
}

fn flashfs_row(blocks: u32, row: &mut ScalingRow) {
    let scan = UbiSettings::default();
    let mut ubi = Ubi::format(Nand::new(geometry(blocks)), scan.clone()).expect("ubi format");
    let vol = ubi.create_volume("fs", 0).expect("volume");
    let cfg = FsSettings { compression: Compression::None, ..FsSettings::default() };
    let mut fs = Fs::format(ubi, vol, cfg.clone()).expect("fs format");
    for i in 0..row.files {
        let fd = fs.create(&format!("/f{i}")).expect("create");
        fs.write(fd, 0, &file(i)).expect("write");
        fs.close(fd).expect("close");
    }
    let nand = fs.unmount().expect("unmount").into_nand();
    let ubi = Ubi::attach(nand, scan).expect("attach");
    row.ubi_scan_attach_nand_ops = ubi.stats().attach_ops;
    row.ubi_scan_attach_pages_read = ubi.stats().attach_pages_read;
    let read0 = ubi.nand().stats().pages_read.total();
    let fs = Fs::mount(ubi, vol, cfg.clone()).expect("mount");
    row.flashfs_mount_nand_ops = fs.stats().fs.mount_ops;
    row.flashfs_mount_pages_read = fs.ubi().nand().stats().pages_read.total() - read0;
    row.flashfs_memory_bytes = fs.memory_bytes() as u64;
    row.ubi_memory_bytes = fs.ubi().memory_bytes() as u64;
    let fm = UbiSettings { fastmap: true, ..UbiSettings::default() };
    let nand = fs.unmount().expect("unmount").into_nand();
    let mut ubi = Ubi::attach(nand, fm.clone()).expect("attach (writes the first fastmap)");
    ubi.detach().expect("detach");
    let ubi = Ubi::attach(ubi.into_nand(), fm).expect("fastmap attach");
    row.ubi_fastmap_attach_mode = ubi.stats().attach_mode.clone();
    row.ubi_fastmap_attach_nand_ops = ubi.stats().attach_ops;
    row.ubi_fastmap_attach_pages_read = ubi.stats().attach_pages_read;
}

/// Simulated seconds of `pages_read` page reads at flashfs's nandsim read
/// time (`vfs_impl::READ_NS`, 25 µs a 2 KiB page: the time `fs bench`
/// charges flashfs and JFFS2 for a read).
pub fn mount_time_s(pages_read: u64) -> f64 {
    (pages_read * crate::vfs_impl::READ_NS) as f64 / 1e9
}

/// Measures one device size filled to `fill` (0..1) of its raw capacity.
pub fn measure(blocks: u32, fill: f64) -> ScalingRow {
    let mut row = ScalingRow {
        device_mib: geometry(blocks).device_bytes() >> 20,
        blocks,
        files: files_for(blocks, fill),
        ..ScalingRow::default()
    };
    jffs2_row(blocks, fill, &mut row);
    flashfs_row(blocks, &mut row);
    row
}

/// The comparison as a Markdown table.
pub fn markdown(rows: &[ScalingRow]) -> String {
    let mut s = String::from(
        "| device | PEBs | files | JFFS2 mount ops | JFFS2 memory | UBI scan attach ops | UBI fastmap attach ops | flashfs mount ops | flashfs+UBI memory |\n|---|---|---|---|---|---|---|---|---|\n",
    );
    for r in rows {
        s += &format!(
            "| {} MiB | {} | {} | {} | {} KiB | {} | {} | {} | {} KiB |\n",
            r.device_mib,
            r.blocks,
            r.files,
            r.jffs2_mount_nand_ops,
            r.jffs2_memory_bytes / 1024,
            r.ubi_scan_attach_nand_ops,
            r.ubi_fastmap_attach_nand_ops,
            r.flashfs_mount_nand_ops,
            r.flashfs_memory_bytes / 1024
        );
    }
    s
}
