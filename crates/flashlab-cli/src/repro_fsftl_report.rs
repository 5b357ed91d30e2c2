//! `reproduce f2fs-ext4-ftl`: the claims of seed 004 beside the measured
//! figures, the Markdown, the JSON and the plots (the runs: `repro_fsftl.rs`).

use crate::output::write_json;
use crate::plot;
use crate::repro_check::{measured, tally, Check};
use crate::repro_fsftl::{Plan, Run};
use anyhow::Context;
use serde::Serialize;
use std::fmt::Write as _;
use std::path::Path;

const PHASES: [&str; 6] = flashlab_vfs::workload::IOZONE_PHASES;

/// One claim of the paper and what was measured.
#[derive(Debug, Clone, Serialize)]
pub struct Claim {
    pub id: &'static str,
    pub paper: &'static str,
    pub measured: String,
    pub verdict: String,
}

/// Everything the reproduction writes to results.json.
#[derive(Debug, Serialize)]
pub struct Report<'a> {
    pub plan: &'a Plan,
    pub claims: Vec<Claim>,
    pub runs: &'a [Run],
}

fn find<'a>(runs: &'a [Run], fs: &str, ftl: &str, u: f64) -> Option<&'a Run> {
    runs.iter().find(|r| r.fs == fs && r.ftl == ftl && r.utilisation == u)
}

/// Mean over the utilisations `us` of a per-run figure (None if any is missing).
fn mean(runs: &[Run], fs: &str, ftl: &str, us: &[f64], f: impl Fn(&Run) -> Option<f64>) -> Option<f64> {
    let v: Option<Vec<f64>> = us.iter().map(|u| find(runs, fs, ftl, *u).and_then(&f)).collect();
    let v = v?;
    (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
}

fn verdict(checks: &[Check], missing: &[&str]) -> String {
    if checks.is_empty() {
        return format!("not run ({} missing)", missing.join(", "));
    }
    tally(checks)
}

/// Throughput of `phase`, mean over every utilisation.
fn tp(runs: &[Run], us: &[f64], fs: &str, ftl: &str, phase: &str) -> Option<f64> {
    mean(runs, fs, ftl, us, |r| r.throughput(phase))
}

fn pct(a: f64, b: f64) -> f64 {
    (a - b) / b.abs().max(1e-12) * 100.0
}

struct Ctx<'a> {
    plan: &'a Plan,
    us: Vec<f64>,
}

impl Ctx<'_> {
    fn has(&self, fs: &str) -> bool {
        self.plan.file_systems.contains(&fs)
    }

    fn missing(&self, need: &[&'static str]) -> Vec<&'static str> {
        need.iter().copied().filter(|f| !self.has(f)).collect()
    }

    /// `a` against `b` for each FTL (or FS) in `over`: `better` says which way holds.
    fn compare(&self, label: &str, pairs: Vec<(String, Option<f64>, Option<f64>)>, a_wins: bool) -> Vec<Check> {
        pairs
            .into_iter()
            .filter_map(|(what, a, b)| {
                let (a, b) = (a?, b?);
                let held = if a_wins { a > b } else { a < b };
                let head =
                    if what.is_empty() { label.trim_end_matches(',').to_string() } else { format!("{label} {what}") };
                Some(Check { text: format!("{head}: {:+.0} %", pct(a, b)), held })
            })
            .collect()
    }

    fn ftl_names(&self) -> Vec<&'static str> {
        self.plan.ftls.iter().map(|f| f.name).collect()
    }
}

/// The random-write phase's merges under BAST and BAST-padding for `fs`,
/// summed over the utilisations `us`: switch / partial / full, padding pages.
fn merges_line(runs: &[Run], us: &[f64], fs: &str) -> String {
    let mut parts = Vec::new();
    for ftl in ["bast", "bast-padding"] {
        let mut d = flashlab_vfs::workload::DeviceCounters::default();
        for u in us {
            if let Some(p) = find(runs, fs, ftl, *u).and_then(|r| r.phase("random-write")) {
                d.add(&p.device);
            }
        }
        parts.push(format!(
            "{ftl} merges switch/partial/full {}/{}/{}, padding pages {}",
            d.merges_switch, d.merges_partial, d.merges_full, d.padding_pages
        ));
    }
    format!("{fs} random-write phase, summed over the utilisations: {}", parts.join("; "))
}

