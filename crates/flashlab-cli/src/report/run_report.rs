//! The figures and page of one `flashlab run`.

use super::figure::{Axis, Figure, Line, Plot};
use super::html::Page;
use crate::series::Span;
use flashlab_nand::Geometry;
use flashlab_sim::{RunEnd, RunResult};

/// Everything a run report shows.
pub struct RunData<'a> {
    pub title: String,
    pub result: &'a RunResult,
    /// The resolved configuration as TOML.
    pub config_toml: String,
    pub geometry: Geometry,
    pub warmup: u64,
    pub spans: Vec<Span>,
    pub first_issue_ns: Option<u64>,
    pub end: Option<RunEnd>,
}

/// Result fields of the mapping schemes' extra work, drawn when the result has them.
const MAPPING_WORK: [&str; 7] = [
    "merges_switch",
    "merges_partial",
    "merges_full",
    "merge_copied_pages",
    "padding_pages",
    "map_reads",
    "map_writes",
];

/// The figures of a run, in page order (figures without data are kept: the page notes them).
pub fn figures(d: &RunData) -> Vec<Figure> {
    let mut f = vec![latency_cdf(d.end.as_ref())];
    f.extend(time_series(d));
    if let Some(end) = &d.end {
        f.push(erase_histogram(end));
        f.push(plane_heat(end, &d.geometry));
        f.push(programs_by_cause(end));
    }
    f.extend(mapping_work(&serde_json::to_value(d.result).unwrap_or_default()));
    f
}

fn latency_cdf(end: Option<&RunEnd>) -> Figure {
    let lines = end
        .map(|e| {
            [("read", &e.read_latency_cdf), ("write", &e.write_latency_cdf)]
                .into_iter()
                .filter(|(_, c)| !c.is_empty())
                .map(|(n, c)| Line { name: n.into(), points: cdf_steps(c) })
                .collect()
        })
        .unwrap_or_default();
    Figure {
        id: "latency-cdf".into(),
        title: "Request latency CDF".into(),
        caption: "Share of measured requests completing within a latency (from the HDR histograms, 3 significant digits); log latency axis. Empty in counting mode (timing.enabled = false).".into(),
        plot: Plot::Lines {
            x: Axis::log("latency (µs, log scale)"),
            y: Axis::linear("fraction of requests ≤ latency"),
            lines,
        },
    }
}

/// An empirical CDF drawn as steps: 0 before the first point, each level held until the next point.
pub fn cdf_steps(cdf: &[(f64, f64)]) -> Vec<(f64, f64)> {
    let mut out = Vec::with_capacity(cdf.len() * 2);
    let mut level = 0.0;
    for &(x, f) in cdf {
        out.extend([(x, level), (x, f)]);
        level = f;
    }
    out
}

/// The x value of a span: simulated seconds since the first request, or requests in counting mode.
fn span_x(d: &RunData, s: &Span) -> f64 {
    match (s.end_ns, d.first_issue_ns) {
        (Some(t), Some(t0)) => t.saturating_sub(t0) as f64 / 1e9,
        _ => s.end_requests as f64,
    }
}

