//! The exception classes: `FlashlabError` and its subclasses, one per kind of failure.

use flashlab_cli::api::{error_kind, ErrorKind};
use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::PyErr;

create_exception!(flashlab, FlashlabError, PyException, "Any flashlab failure; the message is the CLI's one line.");
create_exception!(flashlab, ConfigError, FlashlabError, "A config file, key or value is invalid.");
create_exception!(flashlab, TraceError, FlashlabError, "A trace file cannot be read or has a bad line.");
create_exception!(flashlab, SimulationError, FlashlabError, "A run failed (FTL, content check, address overflow).");

/// The Python exception for an error of the library layer.
pub fn to_py(e: anyhow::Error) -> PyErr {
    let msg = flashlab_cli::one_line(&e);
    match error_kind(&e) {
        ErrorKind::Config => ConfigError::new_err(msg),
        ErrorKind::Trace => TraceError::new_err(msg),
        ErrorKind::Simulation => SimulationError::new_err(msg),
        ErrorKind::Other => FlashlabError::new_err(msg),
    }
}

/// A simulation error of the streaming handle (there is no trace: every one is a
/// `SimulationError`).
pub fn sim(e: flashlab_sim::SimError) -> PyErr {
    SimulationError::new_err(e.to_string())
}
