//! Library entry points of the Python package (and of sweeps): the same steps as the
//! commands, returning values instead of printing.

use crate::series::{RequestColumns, Series, SeriesPoint};
use anyhow::Context;
use flashlab_config::{ConfigError, RawConfig, Settings};
use flashlab_sim::{Observer, RequestRecord, RunResult, SimError};
use flashlab_trace::TraceError;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// A config: a file, or TOML text with a name for error messages (and a folder that
/// relative trace paths start from).
#[derive(Clone, Debug, PartialEq)]
pub enum ConfigSource {
    Path(PathBuf),
    Text { text: String, name: String, dir: PathBuf },
}

impl ConfigSource {
    /// Read (if a file), apply `sets`, resolve. Also returns the path trace paths are relative to.
    pub fn load(&self, sets: &[String]) -> anyhow::Result<(RawConfig, Settings, PathBuf)> {
        match self {
            ConfigSource::Path(p) => {
                let (raw, s) = crate::config_cmd::load_config(p, sets)?;
                Ok((raw, s, p.clone()))
            }
            ConfigSource::Text { text, name, dir } => {
                let (raw, s) = flashlab_config::load(text, name, sets)?;
                Ok((raw, s, dir.join(name)))
            }
        }
    }
}

/// What a failure was about, for the Python exception classes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    Config,
    Trace,
    Simulation,
    Other,
}

/// Sort an error by its causes: a config file or value, a trace file or line, or the run.
pub fn error_kind(e: &anyhow::Error) -> ErrorKind {
    for cause in e.chain() {
        if cause.is::<ConfigError>() {
            return ErrorKind::Config;
        }
        if cause.is::<TraceError>() {
            return ErrorKind::Trace;
        }
        if let Some(s) = cause.downcast_ref::<SimError>() {
            // A trace line that fails mid-run arrives as `Source`.
            return if matches!(s, SimError::Source(_)) { ErrorKind::Trace } else { ErrorKind::Simulation };
        }
        if cause.is::<flashlab_flashfs::fsbench::BenchError>() {
            return ErrorKind::Simulation;
        }
    }
    // The contexts the file-opening steps attach.
    let first = e.to_string();
    if first.starts_with("cannot read config") {
        ErrorKind::Config
    } else if first.starts_with("cannot open trace") {
        ErrorKind::Trace
    } else {
        ErrorKind::Other
    }
}

/// What a run gives besides the result object, when asked for.
#[derive(Default)]
pub struct Recorder {
    pub requests: Option<RequestColumns>,
    series: Option<Series>,
    pub series_points: Vec<SeriesPoint>,
}

impl Recorder {
    /// Record every request (`requests`) and/or a time series of `series_every` requests per row.
    pub fn new(requests: bool, series_every: Option<u64>) -> Self {
        Recorder {
            requests: requests.then(RequestColumns::default),
            series: series_every.map(Series::new),
            series_points: Vec::new(),
        }
    }
}

impl Observer for Recorder {
    fn wants_requests(&self) -> bool {
        self.requests.is_some() || self.series.is_some()
    }
    fn request(&mut self, r: &RequestRecord) {
        if let Some(c) = &mut self.requests {
            c.push(r);
        }
        if let Some(p) = self.series.as_mut().and_then(|s| s.add(r)) {
            self.series_points.push(p);
        }
    }
}

/// `flashlab run` without the printing: the result object with `wall_time_s` and `config` filled.
pub fn run(src: &ConfigSource, sets: &[String], rec: &mut Recorder) -> anyhow::Result<RunResult> {
    let (raw, s, path) = src.load(sets)?;
    run_settings(&raw, &s, &path, rec)
}

/// `run` with a GC victim policy from outside the crate (a Python callable):
/// `gc.victim` becomes `external` and `callback` chooses every victim. Only the
/// page-mapped schemes (`page`, `dftl`) collect garbage by victim.
pub fn run_external_victim(
    src: &ConfigSource,
    sets: &[String],
    rec: &mut Recorder,
    callback: flashlab_ftl::ExternalVictim,
) -> anyhow::Result<RunResult> {
    use flashlab_ftl::{Scheme, VictimPolicy};
    let (mut raw, mut s, path) = src.load(sets)?;
    if !matches!(s.ftl.mapping.scheme, Scheme::Page | Scheme::Dftl) {
        return Err(ConfigError::Setting {
            key: "ftl.mapping".into(),
            message: format!(
                "{:?}: a GC victim policy applies to page-mapped schemes only (page, dftl)",
                raw.ftl.mapping
            ),
        }
        .into());
    }
    s.ftl.victim = VictimPolicy::External;
    s.ftl.external_victim = Some(callback);
    raw.gc.victim = "external".into();
    run_settings(&raw, &s, &path, rec)
}

/// Run already-resolved settings (trace paths relative to `path`).
pub fn run_settings(raw: &RawConfig, s: &Settings, path: &Path, rec: &mut Recorder) -> anyhow::Result<RunResult> {
    let start = Instant::now();
    let mut result = crate::run::simulate(s, path, rec)?;
    result.wall_time_s = start.elapsed().as_secs_f64();
    result.config = serde_json::to_value(raw)?;
    Ok(result)
}

/// `flashlab trace stats`.
pub fn trace_stats(path: &Path, format: &str, skip_bad_lines: bool) -> anyhow::Result<flashlab_trace::TraceStats> {
    Ok(flashlab_trace::stats(crate::trace_cmd::open(path, format, skip_bad_lines)?)?)
}

/// `flashlab hotness`: one row per identifier.
pub fn hotness(src: &ConfigSource, sets: &[String]) -> anyhow::Result<Vec<flashlab_sim::hotness::HotnessRow>> {
    let (_, s, path) = src.load(sets)?;
    Ok(crate::hotness::compare(&s, &path)?.0)
}

/// One point of flashfs's file-system benchmark (seed 000's set-up): `workload` is
/// dd, fileserver or varmail, `config` one of the reproduction's configurations.
pub fn fs_bench(
    device_mib: u32,
    workload: &str,
    utilisation_pct: u32,
    config: &str,
) -> anyhow::Result<flashlab_flashfs::fsbench::RunResult> {
    use flashlab_flashfs::fsbench::{repro::Plan, run_point};
    if !(1..100).contains(&utilisation_pct) {
        anyhow::bail!("fs_bench: utilisation = {utilisation_pct}: expected a percentage in 1..99");
    }
    let points = Plan::sized(device_mib, vec![utilisation_pct], false).points();
    let name = |p: &flashlab_flashfs::fsbench::PointSpec| format!("{:?}", p.workload.kind).to_ascii_lowercase();
    let Some(p) = points.iter().find(|p| p.config == config && name(p) == workload) else {
        let mut workloads: Vec<String> = points.iter().map(name).collect();
        let mut configs: Vec<&str> = points.iter().map(|p| p.config.as_str()).collect();
        workloads.dedup();
        configs.sort();
        configs.dedup();
        anyhow::bail!(
            "fs_bench: no point {workload:?} / {config:?}; workloads: {}; configs: {}",
            workloads.join(", "),
            configs.join(", ")
        );
    };
    run_point(p).context("fs_bench")
}