/// The claims of seed 004 (§5), each measured from the runs.
pub fn claims(plan: &Plan, runs: &[Run]) -> Vec<Claim> {
    let c = Ctx { plan, us: plan.utilisations.clone() };
    let both = ["f2fs", "ext4"];
    let mut out = Vec::new();
    let mut push = |id, paper, need: &[&'static str], checks: Vec<Check>| {
        out.push(Claim { id, paper, measured: measured(&checks), verdict: verdict(&checks, &c.missing(need)) });
    };

    // 1. Reads hardly differ between the file systems (within 15 %).
    let mut checks = Vec::new();
    if c.missing(&both).is_empty() {
        for ftl in c.ftl_names() {
            for ph in ["seq-read", "random-read"] {
                if let (Some(a), Some(b)) = (tp(runs, &c.us, "f2fs", ftl, ph), tp(runs, &c.us, "ext4", ftl, ph)) {
                    let d = pct(a, b);
                    checks.push(Check { text: format!("{ph} {ftl}: f2fs {d:+.0} % vs ext4"), held: d.abs() <= 15.0 });
                }
            }
        }
    }
    push("reads", "read performance hardly differs between the file systems (§5.1, Fig. 2, 3)", &both, checks);

    // 2. Page mapping reads sequentially slower than BAST (8 KiB against 32 KiB per access).
    let pairs = plan_fs(&c)
        .map(|fs| (fs.to_string(), tp(runs, &c.us, fs, "page", "seq-read"), tp(runs, &c.us, fs, "bast", "seq-read")))
        .collect();
    let checks = c.compare("seq-read page vs bast,", pairs, false);
    push(
        "seq-read-page",
        "page mapping's sequential read is slower (one 8 KiB page per flash access) (§5.1, Fig. 2)",
        &both,
        checks,
    );

    // 3. Page mapping slowest on writes, with more erases.
    let mut checks = Vec::new();
    for fs in plan_fs(&c) {
        for ph in ["random-write", "seq-write"] {
            let page = tp(runs, &c.us, fs, "page", ph);
            for other in ["bast", "bast-padding"] {
                checks.extend(c.compare(
                    &format!("{fs} {ph} page vs {other},"),
                    vec![(String::new(), page, tp(runs, &c.us, fs, other, ph))],
                    false,
                ));
            }
        }
        let unit_erases = |ftl: &str, div: f64| mean(runs, fs, ftl, &c.us, |r| r.erases().map(|e| e as f64 / div));
        checks.extend(c.compare(
            &format!("{fs} erase operations page vs bast (4-block units),"),
            vec![(String::new(), unit_erases("page", 1.0), unit_erases("bast", 4.0))],
            true,
        ));
    }
    push(
        "writes-page",
        "page mapping is the slowest on writes: it erases more often (one block per erase against BAST's four) (§5.2)",
        &both,
        checks,
    );

    // 4. BAST-padding beats BAST under F2FS.
    let mut checks = Vec::new();
    if c.has("f2fs") {
        for ph in ["random-write", "seq-write"] {
            let p =
                vec![(String::new(), tp(runs, &c.us, "f2fs", "bast-padding", ph), tp(runs, &c.us, "f2fs", "bast", ph))];
            checks.extend(c.compare(&format!("f2fs {ph} padding vs bast"), p, true));
        }
    }
    push(
        "padding-f2fs",
        "BAST-padding beats BAST under F2FS (in-place log blocks, cheap switch merges) (§5.2, Fig. 4–6)",
        &["f2fs"],
        checks,
    );

    // 5. Under ext4's random writes padding often fails: it does not beat BAST there (within 5 %).
    let mut checks = Vec::new();
    if c.has("ext4") {
        let (pad, bast) =
            (tp(runs, &c.us, "ext4", "bast-padding", "random-write"), tp(runs, &c.us, "ext4", "bast", "random-write"));
        if let (Some(a), Some(b)) = (pad, bast) {
            let d = pct(a, b);
            checks.push(Check { text: format!("ext4 random-write padding {d:+.0} % vs bast"), held: d <= 5.0 });
        }
    }
    // The mechanism beside the verdict: the random-write phase's merges and padding.
    let merges_text = if c.has("ext4") { merges_line(runs, &c.us, "ext4") } else { String::new() };
    push(
        "padding-ext4",
        "under ext4's random writes padding often fails and its overhead is large (§5.2)",
        &["ext4"],
        checks,
    );

    // 6, 7. F2FS beats ext4 on random and on sequential writes.
    for (id, ph, paper) in [
        (
            "random-write-fs",
            "random-write",
            "F2FS beats ext4 on random writes (it logs them sequentially) (§5.2, Fig. 6)",
        ),
        (
            "seq-write-fs",
            "seq-write",
            "F2FS beats ext4 on sequential writes (ext4's file is scattered by the updates) (§5.2, Fig. 5)",
        ),
    ] {
        let pairs = if c.missing(&both).is_empty() {
            c.ftl_names()
                .into_iter()
                .map(|f| (f.to_string(), tp(runs, &c.us, "f2fs", f, ph), tp(runs, &c.us, "ext4", f, ph)))
                .collect()
        } else {
            Vec::new()
        };
        push(id, paper, &both, c.compare(&format!("{ph} f2fs vs ext4,"), pairs, true));
    }

    // 8. Under page mapping random and sequential writes perform alike (within 20 %, up to 90 %).
    let below: Vec<f64> = c.us.iter().copied().filter(|u| *u <= 90.0).collect();
    let mut checks = Vec::new();
    for fs in plan_fs(&c) {
        if let (Some(rw), Some(sw)) =
            (tp(runs, &below, fs, "page", "random-write"), tp(runs, &below, fs, "page", "seq-write"))
        {
            let d = pct(rw, sw);
            checks
                .push(Check { text: format!("{fs} page random-write {d:+.0} % vs seq-write"), held: d.abs() <= 20.0 });
        }
    }
    push("page-rw-sw", "under page mapping random and sequential writes perform alike (§5.2)", &both, checks);

    // 9. F2FS collapses at 95 % when its own cleaning starts.
    let mut checks = Vec::new();
    if c.has("f2fs") {
        for ftl in c.ftl_names() {
            let at = |u: f64| find(runs, "f2fs", ftl, u);
            if let (Some(a), Some(b)) = (
                at(90.0).and_then(|r| r.throughput("random-write")),
                at(95.0).and_then(|r| r.throughput("random-write")),
            ) {
                let clean = at(95.0).and_then(|r| r.cleaning_bytes()).unwrap_or(0);
                let d = pct(b, a);
                checks.push(Check {
                    text: format!(
                        "{ftl}: random-write 95 % vs 90 % {d:+.0} %, cleaning {:.1} MiB at 95 %",
                        clean as f64 / 1048576.0
                    ),
                    held: d <= -30.0 && clean > 0,
                });
            }
        }
    }
    push("f2fs-95", "F2FS collapses at 95 % utilisation when its own cleaning starts (§5.2)", &["f2fs"], checks);
    // The mechanisms beside the verdicts (not counted in them).
    for cl in out.iter_mut() {
        let extra = match cl.id {
            "padding-ext4" => merges_text.clone(),
            "padding-f2fs" if c.has("f2fs") => merges_line(runs, &c.us, "f2fs"),
            "seq-write-fs" if c.missing(&both).is_empty() => seq_write_split(runs, &c),
            _ => String::new(),
        };
        if !extra.is_empty() {
            cl.measured = format!("{} — {extra}", cl.measured);
        }
    }
    out
}

