//! `flashlab hotness`: compare hot-data identifiers on a workload.

use crate::config_cmd::{load_config, ConfigArgs};
use crate::output::{check_output, table, write_json};
use crate::plot::{scatter_logx, Point};
use clap::Args;
use flashlab_config::{Settings, Source};
use flashlab_sim::hotness::{self, HotnessRow};
use std::path::{Path, PathBuf};
use std::time::Instant;

#[derive(Args)]
pub struct HotnessArgs {
    #[command(flatten)]
    c: ConfigArgs,
    /// Write a PNG of accuracy against memory.
    #[arg(long)]
    plot: Option<PathBuf>,
}

pub fn hotness(a: HotnessArgs) -> anyhow::Result<()> {
    let (_, s) = load_config(&a.c.config, &a.c.sets)?;
    check_output(a.c.json.as_deref(), "--json")?;
    check_output(a.plot.as_deref(), "--plot")?;
    if s.hotness.waf && s.ftl.mapping.scheme != flashlab_ftl::Scheme::Page {
        // The separation WAF is measured on page mapping's write streams.
        eprintln!(
            "flashlab: warning: ftl.mapping = \"{}\" does not apply to hotness's WAF column, which uses page mapping",
            s.ftl.mapping.scheme.name()
        );
    }
    let (rows, writes) = compare(&s, &a.c.config)?;
    if !a.c.json_to_stdout() {
        print_table(&rows, writes);
    }
    if let Some(p) = &a.plot {
        let points: Vec<Point> = rows
            .iter()
            .map(|r| Point { label: r.name.clone(), x: r.memory_bytes as f64, y: r.false_hot_rate + r.false_cold_rate })
            .collect();
        scatter_logx(
            p,
            "Hot-data identifiers: error against memory",
            "memory (bytes, log)",
            "false-hot + false-cold rate",
            &points,
        )?;
    }
    if let Some(p) = &a.c.json {
        write_json(p, &rows)?;
    }
    Ok(())
}

/// One row per identifier (accuracy, memory, speed, and WAF when `hotness.waf`) and
/// the number of writes compared on; trace paths are relative to `config`.
pub fn compare(s: &Settings, config: &Path) -> anyhow::Result<(Vec<HotnessRow>, usize)> {
    let writes = collect_writes(s, config)?;
    if writes.is_empty() {
        anyhow::bail!("hotness: the workload has no writes");
    }
    let mut rows = hotness::accuracy(s, &writes)?;
    time_identifiers(s, &writes, &mut rows)?;
    if s.hotness.waf {
        for (i, row) in rows.iter_mut().enumerate() {
            row.waf = Some(hotness::separation_waf(s, i, &writes)?);
        }
    }
    Ok((rows, writes.len()))
}

fn collect_writes(s: &Settings, config: &Path) -> anyhow::Result<Vec<u64>> {
    Ok(match &s.workload.source {
        Source::Synthetic(_) => {
            let reqs =
                hotness::synthetic_requests(s).expect("synthetic workload").map(Ok::<_, std::convert::Infallible>);
            hotness::write_pages(s, reqs)?
        }
        Source::Trace(t) => hotness::write_pages(s, crate::trace_input::open_trace(t, config)?)?,
    })
}

/// ns per record-and-query: replay the writes through a fresh instance of each identifier.
fn time_identifiers(s: &Settings, writes: &[u64], rows: &mut [HotnessRow]) -> anyhow::Result<()> {
    let mut ids = hotness::build_identifiers(s)?;
    for (id, row) in ids.iter_mut().zip(rows.iter_mut()) {
        let start = Instant::now();
        let hot = flashlab_hotdata::replay(id, writes);
        let ns = start.elapsed().as_nanos() as f64 / writes.len() as f64;
        std::hint::black_box(hot);
        row.ns_per_write = Some(ns);
    }
    Ok(())
}

fn print_table(rows: &[HotnessRow], writes: usize) {
    println!("{writes} writes; false-hot rate = called hot when the oracle says cold; false-cold rate = the reverse");
    let mut lines = vec![("identifier", "false-hot  false-cold  memory B  ns/write  WAF".to_string())];
    let cells: Vec<(String, String)> = rows
        .iter()
        .map(|r| {
            let waf = r.waf.map_or("-".into(), |w| format!("{w:.3}"));
            let ns = r.ns_per_write.map_or("-".into(), |n| format!("{n:.1}"));
            (
                r.name.clone(),
                format!(
                    "{:>9.4}  {:>10.4}  {:>8}  {:>8}  {waf}",
                    r.false_hot_rate, r.false_cold_rate, r.memory_bytes, ns
                ),
            )
        })
        .collect();
    lines.extend(cells.iter().map(|(n, v)| (n.as_str(), v.clone())));
    table(&lines);
}
