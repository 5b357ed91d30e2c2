//! Core of `flashlab reproduce ubifs-hotdata` (seed 000): the plan (device,
//! configurations, workloads, utilisations), the runs, the comparison with
//! the paper's claims, and the Markdown table. The CLI writes the files.

use super::{run_point, BenchError, DeviceSpec, PointSpec, RunResult, WorkloadKind, WorkloadSpec};
use crate::FsSettings;
use serde::Serialize;

/// The configuration that labels hot data with the oracle.
pub const ORACLE: &str = "oracle";

/// The six configurations: baseline, each optimisation alone, all three,
/// and all three with the oracle's labels.
pub fn configs() -> Vec<(String, FsSettings)> {
    configs_for(&DeviceSpec::scaled_mib(64))
}

/// The six configurations (journal and log sized as UBIFS sizes them for
/// the volume: `journal_max_buds = 0`, `log_lebs = 0`; the multi-hash
/// identifier sized to the journal: `hot_identifier_sized`). Data nodes
/// are content-free (`elide_payload`): the workloads write incompressible
/// data, so every flash counter is what stored payloads give (a test checks
/// this) while memory stays flat on the 8 GiB device. `oracle` has the
/// switches of `optimised`; its point runs with `hot_oracle` set.
pub fn configs_for(_device: &DeviceSpec) -> Vec<(String, FsSettings)> {
    let base = FsSettings { elide_payload: true, hot_identifier_sized: true, ..FsSettings::default() };
    let all = FsSettings { hot_journals: true, delayed_hot_commit_every: 2, lpt_validity_bitmap: true, ..base.clone() };
    vec![
        ("baseline".into(), base.clone()),
        ("hot-journals".into(), FsSettings { hot_journals: true, ..base.clone() }),
        ("delayed-commit".into(), FsSettings { delayed_hot_commit_every: 2, ..base.clone() }),
        ("validity-bitmap".into(), FsSettings { lpt_validity_bitmap: true, ..base }),
        ("optimised".into(), all.clone()),
        (ORACLE.into(), all),
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
    /// Workload seeds: every point runs once per seed (the paper: five
    /// runs, the mean of the middle three).
    pub seeds: Vec<u64>,
    /// Grow the fileset to the utilisation instead of cold pre-fill
    /// (`PointSpec::fileset_fills`; see the docs, "Where GC starts").
    pub fileset_fills: bool,
    /// Run under the page cache (`FsSettings::page_cache`, default true).
    pub page_cache: bool,
    /// Worker threads (runs are independent and deterministic).
    pub workers: usize,
}

impl Plan {
    /// The plan of `--quick` (64 MiB, 5 utilisations) or the full run (128
    /// MiB, the paper's 10 utilisations). Both run five seeds of six
    /// configurations under the page cache; the paper's 8 GiB would take
    /// about 10 hours that way (`Plan::sized(8192, ..)` runs it).
    pub fn new(quick: bool) -> Plan {
        let (mib, utils) = if quick { (64, vec![0, 40, 60, 80, 90]) } else { (128, (0..=9).map(|u| u * 10).collect()) };
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
            seeds: (1..=5).collect(),
            fileset_fills: true,
            workers: 2,
        }
    }

    fn bytes(&self, f: f64) -> u64 {
        (self.device.bytes() as f64 * f) as u64
    }

    /// The workloads of the paper's table 1, fileset scaled to the device,
    /// with the first seed.
    pub fn workload(&self, kind: WorkloadKind) -> WorkloadSpec {
        self.workload_seeded(kind, self.seeds.first().copied().unwrap_or(1))
    }

    /// The same with workload seed `seed`.
    pub fn workload_seeded(&self, kind: WorkloadKind, seed: u64) -> WorkloadSpec {
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
            seed,
        }
    }

    /// Every run of the reproduction: every configuration, seed, workload and utilisation.
    pub fn points(&self) -> Vec<PointSpec> {
        let mut out = Vec::new();
        for (name, fs) in configs_for(&self.device) {
            for seed in &self.seeds {
                let mk = |kind, u| PointSpec {
                    device: self.device,
                    config: name.clone(),
                    fs: FsSettings { page_cache: self.page_cache, ..fs.clone() },
                    workload: self.workload_seeded(kind, *seed),
                    utilisation_pct: u,
                    sample_every_bytes: self.bytes(0.01).max(1 << 20),
                    fileset_fills: self.fileset_fills,
                    hot_oracle: name == ORACLE,
                };
                out.push(mk(WorkloadKind::Dd, 0));
                for u in &self.utilisations {
                    out.push(mk(WorkloadKind::Fileserver, *u));
                    out.push(mk(WorkloadKind::Varmail, *u));
                }
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
    /// How well each configuration's labels separate hot from cold data.
    pub hot: Vec<HotRow>,
}

/// Values of the seeds summarised as the paper does: the mean of the
/// middle three (of five; all of them when fewer than four), and the range.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Spread {
    pub mid3_mean: f64,
    pub min: f64,
    pub max: f64,
    /// Number of values.
    pub n: usize,
}

impl Spread {
    /// The summary of the finite values (None when there is none).
    pub fn of(values: &[f64]) -> Option<Spread> {
        let mut v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
        v.sort_by(f64::total_cmp);
        let n = v.len();
        let mid = match n {
            0 => return None,
            1..=3 => &v[..],
            _ => &v[(n - 3) / 2..(n - 3) / 2 + 3],
        };
        Some(Spread { mid3_mean: mid.iter().sum::<f64>() / mid.len() as f64, min: v[0], max: v[n - 1], n })
    }

    /// `mean [min..max]` with `f` formatting each value.
    pub fn show(&self, f: impl Fn(f64) -> String) -> String {
        if self.n == 1 {
            return f(self.mid3_mean);
        }
        format!("{} [{}..{}]", f(self.mid3_mean), f(self.min), f(self.max))
    }
}

/// One row of the claims table: the paper's figure and, per configuration,
/// the measured change against the baseline over the seeds.
#[derive(Debug, Clone, Serialize)]
pub struct ClaimRow {
    pub claim: String,
    pub paper: String,
    pub workload: String,
    /// (configuration, change in percent of the baseline over the seeds,
    /// the points it sums).
    pub measured: Vec<(String, Option<Spread>, String)>,
}

/// Hot-data labels of one configuration under one workload, all
/// utilisations of a seed summed, over the seeds.
#[derive(Debug, Clone, Serialize)]
pub struct HotRow {
    pub config: String,
    pub workload: String,
    pub hot_write_share: Option<Spread>,
    pub hot_precision: Option<Spread>,
    pub hot_recall: Option<Spread>,
    /// Share of the data writes that died within the window (the oracle's share).
    pub truly_hot_share: Option<Spread>,
    pub window_writes: u64,
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
    let hot = hot_rows(&runs);
    let timing = vec![super::TimingPreset::NANDSIM_SEED000, super::TimingPreset::SLC];
    Ok(Report { plan: plan.clone(), timing, runs, claims, hot })
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

/// Runs of one configuration and workload, by utilisation then seed.
pub fn series<'a>(runs: &'a [RunResult], config: &str, workload: &str) -> Vec<&'a RunResult> {
    let mut v: Vec<&RunResult> = runs.iter().filter(|r| r.config == config && r.workload == workload).collect();
    v.sort_by_key(|r| (r.utilisation_pct, r.seed));
    v
}

