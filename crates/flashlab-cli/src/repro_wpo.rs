//! `flashlab reproduce wpo-gc` (seed 001): Basic-GC, DT-GC and WPO-GC on the seed's
//! SSDsim device, on the shared real traces that have writes and on synthetic stand-ins
//! for the seed's traces; each metric normalised to Basic-GC beside the paper's claim.

use crate::output::write_json;
use crate::plot::grouped_bars;
use anyhow::Context;
use flashlab_sim::RunResult;
use flashlab_trace::{FormatChoice, ReaderOptions, TraceReader};
use serde::Serialize;
use std::fmt::Write as _;
use std::io::BufReader;
use std::path::{Path, PathBuf};

/// The schemes, as `gc.preset` names: Basic-GC with SSDsim's trigger (the headline's
/// Basic-GC) and with the 2-free-block threshold, DT-GC and WPO-GC.
const SCHEMES: [(&str, &str); 4] =
    [("Basic-GC", "ssdsim-basic"), ("Basic-GC/2 blocks", "basic-gc"), ("DT-GC", "dt-gc"), ("WPO-GC", "wpo-gc")];

/// The headline's three schemes (indices into `SCHEMES`).
const HEADLINE: [usize; 3] = [0, 2, 3];

/// One set-up of the sensitivity grid (the Basic-GC trigger is the third axis: `SCHEMES`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Setup {
    /// Uniform random writes of the logical capacity after the prefill.
    full_aging: bool,
    /// 4× the seed's number of requests (synthetic workloads only: a trace is as long as it is).
    long: bool,
}

/// The set-up closest to the seed's: SSDsim ages nothing unless told (`aged=0` in its
/// shipped page.parameters) and the seed mentions no aging; our prefill only makes GC run.
const SEED_SETUP: Setup = Setup { full_aging: false, long: false };

const SETUPS: [Setup; 4] = [
    SEED_SETUP,
    Setup { full_aging: true, long: false },
    Setup { full_aging: false, long: true },
    Setup { full_aging: true, long: true },
];

impl Setup {
    fn aging(self) -> &'static str {
        if self.full_aging {
            "full aging"
        } else {
            "prefill only"
        }
    }
    fn length(self) -> &'static str {
        if self.long {
            "4x"
        } else {
            "seed's"
        }
    }
}

/// A workload: a shared trace, or a synthetic stand-in with the characteristics used.
struct Workload {
    name: &'static str,
    what: &'static str,
    trace: Option<(&'static str, &'static str)>,
    sets: &'static [&'static str],
}

const WORKLOADS: &[Workload] = &[
    Workload {
        name: "Exchange*",
        what: "stand-in for MS Exchange 2007 SP1 (Kavalanckar et al. 2008: read-dominated, small random requests): 60 % reads, 4-16 KiB, zipf 0.9, Poisson arrivals, mean 1 ms",
        trace: None,
        sets: &["workload.read_fraction=0.6", "workload.request_bytes=4096", "workload.request_bytes_max=16384", "workload.pattern=zipf", "workload.zipf_theta=0.9", "workload.arrival=poisson", "workload.interarrival_us=1000"],
    },
    Workload {
        name: "Financial*",
        what: "stand-in for SPC Financial1 (UMass OLTP: write-dominated, ~3.5 KB requests, strong locality): 23 % reads, 2-4 KiB, hot/cold 80/10, Poisson arrivals, mean 2 ms",
        trace: None,
        sets: &["workload.read_fraction=0.23", "workload.request_bytes=2048", "workload.request_bytes_max=4096", "workload.pattern=hotcold", "workload.hot_fraction=0.1", "workload.hot_traffic=0.8", "workload.arrival=poisson", "workload.interarrival_us=2000"],
    },
    Workload {
        name: "IntelSSD_1*",
        what: "stand-in for the fio run IntelSSD_1 (seed 001 cites fio 4 KB random 7:3 read:write): 70 % reads, 4 KiB, uniform, Poisson arrivals, mean 0.5 ms",
        trace: None,
        sets: &["workload.read_fraction=0.7", "workload.request_bytes=4096", "workload.pattern=uniform", "workload.arrival=poisson", "workload.interarrival_us=500"],
    },
    Workload {
        name: "IntelSSD_2*",
        what: "stand-in for the fio run IntelSSD_2 (parameters not published; assumed): 30 % reads, 4 KiB, uniform, Poisson arrivals, mean 0.5 ms",
        trace: None,
        sets: &["workload.read_fraction=0.3", "workload.request_bytes=4096", "workload.pattern=uniform", "workload.arrival=poisson", "workload.interarrival_us=500"],
    },
    Workload { name: "example.ascii", what: "shared trace: SPC-like OLTP from SSDsim's repository, 10 000 requests, 59 % writes, at its timestamps", trace: Some(("example.ascii", "ssdsim")), sets: &[] },
    Workload { name: "tpcc-small", what: "shared trace: TPC-C from MQSim's repository, 6 999 requests, 37 % writes, at its timestamps", trace: Some(("tpcc-small.trace", "mqsim")), sets: &[] },
    Workload { name: "cloudPhysics", what: "shared trace: VMware VSCSI sample (libCacheSim), 113 872 requests, 59 % writes, at its timestamps", trace: Some(("cloudPhysicsIO.csv", "cloudphysics")), sets: &[] },
    Workload { name: "sqlite-wal", what: "shared trace: WiscSim SQLite WAL on ext4, 5 008 requests, nearly all writes, at its timestamps", trace: Some(("wiscsee-sqlitewal-events.txt", "wiscsee")), sets: &[] },
];

