//! Parameter sweeps: a base config, a grid of `--set` keys (cartesian product or zipped
//! lists) and a list of seeds. Each point × seed is one run; finished runs are appended
//! to `runs.jsonl` in the output folder, so an interrupted sweep resumes where it
//! stopped. The table ([`Table`]) has one row per point and seed, in point order
//! whatever order the runs finished in, so the same sweep gives the same table with any
//! number of jobs or Dask workers (every column but `wall_time_s`).
//!
//! The sweep file:
//! ```toml
//! base = "ssd.toml"            # relative to the sweep file
//! seeds = [1, 2, 3]
//! mode = "cartesian"           # or "zip": the i-th values of every key together
//! [set]                        # overrides for every point
//! "workload.requests" = 100000
//! [grid]                       # keys in alphabetical order (TOML tables are unordered)
//! "gc.victim" = ["greedy", "fifo"]
//! "device.spare_factor" = [0.07, 0.1, 0.2]
//! ```

use crate::api::{ConfigSource, Recorder};
use anyhow::{bail, Context};
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;

/// A validated sweep.
#[derive(Clone, Debug, PartialEq)]
pub struct SweepSpec {
    pub base: ConfigSource,
    /// Dotted keys and their values (TOML literals), in column order.
    pub grid: Vec<(String, Vec<toml::Value>)>,
    pub zip: bool,
    pub seeds: Vec<u64>,
    /// `KEY=VALUE` overrides applied to every point before the grid's.
    pub sets: Vec<String>,
}

/// One run of the sweep.
#[derive(Clone, Debug, PartialEq)]
pub struct Task {
    /// Grid point (0-based) and position of its seed in `seeds`.
    pub point: usize,
    pub seed_index: usize,
    pub seed: u64,
    /// Every override of the run, the grid's and the seed included.
    pub sets: Vec<String>,
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSweep {
    base: String,
    seeds: Vec<u64>,
    #[serde(default)]
    mode: Option<String>,
    #[serde(default)]
    set: toml::Table,
    grid: toml::Table,
}

impl SweepSpec {
    /// Read a sweep file (the base config's path is relative to it).
    pub fn from_file(path: &Path) -> anyhow::Result<SweepSpec> {
        let text =
            std::fs::read_to_string(path).with_context(|| format!("cannot read sweep file {}", path.display()))?;
        let name = path.display().to_string();
        let raw: RawSweep = toml::from_str(&text).map_err(|e| anyhow::anyhow!("{name}: {}", first_line(&e)))?;
        let base = path.parent().unwrap_or(Path::new(".")).join(&raw.base);
        let zip = match raw.mode.as_deref() {
            None | Some("cartesian") => false,
            Some("zip") => true,
            Some(other) => bail!("{name}: mode = {other:?}: expected \"cartesian\" or \"zip\""),
        };
        let mut grid = Vec::new();
        for (key, values) in raw.grid {
            let toml::Value::Array(values) = values else {
                bail!("{name}: grid.\"{key}\": expected a list of values");
            };
            grid.push((key, values));
        }
        let sets = raw.set.into_iter().map(|(k, v)| format!("{k}={v}")).collect();
        let spec = SweepSpec { base: ConfigSource::Path(base), grid, zip, seeds: raw.seeds, sets };
        spec.check().with_context(|| name.clone())?;
        Ok(spec)
    }

    /// Shape checks, then every run's config resolved (a bad key or value stops the
    /// sweep before any run, naming the point).
    pub fn check(&self) -> anyhow::Result<()> {
        if self.seeds.is_empty() {
            bail!("seeds: expected at least one seed");
        }
        if self.grid.iter().any(|(k, _)| k == "workload.seed") {
            bail!("grid.\"workload.seed\": list the seeds in `seeds` instead");
        }
        if let Some((k, _)) = self.grid.iter().find(|(_, v)| v.is_empty()) {
            bail!("grid.\"{k}\": expected at least one value");
        }
        if self.zip {
            let n = self.grid.first().map_or(0, |g| g.1.len());
            if let Some((k, v)) = self.grid.iter().find(|(_, v)| v.len() != n) {
                bail!("grid.\"{k}\": {} values, but mode = \"zip\" needs {n} like the first key", v.len());
            }
        }
        for t in self.tasks().iter().filter(|t| t.seed_index == 0) {
            self.base.load(&t.sets).with_context(|| format!("sweep point {} ({})", t.point, self.describe(t.point)))?;
        }
        Ok(())
    }

    /// Number of grid points.
    pub fn points(&self) -> usize {
        match (self.zip, self.grid.first()) {
            (_, None) => 1,
            (true, Some((_, v))) => v.len(),
            (false, _) => self.grid.iter().map(|(_, v)| v.len()).product(),
        }
    }

    /// The values of point `i` (cartesian: the last key varies fastest).
    pub fn values(&self, i: usize) -> Vec<&toml::Value> {
        if self.zip {
            return self.grid.iter().map(|(_, v)| &v[i]).collect();
        }
        let mut rest = i;
        let mut out: Vec<&toml::Value> = self
            .grid
            .iter()
            .rev()
            .map(|(_, v)| {
                let x = &v[rest % v.len()];
                rest /= v.len();
                x
            })
            .collect();
        out.reverse();
        out
    }

