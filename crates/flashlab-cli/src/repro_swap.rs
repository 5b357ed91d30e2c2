//! `flashlab reproduce swap-trim` (seed 003): the four application models over a swap
//! area on an SSD under each allocator; the semantic allocator's run-time gain over
//! Linux 2.6.34's beside the seed's claims; gain against swap-out rate (its figure 6
//! trend); TRIM cost against pages written and range size (its figure 3); SSD against
//! disk (its figure 4); and the gain with a zero-cost TRIM (placement effects only).

use crate::output::write_json;
use crate::plot;
use crate::report::repro::ConfigUsed;
use crate::swap_cmd::{builtin_app, run_on, BUILTIN_APPS};
use anyhow::Context;
use flashlab_config::RawSwap;
use flashlab_sim::{Op, Settings, Ssd};
use flashlab_swap::{AppModel, SwapResult, SwapSettings, Workload};
use serde::Serialize;
use std::path::Path;

/// The seed's run-time gains of the semantic allocator (§3.2, figure 5), per application.
pub const CLAIMS: [(&str, f64); 4] = [("imagemagick", 34.6), ("postgresql", 3.2), ("matlab", 6.6), ("eclipse", 14.2)];

/// The runs of one application.
const CASES: [(&str, &str, &str, bool); 7] = [
    ("linux", "linux", "ssd", false),
    ("semantic", "semantic", "ssd", false),
    ("linux-modern", "linux-modern", "ssd", false),
    ("none", "none", "ssd", false),
    ("linux, TRIM free", "linux", "ssd", true),
    ("semantic, TRIM free", "semantic", "ssd", true),
    ("linux on disk", "linux", "disk", false),
];

/// Sizes: the seed's 1 GiB RAM and 2 GiB swap, or a quarter of everything (`--quick`).
#[derive(Clone, Debug, Serialize)]
pub struct Plan {
    pub scale_divisor: u64,
    pub ram_mib: u64,
    pub swap_mib: u64,
    pub device_sets: Vec<String>,
}

impl Plan {
    pub fn new(quick: bool) -> Plan {
        let d = if quick { 4 } else { 1 };
        let blocks = if quick { 256 } else { 1024 };
        Plan {
            scale_divisor: d,
            ram_mib: 1024 / d,
            swap_mib: 2048 / d,
            device_sets: vec![format!("device.blocks_per_plane={blocks}"), "sim.track_content=false".into()],
        }
    }

    fn settings(&self, trim_free: bool) -> anyhow::Result<Settings> {
        let mut sets = self.device_sets.clone();
        if trim_free {
            sets.extend(["timing.trim_command_us=0".to_string(), "timing.trim_page_ns=0".to_string()]);
        }
        Ok(flashlab_config::load("", "swap-trim plan", &sets)?.1)
    }

    fn app(&self, name: &str) -> anyhow::Result<AppModel> {
        let mut m = builtin_app(name)?;
        m.footprint_mib /= self.scale_divisor;
        m.references /= self.scale_divisor;
        Ok(m)
    }
}

/// One run's result with its application and case.
#[derive(Clone, Debug, Serialize)]
pub struct Row {
    pub app: String,
    pub case: String,
    pub result: SwapResult,
}

/// One point of the TRIM-cost curves.
#[derive(Clone, Debug, Serialize)]
pub struct TrimPoint {
    pub range_mib: u64,
    pub written_pct: u64,
    pub trim_ms: f64,
}

#[derive(Serialize)]
struct Report<'a> {
    plan: &'a Plan,
    runs: &'a [Row],
    trim_cost: &'a [TrimPoint],
}

pub fn run(out: &Path, quick: bool) -> anyhow::Result<()> {
    let plan = Plan::new(quick);
    let mut rows = Vec::new();
    for (app, _) in BUILTIN_APPS {
        let m = plan.app(app)?;
        for (case, alloc, device, free) in CASES {
            eprintln!("swap-trim: {app} / {case}");
            let s = plan.settings(free)?;
            let raw = RawSwap {
                allocator: alloc.into(),
                ram_mib: plan.ram_mib,
                swap_mib: plan.swap_mib,
                device: device.into(),
                ..RawSwap::default()
            };
            let ss = SwapSettings::resolve(&raw, &s)?;
            let result = run_on(&ss, &s, Workload::App(&m))?;
            rows.push(Row { app: app.into(), case: case.into(), result });
        }
    }
    let trim = trim_cost(&plan)?;
    let md = markdown(&plan, &rows, &trim);
    print!("{md}");
    std::fs::write(out.join("results.md"), &md).with_context(|| format!("cannot write {}", out.display()))?;
    write_json(&out.join("results.json"), &Report { plan: &plan, runs: &rows, trim_cost: &trim })?;
    plots(out, &rows, &trim)
}

