//! `flashlab sweep`'s `index.html`: the summary table (mean and spread over seeds),
//! one plot per swept key and headline metric, and the base config and grid.
//!
//! A plot for key K shows, for each value of K, the mean of the metric over the
//! other keys' values, one such mean per seed; the line (or bar) "mean" is the mean
//! of those per-seed means, "min/max over seeds" their extremes (the seed spread;
//! the figure model has no error bars, so they are two more series, and the caption
//! states the largest relative spread).

use super::figure::{Axis, Figure, Line, Plot};
use super::html::{markdown, Page};
use crate::api::ConfigSource;
use crate::sweep::{SweepSpec, Table};
use crate::sweep_out::{number, summary_markdown};
use std::fmt::Write as _;

/// Headline metrics plotted per swept key (those with data), with their axis labels.
const METRICS: [(&str, &str); 3] = [
    ("waf", "write amplification (NAND writes / host writes)"),
    ("write_latency_us_mean", "mean write latency (µs)"),
    ("nand_erases", "NAND block erases (count)"),
];

/// The three series of one plot: per value of the key, mean / min / max over seeds.
struct Spread {
    mean: Vec<f64>,
    min: Vec<f64>,
    max: Vec<f64>,
}

/// Per value of grid key `g`: the per-seed means of `metric` over the other keys, summarised.
/// `None` when the metric has no value in any row.
fn spread(spec: &SweepSpec, t: &Table, g: usize, metric: &str) -> Option<Spread> {
    let col = t.get(metric)?;
    let tasks = spec.tasks();
    let values = &spec.grid[g].1;
    let mut s = Spread { mean: vec![], min: vec![], max: vec![] };
    for v in values {
        let per_seed: Vec<f64> = (0..spec.seeds.len())
            .filter_map(|si| {
                let xs: Vec<f64> = tasks
                    .iter()
                    .enumerate()
                    .filter(|(_, task)| task.seed_index == si && spec.values(task.point)[g] == v)
                    .filter_map(|(i, _)| number(col, i))
                    .collect();
                (!xs.is_empty()).then(|| xs.iter().sum::<f64>() / xs.len() as f64)
            })
            .collect();
        if per_seed.is_empty() {
            s.mean.push(f64::NAN);
            s.min.push(f64::NAN);
            s.max.push(f64::NAN);
            continue;
        }
        s.mean.push(per_seed.iter().sum::<f64>() / per_seed.len() as f64);
        s.min.push(per_seed.iter().copied().fold(f64::INFINITY, f64::min));
        s.max.push(per_seed.iter().copied().fold(f64::NEG_INFINITY, f64::max));
    }
    s.mean.iter().any(|x| x.is_finite()).then_some(s)
}

/// A key's value as a number, if it is one.
fn numeric(v: &toml::Value) -> Option<f64> {
    match v {
        toml::Value::Integer(i) => Some(*i as f64),
        toml::Value::Float(f) => Some(*f),
        _ => None,
    }
}

/// A key's value as a label (strings without quotes).
fn label(v: &toml::Value) -> String {
    match v {
        toml::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// An id fragment: lower-case letters and digits, anything else a dash.
pub fn slug(s: &str) -> String {
    s.chars().map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_lowercase() } else { '-' }).collect()
}

/// The largest (max − min) / |mean| over the key's values, as a caption phrase.
fn spread_phrase(s: &Spread) -> String {
    let rel = s
        .mean
        .iter()
        .zip(s.min.iter().zip(&s.max))
        .filter(|(m, _)| m.is_finite() && **m != 0.0)
        .map(|(m, (lo, hi))| (hi - lo) / m.abs())
        .fold(0.0f64, f64::max);
    format!("largest seed spread (max − min over seeds, relative to the mean): {:.2} %", rel * 100.0)
}

