use flashlab_mtd::*;

#[path = "mtd/block2mtd.rs"]
mod block2mtd;

fn small() -> NandSettings {
    NandSettings { subpages_per_page: 4, ..NandSettings::small(8, 8, 2048) }
}

#[test]
fn program_read_roundtrip_and_no_reprogram() {
    let mut n = Nand::new(small());
    let data: Vec<u8> = (0..4096u32).map(|i| i as u8).collect();
    n.program(1, 2048, &data, Cause::Data).unwrap();
    let mut buf = vec![0; 4096];
    n.read(1, 2048, &mut buf, Cause::Data).unwrap();
    assert_eq!(buf, data);
    let err = n.program(1, 2048, &data[..512], Cause::Data).unwrap_err();
    assert!(matches!(err, MtdError::AlreadyProgrammed { .. }));
    assert_eq!(n.stats().pages_programmed.get(Cause::Data), 2);
    assert_eq!(n.stats().pages_read.get(Cause::Data), 2);
}

#[test]
fn subpages_program_separately() {
    let mut n = Nand::new(small());
    n.program(0, 0, &[1u8; 512], Cause::UbiHeader).unwrap();
    n.program(0, 512, &[2u8; 512], Cause::UbiHeader).unwrap();
    let mut buf = vec![0; 1536];
    n.read(0, 0, &mut buf, Cause::Mount).unwrap();
    assert!(buf[..512].iter().all(|b| *b == 1));
    assert!(buf[512..1024].iter().all(|b| *b == 2));
    assert!(buf[1024..].iter().all(|b| *b == 0xFF));
    assert!(n.program(0, 100, &[0u8; 512], Cause::Data).is_err());
}

#[test]
fn erase_resets_and_counts() {
    let mut n = Nand::new(small());
    n.program(2, 0, &[0u8; 2048], Cause::Data).unwrap();
    n.erase(2, Cause::Gc).unwrap();
    let mut buf = vec![0; 2048];
    n.read(2, 0, &mut buf, Cause::Data).unwrap();
    assert!(buf.iter().all(|b| *b == 0xFF));
    assert_eq!(n.erase_counts()[2], 1);
    n.program(2, 0, &[0u8; 2048], Cause::Data).unwrap();
}

#[test]
fn power_cut_program_leaves_garbage_and_blocks_until_reboot() {
    let mut n = Nand::new(small());
    let before = n.stats().ops;
    n.arm_power_cut(Some(before + 1));
    let data = vec![0x11u8; 4096];
    assert_eq!(n.program(3, 0, &data, Cause::Data), Err(MtdError::PowerCut));
    assert!(n.is_powered_off());
    let mut buf = vec![0; 2048];
    assert_eq!(n.read(3, 0, &mut buf, Cause::Data), Err(MtdError::PowerCut));
    n.reboot();
    n.read(3, 0, &mut buf, Cause::Data).unwrap();
    assert_eq!(buf, vec![0x11; 2048], "first page completed before the cut");
    n.read(3, 2048, &mut buf, Cause::Data).unwrap();
    assert_ne!(buf, vec![0xFF; 2048], "cut page is not clean");
    assert!(n.program(3, 2048, &[0; 2048], Cause::Data).is_err(), "cut page counts as programmed");
}

#[test]
fn power_cut_erase_leaves_some_state_and_reerase_works() {
    for seed in 0..20 {
        let mut cfg = small();
        cfg.faults.seed = seed;
        let mut n = Nand::new(cfg);
        n.program(1, 0, &vec![0u8; 8 * 2048], Cause::Data).unwrap();
        n.arm_power_cut(Some(n.stats().ops));
        assert_eq!(n.erase(1, Cause::Gc), Err(MtdError::PowerCut));
        n.reboot();
        n.erase(1, Cause::Gc).unwrap();
        n.program(1, 0, &[5u8; 2048], Cause::Data).unwrap();
    }
}

#[test]
fn factory_bad_blocks_are_marked_and_refuse_writes() {
    let mut cfg = small();
    cfg.blocks = 64;
    cfg.faults.factory_bad_blocks = 3;
    let mut n = Nand::new(cfg);
    let bad: Vec<u32> = (0..64).filter(|b| n.is_bad(*b).unwrap()).collect();
    assert_eq!(bad.len(), 3);
    assert!(!bad.contains(&0));
    assert_eq!(n.erase(bad[0], Cause::Other), Err(MtdError::BadBlock(bad[0])));
    n.mark_bad(5).unwrap();
    assert!(n.is_bad(5).unwrap());
}

#[test]
fn bitflips_and_uncorrectable_are_counted() {
    let mut cfg = small();
    cfg.faults.bitflip_per_read = 0.5;
    cfg.faults.uncorrectable_per_read = 0.05;
    let mut n = Nand::new(cfg);
    let mut buf = vec![0; 2048];
    let (mut corr, mut unc) = (0, 0);
    for _ in 0..400 {
        match n.read(0, 0, &mut buf, Cause::Data) {
            Ok(i) => corr += i.corrected_pages,
            Err(MtdError::Uncorrectable { .. }) => unc += 1,
            Err(e) => panic!("{e}"),
        }
    }
    assert!(corr > 100 && unc > 5, "corr {corr} unc {unc}");
}

