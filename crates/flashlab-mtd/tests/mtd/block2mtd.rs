//! block2mtd: the MTD on the simulated SSD; each read, program and erase
//! becomes the SSD requests Linux's block2mtd would send.

use flashlab_mtd::*;
use flashlab_sim::Ssd;

/// An SSD of `mib` MiB logical capacity, 4 KiB pages, content tracked.
pub fn ssd(mib: u64, extra: &[&str]) -> Ssd {
    let per_plane = mib * 2 * 256 / 128 / 4;
    let mut sets = vec![
        "device.channels=2".to_string(),
        "device.chips_per_channel=1".into(),
        "device.dies_per_chip=2".into(),
        "device.planes_per_die=1".into(),
        "device.page_bytes=4096".into(),
        "device.pages_per_block=128".into(),
        "device.spare_factor=0.5".into(),
        format!("device.blocks_per_plane={per_plane}"),
        "sim.track_content=true".into(),
    ];
    sets.extend(extra.iter().map(|s| s.to_string()));
    let s = flashlab_config::load("", "test", &sets).unwrap().1;
    assert_eq!(s.ftl.logical_pages * s.page_bytes(), mib << 20);
    Ssd::new(s).unwrap()
}

fn on_ssd(erase: &str) -> Nand {
    let cfg = Block2MtdSettings { erase: erase.into(), ..Block2MtdSettings::default() };
    Nand::on_ssd(ssd(16, &[]), &cfg).unwrap()
}

/// Logical pages of the SSD that hold a write (content tag set).
fn written_lpns(n: &Nand) -> Vec<u64> {
    let b = n.block2mtd().unwrap();
    let ssd = b.ssd();
    (0..ssd.settings().ftl.logical_pages).filter(|l| ssd.content_tag(*l).unwrap() != 0).collect()
}

#[test]
fn geometry_is_the_ssd_capacity_in_erase_blocks() {
    let n = on_ssd("write");
    let s = n.settings();
    assert_eq!((s.blocks, s.pages_per_block, s.page_bytes, s.subpages_per_page), (128, 32, 4096, 1));
    assert_eq!(s.device_bytes(), 16 << 20);
    assert_eq!(n.block2mtd().unwrap().erase_mode(), EraseMode::Write);
    assert!(Nand::new(NandSettings::default()).block2mtd().is_none());
}

#[test]
fn bad_geometry_names_the_key() {
    let bad = |c: Block2MtdSettings| Nand::on_ssd(ssd(16, &[]), &c).err().unwrap();
    let e = bad(Block2MtdSettings { erase_kib: 6, page_bytes: 512, ..Default::default() });
    assert_eq!(e.field, "erase_kib");
    assert!(e.reason.contains("not a multiple of the SSD's page, 4096 bytes"), "{e}");
    let e = bad(Block2MtdSettings { erase_kib: 3072, ..Default::default() });
    assert_eq!(e.field, "erase_kib");
    assert!(e.reason.contains("does not divide the SSD's logical capacity"), "{e}");
    let e = bad(Block2MtdSettings { page_bytes: 3000, ..Default::default() });
    assert_eq!(e.field, "page_bytes");
    let e = bad(Block2MtdSettings { erase: "zero".into(), ..Default::default() });
    assert_eq!(e.to_string(), "invalid setting `erase`: \"zero\" is not one of: write, trim");
    let e = bad(Block2MtdSettings { erase_kib: 4096, ..Default::default() });
    assert!(e.reason.contains("gives 4 erase blocks"), "{e}");
    let e = bad(Block2MtdSettings { size_mib: 17, ..Default::default() });
    assert_eq!(e.field, "size_mib");
    let e = bad(Block2MtdSettings { erase_kib: 3072, size_mib: 16, ..Default::default() });
    assert_eq!(e.field, "erase_kib");
    assert!(e.reason.contains("does not divide size_mib = 16"), "{e}");
}

#[test]
fn a_partition_of_the_ssd_is_its_first_size_mib() {
    let cfg = Block2MtdSettings { erase_kib: 1536, size_mib: 12, ..Block2MtdSettings::default() };
    let mut n = Nand::on_ssd(ssd(16, &[]), &cfg).unwrap();
    assert_eq!((n.settings().blocks, n.settings().pages_per_block), (8, 384));
    n.program(7, 383 * 4096, &[7u8; 4096], Cause::Data).unwrap();
    assert_eq!(written_lpns(&n), vec![12 * 256 - 1], "the partition's last page");
}

#[test]
fn erased_reads_are_ff_and_never_reach_the_ssd() {
    let mut n = on_ssd("write");
    let mut buf = vec![0u8; 10_000];
    n.read(5, 100, &mut buf, Cause::Mount).unwrap();
    assert!(buf.iter().all(|b| *b == 0xFF));
    let b = n.block2mtd().unwrap();
    assert_eq!((b.stats().read_requests, b.stats().erased_read_bytes), (0, 10_000));
    assert_eq!(b.ssd().submitted(), 0);
    assert!(!n.is_bad(5).unwrap());
    assert_eq!(n.stats().ops, 3, "the bad-block check costs no operation on block2mtd");
    assert!(n.read_oob(5, 0, &mut [0u8; 2], Cause::Mount).is_err(), "block2mtd has no OOB");
}

