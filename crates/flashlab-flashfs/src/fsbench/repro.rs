//! Core of `flashlab reproduce ubifs-hotdata` (seed 000): the plan (device,
//! configurations, workloads, utilisations), the runs, the comparison with
//! the paper's claims, and the Markdown table. The CLI writes the files.

use super::{run_point, BenchError, DeviceSpec, PointSpec, RunResult, WorkloadKind, WorkloadSpec};
use crate::FsSettings;
use serde::Serialize;

/// The five configurations: baseline, each optimisation alone, all three.
pub fn configs() -> Vec<(String, FsSettings)> {
    configs_for(&DeviceSpec::scaled_mib(64))
}

/// The five configurations (journal and log sized as UBIFS sizes them for
/// the volume: `journal_max_buds = 0`, `log_lebs = 0`). Data nodes
/// are content-free (`elide_payload`): the workloads write incompressible
/// data, so every flash counter is what stored payloads give (a test checks
/// this) while memory stays flat on the 8 GiB device.
pub fn configs_for(_device: &DeviceSpec) -> Vec<(String, FsSettings)> {
    let base = FsSettings { elide_payload: true, ..FsSettings::default() };
    vec![
        ("baseline".into(), base.clone()),
        ("hot-journals".into(), FsSettings { hot_journals: true, ..base.clone() }),
        ("delayed-commit".into(), FsSettings { delayed_hot_commit_every: 2, ..base.clone() }),
        ("validity-bitmap".into(), FsSettings { lpt_validity_bitmap: true, ..base.clone() }),
        (
            "optimised".into(),
            FsSettings { hot_journals: true, delayed_hot_commit_every: 2, lpt_validity_bitmap: true, ..base },
        ),
    ]
}

/// What the reproduction runs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Plan {
    pub device: DeviceSpec,
    pub note: String,
    pub utilisations: Vec<u32>,
    /// dd writes this fraction of the capacity.
    pub dd_fraction: f64,
    /// fileserver / varmail write this fraction of the capacity per run.
    pub fileserver_fraction: f64,
    pub varmail_fraction: f64,
    pub seed: u64,
    /// Run under the page cache (`FsSettings::page_cache`, default true).
    pub page_cache: bool,
    /// Worker threads (runs are independent and deterministic).
    pub workers: usize,
}

impl Plan {
    /// The plan of `--quick` (64 MiB) or the full run (the seed's 8 GiB).
    pub fn new(quick: bool) -> Plan {
        let (mib, utils) =
            if quick { (64, vec![0, 40, 60, 80, 90]) } else { (8192, (0..=9).map(|u| u * 10).collect()) };
        Plan::sized(mib, utils, quick)
    }

    /// A plan on a `mib` MiB device with the seed's block and page size.
    pub fn sized(mib: u32, utilisations: Vec<u32>, quick: bool) -> Plan {
        let device = DeviceSpec::scaled_mib(mib);
        let note = if device == DeviceSpec::SEED000 {
            format!(
                "the paper's device: 8 GiB ({} erase blocks of 128 KiB, 64 pages of 2 KiB), the paper's filesets",
                device.blocks
            )
        } else {
            format!(
                "{}device scaled down from the paper's 8 GiB to {mib} MiB ({} erase blocks of 128 KiB, 64 pages of 2 KiB); \
                 fileset sizes scaled by the same factor ({:.4})",
                if quick { "--quick: " } else { "" },
                device.blocks,
                device.scale()
            )
        };

        Plan {
            page_cache: true,
            device,
            note,
            utilisations,
            dd_fraction: 0.5,
            fileserver_fraction: 0.6,
            varmail_fraction: 0.3,
            seed: 42,
            workers: 2,
        }
    }

    fn bytes(&self, f: f64) -> u64 {
        (self.device.bytes() as f64 * f) as u64
    }

    /// The workloads of the paper's table 1, fileset scaled to the device.
    pub fn workload(&self, kind: WorkloadKind) -> WorkloadSpec {
        let s = self.device.scale();
        let scaled = |n: f64, threads: u32| ((n * s).round() as u32).max(2 * threads);
        let (files, file_bytes, threads, f) = match kind {
            WorkloadKind::Dd => (1, 0, 1, self.dd_fraction),
            WorkloadKind::Fileserver => (scaled(10_000.0, 50), 128 * 1024, 50, self.fileserver_fraction),
            WorkloadKind::Varmail => (scaled(1_000.0, 16), 16 * 1024, 16, self.varmail_fraction),
            WorkloadKind::Untar => (1, 0, 1, 0.1),
        };
        WorkloadSpec {
            kind,
            files,
            file_bytes,
            append_bytes: 16 * 1024,
            threads,
            write_target_bytes: self.bytes(f),
            seed: self.seed,
        }
    }

