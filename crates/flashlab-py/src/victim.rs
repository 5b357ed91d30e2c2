//! A GC victim policy written in Python: `flashlab.run(..., gc_victim=callable)`.
//!
//! The FTL calls [`PyVictim::choose`] with the plane and its candidates (greedy order,
//! see `flashlab_ftl::external`); it takes the GIL (released by the run around it),
//! calls the package's wrapper with plain tuples, and expects a block id back.

use flashlab_ftl::{Candidate, PlaneInfo, VictimCallback};
use pyo3::prelude::*;
use pyo3::types::PyList;

/// The Python callable: `wrapper((plane, pages_per_block, now), [(block, valid,
/// erase_count, age, temperature), ...]) -> block id`.
pub struct PyVictim(pub Py<PyAny>);

impl VictimCallback for PyVictim {
    fn choose(&mut self, plane: PlaneInfo, candidates: &[Candidate]) -> Result<u32, String> {
        Python::with_gil(|py| {
            let cands = candidates.iter().map(|c| (c.block, c.valid, c.erase_count, c.age, c.temperature));
            let list = PyList::new(py, cands).map_err(|e| e.to_string())?;
            let info = (plane.plane, plane.pages_per_block, plane.now);
            let chosen = self.0.call1(py, (info, list)).map_err(|e| python_error(py, e))?;
            chosen.extract::<u32>(py).map_err(|_| {
                format!("the callable must return a candidate's block id (an int), got {}", chosen.bind(py))
            })
        })
    }
}

/// `TypeName: message` of a Python exception raised inside the callable.
fn python_error(py: Python<'_>, e: PyErr) -> String {
    let name = e.get_type(py).name().map(|n| n.to_string()).unwrap_or_else(|_| "Exception".into());
    format!("the callable raised {name}: {}", e.value(py))
}
