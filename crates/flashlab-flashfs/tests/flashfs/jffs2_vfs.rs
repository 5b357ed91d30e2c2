//! The JFFS2 baseline behind the shared file API: a model-based test against
//! the reference file system, space accounting, and the fs-bench counters.

use flashlab_flashfs::jffs2::{Jffs2, Jffs2Error};
use flashlab_flashfs::model::*;
use flashlab_flashfs::{Compression, Errno, FileSystem};
use flashlab_mtd::{Nand, NandSettings};
use flashlab_vfs::workload::{run_workload, BenchSpec, IozoneSpec, Measured, Workload};
use proptest::prelude::*;

fn jffs2(blocks: u32) -> Jffs2 {
    Jffs2::format(Nand::new(NandSettings::small(blocks, 16, 2048)), 5, Compression::None).unwrap()
}

fn op() -> impl Strategy<Value = Op> {
    let p = 0..PATHS.len();
    prop_oneof![
        3 => p.clone().prop_map(Op::Create),
        2 => p.clone().prop_map(Op::Mkdir),
        6 => (p.clone(), 0u32..20_000, 1u32..9_000, any::<u8>()).prop_map(|(path, off, len, byte)| Op::Write { path, off, len, byte }),
        2 => (p.clone(), 0u32..20_000).prop_map(|(path, size)| Op::Truncate { path, size }),
        2 => p.clone().prop_map(Op::Unlink),
        1 => p.clone().prop_map(Op::Rmdir),
        2 => (p.clone(), p.clone()).prop_map(|(a, b)| Op::Rename(a, b)),
        1 => p.clone().prop_map(Op::Hold),
        1 => Just(Op::CloseAll),
        1 => p.clone().prop_map(Op::Fsync),
        1 => Just(Op::Sync),
        3 => p.clone().prop_map(Op::Check),
    ]
}

/// A rename the flat name space refuses (a directory with entries).
fn moves_a_full_directory(m: &ModelFs, op: &Op) -> bool {
    let Op::Rename(a, _) = op else { return false };
    let from = PATHS[*a % PATHS.len()];
    matches!(m.get(from), Ok(Entry::Dir)) && m.entries.keys().any(|k| k.starts_with(&format!("{from}/")))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 32, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn jffs2_matches_the_reference_fs(ops in proptest::collection::vec(op(), 1..120)) {
        let mut fs = jffs2(48);
        let mut model = ModelFs::default();
        let (mut held_fs, mut held_m) = (Vec::new(), Vec::new());
        for (i, op) in ops.iter().enumerate() {
            let got = apply_with(&mut fs, &mut held_fs, op, |e| matches!(e, Jffs2Error::Io(_))).unwrap();
            if moves_a_full_directory(&model, op) {
                // Refused unless the reference refuses it for another reason first.
                let want = apply_model(&mut model.clone(), &mut held_m.clone(), op);
                prop_assert_eq!(got, want.and(Err(Errno::EINVAL)), "op {} {:?}", i, op);
                continue;
            }
            if got == Err(Errno::ENOSPC) {
                continue;
            }
            let want = apply_model(&mut model, &mut held_m, op);
            prop_assert_eq!(got, want, "op {} {:?}", i, op);
        }
    }
}

#[test]
fn jffs2_runs_out_of_space_with_enospc_and_gc_reclaims_overwrites() {
    let mut fs = jffs2(32);
    let avail = fs.statfs().available_bytes;
    // jffs2_calc_trigger_levels: 2 + ceil((1 MiB / 50 + 32 × 100) / 32 KiB) = 3 blocks held back.
    assert_eq!(avail, (32 - 3) * 16 * 2048);
    let fd = fs.create("/big").unwrap();
    let page = vec![0xA5u8; 4096];
    let mut written = 0u64;
    let err = loop {
        match fs.write(fd, written, &page) {
            Ok(_) => written += 4096,
            Err(e) => break e,
        }
    };
    assert_eq!(Jffs2::errno(&err), Errno::ENOSPC);
    assert!(written > avail * 8 / 10 && written <= avail, "{written} of {avail}");
    // Full, an overwrite fails too (the new node is written before the old
    // one turns dirty); truncating frees room, then overwrites turn old nodes
    // dirty and GC reclaims them, moving live nodes.
    assert_eq!(Jffs2::errno(&fs.write(fd, 0, &page).unwrap_err()), Errno::ENOSPC);
    fs.ftruncate(fd, written * 3 / 4).unwrap();
    written = written * 3 / 4 / 4096 * 4096;
    for round in 0..6u64 {
        for off in (0..written / 2).step_by(4096) {
            fs.write(fd, off, &[round as u8; 4096]).unwrap();
        }
    }
    let w = fs.fs_writes();
    assert!(fs.stats.gc_runs > 0 && w.cleaning > 0, "{:?} {:?}", fs.stats, w);
    assert_eq!(fs.read(fd, 0, 4096).unwrap(), vec![5u8; 4096]);
    assert_eq!(fs.read(fd, written - 4096, 4096).unwrap(), page);
    assert_eq!(fs.device_counters().nand_erases, fs.nand().stats().erases.total());
}

#[test]
fn iozone_runs_on_jffs2_and_counts_node_bytes() {
    let mut fs = jffs2(64);
    let spec = BenchSpec {
        workload: Workload::Iozone(IozoneSpec {
            file_bytes: 256 << 10,
            request_bytes: 4096,
            update_fraction: 0.25,
            seed: 1,
        }),
        utilisation_pct: 60.0,
    };
    let r = run_workload(&mut fs, &spec).unwrap();
    assert!(!r.enospc, "{r:?}");
    let create = r.phases.iter().find(|p| p.name == "create").unwrap();
    // One data node per 4 KiB page: a 28-byte header and 5 bytes of compression tag and size.
    assert_eq!(create.fs_writes.data, 64 * (4096 + 28 + 5 + 3), "{create:?}");
    assert!(create.device.nand_program_pages >= 64 * 2, "two 2 KiB pages per node at least");
}