fn find<'a>(rows: &'a [Row], app: &str, case: &str) -> &'a SwapResult {
    &rows.iter().find(|r| r.app == app && r.case == case).expect("every case ran").result
}

fn secs(r: &SwapResult) -> f64 {
    r.run_time_s.unwrap_or(f64::NAN)
}

/// Run-time gain of `b` over `a` in percent of `a`.
fn gain(a: &SwapResult, b: &SwapResult) -> f64 {
    100.0 * (secs(a) - secs(b)) / secs(a)
}

/// Mean latency of queued TRIMs (so the queue drain is not counted) of `range_mib`
/// whose pages are `written_pct` % written, on a fresh page-mapped SSD.
fn trim_cost(plan: &Plan) -> anyhow::Result<Vec<TrimPoint>> {
    let mut sets = plan.device_sets.clone();
    sets.extend(["device.blocks_per_plane=64".to_string(), "timing.trim_queued=true".to_string()]);
    let s = flashlab_config::load("", "trim-cost", &sets)?.1;
    let page = s.page_bytes();
    let mut out = Vec::new();
    for range_mib in [1u64, 2, 4, 8, 16] {
        for written_pct in (0..=100).step_by(10) {
            let mut ssd = Ssd::new(s.clone())?;
            let pages = (range_mib << 20) / page;
            let (mut t, mut total, n) = (0u64, 0u64, 4u64);
            for k in 0..n {
                let base = k * pages * page;
                // Every page whose position in a fixed shuffle is below the share is written.
                for p in 0..pages {
                    if flashlab_workload::mix64(p ^ k << 40) % 100 < written_pct {
                        t = ssd.submit(Op::Write, base + p * page, page, t)?.done_ns.unwrap_or(t);
                    }
                }
                let c = ssd.submit(Op::Trim, base, pages * page, t)?;
                total += c.latency_ns.unwrap_or(0);
            }
            out.push(TrimPoint { range_mib, written_pct, trim_ms: total as f64 / n as f64 / 1e6 });
        }
    }
    Ok(out)
}

fn markdown(plan: &Plan, rows: &[Row], trim: &[TrimPoint]) -> String {
    let mut md = String::from("# swap-trim (seed 003): semantic-aware swap allocation on an SSD\n\n");
    md += &format!(
        "RAM {} MiB, swap {} MiB, application models of examples/swap/apps{}; run time = CPU + time blocked on swap I/O and TRIM (docs/swap.md).\n\n",
        plan.ram_mib,
        plan.swap_mib,
        if plan.scale_divisor > 1 { format!(" with footprints and references divided by {}", plan.scale_divisor) } else { String::new() }
    );
    md += "## Run time per application and allocator (s)\n\n";
    md += "| application | linux | semantic | linux-modern | none | gain semantic vs linux | seed's gain | gain with TRIM free | swap-outs/s (linux) | TRIMs linux / semantic | mean TRIM ms linux / semantic |\n";
    md += "|---|---|---|---|---|---|---|---|---|---|---|\n";
    for (app, claim) in CLAIMS {
        let (l, s) = (find(rows, app, "linux"), find(rows, app, "semantic"));
        let (m, n) = (find(rows, app, "linux-modern"), find(rows, app, "none"));
        let free = gain(find(rows, app, "linux, TRIM free"), find(rows, app, "semantic, TRIM free"));
        md += &format!(
            "| {app} | {:.2} | {:.2} | {:.2} | {:.2} | {:.1} % | {claim} % | {free:.1} % | {:.0} | {} / {} | {} / {} |\n",
            secs(l),
            secs(s),
            secs(m),
            secs(n),
            gain(l, s),
            l.swap_out_rate_pages_per_s.unwrap_or(0.0),
            l.trim_commands,
            s.trim_commands,
            ms(l.trim_time_ms_mean),
            ms(s.trim_time_ms_mean),
        );
    }
    md += "\n## SSD against disk (linux allocator)\n\n| application | SSD (s) | disk (s) | disk / SSD | seed |\n|---|---|---|---|---|\n";
    for (app, _) in CLAIMS {
        let (ssd, disk) = (find(rows, app, "linux"), find(rows, app, "linux on disk"));
        let seed = match app {
            "imagemagick" => "4x faster on SSD",
            "postgresql" => "4.7 % faster on SSD",
            _ => "faster on SSD",
        };
        md += &format!("| {app} | {:.2} | {:.2} | {:.2} | {seed} |\n", secs(ssd), secs(disk), secs(disk) / secs(ssd));
    }
    md += "\n## TRIM cost (queued, page mapping; seed: 1–14 ms, rising with pages written, falling per byte with the range)\n\n| range (MiB) | 0 % written (ms) | 50 % (ms) | 100 % (ms) | ms per MiB at 100 % |\n|---|---|---|---|---|\n";
    for r in [1u64, 2, 4, 8, 16] {
        let at = |w: u64| trim.iter().find(|p| p.range_mib == r && p.written_pct == w).map_or(f64::NAN, |p| p.trim_ms);
        md += &format!("| {r} | {:.2} | {:.2} | {:.2} | {:.3} |\n", at(0), at(50), at(100), at(100) / r as f64);
    }
    md += "\n## Every run\n\n| application | case | run time (s) | swap-outs | swap-ins | TRIMs | TRIM total (s) | TRIM wait (s) | WAF | erases |\n|---|---|---|---|---|---|---|---|---|---|\n";
    for r in rows {
        let x = &r.result;
        md += &format!(
            "| {} | {} | {:.2} | {} | {} | {} | {:.3} | {:.3} | {} | {} |\n",
            r.app,
            r.case,
            secs(x),
            x.swap_outs,
            x.swap_ins,
            x.trim_commands,
            x.trim_time_s_total.unwrap_or(0.0),
            x.trim_wait_s.unwrap_or(0.0),
            x.ssd_waf.map_or("-".into(), |w| format!("{w:.2}")),
            x.ssd_erases.map_or("-".into(), |e| e.to_string()),
        );
    }
    md
}