fn time_series(d: &RunData) -> Vec<Figure> {
    let timed = d.spans.iter().all(|s| s.end_ns.is_some()) && d.first_issue_ns.is_some();
    let x_label = if timed { "simulated time (s)" } else { "requests (counting mode)" };
    let warm =
        if d.warmup > 0 { format!(" Includes the {} warm-up requests at the start.", d.warmup) } else { String::new() };
    // Each span's start and end on the x axis, and its length (s, or thousands of requests).
    let mut prev = (0.0, d.first_issue_ns.unwrap_or(0), 0u64);
    let mut xs = Vec::new();
    for s in &d.spans {
        let x = span_x(d, s);
        let len = match s.end_ns {
            Some(t) if timed => t.saturating_sub(prev.1) as f64 / 1e9,
            _ => (s.end_requests - prev.2) as f64 / 1000.0,
        };
        xs.push((prev.0, x, len));
        prev = (x, s.end_ns.unwrap_or(0), s.end_requests);
    }
    // A value per span, drawn as a step held over the span.
    let steps = |f: &dyn Fn(&Span, f64) -> Option<f64>| -> Vec<(f64, f64)> {
        d.spans
            .iter()
            .zip(&xs)
            .filter_map(|(s, &(x0, x1, len))| f(s, len).map(|v| [(x0, v), (x1, v)]))
            .flatten()
            .collect()
    };
    let per = |f: &dyn Fn(&Span) -> Option<f64>| steps(&|s, _| f(s));
    let rate = |f: &dyn Fn(&Span) -> u64| steps(&|s, len| (len > 0.0).then(|| f(s) as f64 / len));
    let mut cumulative = Vec::new();
    let (mut host, mut nand) = (0u64, 0u64);
    for (s, &(_, x, _)) in d.spans.iter().zip(&xs) {
        (host, nand) = (host + s.host_writes, nand + s.nand_programs);
        if host > 0 {
            cumulative.push((x, nand as f64 / host as f64));
        }
    }
    let unit = if timed { "per simulated second" } else { "per 1000 requests" };
    let mut figs = Vec::new();
    if timed {
        figs.push(Figure {
            id: "throughput".into(),
            title: "Throughput over simulated time".into(),
            caption: format!(
                "Requests completed per simulated second, each interval's value held over the interval.{warm}"
            ),
            plot: Plot::Lines {
                x: Axis::linear(x_label),
                y: Axis::linear("throughput (requests/s)"),
                lines: vec![Line { name: "requests/s".into(), points: rate(&|s| s.requests) }],
            },
        });
    }
    figs.push(Figure {
        id: "waf".into(),
        title: "Write amplification over time".into(),
        caption: format!(
            "NAND page programs per host page written: in each interval, and cumulative since the first request.{warm}"
        ),
        plot: Plot::Lines {
            x: Axis::linear(x_label),
            y: Axis::linear("WAF (NAND programs / host page writes)"),
            lines: vec![
                Line { name: "interval WAF".into(), points: per(&|s| s.waf()) },
                Line { name: "cumulative WAF".into(), points: cumulative },
            ],
        },
    });
    let gc = vec![
        Line { name: "host page writes".into(), points: rate(&|s| s.host_writes) },
        Line { name: "GC page copies".into(), points: rate(&|s| s.gc_copied) },
    ];
    let y = Axis::auto(format!("pages {unit}"), gc.iter().flat_map(|l| l.points.iter().map(|p| p.1)), 2.0);
    figs.push(Figure {
        id: "gc-activity".into(),
        title: "GC activity over time".into(),
        caption: format!(
            "Host page writes and the pages GC copied, {unit}, per interval; on a log axis an interval with none is a gap.{warm}"
        ),
        plot: Plot::Lines { x: Axis::linear(x_label), y, lines: gc },
    });
    if timed {
        let lat = vec![
            Line { name: "read".into(), points: per(&|s| s.mean_us(s.read_ns, s.reads)) },
            Line { name: "write".into(), points: per(&|s| s.mean_us(s.write_ns, s.writes)) },
            Line { name: "GC wait".into(), points: per(&|s| s.mean_us(s.gc_wait_ns, s.requests).filter(|v| *v > 0.0)) },
        ];
        let lat: Vec<Line> = lat.into_iter().filter(|l| !l.points.is_empty()).collect();
        let y = Axis::auto("mean latency (µs)", lat.iter().flat_map(|l| l.points.iter().map(|p| p.1)), 2.0);
        figs.push(Figure {
            id: "latency-over-time".into(),
            title: "Mean latency over time".into(),
            caption: format!(
                "Mean read and write latency, and mean time a request waited behind GC, per interval.{warm}"
            ),
            plot: Plot::Lines { x: Axis::linear(x_label), y, lines: lat },
        });
    }
    figs
}

/// Categories and counts of a histogram of per-block erases: one bin per value up
/// to 40 values, else 30 bins of equal width.
pub fn erase_bins(erases: &[u64]) -> (Vec<String>, Vec<f64>) {
    let max = erases.iter().copied().max().unwrap_or(0);
    let width = if max < 40 { 1 } else { (max + 1).div_ceil(30) };
    let n = (max / width + 1) as usize;
    let mut counts = vec![0f64; n];
    for &e in erases {
        counts[(e / width) as usize] += 1.0;
    }
    let names = (0..n as u64)
        .map(|i| if width == 1 { i.to_string() } else { format!("{}–{}", i * width, i * width + width - 1) })
        .collect();
    (names, counts)
}

