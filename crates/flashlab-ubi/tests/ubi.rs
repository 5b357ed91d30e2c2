use flashlab_mtd::{Cause, Nand, NandSettings};
use flashlab_ubi::*;

fn nand(blocks: u32) -> Nand {
    Nand::new(NandSettings::small(blocks, 16, 2048))
}

fn fresh(blocks: u32, cfg: UbiSettings) -> (Ubi, u32) {
    let mut ubi = Ubi::format(nand(blocks), cfg).unwrap();
    let vol = ubi.create_volume("fs", 0).unwrap();
    (ubi, vol)
}

fn page(v: u8) -> Vec<u8> {
    vec![v; 2048]
}

fn read_leb(ubi: &mut Ubi, vol: u32, lnum: u32, len: usize) -> Vec<u8> {
    let mut b = vec![0; len];
    ubi.leb_read(vol, lnum, 0, &mut b, Cause::Data).unwrap();
    b
}

#[test]
fn geometry_uses_subpage_for_vid_header() {
    let (ubi, _) = fresh(32, UbiSettings::default());
    let g = ubi.geometry();
    assert_eq!(g.vid_offset, 512);
    assert_eq!(g.data_offset, 2048);
    assert_eq!(g.leb_bytes, 15 * 2048);
}

#[test]
fn write_read_reattach_by_scan() {
    let (mut ubi, vol) = fresh(32, UbiSettings::default());
    ubi.leb_write(vol, 3, 0, &page(7), Cause::Data).unwrap();
    ubi.leb_write(vol, 3, 2048, &page(8), Cause::Data).unwrap();
    ubi.leb_change(vol, 5, b"hello", Cause::Data).unwrap();
    assert!(ubi.leb_write(vol, 3, 100, &page(1), Cause::Data).is_err(), "unaligned");
    let mut ubi = Ubi::attach(ubi.into_nand(), UbiSettings::default()).unwrap();
    assert_eq!(ubi.stats().attach_mode, "scan");
    assert!(ubi.stats().attach_pages_read >= 64, "bad-block check + header page per PEB");
    assert_eq!(ubi.volumes().len(), 1);
    let b = read_leb(&mut ubi, vol, 3, 4096);
    assert_eq!(&b[..2048], &page(7)[..]);
    assert_eq!(&b[2048..], &page(8)[..]);
    assert_eq!(&read_leb(&mut ubi, vol, 5, 5), b"hello");
    assert!(read_leb(&mut ubi, vol, 6, 10).iter().all(|b| *b == 0xFF));
    ubi.leb_unmap(vol, 3, Cause::Gc).unwrap();
    assert!(!ubi.is_mapped(vol, 3).unwrap());
}

#[test]
fn volumes_persist_and_can_be_removed() {
    let mut ubi = Ubi::format(nand(64), UbiSettings::default()).unwrap();
    let a = ubi.create_volume("a", 10).unwrap();
    let b = ubi.create_volume("b", 5).unwrap();
    assert_eq!(ubi.create_volume("a", 1), Err(UbiError::Exists));
    ubi.leb_write(b, 0, 0, &page(3), Cause::Data).unwrap();
    ubi.remove_volume(a).unwrap();
    let ubi = Ubi::attach(ubi.into_nand(), UbiSettings::default()).unwrap();
    let vols = ubi.volumes();
    assert_eq!(vols.len(), 1);
    assert_eq!(vols[0].name, "b");
    assert_eq!(ubi.volume_id("b"), Some(b));
}

#[test]
fn fastmap_attach_reads_less_than_scan() {
    let fm = UbiSettings { fastmap: true, fastmap_anchor_pebs: 16, ..UbiSettings::default() };
    let (mut ubi, vol) = fresh(512, fm.clone());
    for l in 0..40 {
        ubi.leb_write(vol, l, 0, &page(l as u8), Cause::Data).unwrap();
    }
    ubi.detach().unwrap();
    let scan = Ubi::attach(ubi.into_nand(), UbiSettings::default()).unwrap();
    let scan_reads = scan.stats().attach_pages_read;
    let mut ubi = Ubi::attach(scan.into_nand(), fm.clone()).unwrap();
    assert_eq!(ubi.stats().attach_mode, "scan", "scan attach erased the old anchor");
    for l in 40..50 {
        ubi.leb_write(vol, l, 0, &page(l as u8), Cause::Data).unwrap();
    }
    let mut ubi = Ubi::attach(ubi.into_nand(), fm).unwrap();
    assert_eq!(ubi.stats().attach_mode, "fastmap");
    let fm_reads = ubi.stats().attach_pages_read;
    assert!(fm_reads * 4 < scan_reads, "fastmap {fm_reads} scan {scan_reads}");
    for l in 0..50 {
        assert_eq!(read_leb(&mut ubi, vol, l, 2048), page(l as u8), "leb {l}");
    }
}

#[test]
fn atomic_change_survives_power_cut_at_every_op() {
    for fastmap in [false, true] {
        let cfg = UbiSettings { fastmap, ..UbiSettings::default() };
        let (mut ubi, vol) = fresh(24, cfg.clone());
        let old: Vec<u8> = (0..9000u32).map(|i| i as u8).collect();
        ubi.leb_change(vol, 2, &old, Cause::Data).unwrap();
        let saved = ubi.into_nand();
        let mut cut = 0;
        loop {
            // Replay the same history on a clone of the device.
            let n = clone_nand(&saved);
            let mut ubi = Ubi::attach(n, cfg.clone()).map_err(|f| f.error).unwrap();
            let base = ubi.nand().stats().ops;
            ubi.nand_mut().arm_power_cut(Some(base + cut));
            let new = vec![0x42u8; 12000];
            let r = ubi.leb_change(vol, 2, &new, Cause::Data);
            let done = r.is_ok();
            let mut n = ubi.into_nand();
            n.reboot();
            let mut ubi = Ubi::attach(n, cfg.clone()).map_err(|f| f.error).unwrap();
            let got = read_leb(&mut ubi, vol, 2, 12000);
            let is_new = got == new;
            let is_old = got[..9000] == old[..] && got[9000..].iter().all(|b| *b == 0xFF);
            assert!(is_new || is_old, "fastmap {fastmap} cut {cut}");
            if done {
                assert!(is_new);
                break;
            }
            cut += 1;
        }
        assert!(cut > 5);
    }
}

