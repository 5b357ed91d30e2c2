//! The streaming SSD handle for Python.

use crate::errors::{sim, to_py};
use crate::module::source;
use flashlab_sim::Op;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

/// A simulated SSD taking one request at a time (see `flashlab_sim::Ssd`).
#[pyclass(module = "flashlab._native")]
pub struct Ssd {
    inner: flashlab_sim::Ssd,
}

#[pymethods]
impl Ssd {
    #[new]
    #[pyo3(signature = (path, text, sets))]
    fn new(py: Python<'_>, path: Option<String>, text: Option<String>, sets: Vec<String>) -> PyResult<Self> {
        let src = source(path, text);
        let (_, s, _) = src.load(&sets).map_err(to_py)?;
        // Prefill and aging can take a while: without the GIL.
        let inner = py.allow_threads(|| flashlab_sim::Ssd::new(s)).map_err(sim)?;
        Ok(Ssd { inner })
    }

    /// Serve one request; returns (index, issue_ns, done_ns, latency_ns, gc_wait_ns, pages).
    #[allow(clippy::type_complexity)]
    fn submit(
        &mut self,
        op: &str,
        offset_bytes: u64,
        len_bytes: u64,
        at_ns: u64,
    ) -> PyResult<(u64, Option<u64>, Option<u64>, Option<u64>, u64, u64)> {
        let op = match op {
            "read" => Op::Read,
            "write" => Op::Write,
            "trim" => Op::Trim,
            other => return Err(PyValueError::new_err(format!("op = {other:?}: expected read, write or trim"))),
        };
        if len_bytes == 0 {
            return Err(PyValueError::new_err("len_bytes = 0: expected at least one byte"));
        }
        let c = self.inner.submit(op, offset_bytes, len_bytes, at_ns).map_err(sim)?;
        Ok((c.index, c.issue_ns, c.done_ns, c.latency_ns, c.gc_wait_ns, c.pages))
    }

    /// Write the DRAM buffer to flash; completion time (None in counting mode).
    fn flush(&mut self, at_ns: u64) -> PyResult<Option<u64>> {
        self.inner.flush(at_ns).map_err(sim)
    }

    /// The result object of the measured requests so far, as JSON.
    fn result_json(&mut self) -> PyResult<String> {
        serde_json::to_string(&self.inner.result()).map_err(|e| to_py(e.into()))
    }

    #[getter]
    fn submitted(&self) -> u64 {
        self.inner.submitted()
    }

    #[getter]
    fn page_bytes(&self) -> u64 {
        self.inner.settings().page_bytes()
    }

    #[getter]
    fn logical_bytes(&self) -> u64 {
        self.inner.settings().ftl.logical_pages * self.inner.settings().page_bytes()
    }
}