/// The paper's claims per metric (WPO-GC against Basic-GC), as shown in the table.
const CLAIMS: [(&str, &str); 5] = [
    ("read response time", "−20 % .. −40 %"),
    ("write response time", "−17 % .. −40 %"),
    ("std-dev of per-block erases", "about −30 %"),
    ("total erases", "about equal to DT-GC; depends on the GC threshold"),
    ("total page writes", "slightly lower (up to −20 % against DT-GC on Exchange)"),
];

#[derive(Serialize)]
struct Row {
    workload: String,
    scheme: String,
    preset: String,
    aging: String,
    length: String,
    #[serde(skip)]
    setup: Setup,
    read_latency_us_mean: Option<f64>,
    write_latency_us_mean: Option<f64>,
    erase_count_stddev_block: f64,
    erase_count_plane_stddev: f64,
    nand_erases: u64,
    nand_program_pages: u64,
    result: RunResult,
}

impl Row {
    fn metrics(&self) -> [f64; 5] {
        [
            self.read_latency_us_mean.unwrap_or(f64::NAN),
            self.write_latency_us_mean.unwrap_or(f64::NAN),
            self.erase_count_stddev_block,
            self.nand_erases as f64,
            self.nand_program_pages as f64,
        ]
    }
}

fn base_requests(quick: bool) -> u64 {
    if quick {
        20_000
    } else {
        200_000
    }
}

fn device_sets(quick: bool, setup: Setup) -> Vec<String> {
    let blocks = if quick { 64 } else { 1024 };
    let requests = base_requests(quick) * if setup.long { 4 } else { 1 };
    let logical = (32.0 * blocks as f64 * 64.0 * 0.8) as u64;
    vec![
        format!("device.blocks_per_plane={blocks}"),
        "device.spare_factor=0.2".into(),
        "workload.prefill=true".into(),
        format!("workload.aging_writes={}", if setup.full_aging { logical } else { 0 }),
        format!("workload.requests={requests}"),
        "workload.seed=1".into(),
        // The seed's experimentally chosen E (the config default is device.spare_factor).
        "gc.dt_e=0.1".into(),
    ]
}

/// `$FLASHLAB_TRACES`, else `../shared/traces` seen from the working folder or from the binary's checkout.
fn traces_dir() -> Option<PathBuf> {
    let mut candidates: Vec<PathBuf> = crate::trace_input::traces_env_dir().into_iter().collect();
    candidates.push(PathBuf::from("../shared/traces"));
    if let Ok(exe) = std::env::current_exe() {
        candidates.extend(exe.ancestors().skip(1).map(|a| a.join("../shared/traces")));
    }
    candidates.into_iter().find(|p| p.join("example.ascii").is_file())
}

