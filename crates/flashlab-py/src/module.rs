//! The `flashlab._native` module: functions over the library layer.

use crate::errors::{self, to_py};
use flashlab_cli::api::{self, ConfigSource, Recorder};
use flashlab_cli::series::{RequestColumns, SeriesPoint};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};
use std::path::PathBuf;

/// A config given as a file path or as TOML text (named `<dict>`, traces relative to the
/// working directory).
pub fn source(path: Option<String>, text: Option<String>) -> ConfigSource {
    match (path, text) {
        (Some(p), _) => ConfigSource::Path(PathBuf::from(p)),
        (None, t) => ConfigSource::Text { text: t.unwrap_or_default(), name: "<dict>".into(), dir: ".".into() },
    }
}

fn json(v: &impl serde::Serialize) -> PyResult<String> {
    serde_json::to_string(v).map_err(|e| to_py(e.into()))
}

/// The complete default configuration as JSON.
#[pyfunction]
fn default_config_json() -> PyResult<String> {
    json(&flashlab_config::RawConfig::default())
}

/// TOML text of a configuration given as JSON (a dict from Python).
#[pyfunction]
fn config_toml_from_json(text: &str) -> PyResult<String> {
    let mut v: serde_json::Value = serde_json::from_str(text).map_err(|e| to_py(e.into()))?;
    drop_nulls(&mut v);
    let t = toml::Value::try_from(v)
        .map_err(|e| errors::ConfigError::new_err(format!("config: not representable as TOML: {e}")))?;
    toml::to_string(&t).map_err(|e| errors::ConfigError::new_err(format!("config: {e}")))
}

/// Removes every `null` (an unset optional key, e.g. from `default_config()`): TOML has
/// no null, and an absent key means the same thing.
fn drop_nulls(v: &mut serde_json::Value) {
    match v {
        serde_json::Value::Object(m) => {
            m.retain(|_, x| !x.is_null());
            m.values_mut().for_each(drop_nulls);
        }
        serde_json::Value::Array(a) => a.iter_mut().for_each(drop_nulls),
        _ => {}
    }
}

fn u64_bytes<'py>(py: Python<'py>, v: &[u64]) -> Bound<'py, PyBytes> {
    let b: Vec<u8> = v.iter().flat_map(|x| x.to_ne_bytes()).collect();
    PyBytes::new(py, &b)
}

fn f64_bytes<'py>(py: Python<'py>, v: impl Iterator<Item = Option<f64>>) -> Bound<'py, PyBytes> {
    let b: Vec<u8> = v.flat_map(|x| x.unwrap_or(f64::NAN).to_ne_bytes()).collect();
    PyBytes::new(py, &b)
}

fn request_dict<'py>(py: Python<'py>, c: &RequestColumns) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("timed", c.timed)?;
    for (k, v) in [
        ("index", &c.index),
        ("offset_bytes", &c.offset_bytes),
        ("pages", &c.pages),
        ("issue_ns", &c.issue_ns),
        ("done_ns", &c.done_ns),
        ("latency_ns", &c.latency_ns),
        ("gc_wait_ns", &c.gc_wait_ns),
    ] {
        d.set_item(k, u64_bytes(py, v))?;
    }
    d.set_item("measured", PyBytes::new(py, &c.measured))?;
    d.set_item("op", PyBytes::new(py, &c.op))?;
    Ok(d)
}

fn series_dict<'py>(py: Python<'py>, s: &[SeriesPoint]) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("requests", u64_bytes(py, &s.iter().map(|p| p.requests).collect::<Vec<_>>()))?;
    d.set_item("sim_time_s", f64_bytes(py, s.iter().map(|p| p.sim_time_s)))?;
    d.set_item("waf", f64_bytes(py, s.iter().map(|p| p.waf)))?;
    d.set_item("read_latency_us_mean", f64_bytes(py, s.iter().map(|p| p.read_latency_us_mean)))?;
    d.set_item("write_latency_us_mean", f64_bytes(py, s.iter().map(|p| p.write_latency_us_mean)))?;
    d.set_item("gc_wait_us_mean", f64_bytes(py, s.iter().map(|p| p.gc_wait_us_mean)))?;
    Ok(d)
}

