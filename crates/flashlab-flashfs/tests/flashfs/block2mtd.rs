//! flashfs and the JFFS2 model on the simulated SSD through block2mtd
//! (`Nand::on_ssd`): files survive a remount (attach by scan), and the
//! result carries the flash file system's counters and the SSD's result.

use flashlab_flashfs::jffs2::Jffs2;
use flashlab_flashfs::*;
use flashlab_mtd::{Block2MtdSettings, Nand};
use flashlab_sim::Ssd;
use flashlab_ubi::{Ubi, UbiSettings};
use flashlab_vfs::workload::{run_workload, BenchSpec, IozoneSpec, Measured, Workload};

/// An SSD of `mib` MiB logical capacity (4 KiB pages, half spare), timed.
fn ssd(mib: u64) -> Ssd {
    let per_plane = mib * 2 * 256 / 128 / 4;
    let sets = [
        "device.channels=2".to_string(),
        "device.chips_per_channel=1".into(),
        "device.dies_per_chip=2".into(),
        "device.planes_per_die=1".into(),
        "device.page_bytes=4096".into(),
        "device.pages_per_block=128".into(),
        "device.spare_factor=0.5".into(),
        format!("device.blocks_per_plane={per_plane}"),
    ];
    let s = flashlab_config::load("", "test", &sets).unwrap().1;
    assert_eq!(s.ftl.logical_pages * s.page_bytes(), mib << 20);
    Ssd::new(s).unwrap()
}

fn nand(mib: u64, erase: &str) -> Nand {
    let cfg = Block2MtdSettings { erase: erase.into(), ..Block2MtdSettings::default() };
    Nand::on_ssd(ssd(mib), &cfg).unwrap()
}

fn ubi_settings(fastmap: bool) -> UbiSettings {
    UbiSettings { fastmap, ..UbiSettings::default() }
}

fn strict() -> FsSettings {
    FsSettings { strict: true, ..FsSettings::default() }
}

fn format(nand: Nand) -> Fs {
    let mut ubi = Ubi::format(nand, ubi_settings(false)).unwrap();
    let vol = ubi.create_volume("fs", 0).unwrap();
    Fs::format(ubi, vol, strict()).unwrap()
}

fn data(n: usize, seed: u32) -> Vec<u8> {
    (0..n as u32).map(|i| (i.wrapping_mul(2654435761).wrapping_add(seed) >> 13) as u8).collect()
}

#[test]
fn flashfs_on_block2mtd_keeps_files_across_a_scanning_remount() {
    for erase in ["write", "trim"] {
        let mut fs = format(nand(16, erase));
        fs.mkdir("/d").unwrap();
        let files: Vec<(String, Vec<u8>)> =
            (0..6).map(|i| (format!("/d/f{i}"), data(3000 + i * 7001, i as u32))).collect();
        for (p, d) in &files {
            let fd = fs.create(p).unwrap();
            assert_eq!(fs.write(fd, 0, d).unwrap(), d.len());
            fs.fsync(fd).unwrap();
            fs.close(fd).unwrap();
        }
        // Overwrites make garbage, so GC and erases happen on the SSD too.
        for round in 0..40u32 {
            let fd = fs.open("/d/f5").unwrap();
            fs.write(fd, 0, &data(40_000, round)).unwrap();
            fs.fsync(fd).unwrap();
            fs.close(fd).unwrap();
        }
        let last = data(40_000, 39);
        let ubi = fs.unmount().unwrap();
        let mut nand = ubi.into_nand();
        // A cold start: block2mtd's block device closed and opened again
        // (its last close drops the page cache: `kill_bdev`).
        nand.drop_caches();
        let b = nand.block2mtd().unwrap();
        assert!(b.stats().erase_requests > 0, "{erase}: {:?}", b.stats());
        let writes_before = b.ssd_result().host_write_pages;
        let ubi = Ubi::attach(nand, ubi_settings(false)).unwrap();
        assert_eq!(ubi.stats().attach_mode, "scan");
        let mut fs = Fs::mount(ubi, 0, strict()).unwrap();
        fs.check_invariants().unwrap();
        assert_eq!(fs.readdir("/d").unwrap().len(), 6);
        for (p, d) in &files {
            let want = if p == "/d/f5" { &last } else { d };
            let fd = fs.open(p).unwrap();
            assert_eq!(&fs.read(fd, 0, 1 << 20).unwrap(), want, "{erase} {p}");
            fs.close(fd).unwrap();
        }
        let b = fs.ubi().nand().block2mtd().unwrap();
        let r = b.ssd_result();
        assert!(r.host_read_pages > 0, "the scan and the reads went to the SSD");
        assert!(r.host_write_pages >= writes_before);
        // The SSD saw the MTD's programs (and 0xFF erases) as writes.
        let s = b.stats();
        let mtd_writes = s.program_bytes + if erase == "write" { s.erase_bytes } else { 0 };
        assert_eq!(r.host_write_pages * 4096, mtd_writes, "{erase}: every write is whole 4 KiB pages");
        if erase == "trim" {
            assert_eq!(r.host_trim_pages * 4096, s.erase_bytes);
        }
    }
}