    fn describe(&self, i: usize) -> String {
        let parts: Vec<String> = self.grid.iter().zip(self.values(i)).map(|((k, _), v)| format!("{k}={v}")).collect();
        parts.join(", ")
    }

    /// Every run, point by point, seeds fastest.
    pub fn tasks(&self) -> Vec<Task> {
        let mut out = Vec::with_capacity(self.points() * self.seeds.len());
        for point in 0..self.points() {
            for (seed_index, &seed) in self.seeds.iter().enumerate() {
                let mut sets = self.sets.clone();
                sets.extend(self.grid.iter().zip(self.values(point)).map(|((k, _), v)| format!("{k}={v}")));
                sets.push(format!("workload.seed={seed}"));
                out.push(Task { point, seed_index, seed, sets });
            }
        }
        out
    }

    /// Column names: the grid keys, `seed`, then the result keys (alphabetical).
    pub fn key_columns(&self) -> Vec<String> {
        let mut c: Vec<String> = self.grid.iter().map(|(k, _)| k.clone()).collect();
        c.push("seed".into());
        c
    }

    /// The row of a finished task: its grid values and seed beside the result object.
    pub fn row(&self, t: &Task, result: &Value) -> Map<String, Value> {
        let mut row = match result {
            Value::Object(m) => m.clone(),
            _ => Map::new(),
        };
        for ((k, _), v) in self.grid.iter().zip(self.values(t.point)) {
            row.insert(k.clone(), toml_to_json(v));
        }
        row.insert("seed".into(), Value::from(t.seed));
        row
    }
}

fn first_line(e: &toml::de::Error) -> String {
    e.to_string().lines().filter(|l| !l.trim().is_empty()).collect::<Vec<_>>().join(" ")
}

fn toml_to_json(v: &toml::Value) -> Value {
    serde_json::to_value(v).unwrap_or(Value::Null)
}

/// Run one task: the result object as JSON.
pub fn run_task(spec: &SweepSpec, t: &Task) -> anyhow::Result<Value> {
    let r = crate::api::run(&spec.base, &t.sets, &mut Recorder::default())
        .with_context(|| format!("sweep point {} seed {}", t.point, t.seed))?;
    Ok(serde_json::to_value(r)?)
}

/// The journal of finished runs in an output folder.
pub const JOURNAL: &str = "runs.jsonl";

/// Finished runs recorded in `out/runs.jsonl`, keyed by their overrides (a changed
/// sweep reruns what changed). A torn last line (interrupted write) is ignored.
pub fn finished(out: &Path) -> anyhow::Result<HashMap<Vec<String>, Value>> {
    let path = out.join(JOURNAL);
    let Ok(text) = std::fs::read_to_string(&path) else { return Ok(HashMap::new()) };
    let mut done = HashMap::new();
    for line in text.lines() {
        let Ok(v) = serde_json::from_str::<Value>(line) else { continue };
        let sets: Option<Vec<String>> = v.get("sets").and_then(|s| serde_json::from_value(s.clone()).ok());
        if let (Some(sets), Some(result)) = (sets, v.get("result")) {
            done.insert(sets, result.clone());
        }
    }
    Ok(done)
}

/// Append a finished run to the journal (one line, flushed).
pub fn record(out: &Path, t: &Task, result: &Value) -> anyhow::Result<()> {
    let path = out.join(JOURNAL);
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .read(true)
        .append(true)
        .open(&path)
        .with_context(|| format!("cannot open {}", path.display()))?;
    let line = serde_json::json!({ "point": t.point, "seed": t.seed, "sets": t.sets, "result": result });
    // After a torn last line (an interrupted write) start a new line.
    let sep = if ends_mid_line(&mut f)? { "\n" } else { "" };
    writeln!(f, "{sep}{line}").with_context(|| format!("cannot write {}", path.display()))
}

fn ends_mid_line(f: &mut std::fs::File) -> std::io::Result<bool> {
    use std::io::{Read, Seek, SeekFrom};
    if f.metadata()?.len() == 0 {
        return Ok(false);
    }
    f.seek(SeekFrom::End(-1))?;
    let mut last = [0u8];
    f.read_exact(&mut last)?;
    Ok(last[0] != b'\n')
}

/// Run every task not yet finished in `out` on `jobs` threads; returns every result in
/// task order. `done` is called after each run with (finished, total).
pub fn run_local(
    spec: &SweepSpec,
    jobs: usize,
    out: Option<&Path>,
    done: &(dyn Fn(usize, usize) + Sync),
) -> anyhow::Result<Vec<Value>> {
    let tasks = spec.tasks();
    let mut results: Vec<Option<Value>> = vec![None; tasks.len()];
    if let Some(out) = out {
        std::fs::create_dir_all(out).with_context(|| format!("cannot create {}", out.display()))?;
        let prior = finished(out)?;
        for (t, r) in tasks.iter().zip(results.iter_mut()) {
            *r = prior.get(&t.sets).cloned();
        }
    }
    let pending: Vec<usize> = (0..tasks.len()).filter(|&i| results[i].is_none()).collect();
    let next = AtomicUsize::new(0);
    let (tx, rx) = mpsc::channel::<(usize, anyhow::Result<Value>)>();
    let mut first_error = None;
    std::thread::scope(|scope| {
        for _ in 0..jobs.max(1).min(pending.len()) {
            let (tx, next, pending, tasks) = (tx.clone(), &next, &pending, &tasks);
            scope.spawn(move || loop {
                let k = next.fetch_add(1, Ordering::Relaxed);
                let Some(&i) = pending.get(k) else { break };
                let r = run_task(spec, &tasks[i]);
                let failed = r.is_err();
                if tx.send((i, r)).is_err() || failed {
                    // Stop handing out work after a failure.
                    next.store(pending.len(), Ordering::Relaxed);
                    break;
                }
            });
        }
        drop(tx);
        let mut count = tasks.len() - pending.len();
        for (i, r) in rx {
            match r {
                Ok(v) => {
                    if let Some(out) = out {
                        if let Err(e) = record(out, &tasks[i], &v) {
                            first_error.get_or_insert(e);
                        }
                    }
                    results[i] = Some(v);
                    count += 1;
                    done(count, tasks.len());
                }
                Err(e) => {
                    first_error.get_or_insert(e);
                }
            }
        }
    });
    if let Some(e) = first_error {
        return Err(e);
    }
    Ok(results.into_iter().map(|r| r.expect("every task ran")).collect())
}

/// One typed column of the sweep table.
#[derive(Clone, Debug, PartialEq)]
pub enum Column {
    Int(Vec<Option<i64>>),
    Float(Vec<Option<f64>>),
    Bool(Vec<Option<bool>>),
    /// Strings; objects (the `config` key) as JSON text.
    Text(Vec<Option<String>>),
}

/// The sweep table: one row per task in task order (rendered by `sweep_out` and
/// `report::sweep_page`).
#[derive(Clone, Debug, PartialEq)]
pub struct Table {
    pub names: Vec<String>,
    pub columns: Vec<Column>,
}

impl Table {
    /// Build from every task's result, `results[i]` for `spec.tasks()[i]`.
    pub fn new(spec: &SweepSpec, results: &[Value]) -> Table {
        let tasks = spec.tasks();
        let rows: Vec<Map<String, Value>> = tasks.iter().zip(results).map(|(t, r)| spec.row(t, r)).collect();
        let mut names = spec.key_columns();
        let mut rest: Vec<String> =
            rows.iter().flat_map(|r| r.keys().cloned()).filter(|k| !names.contains(k)).collect();
        rest.sort();
        rest.dedup();
        names.extend(rest);
        let columns = names.iter().map(|n| column(rows.iter().map(|r| r.get(n).unwrap_or(&Value::Null)))).collect();
        Table { names, columns }
    }

