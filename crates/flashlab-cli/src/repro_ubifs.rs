//! `flashlab reproduce ubifs-hotdata` (seed 000) — being written for its issue.

use std::path::Path;

pub fn run(_out: &Path, _quick: bool) -> anyhow::Result<()> {
    anyhow::bail!("reproduce ubifs-hotdata is not available in this version yet")
}
