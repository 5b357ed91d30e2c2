//! Stage 3: validated settings with typed units. Each model crate owns its settings
//! types (the SSD run's in `flashlab_sim::settings`, the synthetic workload's in
//! `flashlab_workload::settings`); this crate only resolves raw TOML into them and
//! re-exports them so `flashlab_config::Settings` etc. keep working.

pub use flashlab_sim::settings::*;