/// Bytes the file system wrote in `phase` (every cause) and the non-data share.
fn phase_writes(r: &Run, phase: &str) -> Option<(u64, u64)> {
    let w = &r.phase(phase)?.fs_writes;
    Some((w.data + w.metadata + w.journal + w.checkpoint + w.cleaning, w.metadata + w.journal + w.checkpoint))
}

/// Split of the F2FS-vs-ext4 sequential-write gap per FTL (mean over the
/// utilisations): the part ext4's journal, metadata and checkpoint writes
/// explain if device time follows the bytes written (ext4's throughput had it
/// written its data only: throughput × all bytes / data bytes), and the rest —
/// the FTL's cost of ext4's in-place data writes after the random phases.
fn seq_write_split(runs: &[Run], c: &Ctx) -> String {
    let mut parts = Vec::new();
    for ftl in c.ftl_names() {
        let ext4 = mean(runs, "ext4", ftl, &c.us, |r| r.throughput("seq-write"));
        let f2fs = mean(runs, "f2fs", ftl, &c.us, |r| r.throughput("seq-write"));
        let data_only = mean(runs, "ext4", ftl, &c.us, |r| {
            let (all, meta) = phase_writes(r, "seq-write")?;
            Some(r.throughput("seq-write")? * all as f64 / (all - meta).max(1) as f64)
        });
        let share = mean(runs, "ext4", ftl, &c.us, |r| {
            phase_writes(r, "seq-write").map(|(all, meta)| meta as f64 / all.max(1) as f64 * 100.0)
        });
        if let (Some(e), Some(f), Some(d), Some(sh)) = (ext4, f2fs, data_only, share) {
            parts.push(format!(
                "{ftl}: gap {:.2}× = journal/metadata {:.2}× (ext4 non-data writes {sh:.1} %) × rest {:.2}×",
                f / e,
                d / e,
                f / d
            ));
        }
    }
    format!("split of the seq-write gap (f2fs / ext4 throughput): {}", parts.join("; "))
}