fn clone_nand(n: &Nand) -> Nand {
    n.clone()
}

#[test]
fn wear_levelling_moves_static_data() {
    let cfg = UbiSettings { wl_threshold_erases: 8, ..UbiSettings::default() };
    let (mut ubi, vol) = fresh(16, cfg);
    for l in 0..4 {
        ubi.leb_write(vol, l, 0, &page(l as u8), Cause::Data).unwrap();
    }
    for i in 0..400 {
        ubi.leb_change(vol, 5, &page(i as u8), Cause::Data).unwrap();
    }
    assert!(ubi.stats().wl_moves > 0);
    let ecs = ubi.erase_counters();
    let (min, max) = (ecs.iter().min().unwrap(), ecs.iter().max().unwrap());
    assert!(max - min <= 8 + 12, "spread {min}..{max}");
    for l in 0..4 {
        assert_eq!(read_leb(&mut ubi, vol, l, 2048), page(l as u8));
    }
}

#[test]
fn scrubbing_relocates_after_corrected_bitflips() {
    let mut s = NandSettings::small(32, 16, 2048);
    s.faults.bitflip_per_read = 0.2;
    let mut ubi = Ubi::format(Nand::new(s), UbiSettings::default()).unwrap();
    let vol = ubi.create_volume("v", 0).unwrap();
    ubi.leb_write(vol, 1, 0, &page(9), Cause::Data).unwrap();
    for _ in 0..50 {
        assert_eq!(read_leb(&mut ubi, vol, 1, 2048), page(9));
    }
    assert!(ubi.stats().scrubs > 0);
}

/// `leb_read_with` sees what `leb_read` copies, with the same retries,
/// scrubbing and counters: two clones of one volume read in step.
#[test]
fn leb_read_with_sees_what_leb_read_copies() {
    let mut s = NandSettings::small(32, 16, 2048);
    s.faults.bitflip_per_read = 0.2;
    s.faults.uncorrectable_per_read = 0.2;
    let cfg = UbiSettings { read_retries: 1, ..UbiSettings::default() };
    let volume = || {
        let mut u = Ubi::format(Nand::new(s.clone()), cfg.clone()).unwrap();
        let vol = u.create_volume("v", 0).unwrap();
        for l in 0..3 {
            let data: Vec<u8> = (0..3 * 2048u32).map(|i| (i * 13 + l) as u8).collect();
            u.leb_write(vol, l, 0, &data, Cause::Data).unwrap();
        }
        (u, vol)
    };
    let ((mut a, vol), (mut b, _)) = (volume(), volume());
    for i in 0..200u32 {
        let (lnum, offs, len) = (i % 5, i * 40 % 4000, (i * 97 % 2500) as usize);
        let mut buf = vec![0u8; len];
        let ra = a.leb_read(vol, lnum, offs, &mut buf, Cause::Data);
        let mut seen = Vec::new();
        let rb = b.leb_read_with(vol, lnum, offs, len, Cause::Data, &mut |at, part| {
            seen.truncate(at);
            seen.extend_from_slice(part);
        });
        assert_eq!(ra, rb, "read {i}");
        if ra.is_ok() {
            assert_eq!(seen, buf, "read {i}");
        }
        assert_eq!(a.stats(), b.stats());
        assert_eq!(a.nand().stats(), b.nand().stats());
    }
    assert!(a.nand().stats().uncorrectable_reads > 5 && a.stats().scrubs > 0);
}

#[test]
fn program_and_erase_failures_are_survived() {
    let mut s = NandSettings::small(64, 16, 2048);
    s.faults.program_fail_per_op = 0.002;
    s.faults.erase_fail_per_op = 0.002;
    s.faults.factory_bad_blocks = 2;
    let cfg = UbiSettings { bad_reserve_per_1024: 160, ..UbiSettings::default() };
    let mut ubi = Ubi::format(Nand::new(s), cfg.clone()).unwrap();
    let vol = ubi.create_volume("v", 20).unwrap();
    for i in 0..600u32 {
        let data = page(i as u8);
        ubi.leb_change(vol, i % 20, &data, Cause::Data).unwrap();
    }
    assert!(ubi.stats().tortures + ubi.stats().bad_pebs_marked > 0);
    let mut ubi = Ubi::attach(ubi.into_nand(), cfg).unwrap();
    for l in 0..20u32 {
        let last = (580..600u32).find(|i| i % 20 == l).unwrap();
        assert_eq!(read_leb(&mut ubi, vol, l, 2048), page(last as u8));
    }
}

#[test]
fn settings_validate() {
    assert!(UbiSettings::default().validate().is_ok());
    let bad = UbiSettings { fastmap_pool_pebs: 300, ..UbiSettings::default() };
    assert_eq!(bad.validate().unwrap_err().field, "fastmap_pool_pebs");
    let parsed: UbiSettings = serde_json::from_str(r#"{"fastmap": true, "wl_threshold_erases": 100}"#).unwrap();
    assert!(parsed.fastmap);
    assert!(serde_json::from_str::<UbiSettings>(r#"{"fast_map": true}"#).is_err());
}
