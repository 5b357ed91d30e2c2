//! `flashlab reproduce ubifs-hotdata` (seed 000): hot/cold journals,
//! delayed hot-journal commit and the LPT validity bitmap on flashfs,
//! under dd, fileserver and varmail, against utilisation. The runs and the
//! comparison live in `flashlab_flashfs::fsbench::repro`; this file writes
//! results.md, results.json and the PNGs of figures 10-15.

use crate::output::write_json;
use crate::plot;
use anyhow::Context;
use flashlab_flashfs::fsbench::repro::{self, Plan, Report};
use flashlab_flashfs::fsbench::RunResult;
use std::path::Path;

type Series = Vec<(String, Vec<(f64, f64)>)>;

fn by_util(rep: &Report, workload: &str, m: fn(&RunResult) -> f64) -> Series {
    repro::configs()
        .into_iter()
        .map(|(c, _)| {
            let pts = repro::series(&rep.runs, &c, workload).iter().map(|r| (r.utilisation_pct as f64, m(r))).collect();
            (c, pts)
        })
        .collect()
}

fn samples(rep: &Report, workload: &str) -> Series {
    repro::configs()
        .into_iter()
        .map(|(c, _)| {
            let pts = repro::series(&rep.runs, &c, workload).first().map(|r| r.samples.clone()).unwrap_or_default();
            (c, pts)
        })
        .collect()
}

/// Pages programmed by cause (the file system's own: data, index, LPT, log, GC, ...)
/// under each configuration, for one workload at its lowest utilisation: the
/// causes every run reports, in name order, one series per configuration.
fn by_cause(runs: &[RunResult], workload: &str) -> (Vec<String>, Vec<(String, Vec<f64>)>) {
    let firsts: Vec<(String, &RunResult)> = repro::configs()
        .into_iter()
        .filter_map(|(c, _)| repro::series(runs, &c, workload).first().map(|r| (c, *r)))
        .collect();
    let causes: std::collections::BTreeSet<&String> =
        firsts.iter().flat_map(|(_, r)| r.pages_programmed_by_cause.keys()).collect();
    let series = firsts
        .iter()
        .map(|(c, r)| {
            let v = causes.iter().map(|k| r.pages_programmed_by_cause.get(*k).copied().unwrap_or(0) as f64).collect();
            (c.clone(), v)
        })
        .collect();
    (causes.into_iter().cloned().collect(), series)
}

fn plots(out: &Path, rep: &Report) -> anyhow::Result<()> {
    for w in ["dd", "fileserver", "varmail"] {
        let (causes, series) = by_cause(&rep.runs, w);
        if !causes.is_empty() {
            let title = format!("{w}: pages programmed by cause (lowest utilisation)");
            plot::grouped_bars(
                &out.join(format!("writes_by_cause_{w}.png")),
                &title,
                "pages programmed",
                &causes,
                &series,
            )?;
        }
    }
    let mb = "data written by the workload (MiB)";
    let pages = "physical pages programmed";
    plot::lines(&out.join("fig10_dd_writes.png"), "Fig. 10: dd, physical writes", mb, pages, &samples(rep, "dd"))?;
    let fs0 = samples(rep, "fileserver");
    plot::lines(
        &out.join("fig11_fileserver_writes.png"),
        "Fig. 11: fileserver (0 % utilisation), physical writes",
        mb,
        pages,
        &fs0,
    )?;
    let util = "device utilisation (%)";
    let gc = |r: &RunResult| r.gc_runs as f64;
    let iops = |r: &RunResult| r.iops_nandsim;
    plot::lines(
        &out.join("fig12_varmail_gc.png"),
        "Fig. 12: varmail, GC runs",
        util,
        "GC runs (LEBs collected)",
        &by_util(rep, "varmail", gc),
    )?;
    plot::lines(
        &out.join("fig13_fileserver_gc.png"),
        "Fig. 13: fileserver, GC runs",
        util,
        "GC runs (LEBs collected)",
        &by_util(rep, "fileserver", gc),
    )?;
    let y = "IOPS (nandsim timing of seed 000)";
    plot::lines(
        &out.join("fig14_varmail_iops.png"),
        "Fig. 14: varmail, IOPS",
        util,
        y,
        &by_util(rep, "varmail", iops),
    )?;
    plot::lines(
        &out.join("fig15_fileserver_iops.png"),
        "Fig. 15: fileserver, IOPS",
        util,
        y,
        &by_util(rep, "fileserver", iops),
    )?;
    Ok(())
}

pub fn run(out: &Path, quick: bool) -> anyhow::Result<()> {
    std::fs::create_dir_all(out).with_context(|| format!("cannot create {}", out.display()))?;
    let plan = Plan::new(quick);
    let total = plan.points().len();
    eprintln!("ubifs-hotdata: {} ({total} runs)", plan.note);
    let bar = crate::output::progress(None, false);
    bar.set_style(
        indicatif::ProgressStyle::with_template("{spinner} [{elapsed_precise}] {msg}").expect("valid template"),
    );
    let finished = std::sync::atomic::AtomicUsize::new(0);
    let rep = repro::run_with_progress(&plan, |r| {
        let n = finished.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
        bar.set_message(format!("{n}/{total} runs (last: {} {} {}%)", r.config, r.workload, r.utilisation_pct));
    })?;
    bar.finish_and_clear();

    let md = repro::markdown(&rep);
    print!("{md}");
    std::fs::write(out.join("results.md"), &md).with_context(|| format!("cannot write {}", out.display()))?;
    write_json(&out.join("results.json"), &rep)?;
    plots(out, &rep)
}

/// The plan (device, utilisations, workload sizes) and the five file-system configurations, as JSON.
pub fn configs(quick: bool) -> anyhow::Result<Vec<crate::report::repro::ConfigUsed>> {
    use crate::report::repro::ConfigUsed;
    let plan = Plan::new(quick);
    let mut out =
        vec![ConfigUsed { name: "plan (device and workloads)".into(), text: serde_json::to_string_pretty(&plan)? }];
    for (name, fs) in repro::configs_for(&plan.device) {
        out.push(ConfigUsed { name: format!("file system: {name}"), text: serde_json::to_string_pretty(&fs)? });
    }
    Ok(out)
}