#[test]
fn flashfs_fs_bench_result_has_the_fs_counters_and_the_ssd_result() {
    let fs = format(nand(16, "write"));
    let spec = BenchSpec {
        workload: Workload::Iozone(IozoneSpec {
            file_bytes: 512 << 10,
            request_bytes: 4096,
            update_fraction: 0.25,
            seed: 1,
        }),
        utilisation_pct: 40.0,
    };
    let mut fs = fs;
    let r = run_workload(&mut fs, &spec).unwrap();
    assert!(!r.enospc, "{r:?}");
    let dev = fs.device_result();
    let ssd = &dev["ssd"];
    assert!(ssd["host_write_pages"].as_u64().unwrap() > 0, "{dev}");
    assert!(ssd["waf"].as_f64().unwrap() >= 1.0, "{dev}");
    assert!(dev["nand"]["pages_programmed"].is_object(), "the MTD's own counters stay: {dev}");
    assert!(dev["block2mtd"]["program_requests"].as_u64().unwrap() > 0, "{dev}");
    assert_eq!(fs.device_counters().nand_program_pages, ssd["nand_program_pages"].as_u64().unwrap());
    // Time is the SSD's: the device time the file system waited equals the requests' latencies.
    let busy = fs.ubi().nand().block2mtd().unwrap().stats().busy_ns;
    assert!(busy > 0);
    assert_eq!(flashlab_vfs::FileSystem::device_busy_ns(&fs), busy);
    // The flash file system's own write accounting is per MTD page, as on raw NAND.
    let w = fs.fs_writes();
    assert_eq!(w.total() % 4096, 0);
    assert!(w.data >= 512 << 10, "{w:?}");
}

#[test]
fn jffs2_on_block2mtd_keeps_files_across_a_remount() {
    let mut fs = Jffs2::format(nand(16, "write"), 3, Compression::None).unwrap();
    let a = data(50_000, 1);
    let b = data(9_000, 2);
    fs.write_file("a", &a).unwrap();
    fs.write_file("b", &b).unwrap();
    for round in 0..30 {
        fs.write_file("b", &data(9_000, 100 + round)).unwrap();
    }
    let mut nand = fs.unmount().unwrap();
    nand.drop_caches(); // a cold start (`kill_bdev` at the block device's last close)
    let st = nand.block2mtd().unwrap().stats().clone();
    assert!(st.program_requests > 0, "{st:?}");
    let mut fs = Jffs2::mount(nand, 3, Compression::None).unwrap();
    assert_eq!(fs.read_file("a").unwrap().unwrap(), a);
    assert_eq!(fs.read_file("b").unwrap().unwrap(), data(9_000, 129));
    let dev = fs.device_result();
    assert!(dev["ssd"]["host_read_pages"].as_u64().unwrap() > 0, "the mount scan read the SSD: {dev}");
}
