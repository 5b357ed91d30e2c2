//! Python bindings of flashlab: the `flashlab._native` extension module under the
//! `python/flashlab` package. A thin edge: every function calls the same library code
//! as the `flashlab` command (`flashlab_cli::api`, `flashlab_cli::sweep`,
//! `flashlab_sim::Ssd`), passes results as JSON text or flat byte buffers (turned into
//! Arrow arrays on the Python side), releases the GIL while simulating, and raises the
//! exception classes of [`errors`] with the command's one-line message.
//!
//! Built only with the `python` feature (maturin enables `extension-module`), so
//! `cargo build --workspace` and `cargo test --workspace` need no Python.

#[cfg(feature = "python")]
mod errors;
#[cfg(feature = "python")]
mod module;
#[cfg(feature = "python")]
mod ssd;
#[cfg(feature = "python")]
mod sweep;
#[cfg(feature = "python")]
mod victim;