fn erase_histogram(end: &RunEnd) -> Figure {
    let (categories, counts) = erase_bins(&end.block_erases);
    let y = Axis::auto("blocks", counts.iter().copied(), 2.0);
    Figure {
        id: "erase-histogram".into(),
        title: "Erase-count histogram".into(),
        caption: format!(
            "Blocks by the number of times each was erased during measurement ({} blocks).",
            end.block_erases.len()
        ),
        plot: Plot::Bars { x_label: "erases per block".into(), y, categories, series: vec![("blocks".into(), counts)] },
    }
}

fn plane_heat(end: &RunEnd, g: &Geometry) -> Figure {
    let bpp = end.blocks_per_plane.max(1) as usize;
    let per_plane: Vec<f64> = end.block_erases.chunks(bpp).map(|c| c.iter().sum::<u64>() as f64).collect();
    let per_channel = (g.planes() / g.channels.max(1)) as usize;
    let columns = (0..per_channel as u32)
        .map(|p| {
            let a = g.plane_addr(p);
            format!("{}.{}.{}", a.chip, a.die, a.plane)
        })
        .collect();
    Figure {
        id: "plane-heat".into(),
        title: "Erases per plane".into(),
        caption: "Erases of each plane during measurement: one row per channel, one column per chip.die.plane.".into(),
        plot: Plot::Heat {
            x_label: "chip.die.plane".into(),
            y_label: "channel".into(),
            columns,
            rows: (0..g.channels).map(|c| format!("ch {c}")).collect(),
            cells: per_plane.chunks(per_channel.max(1)).map(|r| r.to_vec()).collect(),
            unit: "erases".into(),
        },
    }
}

fn programs_by_cause(end: &RunEnd) -> Figure {
    let categories: Vec<String> = end.programs_by_cause.iter().map(|c| c.0.replace('_', " ")).collect();
    let values: Vec<f64> = end.programs_by_cause.iter().map(|c| c.1 as f64).collect();
    let y = Axis::auto("NAND page programs", values.iter().copied(), 2.0);
    Figure {
        id: "programs-by-cause".into(),
        title: "NAND page programs by cause".into(),
        caption: "Page programs during measurement, by what caused them (every cause the NAND layer counts).".into(),
        plot: Plot::Bars { x_label: "cause".into(), y, categories, series: vec![("programs".into(), values)] },
    }
}

/// Mapping-scheme work (merges, padding, map-page traffic) from the result fields that exist.
pub fn mapping_work(result: &serde_json::Value) -> Option<Figure> {
    let found: Vec<(String, f64)> =
        MAPPING_WORK.iter().filter_map(|k| result.get(*k)?.as_f64().map(|v| (k.to_string(), v))).collect();
    if found.is_empty() {
        return None;
    }
    let values: Vec<f64> = found.iter().map(|f| f.1).collect();
    let y = Axis::auto("count", values.iter().copied(), 2.0);
    Some(Figure {
        id: "mapping-work".into(),
        title: "Mapping-scheme work".into(),
        caption: "Merges (switch, partial, full) and their copied pages, padding pages, and mapping-table page reads and writes.".into(),
        plot: Plot::Bars {
            x_label: "result field".into(),
            y,
            categories: found.into_iter().map(|f| f.0).collect(),
            series: vec![("count".into(), values)],
        },
    })
}

/// The headline rows: (label, result fields shown, joined by " / ").
const HEADLINE: [(&str, &[&str]); 10] = [
    ("requests (reads / writes / trims)", &["requests", "read_requests", "write_requests", "trim_requests"]),
    ("host pages read / written / trimmed", &["host_read_pages", "host_write_pages", "host_trim_pages"]),
    ("NAND page reads / programs / erases", &["nand_read_pages", "nand_program_pages", "nand_erases"]),
    ("GC runs / pages copied", &["gc_runs", "gc_copied_pages"]),
    ("WAF (closed form)", &["waf", "waf_closed_form"]),
    (
        "erases per block min / max / mean / sd",
        &["erase_count_min", "erase_count_max", "erase_count_mean", "erase_count_stddev"],
    ),
    (
        "read latency µs mean / p50 / p99 / max",
        &["read_latency_us_mean", "read_latency_us_p50", "read_latency_us_p99", "read_latency_us_max"],
    ),
    (
        "write latency µs mean / p50 / p99 / max",
        &["write_latency_us_mean", "write_latency_us_p50", "write_latency_us_p99", "write_latency_us_max"],
    ),
    ("IOPS / bandwidth MiB/s", &["iops", "bandwidth_mib_s"]),
    ("simulated time s", &["sim_time_s"]),
];