/// The utilisations and seeds a workload ran at.
pub fn utilisations(runs: &[RunResult], workload: &str) -> Vec<u32> {
    let u: std::collections::BTreeSet<u32> =
        runs.iter().filter(|r| r.workload == workload).map(|r| r.utilisation_pct).collect();
    u.into_iter().collect()
}

fn seeds(runs: &[RunResult]) -> Vec<u64> {
    let s: std::collections::BTreeSet<u64> = runs.iter().map(|r| r.seed).collect();
    s.into_iter().collect()
}

fn one<'a>(runs: &'a [RunResult], config: &str, wl: &str, u: u32, seed: u64) -> Option<&'a RunResult> {
    runs.iter().find(|r| r.config == config && r.workload == wl && r.utilisation_pct == u && r.seed == seed)
}

/// A metric at one point over the seeds.
pub fn at_point(runs: &[RunResult], config: &str, wl: &str, u: u32, m: impl Fn(&RunResult) -> f64) -> Option<Spread> {
    let v: Vec<f64> =
        runs.iter().filter(|r| r.config == config && r.workload == wl && r.utilisation_pct == u).map(&m).collect();
    Spread::of(&v)
}

/// A metric of `config` divided by the baseline's of the same seed, at one point, over the seeds.
pub fn ratio_at_point(
    runs: &[RunResult],
    config: &str,
    wl: &str,
    u: u32,
    m: impl Fn(&RunResult) -> f64,
) -> Option<Spread> {
    let v: Vec<f64> = seeds(runs)
        .into_iter()
        .filter_map(|s| Some(m(one(runs, config, wl, u, s)?) / m(one(runs, "baseline", wl, u, s)?)))
        .collect();
    Spread::of(&v)
}