fn plan_fs<'a>(c: &'a Ctx) -> impl Iterator<Item = &'static str> + 'a {
    c.plan.file_systems.iter().copied()
}

/// results.md: set-up, missing rows, claims, throughput per phase.
pub fn markdown(plan: &Plan, claims: &[Claim], runs: &[Run]) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "# Seed 004 reproduced: F2FS and ext4 over BAST, BAST-padding, page mapping and DFTL\n");
    let _ = writeln!(s, "Device: {}. IOZone-like: 4 KiB requests on a {:.1} MiB file; filler files to the utilisation; create, 25 % random update, then sequential read, random read, random write, sequential write, each timed on its own (simulated time; caches dropped between phases).\n", plan.note, plan.file_kib as f64 / 1024.0);
    for f in &plan.ftls {
        let _ = writeln!(s, "- `{}`: {}", f.name, f.note);
    }
    let _ = writeln!(s);
    for (fs, why) in &plan.missing {
        let _ = writeln!(
            s,
            "**Missing: {fs}** — {why}. Its rows and every comparison that needs it are absent (not estimated).\n"
        );
    }
    let _ = writeln!(s, "## Claims\n\n| claim | paper | measured | verdict |\n|---|---|---|---|");
    for c in claims {
        let _ = writeln!(s, "| {} | {} | {} | {} |", c.id, c.paper, c.measured, c.verdict);
    }
    let _ = writeln!(s, "\n## Throughput per phase (MiB/s, simulated time)\n");
    let _ = writeln!(
        s,
        "| fs | ftl | util % | {} | erases | fs WAF | SSD WAF | cleaning MiB | ENOSPC |",
        PHASES.join(" | ")
    );
    let _ = writeln!(s, "|---|---|---|{}---|---|---|---|---|", "---|".repeat(PHASES.len()));
    for r in runs {
        let cells: Vec<String> =
            PHASES.iter().map(|p| r.throughput(p).map_or("–".into(), |t| format!("{t:.1}"))).collect();
        let rep = r.report.as_ref();
        let _ = writeln!(
            s,
            "| {} | {} | {:.0} | {} | {} | {} | {} | {} | {} |",
            r.fs,
            r.ftl,
            r.utilisation,
            cells.join(" | "),
            r.erases().map_or("–".into(), |e| e.to_string()),
            rep.and_then(|x| x.fs_waf).map_or("–".into(), |w| format!("{w:.2}")),
            r.device["waf"].as_f64().map_or("–".into(), |w| format!("{w:.2}")),
            r.cleaning_bytes().map_or("–".into(), |b| format!("{:.1}", b as f64 / 1048576.0)),
            r.error.clone().or_else(|| rep.and_then(|x| x.enospc_phase.clone())).unwrap_or_else(|| "–".into()),
        );
    }
    mechanism_tables(&mut s, runs);
    s
}