/// A number to 4 significant digits (integers in full), null as "–".
fn brief(v: Option<&serde_json::Value>) -> String {
    match v {
        Some(serde_json::Value::Number(n)) if n.is_f64() => {
            let x = n.as_f64().unwrap_or(f64::NAN);
            if x == 0.0 {
                return "0".into();
            }
            let digits = (3 - x.abs().max(1e-9).log10().floor() as i32).clamp(0, 6) as usize;
            format!("{x:.digits$}")
        }
        Some(serde_json::Value::Null) | None => "–".into(),
        Some(v) => cell(v),
    }
}

/// A result value as table text: numbers as JSON prints them, null as "–".
fn cell(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::Null => "–".into(),
        serde_json::Value::String(s) => s.clone(),
        v => v.to_string(),
    }
}

/// The page: summary, figures, resolved config. `wall_time_s` is left out (it is
/// host wall-clock time, and the page is byte-identical across runs).
pub fn page(d: &RunData, figs: &[Figure]) -> anyhow::Result<String> {
    let mut p = Page::new(&d.title);
    p.para("Everything on this page is simulated and deterministic: the same configuration gives the same page. The host's wall-clock time (wall_time_s in the JSON result) is left out.");
    p.heading("Summary");
    let json = serde_json::to_value(d.result)?;
    let headline: Vec<Vec<String>> = HEADLINE
        .iter()
        .map(|(label, keys)| {
            let values: Vec<String> = keys.iter().map(|k| brief(json.get(*k))).collect();
            vec![label.to_string(), values.join(" / ")]
        })
        .collect();
    p.table(&["measured after prefill and warm-up", "value"], &headline);
    p.heading("Plots");
    for f in figs {
        p.figure(f)?;
    }
    p.heading("Result and configuration");
    let rows: Vec<Vec<String>> = json
        .as_object()
        .into_iter()
        .flatten()
        .filter(|(k, _)| !matches!(k.as_str(), "config" | "wall_time_s"))
        .map(|(k, v)| vec![k.clone(), cell(v)])
        .collect();
    p.details_table("every result field (JSON values; wall_time_s left out)", &["result field", "value"], &rows);
    p.pre("config (TOML, every key)", &d.config_toml);
    Ok(p.finish())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn brief_numbers() {
        let v = serde_json::json!({"a": 4.90275, "b": 1511.845, "c": 0.000123456, "d": 7, "e": null, "z": 0.0});
        let got: Vec<String> = ["a", "b", "c", "d", "e", "f", "z"].iter().map(|k| brief(v.get(*k))).collect();
        assert_eq!(got, ["4.903", "1512", "0.000123", "7", "–", "–", "0"]);
    }

    #[test]
    fn cdf_steps_start_at_zero() {
        assert_eq!(cdf_steps(&[(1.0, 0.25), (2.0, 1.0)]), [(1.0, 0.0), (1.0, 0.25), (2.0, 0.25), (2.0, 1.0)]);
        assert!(cdf_steps(&[]).is_empty());
    }

    #[test]
    fn erase_bins_exact() {
        assert_eq!(erase_bins(&[0, 2, 2]), (vec!["0".into(), "1".into(), "2".into()], vec![1.0, 0.0, 2.0]));
        let (names, counts) = erase_bins(&[0, 59, 30]);
        assert_eq!((names.len(), names[0].as_str(), names[29].as_str()), (30, "0–1", "58–59"));
        assert_eq!((counts[0], counts[15], counts[29]), (1.0, 1.0, 1.0));
    }

    #[test]
    fn mapping_work_draws_the_fields_present() {
        assert!(mapping_work(&serde_json::json!({"waf": 1.0})).is_none());
        let f = mapping_work(&serde_json::json!({"merges_full": 3, "padding_pages": 10, "map_reads": null})).unwrap();
        let Plot::Bars { categories, series, .. } = f.plot else { panic!() };
        assert_eq!(categories, ["merges_full", "padding_pages"]);
        assert_eq!(series[0].1, [3.0, 10.0]);
    }
}