    pub fn rows(&self) -> usize {
        self.columns.first().map_or(0, |c| match c {
            Column::Int(v) => v.len(),
            Column::Float(v) => v.len(),
            Column::Bool(v) => v.len(),
            Column::Text(v) => v.len(),
        })
    }

    pub fn get(&self, name: &str) -> Option<&Column> {
        self.names.iter().position(|n| n == name).map(|i| &self.columns[i])
    }
}

/// The narrowest type that holds every value (nulls allowed).
fn column<'a>(values: impl Iterator<Item = &'a Value> + Clone) -> Column {
    let present = || values.clone().filter(|v| !v.is_null());
    if present().all(|v| v.is_i64()) {
        Column::Int(values.map(Value::as_i64).collect())
    } else if present().all(Value::is_number) {
        Column::Float(values.map(Value::as_f64).collect())
    } else if present().all(Value::is_boolean) {
        Column::Bool(values.map(Value::as_bool).collect())
    } else {
        Column::Text(
            values
                .map(|v| match v {
                    Value::Null => None,
                    Value::String(s) => Some(s.clone()),
                    other => Some(other.to_string()),
                })
                .collect(),
        )
    }
}

/// Write `results.csv`, `results.parquet`, `summary.md` and `index.html` (titled `name`) into `out`.
pub fn write_outputs(out: &Path, name: &str, spec: &SweepSpec, table: &Table) -> anyhow::Result<Vec<PathBuf>> {
    std::fs::create_dir_all(out).with_context(|| format!("cannot create {}", out.display()))?;
    let csv = out.join("results.csv");
    std::fs::write(&csv, crate::sweep_out::csv(table)).with_context(|| format!("cannot write {}", csv.display()))?;
    let parquet = out.join("results.parquet");
    crate::sweep_out::parquet(&parquet, table)?;
    let md = out.join("summary.md");
    std::fs::write(&md, crate::sweep_out::summary_markdown(spec, table))
        .with_context(|| format!("cannot write {}", md.display()))?;
    let html = out.join("index.html");
    std::fs::write(&html, crate::report::sweep_page::page(name, spec, table)?)
        .with_context(|| format!("cannot write {}", html.display()))?;
    Ok(vec![csv, parquet, md, html])
}