fn mib(b: u64) -> String {
    format!("{:.1}", b as f64 / 1048576.0)
}

/// The tables behind padding-ext4, seq-write-fs and f2fs-95.
fn mechanism_tables(s: &mut String, runs: &[Run]) {
    let _ = writeln!(s, "\n## Random-write phase under BAST and BAST-padding: merges and padding\n");
    let _ = writeln!(s, "| fs | ftl | util % | MiB/s | switch | partial | full | padding pages | erases |\n|---|---|---|---|---|---|---|---|---|");
    for r in runs.iter().filter(|r| r.ftl.starts_with("bast")) {
        if let Some(p) = r.phase("random-write") {
            let d = &p.device;
            let _ = writeln!(
                s,
                "| {} | {} | {:.0} | {:.1} | {} | {} | {} | {} | {} |",
                r.fs,
                r.ftl,
                r.utilisation,
                p.throughput_mib_s.unwrap_or(0.0),
                d.merges_switch,
                d.merges_partial,
                d.merges_full,
                d.padding_pages,
                d.nand_erases
            );
        }
    }
    let _ = writeln!(s, "\n## Sequential-write phase: the file system's writes by cause (MiB) and the device's work\n");
    let _ = writeln!(s, "| fs | ftl | util % | MiB/s | data | metadata | journal | checkpoint | cleaning | NAND programs | erases | full merges |\n|---|---|---|---|---|---|---|---|---|---|---|---|");
    for r in runs {
        if let Some(p) = r.phase("seq-write") {
            let (w, d) = (&p.fs_writes, &p.device);
            let _ = writeln!(
                s,
                "| {} | {} | {:.0} | {:.1} | {} | {} | {} | {} | {} | {} | {} | {} |",
                r.fs,
                r.ftl,
                r.utilisation,
                p.throughput_mib_s.unwrap_or(0.0),
                mib(w.data),
                mib(w.metadata),
                mib(w.journal),
                mib(w.checkpoint),
                mib(w.cleaning),
                d.nand_program_pages,
                d.nand_erases,
                d.merges_full
            );
        }
    }
    let _ = writeln!(s, "\n## F2FS: space, SSR and cleaning (whole run; cleaning MiB of the random-write phase)\n");
    let _ = writeln!(s, "| ftl | util % | reserved segs | overprov segs | user MiB | LFS segs | SSR segs | fg GC secs | bg GC secs | IPU blocks | random-write cleaning MiB | random-write MiB/s |\n|---|---|---|---|---|---|---|---|---|---|---|---|");
    for r in runs.iter().filter(|r| r.fs == "f2fs") {
        let (Some(p), Some(rep)) = (r.phase("random-write"), r.report.as_ref()) else { continue };
        let f = &r.device["f2fs"];
        let n = |k: &str| f[k].as_u64().map_or("–".into(), |v| v.to_string());
        let _ = writeln!(
            s,
            "| {} | {:.0} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {:.1} |",
            r.ftl,
            r.utilisation,
            n("reserved_segments"),
            n("overprov_segments"),
            mib(rep.capacity_bytes),
            n("lfs_segments"),
            n("ssr_segments"),
            n("fg_gc_sections"),
            n("bg_gc_sections"),
            n("ipu_blocks_written"),
            mib(p.fs_writes.cleaning),
            p.throughput_mib_s.unwrap_or(0.0)
        );
    }
}

fn series(plan: &Plan, runs: &[Run], f: impl Fn(&Run) -> Option<f64>) -> Vec<(String, Vec<(f64, f64)>)> {
    let mut out = Vec::new();
    for fs in &plan.file_systems {
        for ftl in &plan.ftls {
            let pts: Vec<(f64, f64)> = runs
                .iter()
                .filter(|r| r.fs == *fs && r.ftl == ftl.name)
                .filter_map(|r| f(r).map(|y| (r.utilisation, y)))
                .collect();
            if !pts.is_empty() {
                out.push((format!("{fs} {}", ftl.name), pts));
            }
        }
    }
    out
}

