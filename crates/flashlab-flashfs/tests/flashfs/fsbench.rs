//! The seed-000 reproduction core at a reduced size: structure, not the
//! paper's numbers.

use flashlab_flashfs::fsbench::repro::*;
use flashlab_flashfs::fsbench::*;

#[test]
fn prefill_reaches_utilisation() {
    let plan = Plan::sized(16, vec![0, 80], true);
    let points = plan.points();
    let p = points.iter().find(|p| p.workload.kind == WorkloadKind::Varmail && p.utilisation_pct == 80).unwrap();
    let mut p = p.clone();
    p.workload.write_target_bytes /= 4;
    let r = run_point(&p).unwrap();
    assert!(r.prefill_bytes as f64 > 0.6 * r.capacity_bytes as f64, "{r:?}");
    assert!(r.ops.flowops > 0 && r.iops_nandsim > r.iops_slc);
}

#[test]
fn reproduction_core_has_every_figure_and_claim() {
    let mut plan = Plan::sized(16, vec![0, 85], true);
    plan.fileserver_fraction = 0.4;
    plan.varmail_fraction = 0.2;
    plan.dd_fraction = 0.2;
    let rep = run(&plan).unwrap();
    assert_eq!(rep.runs.len(), 5 * (1 + 2 * 2));
    for (c, _) in configs() {
        assert_eq!(series(&rep.runs, &c, "dd").len(), 1);
        assert_eq!(series(&rep.runs, &c, "fileserver").len(), 2);
        assert_eq!(series(&rep.runs, &c, "varmail").len(), 2);
    }
    assert!(rep.runs.iter().all(|r| r.pages_programmed > 0 && !r.samples.is_empty()));
    assert_eq!(rep.claims.len(), 11);
    assert!(rep.claims.iter().all(|c| c.measured.len() == 4));
    let md = markdown(&rep);
    assert!(md.contains("scaled down") && md.contains("nandsim-seed000") && md.contains("| GC runs"));
    // Deterministic: the same plan gives the same numbers.
    let again = run(&plan).unwrap();
    assert_eq!(again.runs, rep.runs);
}

#[test]
fn workloads_run_alone() {
    for kind in [WorkloadKind::Dd, WorkloadKind::Untar, WorkloadKind::Fileserver, WorkloadKind::Varmail] {
        let plan = Plan::sized(16, vec![0], true);
        let mut w = plan.workload(kind);
        w.write_target_bytes = 2 << 20;
        let p = PointSpec {
            device: plan.device,
            config: "baseline".into(),
            fs: Default::default(),
            workload: w,
            utilisation_pct: 30,
            sample_every_bytes: 1 << 19,
        };
        let r = run_point(&p).unwrap();
        assert!(r.ops.bytes_written >= 2 << 20 || r.ops.enospc > 0, "{kind:?} {r:?}");
    }
}
