//! Runs the power-cut campaigns quoted in docs/flashfs.md:
//! `cargo run --release -p flashlab-flashfs --example powercut`
//! (`-- N` runs only the N-th; `-- defaults [OPS [PREFILL [DEAD]]]` runs the
//! default campaign of `flashlab fs powercut`, optionally with other
//! `workload_ops` / `prefill_bytes` / `prefill_dead_bytes`).

use flashlab_flashfs::powercut::{run_campaign, CampaignSettings};
use flashlab_mtd::NandSettings;
use flashlab_ubi::UbiSettings;

fn main() {
    let base = CampaignSettings::default();
    let mut faults = NandSettings::small(32, 16, 2048);
    faults.faults.bitflip_per_read = 0.005;
    faults.faults.program_fail_per_op = 0.001;
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().is_some_and(|a| a == "defaults") {
        let mut s = base.clone();
        if let Some(n) = args.get(1).and_then(|a| a.parse().ok()) {
            s.workload_ops = n;
        }
        if let Some(n) = args.get(2).and_then(|a| a.parse().ok()) {
            s.prefill_bytes = n;
        }
        if let Some(n) = args.get(3).and_then(|a| a.parse().ok()) {
            s.prefill_dead_bytes = n;
        }
        report("defaults", &s);
        return;
    }
    let only = args.first().and_then(|a| a.parse::<usize>().ok());
    let runs = [
        ("64x16x2KiB, every op", CampaignSettings { workload_ops: 1500, prefill_bytes: 0, ..base.clone() }),
        (
            "64x16x2KiB, 1 MB prefilled + 120 KB dead (GC), every op",
            CampaignSettings {
                workload_ops: 800,
                prefill_bytes: 1_000_000,
                max_file_bytes: 16_000,
                workload_seed: 3,
                ..base.clone()
            },
        ),
        (
            "32x16x2KiB, 80 KB prefilled, fastmap + WL threshold 4 + bit-flips + program failures, every op",
            CampaignSettings {
                flash: faults,
                ubi: UbiSettings {
                    fastmap: true,
                    wl_threshold_erases: 4,
                    bad_reserve_per_1024: 100,
                    ..UbiSettings::default()
                },
                workload_ops: 800,
                prefill_bytes: 80000,
                prefill_dead_bytes: 0,
                max_file_bytes: 16_000,
                workload_seed: 4,
                ..base.clone()
            },
        ),
    ];
    for (i, (name, s)) in runs.into_iter().enumerate() {
        if only.is_some_and(|o| o != i) {
            continue;
        }
        report(name, &s);
    }
}

fn report(name: &str, s: &CampaignSettings) {
    {
        let t = std::time::Instant::now();
        let mut r = run_campaign(s);
        let st = r.workload_stats.take().unwrap_or_default();
        println!(
            "{name}: cut_points {} recoveries {} lost_fsynced_bytes {} invariant_violations {} panics {} | uncut run: {} NAND ops, {} fsyncs, {} ENOSPC, {} GC runs, {} commits ({} background), {} erases, {} WL moves, {} scrubs | mean recovery {:.0} NAND ops | {:.1}s",
            r.cut_points, r.recoveries, r.lost_fsynced_bytes, r.invariant_violations, r.panics,
            r.workload_nand_ops, r.workload_fsyncs, r.workload_enospc, st.gc_runs, st.commits, st.fs.bg_commits, st.erases, st.wl_moves, st.scrubs,
            r.mean_recovery_nand_ops, t.elapsed().as_secs_f64()
        );
        for f in &r.failures {
            println!("  {f}");
        }
    }
}
