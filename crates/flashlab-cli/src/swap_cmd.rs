//! `flashlab swap`: an application model (or a page-reference trace) over a swap area
//! on the configured SSD, or on the disk baseline (`swap.device = "disk"`).

use crate::config_cmd::{load_config, ConfigArgs};
use crate::output::{check_output, opt, table, write_json};
use anyhow::Context;
use flashlab_config::RawConfig;
use flashlab_sim::{Settings, Ssd};
use flashlab_swap::disk::{Disk, DiskParams};
use flashlab_swap::{trace, AppModel, BlockDev, DeviceKind, SwapResult, SwapSettings, Workload};
use std::path::Path;
use std::time::Instant;

/// The application models shipped in examples/swap/apps, by name.
pub const BUILTIN_APPS: [(&str, &str); 4] = [
    ("imagemagick", include_str!("../../../examples/swap/apps/imagemagick.toml")),
    ("postgresql", include_str!("../../../examples/swap/apps/postgresql.toml")),
    ("matlab", include_str!("../../../examples/swap/apps/matlab.toml")),
    ("eclipse", include_str!("../../../examples/swap/apps/eclipse.toml")),
];

pub fn swap(a: ConfigArgs) -> anyhow::Result<()> {
    let (raw, s) = load_config(&a.config, &a.sets)?;
    check_output(a.json.as_deref(), "--json")?;
    let r = run_swap(&raw, &s, &a.config)?;
    if !a.json_to_stdout() {
        print(&r);
    }
    if let Some(p) = &a.json {
        write_json(p, &r)?;
    }
    Ok(())
}

/// A built-in application model by name (`swap.app = "imagemagick"`).
pub fn builtin_app(name: &str) -> anyhow::Result<AppModel> {
    let Some((_, text)) = BUILTIN_APPS.iter().find(|(n, _)| *n == name) else {
        let names: Vec<_> = BUILTIN_APPS.iter().map(|(n, _)| format!("\"{n}\"")).collect();
        anyhow::bail!(
            "swap.app = \"{name}\": expected one of {} or a path to a model file ending in .toml",
            names.join(", ")
        );
    };
    Ok(AppModel::from_toml(text, &format!("{name} (built in)"))?)
}

/// Run the swap experiment `raw.swap` describes; files are relative to `config`.
pub fn run_swap(raw: &RawConfig, s: &Settings, config: &Path) -> anyhow::Result<SwapResult> {
    let ss = SwapSettings::resolve(&raw.swap, s)?;
    let dir = config.parent().unwrap_or(Path::new("."));
    let read = |key: &str, p: &str| {
        let path = dir.join(p);
        std::fs::read_to_string(&path).with_context(|| format!("swap.{key} = \"{p}\": cannot read {}", path.display()))
    };
    let (model, refs) = match (raw.swap.app.as_str(), raw.swap.trace.as_str()) {
        ("", "") => anyhow::bail!("swap.app: expected an application (a built-in name or a .toml model) or swap.trace"),
        (_, t) if !t.is_empty() => (None, Some(trace::parse(&read("trace", t)?, t)?)),
        (app, _) if app.ends_with(".toml") => (Some(AppModel::from_toml(&read("app", app)?, app)?), None),
        (app, _) => (Some(builtin_app(app)?), None),
    };
    let w = match (&model, &refs) {
        (Some(m), _) => Workload::App(m),
        (_, Some(t)) => Workload::Trace(t),
        _ => unreachable!("a model or a trace"),
    };
    run_on(&ss, s, w)
}

/// Run `w` with swap settings `ss` over a fresh device built from `s`.
pub fn run_on(ss: &SwapSettings, s: &Settings, w: Workload) -> anyhow::Result<SwapResult> {
    let t0 = Instant::now();
    let (dev, timed) = match ss.device {
        DeviceKind::Ssd => (BlockDev::Ssd(Box::new(Ssd::new(s.clone())?)), s.timing.is_some()),
        DeviceKind::Disk => {
            let bytes = ss.slots as u64 * flashlab_swap::area::SLOT_BYTES;
            (BlockDev::Disk(Disk::new(DiskParams::default(), bytes, ss.slots)), true)
        }
    };
    let mut r = flashlab_swap::run(ss, dev, w, s.ftl.track_content, timed)?;
    r.wall_time_s = t0.elapsed().as_secs_f64();
    Ok(r)
}

fn print(r: &SwapResult) {
    let f = |v: f64| format!("{v:.3}");
    table(&[
        ("application", r.app.clone()),
        ("allocator / device", format!("{} / {}", r.allocator, r.device)),
        ("RAM / swap / footprint (MiB)", format!("{} / {} / {:.0}", r.ram_mib, r.swap_mib, r.footprint_mib)),
        ("swapping", if r.swapping { "yes".into() } else { "no (the footprint fits in RAM)".into() }),
        ("run time (s)", opt(r.run_time_s, 3)),
        ("CPU time (s)", f(r.cpu_time_s)),
        ("waiting for swap I/O (s)", opt(r.swap_io_wait_s, 3)),
        ("waiting for TRIM (s)", opt(r.trim_wait_s, 3)),
        ("swap-outs / swap-ins (pages)", format!("{} / {}", r.swap_outs, r.swap_ins)),
        ("TRIM commands", r.trim_commands.to_string()),
        (
            "TRIM time total (s) / mean (ms)",
            format!("{} / {}", opt(r.trim_time_s_total, 3), opt(r.trim_time_ms_mean, 3)),
        ),
        ("SSD WAF", opt(r.ssd_waf, 3)),
        ("SSD erases / GC runs", format!("{} / {}", fmt_u(r.ssd_erases), fmt_u(r.ssd_gc_runs))),
    ]);
}

fn fmt_u(v: Option<u64>) -> String {
    v.map_or("-".into(), |v| v.to_string())
}