fn run_one(
    w: &Workload,
    scheme: &str,
    quick: bool,
    setup: Setup,
    traces: Option<&Path>,
) -> anyhow::Result<Option<RunResult>> {
    let mut sets = device_sets(quick, setup);
    sets.push(format!("gc.preset={scheme}"));
    sets.extend(w.sets.iter().map(|s| s.to_string()));
    let Some((file, format)) = w.trace else {
        let (_, s) = flashlab_config::load("", "wpo-gc", &sets)?;
        return Ok(Some(flashlab_sim::run_synthetic(&s, &mut |_| {})?));
    };
    let Some(dir) = traces else { return Ok(None) };
    let path = dir.join(file);
    sets.extend([
        "workload.kind=trace".to_string(),
        format!("workload.trace_path={}", path.display()),
        "workload.arrival=trace".into(),
    ]);
    let (_, s) = flashlab_config::load("", "wpo-gc", &sets)?;
    let f = std::fs::File::open(&path).with_context(|| format!("cannot open {}", path.display()))?;
    let reader = TraceReader::with_choice(
        BufReader::new(f),
        FormatChoice::from_name(format)?,
        ReaderOptions::named(path.display().to_string()),
    )?;
    Ok(Some(flashlab_sim::run(&s, reader, &mut |_| {})?))
}

pub fn run(out: &Path, quick: bool) -> anyhow::Result<()> {
    let traces = traces_dir();
    let mut rows = Vec::new();
    for w in WORKLOADS {
        for setup in SETUPS.into_iter().filter(|s| !(s.long && w.trace.is_some())) {
            for (label, preset) in SCHEMES {
                eprintln!("wpo-gc: {} under {label}, {}, {} length", w.name, setup.aging(), setup.length());
                if let Some(r) = run_one(w, preset, quick, setup, traces.as_deref())? {
                    rows.push(Row {
                        workload: w.name.into(),
                        scheme: label.into(),
                        preset: preset.into(),
                        aging: setup.aging().into(),
                        length: setup.length().into(),
                        setup,
                        read_latency_us_mean: r.read_latency_us_mean,
                        write_latency_us_mean: r.write_latency_us_mean,
                        erase_count_stddev_block: r.erase_count_stddev_block,
                        erase_count_plane_stddev: r.erase_count_plane_stddev,
                        nand_erases: r.nand_erases,
                        nand_program_pages: r.nand_program_pages,
                        result: r,
                    });
                }
            }
        }
    }
    let md = markdown(&rows, quick, traces.is_some());
    print!("{md}");
    std::fs::write(out.join("results.md"), &md).with_context(|| format!("cannot write {}", out.display()))?;
    write_json(&out.join("results.json"), &rows)?;
    plots(out, &rows)
}

/// The row of `workload` under scheme `SCHEMES[scheme]` and `setup`.
fn find<'a>(rows: &'a [Row], workload: &str, scheme: usize, setup: Setup) -> Option<&'a Row> {
    rows.iter().find(|r| r.workload == workload && r.preset == SCHEMES[scheme].1 && r.setup == setup)
}

/// `a`'s metrics divided by `b`'s (NaN where `b`'s is not positive).
fn ratio(a: &Row, b: &Row) -> [f64; 5] {
    let (x, y) = (a.metrics(), b.metrics());
    std::array::from_fn(|k| if y[k] > 0.0 { x[k] / y[k] } else { f64::NAN })
}

/// The workloads that ran, in order.
fn workloads(rows: &[Row]) -> Vec<&str> {
    WORKLOADS.iter().map(|w| w.name).filter(|n| rows.iter().any(|r| r.workload == *n)).collect()
}

/// Each workload's headline metrics (the seed's set-up) under each headline scheme,
/// divided by Basic-GC's.
fn normalised(rows: &[Row]) -> Vec<(String, [[f64; 5]; 3])> {
    let mut out = Vec::new();
    for name in workloads(rows) {
        let Some(base) = find(rows, name, 0, SEED_SETUP) else { continue };
        let m = HEADLINE.map(|i| find(rows, name, i, SEED_SETUP).map_or([f64::NAN; 5], |r| ratio(r, base)));
        out.push((name.to_string(), m));
    }
    out
}

