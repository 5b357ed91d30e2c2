//! Sweeps for Python: the plan (tasks, local parallel run, journal, table, files); the
//! Dask driver lives in python/flashlab/_sweep.py and runs each task with `run`.

use crate::errors::to_py;
use crate::module::source;
use flashlab_cli::sweep::{self, Column, SweepSpec, Table};
use pyo3::prelude::*;
use pyo3::types::PyList;
use serde_json::Value;
use std::path::Path;

#[pyclass(module = "flashlab._native")]
pub struct SweepPlan {
    spec: SweepSpec,
}

fn parse(results: &[String]) -> PyResult<Vec<Value>> {
    results.iter().map(|r| serde_json::from_str(r).map_err(|e| to_py(e.into()))).collect()
}

#[pymethods]
impl SweepPlan {
    /// `grid_json`: a JSON list of [key, [values...]] pairs (in column order).
    #[new]
    #[pyo3(signature = (path, text, grid_json, zip, seeds, sets))]
    fn new(
        py: Python<'_>,
        path: Option<String>,
        text: Option<String>,
        grid_json: &str,
        zip: bool,
        seeds: Vec<u64>,
        sets: Vec<String>,
    ) -> PyResult<Self> {
        let pairs: Vec<(String, Vec<Value>)> = serde_json::from_str(grid_json).map_err(|e| to_py(e.into()))?;
        let mut grid = Vec::new();
        for (k, values) in pairs {
            let values = values
                .into_iter()
                .map(|v| toml::Value::try_from(v).map_err(|e| anyhow::anyhow!("grid {k:?}: a value is not TOML: {e}")))
                .collect::<anyhow::Result<Vec<_>>>()
                .map_err(to_py)?;
            grid.push((k, values));
        }
        let spec = SweepSpec { base: source(path, text), grid, zip, seeds, sets };
        py.allow_threads(|| spec.check()).map_err(config_error)?;
        Ok(SweepPlan { spec })
    }

    /// A plan from a sweep file.
    #[staticmethod]
    fn from_file(py: Python<'_>, path: String) -> PyResult<Self> {
        let spec = py.allow_threads(|| SweepSpec::from_file(Path::new(&path))).map_err(config_error)?;
        Ok(SweepPlan { spec })
    }

    /// The base config as (path, text): one of them is None.
    fn base(&self) -> (Option<String>, Option<String>) {
        match &self.spec.base {
            flashlab_cli::api::ConfigSource::Path(p) => {
                (Some(std::path::absolute(p).unwrap_or(p.clone()).display().to_string()), None)
            }
            flashlab_cli::api::ConfigSource::Text { text, .. } => (None, Some(text.clone())),
        }
    }

    /// Every task: (point, seed_index, seed, sets).
    fn tasks(&self) -> Vec<(usize, usize, u64, Vec<String>)> {
        self.spec.tasks().into_iter().map(|t| (t.point, t.seed_index, t.seed, t.sets)).collect()
    }

    /// Run every unfinished task on `jobs` threads (journal in `out`); results as JSON in task order.
    #[pyo3(signature = (jobs, out=None))]
    fn run_local(&self, py: Python<'_>, jobs: usize, out: Option<String>) -> PyResult<Vec<String>> {
        let results =
            py.allow_threads(|| sweep::run_local(&self.spec, jobs, out.as_deref().map(Path::new), &|_, _| {}));
        results.map_err(to_py)?.iter().map(|v| serde_json::to_string(v).map_err(|e| to_py(e.into()))).collect()
    }

    /// Results already in `out`'s journal: {task index: result JSON}.
    fn finished(&self, out: String) -> PyResult<Vec<(usize, String)>> {
        let done = sweep::finished(Path::new(&out)).map_err(to_py)?;
        Ok(self
            .spec
            .tasks()
            .iter()
            .enumerate()
            .filter_map(|(i, t)| done.get(&t.sets).map(|v| (i, v.to_string())))
            .collect())
    }

    /// Append task `index`'s result to `out`'s journal.
    fn record(&self, out: String, index: usize, result_json: String) -> PyResult<()> {
        let t = &self.spec.tasks()[index];
        let v = parse(&[result_json])?.remove(0);
        std::fs::create_dir_all(&out).map_err(|e| to_py(e.into()))?;
        sweep::record(Path::new(&out), t, &v).map_err(to_py)
    }

    /// The table: [(name, kind, values)], kind one of int, float, bool, text.
    fn table<'py>(&self, py: Python<'py>, results: Vec<String>) -> PyResult<Bound<'py, PyList>> {
        let t = Table::new(&self.spec, &parse(&results)?);
        let out = PyList::empty(py);
        for (name, c) in t.names.iter().zip(&t.columns) {
            let item = match c {
                Column::Int(v) => (name, "int", v.clone().into_pyobject(py)?.into_any()),
                Column::Float(v) => (name, "float", v.clone().into_pyobject(py)?.into_any()),
                Column::Bool(v) => (name, "bool", v.clone().into_pyobject(py)?.into_any()),
                Column::Text(v) => (name, "text", v.clone().into_pyobject(py)?.into_any()),
            };
            out.append(item)?;
        }
        Ok(out)
    }

    /// Write results.csv, results.parquet, summary.md and index.html into `out`; the
    /// page is titled by the folder's name less a `sweep-` prefix (as `flashlab sweep`'s
    /// default folder `results/sweep-NAME` gives NAME).
    fn write(&self, py: Python<'_>, out: String, results: Vec<String>) -> PyResult<()> {
        let values = parse(&results)?;
        py.allow_threads(|| {
            let t = Table::new(&self.spec, &values);
            let dir = Path::new(&out);
            let folder = dir.file_name().map_or("sweep".into(), |n| n.to_string_lossy().to_string());
            let name = folder.strip_prefix("sweep-").unwrap_or(&folder);
            sweep::write_outputs(dir, name, &self.spec, &t).map(|_| ())
        })
        .map_err(to_py)
    }
}

/// A sweep that cannot start is a config error (a bad grid, seeds or point config).
fn config_error(e: anyhow::Error) -> PyErr {
    match flashlab_cli::api::error_kind(&e) {
        flashlab_cli::api::ErrorKind::Other => crate::errors::ConfigError::new_err(flashlab_cli::one_line(&e)),
        _ => to_py(e),
    }
}
