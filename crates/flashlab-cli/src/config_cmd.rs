//! `flashlab config default|check`.

use anyhow::Context;
use clap::Subcommand;
use std::path::PathBuf;

#[derive(Subcommand)]
pub enum ConfigCmd {
    /// Print the complete default configuration as TOML.
    Default,
    /// Validate a config and print the resolved configuration.
    Check {
        /// The config file.
        config: PathBuf,
        /// Override one key (dotted path, TOML value), e.g. device.spare_factor=0.1.
        #[arg(long = "set", value_name = "KEY=VALUE")]
        sets: Vec<String>,
    },
}

pub fn config(cmd: ConfigCmd) -> anyhow::Result<()> {
    match cmd {
        ConfigCmd::Default => print!("{}", flashlab_config::default_toml()),
        ConfigCmd::Check { config, sets } => {
            let (raw, s) = load_config(&config, &sets)?;
            print!("{}", flashlab_config::to_toml(&raw));
            eprintln!(
                "ok: {} physical pages, {} logical pages ({:.1} GiB logical), timing {}",
                s.geometry.pages(),
                s.ftl.logical_pages,
                s.ftl.logical_pages as f64 * s.page_bytes() as f64 / (1u64 << 30) as f64,
                if s.timing.is_some() { "on" } else { "off (counting mode)" }
            );
        }
    }
    Ok(())
}

/// The config file, its `--set` overrides and `--json`, shared by the commands that run something.
#[derive(clap::Args)]
pub struct ConfigArgs {
    /// The config file (TOML); `flashlab config default` prints every key.
    pub config: PathBuf,
    /// Override one key (dotted path, TOML value), e.g. device.spare_factor=0.1.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub sets: Vec<String>,
    /// Write the result as JSON (`-` = standard output).
    #[arg(long)]
    pub json: Option<PathBuf>,
}

impl ConfigArgs {
    /// Whether the JSON goes to standard output (then no table is printed).
    pub fn json_to_stdout(&self) -> bool {
        self.json.as_deref() == Some(std::path::Path::new("-"))
    }
}

/// Read and resolve a config file with overrides.
pub fn load_config(
    path: &PathBuf,
    sets: &[String],
) -> anyhow::Result<(flashlab_config::RawConfig, flashlab_config::Settings)> {
    let text = std::fs::read_to_string(path).with_context(|| format!("cannot read config {}", path.display()))?;
    let (raw, settings) = flashlab_config::load(&text, &path.display().to_string(), sets)?;
    for w in raw.warnings() {
        eprintln!("{w}");
    }
    Ok((raw, settings))
}