/// One PNG per phase (throughput against utilisation, a line per FS × FTL),
/// erases against utilisation, and BAST against BAST-padding at 20 % (Fig. 4).
fn plots(out: &Path, plan: &Plan, runs: &[Run]) -> anyhow::Result<()> {
    if runs.iter().all(|r| r.report.is_none()) {
        return Ok(());
    }
    let util = "utilisation (%)";
    for (i, ph) in PHASES.iter().enumerate() {
        let s = series(plan, runs, |r| r.throughput(ph));
        let title = format!("{ph}: throughput (IOZone, 4 KiB)");
        plot::lines(&out.join(format!("fig{}_{ph}.png", i + 1)), &title, util, "MiB/s (simulated)", &s)?;
    }
    let s = series(plan, runs, |r| r.erases().map(|e| e as f64));
    plot::lines(&out.join("fig7_erases.png"), "Block erases in the measured phases", util, "erases", &s)?;
    let keys = ["merges_switch", "merges_partial", "merges_full", "padding_pages", "nand_erases"];
    let cats: Vec<String> = keys.iter().map(|k| k.to_string()).collect();
    let mut bars = Vec::new();
    for fs in &plan.file_systems {
        for ftl in ["bast", "bast-padding"] {
            if let Some(r) = find(runs, fs, ftl, 20.0).filter(|r| r.report.is_some()) {
                bars.push((format!("{fs} {ftl}"), keys.iter().map(|k| r.device[k].as_f64().unwrap_or(0.0)).collect()));
            }
        }
    }
    if !bars.is_empty() {
        plot::grouped_bars(
            &out.join("fig8_bast_padding_20.png"),
            "Fig. 4: BAST against BAST-padding at 20 % (whole run)",
            "count",
            &cats,
            &bars,
        )?;
    }
    Ok(())
}

pub fn run(out: &Path, quick: bool) -> anyhow::Result<()> {
    std::fs::create_dir_all(out).with_context(|| format!("cannot create {}", out.display()))?;
    let plan = Plan::new(quick);
    let total = plan.points().len();
    eprintln!("f2fs-ext4-ftl: {} ({total} runs)", plan.note);
    for (fs, why) in &plan.missing {
        eprintln!("f2fs-ext4-ftl: {fs} missing: {why}");
    }
    let workers = std::thread::available_parallelism().map_or(1, |n| n.get());
    let done = std::sync::atomic::AtomicUsize::new(0);
    let runs = crate::repro_fsftl::run_all(&plan, workers, |r| {
        let n = done.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
        if let Some(e) = &r.error {
            eprintln!("f2fs-ext4-ftl: {} {} {}%: {e}", r.fs, r.ftl, r.utilisation);
        }
        eprintln!("f2fs-ext4-ftl: {n}/{total} done");
    });
    let claims = claims(&plan, &runs);
    let md = markdown(&plan, &claims, &runs);
    print!("{md}");
    std::fs::write(out.join("results.md"), &md).with_context(|| format!("cannot write {}", out.display()))?;
    write_json(&out.join("results.json"), &Report { plan: &plan, claims, runs: &runs })?;
    plots(out, &plan, &runs)
}

/// The plan and the `--set` lists of every FTL, for index.html.
pub fn configs(quick: bool) -> anyhow::Result<Vec<crate::report::repro::ConfigUsed>> {
    use crate::report::repro::ConfigUsed;
    let plan = Plan::new(quick);
    let mut out = vec![ConfigUsed { name: "plan".into(), text: serde_json::to_string_pretty(&plan)? }];
    for (i, f) in plan.ftls.iter().enumerate() {
        let fs = plan.file_systems.first().copied().unwrap_or("FS");
        out.push(ConfigUsed { name: format!("ftl: {}", f.name), text: plan.sets(fs, i, 50.0).join("\n") });
    }
    Ok(out)
}