fn ms(v: Option<f64>) -> String {
    v.map_or("-".into(), |v| format!("{v:.2}"))
}

fn plots(out: &Path, rows: &[Row], trim: &[TrimPoint]) -> anyhow::Result<()> {
    let apps: Vec<String> = CLAIMS.iter().map(|c| c.0.to_string()).collect();
    let series: Vec<(String, Vec<f64>)> = ["linux", "semantic", "linux-modern", "none"]
        .iter()
        .map(|c| (c.to_string(), CLAIMS.iter().map(|(a, _)| secs(find(rows, a, c))).collect()))
        .collect();
    plot::grouped_bars(
        &out.join("fig5_run_time.png"),
        "Run time per allocator (fig. 5)",
        "run time (s)",
        &apps,
        &series,
    )?;
    let mut pts: Vec<(f64, f64, f64)> = CLAIMS
        .iter()
        .map(|(a, claim)| {
            let l = find(rows, a, "linux");
            (l.swap_out_rate_pages_per_s.unwrap_or(0.0), gain(l, find(rows, a, "semantic")), *claim)
        })
        .collect();
    pts.sort_by(|a, b| a.0.total_cmp(&b.0));
    plot::lines(
        &out.join("fig6_gain_vs_swapout_rate.png"),
        "Gain of semantic over linux against swap-out rate (fig. 6 trend)",
        "swap-outs per second under linux",
        "run-time gain (%)",
        &[
            ("measured".into(), pts.iter().map(|p| (p.0, p.1)).collect()),
            ("seed's claim".into(), pts.iter().map(|p| (p.0, p.2)).collect()),
        ],
    )?;
    let curves: Vec<(String, Vec<(f64, f64)>)> = [1u64, 4, 16]
        .iter()
        .map(|&r| {
            let pts = trim.iter().filter(|p| p.range_mib == r).map(|p| (p.written_pct as f64, p.trim_ms)).collect();
            (format!("{r} MiB"), pts)
        })
        .collect();
    plot::lines(
        &out.join("fig3_trim_cost.png"),
        "TRIM time against pages written in its range (fig. 3)",
        "pages of the range written (%)",
        "TRIM time (ms)",
        &curves,
    )?;
    let per_byte: Vec<(f64, f64)> = trim
        .iter()
        .filter(|p| p.written_pct == 100)
        .map(|p| (p.range_mib as f64, p.trim_ms / p.range_mib as f64))
        .collect();
    plot::lines(
        &out.join("fig3b_trim_cost_per_mib.png"),
        "TRIM time per MiB against range size (all pages written)",
        "range (MiB)",
        "ms per MiB",
        &[("page mapping".into(), per_byte)],
    )?;
    let disk: Vec<(String, Vec<f64>)> = ["linux", "linux on disk"]
        .iter()
        .map(|c| (c.to_string(), CLAIMS.iter().map(|(a, _)| secs(find(rows, a, c))).collect()))
        .collect();
    plot::grouped_bars(
        &out.join("fig4_ssd_vs_disk.png"),
        "SSD against disk as swap (fig. 4)",
        "run time (s)",
        &apps,
        &disk,
    )
}

/// The plan and the application models, as text.
pub fn configs(quick: bool) -> anyhow::Result<Vec<ConfigUsed>> {
    let plan = Plan::new(quick);
    let mut out = vec![ConfigUsed { name: "plan".into(), text: serde_json::to_string_pretty(&plan)? }];
    for (name, text) in BUILTIN_APPS {
        out.push(ConfigUsed { name: format!("application model {name} (before scaling)"), text: text.to_string() });
    }
    Ok(out)
}