    /// Every run of the reproduction.
    pub fn points(&self) -> Vec<PointSpec> {
        let mut out = Vec::new();
        for (name, fs) in configs_for(&self.device) {
            let mk = |kind, u| PointSpec {
                device: self.device,
                config: name.clone(),
                fs: FsSettings { page_cache: self.page_cache, ..fs.clone() },
                workload: self.workload(kind),
                utilisation_pct: u,
                sample_every_bytes: self.bytes(0.01).max(1 << 20),
            };
            out.push(mk(WorkloadKind::Dd, 0));
            for u in &self.utilisations {
                out.push(mk(WorkloadKind::Fileserver, *u));
                out.push(mk(WorkloadKind::Varmail, *u));
            }
        }
        out
    }
}

/// Everything measured.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub plan: Plan,
    pub timing: Vec<super::TimingPreset>,
    pub runs: Vec<RunResult>,
    pub claims: Vec<ClaimRow>,
}

/// One row of the claims table: the paper's figure and, per configuration,
/// the measured change against the baseline.
#[derive(Debug, Clone, Serialize)]
pub struct ClaimRow {
    pub claim: String,
    pub paper: String,
    pub workload: String,
    /// (configuration, measured change in percent of the baseline, or None).
    pub measured: Vec<(String, Option<f64>, String)>,
}

/// Runs every point (in `plan.workers` threads) and builds the report.
pub fn run(plan: &Plan) -> Result<Report, BenchError> {
    run_with_progress(plan, |_| {})
}

/// As [`run`], calling `done(run)` as each run finishes (from its worker).
pub fn run_with_progress(plan: &Plan, done: impl Fn(&RunResult) + Sync) -> Result<Report, BenchError> {
    let points = plan.points();
    let runs = run_parallel(&points, plan.workers.max(1), &done)?;
    let claims = claims(&runs);
    let timing = vec![super::TimingPreset::NANDSIM_SEED000, super::TimingPreset::SLC];
    Ok(Report { plan: plan.clone(), timing, runs, claims })
}

fn run_parallel(
    points: &[PointSpec],
    workers: usize,
    done: &(impl Fn(&RunResult) + Sync),
) -> Result<Vec<RunResult>, BenchError> {
    let next = std::sync::atomic::AtomicUsize::new(0);
    let slots: Vec<std::sync::Mutex<Option<Result<RunResult, BenchError>>>> =
        points.iter().map(|_| std::sync::Mutex::new(None)).collect();
    std::thread::scope(|sc| {
        for _ in 0..workers {
            sc.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some(p) = points.get(i) else { break };
                let r = run_point(p);
                if let Ok(r) = &r {
                    done(r);
                }
                if let Ok(mut s) = slots[i].lock() {
                    *s = Some(r);
                }
            });
        }
    });
    let mut out = Vec::with_capacity(points.len());
    for s in slots {
        let r = s.into_inner().ok().flatten().ok_or_else(|| BenchError::Device("a run did not finish".into()))?;
        out.push(r?);
    }
    Ok(out)
}

/// Runs of one configuration and workload, by utilisation.
pub fn series<'a>(runs: &'a [RunResult], config: &str, workload: &str) -> Vec<&'a RunResult> {
    let mut v: Vec<&RunResult> = runs.iter().filter(|r| r.config == config && r.workload == workload).collect();
    v.sort_by_key(|r| r.utilisation_pct);
    v
}

fn pct(new: f64, base: f64) -> Option<f64> {
    (base > 0.0).then(|| (new - base) / base * 100.0)
}

/// Change of a metric summed over the utilisations where the baseline ran
/// GC (all of them when `gc_only` is false), plus the per-point range.
fn change(runs: &[RunResult], cfg: &str, wl: &str, gc_only: bool, m: fn(&RunResult) -> f64) -> (Option<f64>, String) {
    let base = series(runs, "baseline", wl);
    let other = series(runs, cfg, wl);
    let pairs: Vec<(&RunResult, &RunResult)> =
        base.iter().zip(other.iter()).filter(|(b, _)| !gc_only || b.gc_runs > 0).map(|(b, o)| (*b, *o)).collect();
    if pairs.is_empty() {
        return (None, "no point with GC".into());
    }
    let (sb, so) = pairs.iter().fold((0.0, 0.0), |(a, b), (x, y)| (a + m(x), b + m(y)));
    let each: Vec<f64> = pairs.iter().filter_map(|(b, o)| pct(m(o), m(b))).collect();
    let lo = each.iter().cloned().fold(f64::INFINITY, f64::min);
    let hi = each.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
    let utils: Vec<String> = pairs.iter().map(|(b, _)| b.utilisation_pct.to_string()).collect();
    let detail = if each.is_empty() {
        String::new()
    } else {
        format!("per point {lo:+.1}..{hi:+.1} % at {} %", utils.join("/"))
    };
    (pct(so, sb), detail)
}