#[test]
fn a_program_is_one_ssd_write_and_reads_go_through_the_page_cache() {
    let mut n = on_ssd("write");
    let data: Vec<u8> = (0..8192u32).map(|i| (i * 7) as u8).collect();
    n.program(3, 4096, &data, Cause::Data).unwrap();
    let mut buf = vec![0u8; 3 * 4096];
    // The written pages are in the block device's page cache: no request.
    n.read(3, 0, &mut buf, Cause::Data).unwrap();
    assert!(buf[..4096].iter().all(|b| *b == 0xFF));
    assert_eq!(&buf[4096..], &data[..]);
    let s = n.block2mtd().unwrap().stats().clone();
    assert_eq!((s.program_requests, s.program_bytes), (1, 8192));
    assert_eq!((s.read_requests, s.cached_read_bytes, s.erased_read_bytes), (0, 8192, 4096));
    // After drop_caches each page is read once, whole (`read_mapping_page`).
    n.drop_caches();
    let mut small = [0u8; 100];
    n.read(3, 4096 + 5000, &mut small, Cause::Data).unwrap();
    assert_eq!(&small[..], &data[5000..5100]);
    n.read(3, 0, &mut buf, Cause::Data).unwrap();
    assert_eq!(&buf[4096..], &data[..]);
    let b = n.block2mtd().unwrap();
    let s = b.stats();
    assert_eq!((s.read_requests, s.read_bytes), (2, 8192), "page 2 for the small read, page 1 after it");
    assert_eq!(s.cached_read_bytes, 8192 + 4096, "the second read's page 2 was cached");
    assert_eq!(written_lpns(&n), vec![3 * 32 + 1, 3 * 32 + 2]);
    let r = n.block2mtd().unwrap().ssd_result();
    assert_eq!((r.write_requests, r.host_write_pages, r.read_requests, r.host_read_pages), (1, 2, 2, 2));
    assert!(s.busy_ns > 0 && s.busy_ns == b.clock_ns(), "timed: the requests took device time");
}

#[test]
fn an_erase_writes_ff_over_exactly_the_programmed_erase_block() {
    let mut n = on_ssd("write");
    for p in 0..32 {
        n.program(2, p * 4096, &[p as u8; 4096], Cause::Data).unwrap();
    }
    let before = n.block2mtd().unwrap().ssd_result().host_write_pages;
    n.erase(2, Cause::Gc).unwrap();
    let b = n.block2mtd().unwrap();
    assert_eq!((b.stats().erase_requests, b.stats().erase_bytes), (1, 128 << 10));
    let r = b.ssd_result();
    assert_eq!(r.host_write_pages - before, 32, "one write of the whole erase block");
    assert_eq!(written_lpns(&n), (64..96).collect::<Vec<u64>>());
    let mut buf = vec![0u8; 128 << 10];
    n.read(2, 0, &mut buf, Cause::Data).unwrap();
    assert!(buf.iter().all(|b| *b == 0xFF));
    assert_eq!(n.erase_counts()[2], 1);
}

#[test]
fn an_erase_skips_pages_known_erased_as_the_kernel_skips_all_ff_pages() {
    let mut n = on_ssd("write");
    n.program(1, 0, &[1u8; 4096], Cause::Data).unwrap();
    n.program(1, 3 * 4096, &[2u8; 8192], Cause::Data).unwrap();
    n.erase(1, Cause::Gc).unwrap();
    n.erase(0, Cause::Gc).unwrap();
    let s = n.block2mtd().unwrap().stats().clone();
    assert_eq!((s.erase_requests, s.erase_bytes), (2, 3 * 4096), "runs [0,1) and [3,5); block 0 untouched");
}

#[test]
fn erase_by_trim_trims_the_programmed_pages() {
    let mut n = on_ssd("trim");
    n.program(4, 0, &vec![9u8; 128 << 10], Cause::Data).unwrap();
    assert_eq!(written_lpns(&n).len(), 32);
    n.erase(4, Cause::Gc).unwrap();
    let b = n.block2mtd().unwrap();
    let r = b.ssd_result();
    assert_eq!((r.trim_requests, r.host_trim_pages, r.write_requests), (1, 32, 1));
    assert!(written_lpns(&n).is_empty(), "the trim unmapped the erase block");
    let mut buf = vec![0u8; 4096];
    n.read(4, 0, &mut buf, Cause::Data).unwrap();
    assert!(buf.iter().all(|b| *b == 0xFF), "erased reads are 0xFF, not the SSD's zeros");
}

#[test]
fn raw_nand_sends_nothing_anywhere_and_is_unchanged() {
    // The raw path: same counters as before block2mtd existed.
    let mut n = Nand::new(NandSettings::small(8, 8, 2048));
    n.program(1, 0, &[1u8; 4096], Cause::Data).unwrap();
    n.erase(1, Cause::Gc).unwrap();
    assert!(n.is_bad(2).is_ok());
    assert_eq!((n.stats().ops, n.stats().pages_read.total()), (4, 1));
    assert!(n.block2mtd().is_none());
}