fn pct(new: f64, base: f64) -> Option<f64> {
    (base > 0.0).then(|| (new - base) / base * 100.0)
}

/// For one seed: the change of a metric summed over the utilisations where
/// the baseline ran GC (all of them when `gc_only` is false), and those
/// utilisations.
fn change_seed(
    runs: &[RunResult],
    cfg: &str,
    wl: &str,
    seed: u64,
    gc_only: bool,
    m: fn(&RunResult) -> f64,
) -> Option<(f64, Vec<u32>)> {
    let (mut sb, mut so, mut used) = (0.0, 0.0, Vec::new());
    for u in utilisations(runs, wl) {
        let (Some(b), Some(o)) = (one(runs, "baseline", wl, u, seed), one(runs, cfg, wl, u, seed)) else { continue };
        if gc_only && b.gc_runs == 0 {
            continue;
        }
        sb += m(b);
        so += m(o);
        used.push(u);
    }
    Some((pct(so, sb)?, used))
}

/// The change over the seeds, and which utilisations it sums (with the
/// number of seeds where the baseline GCs there, when not all).
fn change(
    runs: &[RunResult],
    cfg: &str,
    wl: &str,
    gc_only: bool,
    m: fn(&RunResult) -> f64,
) -> (Option<Spread>, String) {
    let seeds = seeds(runs);
    let per: Vec<(f64, Vec<u32>)> = seeds.iter().filter_map(|s| change_seed(runs, cfg, wl, *s, gc_only, m)).collect();
    let mut count: std::collections::BTreeMap<u32, usize> = Default::default();
    for u in per.iter().flat_map(|p| p.1.iter()) {
        *count.entry(*u).or_default() += 1;
    }
    if count.is_empty() {
        return (None, "no point with GC".into());
    }
    let at: Vec<String> = count
        .iter()
        .map(|(u, n)| if *n == seeds.len() { format!("{u}") } else { format!("{u} ({n}/{})", seeds.len()) })
        .collect();
    let v: Vec<f64> = per.iter().map(|p| p.0).collect();
    (Spread::of(&v), format!("at {} %", at.join("/")))
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
        row(runs, "LEB reclaims: GC + freeable (where baseline GCs)", "(GC runs -7..-13 %)", "varmail", true, rec),
        row(runs, "IOPS, nandsim timing (where baseline GCs)", "+5..+18 % (fig. 15)", "fileserver", true, iops_n),
        row(runs, "IOPS, nandsim timing (where baseline GCs)", "+5..+18 % (fig. 14)", "varmail", true, iops_n),
        row(runs, "IOPS, SLC timing (where baseline GCs)", "(not in paper)", "fileserver", true, iops_s),
        row(runs, "IOPS, SLC timing (where baseline GCs)", "(not in paper)", "varmail", true, iops_s),
    ]
}

/// Hot-data labels against the truth, per configuration and workload.
pub fn hot_rows(runs: &[RunResult]) -> Vec<HotRow> {
    use crate::hot_truth::HotTruthCounts;
    let mut out = Vec::new();
    for (c, _) in configs().into_iter().skip(1) {
        for wl in ["dd", "fileserver", "varmail"] {
            let sums: Vec<HotTruthCounts> = seeds(runs)
                .into_iter()
                .map(|s| {
                    runs.iter().filter(|r| r.config == c && r.workload == wl && r.seed == s).fold(
                        HotTruthCounts::default(),
                        |a, r| {
                            let t = &r.hot_truth;
                            HotTruthCounts {
                                data_writes: a.data_writes + t.data_writes,
                                hot_labelled: a.hot_labelled + t.hot_labelled,
                                decided: a.decided + t.decided,
                                truly_hot: a.truly_hot + t.truly_hot,
                                hot_decided: a.hot_decided + t.hot_decided,
                                hot_correct: a.hot_correct + t.hot_correct,
                                window_writes: t.window_writes,
                            }
                        },
                    )
                })
                .collect();
            let over = |f: fn(&HotTruthCounts) -> f64| Spread::of(&sums.iter().map(f).collect::<Vec<_>>());
            out.push(HotRow {
                config: c.clone(),
                workload: wl.into(),
                hot_write_share: over(HotTruthCounts::hot_write_share),
                hot_precision: over(HotTruthCounts::hot_precision),
                hot_recall: over(HotTruthCounts::hot_recall),
                truly_hot_share: over(HotTruthCounts::truly_hot_share),
                window_writes: sums.first().map_or(0, |s| s.window_writes),
            });
        }
    }
    out
}

fn show_pct(v: &Option<Spread>) -> String {
    v.map_or("–".into(), |s| s.show(|x| format!("{:.1} %", x * 100.0)))
}

