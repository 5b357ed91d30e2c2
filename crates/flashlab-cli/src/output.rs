//! Writing JSON results, summary tables and progress bars.

use anyhow::Context;
use indicatif::{ProgressBar, ProgressStyle};
use std::io::{IsTerminal, Write};
use std::path::Path;

/// Write `value` as pretty JSON to `path` (`-` = standard output).
pub fn write_json(path: &Path, value: &impl serde::Serialize) -> anyhow::Result<()> {
    let text = serde_json::to_string_pretty(value)? + "\n";
    if path == Path::new("-") {
        std::io::stdout().write_all(text.as_bytes())?;
        return Ok(());
    }
    std::fs::write(path, text).with_context(|| format!("cannot write {}", path.display()))
}

/// Check before any long work that `path` (given with `flag`) can be written: its
/// folder exists and the file can be created. `None` and `-` (standard output) pass.
pub fn check_output(path: Option<&Path>, flag: &str) -> anyhow::Result<()> {
    let Some(path) = path.filter(|p| *p != Path::new("-")) else { return Ok(()) };
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    if !dir.is_dir() {
        anyhow::bail!("{flag} {}: folder {} does not exist", path.display(), dir.display());
    }
    if path.is_dir() {
        anyhow::bail!("{flag} {}: is a folder, expected a file path", path.display());
    }
    let existed = path.exists();
    std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .open(path)
        .map_err(|e| anyhow::anyhow!("{flag} {}: cannot write: {e}", path.display()))?;
    if !existed {
        let _ = std::fs::remove_file(path);
    }
    Ok(())
}

/// A progress bar on standard error when it is a terminal and not `quiet`.
pub fn progress(total: Option<u64>, quiet: bool) -> ProgressBar {
    if quiet || !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    match total {
        Some(n) => ProgressBar::new(n).with_style(
            ProgressStyle::with_template(
                "{spinner} [{elapsed_precise}] {wide_bar} {human_pos}/{human_len} requests ({per_sec}, eta {eta})",
            )
            .expect("valid template"),
        ),
        None => ProgressBar::new_spinner().with_style(
            ProgressStyle::with_template("{spinner} [{elapsed_precise}] {human_pos} requests ({per_sec})")
                .expect("valid template"),
        ),
    }
}

/// Format an optional number for the summary table.
pub fn opt(v: Option<f64>, digits: usize) -> String {
    v.map_or_else(|| "-".into(), |x| format!("{x:.digits$}"))
}

/// Print aligned `label  value` rows.
pub fn table(rows: &[(&str, String)]) {
    let w = rows.iter().map(|(l, _)| l.len()).max().unwrap_or(0);
    for (l, v) in rows {
        println!("{l:<w$}  {v}");
    }
}
