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

/// A metric by utilisation (the mean of the middle three seeds), one series per configuration.
fn by_util(rep: &Report, workload: &str, m: fn(&RunResult) -> f64) -> Series {
    let utils = repro::utilisations(&rep.runs, workload);
    repro::configs()
        .into_iter()
        .map(|(c, _)| {
            let pts = utils
                .iter()
                .filter_map(|u| repro::at_point(&rep.runs, &c, workload, *u, m).map(|s| (*u as f64, s.mid3_mean)))
                .collect();
            (c, pts)
        })
        .collect()
}

/// A metric divided by the baseline's of the same seed, by utilisation, one series per other configuration.
fn ratio_by_util(rep: &Report, workload: &str, m: fn(&RunResult) -> f64) -> Series {
    let utils = repro::utilisations(&rep.runs, workload);
    repro::configs()
        .into_iter()
        .skip(1)
        .map(|(c, _)| {
            let pts = utils
                .iter()
                .filter_map(|u| repro::ratio_at_point(&rep.runs, &c, workload, *u, m).map(|s| (*u as f64, s.mid3_mean)))
                .collect();
            (c, pts)
        })
        .collect()
}

/// Pages programmed divided by the baseline's, against data written, at
/// the lowest utilisation of the first seed: one series per other configuration.
fn sample_ratio(rep: &Report, workload: &str) -> Series {
    let first = |c: &str| repro::series(&rep.runs, c, workload).first().map(|r| r.samples.clone()).unwrap_or_default();
    let base = first("baseline");
    repro::configs()
        .into_iter()
        .skip(1)
        .map(|(c, _)| {
            let pts = first(&c).iter().zip(&base).filter(|(_, b)| b.1 > 0.0).map(|(o, b)| (b.0, o.1 / b.1)).collect();
            (c, pts)
        })
        .collect()
}

/// Pages programmed by cause (the file system's own: data, index, LPT, log, GC, ...)
/// under each configuration, for one workload at its lowest utilisation and
/// first seed: the causes every run reports, in name order, one series per configuration.
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

/// Figures 12 and 13: GC runs by utilisation; when no run of the workload
/// moved a live node, LEB reclaims (GC + freeable) instead, and the title says so.
fn gc_figure(out: &Path, rep: &Report, workload: &str, file: &str, fig: &str) -> anyhow::Result<()> {
    let any_gc = rep.runs.iter().any(|r| r.workload == workload && r.gc_runs > 0);
    let (title, y, m): (String, &str, fn(&RunResult) -> f64) = if any_gc {
        (format!("{fig}: {workload}, GC runs (mean of middle 3 seeds)"), "GC runs (LEBs collected)", |r| {
            r.gc_runs as f64
        })
    } else {
        (
            format!("{fig}: {workload}: no GC run moved a live node; LEB reclaims (GC + freeable) shown"),
            "LEB reclaims",
            |r| r.reclaims as f64,
        )
    };
    plot::lines(&out.join(file), &title, "device utilisation (%)", y, &by_util(rep, workload, m))
}

fn plots(out: &Path, rep: &Report) -> anyhow::Result<()> {
    for w in ["dd", "fileserver", "varmail"] {
        let (causes, series) = by_cause(&rep.runs, w);
        if !causes.is_empty() {
            let title = format!("{w}: pages programmed by cause (lowest utilisation, first seed)");
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
    let ratio = "pages programmed / baseline's";
    plot::lines(
        &out.join("fig10_dd_writes.png"),
        "Fig. 10: dd, physical writes relative to the baseline",
        mb,
        ratio,
        &sample_ratio(rep, "dd"),
    )?;
    plot::lines(
        &out.join("fig11_fileserver_writes.png"),
        "Fig. 11: fileserver (lowest utilisation), physical writes relative to the baseline",
        mb,
        ratio,
        &sample_ratio(rep, "fileserver"),
    )?;
    gc_figure(out, rep, "varmail", "fig12_varmail_gc.png", "Fig. 12")?;
    gc_figure(out, rep, "fileserver", "fig13_fileserver_gc.png", "Fig. 13")?;
    let util = "device utilisation (%)";
    let y = "IOPS / baseline's (nandsim timing, mean of middle 3 seeds)";
    let iops = |r: &RunResult| r.iops_nandsim;
    plot::lines(
        &out.join("fig14_varmail_iops.png"),
        "Fig. 14: varmail, IOPS relative to the baseline",
        util,
        y,
        &ratio_by_util(rep, "varmail", iops),
    )?;
    plot::lines(
        &out.join("fig15_fileserver_iops.png"),
        "Fig. 15: fileserver, IOPS relative to the baseline",
        util,
        y,
        &ratio_by_util(rep, "fileserver", iops),
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

/// The plan (device, utilisations, workload sizes) and the six file-system configurations, as JSON.
pub fn configs(quick: bool) -> anyhow::Result<Vec<crate::report::repro::ConfigUsed>> {
    use crate::report::repro::ConfigUsed;
    let plan = Plan::new(quick);
    let mut out =
        vec![ConfigUsed { name: "plan (device and workloads)".into(), text: serde_json::to_string_pretty(&plan)? }];
    for (name, fs) in repro::configs_for(&plan.device) {
        let note = if name == repro::ORACLE { " (hot labels of data: the oracle)" } else { "" };
        out.push(ConfigUsed { name: format!("file system: {name}{note}"), text: serde_json::to_string_pretty(&fs)? });
    }
    Ok(out)
}