/// The identifier table in Markdown.
pub fn hot_markdown(rows: &[HotRow]) -> String {
    let mut s = String::from(
        "| config | workload | hot_write_share | hot_precision | hot recall | truly hot (window) | window (data writes) |\n\
         |---|---|---|---|---|---|---|\n",
    );
    for r in rows {
        s += &format!(
            "| {} | {} | {} | {} | {} | {} | {} |\n",
            r.config,
            r.workload,
            show_pct(&r.hot_write_share),
            show_pct(&r.hot_precision),
            show_pct(&r.hot_recall),
            show_pct(&r.truly_hot_share),
            r.window_writes
        );
    }
    s
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
                Some(v) => s += &format!(" {} ({d}) |", v.show(|x| format!("{x:+.1} %"))),
                None => s += &format!(" n/a ({d}) |"),
            }
        }
        s.push('\n');
    }
    s
}

/// Per-utilisation table of one workload: GC runs of every configuration
/// and the IOPS change against the baseline, over the seeds.
pub fn points_markdown(runs: &[RunResult], wl: &str) -> String {
    let cfgs: Vec<String> = configs().into_iter().map(|c| c.0).collect();
    let mut s = String::from("| util % |");
    for c in &cfgs {
        s += &format!(" GC runs {c} |");
    }
    for c in cfgs.iter().skip(1) {
        s += &format!(" IOPS {c} vs baseline |");
    }
    s += &format!("\n|---|{}\n", "---|".repeat(2 * cfgs.len() - 1));
    for u in utilisations(runs, wl) {
        s += &format!("| {u} |");
        for c in &cfgs {
            let v = at_point(runs, c, wl, u, |r| r.gc_runs as f64);
            s += &format!(" {} |", v.map_or("–".into(), |v| v.show(|x| format!("{x:.0}"))));
        }
        for c in cfgs.iter().skip(1) {
            let v = ratio_at_point(runs, c, wl, u, |r| r.iops_nandsim);
            s += &format!(" {} |", v.map_or("–".into(), |v| v.show(|x| format!("{:+.1} %", (x - 1.0) * 100.0))));
        }
        s.push('\n');
    }
    s
}

/// Per-run raw figures in Markdown.
pub fn runs_markdown(runs: &[RunResult]) -> String {
    let mut s = String::from(
        "| workload | config | seed | util % | files | flowops | MiB written | pages programmed | GC runs | freeable reclaims | GC pages read | erases | commits | index nodes | index updates | hot share | hot precision | IOPS nandsim | IOPS SLC |\n\
         |---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n",
    );
    for r in runs {
        s += &format!(
            "| {} | {} | {} | {} | {} | {} | {:.1} | {} | {} | {} | {} | {} | {} | {} | {} | {:.3} | {} | {:.0} | {:.0} |\n",
            r.workload,
            r.config,
            r.seed,
            r.utilisation_pct,
            r.fileset_files,
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
            r.hot_write_share,
            r.hot_precision.map_or("–".into(), |p| format!("{p:.3}")),
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
        .map(|t| {
            format!(
                "{}: read {} µs, program {} µs, erase {} µs",
                t.name,
                t.read_ns / 1e3,
                t.program_ns / 1e3,
                t.erase_ns / 1e3
            )
        })
        .collect();
    let fill = if rep.plan.fileset_fills {
        "the workload's fileset grown to the utilisation (cold files top up)"
    } else {
        "cold 1 MiB files, then the workload's fileset"
    };
    format!(
        "# Seed 000 (UBIFS hot-data optimisations) reproduced on flashfs\n\n\
         Device: {}.\n\nTiming (device time = pages read x tR + pages programmed x tPROG + erases x tBERS; \
         IOPS = workload flow operations / device time): {}.\n\nUtilisation {:?} % reached by {fill}. \
         Seeds {:?}: every value is the mean of the middle three of the seeds [lowest..highest].\n\n\
         Changes are against the baseline of the same seed, summed over the points named.\n\n\
         ## Claims\n\n{}\n## Hot-data labels\n\n{}\n## fileserver by utilisation\n\n{}\n\
         ## varmail by utilisation\n\n{}\n## Runs\n\n{}",
        rep.plan.note,
        t.join("; "),
        rep.plan.utilisations,
        rep.plan.seeds,
        claims_markdown(&rep.claims),
        hot_markdown(&rep.hot),
        points_markdown(&rep.runs, "fileserver"),
        points_markdown(&rep.runs, "varmail"),
        runs_markdown(&rep.runs)
    )
}