fn row(runs: &[RunResult], claim: &str, paper: &str, wl: &str, gc_only: bool, m: fn(&RunResult) -> f64) -> ClaimRow {
    let measured = configs()
        .into_iter()
        .skip(1)
        .map(|(c, _)| {
            let (v, d) = change(runs, &c, wl, gc_only, m);
            (c, v, d)
        })
        .collect();
    ClaimRow { claim: claim.into(), paper: paper.into(), workload: wl.into(), measured }
}

/// The claims of seed 000 beside the measured changes.
pub fn claims(runs: &[RunResult]) -> Vec<ClaimRow> {
    let pages = |r: &RunResult| r.pages_programmed as f64;
    let gc = |r: &RunResult| r.gc_runs as f64;
    let rec = |r: &RunResult| r.reclaims as f64;
    let iops_n = |r: &RunResult| r.iops_nandsim;
    let iops_s = |r: &RunResult| r.iops_slc;
    vec![
        row(runs, "physical page writes", "-5..-10 % (fig. 11)", "fileserver", false, pages),
        row(runs, "physical page writes", "not claimed", "varmail", false, pages),
        row(runs, "dd gives nothing", "slightly more writes (fig. 10)", "dd", false, pages),
        row(runs, "GC runs (where baseline GCs)", "-7..-13 % (fig. 13)", "fileserver", true, gc),
        row(runs, "GC runs (where baseline GCs)", "-7..-13 % (fig. 12)", "varmail", true, gc),
        row(runs, "LEB reclaims: GC + freeable (where baseline GCs)", "(GC runs -7..-13 %)", "fileserver", true, rec),
        row(runs, "LEB reclaims: GC + freeable (all points)", "(GC runs -7..-13 %)", "varmail", false, rec),
        row(runs, "IOPS, nandsim timing (where baseline GCs)", "+5..+18 % (fig. 15)", "fileserver", true, iops_n),
        row(runs, "IOPS, nandsim timing (where baseline GCs)", "+5..+18 % (fig. 14)", "varmail", true, iops_n),
        row(runs, "IOPS, SLC timing (where baseline GCs)", "(not in paper)", "fileserver", true, iops_s),
        row(runs, "IOPS, SLC timing (where baseline GCs)", "(not in paper)", "varmail", true, iops_s),
    ]
}

/// The claims table in Markdown.
pub fn claims_markdown(rows: &[ClaimRow]) -> String {
    let Some(first) = rows.first() else { return String::new() };
    let mut s = String::from("| claim | paper | workload |");
    for (c, _, _) in &first.measured {
        s += &format!(" {c} |");
    }
    s += "\n|---|---|---|";
    s += &"---|".repeat(first.measured.len());
    s.push('\n');
    for r in rows {
        s += &format!("| {} | {} | {} |", r.claim, r.paper, r.workload);
        for (_, v, d) in &r.measured {
            match v {
                Some(v) => s += &format!(" {v:+.1} % ({d}) |"),
                None => s += &format!(" n/a ({d}) |"),
            }
        }
        s.push('\n');
    }
    s
}

/// Per-run raw figures in Markdown.
pub fn runs_markdown(runs: &[RunResult]) -> String {
    let mut s = String::from(
        "| workload | config | util % | flowops | MiB written | pages programmed | GC runs | freeable reclaims | GC pages read | erases | commits | index nodes | index updates | IOPS nandsim | IOPS SLC |\n\
         |---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n",
    );
    for r in runs {
        s += &format!(
            "| {} | {} | {} | {} | {:.1} | {} | {} | {} | {} | {} | {} | {} | {} | {:.0} | {:.0} |\n",
            r.workload,
            r.config,
            r.utilisation_pct,
            r.ops.flowops,
            r.ops.bytes_written as f64 / 1048576.0,
            r.pages_programmed,
            r.gc_runs,
            r.freeable_reclaims,
            r.gc_pages_read,
            r.erases,
            r.commits,
            r.index_nodes_written,
            r.index_updates,
            r.iops_nandsim,
            r.iops_slc
        );
    }
    s
}

/// The whole `results.md`.
pub fn markdown(rep: &Report) -> String {
    let t: Vec<String> = rep
        .timing
        .iter()
        .map(|t| format!("{}: read {} ns, program {} ns, erase {} ns", t.name, t.read_ns, t.program_ns, t.erase_ns))
        .collect();
    format!(
        "# Seed 000 (UBIFS hot-data optimisations) reproduced on flashfs\n\n\
         Device: {}.\n\nTiming (device time = pages read x tR + pages programmed x tPROG + erases x tBERS; \
         IOPS = workload flow operations / device time): {}.\n\n\
         Changes are against the baseline (all switches off), summed over the points named \
         (utilisation {:?} %).\n\n## Claims\n\n{}\n## Runs\n\n{}",
        rep.plan.note,
        t.join("; "),
        rep.plan.utilisations,
        claims_markdown(&rep.claims),
        runs_markdown(&rep.runs)
    )
}