/// The result object as JSON, the per-request columns and the series columns.
type RunOutput<'py> = (String, Option<Bound<'py, PyDict>>, Option<Bound<'py, PyDict>>);

/// Run a config; returns (result JSON, per-request columns or None, series columns or None).
#[pyfunction]
#[pyo3(signature = (path, text, sets, record_requests=false, series_every=None, gc_victim=None))]
fn run<'py>(
    py: Python<'py>,
    path: Option<String>,
    text: Option<String>,
    sets: Vec<String>,
    record_requests: bool,
    series_every: Option<u64>,
    gc_victim: Option<Py<PyAny>>,
) -> PyResult<RunOutput<'py>> {
    let src = source(path, text);
    let mut rec = Recorder::new(record_requests, series_every);
    let result = match gc_victim {
        None => py.allow_threads(|| api::run(&src, &sets, &mut rec)),
        Some(f) => {
            let cb = flashlab_ftl::ExternalVictim::new(Box::new(crate::victim::PyVictim(f)));
            py.allow_threads(|| api::run_external_victim(&src, &sets, &mut rec, cb))
        }
    }
    .map_err(to_py)?;
    let requests = rec.requests.as_ref().map(|c| request_dict(py, c)).transpose()?;
    let series = series_every.map(|_| series_dict(py, &rec.series_points)).transpose()?;
    Ok((json(&result)?, requests, series))
}

/// Summary statistics of a trace, as JSON.
#[pyfunction]
#[pyo3(signature = (path, format="auto", skip_bad_lines=false))]
fn trace_stats(py: Python<'_>, path: String, format: &str, skip_bad_lines: bool) -> PyResult<String> {
    let st = py.allow_threads(|| api::trace_stats(path.as_ref(), format, skip_bad_lines)).map_err(to_py)?;
    json(&st)
}

/// `flashlab hotness`: rows as JSON.
#[pyfunction]
#[pyo3(signature = (path, text, sets))]
fn hotness(py: Python<'_>, path: Option<String>, text: Option<String>, sets: Vec<String>) -> PyResult<String> {
    let src = source(path, text);
    let rows = py.allow_threads(|| api::hotness(&src, &sets)).map_err(to_py)?;
    json(&rows)
}

/// One point of flashfs's file-system benchmark, as JSON.
#[pyfunction]
fn fs_bench(py: Python<'_>, device_mib: u32, workload: &str, utilisation_pct: u32, config: &str) -> PyResult<String> {
    let r = py.allow_threads(|| api::fs_bench(device_mib, workload, utilisation_pct, config)).map_err(to_py)?;
    json(&r)
}

/// `flashlab reproduce NAME --out OUT [--quick]`.
#[pyfunction]
fn reproduce(py: Python<'_>, name: &str, out: String, quick: bool) -> PyResult<()> {
    py.allow_threads(|| flashlab_cli::reproduce::reproduce(name, Some(PathBuf::from(out)), quick)).map_err(to_py)
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("FlashlabError", py.get_type::<errors::FlashlabError>())?;
    m.add("ConfigError", py.get_type::<errors::ConfigError>())?;
    m.add("TraceError", py.get_type::<errors::TraceError>())?;
    m.add("SimulationError", py.get_type::<errors::SimulationError>())?;
    m.add_function(wrap_pyfunction!(default_config_json, m)?)?;
    m.add_function(wrap_pyfunction!(config_toml_from_json, m)?)?;
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(trace_stats, m)?)?;
    m.add_function(wrap_pyfunction!(hotness, m)?)?;
    m.add_function(wrap_pyfunction!(fs_bench, m)?)?;
    m.add_function(wrap_pyfunction!(reproduce, m)?)?;
    m.add_class::<crate::ssd::Ssd>()?;
    m.add_class::<crate::sweep::SweepPlan>()?;
    Ok(())
}