/// One figure per grid key and headline metric with data, in grid order.
pub fn figures(spec: &SweepSpec, t: &Table) -> Vec<Figure> {
    let mut out = Vec::new();
    for (g, (key, values)) in spec.grid.iter().enumerate() {
        let xs: Option<Vec<f64>> = values.iter().map(numeric).collect();
        for (metric, y_label) in METRICS {
            let Some(s) = spread(spec, t, g, metric) else { continue };
            let caption = format!(
                "{metric} against {key}: mean over {} seed(s) and the other keys' values; \
                 min/max: extremes of the per-seed means. {}.",
                spec.seeds.len(),
                spread_phrase(&s)
            );
            let plot = match &xs {
                Some(xs) => {
                    let line = |name: &str, ys: &[f64]| Line {
                        name: name.into(),
                        points: xs.iter().copied().zip(ys.iter().copied()).filter(|p| p.1.is_finite()).collect(),
                    };
                    // The mean last: drawn on top where the seed spread is too small to see.
                    let mut lines = Vec::new();
                    if spec.seeds.len() > 1 {
                        lines.push(line("min over seeds", &s.min));
                        lines.push(line("max over seeds", &s.max));
                    }
                    lines.push(line("mean", &s.mean));
                    Plot::Lines { x: Axis::auto(key.clone(), xs.iter().copied(), 2.0), y: Axis::linear(y_label), lines }
                }
                None => {
                    let mut series = vec![("mean".to_string(), s.mean.clone())];
                    if spec.seeds.len() > 1 {
                        series.insert(0, ("min over seeds".into(), s.min.clone()));
                        series.push(("max over seeds".into(), s.max.clone()));
                    }
                    Plot::Bars {
                        x_label: key.clone(),
                        y: Axis::linear(y_label),
                        categories: values.iter().map(label).collect(),
                        series,
                    }
                }
            };
            out.push(Figure {
                id: format!("sweep-{}-{}", slug(key), slug(metric)),
                title: format!("{metric} by {key}"),
                caption,
                plot,
            });
        }
    }
    out
}

/// The sweep as TOML-like text: seeds, mode, overrides and grid.
fn grid_text(spec: &SweepSpec) -> String {
    let mut o = format!("seeds = {:?}\nmode = \"{}\"\n", spec.seeds, if spec.zip { "zip" } else { "cartesian" });
    if !spec.sets.is_empty() {
        o.push_str("[set]\n");
        for s in &spec.sets {
            let (k, v) = s.split_once('=').unwrap_or((s, ""));
            let _ = writeln!(o, "\"{k}\" = {v}");
        }
    }
    o.push_str("[grid]\n");
    for (k, v) in &spec.grid {
        let vs: Vec<String> = v.iter().map(toml::Value::to_string).collect();
        let _ = writeln!(o, "\"{k}\" = [{}]", vs.join(", "));
    }
    o
}

/// The base config's text (the file as written, or the inline text).
fn base_text(spec: &SweepSpec) -> anyhow::Result<(String, String)> {
    match &spec.base {
        ConfigSource::Path(p) => {
            let text = std::fs::read_to_string(p)
                .map_err(|e| anyhow::anyhow!("cannot read base config {}: {e}", p.display()))?;
            let name = p.file_name().map_or(p.display().to_string(), |n| n.to_string_lossy().into());
            Ok((name, text))
        }
        ConfigSource::Text { text, name, .. } => Ok((name.clone(), text.clone())),
    }
}