fn pct(x: f64) -> String {
    if x.is_finite() {
        format!("{:+.1} %", (x - 1.0) * 100.0)
    } else {
        "–".into()
    }
}

fn markdown(rows: &[Row], quick: bool, have_traces: bool) -> String {
    let mut s = String::new();
    let size = if quick {
        "--quick: 4 x 2 x 2 x 2 x 64 blocks x 64 pages x 2 KiB (256 MiB), 20 000 requests per synthetic run (80 000 at 4x)"
    } else {
        "the seed's device: 4 x 2 x 2 x 2 x 1024 blocks x 64 pages x 2 KiB (4 GiB), 200 000 requests per synthetic run (800 000 at 4x)"
    };
    let _ = writeln!(s, "# reproduce wpo-gc (seed 001)\n\nDevice: {size}; 20 % over-provisioning; SSDsim timing (tR 20 us, tPROG 200 us, tBERS 1.5 ms, 25 ns/B).");
    let _ = writeln!(s, "Schemes (`gc.preset`): Basic-GC (`ssdsim-basic`) = greedy + WECO-style hot/cold separation of migrations + blocking GC, one run per host page written while a plane has under 10 % free pages (SSDsim's shipped gc hard threshold); Basic-GC/2 blocks (`basic-gc`) = the same with GC below 2 free blocks per plane; DT-GC = two-level dynamic thresholds (the seed's a 0.3, b 0.1, A 0.5, B 0.3, c 0.2, E 0.1) + interruptible GC + greedy; WPO-GC = DT-GC's triggers + WPO victim score (k 10) + LPN-temperature placement of writes and migrations.\n");
    let _ = writeln!(s, "Aging: *prefill only* = the logical space written once sequentially before the run (untimed); *full aging* = then as many uniform random writes as the logical capacity (untimed).\n");
    if !have_traces {
        let _ = writeln!(
            s,
            "**../shared/traces was not found (set FLASHLAB_TRACES to its folder): only the synthetic stand-ins ran.**\n"
        );
    }
    let _ = writeln!(
        s,
        "Workloads (* = synthetic stand-in; the seed's Exchange, Financial and IntelSSD traces are not public):\n"
    );
    for w in WORKLOADS.iter().filter(|w| rows.iter().any(|r| r.workload == w.name)) {
        let _ = writeln!(s, "- **{}**: {}", w.name, w.what);
    }
    headline(&mut s, rows);
    sensitivity(&mut s, rows);
    raw_values(&mut s, rows);
    s
}

fn headline(s: &mut String, rows: &[Row]) {
    let _ = writeln!(s, "\n## WPO-GC and DT-GC against Basic-GC\n\nSet-up closest to the seed's: Basic-GC triggered on SSDsim's free-page ratio, prefill only, the seed's run length. – : the base scheme erased nothing (no ratio); the sensitivity table below shows the other set-ups.\n\n| metric | paper's claim (WPO vs Basic) | workload | DT-GC | WPO-GC |\n|---|---|---|---|---|");
    let norm = normalised(rows);
    for (k, (metric, claim)) in CLAIMS.iter().enumerate() {
        for (wi, (name, m)) in norm.iter().enumerate() {
            let (c, mtr) = if wi == 0 { (*claim, *metric) } else { ("", "") };
            let _ = writeln!(s, "| {mtr} | {c} | {name} | {} | {} |", pct(m[1][k]), pct(m[2][k]));
        }
    }
}