/// `read_with` hands over exactly what `read` copies, with the same counters,
/// faults and random draws: two devices, one read each way, stay in step.
#[test]
fn read_with_sees_what_read_copies_with_the_same_faults() {
    let mut cfg = small();
    cfg.faults.bitflip_per_read = 0.3;
    cfg.faults.uncorrectable_per_read = 0.1;
    let (mut a, mut b) = (Nand::new(cfg.clone()), Nand::new(cfg));
    let data: Vec<u8> = (0..6144u32).map(|i| (i * 7 % 253) as u8).collect();
    let zeros = vec![0u8; 2048];
    for n in [&mut a, &mut b] {
        n.program(2, 0, &data, Cause::Data).unwrap();
        n.program(2, 6144, &zeros, Cause::Data).unwrap(); // kept sparse
    }
    let mut x = 5u64;
    for _ in 0..300 {
        x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        let offs = (x >> 33) as u32 % 10_000 / 8 * 8;
        let len = ((x >> 13) as usize % 6000).min(16_384 - offs as usize);
        let block = if x.is_multiple_of(5) { 3 } else { 2 }; // block 3 is erased
        let mut buf = vec![0u8; len];
        let ra = a.read(block, offs, &mut buf, Cause::Gc);
        let mut seen = Vec::new();
        let rb = b.read_with(block, offs, len, Cause::Gc, &mut |at, part| {
            assert_eq!(at, seen.len(), "parts in order");
            seen.extend_from_slice(part);
        });
        assert_eq!(ra, rb);
        if ra.is_ok() {
            assert_eq!(seen, buf);
        }
        assert_eq!(a.stats(), b.stats());
    }
    assert!(a.stats().uncorrectable_reads > 5 && a.stats().corrected_reads > 5);
}

#[test]
fn endurance_limit_fails_erase() {
    let mut cfg = small();
    cfg.faults.endurance_erases = 3;
    let mut n = Nand::new(cfg);
    for _ in 0..3 {
        n.erase(4, Cause::Other).unwrap();
    }
    assert_eq!(n.erase(4, Cause::Other), Err(MtdError::EraseFailed(4)));
}

#[test]
fn program_failures_are_injected() {
    let mut cfg = small();
    cfg.faults.program_fail_per_op = 1.0;
    let mut n = Nand::new(cfg);
    let e = n.program(1, 0, &[0u8; 2048], Cause::Data).unwrap_err();
    assert!(matches!(e, MtdError::ProgramFailed { .. }));
    assert_eq!(n.stats().program_failures, 1);
}

#[test]
fn deterministic_for_a_seed() {
    let run = || {
        let mut cfg = small();
        cfg.faults.bitflip_per_read = 0.3;
        let mut n = Nand::new(cfg);
        let mut buf = vec![0; 512];
        (0..100).map(|_| n.read(0, 0, &mut buf, Cause::Data).unwrap().corrected_pages).collect::<Vec<_>>()
    };
    assert_eq!(run(), run());
}

#[test]
fn settings_validate_and_deserialize() {
    assert!(NandSettings::default().validate().is_ok());
    let s = NandSettings { page_bytes: 1000, ..NandSettings::default() };
    assert_eq!(s.validate().unwrap_err().field, "page_bytes");
    let mut s = NandSettings::default();
    s.faults.bitflip_per_read = 2.0;
    assert_eq!(s.validate().unwrap_err().field, "faults.bitflip_per_read");
    let parsed: NandSettings = serde_json::from_str(r#"{"blocks": 64, "faults": {"seed": 3}}"#).unwrap();
    assert_eq!(parsed.blocks, 64);
    assert_eq!(parsed.faults.seed, 3);
    assert!(serde_json::from_str::<NandSettings>(r#"{"blokcs": 64}"#).is_err());
}

#[test]
fn saved_state_loads_to_the_same_content_and_wear() {
    let cfg = NandSettings { faults: FaultSettings { factory_bad_blocks: 1, ..FaultSettings::default() }, ..small() };
    let mut n = Nand::new(cfg.clone());
    let data: Vec<u8> = (0..4096u32).map(|i| (i * 7) as u8).collect();
    n.program(1, 2048, &data, Cause::Data).unwrap();
    n.program(3, 0, &[0u8; 512], Cause::UbiHeader).unwrap();
    n.program_oob(3, 1, &[5u8; 8], Cause::UbiHeader).unwrap();
    n.erase(4, Cause::Gc).unwrap();
    n.erase(4, Cause::Gc).unwrap();
    let bytes = n.save_state();
    let mut m = Nand::load_state(cfg.clone(), &bytes).unwrap();
    assert_eq!(m.erase_counts(), n.erase_counts());
    assert_eq!(m.bad_block_count(), n.bad_block_count());
    let size = (cfg.pages_per_block * cfg.page_bytes) as usize;
    for b in 0..cfg.blocks {
        if n.is_bad(b).unwrap() {
            continue;
        }
        let (mut x, mut y) = (vec![0; size], vec![0; size]);
        n.read(b, 0, &mut x, Cause::Mount).unwrap();
        m.read(b, 0, &mut y, Cause::Mount).unwrap();
        assert_eq!(x, y, "block {b}");
    }
    // Programmed state is kept: a sub-page programmed before cannot be programmed again.
    assert!(m.program(3, 0, &[1u8; 512], Cause::Data).is_err());
    m.program(3, 512, &[1u8; 512], Cause::Data).unwrap();
    let (mut ox, mut oy) = ([0u8; 8], [0u8; 8]);
    n.read_oob(3, 1, &mut ox, Cause::Mount).unwrap();
    m.read_oob(3, 1, &mut oy, Cause::Mount).unwrap();
    assert_eq!(ox, oy);
    // Errors: another geometry, junk, truncation.
    let other = NandSettings { blocks: 9, ..cfg.clone() };
    assert!(matches!(Nand::load_state(other, &bytes), Err(StateError::Geometry { .. })));
    assert!(matches!(Nand::load_state(cfg.clone(), b"junk"), Err(StateError::Magic)));
    assert!(matches!(Nand::load_state(cfg, &bytes[..bytes.len() - 1]), Err(StateError::Truncated(_))));
}