/// The whole page. `name` titles it (the sweep file's stem).
pub fn page(name: &str, spec: &SweepSpec, t: &Table) -> anyhow::Result<String> {
    let mut page = Page::new(&format!("flashlab sweep {name}"));
    page.raw(&markdown(&summary_markdown(spec, t).replacen("# Sweep summary", "## Summary", 1)));
    page.heading("Plots per swept key");
    let figs = figures(spec, t);
    if figs.is_empty() {
        page.note("No headline metric (waf, write_latency_us_mean, nand_erases) has data, or nothing is swept.");
    }
    for f in &figs {
        page.figure(f)?;
    }
    page.heading("Base config and grid");
    let (base_name, base) = base_text(spec)?;
    page.pre(&format!("base config: {base_name}"), &base);
    page.pre("sweep: seeds, overrides and grid", &grid_text(spec));
    Ok(page.finish())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn spec(grid: Vec<(&str, Vec<toml::Value>)>, seeds: Vec<u64>) -> SweepSpec {
        SweepSpec {
            base: ConfigSource::Text { text: "[device]\n".into(), name: "base.toml".into(), dir: ".".into() },
            grid: grid.into_iter().map(|(k, v)| (k.to_string(), v)).collect(),
            zip: false,
            seeds,
            sets: vec![],
        }
    }

    /// 2 × 2 points × 2 seeds; waf = a + 10·(b == "y") + seed (sums of small integers: exact).
    fn table() -> (SweepSpec, Table) {
        let s = spec(
            vec![
                ("a", vec![toml::Value::Integer(1), toml::Value::Integer(1000)]),
                ("b", vec![toml::Value::String("x".into()), toml::Value::String("y".into())]),
            ],
            vec![1, 3],
        );
        let results: Vec<_> = s
            .tasks()
            .iter()
            .map(|t| {
                let a = if t.point / 2 == 0 { 1.0 } else { 1000.0 };
                let b = (t.point % 2) as f64;
                json!({"waf": a + 10.0 * b + t.seed as f64, "nand_erases": 7})
            })
            .collect();
        let t = Table::new(&s, &results);
        (s, t)
    }

    #[test]
    fn spread_averages_other_keys_then_spans_seeds() {
        let (s, t) = table();
        // key a = 1: seed 1 → mean(1+0+1, 1+10+1) = 7; seed 3 → 9.
        let sp = spread(&s, &t, 0, "waf").unwrap();
        assert_eq!(
            (sp.mean.clone(), sp.min.clone(), sp.max.clone()),
            (vec![8.0, 1007.0], vec![7.0, 1006.0], vec![9.0, 1008.0])
        );
        // key b = "y": seed 1 → mean(1+10+1, 1000+10+1) = 511.5; seed 3 → 513.5.
        let sp = spread(&s, &t, 1, "waf").unwrap();
        assert_eq!((sp.mean, sp.min, sp.max), (vec![502.5, 512.5], vec![501.5, 511.5], vec![503.5, 513.5]));
        assert!(spread(&s, &t, 0, "write_latency_us_mean").is_none(), "absent metric");
    }

    #[test]
    fn numeric_keys_draw_lines_string_keys_bars() {
        let (s, t) = table();
        let f = figures(&s, &t);
        let ids: Vec<&str> = f.iter().map(|f| f.id.as_str()).collect();
        assert_eq!(ids, ["sweep-a-waf", "sweep-a-nand-erases", "sweep-b-waf", "sweep-b-nand-erases"]);
        let Plot::Lines { x, lines, .. } = &f[0].plot else { panic!("numeric key: lines") };
        assert!(x.log, "1..1000 spans 3 decades");
        assert_eq!(lines.len(), 3);
        assert_eq!(lines[2], Line { name: "mean".into(), points: vec![(1.0, 8.0), (1000.0, 1007.0)] });
        assert_eq!(lines[0].points, [(1.0, 7.0), (1000.0, 1006.0)], "min over seeds");
        let Plot::Bars { categories, series, .. } = &f[2].plot else { panic!("string key: bars") };
        assert_eq!(categories, &["x", "y"]);
        assert_eq!(series[2], ("max over seeds".to_string(), vec![503.5, 513.5]));
        assert!(f[1].caption.contains("0.00 %"), "{}", f[1].caption);
    }

    #[test]
    fn page_is_deterministic_and_lists_grid() {
        let (s, t) = table();
        let p = page("s", &s, &t).unwrap();
        assert_eq!(p, page("s", &s, &t).unwrap());
        assert_eq!(p.matches("<figure class=\"plot\"").count(), 4);
        assert!(
            p.contains("&quot;a&quot; = [1, 1000]") && p.contains("&quot;b&quot; = [&quot;x&quot;, &quot;y&quot;]"),
            "grid"
        );
        assert!(p.contains("<h2>Summary</h2>"));
    }
}