/// WPO-GC against Basic-GC (each trigger) and against DT-GC, under each set-up.
fn sensitivity(s: &mut String, rows: &[Row]) {
    let _ = writeln!(s, "\n## Sensitivity: WPO-GC's change under each set-up\n\nRows marked *vs DT-GC* compare WPO-GC with DT-GC (whose trigger does not depend on Basic-GC's); the others compare it with Basic-GC under the trigger named. Traces have a fixed length, so they have no 4x rows. The headline's set-up is marked ◀; – : the base scheme erased nothing in that run.\n\n| workload | against | aging | length | read | write | block erase sd | erases | page writes |\n|---|---|---|---|---|---|---|---|---|");
    let against = [(0, "vs Basic-GC (SSDsim ratio)"), (1, "vs Basic-GC (2 free blocks)"), (2, "*vs DT-GC*")];
    for name in workloads(rows) {
        for (base, label) in against {
            for setup in SETUPS {
                let (Some(w), Some(b)) = (find(rows, name, 3, setup), find(rows, name, base, setup)) else { continue };
                let m = ratio(w, b);
                let mark = if setup == SEED_SETUP && base != 1 { " ◀" } else { "" };
                let cells: Vec<String> = m.iter().map(|&x| pct(x)).collect();
                let _ = writeln!(
                    s,
                    "| {name} | {label}{mark} | {} | {} | {} |",
                    setup.aging(),
                    setup.length(),
                    cells.join(" | ")
                );
            }
        }
    }
}

fn raw_values(s: &mut String, rows: &[Row]) {
    let _ = writeln!(s, "\n## Raw values\n\n| workload | scheme | aging | length | read us | write us | write p99 us | block erase sd | plane erase sd | erases | page writes | WAF | die util |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    for r in rows {
        let f = |v: Option<f64>| v.map_or("–".into(), |x| format!("{x:.1}"));
        let waf = r.result.waf.map_or("–".into(), |w| format!("{w:.3}"));
        let util = r.result.die_utilization_mean.map_or("–".into(), |u| format!("{:.0} %", u * 100.0));
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {} | {} | {} | {:.2} | {:.2} | {} | {} | {waf} | {util} |",
            r.workload,
            r.scheme,
            r.aging,
            r.length,
            f(r.read_latency_us_mean),
            f(r.write_latency_us_mean),
            f(r.result.write_latency_us_p99),
            r.erase_count_stddev_block,
            r.erase_count_plane_stddev,
            r.nand_erases,
            r.nand_program_pages
        );
    }
}

fn plots(out: &Path, rows: &[Row]) -> anyhow::Result<()> {
    let norm = normalised(rows);
    let cats: Vec<String> = norm.iter().map(|(n, _)| n.clone()).collect();
    let figs = [
        ("fig6_read_response.png", "Fig. 6: mean read response time (normalised to Basic-GC)"),
        ("fig7_write_response.png", "Fig. 7: mean write response time (normalised to Basic-GC)"),
        ("fig10_erase_stddev.png", "Fig. 10: std-dev of per-block erase counts (normalised)"),
        ("fig8_erases.png", "Fig. 8: total erases (normalised to Basic-GC)"),
        ("fig9_page_writes.png", "Fig. 9: total page writes (normalised to Basic-GC)"),
    ];
    for (k, (file, title)) in figs.iter().enumerate() {
        let series: Vec<(String, Vec<f64>)> = HEADLINE
            .iter()
            .enumerate()
            .map(|(i, &scheme)| (SCHEMES[scheme].0.to_string(), norm.iter().map(|(_, m)| m[i][k]).collect()))
            .collect();
        grouped_bars(&out.join(file), title, "relative to Basic-GC", &cats, &series)?;
    }
    Ok(())
}

/// Each scheme's resolved configuration on the synthetic device, and each workload's overrides.
pub fn configs(quick: bool) -> anyhow::Result<Vec<crate::report::repro::ConfigUsed>> {
    use crate::report::repro::ConfigUsed;
    let mut out = Vec::new();
    for (label, preset) in SCHEMES {
        let mut sets = device_sets(quick, SEED_SETUP);
        sets.push(format!("gc.preset={preset}"));
        let (raw, _) = flashlab_config::load("", "wpo-gc", &sets)?;
        out.push(ConfigUsed {
            name: format!("{label}: resolved config before the workload's overrides"),
            text: flashlab_config::to_toml(&raw),
        });
    }
    let mut text = String::new();
    for w in WORKLOADS {
        let how = match w.trace {
            Some((file, format)) => {
                format!("trace ../shared/traces/{file} (format {format}), arrivals at its timestamps")
            }
            None => w.sets.join(" "),
        };
        let _ = writeln!(text, "{}: {how}", w.name);
    }
    out.push(ConfigUsed { name: "workload overrides (--set)".into(), text });
    Ok(out)
}
