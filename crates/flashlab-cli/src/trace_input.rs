//! Opening the trace a config names: path resolution (relative to the config file,
//! then `FLASHLAB_TRACES`), reader options from the config, and mapping a request
//! index back to its file and line for error messages.

use flashlab_config::TraceSettings;
use flashlab_trace::{FormatChoice, ReaderOptions, TraceReader};
use std::fs::File;
use std::io::BufReader;
use std::path::{Path, PathBuf};

/// Environment variable naming a folder of traces (e.g. `../shared/traces`): a relative
/// `workload.trace_path` not found beside its config file is looked up there by file
/// name, and `flashlab reproduce` reads its traces from there.
pub const TRACES_ENV: &str = "FLASHLAB_TRACES";

/// A trace reader over a file.
pub type FileReader = TraceReader<BufReader<File>>;

/// The folder `FLASHLAB_TRACES` names, if set and non-empty.
pub fn traces_env_dir() -> Option<PathBuf> {
    std::env::var_os(TRACES_ENV).filter(|v| !v.is_empty()).map(PathBuf::from)
}

/// Resolve a trace path: absolute as is; relative against the config file's folder,
/// else (when that file does not exist) by file name in `FLASHLAB_TRACES`.
pub fn trace_path(path: &str, config_path: &Path) -> PathBuf {
    let p = PathBuf::from(path);
    if p.is_absolute() {
        return p;
    }
    let beside = config_path.parent().unwrap_or(Path::new("")).join(&p);
    if beside.exists() {
        return beside;
    }
    match (traces_env_dir(), p.file_name()) {
        (Some(dir), Some(name)) if dir.join(name).exists() => dir.join(name),
        _ => beside,
    }
}

/// Open the configured trace; the error names the key, the config file and the resolved path.
pub fn open_trace(t: &TraceSettings, config_path: &Path) -> anyhow::Result<FileReader> {
    let path = trace_path(&t.path, config_path);
    let file = File::open(&path).map_err(|e| {
        anyhow::anyhow!(
            "workload.trace_path = {:?} in {}: cannot open {}: {e} (relative paths are resolved against the \
             config file's folder, then by file name in ${TRACES_ENV})",
            t.path,
            config_path.display(),
            path.display()
        )
    })?;
    let choice = FormatChoice::from_name(&t.format).map_err(|e| anyhow::anyhow!("workload.trace_format: {e}"))?;
    let opts = ReaderOptions {
        skip_bad_lines: t.skip_bad_lines,
        blkparse_action: t.blkparse_action,
        ..ReaderOptions::named(path.display().to_string())
    };
    Ok(TraceReader::with_choice(BufReader::with_capacity(1 << 16, file), choice, opts)?)
}

/// `file:line` of request `index` (0-based, in trace order), found by reading the trace again.
pub fn locate_request(t: &TraceSettings, config_path: &Path, index: u64) -> Option<String> {
    let mut reader = open_trace(t, config_path).ok()?;
    reader.by_ref().take(index as usize + 1).count();
    Some(format!("{}:{}", reader.source_name(), reader.line_number()))
}
